//! `icepick list [--json]`: the crash store's buckets, most recently seen first.

use std::io::Write;

use clap::Args;

use crate::error;
use crate::store::Store;

/// Arguments of `icepick list`.
#[derive(Debug, Args)]
pub struct ListArgs {
    /// Print `{"store": DIR, "buckets": [...]}` on stdout, and nothing else.
    #[arg(long)]
    json: bool,
}

/// Runs `icepick list`.
pub fn run(args: ListArgs) -> anyhow::Result<u8> {
    // Reading creates nothing: a store that does not exist is an empty one, said so.
    let (root, store) = Store::open_existing_default()?;
    let buckets = match &store {
        Some(s) => s.buckets()?,
        None => Vec::new(),
    };
    let mut out = std::io::stdout().lock();
    if args.json {
        let v = serde_json::json!({
            "store": root.to_string(),
            "exists": store.is_some(),
            "buckets": buckets,
        });
        writeln!(out, "{v}")?;
        return Ok(error::OK);
    }
    if store.is_none() {
        writeln!(out, "no crashes recorded (store {} does not exist)", root)?;
        return Ok(error::OK);
    }
    if buckets.is_empty() {
        writeln!(out, "no crashes in {}", root)?;
        return Ok(error::OK);
    }
    writeln!(
        out,
        "{:<12}  {:>5}  {:>5}  {:<8}  {:<19}  {:<19}  TITLE",
        "BUCKET", "COUNT", "HOSTS", "STATUS", "FIRST SEEN", "LAST SEEN"
    )?;
    for b in &buckets {
        let status = match &b.verdict {
            Some(v) => format!(
                "{} ({})",
                serde_json::to_value(b.status)?.as_str().unwrap_or(""),
                printable(v)
            ),
            None => serde_json::to_value(b.status)?
                .as_str()
                .unwrap_or("")
                .to_string(),
        };
        writeln!(
            out,
            "{:<12}  {:>5}  {:>5}  {:<8}  {:<19}  {:<19}  {}",
            b.id,
            b.count,
            b.hosts.len(),
            status,
            short_time(&b.first_seen),
            short_time(&b.last_seen),
            printable(&b.title)
        )?;
        // Which compilers hit it (a fleet runs several).
        if !b.compiler_versions.is_empty() {
            let v: Vec<String> = b.compiler_versions.iter().map(|c| printable(c)).collect();
            writeln!(out, "{:<12}  compilers: {}", "", v.join("; "))?;
        }
    }
    Ok(error::OK)
}

/// Store text (compiler output, paths) for one line of a terminal: control characters
/// (line breaks, escape sequences) become spaces.
pub(crate) fn printable(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

/// `2026-05-01T12:34:56.789Z` → `2026-05-01 12:34:56`.
pub(crate) fn short_time(t: &str) -> String {
    t.get(..19).unwrap_or(t).replacen('T', " ", 1)
}
