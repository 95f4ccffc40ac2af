//! `icepick dashboard` on a real crash store (filled by `icepick wrap` around crashing
//! clang++-16 compiles and `icepick triage --pending`), loaded in a real headless Chromium:
//! what the browser parsed, not what we wrote, is checked, pictures included (the index's
//! sparklines and the bucket page's reduction image, each also run through Chromium's XML
//! parser). The helpers are shared with `store_pg.rs`, which checks a PostgreSQL store's.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use regex::Regex;

use crate::store::{icepick_in, list, CRASH_CPP};
use crate::util::expect_success;

/// A second, different crash: clang's own crash pragma (an illegal instruction in the
/// preprocessor), in a file whose name has every HTML metacharacter, so that the source and
/// the command of its occurrence are hostile text coming from a real build.
const PRAGMA_CRASH: &str = "#pragma clang __debug crash\nint x;\n";
const HOSTILE_NAME: &str = "odd <b>&\"q'.cpp";

/// Chromium from the PATH; the test fails (never skips) without it.
fn chromium() -> PathBuf {
    std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
        .map(|d| d.join("chromium"))
        .find(|p| p.is_file())
        .unwrap_or_else(|| {
            panic!("chromium is not installed: run scripts/setup (it installs Debian's chromium)")
        })
}

/// Runs headless Chromium on `url` with `mode` (`--dump-dom`, `--screenshot=…`), under a
/// timeout, with a fresh profile and none of its background network traffic.
fn run_chromium(mode: &[&str], url: &str) -> Output {
    let profile = tempfile::tempdir().unwrap();
    let o = Command::new("timeout")
        .arg("60")
        .arg(chromium())
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .args(mode)
        .arg(url)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "chromium {mode:?} {url}: {:?}\n{}",
        o.status,
        String::from_utf8_lossy(&o.stderr)
    );
    o
}

pub fn dump_dom(file: &Path) -> String {
    let o = run_chromium(&["--dump-dom"], &url_of(file));
    String::from_utf8(o.stdout).unwrap()
}

/// `file://` URL of an absolute path (percent-encoding what a URL cannot hold).
fn url_of(p: &Path) -> String {
    let mut u = String::from("file://");
    for b in p.to_str().unwrap().bytes() {
        if b.is_ascii_alphanumeric() || b"/-_.~".contains(&b) {
            u.push(b as char);
        } else {
            u.push_str(&format!("%{b:02X}"));
        }
    }
    u
}

/// The path of a `file://` URL.
fn path_of(url: &str) -> PathBuf {
    let s = url.strip_prefix("file://").expect("a file URL");
    let (mut bytes, mut i, b) = (Vec::new(), 0, s.as_bytes());
    while i < b.len() {
        if b[i] == b'%' {
            bytes.push(u8::from_str_radix(&s[i + 1..i + 3], 16).unwrap());
            i += 3;
        } else {
            bytes.push(b[i]);
            i += 1;
        }
    }
    PathBuf::from(String::from_utf8(bytes).unwrap())
}

/// The text of serialized DOM: tags dropped, the references Chromium writes decoded.
fn text(html: &str) -> String {
    Regex::new("<[^>]*>")
        .unwrap()
        .replace_all(html, "")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&nbsp;", "\u{a0}")
        .replace("&amp;", "&")
}

/// The inner HTML of the `<td>` with class `class` in a row.
fn cell<'a>(row: &'a str, class: &str) -> &'a str {
    let re = Regex::new(&format!(r#"<td class="{class}[" ][^>]*>(.*?)</td>"#)).unwrap();
    re.captures(row)
        .unwrap_or_else(|| panic!("no {class} cell in {row}"))
        .get(1)
        .unwrap()
        .as_str()
}

/// Checks `svg` with Chromium's own XML parser: written to a `.svg` file and opened, it must
/// come back as an `<svg>` document, not the `<parsererror>` page Chromium shows for XML
/// that is not well-formed. Returns what Chromium parsed.
pub fn svg_parses_in_chromium(svg: &str, dir: &Path, name: &str) -> String {
    let file = dir.join(format!("{name}.svg"));
    std::fs::write(&file, svg).unwrap();
    let dom = dump_dom(&file);
    assert!(
        dom.trim_start().starts_with("<svg") && !dom.contains("parsererror"),
        "{name}: not well-formed SVG:\n{dom}\n---- from\n{svg}"
    );
    dom
}

/// The sparkline of every bucket row of the index, as Chromium parsed it: `id → <svg>…</svg>`.
pub fn sparklines(index_dom: &str) -> BTreeMap<String, String> {
    let row_re = Regex::new(r#"(?s)<tr class="bucket" id="bucket-([^"]+)">(.*?)</tr>"#).unwrap();
    let svg_re = Regex::new(r#"(?s)^(<svg class="spark".*</svg>)$"#).unwrap();
    row_re
        .captures_iter(index_dom)
        .map(|c| {
            let cell = cell(&c[2], "over-time").to_string();
            let svg = svg_re
                .captures(&cell)
                .unwrap_or_else(|| panic!("no sparkline in {}", &c[2]))[1]
                .to_string();
            (c[1].to_string(), svg)
        })
        .collect()
}

/// Checks the sparklines of an index as Chromium parsed them: one per bucket, named for its
/// count, each well-formed SVG with at least one bar.
pub fn check_sparklines(index_dom: &str, counts: &BTreeMap<String, i64>, dir: &Path) {
    let sparks = sparklines(index_dom);
    assert_eq!(
        sparks.keys().collect::<Vec<_>>(),
        counts.keys().collect::<Vec<_>>()
    );
    for (id, svg) in &sparks {
        assert!(
            svg.contains(&format!("aria-label=\"{} occurrences from ", counts[id])),
            "{svg}"
        );
        let parsed = svg_parses_in_chromium(svg, dir, &format!("spark-{id}"));
        assert!(parsed.contains("<rect"), "a bar: {parsed}");
    }
}

/// The reduction picture of a bucket page as Chromium parsed it: the SVG inside the
/// `data:` URL of `<img class="reduction">`, decoded (coreutils' `base64 -d`).
pub fn reduction_image(bucket_dom: &str) -> Option<Vec<u8>> {
    let re = Regex::new(
        r#"<img class="reduction" alt="[^"]*" src="data:image/svg\+xml;base64,([A-Za-z0-9+/=]+)">"#,
    )
    .unwrap();
    let b64 = re.captures(bucket_dom)?[1].to_string();
    let mut child = Command::new("base64")
        .arg("-d")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write as _;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b64.as_bytes())
        .unwrap();
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success());
    Some(o.stdout)
}

/// A bucket page shows its case's `reduction.svg` (byte for byte) as an image, and the
/// picture is well-formed SVG that Chromium parses, with the chart's words in it.
pub fn check_reduction_image(bucket_dom: &str, case_svg: &[u8], dir: &Path, name: &str) {
    let shown = reduction_image(bucket_dom)
        .unwrap_or_else(|| panic!("no reduction picture on {name}:\n{bucket_dom}"));
    assert_eq!(shown, case_svg, "{name}: the case's reduction.svg");
    let parsed = svg_parses_in_chromium(std::str::from_utf8(&shown).unwrap(), dir, name);
    for want in ["best so far", "bytes (log)", "seconds"] {
        assert!(parsed.contains(want), "{name}: no {want:?} in the picture");
    }
}

fn wrap(store: &Path, dir: &Path, source: &str, object: &str) {
    let o = icepick_in(
        store,
        dir,
        &["wrap", "clang++-16", "-c", source, "-o", object],
    );
    assert_eq!(
        o.status.code(),
        Some(1),
        "clang-16's driver exits 1 on a crash"
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("icepick: crash "), "{err}");
}

#[test]
fn dashboard_of_a_real_store_renders_in_chromium() {
    let tmp = tempfile::tempdir().unwrap();
    let (store, build) = (tmp.path().join("store"), tmp.path().join("build"));
    std::fs::create_dir_all(&build).unwrap();
    std::fs::write(build.join("crash.cpp"), CRASH_CPP).unwrap();
    std::fs::write(build.join(HOSTILE_NAME), PRAGMA_CRASH).unwrap();

    // One bucket seen twice and triaged (status and verdict set by the real pipeline), then
    // one seen once and left new.
    wrap(&store, &build, "crash.cpp", "a.o");
    wrap(&store, &build, "crash.cpp", "b.o");
    let o = icepick_in(
        &store,
        &build,
        &["triage", "--pending", "--jobs", "2", "--json"],
    );
    expect_success(&o);
    wrap(&store, &build, HOSTILE_NAME, "c.o");
    let listed = list(&store);
    let buckets: BTreeMap<String, &serde_json::Value> = listed["buckets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| (b["id"].as_str().unwrap().to_string(), b))
        .collect();
    assert_eq!(buckets.len(), 2, "{listed:#}");
    let twice = buckets
        .values()
        .find(|b| b["count"] == 2)
        .expect("a bucket seen twice");
    let once = buckets
        .values()
        .find(|b| b["count"] == 1)
        .expect("a bucket seen once");
    assert_eq!(twice["status"], "triaged", "{listed:#}");
    assert!(twice["verdict"].is_string(), "{listed:#}");
    assert_eq!(once["status"], "new");
    assert!(once["verdict"].is_null());

    let out = tmp.path().join("dashboard");
    let o = icepick_in(
        &store,
        tmp.path(),
        &["dashboard", "--out", out.to_str().unwrap()],
    );
    expect_success(&o);
    let index = out.join("index.html");
    assert!(String::from_utf8_lossy(&o.stdout).contains(index.to_str().unwrap()));

    let dom = dump_dom(&index);
    let row_re = Regex::new(r#"<tr class="bucket" id="bucket-([^"]+)">(.*?)</tr>"#).unwrap();
    let rows: BTreeMap<String, String> = row_re
        .captures_iter(&dom)
        .map(|c| (c[1].to_string(), c[2].to_string()))
        .collect();
    assert_eq!(
        rows.keys().collect::<Vec<_>>(),
        buckets.keys().collect::<Vec<_>>(),
        "one row per bucket\n{dom}"
    );
    // Occurrences over time: a sparkline per bucket, drawn on one time axis.
    let counts: BTreeMap<String, i64> = buckets
        .iter()
        .map(|(id, b)| (id.clone(), b["count"].as_i64().unwrap()))
        .collect();
    check_sparklines(&dom, &counts, tmp.path());
    let href_re = Regex::new(r#"href="([^"]*)""#).unwrap();
    for (id, row) in &rows {
        let b = buckets[id];
        assert_eq!(text(cell(row, "id")), *id);
        assert_eq!(text(cell(row, "count")), b["count"].to_string(), "{row}");
        assert_eq!(text(cell(row, "status")), b["status"].as_str().unwrap());
        let verdict = b["verdict"].as_str().unwrap_or("not classified");
        assert_eq!(text(cell(row, "verdict")), verdict, "{row}");
        assert_eq!(text(cell(row, "title")), b["title"].as_str().unwrap());
        assert!(
            text(cell(row, "compiler")).contains("clang version 16"),
            "{row}"
        );
        assert_eq!(
            text(cell(row, "first-seen")),
            b["first_seen"].as_str().unwrap()[..19].replace('T', " ")
        );
        assert_eq!(
            text(cell(row, "last-seen")),
            b["last_seen"].as_str().unwrap()[..19].replace('T', " ")
        );
        // Every link works: relative ones inside the dashboard, the case as a file URL.
        let links: Vec<String> = href_re
            .captures_iter(row)
            .map(|c| c[1].replace("&amp;", "&"))
            .collect();
        assert_eq!(
            links.len(),
            5,
            "bucket, count, report, report.md, case: {row}"
        );
        for link in &links {
            let file = link.split('#').next().unwrap();
            if file.is_empty() {
                let anchor = link.trim_start_matches('#');
                assert!(dom.contains(&format!("id=\"{anchor}\"")), "{link}");
            } else if link.starts_with("file://") {
                let case_dir = path_of(link);
                assert_eq!(case_dir.to_str(), b["case_dir"].as_str(), "{link}");
                assert!(case_dir.join("case.json").is_file(), "{link}");
            } else {
                assert!(out.join(file).is_file(), "{link} in {row}");
            }
        }
        // The copy of the report is the case's report.md.
        let md = links.iter().find(|l| l.ends_with(".md")).unwrap();
        let case_dir = Path::new(b["case_dir"].as_str().unwrap());
        assert_eq!(
            std::fs::read(out.join(md)).unwrap(),
            std::fs::read(case_dir.join("report.md")).unwrap()
        );

        // Its occurrences, under the table.
        let section = Regex::new(&format!(
            r#"(?s)<section class="occurrences" id="occ-{id}">(.*?)</section>"#
        ))
        .unwrap()
        .captures(&dom)
        .unwrap_or_else(|| panic!("no occurrences of {id}"))[1]
            .to_string();
        let occ: Vec<&str> = section.split("<tr class=\"occurrence\">").skip(1).collect();
        assert_eq!(occ.len() as i64, b["count"].as_i64().unwrap(), "{section}");
        for o in &occ {
            assert!(!text(cell(o, "host")).is_empty());
            assert!(
                text(cell(o, "command")).starts_with("clang++-16 -c "),
                "{o}"
            );
            assert!(text(cell(o, "command")).contains(build.to_str().unwrap()));
        }
    }

    // The hostile file name is text in the browser's DOM, in the source and command cells,
    // and no markup: no <b> element appeared.
    let hostile = &rows[once["id"].as_str().unwrap()];
    assert!(
        text(cell(hostile, "title")).contains("HandlePragmaDirective"),
        "{hostile}"
    );
    assert!(!dom.contains("<b>"), "{dom}");
    let sources: Vec<String> = Regex::new(r#"<td class="source">(.*?)</td>"#)
        .unwrap()
        .captures_iter(&dom)
        .map(|c| text(&c[1]))
        .collect();
    assert!(sources.iter().any(|s| s == HOSTILE_NAME), "{sources:?}");
    assert!(
        text(&dom).contains("clang++-16 -c 'odd <b>&\"q'\\''.cpp' -o c.o"),
        "{dom}"
    );

    // The bucket's own page: its report, escaped inside <pre>, as the browser sees it.
    let page = out.join(format!("buckets/{}.html", once["id"].as_str().unwrap()));
    let bucket_dom = dump_dom(&page);
    let pre = Regex::new(r#"(?s)<pre class="report">(.*?)</pre>"#)
        .unwrap()
        .captures(&bucket_dom)
        .expect("the report")[1]
        .to_string();
    let case_dir = Path::new(once["case_dir"].as_str().unwrap());
    assert_eq!(
        text(&pre),
        std::fs::read_to_string(case_dir.join("report.md")).unwrap()
    );
    assert!(!bucket_dom.contains("<b>"));
    // The bucket seen once was never triaged: no reduction, no picture. The triaged one
    // shows its case's reduction.svg as an image, as Chromium loads it.
    assert!(!bucket_dom.contains("<img"), "{bucket_dom}");
    let triaged = twice["id"].as_str().unwrap();
    let triaged_dom = dump_dom(&out.join(format!("buckets/{triaged}.html")));
    let case_svg =
        std::fs::read(Path::new(twice["case_dir"].as_str().unwrap()).join("reduction.svg"))
            .expect("the triaged case drew its reduction");
    check_reduction_image(&triaged_dom, &case_svg, tmp.path(), "reduction");
    assert!(triaged_dom.contains("<h2 id=\"reduction\">Reduction</h2>"));

    // It renders: a real PNG of the page.
    let shot = tmp.path().join("dashboard.png");
    run_chromium(
        &[
            "--window-size=1400,900",
            &format!("--screenshot={}", shot.display()),
        ],
        &url_of(&index),
    );
    let png = std::fs::read(&shot).unwrap();
    assert!(
        png.starts_with(b"\x89PNG\r\n\x1a\n") && png.len() > 10_000,
        "{} bytes",
        png.len()
    );
    if let Some(keep) = std::env::var_os("ICEPICK_DASHBOARD_SCREENSHOT") {
        std::fs::copy(&shot, keep).unwrap();
    }

    // Written again over itself: the same pages, no temporary files left behind.
    let o = icepick_in(
        &store,
        tmp.path(),
        &["dashboard", "--out", out.to_str().unwrap()],
    );
    assert_eq!(o.status.code(), Some(0));
    let mut names: Vec<String> = std::fs::read_dir(out.join("buckets"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    let mut want: Vec<String> = buckets
        .keys()
        .flat_map(|id| [format!("{id}.html"), format!("{id}.md")])
        .collect();
    want.sort();
    assert_eq!(names, want);
    assert!(!std::fs::read_dir(&out).unwrap().any(|e| e
        .unwrap()
        .file_name()
        .to_string_lossy()
        .ends_with(".tmp")));
}

#[test]
fn dashboard_bad_input_is_a_usage_error() {
    let tmp = tempfile::tempdir().unwrap();
    let missing = tmp.path().join("no-store");
    let o = icepick_in(
        &missing,
        tmp.path(),
        &["dashboard", "--out", tmp.path().join("d").to_str().unwrap()],
    );
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("no crash store in"), "{err}");
    assert!(!missing.exists(), "a missing store is not created");
    assert!(!tmp.path().join("d").exists(), "nothing is written");

    // A real store (one crash), but --out is a file.
    let store = tmp.path().join("store");
    std::fs::write(tmp.path().join("crash.cpp"), CRASH_CPP).unwrap();
    wrap(&store, tmp.path(), "crash.cpp", "a.o");
    let file = tmp.path().join("crash.cpp");
    let o = icepick_in(
        &missing,
        tmp.path(),
        &[
            "dashboard",
            "--store",
            store.to_str().unwrap(),
            "--out",
            file.to_str().unwrap(),
        ],
    );
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("is not a directory"), "{err}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), CRASH_CPP);
}

/// The same crashes (the same commands in the same build directory, one captured bucket seen
/// twice, one with a hostile file name) recorded in a SQLite store and in a fleet's
/// PostgreSQL store: the two dashboards, as headless Chromium parses them, are the same page
/// but for what must differ: times, the store's name, where the cases live (a directory of
/// this machine's, linked; a case kept in the database, with how to fetch it).
#[test]
fn dashboard_of_a_postgresql_store_renders_as_a_sqlite_one() {
    use crate::store_pg::{database, icepick_at, json_of};
    let tmp = tempfile::tempdir().unwrap();
    let build = tmp.path().join("build");
    std::fs::create_dir_all(&build).unwrap();
    std::fs::write(build.join("crash.cpp"), CRASH_CPP).unwrap();
    std::fs::write(build.join(HOSTILE_NAME), PRAGMA_CRASH).unwrap();
    let sqlite = tmp.path().join("store").to_str().unwrap().to_string();
    let pg = database("dashboard_same");
    let times = Regex::new(r"\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(\.\d+)?Z?").unwrap();
    // The report says how long the capture took.
    let took = Regex::new(r"\b\d+(\.\d+)? m?s\b").unwrap();
    // Where a sparkline's bars fall depends on when each compile ran.
    let spark = Regex::new(r#"(?s)<svg class="spark".*?</svg>"#).unwrap();
    let mut doms = Vec::new();
    for (store, cache) in [(&sqlite, "cache-sqlite"), (&pg, "cache-pg")] {
        let cache = tmp.path().join(cache);
        for (source, object) in [
            ("crash.cpp", "a.o"),
            ("crash.cpp", "b.o"),
            (HOSTILE_NAME, "c.o"),
        ] {
            let o = icepick_at(
                store,
                &cache,
                &build,
                &["wrap", "clang++-16", "-c", source, "-o", object],
            );
            let err = String::from_utf8_lossy(&o.stderr);
            assert!(err.contains("icepick: crash "), "{err}");
        }
        let listed = json_of(&icepick_at(store, &cache, tmp.path(), &["list", "--json"]));
        let buckets = listed["buckets"].as_array().unwrap().clone();
        assert_eq!(buckets.len(), 2, "{listed:#}");
        let out = tmp.path().join(format!("dashboard-{}", doms.len()));
        let o = icepick_at(
            store,
            &cache,
            tmp.path(),
            &["dashboard", "--out", out.to_str().unwrap()],
        );
        expect_success(&o);
        let index = dump_dom(&out.join("index.html"));
        let counts: BTreeMap<String, i64> = buckets
            .iter()
            .map(|b| {
                (
                    b["id"].as_str().unwrap().into(),
                    b["count"].as_i64().unwrap(),
                )
            })
            .collect();
        check_sparklines(&index, &counts, tmp.path());
        let mut pages = vec![spark.replace_all(&index, "SPARKLINE").into_owned()];
        for b in &buckets {
            let id = b["id"].as_str().unwrap();
            pages.push(dump_dom(&out.join(format!("buckets/{id}.html"))));
        }
        // What may differ, named.
        let mut shown = listed["store"].as_str().unwrap().to_string();
        if !shown.contains("://") {
            shown = escape_html(&shown);
        }
        let mut dom = pages.join("\n----\n");
        for b in &buckets {
            if let Some(dir) = b["case_dir"].as_str() {
                dom = dom.replace(dir, "CASE_DIR");
            }
        }
        dom = dom.replace(&shown, "STORE");
        dom = dom.replace(cache.to_str().unwrap(), "CACHE");
        let dom = times.replace_all(&dom, "TIME");
        doms.push((store.clone(), took.replace_all(&dom, "N s").into_owned()));
    }
    let (sqlite_dom, pg_dom) = (&doms[0].1, &doms[1].1);
    // Where the case lives: linked on this machine; in the database for the fleet.
    let link =
        Regex::new(r#"<a class="case-dir" href="[^"]*">(<code>CASE_DIR</code>|case)</a>"#).unwrap();
    let hint = Regex::new(
        r#"<span class="case archived">in the store: <code>icepick show [0-9a-f]+ --fetch DIR</code></span>"#,
    )
    .unwrap();
    assert_eq!(link.find_iter(sqlite_dom).count(), 4, "{sqlite_dom}");
    assert_eq!(hint.find_iter(sqlite_dom).count(), 0);
    assert_eq!(hint.find_iter(pg_dom).count(), 4, "{pg_dom}");
    assert_eq!(link.find_iter(pg_dom).count(), 0);
    let sqlite_dom = link.replace_all(sqlite_dom, "CASE").into_owned();
    let pg_dom = hint.replace_all(pg_dom, "CASE").into_owned();
    // The rest is the same page, line by line (the reports came out of the database).
    let (a, b): (Vec<&str>, Vec<&str>) = (sqlite_dom.lines().collect(), pg_dom.lines().collect());
    for (i, (x, y)) in a.iter().zip(&b).enumerate() {
        assert_eq!(x, y, "line {i} differs");
    }
    assert_eq!(a.len(), b.len());
    assert!(pg_dom.contains("HandlePragmaDirective"));
    assert!(pg_dom.contains("<pre class=\"report\">"), "the reports");
    assert!(!pg_dom.contains("<b>"));
}

fn escape_html(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// A store's case whose `report.md` is a FIFO and whose `case.json` is a link to `/dev/zero`:
/// `show` and `dashboard` neither hang nor read without end; they render without those files.
#[test]
fn dashboard_and_show_skip_case_files_that_are_fifos_or_devices() {
    let tmp = tempfile::tempdir().unwrap();
    let store = tmp.path().join("store");
    std::fs::write(tmp.path().join("crash.cpp"), CRASH_CPP).unwrap();
    wrap(&store, tmp.path(), "crash.cpp", "a.o");
    let b = &list(&store)["buckets"][0];
    let id = b["id"].as_str().unwrap().to_string();
    let o = icepick_in(&store, tmp.path(), &["show", "--json", &id]);
    expect_success(&o);
    let shown: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let case = PathBuf::from(shown["case_dir"].as_str().expect("wrap captured a case"));
    std::fs::remove_file(case.join("report.md")).unwrap();
    let c = std::ffi::CString::new(case.join("report.md").as_os_str().as_encoded_bytes()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    std::fs::remove_file(case.join("case.json")).unwrap();
    std::os::unix::fs::symlink("/dev/zero", case.join("case.json")).unwrap();
    let out = tmp.path().join("d");
    for args in [
        vec!["show", id.as_str()],
        vec!["dashboard", "--out", out.to_str().unwrap()],
        vec!["dashboard", "--redact", "--out", out.to_str().unwrap()],
    ] {
        let o = icepick_in(&store, tmp.path(), &args);
        expect_success(&o);
    }
    assert!(out.join("index.html").is_file());
}
