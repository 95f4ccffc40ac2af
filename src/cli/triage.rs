//! `icepick triage -- <cmd>`: the pipeline in one command: capture, flags, ir, reduce,
//! versions, classify, and the report. `icepick triage --pending`: the same for one
//! representative of every `new` bucket of the crash store, each taken under a lease
//! (`--worker`: keep taking them, on any number of machines; see [`crate::store::lease`]).

use std::io::Write;

use clap::Args;

use super::capture::{capture_from_args, print_outcome, CaptureArgs};
use super::progress::{human_bytes, Progress, Spinner};
use crate::case::triage::{StageName, StageRun, StageStatus};
use crate::case::{Case, CaseStatus};
use crate::error;
use crate::pipeline::{self, Budget};
use crate::reduce;

/// Arguments of `icepick triage`.
#[derive(Debug, Args)]
pub struct TriageArgs {
    #[command(flatten)]
    capture: CaptureArgs,
    /// Reduction tests in flight (default: all cores).
    #[arg(long, value_name = "N", value_parser = crate::cli::jobs_arg)]
    jobs: Option<usize>,
    /// Stop after capture (no reduction).
    #[arg(long)]
    no_reduce: bool,
    /// Let the flags and reduce stages accept candidates that crash the same way only after
    /// source errors: a smaller, invalid test case (the report says so). By default a crash
    /// on valid code stays valid.
    #[arg(long)]
    allow_invalid: bool,
    /// Triage the crash store instead of a command: for each `new` bucket, capture a case
    /// from a recorded occurrence if it has none, reduce it (resuming an interrupted
    /// reduction), and mark the bucket `triaged` or `failed`.
    #[arg(long, conflicts_with_all = ["command", "from_reproducer", "compdb", "no_reduce", "out"])]
    pending: bool,
    /// With --pending: keep taking buckets as they come (on any number of machines sharing
    /// one store), each under a lease renewed while it works; a worker that dies loses its
    /// bucket to another once the lease expires.
    #[arg(long, requires = "pending")]
    worker: bool,
    /// With --worker: stop when no bucket is left to triage instead of waiting for more.
    #[arg(long, requires = "worker")]
    once: bool,
    /// Length of a worker's lease on a bucket, in seconds (renewed every third of it;
    /// default $ICEPICK_LEASE_SECONDS, else 120).
    #[arg(long, value_name = "SECONDS", value_parser = lease_arg)]
    lease: Option<f64>,
    /// Wall-clock budget of the whole triage in seconds, capture included (0: none). Each
    /// stage gets a share and ends with its best so far when it runs out; stages with no
    /// time left are skipped, and the case and report say which. With --pending: per bucket.
    #[arg(long, value_name = "SECONDS", default_value_t = 300)]
    budget: u64,
}

/// `--lease SECONDS`: more than 0, at most [`crate::cli::MAX_SECS`] (larger values overflow a
/// deadline).
fn lease_arg(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(l) if l.is_finite() && l > 0.0 && l <= crate::cli::MAX_SECS as f64 => Ok(l),
        _ => Err(format!(
            "give a number of seconds above 0, at most {}",
            crate::cli::MAX_SECS
        )),
    }
}

/// Runs `icepick triage`.
pub fn run(args: TriageArgs) -> anyhow::Result<u8> {
    let started = std::time::Instant::now();
    let budget = Budget::new(started, budget_of(args.budget));
    if args.pending {
        let lease = args
            .lease
            .or_else(|| {
                std::env::var("ICEPICK_LEASE_SECONDS")
                    .ok()
                    .and_then(|v| v.trim().parse().ok())
            })
            .filter(|l| l.is_finite() && *l > 0.0 && *l <= crate::cli::MAX_SECS as f64)
            .map_or(
                crate::store::lease::DEFAULT_LEASE,
                std::time::Duration::from_secs_f64,
            );
        let how = pending::How {
            worker: args.worker,
            once: args.once,
            lease,
            allow_invalid: args.allow_invalid,
            budget: budget_of(args.budget),
        };
        return pending::run(args.jobs, args.capture.json, args.capture.timeout, how);
    }
    let json = args.capture.json;
    let outcome = capture_from_args(&args.capture)?;
    let (code, case) = print_outcome(&args.capture, outcome, !args.no_reduce)?;
    let Some((dir, captured)) = case else {
        return Ok(code);
    };
    if captured.status != CaseStatus::Captured || args.no_reduce {
        return Ok(code);
    }
    let opts = pipeline::Options {
        jobs: args
            .jobs
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get())),
        allow_invalid: args.allow_invalid,
        budget,
        stop: crate::interrupt::stop_flag(),
        resume: false,
    };
    let mut shown = Shown::new(json);
    let done = pipeline::triage(&dir, &opts, &mut shown).map_err(pipeline_error)?;
    drop(shown);
    let mut out = crate::cli::term::stdout();
    if json {
        // --json: the final case, one object (capture printed the first state already, so a
        // consumer reads the last line).
        let case = Case::load(&dir)?;
        let mut v = serde_json::to_value(&case)?;
        v["case_dir"] = dir.to_string_lossy().into_owned().into();
        writeln!(out, "{}", serde_json::to_string(&v)?)?;
    } else {
        if let Some(r) = &done.reduction {
            writeln!(
                out,
                "reduced:   {} -> {} in {} tests ({} s), {}",
                human_bytes(r.bytes_before),
                human_bytes(r.bytes_after),
                r.tests,
                r.seconds,
                if r.verified {
                    "verified"
                } else {
                    "NOT verified"
                }
            )?;
        }
        writeln!(out, "report:    {}", dir.join("report.md").display())?;
        writeln!(out, "status:    {}", status_line(&done))?;
    }
    Ok(exit_code(&done))
}

/// `--budget` in seconds as a limit: 0 is none; at most [`crate::cli::MAX_SECS`] (a larger
/// one would overflow a deadline).
fn budget_of(seconds: u64) -> Option<std::time::Duration> {
    (seconds > 0).then(|| std::time::Duration::from_secs(seconds.min(crate::cli::MAX_SECS)))
}

/// Exit 4 when a reduction ran (for an llc/opt crash, the ir stage's) and did not verify;
/// an interrupt is the signal's code (main maps it); no reduction at all (the budget ran out
/// first) leaves the captured case, which capture verified.
fn exit_code(done: &pipeline::Outcome) -> u8 {
    let ran = done.llvm_tool || done.reduction.is_some();
    if ran && !done.interrupted && !done.verified() {
        error::NOT_REPRODUCED
    } else {
        error::OK
    }
}

/// The pipeline's errors as the CLI's error chain reads them (exit codes by type).
fn pipeline_error(e: pipeline::PipelineError) -> anyhow::Error {
    match e {
        pipeline::PipelineError::Case(c) => c.into(),
        pipeline::PipelineError::Reduce(r) => r.into(),
    }
}

/// The final `status:` line: what ran, in order, and how it ended when not plainly.
fn status_line(done: &pipeline::Outcome) -> String {
    let mut parts: Vec<String> = vec!["captured".into()];
    for run in &done.triage.stages {
        let word = match run.stage {
            StageName::Flags => "flags".to_string(),
            StageName::Ir => "ir".to_string(),
            StageName::Reduce => match &done.reduction {
                Some(r) if r.verified => "reduced".into(),
                Some(_) => "reduced (NOT verified)".into(),
                None => "reduce".into(),
            },
            StageName::Versions => "versions".into(),
            StageName::Classify => match &done.verdict {
                Some(v) => format!("classified ({v})"),
                None => "classify".into(),
            },
        };
        parts.push(match run.status {
            StageStatus::Done => word,
            StageStatus::NotNeeded if run.stage == StageName::Ir => continue,
            StageStatus::NotNeeded if done.llvm_tool => continue,
            StageStatus::NotNeeded => format!("{word} (kept)"),
            StageStatus::Cut => format!("{word} (cut by the budget)"),
            StageStatus::SkippedBudget => format!("{} skipped (budget)", run.stage.as_str()),
            StageStatus::Failed => format!("{} failed", run.stage.as_str()),
            StageStatus::Interrupted => format!("{word} (interrupted)"),
        });
    }
    parts.join(", ")
}

/// The pipeline's progress on the terminal: a spinner per stage, the reduction's bar, and a
/// line per stage as it ends.
struct Shown {
    json: bool,
    stage: Option<StageName>,
    spinner: Option<Spinner>,
    bar: Option<Progress>,
}

impl Shown {
    fn new(json: bool) -> Self {
        Shown {
            json,
            stage: None,
            spinner: None,
            bar: None,
        }
    }
}

impl pipeline::Progress for Shown {
    fn begin(&mut self, stage: StageName) {
        self.stage = Some(stage);
        let what = match stage {
            StageName::Flags => "flags: finding the flags that matter",
            StageName::Ir => "ir: reducing the crash to IR and an llc/opt command",
            StageName::Reduce => {
                self.bar = Some(Progress::new(self.json));
                return;
            }
            StageName::Versions => "versions: running the case on each compiler",
            StageName::Classify => "classify: running the experiments",
        };
        self.spinner = Some(Spinner::start(what, self.json));
    }

    fn step(&mut self, msg: &str) {
        if let (Some(s), Some(stage)) = (&self.spinner, self.stage) {
            s.step(&format!("{}: {msg}", stage.as_str()));
        }
    }

    fn reduce(&mut self, note: reduce::Note<'_>) {
        if let Some(bar) = &mut self.bar {
            bar.note(note);
        }
    }

    fn end(&mut self, run: &StageRun) {
        if let Some(mut s) = self.spinner.take() {
            s.finish();
        }
        if let Some(mut b) = self.bar.take() {
            b.finish();
        }
        if !self.json {
            let detail = run.detail.as_deref().unwrap_or("");
            match run.status {
                StageStatus::Done => log::info!("{}: {detail}", run.stage.as_str()),
                _ => log::info!("{}: {}: {detail}", run.stage.as_str(), run.status.as_str()),
            }
        }
    }
}

mod pending {
    //! `icepick triage --pending`.

    use std::io::Write;
    use std::path::{Path, PathBuf};
    use std::sync::atomic::Ordering;
    use std::time::Duration;

    use super::super::progress::human_bytes;
    use crate::case::triage::{StageName, StageStatus};
    use crate::case::{Case, CaseStatus};
    use crate::error;
    use crate::pipeline;
    use crate::reduce::Reduction;
    use crate::store::{lease, Bucket, Status, Store};

    /// What became of one bucket.
    enum Done {
        Triaged(String),
        Failed(String),
        /// Ctrl-C during the reduction: the bucket stays `new`; the next run resumes.
        Interrupted,
    }

    /// How `--pending` takes buckets.
    pub(super) struct How {
        /// Keep polling for buckets (`--worker`).
        pub worker: bool,
        /// With `worker`: stop once no bucket is `new`.
        pub once: bool,
        pub lease: Duration,
        /// `--allow-invalid`.
        pub allow_invalid: bool,
        /// `--budget`, per bucket.
        pub budget: Option<Duration>,
    }

    pub(super) fn run(
        jobs: Option<usize>,
        json: bool,
        timeout: u64,
        how: How,
    ) -> anyhow::Result<u8> {
        let loc = crate::store::default_location()?;
        let mut store = Store::open_at(&loc)?;
        let owner = lease::worker_id();
        let mut out = crate::cli::term::stdout();
        let jobs =
            jobs.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
        let stop = crate::interrupt::stop_flag();
        let poll = (how.lease / 4).clamp(Duration::from_millis(200), Duration::from_secs(10));
        let mut rows = Vec::new();
        let mut n = 0;
        while !stop.load(Ordering::SeqCst) {
            // One bucket at a time, under a lease: any number of workers share the store.
            let Some(b) = store.claim(&owner, how.lease)? else {
                if !how.worker || (how.once && store.pending_count()? == 0) {
                    break;
                }
                std::thread::sleep(poll);
                continue;
            };
            n += 1;
            if !json {
                log::info!("[{n}] bucket {}: {} (worker {owner})", b.id, b.title);
            }
            // Renewed until the bucket's budget and one lease more have passed: a worker
            // stuck past that gives the bucket up to the fleet.
            let until = how
                .budget
                .map(|b| std::time::Instant::now() + b + how.lease);
            let heartbeat = lease::Heartbeat::start(&loc, &b.id, &owner, how.lease, until);
            let triaged = local_case(&store, &b)
                .and_then(|b| triage_bucket(&mut store, &b, jobs, json, timeout, &stop, &how));
            drop(heartbeat);
            let (done, dir) = match triaged {
                Ok(r) => r,
                Err(e) => {
                    let _ = store.release(&b.id, &owner);
                    return Err(e);
                }
            };
            if store.is_postgres() {
                // The case as triage left it (reduced input, report) travels back.
                if let Some(d) = dir.as_deref().filter(|d| d.join("case.json").is_file()) {
                    store.store_case(&b.id, d)?;
                }
            }
            let (status, detail) = record(&mut store, &b.id, &owner, &done)?;
            if !json {
                writeln!(out, "bucket {}: {status}: {detail}", b.id)?;
            }
            rows.push(serde_json::json!({
                "id": b.id,
                "status": status,
                "detail": detail,
                "worker": owner,
                "case_dir": dir.map(|d| d.to_string_lossy().into_owned()),
            }));
            if matches!(done, Done::Interrupted) {
                break;
            }
        }
        if rows.is_empty() && !json {
            writeln!(out, "nothing to triage in {loc}")?;
        }
        if json {
            let v = serde_json::json!({"store": loc.to_string(), "worker": owner, "buckets": rows});
            writeln!(out, "{v}")?;
        }
        Ok(error::OK)
    }

    /// Writes a triaged bucket's end to the store: its status and detail, as shown. A
    /// worker that lost its lease (stalled past it) leaves the verdict to the worker that
    /// took the bucket over.
    fn record(
        store: &mut Store,
        id: &str,
        owner: &str,
        done: &Done,
    ) -> anyhow::Result<(&'static str, String)> {
        let kept = match done {
            Done::Triaged(d) => store.finish(id, owner, Status::Triaged, d)?,
            Done::Failed(d) => store.finish(id, owner, Status::Failed, d)?,
            Done::Interrupted => {
                store.release(id, owner)?;
                true
            }
        };
        Ok(match done {
            _ if !kept => (
                "lost",
                "the lease expired and another worker took the bucket".into(),
            ),
            Done::Triaged(d) => ("triaged", d.clone()),
            Done::Failed(d) => ("failed", d.clone()),
            Done::Interrupted => ("new", "interrupted; run again to resume".to_string()),
        })
    }

    /// `b` with its case on this machine: a PostgreSQL store's case (captured anywhere in
    /// the fleet) is unpacked from the database into a fresh directory of this machine's
    /// cache first.
    ///
    /// A fleet's database is written by many machines: its `case_dir` names a directory of
    /// the capturing machine (never used here: without an archive the bucket is captured
    /// anew), and its bucket id only picks a name made of letters and digits.
    fn local_case(store: &Store, b: &Bucket) -> anyhow::Result<Bucket> {
        if !store.is_postgres() {
            return Ok(b.clone());
        }
        if !b.archived {
            return Ok(Bucket {
                case_dir: None,
                ..b.clone()
            });
        }
        let name: String =
            b.id.chars()
                .filter(char::is_ascii_alphanumeric)
                .take(40)
                .collect();
        let dir = store
            .cases_dir()
            .join(format!("bucket-{name}.{}", std::process::id()));
        if dir.exists() {
            std::fs::remove_dir_all(&dir)?;
        }
        store.fetch_case(b, &dir)?;
        Ok(Bucket {
            case_dir: Some(dir.to_string_lossy().into_owned()),
            ..b.clone()
        })
    }

    fn triage_bucket(
        store: &mut Store,
        b: &Bucket,
        jobs: usize,
        json: bool,
        timeout: u64,
        stop: &std::sync::Arc<std::sync::atomic::AtomicBool>,
        how: &How,
    ) -> anyhow::Result<(Done, Option<PathBuf>)> {
        let started = std::time::Instant::now();
        let dir = match &b.case_dir {
            Some(d) => PathBuf::from(d),
            None => match capture_bucket(store, b, json, timeout)? {
                Ok(d) => d,
                Err(why) => return Ok((Done::Failed(format!("capture failed: {why}")), None)),
            },
        };
        let case = match Case::load(&dir) {
            Ok(c) => c,
            Err(e) => return Ok((Done::Failed(e.to_string()), Some(dir))),
        };
        if case.status != CaseStatus::Captured {
            let why = case
                .status_detail
                .clone()
                .unwrap_or_else(|| "not reproducible".into());
            return Ok((Done::Failed(why), Some(dir)));
        }
        let opts = pipeline::Options {
            jobs,
            allow_invalid: how.allow_invalid,
            budget: pipeline::Budget::new(started, how.budget),
            stop: stop.clone(),
            // An earlier, interrupted run of this bucket: keep what it did, resume the rest.
            resume: true,
        };
        let mut shown = super::Shown::new(json);
        let done = match pipeline::triage(&dir, &opts, &mut shown) {
            Ok(d) => d,
            Err(pipeline::PipelineError::Reduce(e)) => {
                return Ok((Done::Failed(format!("reduction failed: {e}")), Some(dir)))
            }
            Err(pipeline::PipelineError::Case(e)) if e.is_bad_input() => {
                return Ok((Done::Failed(e.to_string()), Some(dir)))
            }
            Err(pipeline::PipelineError::Case(e)) => return Err(e.into()),
        };
        drop(shown);
        if done.interrupted {
            return Ok((Done::Interrupted, Some(dir)));
        }
        if let Some(v) = &done.verdict {
            store.set_verdict(&b.id, v)?;
        }
        Ok((outcome(&done), Some(dir)))
    }

    /// A case for a bucket recorded without one (`ICEPICK_WRAP_CAPTURE=0`, or capture failed
    /// in the build): captured now from the first of its first three occurrences that still
    /// captures. `Err` inside: why none did.
    fn capture_bucket(
        store: &mut Store,
        b: &Bucket,
        json: bool,
        timeout: u64,
    ) -> anyhow::Result<Result<PathBuf, String>> {
        let mut last_error = "the bucket has no recorded occurrence".to_string();
        for o in store.occurrences(&b.id)?.iter().take(3) {
            if !json {
                log::info!(
                    "capturing from {} in {}",
                    crate::command::shell_join(&o.command),
                    crate::command::shell_quote(&o.cwd)
                );
            }
            match store.capture_for(
                &b.id,
                Some(o.id),
                &o.command,
                Path::new(&o.cwd),
                2,
                Duration::from_secs(timeout.max(1)),
            ) {
                Ok(d) => return Ok(Ok(d)),
                Err(e) => last_error = e,
            }
        }
        Ok(Err(last_error))
    }

    /// The bucket's verdict from a finished triage: triaged with what each stage found, or
    /// failed when its reduction does not reproduce.
    fn outcome(done: &pipeline::Outcome) -> Done {
        let reduced = if done.llvm_tool {
            // An llc/opt crash: its reduced IR is its reduction.
            match done.ir_verified {
                Some(true) => "reduced IR verified".to_string(),
                Some(false) => {
                    return Done::Failed("the reduced IR does not reproduce the crash".into())
                }
                None => "not reduced: the ir stage gave no IR".into(),
            }
        } else {
            match &done.reduction {
                Some(r) if r.verified => summary(r),
                Some(r) => {
                    return Done::Failed(format!(
                        "the reduced input ({}) does not reproduce the crash",
                        r.output
                    ))
                }
                None => "not reduced: the triage budget ran out first".into(),
            }
        };
        let row = |stage| done.triage.stage(stage);
        let versions = match row(StageName::Versions) {
            Some(r) if r.status == StageStatus::Done => {
                format!("; versions: {}", r.detail.as_deref().unwrap_or(""))
            }
            Some(r) => format!(
                "; versions not run: {}",
                r.detail.as_deref().unwrap_or(r.status.as_str())
            ),
            None => String::new(),
        };
        let verdict = match (&done.verdict, row(StageName::Classify)) {
            (Some(v), _) => format!("; classified: {v}"),
            (None, Some(r)) => format!(
                "; not classified: {}",
                r.detail.as_deref().unwrap_or(r.status.as_str())
            ),
            (None, None) => String::new(),
        };
        Done::Triaged(format!("{reduced}{versions}{verdict}"))
    }

    fn summary(r: &Reduction) -> String {
        format!(
            "reduced {} -> {} in {} tests",
            human_bytes(r.bytes_before),
            human_bytes(r.bytes_after),
            r.tests
        )
    }
}
