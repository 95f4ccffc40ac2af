//! The crash store as a static HTML dashboard (`icepick dashboard --out DIR`).
//!
//! Why it exists: `icepick list` and `icepick show` need a shell on the machine that holds the
//! store. A nightly build or a CI job wants to publish what crashed as an artifact that people
//! open in a browser, from disk, with no server and no icepick. So the dashboard is a
//! directory of plain files, self-contained apart from one optional link per bucket to its
//! case directory on this machine:
//!
//! - `index.html`: one table of buckets (id, count, occurrences over time as a sparkline,
//!   machines, first and last seen, status, verdict, the crash title, the compilers) and, per
//!   bucket, its most recent occurrences;
//! - `buckets/<id>.html`: one bucket: its facts, every occurrence, the reduction over time
//!   (the case's `reduction.svg`, as an image) and its `report.md` inside `<pre>`;
//! - `buckets/<id>.md`: a copy of the report, byte for byte, to paste into an issue.
//!
//! Links between these files are relative, so the directory can be moved or archived; the
//! case directory is a `file://` URL (absolute, percent-encoded), except for a case kept in
//! the database (a fleet's PostgreSQL store), whose directory is another machine's: the page
//! says how to fetch it instead. There is no JavaScript.
//!
//! Rendering is pure: [`render`] takes the store's rows and the reports' text and returns the
//! files as relative paths and contents; the CLI reads the store and writes the files
//! atomically. Everything that comes from the store (titles, commands, paths, host names,
//! reports) is compiler or build output and may contain any of `<>&"'`: it all goes through
//! [`escape`], and a Content-Security-Policy that allows no script backs that up.
//!
//! Pages meant to be published (`icepick dashboard --redact`) go through [`redacted`] first:
//! the store path, host names, users and home directories of this machine, of every
//! occurrence and of every case are removed from everything shown, and no page links to a
//! case directory on this machine.

use std::fmt::Write;
use std::path::Path;

use crate::command::shell_join;
use crate::report::{redact, Redactions};
use crate::store::{Bucket, Occurrence, Status};

pub mod charts;

/// Occurrences listed per bucket on `index.html` (the most recent ones; the bucket page lists
/// all of them): a build that crashed a thousand times must not bury the table.
pub const INDEX_OCCURRENCES: usize = 20;

/// Compilers named per bucket in the table before "+N more".
const TABLE_COMPILERS: usize = 3;

/// One bucket with what its pages show.
#[derive(Debug, Clone)]
pub struct Entry {
    pub bucket: Bucket,
    /// The bucket's occurrences, oldest first (as [`crate::store::Store::occurrences`]).
    pub occurrences: Vec<Occurrence>,
    /// The text of the case's `report.md`, if the bucket has a case with a report.
    pub report: Option<String>,
    /// The case's `reduction.svg` ([`crate::report::chart::SVG`]), if it has one.
    pub reduction_svg: Option<String>,
}

/// One file of the dashboard.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Page {
    /// Relative to the output directory, `/`-separated.
    pub path: String,
    pub content: String,
}

/// Renders the whole dashboard: every bucket's pages first, `index.html` last (so a writer
/// that goes in order never publishes an index whose links lead nowhere).
///
/// `store` is the store directory (shown on the page), `generated` the time of rendering
/// (RFC 3339, shown on the page), and `cwd` resolves a relative case directory for its
/// `file://` link.
pub fn render(store: &Path, generated: &str, cwd: &Path, entries: &[Entry]) -> Vec<Page> {
    render_with(&store.to_string_lossy(), generated, Some(cwd), entries)
}

/// [`render`] of entries already [`redacted`], with the store shown as `store` and no links
/// to case directories.
pub fn render_redacted(store: &str, generated: &str, entries: &[Entry]) -> Vec<Page> {
    render_with(store, generated, None, entries)
}

/// The store's label on redacted pages.
pub const REDACTED_STORE: &str = "STORE";

/// `entries` with every string redacted by `r` (a bucket's id and status are kept: the id is
/// a signature hash and names the page).
pub fn redacted(entries: &[Entry], r: &Redactions) -> Vec<Entry> {
    let red = |s: &str| redact(s, r);
    let opt = |s: &Option<String>| s.as_deref().map(red);
    entries
        .iter()
        .map(|e| {
            let b = &e.bucket;
            Entry {
                bucket: Bucket {
                    title: red(&b.title),
                    kind: red(&b.kind),
                    status_detail: opt(&b.status_detail),
                    verdict: opt(&b.verdict),
                    case_dir: opt(&b.case_dir),
                    capture_error: opt(&b.capture_error),
                    hosts: b.hosts.iter().map(|h| red(h)).collect(),
                    compiler_versions: b.compiler_versions.iter().map(|c| red(c)).collect(),
                    lease_owner: opt(&b.lease_owner),
                    ..b.clone()
                },
                occurrences: e
                    .occurrences
                    .iter()
                    .map(|o| Occurrence {
                        recorded: crate::store::NewOccurrence {
                            host: red(&o.host),
                            user: opt(&o.user),
                            cwd: red(&o.cwd),
                            command: o.command.iter().map(|a| red(a)).collect(),
                            source: opt(&o.source),
                            compiler: red(&o.compiler),
                            compiler_version: opt(&o.compiler_version),
                            origin: red(&o.origin),
                            ..o.recorded.clone()
                        },
                        case_dir: opt(&o.case_dir),
                        ..o.clone()
                    })
                    .collect(),
                report: e.report.as_deref().map(red),
                reduction_svg: e.reduction_svg.as_deref().map(red),
            }
        })
        .collect()
}

/// What [`redacted`] must remove for `entries` of the store in `store`: the store path,
/// and every occurrence's host name and the home directories (and users) its strings run
/// through; the caller adds this machine's and each case's own ([`Redactions::of_case`]).
pub fn redactions_of(store: &Path, entries: &[Entry]) -> Redactions {
    let mut r = Redactions::default();
    r.add_path(&store.to_string_lossy(), REDACTED_STORE);
    for e in entries {
        for o in &e.occurrences {
            r.add_host(&o.host);
            for s in [&o.cwd, &o.compiler]
                .into_iter()
                .chain(&o.command)
                .chain(o.case_dir.as_ref())
                .chain(o.source.as_ref())
            {
                r.add_homes_in_text(s);
            }
        }
        for s in e.bucket.case_dir.iter().chain(e.report.as_ref()) {
            r.add_homes_in_text(s);
        }
    }
    r
}

fn render_with(store: &str, generated: &str, cwd: Option<&Path>, entries: &[Entry]) -> Vec<Page> {
    let mut pages = Vec::with_capacity(entries.len() * 2 + 1);
    for e in entries {
        let name = file_name(&e.bucket.id);
        pages.push(Page {
            path: format!("buckets/{name}.html"),
            content: bucket_page(e, cwd),
        });
        if let Some(report) = &e.report {
            pages.push(Page {
                path: format!("buckets/{name}.md"),
                content: report.clone(),
            });
        }
    }
    pages.push(Page {
        path: "index.html".into(),
        content: index_page(store, generated, cwd, entries),
    });
    pages
}

/// `s` with `&`, `<`, `>`, `"` and `'` replaced by character references: safe in text and in
/// quoted attribute values.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + s.len() / 8);
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A `file://` URL for an absolute path: every byte outside the unreserved set and `/` is
/// percent-encoded, so spaces, `#`, `?`, `%`, quotes and non-UTF-8 bytes survive.
pub fn file_url(path: &Path) -> String {
    use std::os::unix::ffi::OsStrExt;
    let mut url = String::from("file://");
    for &b in path.as_os_str().as_bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'/' | b'-' | b'_' | b'.' | b'~') {
            url.push(b as char);
        } else {
            let _ = write!(url, "%{b:02X}");
        }
    }
    url
}

/// The file name (without extension) for a bucket id: the id itself when it is made of safe
/// characters (a signature id is hex), else `x` and the hex of its bytes, which cannot
/// collide with a safe id of the same text or escape `buckets/`.
pub fn file_name(id: &str) -> String {
    let safe = !id.is_empty()
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    if safe && !id.starts_with('x') {
        return id.to_string();
    }
    let mut s = String::from("x");
    for b in id.bytes() {
        let _ = write!(s, "{b:02x}");
    }
    s
}

fn status_word(s: Status) -> &'static str {
    match s {
        Status::New => "new",
        Status::Triaged => "triaged",
        Status::Failed => "failed",
    }
}

/// `2026-05-01T12:34:56.789Z` → `2026-05-01 12:34:56`.
fn short_time(t: &str) -> String {
    t.get(..19).unwrap_or(t).replacen('T', " ", 1)
}

/// How many machines (distinct host names) the occurrences come from: a fleet's store
/// shows whether a crash is one builder's or everyone's.
fn machines(occ: &[Occurrence]) -> usize {
    occ.iter()
        .map(|o| o.host.as_str())
        .collect::<std::collections::BTreeSet<_>>()
        .len()
}

/// The distinct compilers of the occurrences, newest first: the version line clang printed
/// with the crash when there is one, else the compiler path.
fn compilers(occ: &[Occurrence]) -> Vec<String> {
    let mut seen: Vec<String> = Vec::new();
    for o in occ.iter().rev() {
        let c = match &o.compiler_version {
            Some(v) => format!("{v} ({})", o.compiler),
            None => o.compiler.clone(),
        };
        if !seen.contains(&c) {
            seen.push(c);
        }
    }
    seen
}

/// The `file://` link to a bucket's case directory; none on redacted pages (`cwd` is
/// `None`), which are for people without this machine's files, and none for a case kept in
/// the database (a fleet's store: the directory is the capturing machine's, see
/// [`fetch_hint`]).
fn case_link(b: &Bucket, cwd: Option<&Path>) -> Option<String> {
    if b.archived {
        return None;
    }
    let dir = Path::new(b.case_dir.as_deref()?);
    Some(file_url(&cwd?.join(dir)))
}

/// How to get a case kept in the database onto this machine.
fn fetch_hint(b: &Bucket) -> String {
    format!(
        "<span class=\"case archived\">in the store: <code>icepick show {} --fetch DIR</code></span>",
        escape(&b.id)
    )
}

const STYLE: &str = "
body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5em; color: #222; }
table { border-collapse: collapse; margin: .5em 0 1.5em; }
th, td { border: 1px solid #ccc; padding: .25em .5em; text-align: left; vertical-align: top; }
th { background: #f0f0f0; }
td.count { text-align: right; }
td.id, td.first-seen, td.last-seen, td.time, td.verdict, td.status { white-space: nowrap; }
code, pre, td.command { font-family: ui-monospace, monospace; font-size: 13px; }
td.command { white-space: pre-wrap; word-break: break-all; max-width: 60em; }
pre { background: #f7f7f7; border: 1px solid #ddd; padding: .75em; white-space: pre-wrap; }
.status-new { background: #fff3cd; } .status-triaged { background: #d4edda; }
.status-failed { background: #f8d7da; }
.meta, .none, small { color: #666; }
";

/// The document head, through `<body>`; `title` is escaped here.
fn head(out: &mut String, title: &str) {
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\">\n\
         <meta name=\"referrer\" content=\"no-referrer\">\n\
         <title>{}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n",
        escape(title)
    );
}

fn index_page(store: &str, generated: &str, cwd: Option<&Path>, entries: &[Entry]) -> String {
    let total: usize = entries.iter().map(|e| e.occurrences.len()).sum();
    let mut out = String::new();
    head(
        &mut out,
        &format!("icepick: {} crash buckets", entries.len()),
    );
    let _ = write!(
        out,
        "<h1>Compiler crashes</h1>\n<p class=\"meta\">Store <code>{}</code>, generated {} UTC: \
         {} buckets, {} occurrences.</p>\n",
        escape(store),
        escape(&short_time(generated)),
        entries.len(),
        total
    );
    out.push_str(
        "<table id=\"buckets\">\n<thead><tr><th>bucket</th><th>count</th><th>over time</th><th>machines</th><th>first seen</th>\
         <th>last seen</th><th>status</th><th>verdict</th><th>crash</th><th>compiler</th>\
         <th>case</th></tr></thead>\n<tbody>\n",
    );
    if entries.is_empty() {
        out.push_str("<tr><td colspan=\"11\" class=\"none\">No crashes recorded.</td></tr>\n");
    }
    let all: Vec<&[Occurrence]> = entries.iter().map(|e| e.occurrences.as_slice()).collect();
    let span = charts::span(&all, generated);
    for e in entries {
        bucket_row(&mut out, e, cwd, span);
    }
    out.push_str("</tbody>\n</table>\n");
    if !entries.is_empty() {
        out.push_str("<h2>Occurrences</h2>\n");
    }
    for e in entries {
        let b = &e.bucket;
        let name = file_name(&b.id);
        let _ = writeln!(
            out,
            "<section class=\"occurrences\" id=\"occ-{name}\">\n<h3><a href=\"buckets/{name}.html\">\
             <code>{}</code></a> {}</h3>",
            escape(&b.id),
            escape(&b.title)
        );
        occurrence_table(&mut out, &e.occurrences, INDEX_OCCURRENCES);
        let hidden = e.occurrences.len().saturating_sub(INDEX_OCCURRENCES);
        if hidden > 0 {
            let _ = writeln!(
                out,
                "<p class=\"more\">{hidden} earlier occurrences are on \
                 <a href=\"buckets/{name}.html#occurrences\">the bucket's page</a>.</p>"
            );
        }
        out.push_str("</section>\n");
    }
    out.push_str("</body>\n</html>\n");
    out
}

/// The cell of a bucket's sparkline: its occurrences on the page's shared time axis.
fn over_time(e: &Entry, span: Option<(f64, f64)>) -> String {
    let Some(span) = span else {
        return String::new();
    };
    let counts = charts::counts(&e.occurrences, span);
    let label = format!(
        "{} occurrences from {} to {} UTC, in {} spans of {}",
        counts.iter().sum::<u32>(),
        short_time(&crate::store::utc_string(at(span.0))),
        short_time(&crate::store::utc_string(at(span.1))),
        charts::BINS,
        duration_words((span.1 - span.0) / charts::BINS as f64)
    );
    charts::sparkline(&counts, &label).unwrap_or_default()
}

fn at(secs: f64) -> std::time::SystemTime {
    std::time::UNIX_EPOCH + std::time::Duration::from_secs_f64(secs.max(0.0))
}

/// `90.0` → `1.5 min`: the length of a sparkline's span, in words.
fn duration_words(s: f64) -> String {
    match s {
        s if s < 120.0 => format!("{s:.1} s"),
        s if s < 7200.0 => format!("{:.1} min", s / 60.0),
        s if s < 172_800.0 => format!("{:.1} h", s / 3600.0),
        s => format!("{:.1} days", s / 86_400.0),
    }
}

fn bucket_row(out: &mut String, e: &Entry, cwd: Option<&Path>, span: Option<(f64, f64)>) {
    let b = &e.bucket;
    let name = file_name(&b.id);
    let status = status_word(b.status);
    let _ = write!(
        out,
        "<tr class=\"bucket\" id=\"bucket-{name}\">\
         <td class=\"id\"><a href=\"buckets/{name}.html\"><code>{}</code></a></td>\
         <td class=\"count\"><a href=\"#occ-{name}\">{}</a></td>\
         <td class=\"over-time\">{}</td>\
         <td class=\"machines\">{}</td>\
         <td class=\"first-seen\">{}</td><td class=\"last-seen\">{}</td>\
         <td class=\"status status-{status}\"",
        escape(&b.id),
        b.count,
        over_time(e, span),
        machines(&e.occurrences),
        escape(&short_time(&b.first_seen)),
        escape(&short_time(&b.last_seen)),
    );
    if let Some(d) = &b.status_detail {
        let _ = write!(out, " title=\"{}\"", escape(d));
    }
    let _ = write!(
        out,
        ">{status}</td><td class=\"verdict\">{}</td><td class=\"title\">{}</td><td class=\"compiler\">",
        b.verdict
            .as_deref()
            .map_or_else(|| "<span class=\"none\">not classified</span>".into(), escape),
        escape(&b.title)
    );
    let comps = compilers(&e.occurrences);
    for (i, c) in comps.iter().take(TABLE_COMPILERS).enumerate() {
        if i > 0 {
            out.push_str("<br>");
        }
        out.push_str(&escape(c));
    }
    if comps.len() > TABLE_COMPILERS {
        let _ = write!(
            out,
            "<br><small>+{} more</small>",
            comps.len() - TABLE_COMPILERS
        );
    }
    out.push_str("</td><td class=\"links\">");
    if e.report.is_some() {
        let _ = write!(
            out,
            "<a class=\"report\" href=\"buckets/{name}.html#report\">report</a> \
             <a class=\"report-md\" href=\"buckets/{name}.md\">report.md</a> "
        );
    }
    match case_link(b, cwd) {
        Some(url) => {
            let _ = write!(
                out,
                "<a class=\"case-dir\" href=\"{}\">case</a>",
                escape(&url)
            );
        }
        None if b.archived => out.push_str(&fetch_hint(b)),
        None if b.case_dir.is_some() => out.push_str("<span class=\"case\">captured</span>"),
        None => {
            let why = b.capture_error.as_deref().unwrap_or("not captured yet");
            let _ = write!(out, "<span class=\"none\">{}</span>", escape(why));
        }
    }
    out.push_str("</td></tr>\n");
}

/// A table of the newest `limit` occurrences, newest first.
fn occurrence_table(out: &mut String, occ: &[Occurrence], limit: usize) {
    out.push_str(
        "<table class=\"occurrences\">\n<thead><tr><th>time</th><th>host</th><th>source</th>\
         <th>command</th><th>origin</th></tr></thead>\n<tbody>\n",
    );
    for o in occ.iter().rev().take(limit) {
        let host = if o.host.is_empty() { "-" } else { &o.host };
        let _ = writeln!(
            out,
            "<tr class=\"occurrence\"><td class=\"time\">{}</td><td class=\"host\">{}</td>\
             <td class=\"source\">{}</td><td class=\"command\">{}<br><small>in {}</small></td>\
             <td class=\"origin\">{}</td></tr>",
            escape(&short_time(&o.time)),
            escape(host),
            escape(o.source.as_deref().unwrap_or("-")),
            escape(&shell_join(&o.command)),
            escape(&o.cwd),
            escape(&o.origin)
        );
    }
    out.push_str("</tbody>\n</table>\n");
}

/// The page of one bucket: its facts, occurrences, reduction chart and report.
fn bucket_page(e: &Entry, cwd: Option<&Path>) -> String {
    let b = &e.bucket;
    let name = file_name(&b.id);
    let mut out = String::new();
    head(&mut out, &format!("icepick bucket {}: {}", b.id, b.title));
    let _ = write!(
        out,
        "<p><a href=\"../index.html\">all buckets</a></p>\n<h1>{}</h1>\n<table class=\"facts\">\n\
         <tr><th>bucket</th><td class=\"id\"><code>{}</code> (coarse <code>{}</code>)</td></tr>\n\
         <tr><th>kind</th><td class=\"kind\">{}</td></tr>\n\
         <tr><th>count</th><td class=\"count\">{}</td></tr>\n\
         <tr><th>first seen</th><td class=\"first-seen\">{}</td></tr>\n\
         <tr><th>last seen</th><td class=\"last-seen\">{}</td></tr>\n\
         <tr><th>status</th><td class=\"status status-{}\">{}",
        escape(&b.title),
        escape(&b.id),
        escape(&b.coarse_id),
        escape(&b.kind),
        b.count,
        escape(&short_time(&b.first_seen)),
        escape(&short_time(&b.last_seen)),
        status_word(b.status),
        status_word(b.status),
    );
    if let Some(d) = &b.status_detail {
        let _ = write!(out, " <small>({})</small>", escape(d));
    }
    let _ = writeln!(
        out,
        "</td></tr>\n<tr><th>verdict</th><td class=\"verdict\">{}</td></tr>",
        escape(b.verdict.as_deref().unwrap_or("not classified"))
    );
    out.push_str("<tr><th>compilers</th><td class=\"compiler\">");
    for (i, c) in compilers(&e.occurrences).iter().enumerate() {
        if i > 0 {
            out.push_str("<br>");
        }
        out.push_str(&escape(c));
    }
    if !b.related.is_empty() {
        // Near-duplicates: the same kind, message and top frame, other deeper frames.
        out.push_str("</td></tr>\n<tr><th>related</th><td class=\"related\">");
        for (i, id) in b.related.iter().enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            let _ = write!(
                out,
                "<a href=\"{}.html\"><code>{}</code></a>",
                escape(&file_name(id)),
                escape(id)
            );
        }
    }
    out.push_str("</td></tr>\n<tr><th>case</th><td class=\"case\">");
    case_cell(&mut out, b, cwd);
    out.push_str("</td></tr>\n</table>\n");
    let _ = writeln!(
        out,
        "<h2 id=\"occurrences\">Occurrences ({})</h2>",
        e.occurrences.len()
    );
    occurrence_table(&mut out, &e.occurrences, usize::MAX);
    if let Some(svg) = &e.reduction_svg {
        let _ = writeln!(
            out,
            "<h2 id=\"reduction\">Reduction</h2>\n<p>{}</p>",
            charts::image(
                svg,
                "reduction",
                "the reduction over time: candidate sizes by pass, the best so far, and tests"
            )
        );
    }
    out.push_str("<h2 id=\"report\">Report</h2>\n");
    match &e.report {
        Some(r) => {
            let _ = write!(
                out,
                "<p><a class=\"report-md\" href=\"{name}.md\">report.md</a> (Markdown, to paste \
                 into an issue)</p>\n<pre class=\"report\">{}</pre>\n",
                escape(r)
            );
        }
        None => out.push_str(
            "<p class=\"none\">No report yet: the bucket has no case \
             (<code>icepick triage --pending</code> captures and triages it).</p>\n",
        ),
    }
    out.push_str("</body>\n</html>\n");
    out
}

/// The bucket's case cell: how to fetch an archived case, a link to its directory (or its
/// path when it cannot be linked), or why there is none.
fn case_cell(out: &mut String, b: &Bucket, cwd: Option<&Path>) {
    match (&b.case_dir, case_link(b, cwd)) {
        _ if b.archived => out.push_str(&fetch_hint(b)),
        (Some(dir), Some(url)) => {
            let _ = write!(
                out,
                "<a class=\"case-dir\" href=\"{}\"><code>{}</code></a>",
                escape(&url),
                escape(dir)
            );
        }
        (Some(dir), None) => {
            let _ = write!(out, "<code>{}</code>", escape(dir));
        }
        _ => {
            let why = b.capture_error.as_deref().unwrap_or("not captured yet");
            let _ = write!(out, "<span class=\"none\">{}</span>", escape(why));
        }
    }
}

#[cfg(test)]
mod tests;
