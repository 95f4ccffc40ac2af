//! The reduce stage: shrink a case's preprocessed input while it keeps crashing with the
//! case's signature, using the parallel driver of `reducers`; or, C-Reduce style,
//! shrink any file while a user's interestingness script says yes.
//!
//! The best-so-far is written atomically after every improvement (`reduced.<ext>` in the
//! case, or the file itself for `--test`), so Ctrl-C, a crash or `kill -9` at any moment
//! leaves a result that reproduces; `--resume` starts from it.
//!
//! "The same crash" is more than the signature: when the original crashes with no
//! source error before the crash, every candidate must too (`oracle.rs`), unless
//! `--allow-invalid`; and a candidate counts only when a second run (another file name, ASLR
//! on) crashes the same way. The start must reproduce N of N; the final result is checked N
//! times with the case's plain replay command (`verify.rs`), and when it does not verify, the
//! stage falls back to the smallest accepted candidate that does (`chain.rs`) and continues
//! from there with a stricter oracle. A kept-valid candidate must also be complete
//! (`complete.rs`): what comes after the crash point is never diagnosed, so a candidate cut
//! off there would crash "without errors" and still be no valid program; and when GCC
//! accepts the start, it must accept every candidate (`witness.rs`).

mod accept;
mod chain;
mod complete;
mod fault;
mod hints;
mod oracle;
mod run;
mod script;
mod stage;
mod trace;
mod unmarked;
mod verify;
mod witness;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use reducers::passes::default_pipeline;
use reducers::{Options, Stats};

use crate::case::{fileio, Case, CaseError};
use crate::command::CompilerCommand;
use crate::exec;
use oracle::{retarget, test_flags};
use run::{Run, Settled};
use stage::{FarmChoice, Stage};

pub use hints::hints_for;
pub use script::{reduce_with_script, ScriptReduction};
use trace::Trace;
pub use trace::CASE_TRACE;

/// How to reduce.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Tests in flight.
    pub jobs: usize,
    /// Start from the best-so-far of an earlier run.
    pub resume: bool,
    /// Per-test time limit; `None`: derived from the baseline run.
    pub timeout: Option<Duration>,
    /// Set to stop early (Ctrl-C); the best so far is kept and reported.
    pub stop: Arc<AtomicBool>,
    /// Do not keep a crash-on-valid valid (faster, smaller, invalid results).
    pub allow_invalid: bool,
    /// Runs of the start and of the final result that must all crash the same way.
    pub verify_runs: u32,
    /// Where candidate tests run (`--executor`).
    pub executor: crate::executor::Choice,
}

/// The default of [`Settings::verify_runs`].
pub const DEFAULT_VERIFY_RUNS: u32 = 3;

/// What the caller is told while reducing.
#[derive(Debug)]
pub enum Note<'a> {
    /// The baseline ran: size and the per-test timeout derived from it.
    Started { bytes: usize, timeout: Duration },
    /// A smaller input was accepted and written.
    Improved { bytes: usize, pass: &'a str },
    /// Periodic counters.
    Progress(&'a Stats),
    /// Re-checking the final result.
    Verifying,
    /// The smallest result did not verify; reducing again from a larger one that does.
    BackedOff { bytes: usize, why: &'a str },
    /// The farm asked for is used (`None`), or refused with this one line.
    Farm(&'a crate::executor::FarmSummary),
}

pub use crate::case::reduction::Reduction;

/// Why the stage could not run.
#[derive(Debug, thiserror::Error)]
pub enum ReduceError {
    #[error(transparent)]
    Case(#[from] CaseError),
    #[error("{0}: {1}")]
    Io(PathBuf, std::io::Error),
    #[error("the case's input does not reproduce its crash (signature {0}) any more: {1}; run `icepick capture` again")]
    NotReproducing(String, String),
    #[error("the input itself is flaky: {what} crashed as the case's crash does in only {same} of {runs} runs, less often than capture saw, so no reduction of it could be verified; make the crash deterministic first (e.g. fewer threads, a fixed seed) or capture it again")]
    FlakyInput { what: String, same: u32, runs: u32 },
    #[error("the original compiles with no error before the crash, but {what} prints {errors} source error(s) before the same crash with the test command ({first}); a valid reduction cannot start from it: pass --allow-invalid to reduce it anyway (the result may be invalid), or run `icepick capture` again")]
    InvalidStart {
        what: String,
        errors: u32,
        first: String,
    },
    #[error("--resume: no earlier reduction in this case; run without --resume")]
    NothingToResume,
    #[error("--resume: the earlier reduction ({earlier}) {}, this one would {}: one cannot continue the other; run with{} --allow-invalid to resume it, or without --resume to start a reduction of this mode from the case's input", if *valid { "kept the code valid" } else { "allowed invalid code" }, if *valid { "allow invalid code" } else { "keep the code valid" }, if *valid { "out" } else { "" })]
    ResumeOtherMode { earlier: String, valid: bool },
    #[error("--resume: the earlier reduction's best file {0} is missing; run without --resume to start again from the case's input")]
    ResumeFileMissing(PathBuf),
    #[error("cannot read {path}: {error}")]
    NoFile {
        path: PathBuf,
        error: std::io::Error,
    },
    #[error("the test script {script} {why}")]
    BadScript { script: PathBuf, why: String },
    #[error("the test script {script} {status} on the original {file}; it must exit 0 on the original (it ran in a scratch directory holding only `{name}`), so nothing was reduced{output}")]
    ScriptRejectsOriginal {
        script: PathBuf,
        file: PathBuf,
        name: String,
        /// `returned 1`, `was killed by signal 9`, `did not finish within 600 s`.
        status: String,
        /// The script's output, capped, on lines of its own (empty when it printed nothing).
        output: String,
    },
    #[error(transparent)]
    Exec(#[from] exec::ExecError),
    #[error("the compiler could not start: {0}; that is this machine (a memory limit such as `ulimit -v`, too many processes, a broken installation), not the crash: fix it and run again")]
    CompilerCannotStart(String),
    #[error("{cause}; the reduction stopped there, and its best so far ({bytes} B, not verified) is kept in {output}: free what ran out (disk space, memory, open files), then continue with `icepick reduce --resume`")]
    Fault {
        cause: Box<ReduceError>,
        bytes: usize,
        output: PathBuf,
    },
}

/// Runs of an interesting candidate in the first reduction: the run that found it and one
/// more (another file name, ASLR on) before it counts.
const CONFIRM_RUNS: u32 = 2;

/// Reduces the input of the case in `dir`.
pub fn reduce_case(
    dir: &Path,
    settings: &Settings,
    note: &mut dyn FnMut(Note<'_>),
) -> Result<Reduction, ReduceError> {
    reduce_case_traced(dir, settings, None, note)
}

/// [`reduce_case`], writing the trace to `trace` too (it is always kept in the case, as
/// [`CASE_TRACE`]). The steps: the start is checked (it reproduces N of N, valid when
/// validity is kept, on which executor), a `running` record is written, the reducer runs,
/// its result is verified (backing off when it does not), and the record is completed.
pub fn reduce_case_traced(
    dir: &Path,
    settings: &Settings,
    trace: Option<&Path>,
    note: &mut dyn FnMut(Note<'_>),
) -> Result<Reduction, ReduceError> {
    let started = Instant::now();
    let (mut case, _lock) = Case::load_for_writing(dir)?;
    let start = Start::of(dir, &case, settings)?;
    let replay = replay_for(&case);
    let replay_cmd = CompilerCommand::from_argv(&replay).expect("a case has a replay command");
    let flags = test_flags(&replay_cmd, start.keep_valid);
    let runs = case.family().check_runs(settings.verify_runs.max(1));

    let mut stage = Stage::new(dir, &case, replay.clone(), &start, settings)?;
    let timeout = stage.baseline(&start, &flags, settings.timeout)?;
    let markers_needed = stage.strip_markers_if_valid(&start.text, &flags);
    // The crash must travel: the start through the farm, same crash, on a node; else local.
    let farm = stage.choose_executor(&settings.executor, &replay_cmd, &start.text, &flags);
    if settings.executor.kind != crate::executor::Kind::Local {
        note(Note::Farm(&stage.farm_summary(&farm)));
    }
    if start.keep_valid {
        stage.engage_witness(&replay_cmd, &start.text, timeout * 2);
    }
    let stage = stage;
    stage.rerun_start(&start, &flags, runs, timeout * 2)?;
    note(Note::Started {
        bytes: start.text.len(),
        timeout,
    });

    let trace_paths: Vec<PathBuf> = trace.map(Path::to_path_buf).into_iter().collect();
    let mut trace = Trace::create(Some(dir), &trace_paths)?;
    trace.timeout = Some(timeout);
    let opts = options_for(&case, settings, &start);
    let rec = start.running_record(&replay, &case.input, opts.jobs, settings, markers_needed);
    // Write the starting point and a `running` record before any test, so that a kill at any
    // later moment leaves a best file that reproduces and a case that `--resume` accepts
    // (each improvement writes the file first, then the record).
    fileio::write(dir, &start.output_name, &start.text)?;
    stage.save(&rec)?;
    // Ctrl-C while the reducer cannot look at its stop flag (planning a big text) ends the
    // process after the grace period: the record then still says what happened.
    let _record_a_forced_stop = {
        let dir = dir.to_path_buf();
        crate::interrupt::at_forced_exit(move || record_forced_stop(&dir))
    };
    let mut run = Run {
        stage: &stage,
        flags,
        runs,
        timeout,
        rec,
        trace,
        note,
    };
    let mut chain = chain::Chain::new(&start.text, chain::DEFAULT_CAP);
    let confirm = stage.confirms(CONFIRM_RUNS);
    let first = run.pass(&start.text, &run.flags.clone(), confirm, &opts, &mut chain)?;
    let settled = match run.settle(first, &chain, &opts) {
        Ok(settled) => settled,
        Err(e) => return Err(stage.stopped_by(&mut run.rec, e)),
    };
    let mut rec = run.rec;
    finish(&stage, &mut rec, settled, &start, &replay, &farm)?;
    rec.seconds = (started.elapsed().as_secs_f64() * 10.0).round() / 10.0;
    drop(stage);
    case.reduction = Some(serde_json::to_value(&rec).expect("serialisable"));
    case.save(dir)?;
    Ok(rec)
}

/// Marks the case's `running` reduction `stopped` and says where its best so far is: the
/// process is being ended by a signal before the reduction could stop by itself.
fn record_forced_stop(dir: &Path) {
    let Ok(mut case) = Case::load(dir) else {
        return;
    };
    let Some(mut rec) = case.reduction_section().filter(|r| r.status == "running") else {
        return;
    };
    rec.status = "stopped".into();
    case.reduction = serde_json::to_value(&rec).ok();
    if case.save(dir).is_ok() {
        eprintln!(
            "icepick: the reduction stopped before it was done; its best so far ({} B, not verified) is in {}: `icepick reduce --resume` continues",
            rec.bytes_after,
            dir.join(&rec.output).display()
        );
    }
}

/// Where a reduction starts: the case's input, or with `--resume` the earlier best.
struct Start {
    text: Vec<u8>,
    /// The input's extension, which the candidates keep.
    ext: String,
    /// The result's file in the case.
    output_name: String,
    /// The crash is on valid code and the reduction keeps it valid.
    keep_valid: bool,
    /// The earlier reduction `--resume` continues.
    prior: Option<Reduction>,
    /// The size of the case's input (not of an earlier best).
    bytes_before: usize,
    /// Which text it is, for errors.
    what: &'static str,
}

impl Start {
    fn of(dir: &Path, case: &Case, settings: &Settings) -> Result<Start, ReduceError> {
        let ext = Path::new(&case.input)
            .extension()
            .and_then(|e| e.to_str())
            .unwrap_or("i")
            .to_string();
        let keep_valid = case.crash.source_errors == 0 && !settings.allow_invalid;
        // A crash-on-valid reduced with --allow-invalid goes to a file of its own: one mode's
        // result never overwrites the other's.
        let output_name = if settings.allow_invalid && case.crash.source_errors == 0 {
            format!("reduced-invalid.{ext}")
        } else {
            format!("reduced.{ext}")
        };
        let (text, prior, bytes_before, what) = if settings.resume {
            let r = case
                .reduction
                .clone()
                .and_then(|v| serde_json::from_value::<Reduction>(v).ok())
                .ok_or(ReduceError::NothingToResume)?;
            if r.keep_valid != keep_valid {
                return Err(ReduceError::ResumeOtherMode {
                    earlier: r.output.clone(),
                    valid: r.keep_valid,
                });
            }
            let text = fileio::read(dir, &r.output, fileio::cap::INPUT)?
                .ok_or_else(|| ReduceError::ResumeFileMissing(dir.join(&r.output)))?;
            let before = r.bytes_before;
            (text, Some(r), before, "the earlier best (--resume)")
        } else {
            let text = fileio::read(dir, &case.input, fileio::cap::INPUT)?.ok_or_else(|| {
                CaseError::MissingInput {
                    name: case.input.clone(),
                    path: dir.join(&case.input),
                }
            })?;
            let n = text.len();
            (text, None, n, "the case's input")
        };
        Ok(Start {
            text,
            ext,
            output_name,
            keep_valid,
            prior,
            bytes_before,
            what,
        })
    }

    /// The record written before the first test: status `running`, the counters of the
    /// earlier run when this one resumes it.
    fn running_record(
        &self,
        replay: &[String],
        input: &str,
        jobs: usize,
        settings: &Settings,
        markers_needed: Option<String>,
    ) -> Reduction {
        let prior = |f: fn(&Reduction) -> u64| self.prior.as_ref().map_or(0, f);
        Reduction {
            status: "running".into(),
            output: self.output_name.clone(),
            bytes_before: self.bytes_before,
            bytes_after: self.text.len(),
            tests: prior(|r| r.tests),
            cache_hits: prior(|r| r.cache_hits),
            seconds: 0.0,
            jobs,
            verified: false,
            keep_valid: self.keep_valid,
            allow_invalid: settings.allow_invalid,
            source_errors: 0,
            verify_runs: 0,
            verify_same: 0,
            backed_off: None,
            confirm_runs: 0,
            confirm_rejects: 0,
            spare_checks: 0,
            check_runs: 0,
            witness: None,
            witness_start_errors: 0,
            witness_runs: 0,
            witness_rejects: 0,
            extra_flags: Vec::new(),
            replay_command: retarget(replay, input, &self.output_name, &[]),
            trace: Some(CASE_TRACE.to_string()),
            farm: None,
            markers_needed,
            fault: None,
            // Until this run accepts a text, the earlier position still describes its start.
            resume_at: self.prior.as_ref().and_then(|r| r.resume_at.clone()),
        }
    }
}

/// The command a reduction replays: the flags stage's minimal one when that stage ran and
/// reproduced the crash with it, else the case's replay command.
fn replay_for(case: &Case) -> Vec<String> {
    case.flags
        .as_ref()
        .filter(|f| f.get("reproduced").and_then(|r| r.as_bool()) == Some(true))
        .and_then(|f| f.get("minimal_command")?.as_array().cloned())
        .map(|a| {
            a.iter()
                .filter_map(|x| x.as_str().map(String::from))
                .collect::<Vec<_>>()
        })
        .filter(|a| a.contains(&case.input))
        .unwrap_or_else(|| case.replay_command.clone())
}

/// The reducer's options: the default pipeline, guided by the crash, and with `--resume`
/// the position in it where the earlier run stood, when it stood in a pass.
fn options_for(case: &Case, settings: &Settings, start: &Start) -> Options {
    let prior = start.prior.as_ref();
    let mut hints = hints_for(&case.crash);
    if hints.function.is_none() {
        hints.function = case.ir.as_ref().and_then(hints::ir_function);
    }
    // The crash's locations are in the case's input; an earlier best (`--resume`) is another
    // text, whose raw line numbers no location names.
    let input = reducers::passes::text_id(&start.text);
    hints.located_in = Some(if prior.is_none() { input } else { !input });
    let pipeline = default_pipeline(hints);
    let resume = prior
        .and_then(|r| r.resume_at.as_ref())
        .and_then(|at| trace::resume_from(at, &pipeline));
    Options {
        jobs: settings.jobs.max(1),
        stop: settings.stop.clone(),
        resume,
        ..Options::new(pipeline)
    }
}

/// Completes the record from where the reduction `settled`, and writes the result as it is
/// shipped (without line markers when candidates were compiled without them).
fn finish(
    stage: &Stage,
    rec: &mut Reduction,
    settled: Settled,
    start: &Start,
    replay: &[String],
    farm: &FarmChoice,
) -> Result<(), ReduceError> {
    let Settled {
        result,
        verdict,
        stopped,
        backed_off,
    } = settled;
    let shipped = stage.compiled(&result).into_owned();
    // A position is one in the plans of the text it was recorded on; a stopped run keeps it
    // for `--resume`.
    if shipped != result || !stopped {
        rec.resume_at = None;
    }
    fileio::write(stage.dir, &start.output_name, &shipped)?;
    rec.status = if stopped { "stopped" } else { "done" }.into();
    rec.bytes_after = shipped.len();
    rec.verified = verdict.verified();
    rec.source_errors = verdict.errors;
    rec.verify_runs = verdict.runs;
    rec.verify_same = verdict.same;
    rec.backed_off = backed_off;
    rec.replay_command = retarget(
        replay,
        &stage.case.input,
        &start.output_name,
        &verdict.extra,
    );
    rec.extra_flags = verdict.extra;
    rec.farm = Some(stage.farm_summary(farm));
    add_counters(stage, rec, start.prior.as_ref());
    Ok(())
}

/// The record's counters: the earlier run's (when resumed) plus this one's.
fn add_counters(stage: &Stage, rec: &mut Reduction, prior: Option<&Reduction>) {
    let prior = |f: fn(&Reduction) -> u64| prior.map_or(0, f);
    let now = |n: &AtomicU64| n.load(Ordering::Relaxed);
    rec.confirm_runs = prior(|r| r.confirm_runs) + now(&stage.confirm_runs);
    rec.confirm_rejects = prior(|r| r.confirm_rejects) + now(&stage.confirm_rejects);
    rec.check_runs = prior(|r| r.check_runs) + now(&stage.check_runs);
    rec.spare_checks = prior(|r| r.spare_checks) + now(&stage.spare_checks);
    let w = stage.witness.as_ref();
    rec.witness = w.filter(|w| w.strict()).map(|w| w.argv.clone());
    rec.witness_start_errors = w.map_or(0, |w| w.start_errors());
    let count =
        |f: fn(&witness::Witness) -> &AtomicU64| w.map_or(0, |w| f(w).load(Ordering::Relaxed));
    rec.witness_runs = prior(|r| r.witness_runs) + count(|w| &w.runs);
    rec.witness_rejects = prior(|r| r.witness_rejects) + count(|w| &w.rejects);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_forced_stop_marks_a_running_reduction_stopped_and_leaves_others() {
        let fixture =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/report-kinds/fe-gh59446");
        let dir = tempfile::tempdir().unwrap();
        for f in ["case.json", "input.ii", "reduced.ii"] {
            std::fs::copy(fixture.join(f), dir.path().join(f)).unwrap();
        }
        let mut case = Case::load(dir.path()).unwrap();
        let mut rec = case.reduction_section().unwrap();
        rec.status = "running".into();
        case.reduction = serde_json::to_value(&rec).ok();
        case.save(dir.path()).unwrap();

        record_forced_stop(dir.path());
        let after = Case::load(dir.path()).unwrap().reduction_section().unwrap();
        assert_eq!(after.status, "stopped");
        assert_eq!(after.bytes_after, rec.bytes_after, "the rest is as it was");

        // A finished reduction is left alone.
        rec.status = "done".into();
        case.reduction = serde_json::to_value(&rec).ok();
        case.save(dir.path()).unwrap();
        record_forced_stop(dir.path());
        let after = Case::load(dir.path()).unwrap().reduction_section().unwrap();
        assert_eq!(after.status, "done");
    }
}
