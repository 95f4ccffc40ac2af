//! `icepick triage -- <cmd>`: the pipeline in one command: capture, flags, ir, reduce,
//! versions, classify, and the report. `icepick triage --pending`: the same for one
//! representative of every `new` bucket of the crash store, each taken under a lease
//! (`--worker`: keep taking them, on any number of machines; see [`crate::store::lease`]).

use std::io::Write;

use clap::Args;

use super::capture::{capture_from_args, print_outcome, CaptureArgs};
use super::progress::{human_bytes, Progress, Spinner};
use crate::case::{Case, CaseStatus};
use crate::error;
use crate::reduce::{self, Settings};

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
}

/// Runs `icepick triage`.
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

pub fn run(args: TriageArgs) -> anyhow::Result<u8> {
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
    // What ran, for the final `status:` line.
    let mut stages: Vec<String> = vec!["captured".into()];
    let settings = Settings {
        jobs: args
            .jobs
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get())),
        resume: false,
        timeout: None,
        stop: crate::interrupt::stop_flag(),
        allow_invalid: args.allow_invalid,
        verify_runs: reduce::DEFAULT_VERIFY_RUNS,
        executor: Default::default(),
    };
    // Flags first: reduce uses the minimal command it finds.
    let flag_opts = crate::flags::Options {
        jobs: settings.jobs,
        allow_invalid: args.allow_invalid,
        ..crate::flags::Options::default()
    };
    let mut spinner = Spinner::start("flags: finding the flags that matter", json);
    let f = crate::flags::flags_for_case(&dir, &flag_opts, &mut |msg: &str| {
        spinner.step(&format!("flags: {msg}"))
    })
    .map_err(|e| match e {
        crate::flags::FlagsError::Case(c) => anyhow::Error::from(c),
    })?;
    spinner.finish();
    crate::report::rerender(&dir)?;
    if !json {
        log::info!(
            "flags: {} of {} arguments needed ({} compiler runs)",
            f.minimal_command.len().saturating_sub(1),
            captured.replay_command.len().saturating_sub(1),
            f.compiler_runs
        );
    }
    stages.push("flags".into());
    // A backend crash also becomes minimal IR and an llc/opt line (issue 13); a frontend
    // crash has no IR and is skipped. Its failure does not fail the triage. Before the
    // reduction: the one function the IR keeps is the reducer's hint when the crash names
    // none (big-hip-rv-gh75010: 447 s -> 222 s of reduction).
    let ir_opts = crate::ir::Options {
        jobs: settings.jobs,
        ..crate::ir::Options::default()
    };
    match super::ir::ir_and_report(&dir, &ir_opts, json) {
        Ok(s) => {
            if !json {
                log::info!("ir: {}", super::ir::summary(&s));
            }
            stages.push("ir".into());
        }
        Err(crate::ir::IrError::Frontend(_)) => {}
        Err(e) => {
            if !json {
                log::info!("ir: {e}");
            }
            stages.push("ir failed".into());
        }
    }
    let mut progress = Progress::new(json);
    // Only the reduction stops gracefully (keeping its best so far); an interrupt in any
    // other stage ends icepick at once, leaving the case as it was.
    let r = {
        let _graceful = crate::interrupt::graceful();
        reduce::reduce_case(&dir, &settings, &mut |n| progress.note(n))?
    };
    progress.finish();
    crate::report::rerender(&dir)?;
    stages.push(if r.verified {
        "reduced".into()
    } else {
        "reduced (NOT verified)".into()
    });
    let mut spinner = Spinner::start("versions: running the case on each compiler", json);
    let rows = crate::versions::run_versions(&dir, &[], settings.jobs)?;
    spinner.finish();
    crate::report::rerender(&dir)?;
    if !json {
        log::info!("versions: {}", crate::versions::summary(&rows));
    }
    stages.push("versions".into());
    let mut spinner = Spinner::start("classify: running the experiments", json);
    let c = crate::classify::classify(&dir, &crate::classify::Options::default())?;
    spinner.finish();
    crate::report::rerender(&dir)?;
    if !json {
        log::info!("classification: {} ({})", c.verdict, c.reason);
    }
    stages.push(format!("classified ({})", c.verdict));
    let mut out = crate::cli::term::stdout();
    if json {
        // --json: the final case, one object (capture printed the first state already, so a
        // consumer reads the last line).
        let case = Case::load(&dir)?;
        let mut v = serde_json::to_value(&case)?;
        v["case_dir"] = dir.to_string_lossy().into_owned().into();
        writeln!(out, "{}", serde_json::to_string(&v)?)?;
    } else {
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
        writeln!(out, "report:    {}", dir.join("report.md").display())?;
        writeln!(out, "status:    {}", stages.join(", "))?;
    }
    Ok(if r.verified {
        error::OK
    } else {
        error::NOT_REPRODUCED
    })
}

mod pending {
    //! `icepick triage --pending`.

    use std::io::Write;
    use std::path::{Path, PathBuf};
    use std::sync::atomic::Ordering;
    use std::time::Duration;

    use super::super::progress::{human_bytes, Progress, Spinner};
    use crate::case::{Case, CaseStatus};
    use crate::error;
    use crate::reduce::{self, Reduction, Settings};
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
            let heartbeat = lease::Heartbeat::start(&loc, &b.id, &owner, how.lease);
            let triaged = local_case(&store, &b)
                .and_then(|b| triage_bucket(&mut store, &b, jobs, json, timeout, &stop));
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
            let (status, detail) = match &done {
                Done::Triaged(d) => ("triaged", d.clone()),
                Done::Failed(d) => ("failed", d.clone()),
                Done::Interrupted => ("new", "interrupted; run again to resume".to_string()),
            };
            let kept = match &done {
                Done::Triaged(d) => store.finish(&b.id, &owner, Status::Triaged, d)?,
                Done::Failed(d) => store.finish(&b.id, &owner, Status::Failed, d)?,
                Done::Interrupted => {
                    store.release(&b.id, &owner)?;
                    true
                }
            };
            // A worker that lost its lease (stalled past it) leaves the verdict to the
            // worker that took the bucket over.
            let (status, detail) = if kept {
                (status, detail)
            } else {
                (
                    "lost",
                    "the lease expired and another worker took the bucket".into(),
                )
            };
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
    ) -> anyhow::Result<(Done, Option<PathBuf>)> {
        let dir = match &b.case_dir {
            Some(d) => PathBuf::from(d),
            None => {
                // Recorded without a case (`ICEPICK_WRAP_CAPTURE=0`, or capture failed in
                // the build): capture now from the first occurrence that still captures.
                let occurrences = store.occurrences(&b.id)?;
                let mut last_error = "the bucket has no recorded occurrence".to_string();
                let mut captured = None;
                for o in occurrences.iter().take(3) {
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
                        Ok(d) => {
                            captured = Some(d);
                            break;
                        }
                        Err(e) => last_error = e,
                    }
                }
                match captured {
                    Some(d) => d,
                    None => {
                        return Ok((Done::Failed(format!("capture failed: {last_error}")), None))
                    }
                }
            }
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
        let earlier: Option<Reduction> = case
            .reduction
            .clone()
            .and_then(|v| serde_json::from_value(v).ok());
        // Flags first, as `triage -- <cmd>` does: reduce uses the minimal command. A case
        // that already has them (an earlier, interrupted run) keeps them.
        if case.flags.is_none() && earlier.is_none() {
            let opts = crate::flags::Options {
                jobs,
                ..crate::flags::Options::default()
            };
            let mut spinner = Spinner::start("flags: finding the flags that matter", json);
            let flagged = crate::flags::flags_for_case(&dir, &opts, &mut |msg: &str| {
                spinner.step(&format!("flags: {msg}"))
            });
            spinner.finish();
            if let Err(e) = flagged {
                return Ok((Done::Failed(format!("flags failed: {e}")), Some(dir)));
            }
            crate::report::rerender(&dir)?;
        }
        let done = earlier.filter(|r| r.status == "done" && r.verified);
        let r = match done {
            Some(r) => r,
            None => {
                let settings = Settings {
                    jobs,
                    resume: Case::load(&dir).is_ok_and(|c| c.reduction.is_some()),
                    timeout: None,
                    stop: stop.clone(),
                    allow_invalid: false,
                    verify_runs: reduce::DEFAULT_VERIFY_RUNS,
                    executor: Default::default(),
                };
                let mut progress = Progress::new(json);
                let reduced = {
                    let _graceful = crate::interrupt::graceful();
                    reduce::reduce_case(&dir, &settings, &mut |n| progress.note(n))
                };
                progress.finish();
                if reduced.is_ok() {
                    crate::report::rerender(&dir)?;
                }
                match reduced {
                    Ok(r) if r.status == "stopped" => return Ok((Done::Interrupted, Some(dir))),
                    Ok(r) if r.verified => r,
                    Ok(r) => {
                        let why = format!(
                            "the reduced input ({}) does not reproduce the crash",
                            r.output
                        );
                        return Ok((Done::Failed(why), Some(dir)));
                    }
                    Err(e) => {
                        let why = format!("reduction failed: {e}");
                        return Ok((Done::Failed(why), Some(dir)));
                    }
                }
            }
        };
        // The version table; a host without other clangs is no triage failure.
        let mut spinner = Spinner::start("versions: running the case on each compiler", json);
        let ran = crate::versions::run_versions(&dir, &[], jobs);
        spinner.finish();
        let versions = match ran {
            Ok(rows) => {
                crate::report::rerender(&dir)?;
                format!("; versions: {}", crate::versions::summary(&rows))
            }
            Err(e) => format!("; versions not run: {e}"),
        };
        // Classification: the verdict goes on the bucket too.
        let mut spinner = Spinner::start("classify: running the experiments", json);
        let classified = crate::classify::classify(&dir, &crate::classify::Options::default());
        spinner.finish();
        let verdict = match classified {
            Ok(c) => {
                crate::report::rerender(&dir)?;
                store.set_verdict(&b.id, &c.verdict)?;
                format!("; classified: {}", c.verdict)
            }
            Err(e) => format!("; not classified: {e}"),
        };
        Ok((
            Done::Triaged(format!("{}{versions}{verdict}", summary(&r))),
            Some(dir),
        ))
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
