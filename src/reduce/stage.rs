//! One reduction's fixed context ([`Stage`]): the case, the replay command, the oracle, the
//! scratch directory every candidate is written to, and the counters the record reports;
//! with the checks of the start that decide whether a reduction can begin at all (it
//! reproduces, is valid, N of N, and on which executor).

use std::io::Write;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::fault::{Faults, SpaceWatch};
use super::oracle::{self, retarget, Judged, Oracle};
use super::verify::{verify, Check, Verdict};
use super::{accept, complete, unmarked, witness, ReduceError, Reduction, Settings, Start};
use crate::case::{fileio, Case, CaseError};
use crate::command::CompilerCommand;
use crate::crash::Symbolizer;
use crate::exec;
use crate::executor::{Choice, Executor, FarmSummary};

/// Time limit of the runs of the start, before a per-test timeout is known.
const START_LIMIT: Duration = Duration::from_secs(600);

/// Tests between two looks at the free space (`fault::SpaceWatch`).
const SPACE_EVERY: u64 = 32;

/// The executor asked for, and why a farm was refused (`None`: it was not).
pub(super) struct FarmChoice {
    pub requested: String,
    pub refused: Option<String>,
}

/// What one reduction of a case works with.
pub(super) struct Stage<'a> {
    pub(super) dir: &'a Path,
    pub(super) case: &'a Case,
    /// The replay command (the flags stage's minimal one when it ran).
    pub(super) replay: Vec<String>,
    pub(super) output_name: String,
    pub(super) ext: String,
    pub(super) oracle: Oracle,
    /// Candidates live in icepick's private scratch directory (removed however icepick ends).
    pub(super) work: tempfile::TempDir,
    pub(super) counter: AtomicU64,
    pub(super) confirm_runs: AtomicU64,
    pub(super) confirm_rejects: AtomicU64,
    /// Tests that ran their checks on a lent spare worker.
    pub(super) spare_checks: AtomicU64,
    pub(super) check_runs: AtomicU64,
    pub(super) stop: Arc<AtomicBool>,
    /// Candidates must be complete (balanced brackets, a declaration's end): validity is
    /// kept and the start is.
    pub(super) require_complete: bool,
    /// A compiler that must accept every candidate, or add no error to those it found in
    /// the start (see `witness.rs`).
    pub(super) witness: Option<witness::Witness>,
    /// Phase times of tests whose trace record is not written yet (`accept.rs`).
    pub(super) phases: accept::PhaseLog,
    /// Candidates and the result are compiled without their line markers (`unmarked.rs`).
    pub(super) unmarked: bool,
    /// Warns before the scratch or the case runs out of space.
    pub(super) space: SpaceWatch,
}

impl<'a> Stage<'a> {
    /// The stage for `start`, its scratch directory made.
    pub(super) fn new(
        dir: &'a Path,
        case: &'a Case,
        replay: Vec<String>,
        start: &Start,
        settings: &Settings,
    ) -> Result<Self, ReduceError> {
        let scratch = exec::scratch_dir();
        let work = tempfile::Builder::new()
            .prefix("reduce-")
            .tempdir_in(&scratch)
            .map_err(|e| ReduceError::Io(scratch, e))?;
        Ok(Stage {
            dir,
            case,
            replay,
            output_name: start.output_name.clone(),
            ext: start.ext.clone(),
            oracle: Oracle {
                emulator: case.emulator.clone(),
                case_dir: dir.to_path_buf(),
                family: case.family(),
                symbolizer: Symbolizer::new(case.library_dirs()),
                keep_valid: start.keep_valid,
                executor: Arc::new(Executor::local()),
                symbolize: false,
                faults: Arc::new(Faults::new(settings.stop.clone())),
            },
            work,
            counter: AtomicU64::new(0),
            confirm_runs: AtomicU64::new(0),
            confirm_rejects: AtomicU64::new(0),
            spare_checks: AtomicU64::new(0),
            check_runs: AtomicU64::new(0),
            stop: settings.stop.clone(),
            require_complete: start.keep_valid && complete::is_complete(&start.text),
            witness: None,
            phases: accept::PhaseLog::default(),
            unmarked: false,
            space: SpaceWatch::default(),
        })
    }

    /// Runs a candidate may take to crash as the case's family does: one for a
    /// deterministic crash, more for one that comes in some runs only
    /// ([`crate::crash::CrashFamily::tries`]).
    pub(super) fn tries(&self) -> u32 {
        self.oracle.family.tries()
    }

    /// Confirming runs of an accepted candidate, `wanted` for a deterministic crash. A crash
    /// that comes in some runs only cannot come N times in a row: its candidates are
    /// judged by their tries, and the result by its rate ([`Stage::check`]).
    pub(super) fn confirms(&self, wanted: u32) -> u32 {
        if self.oracle.family.is_deterministic() {
            wanted
        } else {
            1
        }
    }

    /// Whether `text` crashes as the case's family does in one of [`Stage::tries`] runs;
    /// the runs after the first count as confirming runs.
    pub(super) fn crashes_within_tries(
        &self,
        text: &[u8],
        flags: &[String],
        timeout: Duration,
        cancel: &(dyn Fn() -> bool + Sync),
    ) -> bool {
        for k in 0..self.tries() {
            if k > 0 {
                if cancel() {
                    return false;
                }
                self.confirm_runs.fetch_add(1, Ordering::Relaxed);
            }
            if self
                .oracle
                .accepts(&self.run_candidate(text, flags, timeout, cancel))
            {
                return true;
            }
        }
        false
    }

    /// `run` (a run of `text` as the start's checks run it), else, when it did not crash as
    /// the case's family does, the first later run that does, up to [`Stage::tries`] runs
    /// in all (the last when none does): a crash of some runs only may miss a run.
    fn again_on_a_miss(
        &self,
        text: &[u8],
        flags: &[String],
        run: Option<Judged>,
    ) -> Option<Judged> {
        let mut run = run;
        for _ in 1..self.tries() {
            if self.oracle.accepts(&run) {
                break;
            }
            run = self.run_start(text, flags, START_LIMIT, &|| false);
        }
        run
    }

    /// One run of the start, counted as a check run.
    fn run_start(
        &self,
        text: &[u8],
        flags: &[String],
        timeout: Duration,
        cancel: &(dyn Fn() -> bool + Sync),
    ) -> Option<Judged> {
        self.check_runs.fetch_add(1, Ordering::Relaxed);
        self.run_candidate(text, flags, timeout, cancel)
    }

    /// The baseline: the start must crash the case's way (valid, when validity is kept).
    /// When the signature differs, it runs again with the compiler's own symbolizer (a
    /// compiler with debug info names inlined frames only through it) and keeps it when
    /// that matches. Returns the per-test timeout: `given`, else five times the baseline's
    /// time, at least 3 s.
    pub(super) fn baseline(
        &mut self,
        start: &Start,
        flags: &[String],
        given: Option<Duration>,
    ) -> Result<Duration, ReduceError> {
        let t0 = Instant::now();
        let mut first = self.run_start(&start.text, flags, START_LIMIT, &|| false);
        self.oracle.faults.check()?;
        if matches!(&first, Some(j) if !j.same) {
            self.oracle.symbolize = true;
            first = self.run_start(&start.text, flags, START_LIMIT, &|| false);
            self.oracle.faults.check()?;
            if self.oracle.accepts(&first) {
                log::info!(
                    "the start reproduces only with the compiler's own symbolizer: tests keep it"
                );
            }
        }
        let first = self.again_on_a_miss(&start.text, flags, first);
        self.oracle.faults.check()?;
        if !self.oracle.accepts(&first) {
            return Err(match first {
                Some(j) if j.same && self.oracle.keep_valid => ReduceError::InvalidStart {
                    what: start.what.into(),
                    errors: j.errors,
                    first: j.first_error.unwrap_or_default(),
                },
                _ => ReduceError::NotReproducing(
                    self.case.signature.id.clone(),
                    format!(
                        "the test command (replay command plus {}) does not crash the same way",
                        flags.join(" ")
                    ),
                ),
            });
        }
        Ok(given.unwrap_or_else(|| (t0.elapsed() * 5).max(Duration::from_secs(3))))
    }

    /// Whether candidates and the result are compiled without line markers: yes when
    /// validity is kept and the start, markers stripped, still crashes the same way without
    /// errors (`unmarked.rs`). Returns why the markers must stay, when they must.
    pub(super) fn strip_markers_if_valid(
        &mut self,
        text: &[u8],
        flags: &[String],
    ) -> Option<String> {
        if !(self.oracle.keep_valid && unmarked::has_markers(text)) {
            return None;
        }
        self.unmarked = true;
        let j = self.run_start(text, flags, START_LIMIT, &|| false);
        let j = self.again_on_a_miss(text, flags, j);
        self.unmarked = self.oracle.accepts(&j);
        (!self.unmarked).then(|| unmarked_failure(&j))
    }

    /// Where tests run: the farm asked for when the start crashes the same way on a node,
    /// else locally. Returns what was asked for and why a farm was refused, for the record.
    pub(super) fn choose_executor(
        &mut self,
        choice: &Choice,
        replay_cmd: &CompilerCommand,
        start: &[u8],
        flags: &[String],
    ) -> FarmChoice {
        let stop = || self.stop.load(Ordering::SeqCst);
        let (executor, refused) = oracle::choose_executor(
            choice,
            self.case,
            replay_cmd,
            // A farm client that cannot start refuses the farm; it is no fault of the run.
            &|exe| {
                self.with_candidate(start, flags, |argv, tmp| {
                    let judged = self
                        .oracle
                        .try_judge_on(exe, argv, Some(tmp), START_LIMIT, &stop);
                    judged.unwrap_or_else(|e| {
                        log::info!("the farm's client: {e}");
                        None
                    })
                })
            },
            &|j| self.oracle.accepts(j),
        );
        self.oracle.executor = executor;
        FarmChoice {
            requested: choice.kind.name().into(),
            refused,
        }
    }

    /// Engages the witness compiler for a kept-valid reduction (`witness.rs`), judged on
    /// the start.
    pub(super) fn engage_witness(
        &mut self,
        replay_cmd: &CompilerCommand,
        start: &[u8],
        limit: Duration,
    ) {
        self.witness = witness::witness_for(replay_cmd).map(|argv| {
            let run = self.witness_run(&argv, start, limit, &crate::interrupt::is_interrupted);
            witness::Witness::new(argv, run)
        });
    }

    /// Runs the start until it has run `runs` times in all: it must crash as the case's
    /// family does as often as a result must ([`crate::crash::CrashFamily::needed`]: every
    /// run for a deterministic crash), since otherwise no result could be verified. Only Ctrl-C cuts these runs: a
    /// stop that is not an interrupt (the triage budget) lets them finish, so a cut run is
    /// never read as a flaky start, and the reduction then ends at once with the start.
    pub(super) fn rerun_start(
        &self,
        start: &Start,
        flags: &[String],
        runs: u32,
        limit: Duration,
    ) -> Result<(), ReduceError> {
        let interrupted = crate::interrupt::is_interrupted;
        let same = 1
            + (1..runs)
                .filter(|_| {
                    let j = self.run_start(&start.text, flags, limit, &interrupted);
                    self.oracle.accepts(&j)
                })
                .count() as u32;
        self.oracle.faults.check()?;
        if self.oracle.family.keeps_rate(same, runs) {
            Ok(())
        } else if crate::interrupt::is_interrupted() {
            Err(ReduceError::NotReproducing(
                self.case.signature.id.clone(),
                "interrupted".into(),
            ))
        } else {
            Err(ReduceError::FlakyInput {
                what: start.what.into(),
                same,
                runs,
            })
        }
    }

    /// The farm part of the record: `choice` with the executor's counters now.
    pub(super) fn farm_summary(&self, choice: &FarmChoice) -> FarmSummary {
        FarmSummary {
            requested: choice.requested.clone(),
            refused: choice.refused.clone(),
            ..self.oracle.executor.summary()
        }
    }
    /// Writes `text` to a fresh scratch file and runs the test command (`flags` added) on it.
    pub(super) fn run_candidate(
        &self,
        text: &[u8],
        flags: &[String],
        timeout: Duration,
        cancel: &(dyn Fn() -> bool + Sync),
    ) -> Option<Judged> {
        self.run_candidate_on(None, text, flags, timeout, cancel)
    }

    /// [`Stage::run_candidate`] through `executor` (`None`: the oracle's).
    pub(super) fn run_candidate_on(
        &self,
        executor: Option<&crate::executor::Executor>,
        text: &[u8],
        flags: &[String],
        timeout: Duration,
        cancel: &(dyn Fn() -> bool + Sync),
    ) -> Option<Judged> {
        let executor = executor.unwrap_or(&self.oracle.executor);
        self.with_candidate(text, flags, |argv, tmp| {
            self.oracle
                .judge_on(executor, argv, Some(tmp), timeout, cancel)
        })
    }

    /// Writes `text` into a fresh test directory and gives `run` the test command (`flags`
    /// added) and the compiler's TMPDIR; the directory goes when `run` returns. `None` (a
    /// fault recorded) when the candidate cannot be written.
    fn with_candidate(
        &self,
        text: &[u8],
        flags: &[String],
        run: impl FnOnce(&[String], &Path) -> Option<Judged>,
    ) -> Option<Judged> {
        let k = self.counter.fetch_add(1, Ordering::Relaxed);
        if k % SPACE_EVERY == 0 {
            self.space.look(&[self.work.path(), self.dir]);
        }
        let test = self.test_dir(k)?;
        let path = test.path().join(format!("c{k}.{}", self.ext));
        self.write_scratch(&path, &[&self.compiled(text)])?;
        let argv = retarget(
            &self.replay,
            &self.case.input,
            &path.to_string_lossy(),
            flags,
        );
        run(&argv, &test.path().join("tmp"))
    }

    /// A scratch directory of test `k`'s own, holding its candidate and the compiler's
    /// TMPDIR (`tmp/`), removed with everything in it when the test ends. `None` (a fault
    /// recorded) when it cannot be made.
    fn test_dir(&self, k: u64) -> Option<tempfile::TempDir> {
        let made = tempfile::Builder::new()
            .prefix(&format!("t{k}-"))
            .tempdir_in(self.work.path())
            .and_then(|d| std::fs::create_dir(d.path().join("tmp")).map(|_| d));
        made.map_err(|e| {
            self.oracle
                .faults
                .record(ReduceError::Io(self.work.path().to_owned(), e))
        })
        .ok()
    }

    /// Writes `parts` to the scratch file `path`; `None` (a fault recorded: a full disk is
    /// no verdict on the candidate) when that fails.
    fn write_scratch(&self, path: &Path, parts: &[&[u8]]) -> Option<()> {
        let written = std::fs::File::create(path).and_then(|mut f| {
            parts.iter().try_for_each(|p| f.write_all(p))?;
            f.flush()
        });
        written
            .map_err(|e| {
                self.oracle
                    .faults
                    .record(ReduceError::Io(path.to_owned(), e))
            })
            .ok()
    }

    /// What the compiler is given for `text`: without line markers when validity must not
    /// rest on them.
    pub(super) fn compiled<'t>(&self, text: &'t [u8]) -> std::borrow::Cow<'t, [u8]> {
        if self.unmarked {
            unmarked::strip(text)
        } else {
            std::borrow::Cow::Borrowed(text)
        }
    }

    /// Writes `text` to a fresh scratch file and runs the witness `argv` on it.
    pub(super) fn witness_run(
        &self,
        argv: &[String],
        text: &[u8],
        timeout: Duration,
        cancel: &(dyn Fn() -> bool + Sync),
    ) -> Option<witness::Run> {
        let k = self.counter.fetch_add(1, Ordering::Relaxed);
        let test = self.test_dir(k)?;
        let path = test.path().join(format!("w{k}.{}", self.ext));
        self.write_scratch(&path, &[&witness::prelude(argv, text), text])?;
        let file = path.to_string_lossy();
        match witness::run(
            argv,
            self.dir,
            &file,
            &test.path().join("tmp"),
            timeout,
            cancel,
        ) {
            Ok(run) => run,
            Err(e) => {
                self.oracle.faults.record(e.into());
                None
            }
        }
    }

    /// Writes `text` as the case's result and checks it `runs` times with the plain replay
    /// command (or, for an invalid reduction, with `flags` when it needs them).
    pub(super) fn check(
        &self,
        text: &[u8],
        flags: &[String],
        runs: u32,
        stop_early: bool,
        timeout: Duration,
    ) -> Result<Verdict, ReduceError> {
        fileio::write(self.dir, &self.output_name, &self.compiled(text))?;
        let plain = retarget(&self.replay, &self.case.input, &self.output_name, &[]);
        let flagged = retarget(&self.replay, &self.case.input, &self.output_name, flags);
        let check = Check {
            plain: &plain,
            with_flags: (!flags.is_empty()).then_some((flagged.as_slice(), flags)),
            keep_valid: self.oracle.keep_valid,
            runs,
            needed: self.oracle.family.needed(runs),
            stop_early,
        };
        // Only Ctrl-C cuts a check: after a stop that is not an interrupt (the triage
        // budget) the best so far is still verified, so what is kept is a reproducer.
        let interrupted = crate::interrupt::is_interrupted;
        let verdict = verify(&check, &mut |argv| {
            self.check_runs.fetch_add(1, Ordering::Relaxed);
            self.oracle.judge_local(argv, timeout, &interrupted)
        });
        self.oracle.faults.check()?;
        Ok(verdict)
    }

    /// The error of a reduction that a fault (`cause`) stopped: `rec`, whose best so far is
    /// already in the case, is saved as `stopped` with the fault, so that the case says why
    /// and `--resume` goes on from there. A fault of the case files themselves (the record
    /// cannot be written) is its own error.
    pub(super) fn stopped_by(&self, rec: &mut Reduction, cause: ReduceError) -> ReduceError {
        if matches!(cause, ReduceError::Case(_)) {
            return cause;
        }
        rec.status = "stopped".into();
        rec.fault = Some(cause.to_string());
        if let Err(e) = self.save(rec) {
            log::warn!("{e}");
        }
        ReduceError::Fault {
            cause: Box::new(cause),
            bytes: rec.bytes_after,
            output: self.dir.join(&rec.output),
        }
    }

    /// Saves `rec` as the case's reduction.
    pub(super) fn save(&self, rec: &Reduction) -> Result<(), CaseError> {
        let mut c = self.case.clone();
        c.reduction = serde_json::to_value(rec).ok();
        c.save(self.dir)
    }
}

/// What the start's run without line markers shows, in one line.
fn unmarked_failure(j: &Option<Judged>) -> String {
    match j {
        Some(j) if j.same && j.errors > 0 => format!(
            "{} error(s) before the same crash, the first: {}",
            j.errors,
            j.first_error.as_deref().unwrap_or("(not printed)")
        ),
        Some(j) if j.same => "the same crash, with errors".into(),
        Some(_) => "no longer the same crash".into(),
        None => "no result (timed out or cancelled)".into(),
    }
}
