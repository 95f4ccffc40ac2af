//! `icepick reduce`: arguments and progress output of the reduce stage. Ctrl-C and SIGTERM
//! (crate::interrupt) stop it gracefully: running tests are killed, the best so far is kept.

use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

use clap::Args;

use super::progress::{human_bytes, Progress};
use crate::error;
use crate::reduce::{self, Settings};

/// Arguments of `icepick reduce`.
#[derive(Debug, Args)]
pub struct ReduceArgs {
    /// The case directory (from `icepick capture`) or a bucket id, or with --test the file(s) to reduce.
    #[arg(value_name = "CASE|FILE", required = true, num_args = 1..)]
    targets: Vec<PathBuf>,
    /// C-Reduce/C-Vise style: reduce each FILE in place while this script exits 0 (run in a
    /// scratch directory holding every FILE under its name, with a private TMPDIR there);
    /// FILE.orig keeps the original.
    #[arg(long, value_name = "SCRIPT")]
    test: Option<PathBuf>,
    /// Tests in flight (default: all cores; with a farm, its total slots).
    #[arg(long, value_name = "N", value_parser = crate::cli::jobs_arg)]
    jobs: Option<usize>,
    #[command(flatten)]
    farm: crate::cli::farm::FarmArgs,
    /// Continue from the best-so-far of an earlier (interrupted) run.
    #[arg(long)]
    resume: bool,
    /// Per-test time limit in seconds (default: 5x the first run, at least 3 s).
    #[arg(long, value_name = "SECS", value_parser = crate::cli::secs_arg)]
    timeout: Option<u64>,
    /// Print the result as one JSON object on stdout, and nothing else.
    #[arg(long)]
    json: bool,
    /// Let candidates have source errors before the crash even when the original has none
    /// (faster, smaller, but an invalid reproducer; a crash-on-valid stays valid by default).
    #[arg(long)]
    allow_invalid: bool,
    /// Runs of the start and of the final result that must all crash the same way (1 to
    /// 100).
    #[arg(long, value_name = "N", default_value_t = reduce::DEFAULT_VERIFY_RUNS,
          value_parser = crate::cli::runs_arg)]
    verify_runs: u32,
    /// Write one JSON line per test to FILE (sequence, pass, bytes, outcome, start/end,
    /// worker), for `icepick simulate`. A case keeps it anyway, in logs/reduce-trace.jsonl.
    #[arg(long, value_name = "FILE")]
    trace: Option<PathBuf>,
}

/// Runs `icepick reduce`.
pub fn run(args: ReduceArgs) -> anyhow::Result<u8> {
    let _graceful = crate::interrupt::graceful();
    let executor = match args.farm.choice() {
        Ok(c) => c,
        Err(why) => {
            eprintln!("icepick: {why}");
            return Ok(error::USAGE);
        }
    };
    let settings = Settings {
        jobs: args
            .jobs
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get())),
        resume: args.resume,
        timeout: args.timeout.map(Duration::from_secs),
        stop: crate::interrupt::stop_flag(),
        allow_invalid: args.allow_invalid,
        verify_runs: args.verify_runs,
        executor,
    };
    match &args.test {
        Some(script) => run_script(&args, script, &settings),
        None => run_case(&args, &settings),
    }
}

/// `reduce --test SCRIPT FILE…`.
fn run_script(
    args: &ReduceArgs,
    script: &std::path::Path,
    settings: &Settings,
) -> anyhow::Result<u8> {
    let mut progress = Progress::new(args.json);
    let r = reduce::reduce_with_script(
        script,
        &args.targets,
        settings,
        args.trace.as_deref(),
        &mut |n| progress.note(n),
    )?;
    progress.finish();
    let mut out = crate::cli::term::stdout();
    if args.json {
        writeln!(out, "{}", serde_json::to_string(&r)?)?;
        return Ok(error::OK);
    }
    let kept: Vec<String> = r
        .files
        .iter()
        .map(|f| match &f.original {
            Some(o) => format!("original kept in {}", o.display()),
            None => format!("{} unchanged", f.file.display()),
        })
        .collect();
    let what: Vec<String> = r
        .files
        .iter()
        .map(|f| f.file.display().to_string())
        .collect();
    writeln!(
        out,
        "reduced {}: {} -> {} in {} tests ({} s){}; {}",
        what.join(", "),
        human_bytes(r.bytes_before),
        human_bytes(r.bytes_after),
        r.tests,
        r.seconds,
        if r.status == "stopped" {
            ", stopped early"
        } else {
            ""
        },
        kept.join(", ")
    )?;
    Ok(error::OK)
}

/// `reduce CASE`: exit 0 when the result verified.
fn run_case(args: &ReduceArgs, settings: &Settings) -> anyhow::Result<u8> {
    let [target] = args.targets.as_slice() else {
        eprintln!("icepick: reduce takes one case directory (several files only with --test)");
        return Ok(error::USAGE);
    };
    let target = &super::case_arg::resolve(target)?;
    let mut progress = Progress::new(args.json);
    let r = reduce::reduce_case_traced(target, settings, args.trace.as_deref(), &mut |n| {
        progress.note(n)
    })?;
    progress.finish();
    crate::report::rerender(target)?;
    let mut out = crate::cli::term::stdout();
    if args.json {
        writeln!(out, "{}", serde_json::to_string(&r)?)?;
    } else {
        print_reduction(&mut out, target, &r)?;
    }
    Ok(if r.verified {
        error::OK
    } else {
        error::NOT_REPRODUCED
    })
}

/// The human summary of a case's reduction.
fn print_reduction(
    out: &mut impl Write,
    target: &std::path::Path,
    r: &reduce::Reduction,
) -> std::io::Result<()> {
    writeln!(
        out,
        "reduced:  {} -> {} ({:.2}%) in {} tests, {} s{}",
        human_bytes(r.bytes_before),
        human_bytes(r.bytes_after),
        100.0 * r.bytes_after as f64 / r.bytes_before.max(1) as f64,
        r.tests,
        r.seconds,
        if r.status == "stopped" {
            " (stopped early; --resume continues)"
        } else {
            ""
        }
    )?;
    writeln!(out, "output:   {}", target.join(&r.output).display())?;
    let verified = if r.verified {
        format!(
            "yes, {} in {} of {} runs{}",
            match crate::case::Case::load(target) {
                Ok(c) if !c.family().is_one_signature() => "the case's crash family",
                _ => "same signature",
            },
            r.verify_same,
            r.verify_runs,
            if r.keep_valid {
                ", no source error before the crash"
            } else {
                ""
            }
        )
    } else if crate::interrupt::is_interrupted() {
        "not checked (interrupted; --resume continues and verifies)".to_string()
    } else {
        format!(
            "NO: the result reproduced the crash in {} of {} runs",
            r.verify_same, r.verify_runs
        )
    };
    writeln!(out, "verified: {verified}")?;
    if r.allow_invalid && r.source_errors > 0 {
        writeln!(
            out,
            "invalid:  {} source error(s) before the crash (--allow-invalid)",
            r.source_errors
        )?;
    }
    if let Some(why) = &r.backed_off {
        writeln!(out, "backed off: {why}")?;
    }
    if let Some(f) = r.farm.as_ref().filter(|f| f.requested != "local") {
        writeln!(out, "farm:     {}", f.line())?;
    }
    if !r.extra_flags.is_empty() {
        writeln!(
            out,
            "needs:    {}",
            crate::command::shell_join(&r.extra_flags)
        )?;
    }
    Ok(())
}
