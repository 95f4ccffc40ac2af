//! `icepick show BUCKET [--json] [--fetch DIR | --diff OTHER]`: one bucket of the crash
//! store, its occurrences, its case; `--fetch DIR` materialises the case in DIR (from the
//! database of a fleet's store, where a case captured on another machine lives); `--diff`
//! compares two buckets as a unified diff.

use std::io::Write;
use std::path::Path;

use clap::Args;

use super::list::{printable, short_time};
use crate::command::{shell_cd, shell_join};
use crate::error;
use crate::store::{Bucket, Occurrence, Store};

/// Arguments of `icepick show`.
#[derive(Debug, Args)]
pub struct ShowArgs {
    /// The bucket id (as `icepick list` prints it), or an unambiguous prefix of it.
    bucket: String,
    /// Print `{"bucket": …, "occurrences": […], "case_dir": …, "report": …}` on stdout.
    #[arg(long)]
    json: bool,
    /// Write the bucket's case directory into DIR (which must not exist or be empty), from
    /// the store's database or this machine's case directory; nothing is written outside DIR.
    #[arg(long, value_name = "DIR")]
    fetch: Option<std::path::PathBuf>,
    /// Compare with the bucket OTHER: a unified diff of the two buckets' signatures (kind,
    /// message, phase, frames, from their cases) and facts (compilers, machines, status,
    /// verdict). With --json: `{"a": id, "b": id, "diff": text}`.
    #[arg(long, value_name = "OTHER", conflicts_with = "fetch")]
    diff: Option<String>,
}

/// `1 time` → "once", `2` → "2 times".
pub(crate) fn times(n: i64) -> String {
    match n {
        1 => "once".into(),
        2 => "twice".into(),
        n => format!("{n} times"),
    }
}

/// "1 machine", "2 machines".
pub(crate) fn count(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// Runs `icepick show`.
pub fn run(args: ShowArgs) -> anyhow::Result<u8> {
    let (root, store) = Store::open_existing_default()?;
    let Some(store) = store else {
        eprintln!(
            "icepick: error: no bucket `{}`: the crash store {} does not exist (no crash \
             recorded yet; ICEPICK_STORE names another)",
            args.bucket, root
        );
        return Ok(error::USAGE);
    };
    let Some(bucket) = store.bucket(&args.bucket)? else {
        eprintln!(
            "icepick: error: no bucket `{}` in the crash store {} (`icepick list` shows the buckets)",
            args.bucket,
            store.location()
        );
        return Ok(error::USAGE);
    };
    if let Some(other) = &args.diff {
        let Some(other) = store.bucket(other)? else {
            eprintln!(
                "icepick: error: no bucket `{other}` in the crash store {} (`icepick list` shows the buckets)",
                store.location()
            );
            return Ok(error::USAGE);
        };
        return print_diff(&store, &bucket, &other, args.json);
    }
    let occurrences = store.occurrences(&bucket.id)?;
    let fetched = match &args.fetch {
        Some(dir) => {
            if !fetch(&store, &bucket, dir, args.json)? {
                return Ok(error::USAGE);
            }
            Some(dir.clone())
        }
        None => None,
    };
    let report = bucket
        .case_dir
        .as_deref()
        .map(|d| Path::new(d).join("report.md"))
        .filter(|p| p.is_file());
    let mut out = crate::cli::term::stdout();
    if args.json {
        let v = serde_json::json!({
            "store": store.location().to_string(),
            "fetched": fetched.as_ref().map(|d| d.to_string_lossy().into_owned()),
            "bucket": bucket,
            "occurrences": occurrences,
            "case_dir": bucket.case_dir,
            "report": report.as_ref().map(|p| p.to_string_lossy().into_owned()),
        });
        writeln!(out, "{v}")?;
        return Ok(error::OK);
    }
    print_bucket(&mut out, &bucket, report.as_deref())?;
    print_occurrences(&mut out, &occurrences)?;
    Ok(error::OK)
}

/// `--fetch DIR`: the bucket's stored case written to `DIR`; false (with the error said)
/// when the bucket has none.
fn fetch(store: &Store, bucket: &Bucket, dir: &Path, json: bool) -> anyhow::Result<bool> {
    if !store.fetch_case(bucket, dir)? {
        eprintln!(
            "icepick: error: bucket {} has no case yet (`icepick triage --pending` captures one)",
            bucket.id
        );
        return Ok(false);
    }
    if !json {
        eprintln!(
            "icepick: case of bucket {} written to {}",
            bucket.id,
            dir.display()
        );
    }
    Ok(true)
}

/// The bucket's lines: identity, status, verdict, where it was seen, its case and report,
/// and what to run next when nothing triaged it yet.
fn print_bucket(
    out: &mut impl Write,
    bucket: &Bucket,
    report: Option<&Path>,
) -> anyhow::Result<()> {
    writeln!(
        out,
        "bucket:     {} (coarse {})",
        bucket.id, bucket.coarse_id
    )?;
    writeln!(out, "title:      {}", printable(&bucket.title))?;
    writeln!(out, "kind:       {}", printable(&bucket.kind))?;
    if !bucket.related.is_empty() {
        let ids: Vec<String> = bucket.related.iter().map(|id| printable(id)).collect();
        writeln!(
            out,
            "related:    {} (the same kind, message and top frame)",
            ids.join(", ")
        )?;
    }
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
        "seen:       {} on {}, first {}, last {}",
        times(bucket.count),
        count(bucket.hosts.len(), "machine", "machines"),
        short_time(&bucket.first_seen),
        short_time(&bucket.last_seen)
    )?;
    for c in &bucket.compiler_versions {
        writeln!(out, "compiler:   {}", printable(c))?;
    }
    if let Some(owner) = &bucket.lease_owner {
        writeln!(
            out,
            "worker:     {} (lease until {})",
            printable(owner),
            short_time(bucket.lease_until.as_deref().unwrap_or(""))
        )?;
    }
    if bucket.archived {
        writeln!(
            out,
            "archived:   the case is in the store (icepick show {} --fetch DIR)",
            bucket.id
        )?;
    }
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
    if let Some(r) = report {
        writeln!(out, "report:     {}", r.display())?;
    }
    // Not triaged yet: say what does it.
    if status.as_str() == Some("new") && bucket.lease_owner.is_none() {
        writeln!(
            out,
            "next:       icepick triage --pending  (captures, reduces, classifies and reports \
             every new bucket)"
        )?;
    }
    Ok(())
}

/// Each occurrence: when, who, where, and the command to paste into a shell.
fn print_occurrences(out: &mut impl Write, occurrences: &[Occurrence]) -> anyhow::Result<()> {
    writeln!(out, "occurrences:")?;
    for o in occurrences {
        writeln!(
            out,
            "  {}  {}{}  {}  {}",
            short_time(&o.time),
            o.user
                .as_deref()
                .map(|u| format!("{}@", printable(u)))
                .unwrap_or_default(),
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
    Ok(())
}

/// `show A --diff B`: the two buckets side by side as a unified diff.
fn print_diff(store: &Store, a: &Bucket, b: &Bucket, json: bool) -> anyhow::Result<u8> {
    let cwd = std::env::current_dir()?;
    let (ta, tb) = (comparable(store, a, &cwd), comparable(store, b, &cwd));
    let diff = similar::TextDiff::from_lines(&ta, &tb)
        .unified_diff()
        .context_radius(20)
        .header(&format!("bucket {}", a.id), &format!("bucket {}", b.id))
        .to_string();
    let mut out = crate::cli::term::stdout();
    if json {
        let v = serde_json::json!({"a": a.id, "b": b.id, "diff": diff});
        writeln!(out, "{v}")?;
    } else if diff.is_empty() {
        writeln!(out, "buckets {} and {} compare equal", a.id, b.id)?;
    } else {
        write!(out, "{diff}")?;
    }
    Ok(error::OK)
}

/// What is compared of a bucket, one fact a line: the signature from its case (the frames
/// the bucket id hashes), then what the store knows of it.
fn comparable(store: &Store, b: &Bucket, cwd: &Path) -> String {
    let mut t = String::new();
    let mut line = |k: &str, v: &str| {
        let l = format!("{k:<10} {}", printable(v));
        t.push_str(l.trim_end());
        t.push('\n');
    };
    line("title:", &b.title);
    line("kind:", &b.kind);
    line("coarse:", &b.coarse_id);
    let case = store
        .case_text(b, "case.json", cwd)
        .and_then(|j| serde_json::from_str::<serde_json::Value>(&j).ok());
    match case.as_ref().map(|c| &c["signature"]) {
        Some(sig) if sig.is_object() => {
            let field = |k: &str| sig[k].as_str().unwrap_or("").to_string();
            line("message:", &field("message"));
            line("phase:", &field("phase"));
            for f in sig["frames"].as_array().into_iter().flatten() {
                line("frame:", f.as_str().unwrap_or(""));
            }
        }
        _ => line("frames:", "(no case on this machine or in the store)"),
    }
    for c in &b.compiler_versions {
        line("compiler:", c);
    }
    line("machines:", &b.hosts.join(", "));
    line("status:", b.status.as_str());
    line(
        "verdict:",
        b.verdict.as_deref().unwrap_or("(not classified)"),
    );
    t
}
