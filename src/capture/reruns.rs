//! The reruns that say what a compile's crash is: the first run that crashes (a crash of
//! some runs only may not come in the next), the reruns that measure its family
//! ([`CrashFamily`]), and the reruns that give a crash without a stack its frames (out of
//! process, or the crashing job alone).

use std::path::Path;
use std::time::{Duration, Instant};

use super::jobs::find_job;
use super::reproducer::no_crash_diagnostics;
use super::{CaptureError, Run, Runner};
use crate::case::Reproducibility;
use crate::command::CompilerCommand;
use crate::crash::family::{Seen, FAMILY_RUNS};
use crate::crash::{self, Crash, CrashFamily, ExitInfo, Signature};
use crate::exec::{self, ExecError, Status};

/// Whether a run crashed as `family` does.
pub(super) fn in_family(family: &CrashFamily, run: &Run) -> bool {
    match (&run.crash, &run.signature) {
        (Some(c), Some(s)) => family.contains(&Seen::new(c, s)),
        _ => false,
    }
}

/// The command's first run that crashed. A build saw it crash, but a crash of some runs
/// only may not come in the next one: a run that compiles, or fails without a crash, is
/// repeated, up to [`FAMILY_RUNS`] runs or until [`FIRST_CRASH_TIME`] has passed (a compile
/// slower than that runs once). A run that times out ends it: a hang is no crash to wait for.
/// The misses are kept in `runner.misses_before_crash`; the last run when none crashed.
pub(super) fn first_crash(
    runner: &mut Runner,
    command: &CompilerCommand,
    progress: &mut dyn FnMut(&str),
) -> Result<Run, ExecError> {
    let started = Instant::now();
    let mut run = runner.run_sandboxed(command, None)?;
    while run.crash.is_none()
        && run.output.status != Status::TimedOut
        && runner.misses_before_crash + 1 < FAMILY_RUNS
        && started.elapsed() < FIRST_CRASH_TIME
    {
        runner.misses_before_crash += 1;
        if runner.misses_before_crash == 1 {
            progress(
                "no crash this time; running it again, as a crash of some runs only would need",
            );
        }
        run = runner.run_sandboxed(command, None)?;
    }
    Ok(run)
}

/// How long capture keeps running a command that did not crash, looking for its crash.
const FIRST_CRASH_TIME: Duration = Duration::from_secs(60);

/// What a rerun out of process showed.
pub(super) struct OutOfProcess {
    pub crash: Crash,
    pub signature: Signature,
    pub stderr: Vec<u8>,
    pub exit: ExitInfo,
    pub command: CompilerCommand,
}

/// A clang crash with no stack dump (a stack overflow kills clang's in-process crash
/// handler), rerun with `-fno-integrated-cc1`: out of process, the driver survives and
/// reports the cc1 crash properly. What that rerun showed, when it gave frames.
pub(super) fn retry_out_of_process(
    runner: &mut Runner,
    command: &CompilerCommand,
    crash: &Crash,
    progress: &mut dyn FnMut(&str),
) -> Result<Option<OutOfProcess>, CaptureError> {
    let stackless = crash.frames.is_empty()
        && !command.is_cc1()
        && crash.in_process != Some(false)
        && !command.args.iter().any(|a| a == "-fno-integrated-cc1");
    if !stackless {
        return Ok(None);
    }
    progress("no stack dump; rerunning with -fno-integrated-cc1");
    let retry = command.with_extra_args(&["-fno-integrated-cc1"]);
    let r = runner.run_sandboxed(&no_crash_diagnostics(&retry), None)?;
    let exit = r.output.status.exit_info();
    Ok(match (r.crash, r.signature) {
        (Some(crash), Some(signature)) if !crash.frames.is_empty() => Some(OutOfProcess {
            crash,
            signature,
            stderr: r.output.stderr,
            exit,
            command: retry,
        }),
        _ => None,
    })
}

/// The stack of a clang crash that printed none, as a build's launcher needs it: the crash
/// store groups crashes by their frames, and a crash with none would share a bucket with
/// every other of its kind and message. A silent in-process crash (its cc1 overflowed the
/// stack and took the crash handler with it) is rerun out of process; a device job of an
/// offload compile that stopped in `report_fatal_error` beside other jobs is run alone, where
/// it prints its stack ([`jobs::find_job`]). The reruns write into scratch, never where the
/// build's command writes. Their stderr and exit, when one printed a stack; `None` when the
/// crash has frames or no rerun shows more.
pub fn stack_of_frameless(
    argv: &[String],
    cwd: &Path,
    crash: &Crash,
    timeout: Duration,
) -> Option<(Vec<u8>, ExitInfo)> {
    let command = CompilerCommand::from_argv(argv)?;
    if !crash.frames.is_empty() || command.is_gcc() || crash.family == crash::Family::Gcc {
        return None;
    }
    let found = exec::which(&command.program, cwd)?;
    let resolved = std::fs::canonicalize(&found).unwrap_or(found);
    let mut runner = Runner::new(cwd, &[], timeout, &resolved);
    let quiet = no_crash_diagnostics(&command);
    if let Some(retry) = retry_out_of_process(&mut runner, &quiet, crash, &mut |_| {}).ok()? {
        return Some((retry.stderr, retry.exit));
    }
    let signature = crash::signature(crash);
    let (_, _, job_run) = find_job(&mut runner, &quiet, crash, &signature, &mut |_| {}).ok()?;
    let run = job_run?;
    run.crash
        .as_ref()
        .filter(|c| !c.frames.is_empty())
        .map(|_| (run.output.stderr.clone(), run.output.status.exit_info()))
}

/// The reruns that say what "the crash" is: `reruns` runs of `command` (each writing into
/// scratch). When one of them, or a run before the first crash ([`first_crash`]), does not
/// crash as the first crash did, the compile is rerun until [`FAMILY_RUNS`] runs in all, or
/// [`FAMILY_TIME`] has passed; a chance-prone crash ([`chance_prone`]) is too, within
/// [`CHANCE_TIME`]. The family is taken
/// from every crash seen ([`CrashFamily::observe`]). Returns the reruns, the count of the
/// first crash's signature, and the family (the runs before and the first crash counted).
pub(super) fn rerun(
    runner: &mut Runner,
    command: &CompilerCommand,
    reruns: u32,
    (crash, signature): (&Crash, &Signature),
    progress: &mut dyn FnMut(&str),
) -> Result<(Vec<Run>, Reproducibility, CrashFamily), CaptureError> {
    let mut runs: Vec<Run> = (0..reruns)
        .map(|_| runner.run_sandboxed(command, None))
        .collect::<Result<_, _>>()?;
    let same_as_first = |r: &Run| r.signature.as_ref().map(|s| &s.id) == Some(&signature.id);
    let misses = runner.misses_before_crash;
    let started = Instant::now();
    let disagree = misses > 0 || !runs.iter().all(same_as_first);
    if disagree || chance_prone(crash) {
        if disagree {
            progress(&format!(
                "the runs do not all crash as one did: running it {FAMILY_RUNS} times to know the crash's family"
            ));
        }
        // A slow compile stops sooner: the family is then known from fewer runs.
        let limit = if disagree { FAMILY_TIME } else { CHANCE_TIME };
        while misses + (runs.len() as u32) + 1 < FAMILY_RUNS && started.elapsed() < limit {
            runs.push(runner.run_sandboxed(command, None)?);
        }
    }
    let first = Seen::new(crash, signature);
    let mut seen = vec![first];
    for r in &runs {
        if let (Some(c), Some(s)) = (&r.crash, &r.signature) {
            seen.push(Seen::new(c, s));
        }
    }
    let total = misses + runs.len() as u32 + 1;
    let family = CrashFamily::observe(&seen, total).expect("the first crash is seen");
    let reproducibility = Reproducibility {
        runs: total,
        same_signature: 1 + runs.iter().filter(|r| same_as_first(r)).count() as u32,
    };
    if !family.is_deterministic() {
        progress(&family.describe());
    }
    Ok((runs, reproducibility, family))
}

/// Whether a crash may come in some runs only although the first reruns all showed it: a
/// stack overflow whose depth is near the stack's end crashes or not by where ASLR and the
/// size of argv and the environment put the stack's start. Such a crash is rerun to ten
/// runs while that takes less than [`CHANCE_TIME`]: three runs of a crash of every other run
/// agree one time in eight.
fn chance_prone(crash: &Crash) -> bool {
    crash.kind == crash::CrashKind::StackOverflow
}

/// How long capture spends, at most, running a compile whose runs disagree to [`FAMILY_RUNS`]
/// runs (the runs already made not counted).
const FAMILY_TIME: Duration = Duration::from_secs(120);

/// How long capture spends measuring a chance-prone crash whose first reruns agreed.
const CHANCE_TIME: Duration = Duration::from_secs(20);
