use std::collections::BTreeSet;
use std::path::Path;

use super::*;

/// A message as a hostile (or merely C++) compiler might print it: closes the cell and the
/// `<pre>`, opens a script and an image with a handler, breaks out of a quoted attribute
/// both ways, and carries a ready-made character reference.
const HOSTILE: &str = "</td></pre><script>alert(\"x\")</script><img src=x onerror='alert(1)'> \
                       \" onmouseover=\"alert(2) ' & &amp; Holder<int>::~Holder()";

fn bucket(id: &str, title: &str) -> Bucket {
    Bucket {
        id: id.into(),
        coarse_id: "c0ffee000000".into(),
        title: title.into(),
        kind: "segfault".into(),
        count: 1,
        first_seen: "2026-05-01T12:34:56.789Z".into(),
        last_seen: "2026-05-02T08:00:00.000Z".into(),
        status: Status::New,
        status_detail: None,
        verdict: None,
        case_dir: None,
        capture_error: None,
        hosts: vec!["builder-1".into()],
        compiler_versions: Vec::new(),
        archived: false,
        lease_owner: None,
        lease_until: None,
        related: Vec::new(),
    }
}

fn occurrence(bucket: &str, n: i64, command: &[&str]) -> Occurrence {
    Occurrence {
        id: n,
        bucket: bucket.into(),
        recorded: crate::store::NewOccurrence {
            time: format!("2026-05-01T12:{:02}:00.000Z", n % 60),
            host: "builder-1".into(),
            user: Some("ci".into()),
            cwd: "/build".into(),
            command: command.iter().map(|s| s.to_string()).collect(),
            source: Some("src/a.cpp".into()),
            compiler: "/usr/bin/clang++-16".into(),
            compiler_version: Some("Debian clang version 16.0.6".into()),
            exit_code: Some(1),
            origin: "wrap".into(),
        },
        case_dir: None,
    }
}

fn hostile_entry() -> Entry {
    let mut b = bucket("49724a2ef4a4", &format!("clang crash: {HOSTILE}"));
    b.status = Status::Failed;
    b.status_detail = Some(HOSTILE.into());
    b.verdict = Some(HOSTILE.into());
    b.case_dir = Some(format!("/store/cases/{HOSTILE}"));
    b.count = 1;
    let mut o = occurrence(
        &b.id,
        1,
        &["clang++-16", "-DX=<a&b>", HOSTILE, "-c", "x.cpp"],
    );
    o.host = HOSTILE.into();
    o.cwd = HOSTILE.into();
    o.source = Some(HOSTILE.into());
    o.compiler = HOSTILE.into();
    o.compiler_version = Some(HOSTILE.into());
    o.origin = HOSTILE.into();
    Entry {
        bucket: b,
        occurrences: vec![o],
        report: Some(format!("# {HOSTILE}\n\n```\n{HOSTILE}\n```\n")),
        // A case's picture is a file anyone who can write the case can replace.
        reduction_svg: Some(format!(
            "<svg xmlns=\"http://www.w3.org/2000/svg\"><script>alert(1)</script><text>{HOSTILE}</text></svg>"
        )),
    }
}

fn site(entries: &[Entry]) -> Vec<Page> {
    render(
        Path::new("/store"),
        "2026-05-02T09:00:00.000Z",
        Path::new("/cwd"),
        entries,
    )
}

fn page<'a>(pages: &'a [Page], path: &str) -> &'a str {
    &pages
        .iter()
        .find(|p| p.path == path)
        .unwrap_or_else(|| panic!("no page {path}"))
        .content
}

/// The names of every tag in an HTML text (`<x`, `</x`, `<!x`), lowercased.
fn tags(html: &str) -> Vec<String> {
    let re = regex::Regex::new(r"<[/!]?([A-Za-z][A-Za-z0-9]*)").unwrap();
    re.captures_iter(html)
        .map(|c| c[1].to_ascii_lowercase())
        .collect()
}

#[test]
fn escape_replaces_every_markup_character_of_a_hostile_message() {
    assert_eq!(
        escape("</pre><script>alert(\"x&y\")</script> it's"),
        "&lt;/pre&gt;&lt;script&gt;alert(&quot;x&amp;y&quot;)&lt;/script&gt; it&#39;s"
    );
    // Already-escaped text is escaped again: it is shown as written, not decoded.
    assert_eq!(escape("&amp;"), "&amp;amp;");
    assert_eq!(escape("plain text ünïcode"), "plain text ünïcode");
    let e = escape(HOSTILE);
    for c in ['<', '>', '"', '\''] {
        assert!(!e.contains(c), "{c} survives in {e}");
    }
}

#[test]
fn hostile_store_content_cannot_add_markup_to_any_page() {
    let pages = site(&[hostile_entry()]);
    let allowed: BTreeSet<&str> = [
        "doctype", "html", "head", "meta", "title", "style", "body", "h1", "h2", "h3", "p", "a",
        "code", "pre", "table", "thead", "tbody", "tr", "th", "td", "br", "small", "span",
        "section",
        "img", // the pictures: a sparkline drawn by icepick, the case's as an image
        "svg", "rect", "polyline",
    ]
    .into_iter()
    .collect();
    for p in pages.iter().filter(|p| p.path.ends_with(".html")) {
        let html = &p.content;
        for t in tags(html) {
            assert!(allowed.contains(t.as_str()), "{}: tag <{t}>", p.path);
        }
        // Every cell and block that is opened is closed by the page, not by the message.
        for t in ["td", "tr", "pre", "table", "a", "section", "h1", "h3"] {
            let open_and_close = tags(html).iter().filter(|x| *x == t).count();
            let close = html.matches(&format!("</{t}>")).count();
            assert_eq!(open_and_close, close * 2, "{}: <{t}> opened/closed", p.path);
        }
        assert!(!html.contains("onerror='"), "{}", p.path);
        assert!(!html.contains("<script"), "{}", p.path);
        assert!(!html.contains("onmouseover=\""), "{}", p.path);
        assert!(
            html.contains("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;"),
            "{}",
            p.path
        );
        assert!(html.contains("Holder&lt;int&gt;::~Holder()"), "{}", p.path);
        assert!(html.contains("&amp; &amp;amp;"), "{}", p.path);
    }
    // The case's picture is there, as an image of a data: URL (which runs no script).
    let bucket = page(&pages, "buckets/49724a2ef4a4.html");
    assert_eq!(
        bucket
            .matches("<img class=\"reduction\" alt=\"the reduction over time")
            .count(),
        1
    );
    assert!(bucket.contains("src=\"data:image/svg+xml;base64,"));
    let index = page(&pages, "index.html");
    assert_eq!(index.matches("<tr class=\"bucket\"").count(), 1);
    assert!(index.contains("-DX=&lt;a&amp;b&gt;"), "{index}");
    // The case link is a percent-encoded URL: no quote or space can end the attribute.
    let href = regex::Regex::new(r#"class="case-dir" href="([^"]*)""#)
        .unwrap()
        .captures(index)
        .expect("a case link")[1]
        .to_string();
    // `/` in the name is a path separator and stays one.
    assert!(
        href.starts_with("file:///store/cases/%3C/td%3E%3C/pre%3E%3Cscript%3E"),
        "{href}"
    );
    assert!(!href.contains(['<', '>', '\'', ' ', '&']), "{href}");
    // The copy of the report is the report, unchanged.
    assert_eq!(
        page(&pages, "buckets/49724a2ef4a4.md"),
        hostile_entry().report.unwrap()
    );
}

#[test]
fn file_urls_are_percent_encoded() {
    assert_eq!(
        file_url(Path::new("/tmp/a b/\"x\"#?%<>/ü")),
        "file:///tmp/a%20b/%22x%22%23%3F%25%3C%3E/%C3%BC"
    );
    assert_eq!(
        file_url(Path::new("/s/cases/49724a2ef4a4-1.case")),
        "file:///s/cases/49724a2ef4a4-1.case"
    );
}

#[test]
fn bucket_file_names_stay_inside_buckets_and_do_not_collide() {
    assert_eq!(file_name("49724a2ef4a4"), "49724a2ef4a4");
    assert_eq!(file_name("../evil"), "x2e2e2f6576696c");
    assert_eq!(file_name(""), "x");
    // A safe id that starts with `x` is encoded too, so it cannot equal an encoded one.
    assert_eq!(file_name("x2e"), "x783265");
    assert_ne!(file_name("x2e"), file_name("."));
}

#[test]
fn every_relative_link_leads_to_a_page_or_an_anchor_of_the_dashboard() {
    let mut other = Entry {
        bucket: bucket("28b3c96ff43d", "clang crash: illegal instruction"),
        occurrences: vec![occurrence("28b3c96ff43d", 1, &["clang", "-c", "a.c"])],
        report: None,
        reduction_svg: None,
    };
    other.bucket.capture_error = Some("preprocessing failed".into());
    let pages = site(&[hostile_entry(), other]);
    let paths: BTreeSet<&str> = pages.iter().map(|p| p.path.as_str()).collect();
    assert_eq!(
        paths,
        [
            "index.html",
            "buckets/49724a2ef4a4.html",
            "buckets/49724a2ef4a4.md",
            "buckets/28b3c96ff43d.html"
        ]
        .into_iter()
        .collect()
    );
    let href = regex::Regex::new(r#"href="([^"]*)""#).unwrap();
    let id = regex::Regex::new(r#"id="([^"]*)""#).unwrap();
    let mut checked = 0;
    for p in pages.iter().filter(|p| p.path.ends_with(".html")) {
        let base = Path::new(&p.path).parent().unwrap();
        for c in href.captures_iter(&p.content) {
            let link = &c[1];
            if link.starts_with("file://") {
                continue;
            }
            let (file, anchor) = link.split_once('#').unwrap_or((link, ""));
            let target = if file.is_empty() {
                p.path.clone()
            } else {
                // `..` only ever climbs out of `buckets/`.
                let joined = base.join(file);
                let s = joined.to_string_lossy().replace("buckets/../", "");
                s
            };
            let target_page = page(&pages, &target);
            if !anchor.is_empty() {
                assert!(
                    id.captures_iter(target_page).any(|i| &i[1] == anchor),
                    "{}: #{anchor} not in {target}",
                    p.path
                );
            }
            checked += 1;
        }
    }
    assert!(checked >= 10, "{checked} links");
    let index = page(&pages, "index.html");
    // No report: no report links, and the reason there is no case.
    let row = index
        .lines()
        .find(|l| l.contains("id=\"bucket-28b3c96ff43d\""))
        .unwrap();
    assert!(!row.contains("report"), "{row}");
    assert!(row.contains("preprocessing failed"), "{row}");
    assert!(row.contains("not classified"), "{row}");
    assert!(row.contains("status-new"), "{row}");
}

#[test]
fn index_lists_the_newest_occurrences_and_the_bucket_page_all() {
    let mut e = Entry {
        bucket: bucket("49724a2ef4a4", "clang crash"),
        occurrences: (1..=25)
            .map(|n| occurrence("49724a2ef4a4", n, &["clang", &format!("n{n}.c")]))
            .collect(),
        report: None,
        reduction_svg: None,
    };
    e.bucket.count = 25;
    let pages = site(&[e]);
    let index = page(&pages, "index.html");
    assert_eq!(
        index.matches("<tr class=\"occurrence\"").count(),
        INDEX_OCCURRENCES
    );
    assert!(index.contains("n25.c"));
    assert!(
        !index.contains("n5.c"),
        "the oldest are left to the bucket page"
    );
    assert!(index.contains("5 earlier occurrences"));
    let newest = index.find("n25.c").unwrap();
    assert!(newest < index.find("n24.c").unwrap(), "newest first");
    let bucket_page = page(&pages, "buckets/49724a2ef4a4.html");
    assert_eq!(bucket_page.matches("<tr class=\"occurrence\"").count(), 25);
    assert!(bucket_page.contains("No report yet"));
}

#[test]
fn an_empty_store_renders_an_empty_table() {
    let pages = site(&[]);
    assert_eq!(pages.len(), 1);
    let index = page(&pages, "index.html");
    assert!(index.contains("No crashes recorded."));
    assert!(!index.contains("<tr class=\"bucket\""));
}

#[test]
fn redacted_pages_name_no_store_host_user_or_home() {
    let mut b = bucket(
        "49724a2ef4a4",
        "clang crash: in /home/alice/src/a.cpp on pb",
    );
    b.case_dir = Some("/home/alice/.local/share/icepick/cases/49724a2ef4a4".into());
    let mut o = occurrence(&b.id, 1, &["clang++-16", "-I/home/bob/inc", "-c", "a.cpp"]);
    o.host = "pb".into();
    o.cwd = "/home/alice/src".into();
    o.case_dir = b.case_dir.clone();
    let entries = vec![Entry {
        bucket: b,
        occurrences: vec![o],
        report: Some("# crash\n\nOriginal command (in `/home/alice/src`) on pb\n".into()),
        reduction_svg: None,
    }];
    let store = Path::new("/home/alice/.local/share/icepick");
    let r = redactions_of(store, &entries);
    let pages = render_redacted(
        REDACTED_STORE,
        "2026-05-02T09:00:00.000Z",
        &redacted(&entries, &r),
    );
    for p in &pages {
        for gone in [
            "/home/alice",
            "alice",
            "bob",
            ".local/share",
            "pb",
            "file://",
        ] {
            assert!(
                !p.content.contains(gone),
                "{gone} in {}:\n{}",
                p.path,
                p.content
            );
        }
    }
    let index = page(&pages, "index.html");
    assert!(index.contains("Store <code>STORE</code>"), "{index}");
    // Without redaction all of it is there (so the test can fail).
    let plain = render(store, "2026-05-02T09:00:00.000Z", Path::new("/"), &entries);
    let index = page(&plain, "index.html");
    assert!(index.contains("/home/alice/.local/share/icepick") && index.contains(">pb<"));
}
