//! E1: is the crash deterministic? Serial replays, then as many at once (a crash that
//! needs load, or that comes and goes, is not the compiler's plain bug).

use super::{compare, Seen};
use crate::case::Case;
use crate::classify::outcome as o;
use crate::classify::Evidence;
use crate::crash::Symbolizer;
use crate::exec::{self, Cmd};

/// What E1 is, in its evidence, for `n` reruns.
pub(super) fn experiment(n: u32) -> String {
    format!("determinism: {n} replays one after another, then {n} at once")
}

/// E1: `n` replays one after another, then `n` at once (parallel load). Returns the evidence,
/// the first serial run (the baseline) and how many runs timed out. Once `spent` says the
/// triage budget is over, runs still going are killed and the rest do not start: the
/// evidence is then "not run", never read as flaky or as timeouts.
pub(super) fn determinism(
    case: &Case,
    replay: &Cmd,
    n: u32,
    host: &str,
    sym: &Symbolizer,
    spent: &(dyn Fn() -> bool + Sync),
) -> (Evidence, Seen, usize) {
    let n = n as usize;
    let mut serial: Vec<Seen> = (0..n)
        .map(|_| compare(case, &exec::run_cancellable(replay, spent), sym))
        .collect();
    let parallel: Vec<Seen> = std::thread::scope(|s| {
        let runs: Vec<_> = (0..n)
            .map(|_| s.spawn(|| exec::run_cancellable(replay, spent)))
            .collect();
        runs.into_iter()
            .map(|r| r.join().expect("a replay thread does not panic"))
            .map(|r| compare(case, &r, sym))
            .collect()
    });
    let cut = serial
        .iter()
        .chain(&parallel)
        .filter(|s| s.outcome == o::NOT_RUN)
        .count();
    let same = |v: &[Seen]| v.iter().filter(|s| s.outcome == o::SAME_CRASH).count();
    let (same_serial, same_parallel) = (same(&serial), same(&parallel));
    let all: Vec<&Seen> = serial.iter().chain(&parallel).collect();
    let timeouts = all.iter().filter(|s| s.outcome == o::TIMEOUT).count();
    let mut sigs: Vec<&str> = all
        .iter()
        .filter_map(|s| s.crash.as_ref().map(|(_, g)| g.id.as_str()))
        .collect();
    sigs.sort();
    sigs.dedup();
    let same_all = same_serial + same_parallel;
    let outcome = if cut > 0 {
        o::NOT_RUN
    } else if timeouts > 0 {
        o::TIMEOUT
    } else if same_all == 2 * n {
        o::DETERMINISTIC
    } else if sigs.len() > 1 || (sigs.len() == 1 && same_all == 0) {
        o::VARYING
    } else if same_all > 0 {
        o::INTERMITTENT
    } else {
        o::NO_CRASH
    };
    let e = Evidence {
        id: "E1".into(),
        experiment: experiment(n as u32),
        ran: all.iter().any(|s| s.outcome != o::NOT_RUN),
        host_or_emulator: host.into(),
        outcome: outcome.into(),
        signature: (sigs.len() == 1).then(|| sigs[0].to_string()),
        coarse_signature: None,
        frames: Vec::new(),
        detail: format!(
            "{}serial: {same_serial} of {n}, parallel: {same_parallel} of {n} runs crashed with signature {}; {} distinct signature(s); {timeouts} timeout(s)",
            if cut > 0 {
                format!("{cut} of {} runs not run or cut: the triage budget ran out; ", 2 * n)
            } else {
                String::new()
            },
            case.signature.id,
            sigs.len()
        ),
    };
    (e, serial.swap_remove(0), timeouts)
}
