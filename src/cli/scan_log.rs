//! `icepick scan-log LOG`: find crashed compiles in a ninja, make or CMake build log, record
//! each in the crash store, and capture a case for each new bucket by rerunning its command
//! (the source tree must still be there).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Context as _;
use clap::Args;

use super::absolutize;
use crate::crash::ExitInfo;
use crate::error;
use crate::scanlog;
use crate::store::{self, CaptureMode, Observed, Store};

/// Arguments of `icepick scan-log`.
#[derive(Debug, Args)]
pub struct ScanLogArgs {
    /// The build log (ninja, make, CMake output; stdout and stderr together).
    log: PathBuf,
    /// Directory the build ran in, for commands the log gives no directory for and for
    /// relative ones (default: the log's directory).
    #[arg(long, value_name = "DIR")]
    cwd: Option<PathBuf>,
    /// Only record the crashes; capture their cases later (`icepick triage --pending`).
    #[arg(long)]
    no_capture: bool,
    /// Reruns of each new crash while capturing, to check it is deterministic (0 to 100).
    #[arg(long, default_value_t = 1, value_name = "N", value_parser = crate::cli::reruns_arg)]
    reruns: u32,
    /// Time limit for each compiler run while capturing, in seconds.
    #[arg(long, default_value_t = 300, value_name = "SECS", value_parser = crate::cli::secs_arg)]
    timeout: u64,
    /// Print `{"log": …, "crashes": [...]}` on stdout, and nothing else.
    #[arg(long)]
    json: bool,
}

/// Runs `icepick scan-log`. Exit code 3 when the log shows no crashed compile.
pub fn run(args: ScanLogArgs) -> anyhow::Result<u8> {
    let here = std::env::current_dir().context("cannot read the current directory")?;
    let log_path = absolutize(&here, &args.log);
    let bytes = std::fs::read(&log_path)
        .with_context(|| format!("cannot read the log {}", log_path.display()))?;
    let text = String::from_utf8_lossy(&bytes);
    let base = match &args.cwd {
        Some(d) => absolutize(&here, d),
        None => log_path
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_else(|| here.clone()),
    };
    let found = scanlog::crashed_compiles(&text);
    let mut out = crate::cli::term::stdout();
    if found.is_empty() {
        if args.json {
            let v = serde_json::json!({"log": log_path.to_string_lossy(), "crashes": []});
            writeln!(out, "{v}")?;
        } else {
            eprintln!("icepick: no crashed compile in {}", log_path.display());
        }
        return Ok(error::NO_CRASH);
    }
    let mut store = Store::open_default()?;
    let mode = if args.no_capture {
        CaptureMode::Off
    } else {
        CaptureMode::FirstPerBucket {
            reruns: args.reruns,
            timeout: Duration::from_secs(args.timeout.max(1)),
        }
    };
    let mut rows = Vec::new();
    for f in &found {
        rows.extend(record_one(
            &mut store, f, &base, &mode, args.json, &mut out,
        )?);
    }
    if args.json {
        let v = serde_json::json!({
            "log": log_path.to_string_lossy(),
            "store": store.location().to_string(),
            "crashes": rows,
        });
        writeln!(out, "{v}")?;
    }
    Ok(if rows.is_empty() {
        error::NO_CRASH
    } else {
        error::OK
    })
}

/// What became of a recorded crash's capture, as the JSON row's `capture` says it.
fn capture_word(r: &store::Recording) -> &'static str {
    if r.captured {
        "captured"
    } else if r.capture_error.is_some() {
        "capture-failed"
    } else if r.case_dir.is_some() {
        "already-captured"
    } else {
        "recorded"
    }
}

/// What became of a recorded crash's capture, in words.
fn what_became_of(r: &store::Recording) -> String {
    match (&r.capture_error, &r.case_dir) {
        (Some(e), _) => format!("not captured: {e}"),
        (None, Some(d)) if r.captured => format!("captured into {}", d.display()),
        (None, Some(d)) => format!("case already in {}", d.display()),
        (None, None) => "recorded (capture later: icepick triage --pending)".into(),
    }
}

/// Records one crashed compile of the log in the store (capturing its case when `mode` says
/// so) and says what became of it; its JSON row, `None` when its output shows no crash the
/// store can key.
fn record_one(
    store: &mut Store,
    f: &scanlog::FoundCrash,
    base: &Path,
    mode: &CaptureMode,
    json: bool,
    out: &mut impl Write,
) -> anyhow::Result<Option<serde_json::Value>> {
    if let Some(bucket) = &f.recorded_by_wrap {
        // The build ran under `icepick wrap`, which recorded it already.
        if !json {
            log::info!(
                "line {}: already recorded by icepick wrap in bucket {bucket}",
                f.line
            );
        }
        return Ok(Some(serde_json::json!({
            "line": f.line,
            "command": f.command,
            "bucket": bucket,
            "capture": "recorded-by-wrap",
        })));
    }
    let cwd = f
        .cwd
        .as_deref()
        .map(|d| absolutize(base, Path::new(d)))
        .unwrap_or_else(|| base.to_path_buf());
    let compiler =
        crate::exec::which(&f.command[0], &cwd).unwrap_or_else(|| PathBuf::from(&f.command[0]));
    let Some(analysed) = store::analyse(&f.output, ExitInfo::default(), &compiler) else {
        return Ok(None);
    };
    if !json {
        log::info!(
            "line {}: {} crashed (bucket {})",
            f.line,
            crate::command::shell_join(&f.command),
            analysed.key.id
        );
    }
    let obs = Observed {
        argv: &f.command,
        cwd: &cwd,
        exit_code: None,
        origin: "scan-log",
    };
    let r = store.record_crash(&obs, &analysed, mode)?;
    if !json {
        writeln!(
            out,
            "bucket {} ({}; {} occurrences): {}",
            r.bucket,
            r.title,
            r.count,
            what_became_of(&r)
        )?;
    }
    Ok(Some(serde_json::json!({
        "line": f.line,
        "command": f.command,
        "cwd": cwd.to_string_lossy(),
        "bucket": r.bucket,
        "title": r.title,
        "count": r.count,
        "capture": capture_word(&r),
        "capture_error": r.capture_error,
        "case_dir": r.case_dir.as_ref().map(|d| d.to_string_lossy().into_owned()),
    })))
}
