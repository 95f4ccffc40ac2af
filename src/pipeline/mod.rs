//! The triage pipeline: the stages after capture, in order, as one library function that
//! `icepick triage -- CMD`, `icepick triage --pending` (the store worker) and the tests all
//! call, so the build path and the hand path cannot drift apart.
//!
//! Order and why: `flags` first (the reduction tests the minimal command it finds), then
//! `ir` (a backend crash's minimal IR and `llc`/`opt` line; the one function it keeps guides
//! the source reduction), `reduce`, then `versions` and `classify` on the reduced input.
//! After each stage the case's `triage` section is updated and the report re-rendered, so a
//! stop at any moment leaves a case whose report says what ran.
//!
//! Failure policy, per stage: a damaged case stops everything (exit 2); `flags`, `ir`,
//! `versions` and `classify` failing is recorded and the pipeline goes on (a host without
//! other clangs is no triage failure); the reduction failing ends the pipeline, since every
//! later stage is about its result. Ctrl-C during the reduction keeps its best so far and
//! ends the pipeline as interrupted.
//!
//! The budget ([`budget`]) bounds the whole: each stage gets a deadline inside it and ends
//! with its best so far when it passes; a stage with no time left is skipped. A budget that
//! ran out is a status in the case, not an error.

pub mod budget;
mod link_source;

use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};

pub use budget::Budget;

use crate::case::triage::{StageName, StageRun, StageStatus, Triage};
use crate::case::{Case, CaseError};
use crate::reduce::{self, Reduction};

/// How to run the pipeline.
#[derive(Debug, Clone)]
pub struct Options {
    /// Compiler runs in flight, in every stage.
    pub jobs: usize,
    /// Let flags and reduce accept candidates that crash only after source errors.
    pub allow_invalid: bool,
    /// The wall-clock budget, counted from when the triage started (capture included).
    pub budget: Budget,
    /// Set by Ctrl-C: the reduction stops with its best so far.
    pub stop: Arc<AtomicBool>,
    /// Keep what an earlier, interrupted run of the pipeline on this case did: its flags
    /// section, its verified reduction (else the reduction resumes).
    pub resume: bool,
}

impl Options {
    /// All cores, no budget, valid reductions, nothing resumed.
    pub fn new(jobs: usize) -> Self {
        Options {
            jobs: jobs.max(1),
            allow_invalid: false,
            budget: Budget::unlimited(),
            stop: Arc::new(AtomicBool::new(false)),
            resume: false,
        }
    }
}

/// What the caller is shown while the pipeline runs.
pub trait Progress {
    /// A stage starts.
    fn begin(&mut self, stage: StageName);
    /// A step inside a stage (flags' batches, ir's steps).
    fn step(&mut self, msg: &str);
    /// The reduction's notes (sizes, verification).
    fn reduce(&mut self, note: reduce::Note<'_>);
    /// A stage ended (or was skipped) as `run` says.
    fn end(&mut self, run: &StageRun);
}

/// A [`Progress`] that shows nothing.
pub struct Silent;

impl Progress for Silent {
    fn begin(&mut self, _: StageName) {}
    fn step(&mut self, _: &str) {}
    fn reduce(&mut self, _: reduce::Note<'_>) {}
    fn end(&mut self, _: &StageRun) {}
}

/// How the pipeline ended, when it did not fail.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// The case's `triage` section as written.
    pub triage: Triage,
    /// The reduction's section, when the reduction ran or was kept.
    pub reduction: Option<Reduction>,
    /// The classification's verdict, when classify ran.
    pub verdict: Option<String>,
    /// Ctrl-C or SIGTERM stopped the reduction.
    pub interrupted: bool,
    /// The case is an `llc`/`opt` crash: the `ir` stage's reduced IR is its reduction.
    pub llvm_tool: bool,
    /// Whether the `ir` stage's reduced IR verified, when the stage gave one.
    pub ir_verified: Option<bool>,
}

impl Outcome {
    /// Whether the result is a verified reproducer: the reduced source, or for an
    /// `llc`/`opt` crash the reduced IR.
    pub fn verified(&self) -> bool {
        if self.llvm_tool {
            return self.ir_verified == Some(true);
        }
        self.reduction.as_ref().is_some_and(|r| r.verified)
    }
}

/// Why the pipeline could not go on.
#[derive(Debug, thiserror::Error)]
pub enum PipelineError {
    /// The case is damaged or unsafe (exit 2), or cannot be written.
    #[error(transparent)]
    Case(#[from] CaseError),
    /// The reduction failed: nothing after it has an input.
    #[error(transparent)]
    Reduce(reduce::ReduceError),
}

/// Runs the stages after capture on the case in `dir`.
pub fn triage(
    dir: &Path,
    opts: &Options,
    progress: &mut dyn Progress,
) -> Result<Outcome, PipelineError> {
    let (earlier, _lock) = Case::load_for_writing(dir)?;
    let mut run = Run {
        dir,
        opts,
        triage: Triage {
            budget_seconds: opts.budget.total().map(|t| t.as_secs_f64()),
            seconds: 0.0,
            budget_ran_out: false,
            stages: Vec::new(),
        },
        llvm_tool: earlier.llvm_tool(),
        ir_verified: earlier.ir_verified(),
        link_sources: link_source::sources(dir),
    };
    let earlier_reduction: Option<Reduction> = earlier
        .reduction
        .clone()
        .and_then(|v| serde_json::from_value(v).ok());

    run.stage(progress, StageName::Flags, |r, p| r.flags(&earlier, p))?;
    run.stage(progress, StageName::Ir, |r, p| r.ir(&earlier, p))?;
    let reduced = run.reduce(progress, earlier_reduction)?;
    let interrupted = reduced
        .as_ref()
        .is_some_and(|r| r.status == "stopped" && crate::interrupt::is_interrupted());
    let mut verdict = None;
    if !interrupted {
        run.stage(progress, StageName::Versions, |r, _| r.versions())?;
        run.stage(progress, StageName::Classify, |r, _| {
            let (row, v) = r.classify();
            verdict = v;
            row
        })?;
    }
    Ok(Outcome {
        triage: run.triage,
        reduction: reduced,
        verdict,
        interrupted,
        llvm_tool: run.llvm_tool.is_some(),
        ir_verified: run.ir_verified,
    })
}

/// One stage's result before it is timed: status and detail.
type Ended = (StageStatus, Option<String>);

/// The pipeline's state while it runs.
struct Run<'a> {
    dir: &'a Path,
    opts: &'a Options,
    triage: Triage,
    /// `llc`/`opt` when the case is a crash of that tool on IR.
    llvm_tool: Option<&'static str>,
    /// Whether the case's reduced IR verified (an earlier run's, or this run's ir stage).
    ir_verified: Option<bool>,
    /// A link case's needed sources: the reduce stage reduces them.
    link_sources: Option<crate::case::link::LinkSources>,
}

impl Run<'_> {
    /// Runs `body` as `stage` unless the budget has run out, records its row, saves the
    /// section and re-renders the report.
    fn stage(
        &mut self,
        progress: &mut dyn Progress,
        stage: StageName,
        body: impl FnOnce(&mut Self, &mut dyn Progress) -> Result<Ended, PipelineError>,
    ) -> Result<(), PipelineError> {
        let started = Instant::now();
        let (status, detail) = if self.opts.budget.can_start_at(started) {
            progress.begin(stage);
            body(self, progress)?
        } else {
            (
                StageStatus::SkippedBudget,
                Some("not run: the triage budget had run out".into()),
            )
        };
        self.record(progress, stage, started, status, detail)
    }

    fn record(
        &mut self,
        progress: &mut dyn Progress,
        stage: StageName,
        started: Instant,
        status: StageStatus,
        detail: Option<String>,
    ) -> Result<(), PipelineError> {
        let row = StageRun {
            stage,
            status,
            seconds: round1(started.elapsed()),
            detail,
        };
        progress.end(&row);
        if matches!(status, StageStatus::Cut | StageStatus::SkippedBudget) {
            self.triage.budget_ran_out = true;
        }
        self.triage.stages.push(row);
        self.triage.seconds = round1(self.opts.budget.started().elapsed());
        let mut case = Case::load(self.dir)?;
        case.triage = Some(self.triage.clone());
        case.save(self.dir)?;
        crate::report::rerender(self.dir)?;
        Ok(())
    }

    fn flags(
        &mut self,
        earlier: &Case,
        progress: &mut dyn Progress,
    ) -> Result<Ended, PipelineError> {
        if let Some(tool) = self.llvm_tool {
            return Ok((
                StageStatus::NotNeeded,
                Some(format!("an {tool} command: the ir stage cuts its flags")),
            ));
        }
        if self.opts.resume && (earlier.flags.is_some() || earlier.reduction.is_some()) {
            return Ok((
                StageStatus::NotNeeded,
                Some("kept from the earlier run".into()),
            ));
        }
        let opts = crate::flags::Options {
            jobs: self.opts.jobs,
            allow_invalid: self.opts.allow_invalid,
            deadline: self.opts.budget.stage_deadline(0.3),
            ..crate::flags::Options::default()
        };
        let flagged =
            crate::flags::flags_for_case(self.dir, &opts, &mut |m: &str| progress.step(m));
        match flagged {
            Ok(f) => {
                let line = format!(
                    "{} of {} arguments needed ({} compiler runs)",
                    f.minimal_command.len().saturating_sub(1),
                    earlier.replay_command.len().saturating_sub(1),
                    f.compiler_runs
                );
                if f.budget_cut {
                    Ok((
                        StageStatus::Cut,
                        Some(format!("{line}; the budget ran out before every probe ran")),
                    ))
                } else {
                    Ok((StageStatus::Done, Some(line)))
                }
            }
            Err(crate::flags::FlagsError::Case(e)) if e.is_bad_input() => Err(e.into()),
            Err(e) => Ok((StageStatus::Failed, Some(e.to_string()))),
        }
    }

    fn ir(&mut self, earlier: &Case, progress: &mut dyn Progress) -> Result<Ended, PipelineError> {
        if self.opts.resume && earlier.ir.is_some() {
            return Ok((
                StageStatus::NotNeeded,
                Some("kept from the earlier run".into()),
            ));
        }
        let mut opts = crate::ir::Options {
            jobs: self.opts.jobs,
            ..crate::ir::Options::default()
        };
        if let Some(deadline) = self.opts.budget.stage_deadline(0.35) {
            let share = deadline.saturating_duration_since(Instant::now());
            opts.reduce_timeout = opts.reduce_timeout.min(share).max(Duration::from_secs(1));
            opts.timeout = opts.timeout.min(share).max(Duration::from_secs(1));
        }
        match crate::ir::ir_for_case(self.dir, &opts, &mut |m: &str| progress.step(m)) {
            Ok(s) => {
                self.ir_verified = Some(s.verified);
                Ok((StageStatus::Done, Some(crate::ir::summary(&s))))
            }
            Err(crate::ir::IrError::Frontend(phase)) => Ok((
                StageStatus::NotNeeded,
                Some(format!("no IR: the crash is in {phase}")),
            )),
            Err(crate::ir::IrError::Case(e)) if e.is_bad_input() => Err(e.into()),
            Err(e) => Ok((StageStatus::Failed, Some(e.to_string()))),
        }
    }

    /// The reduction: kept when an earlier run verified it, resumed when one was cut, else
    /// run until the budget's reduce deadline.
    fn reduce(
        &mut self,
        progress: &mut dyn Progress,
        earlier: Option<Reduction>,
    ) -> Result<Option<Reduction>, PipelineError> {
        let started = Instant::now();
        let reduce_deadline = self.opts.budget.reduce_deadline();
        if let Some((status, why, kept)) = self.reduce_not_run(&earlier, started, reduce_deadline) {
            self.record(progress, StageName::Reduce, started, status, Some(why))?;
            return Ok(kept);
        }
        progress.begin(StageName::Reduce);
        let watchdog = budget::Watchdog::start(self.opts.stop.clone(), reduce_deadline);
        if let Some(sources) = self.link_sources.clone() {
            let settings = reduce::Settings {
                jobs: self.opts.jobs,
                resume: false,
                timeout: None,
                stop: watchdog.flag(),
                allow_invalid: true,
                verify_runs: reduce::DEFAULT_VERIFY_RUNS,
                executor: Default::default(),
            };
            let ended = {
                let _graceful = crate::interrupt::graceful();
                link_source::reduce_sources(self.dir, &sources, &settings, progress)
            };
            let cut = watchdog.fired();
            drop(watchdog);
            let (status, detail) = match ended {
                Ok((_, line)) if cut => (StageStatus::Cut, line),
                Ok(ended) => ended,
                Err(e) => (StageStatus::Failed, e.to_string()),
            };
            self.record(progress, StageName::Reduce, started, status, Some(detail))?;
            return Ok(None);
        }
        let settings = reduce::Settings {
            jobs: self.opts.jobs,
            resume: self.opts.resume && earlier.is_some(),
            timeout: None,
            stop: watchdog.flag(),
            allow_invalid: self.opts.allow_invalid,
            verify_runs: reduce::DEFAULT_VERIFY_RUNS,
            executor: Default::default(),
        };
        let reduced = {
            let _graceful = crate::interrupt::graceful();
            reduce::reduce_case(self.dir, &settings, &mut |n| progress.reduce(n))
        };
        let cut = watchdog.fired();
        drop(watchdog);
        let r = match reduced {
            Ok(r) => r,
            Err(e) => {
                let why = e.to_string();
                self.record(
                    progress,
                    StageName::Reduce,
                    started,
                    StageStatus::Failed,
                    Some(why),
                )?;
                return Err(PipelineError::Reduce(e));
            }
        };
        let (status, detail) = reduce_ended(&r, cut);
        self.record(progress, StageName::Reduce, started, status, Some(detail))?;
        Ok(Some(r))
    }

    /// Why the reduction does not run, if it does not: an IR tool's crash (the ir stage
    /// reduces it), a verified earlier result under `--resume` (kept, and returned), or a
    /// budget with too little time left.
    fn reduce_not_run(
        &self,
        earlier: &Option<Reduction>,
        started: Instant,
        deadline: Option<Instant>,
    ) -> Option<(StageStatus, String, Option<Reduction>)> {
        if let (Some(tool), None) = (self.llvm_tool, &self.link_sources) {
            let why = format!("an {tool} crash: the ir stage's reduced IR is the reduction");
            return Some((StageStatus::NotNeeded, why, None));
        }
        let verified = earlier
            .as_ref()
            .filter(|r| r.status == "done" && r.verified);
        if let (true, Some(r)) = (self.opts.resume, verified) {
            let why = "kept from the earlier run".to_string();
            return Some((StageStatus::NotNeeded, why, Some(r.clone())));
        }
        let no_time =
            deadline.is_some_and(|d| d.saturating_duration_since(started) < budget::STAGE_MIN);
        no_time.then(|| {
            let why = "not run: the triage budget had run out".to_string();
            (StageStatus::SkippedBudget, why, None)
        })
    }

    fn versions(&mut self) -> Result<Ended, PipelineError> {
        if let Some(tool) = self.llvm_tool {
            // The versions stage runs clang drivers on source; IR is read only by the LLVM
            // that wrote it (or a newer one), so an IR crash has no such table.
            return Ok((
                StageStatus::NotNeeded,
                Some(format!("an {tool} crash: IR is not run on other clangs")),
            ));
        }
        let timeout = self
            .opts
            .budget
            .left()
            .map_or(crate::versions::DEFAULT_TIMEOUT, |l| {
                crate::versions::DEFAULT_TIMEOUT.min(l.mul_f64(0.4))
            });
        match crate::versions::run_versions(self.dir, &[], self.opts.jobs, timeout) {
            Ok(rows) => Ok((StageStatus::Done, Some(crate::versions::summary(&rows)))),
            Err(crate::versions::VersionsError::Case(e)) if e.is_bad_input() => Err(e.into()),
            Err(e) => Ok((StageStatus::Failed, Some(e.to_string()))),
        }
    }

    /// Classify's row and verdict. The experiments stop at the budget's end: one that would
    /// start after it is not run, and E1's reruns cut by it count as not run, never as
    /// timeouts (a timeout is evidence of a resource verdict).
    fn classify(&mut self) -> (Result<Ended, PipelineError>, Option<String>) {
        let opts = crate::classify::Options {
            deadline: self.opts.budget.deadline(),
            ..crate::classify::Options::default()
        };
        match crate::classify::classify(self.dir, &opts) {
            Ok(c) => {
                let line = format!("{} ({})", c.verdict, c.reason);
                (Ok((StageStatus::Done, Some(line))), Some(c.verdict))
            }
            Err(crate::classify::ClassifyError::Case(e)) if e.is_bad_input() => {
                (Err(e.into()), None)
            }
            Err(e) => (Ok((StageStatus::Failed, Some(e.to_string()))), None),
        }
    }
}

fn round1(d: Duration) -> f64 {
    (d.as_secs_f64() * 10.0).round() / 10.0
}

/// The reduce stage's status and line for a reduction that ran: interrupted, cut by the
/// budget (`cut`), or done.
fn reduce_ended(r: &Reduction, cut: bool) -> (StageStatus, String) {
    let line = format!(
        "{} -> {} B in {} tests, {}",
        r.bytes_before,
        r.bytes_after,
        r.tests,
        if r.verified {
            "verified"
        } else {
            "NOT verified"
        }
    );
    if r.status == "stopped" && crate::interrupt::is_interrupted() {
        (StageStatus::Interrupted, line)
    } else if cut {
        let detail = format!("{line}; the budget ended it with its best so far");
        (StageStatus::Cut, detail)
    } else {
        (StageStatus::Done, line)
    }
}
