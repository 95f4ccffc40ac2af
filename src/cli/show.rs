//! `icepick show BUCKET [--json]`: one bucket of the crash store, its occurrences, its case.

use std::io::Write;
use std::path::Path;

use clap::Args;

use super::list::{printable, short_time};
use crate::command::{shell_cd, shell_join};
use crate::error;
use crate::store::Store;

/// Arguments of `icepick show`.
#[derive(Debug, Args)]
pub struct ShowArgs {
    /// The bucket id (as `icepick list` prints it), or an unambiguous prefix of it.
    bucket: String,
    /// Print `{"bucket": …, "occurrences": […], "case_dir": …, "report": …}` on stdout.
    #[arg(long)]
    json: bool,
}

/// Runs `icepick show`.
pub fn run(args: ShowArgs) -> anyhow::Result<u8> {
    let (root, store) = Store::open_existing_default()?;
    let Some(store) = store else {
        eprintln!(
            "icepick: error: no bucket `{}`: the crash store {} does not exist (no crash \
             recorded yet; ICEPICK_STORE names another)",
            args.bucket,
            root.display()
        );
        return Ok(error::USAGE);
    };
    let Some(bucket) = store.bucket(&args.bucket)? else {
        eprintln!(
            "icepick: error: no bucket `{}` in the crash store {} (`icepick list` shows the buckets)",
            args.bucket,
            store.root().display()
        );
        return Ok(error::USAGE);
    };
    let occurrences = store.occurrences(&bucket.id)?;
    let report = bucket
        .case_dir
        .as_deref()
        .map(|d| Path::new(d).join("report.md"))
        .filter(|p| p.is_file());
    let mut out = std::io::stdout().lock();
    if args.json {
        let v = serde_json::json!({
            "store": store.root().to_string_lossy(),
            "bucket": bucket,
            "occurrences": occurrences,
            "case_dir": bucket.case_dir,
            "report": report.as_ref().map(|p| p.to_string_lossy().into_owned()),
        });
        writeln!(out, "{v}")?;
        return Ok(error::OK);
    }
    writeln!(
        out,
        "bucket:     {} (coarse {})",
        bucket.id, bucket.coarse_id
    )?;
    writeln!(out, "title:      {}", printable(&bucket.title))?;
    writeln!(out, "kind:       {}", printable(&bucket.kind))?;
    let status = serde_json::to_value(bucket.status)?;
    match &bucket.status_detail {
        Some(d) => writeln!(
            out,
            "status:     {} ({})",
            status.as_str().unwrap_or(""),
            printable(d)
        )?,
        None => writeln!(out, "status:     {}", status.as_str().unwrap_or(""))?,
    }
    writeln!(
        out,
        "verdict:    {}",
        printable(bucket.verdict.as_deref().unwrap_or("(not classified)"))
    )?;
    writeln!(
        out,
        "seen:       {} times, first {}, last {}",
        bucket.count,
        short_time(&bucket.first_seen),
        short_time(&bucket.last_seen)
    )?;
    match &bucket.case_dir {
        Some(d) => writeln!(out, "case:       {}", printable(d))?,
        None => writeln!(
            out,
            "case:       (none yet{}; `icepick triage --pending` captures one)",
            bucket
                .capture_error
                .as_deref()
                .map(|e| format!(": {}", printable(e)))
                .unwrap_or_default()
        )?,
    }
    if let Some(r) = &report {
        writeln!(out, "report:     {}", r.display())?;
    }
    writeln!(out, "occurrences:")?;
    for o in &occurrences {
        writeln!(
            out,
            "  {}  {}  {}  {}",
            short_time(&o.time),
            printable(if o.host.is_empty() { "-" } else { &o.host }),
            printable(&o.origin),
            printable(o.source.as_deref().unwrap_or("-"))
        )?;
        // A command to paste into a shell: the directory is quoted like every argument.
        writeln!(
            out,
            "    {} && {}",
            shell_cd(&o.cwd),
            shell_join(&o.command)
        )?;
    }
    Ok(error::OK)
}
