//! `icepick triage -- <cmd>`: the pipeline in one command: capture, then reduce (more stages
//! join as they land), then the report.

use std::io::Write;

use clap::Args;

use super::capture::{capture_from_args, print_outcome, CaptureArgs};
use super::reduce::{human_bytes, stop_on_signals, Progress};
use crate::case::{Case, CaseStatus};
use crate::error;
use crate::reduce::{self, Settings};

/// Arguments of `icepick triage`.
#[derive(Debug, Args)]
pub struct TriageArgs {
    #[command(flatten)]
    capture: CaptureArgs,
    /// Reduction tests in flight (default: all cores).
    #[arg(long, value_name = "N")]
    jobs: Option<usize>,
    /// Stop after capture (no reduction).
    #[arg(long)]
    no_reduce: bool,
}

/// Runs `icepick triage`.
pub fn run(args: TriageArgs) -> anyhow::Result<u8> {
    let json = args.capture.json;
    let outcome = capture_from_args(&args.capture)?;
    let (code, case) = print_outcome(&args.capture, outcome)?;
    let Some((dir, captured)) = case else {
        return Ok(code);
    };
    if captured.status != CaseStatus::Captured || args.no_reduce {
        return Ok(code);
    }
    let settings = Settings {
        jobs: args
            .jobs
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get())),
        resume: false,
        timeout: None,
        stop: stop_on_signals(),
    };
    let mut progress = Progress::new(json);
    let r = reduce::reduce_case(&dir, &settings, &mut |n| progress.note(n))?;
    let mut out = std::io::stdout().lock();
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
    }
    Ok(if r.verified {
        error::OK
    } else {
        error::NOT_REPRODUCED
    })
}
