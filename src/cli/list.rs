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
    let mut out = crate::cli::term::stdout();
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
    print_table(&mut out, &buckets)?;
    Ok(error::OK)
}

/// The buckets as a table, each column as wide as its widest cell (a long status such as
/// "triaged (host-fault)" or a big count keeps the columns after it aligned), the title last
/// and the compilers that hit each bucket under it.
fn print_table(out: &mut impl Write, buckets: &[crate::store::Bucket]) -> anyhow::Result<()> {
    let mut rows = Vec::with_capacity(buckets.len());
    for b in buckets {
        let status = serde_json::to_value(b.status)?
            .as_str()
            .unwrap_or("")
            .to_string();
        let status = match &b.verdict {
            Some(v) => format!("{status} ({})", printable(v)),
            None => status,
        };
        rows.push([
            printable(&b.id),
            b.count.to_string(),
            b.hosts.len().to_string(),
            status,
            short_time(&b.first_seen),
            short_time(&b.last_seen),
        ]);
    }
    let header = [
        "BUCKET",
        "COUNT",
        "HOSTS",
        "STATUS",
        "FIRST SEEN",
        "LAST SEEN",
    ]
    .map(String::from);
    let mut w = header.clone().map(|h| h.chars().count());
    for r in &rows {
        for (w, cell) in w.iter_mut().zip(r) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |r: &[String; 6], title: &str| {
        format!(
            "{:<w0$}  {:>w1$}  {:>w2$}  {:<w3$}  {:<w4$}  {:<w5$}  {title}",
            r[0],
            r[1],
            r[2],
            r[3],
            r[4],
            r[5],
            w0 = w[0],
            w1 = w[1],
            w2 = w[2],
            w3 = w[3],
            w4 = w[4],
            w5 = w[5],
        )
    };
    writeln!(out, "{}", line(&header, "TITLE"))?;
    for (b, r) in buckets.iter().zip(&rows) {
        writeln!(out, "{}", line(r, &printable(&b.title)))?;
        // Which compilers hit it (a fleet runs several).
        if !b.compiler_versions.is_empty() {
            let v: Vec<String> = b.compiler_versions.iter().map(|c| printable(c)).collect();
            writeln!(out, "{:<w0$}  compilers: {}", "", v.join("; "), w0 = w[0])?;
        }
        // Near-duplicates: the same crash site reached another way.
        if !b.related.is_empty() {
            let r: Vec<String> = b.related.iter().map(|id| printable(id)).collect();
            writeln!(
                out,
                "{:<w0$}  related (same kind, message and top frame): {}",
                "",
                r.join(", "),
                w0 = w[0]
            )?;
        }
    }
    Ok(())
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
