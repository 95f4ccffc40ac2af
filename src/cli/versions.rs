//! `icepick versions CASE`: the case on every clang found, and the regression range.

use std::io::Write;
use std::path::PathBuf;

use clap::Args;

use super::progress::Spinner;
use crate::error;
use crate::versions;

/// Arguments of `icepick versions`.
#[derive(Debug, Args)]
pub struct VersionsArgs {
    /// The case directory, or a bucket id of the crash store.
    case: PathBuf,
    /// Compilers to run (default: every clang on PATH and in /usr/lib/llvm-*/bin).
    #[arg(long = "compiler", value_name = "PATH")]
    compilers: Vec<PathBuf>,
    /// Compilers run at once (default: all cores).
    #[arg(long, value_name = "N", value_parser = crate::cli::jobs_arg)]
    jobs: Option<usize>,
    /// Seconds one compiler may take on the case; one killed at the limit gives a `timeout`
    /// row.
    #[arg(long, default_value_t = versions::DEFAULT_TIMEOUT.as_secs(), value_name = "SECS",
          value_parser = crate::cli::secs_arg)]
    timeout: u64,
    /// Print `{"versions": [...], "summary": "..."}` on stdout, and nothing else.
    #[arg(long)]
    json: bool,
}

/// Runs `icepick versions`.
pub fn run(args: VersionsArgs) -> anyhow::Result<u8> {
    let jobs = args
        .jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let mut spinner = Spinner::start("running the case on each compiler", args.json);
    let case = super::case_arg::resolve(&args.case)?;
    let timeout = std::time::Duration::from_secs(args.timeout);
    let rows = versions::run_versions(&case, &args.compilers, jobs, timeout)?;
    spinner.finish();
    crate::report::rerender(&case)?;
    let summary = versions::summary(&rows);
    let mut out = crate::cli::term::stdout();
    if args.json {
        let v = serde_json::json!({"versions": rows, "summary": summary});
        writeln!(out, "{v}")?;
    } else {
        for r in &rows {
            writeln!(out, "{:<12} {:<40} {}", r.outcome, r.version, r.compiler)?;
        }
        writeln!(out, "{summary}")?;
    }
    Ok(error::OK)
}
