//! `icepick dashboard --out DIR [--store DIR]`: the crash store as static HTML pages
//! ([`crate::dashboard`] renders them; this reads the store and writes the files).

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::Context;
use clap::Args;

use crate::case::write_atomic;
use crate::dashboard::{self, Entry};
use crate::error;
use crate::store::{self, Store};

/// Arguments of `icepick dashboard`.
#[derive(Debug, Args)]
pub struct DashboardArgs {
    /// Directory to write `index.html` and `buckets/` into; created if missing, and the pages
    /// of an earlier dashboard there are replaced.
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
    /// Pages to publish: remove the store path, and the host names, users and home
    /// directories of this machine, of every occurrence and of every case, from everything
    /// shown; no links to case directories.
    #[arg(long)]
    redact: bool,
}

/// Runs `icepick dashboard`.
pub fn run(args: DashboardArgs) -> anyhow::Result<u8> {
    let cwd = std::env::current_dir().context("reading the current directory")?;
    // --store (global) or ICEPICK_STORE: a directory or a fleet's PostgreSQL database.
    let loc = match store::default_location()? {
        store::Location::Dir(d) => store::Location::Dir(super::absolutize(&cwd, &d)),
        l => l,
    };
    // A dashboard of a store that does not exist is a mistake in the path, not an empty
    // page; and reading creates nothing.
    let store = Store::open_existing_at(&loc)?;
    let Some(store) = store else {
        eprintln!(
            "icepick: error: no crash store in {loc} (no {}); `icepick wrap` and `icepick \
             scan-log` create it with the first crash, --store or ICEPICK_STORE name another",
            match loc {
                store::Location::Dir(_) => store::DB_FILE,
                store::Location::Postgres(_) => "icepick tables",
            }
        );
        return Ok(error::USAGE);
    };
    // Pages show the store as its directory, or its URL without the password.
    let root = match &loc {
        store::Location::Dir(d) => d.clone(),
        l => PathBuf::from(l.to_string()),
    };
    let out = super::absolutize(&cwd, &args.out);
    if out.exists() && !out.is_dir() {
        eprintln!(
            "icepick: error: --out {} exists and is not a directory",
            out.display()
        );
        return Ok(error::USAGE);
    }

    let mut entries = Vec::new();
    for bucket in store.buckets()? {
        let occurrences = store.occurrences(&bucket.id)?;
        let report = store.report_text(&bucket, &cwd);
        let reduction_svg = store.case_text(&bucket, crate::report::chart::SVG, &cwd);
        entries.push(Entry {
            bucket,
            occurrences,
            report,
            reduction_svg,
        });
    }
    let pages = if args.redact {
        let r = redactions(&root, &cwd, &entries);
        let entries = dashboard::redacted(&entries, &r);
        dashboard::render_redacted(dashboard::REDACTED_STORE, &store::now_utc(), &entries)
    } else {
        dashboard::render(&root, &store::now_utc(), &cwd, &entries)
    };

    let buckets_dir = out.join("buckets");
    std::fs::create_dir_all(&buckets_dir)
        .with_context(|| format!("creating {}", buckets_dir.display()))?;
    // Each file appears complete or not at all, and index.html comes last: a reader of DIR
    // sees the old dashboard or the new one, never an index linking to missing pages.
    for p in &pages {
        write_atomic(&out.join(&p.path), p.content.as_bytes()).context("writing the dashboard")?;
    }
    let occurrences: usize = entries.iter().map(|e| e.occurrences.len()).sum();
    writeln!(
        crate::cli::term::stdout(),
        "dashboard: {} ({} buckets, {occurrences} occurrences)",
        out.join("index.html").display(),
        entries.len(),
    )?;
    Ok(error::OK)
}

/// What `--redact` hides: this machine's names, the store's path and the names of every
/// occurrence, and those of every case a bucket has.
fn redactions(root: &Path, cwd: &Path, entries: &[Entry]) -> crate::report::Redactions {
    let mut r = crate::report::Redactions::of_this_machine();
    r.merge(&dashboard::redactions_of(root, entries));
    for dir in entries.iter().filter_map(|e| e.bucket.case_dir.as_deref()) {
        let case = crate::case::fileio::read(
            &cwd.join(dir),
            crate::case::CASE_FILE,
            crate::case::fileio::cap::CASE_JSON,
        )
        .ok()
        .flatten()
        .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok());
        if let Some(case) = case {
            r.merge(&crate::report::Redactions::of_case_value(&case));
        }
    }
    r
}
