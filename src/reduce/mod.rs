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
mod hints;
mod oracle;
mod script;
mod trace;
mod unmarked;
mod verify;
mod witness;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use reducers::passes::default_pipeline;
use reducers::{CancelToken, Options, Outcome, Stats};

use crate::case::{fileio, Case, CaseError};
use crate::command::CompilerCommand;
use crate::crash::Symbolizer;
use crate::exec;
use oracle::{retarget, test_flags, Judged, Oracle};
use verify::{verify, Check, Verdict};

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
    #[error("the input itself is flaky: {what} crashed with the case's signature in only {same} of {runs} runs, so no reduction of it could be verified; make the crash deterministic first (e.g. fewer threads, a fixed seed) or capture it again")]
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
}

/// Runs of an interesting candidate in the first reduction: the run that found it and one
/// more (another file name, ASLR on) before it counts.
const CONFIRM_RUNS: u32 = 2;

/// What one reduction of a case works with.
struct Stage<'a> {
    dir: &'a Path,
    case: &'a Case,
    /// The replay command (the flags stage's minimal one when it ran).
    replay: Vec<String>,
    output_name: String,
    ext: String,
    oracle: Oracle,
    /// Candidates live in icepick's private scratch directory (removed however icepick ends).
    work: tempfile::TempDir,
    counter: AtomicU64,
    confirm_runs: AtomicU64,
    confirm_rejects: AtomicU64,
    /// Tests that ran their checks on a lent spare worker.
    spare_checks: AtomicU64,
    check_runs: AtomicU64,
    stop: Arc<AtomicBool>,
    /// Candidates must be complete (balanced brackets, a declaration's end): validity is
    /// kept and the start is.
    require_complete: bool,
    /// A compiler that must accept every candidate, or add no error to those it found in
    /// the start (see `witness.rs`).
    witness: Option<witness::Witness>,
    /// Phase times of tests whose trace record is not written yet (`accept.rs`).
    phases: accept::PhaseLog,
    /// Candidates and the result are compiled without their line markers (`unmarked.rs`).
    unmarked: bool,
}

impl Stage<'_> {
    /// Writes `text` to a fresh scratch file and runs the test command (`flags` added) on it.
    fn run_candidate(
        &self,
        text: &[u8],
        flags: &[String],
        timeout: Duration,
        cancel: &(dyn Fn() -> bool + Sync),
    ) -> Option<Judged> {
        self.run_candidate_on(None, text, flags, timeout, cancel)
    }

    /// [`Stage::run_candidate`] through `executor` (`None`: the oracle's).
    fn run_candidate_on(
        &self,
        executor: Option<&crate::executor::Executor>,
        text: &[u8],
        flags: &[String],
        timeout: Duration,
        cancel: &(dyn Fn() -> bool + Sync),
    ) -> Option<Judged> {
        let k = self.counter.fetch_add(1, Ordering::Relaxed);
        let path = self.work.path().join(format!("c{k}.{}", self.ext));
        std::fs::write(&path, self.compiled(text)).ok()?;
        let argv = retarget(
            &self.replay,
            &self.case.input,
            &path.to_string_lossy(),
            flags,
        );
        let j = match executor {
            Some(e) => self.oracle.judge_on(e, &argv, timeout, cancel),
            None => self.oracle.judge(&argv, timeout, cancel),
        };
        let _ = std::fs::remove_file(&path);
        j
    }

    /// What the compiler is given for `text`: without line markers when validity must not
    /// rest on them.
    fn compiled<'t>(&self, text: &'t [u8]) -> std::borrow::Cow<'t, [u8]> {
        if self.unmarked {
            unmarked::strip(text)
        } else {
            std::borrow::Cow::Borrowed(text)
        }
    }

    /// Writes `text` to a fresh scratch file and runs the witness `argv` on it.
    fn witness_run(
        &self,
        argv: &[String],
        text: &[u8],
        timeout: Duration,
        cancel: &(dyn Fn() -> bool + Sync),
    ) -> Option<witness::Run> {
        let k = self.counter.fetch_add(1, Ordering::Relaxed);
        let path = self.work.path().join(format!("w{k}.{}", self.ext));
        std::fs::write(&path, text).ok()?;
        let run = witness::run(argv, self.dir, &path.to_string_lossy(), timeout, cancel);
        let _ = std::fs::remove_file(&path);
        run
    }

    /// Writes `text` as the case's result and checks it `runs` times with the plain replay
    /// command (or, for an invalid reduction, with `flags` when it needs them).
    fn check(
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
            stop_early,
        };
        // Only Ctrl-C cuts a check: after a stop that is not an interrupt (the triage
        // budget) the best so far is still verified, so what is kept is a reproducer.
        let interrupted = crate::interrupt::is_interrupted;
        Ok(verify(&check, &mut |argv| {
            self.check_runs.fetch_add(1, Ordering::Relaxed);
            self.oracle.judge_local(argv, timeout, &interrupted)
        }))
    }

    /// Saves `rec` as the case's reduction.
    fn save(&self, rec: &Reduction) -> Result<(), CaseError> {
        let mut c = self.case.clone();
        c.reduction = serde_json::to_value(rec).ok();
        c.save(self.dir)
    }

    /// One run of the reducer from `start`: every improvement is added to `chain`, written
    /// atomically and recorded (`rec`, counting from `base` tests and cache hits).
    #[allow(clippy::too_many_arguments)]
    fn pass(
        &self,
        start: &[u8],
        flags: &[String],
        confirm: u32,
        timeout: Duration,
        opts: &Options,
        rec: &mut Reduction,
        base: (u64, u64),
        chain: &mut chain::Chain,
        trace: &mut Trace,
        note: &mut dyn FnMut(Note<'_>),
    ) -> Result<reducers::Reduction, ReduceError> {
        // A spare worker is of use only to a test with checks after its first run.
        let opts = &Options {
            spare_workers: self.has_checks(confirm),
            ..opts.clone()
        };
        let test = |text: &[u8], cancel: &CancelToken| {
            let (off, hint) = (|| cancel.is_cancelled(), || cancel.hint());
            let spare = || cancel.has_spare();
            if self.interesting(text, flags, confirm, timeout, &off, &hint, &spare) {
                Outcome::Interesting
            } else {
                Outcome::Uninteresting
            }
        };
        let mut improved = |best: &[u8], stats: &Stats, at| -> Result<(), ReduceError> {
            if let Some(w) = self.witness.as_ref().filter(|w| w.accepted(best)) {
                // Not a rejected candidate: it stays accepted either way.
                w.late(self.witness_run(&w.argv, best, timeout, &|| false));
            }
            chain.push(best);
            fileio::write(self.dir, &self.output_name, best)?;
            rec.bytes_after = best.len();
            rec.tests = base.0 + stats.tests;
            rec.cache_hits = base.1 + stats.cache_hits;
            rec.resume_at = Some(at);
            Ok(self.save(rec)?)
        };
        let result = trace::drive(
            start,
            opts,
            &test,
            &self.stop,
            0,
            trace,
            Some(&self.phases),
            note,
            &mut improved,
        )?;
        rec.tests = base.0 + result.stats.tests;
        rec.cache_hits = base.1 + result.stats.cache_hits;
        Ok(result)
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

/// Reduces the input of the case in `dir`.
pub fn reduce_case(
    dir: &Path,
    settings: &Settings,
    note: &mut dyn FnMut(Note<'_>),
) -> Result<Reduction, ReduceError> {
    reduce_case_traced(dir, settings, None, note)
}

/// [`reduce_case`], writing the trace to `trace` too (it is always kept in the case, as
/// [`CASE_TRACE`]).
pub fn reduce_case_traced(
    dir: &Path,
    settings: &Settings,
    trace: Option<&Path>,
    note: &mut dyn FnMut(Note<'_>),
) -> Result<Reduction, ReduceError> {
    let started = Instant::now();
    let mut case = Case::load(dir)?;
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
    let earlier: Option<Reduction> = case
        .reduction
        .clone()
        .and_then(|v| serde_json::from_value(v).ok());
    let (start, prior, bytes_before) = if settings.resume {
        let r = earlier.as_ref().ok_or(ReduceError::NothingToResume)?;
        if r.keep_valid != keep_valid {
            return Err(ReduceError::ResumeOtherMode {
                earlier: r.output.clone(),
                valid: r.keep_valid,
            });
        }
        let path = dir.join(&r.output);
        let text = fileio::read(dir, &r.output, fileio::cap::INPUT)?
            .ok_or_else(|| ReduceError::ResumeFileMissing(path.clone()))?;
        (text, Some(r.clone()), r.bytes_before)
    } else {
        let text = fileio::read(dir, &case.input, fileio::cap::INPUT)?.ok_or_else(|| {
            CaseError::MissingInput {
                name: case.input.clone(),
                path: dir.join(&case.input),
            }
        })?;
        let n = text.len();
        (text, None, n)
    };
    let what = if settings.resume {
        "the earlier best (--resume)"
    } else {
        "the case's input"
    };

    // The minimal command from `icepick flags`, when it ran, is what later stages use.
    let replay = case
        .flags
        .as_ref()
        .filter(|f| f.get("reproduced").and_then(|r| r.as_bool()) == Some(true))
        .and_then(|f| f.get("minimal_command")?.as_array().cloned())
        .map(|a| {
            a.iter()
                .filter_map(|x| x.as_str().map(String::from))
                .collect::<Vec<_>>()
        })
        .filter(|a| a.contains(&case.input))
        .unwrap_or_else(|| case.replay_command.clone());
    let replay_cmd = CompilerCommand::from_argv(&replay).expect("a case has a replay command");
    let flags = test_flags(&replay_cmd, keep_valid);
    let scratch = exec::scratch_dir();
    let work = tempfile::Builder::new()
        .prefix("reduce-")
        .tempdir_in(&scratch)
        .map_err(|e| ReduceError::Io(scratch, e))?;
    let stage = Stage {
        dir,
        case: &case,
        replay: replay.clone(),
        output_name: output_name.clone(),
        ext,
        oracle: Oracle {
            emulator: case.emulator.clone(),
            case_dir: dir.to_path_buf(),
            signature: case.signature.id.clone(),
            symbolizer: Symbolizer::new(case.library_dirs()),
            keep_valid,
            executor: Arc::new(crate::executor::Executor::local()),
            symbolize: false,
        },
        work,
        counter: AtomicU64::new(0),
        confirm_runs: AtomicU64::new(0),
        confirm_rejects: AtomicU64::new(0),
        spare_checks: AtomicU64::new(0),
        check_runs: AtomicU64::new(0),
        stop: settings.stop.clone(),
        require_complete: keep_valid && complete::is_complete(&start),
        witness: None,
        phases: accept::PhaseLog::default(),
        unmarked: false,
    };
    let runs = settings.verify_runs.max(1);

    // Baseline: proves the starting point is interesting (valid, when validity is kept), sets
    // the per-test timeout, and must reproduce N of N: a flaky start cannot give a verified
    // result, so it is said at once.
    let mut stage = stage;
    let t0 = Instant::now();
    let mut first = stage.run_candidate(&start, &flags, Duration::from_secs(600), &|| false);
    stage.check_runs.fetch_add(1, Ordering::Relaxed);
    if matches!(&first, Some(j) if !j.same) {
        // Another signature: a compiler with debug info names inlined frames only through its
        // own symbolizer (no crash, or a timeout, it cannot change).
        stage.oracle.symbolize = true;
        first = stage.run_candidate(&start, &flags, Duration::from_secs(600), &|| false);
        stage.check_runs.fetch_add(1, Ordering::Relaxed);
        if stage.oracle.accepts(&first) {
            log::info!(
                "the start reproduces only with the compiler's own symbolizer: tests keep it"
            );
        }
    }
    if !stage.oracle.accepts(&first) {
        return Err(match first {
            Some(j) if j.same && keep_valid => ReduceError::InvalidStart {
                what: what.into(),
                errors: j.errors,
                first: j.first_error.unwrap_or_default(),
            },
            _ => ReduceError::NotReproducing(
                case.signature.id.clone(),
                format!(
                    "the test command (replay command plus {}) does not crash the same way",
                    flags.join(" ")
                ),
            ),
        });
    }
    let timeout = settings
        .timeout
        .unwrap_or_else(|| (t0.elapsed() * 5).max(Duration::from_secs(3)));
    let markers_needed = if keep_valid && unmarked::has_markers(&start) {
        stage.unmarked = true;
        let j = stage.run_candidate(&start, &flags, Duration::from_secs(600), &|| false);
        stage.check_runs.fetch_add(1, Ordering::Relaxed);
        stage.unmarked = stage.oracle.accepts(&j);
        (!stage.unmarked).then(|| unmarked_failure(&j))
    } else {
        None
    };
    let long = timeout * 2;
    let stop = || settings.stop.load(Ordering::SeqCst);
    // The crash must travel: the start through the farm, same crash, on a node; else local.
    let (executor, refused) = oracle::choose_executor(
        &settings.executor,
        &case,
        &replay_cmd,
        &|exe| stage.run_candidate_on(Some(exe), &start, &flags, Duration::from_secs(600), &stop),
        &|j| stage.oracle.accepts(j),
    );
    stage.oracle.executor = executor;
    let farm_note = |exe: &crate::executor::Executor| crate::executor::FarmSummary {
        requested: settings.executor.kind.name().into(),
        refused: refused.clone(),
        ..exe.summary()
    };
    if settings.executor.kind != crate::executor::Kind::Local {
        note(Note::Farm(&farm_note(&stage.oracle.executor)));
    }
    if keep_valid {
        stage.witness = witness::witness_for(&replay_cmd).map(|argv| {
            let run = stage.witness_run(&argv, &start, long, &crate::interrupt::is_interrupted);
            witness::Witness::new(argv, run)
        });
    }
    let stage = stage;
    // The start's reruns are what any result rests on: only Ctrl-C cuts them. A stop that
    // is not an interrupt (the triage budget) lets them finish, so a cut run is never read
    // as a flaky start, and the reduction then ends at once with the start, verified.
    let interrupted = crate::interrupt::is_interrupted;
    let mut same = 1;
    for _ in 1..runs {
        stage.check_runs.fetch_add(1, Ordering::Relaxed);
        if stage
            .oracle
            .accepts(&stage.run_candidate(&start, &flags, long, &interrupted))
        {
            same += 1;
        }
    }
    if same < runs {
        if crate::interrupt::is_interrupted() {
            return Err(ReduceError::NotReproducing(
                case.signature.id.clone(),
                "interrupted".into(),
            ));
        }
        return Err(ReduceError::FlakyInput {
            what: what.into(),
            same,
            runs,
        });
    }
    note(Note::Started {
        bytes: start.len(),
        timeout,
    });
    let trace_paths: Vec<PathBuf> = trace.map(Path::to_path_buf).into_iter().collect();
    let mut trace = Trace::create(Some(dir), &trace_paths)?;
    trace.timeout = Some(timeout);

    let hints = {
        let mut h = hints_for(&case.crash);
        if h.function.is_none() {
            h.function = case.ir.as_ref().and_then(hints::ir_function);
        }
        h
    };
    let pipeline = default_pipeline(hints);
    // `--resume` goes on in the pass where the earlier run stood, when it stood in one.
    let resume = prior
        .as_ref()
        .and_then(|r| r.resume_at.as_ref())
        .and_then(|at| trace::resume_from(at, &pipeline));
    let opts = Options {
        jobs: settings.jobs.max(1),
        stop: settings.stop.clone(),
        resume,
        ..Options::new(pipeline)
    };
    let prior_runs = |f: fn(&Reduction) -> u64| prior.as_ref().map_or(0, f);
    let mut rec = Reduction {
        status: "running".into(),
        output: output_name.clone(),
        bytes_before,
        bytes_after: start.len(),
        tests: prior_runs(|r| r.tests),
        cache_hits: prior_runs(|r| r.cache_hits),
        seconds: 0.0,
        jobs: opts.jobs,
        verified: false,
        keep_valid,
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
        replay_command: retarget(&replay, &case.input, &output_name, &[]),
        trace: Some(CASE_TRACE.to_string()),
        farm: None,
        markers_needed,
        // Until this run accepts a text, the earlier position still describes its start.
        resume_at: prior.as_ref().and_then(|r| r.resume_at.clone()),
    };
    let base = (rec.tests, rec.cache_hits);
    // Write the starting point and a `running` record before any test, so that a kill at any
    // later moment leaves a best file that reproduces and a case that `--resume` accepts
    // (each improvement writes the file first, then the record).
    fileio::write(dir, &output_name, &start)?;
    stage.save(&rec)?;
    let mut chain = chain::Chain::new(&start, chain::DEFAULT_CAP);
    let first_pass = stage.pass(
        &start,
        &flags,
        CONFIRM_RUNS,
        timeout,
        &opts,
        &mut rec,
        base,
        &mut chain,
        &mut trace,
        note,
    )?;
    let mut stopped = first_pass.stats.stopped;
    let mut result = first_pass.output;
    let mut verdict = Verdict::default();
    let mut backed_off = None;

    if !crate::interrupt::is_interrupted() {
        // Verify the result N times with the plain replay command; an invalid reduction
        // keeps the test flags only if it needs them.
        note(Note::Verifying);
        verdict = stage.check(&result, &flags, runs, false, long)?;
        // Also after a stop (the budget): backing off to a verified ancestor is what makes
        // the kept result a reproducer.
        if !verdict.verified() {
            let why = format!(
                "the smallest result ({} B) reproduced {} with the replay command",
                result.len(),
                verdict.describe()
            );
            let smallest = result.clone();
            let mut chosen = None;
            let mut fail = None;
            let fallback = chain::back_off(chain.texts(), &|t| t == smallest, &mut |t| match stage
                .check(t, &flags, runs, true, long)
            {
                Ok(v) if v.verified() => {
                    chosen = Some(v);
                    true
                }
                Ok(_) => false,
                Err(e) => {
                    fail.get_or_insert(e);
                    false
                }
            })
            .map(<[u8]>::to_vec);
            if let Some(e) = fail {
                return Err(e);
            }
            if let (Some(fb), Some(v)) = (fallback, chosen) {
                note(Note::BackedOff {
                    bytes: fb.len(),
                    why: &why,
                });
                // Continue from the fallback with a stricter test: N runs per candidate and,
                // when validity is kept, the plain command the final check uses (no `-w`: a
                // candidate can crash with `-w` and not without it).
                let strict_flags: Vec<String> = if keep_valid {
                    Vec::new()
                } else {
                    flags.clone()
                };
                let base = (rec.tests, rec.cache_hits);
                rec.bytes_after = fb.len();
                stage.save(&rec)?;
                let mut chain2 = chain::Chain::new(&fb, chain::DEFAULT_CAP);
                let fresh = Options {
                    resume: None,
                    ..opts.clone()
                };
                rec.resume_at = None;
                let second = stage.pass(
                    &fb,
                    &strict_flags,
                    runs,
                    timeout,
                    &fresh,
                    &mut rec,
                    base,
                    &mut chain2,
                    &mut trace,
                    note,
                )?;
                stopped = second.stats.stopped;
                let mut said = format!(
                    "{why}; fell back to the smallest accepted candidate that reproduces {runs} of {runs} ({} B)",
                    fb.len()
                );
                (result, verdict) = (fb.clone(), v);
                if second.output.len() < fb.len() && !crate::interrupt::is_interrupted() {
                    let v2 = stage.check(&second.output, &flags, runs, false, long)?;
                    if v2.verified() {
                        said.push_str(&format!(
                            " and reduced it further to {} B with {runs} runs per candidate{}",
                            second.output.len(),
                            if strict_flags.is_empty() {
                                " and no -w"
                            } else {
                                ""
                            }
                        ));
                        (result, verdict) = (second.output, v2);
                    }
                } else if second.output.len() < fb.len() {
                    // Interrupted: the strict pass's best stays (it reproduced N times).
                    result = second.output;
                    verdict = Verdict::default();
                }
                backed_off = Some(said);
            } else {
                // Not even the start verifies with the plain command: keep the smallest,
                // reported as not verified.
                verdict = stage.check(&result, &flags, runs, false, long)?;
            }
        }
    }
    let shipped = stage.compiled(&result).into_owned();
    if shipped != result {
        // The position is one in the plans of the text with its markers.
        rec.resume_at = None;
    }
    let result = shipped;
    fileio::write(dir, &output_name, &result)?;
    rec.status = if stopped { "stopped" } else { "done" }.into();
    if !stopped {
        rec.resume_at = None;
    }
    rec.bytes_after = result.len();
    rec.seconds = (started.elapsed().as_secs_f64() * 10.0).round() / 10.0;
    rec.verified = verdict.verified();
    rec.source_errors = verdict.errors;
    rec.verify_runs = verdict.runs;
    rec.verify_same = verdict.same;
    rec.backed_off = backed_off;
    rec.confirm_runs = prior_runs(|r| r.confirm_runs) + stage.confirm_runs.load(Ordering::Relaxed);
    rec.confirm_rejects =
        prior_runs(|r| r.confirm_rejects) + stage.confirm_rejects.load(Ordering::Relaxed);
    rec.check_runs = prior_runs(|r| r.check_runs) + stage.check_runs.load(Ordering::Relaxed);
    rec.spare_checks = prior_runs(|r| r.spare_checks) + stage.spare_checks.load(Ordering::Relaxed);
    let w = stage.witness.as_ref();
    rec.witness = w.filter(|w| w.strict()).map(|w| w.argv.clone());
    rec.witness_start_errors = w.map_or(0, |w| w.start_errors());
    let count =
        |f: fn(&witness::Witness) -> &AtomicU64| w.map_or(0, |w| f(w).load(Ordering::Relaxed));
    rec.witness_runs = prior_runs(|r| r.witness_runs) + count(|w| &w.runs);
    rec.witness_rejects = prior_runs(|r| r.witness_rejects) + count(|w| &w.rejects);
    rec.replay_command = retarget(&replay, &case.input, &output_name, &verdict.extra);
    rec.extra_flags = verdict.extra;
    rec.farm = Some(farm_note(&stage.oracle.executor));
    drop(stage);
    case.reduction = Some(serde_json::to_value(&rec).expect("serialisable"));
    case.save(dir)?;
    Ok(rec)
}
