//! The process side of `icepick flags`: run candidates, judge them, save the section.
//!
//! Why this exists: the analysis is pure over a batch oracle; this is the oracle. It runs
//! each batch of candidate command lines in parallel through [`exec::run_all`] inside the
//! case directory (where `case.input` lives), parses and symbolizes each crash and calls it
//! the same crash only when its signature id is the case's. Timeouts and other crashes are
//! not the same crash. The first run (the replay itself) sets the time limit of the rest:
//! ten times what it took, at least 10 s, at most `--timeout`, so a candidate that hangs
//! costs little. The result goes into `case.json` (`flags`) atomically.

use std::cell::{Cell, RefCell};
use std::path::Path;
use std::time::{Duration, Instant};

use super::ddmin::{Outcome, Tester};
use super::{analyse, Flags};
use crate::capture::exit_info;
use crate::case::{Case, CaseError};
use crate::crash::{self, Symbolizer};
use crate::exec::{self, Cmd, Output, Status};

/// How to run the probes.
#[derive(Debug, Clone)]
pub struct Options {
    /// Compiler runs at once.
    pub jobs: usize,
    /// Upper limit on one run.
    pub timeout: Duration,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            jobs: std::thread::available_parallelism().map_or(2, |n| n.get()),
            timeout: Duration::from_secs(300),
        }
    }
}

/// Why `icepick flags` could not run (a crash or a lost crash is a result, not an error).
#[derive(Debug, thiserror::Error)]
pub enum FlagsError {
    #[error(transparent)]
    Case(#[from] CaseError),
}

/// Judges one finished run against the case's signature id.
fn judge(out: &Output, signature_id: &str, symbolizer: &Symbolizer) -> Outcome {
    match out.status {
        Status::TimedOut | Status::Cancelled => return Outcome::Timeout,
        _ => {}
    }
    match crash::parse(&out.stderr_text(), exit_info(out.status)) {
        Some(mut c) => {
            symbolizer.symbolize(&mut c);
            if crash::signature(&c).id == signature_id {
                Outcome::SameCrash
            } else {
                Outcome::OtherCrash
            }
        }
        None if out.success() => Outcome::NoCrash,
        None => Outcome::Error,
    }
}

/// Runs `icepick flags` on the case in `dir`: analyses, saves `flags` into `case.json`, and
/// returns the section. `progress` gets one line per batch.
pub fn flags_for_case(
    dir: &Path,
    opts: &Options,
    progress: &mut dyn FnMut(&str),
) -> Result<Flags, FlagsError> {
    let started = Instant::now();
    let mut case = Case::load(dir)?;
    let symbolizer = Symbolizer::new(case.library_dirs());
    let signature_id = case.signature.id.clone();
    let emulator = case.emulator.clone();
    let limit: Cell<Option<Duration>> = Cell::new(None);
    let progress = RefCell::new(progress);
    let batches = Cell::new(0usize);
    let oracle = |cands: &[Vec<String>]| -> Vec<Outcome> {
        let timeout = limit.get().unwrap_or(opts.timeout);
        let cmds: Vec<Cmd> = cands
            .iter()
            .map(|argv| {
                let argv = crate::case::emulated(&emulator, argv);
                Cmd::new(&argv[0])
                    .args(&argv[1..])
                    .cwd(dir)
                    .timeout(timeout)
            })
            .collect();
        batches.set(batches.get() + 1);
        (progress.borrow_mut())(&format!(
            "batch {}: {} compiler run{}",
            batches.get(),
            cmds.len(),
            if cmds.len() == 1 { "" } else { "s" }
        ));
        let results = exec::run_all(&cmds, opts.jobs);
        let outcomes: Vec<Outcome> = results
            .iter()
            .map(|r| match r {
                Ok(out) => judge(out, &signature_id, &symbolizer),
                Err(_) => Outcome::Error,
            })
            .collect();
        if limit.get().is_none() {
            let slowest = results
                .iter()
                .filter_map(|r| r.as_ref().ok())
                .map(|o| o.elapsed)
                .max()
                .unwrap_or_default();
            limit.set(Some(
                (slowest * 10)
                    .max(Duration::from_secs(10))
                    .min(opts.timeout),
            ));
        }
        outcomes
    };
    let mut tester = Tester::new(&oracle);
    let mut flags = analyse(&case.replay_command, &mut tester);
    flags.seconds = (started.elapsed().as_secs_f64() * 10.0).round() / 10.0;
    flags.jobs = opts.jobs;
    case.flags = Some(serde_json::to_value(&flags).expect("the flags section serialises"));
    case.save(dir)?;
    crate::report::write_files(dir, &case)?;
    Ok(flags)
}
