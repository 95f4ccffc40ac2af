//! The command-line conventions: `-v`/`-q`, progress on a
//! terminal and off it, completions and the man page, and the messages that lead the way
//! (a bucket id where a case is expected, a mistyped case path, the forgotten `--`, the
//! next command for a new bucket, `triage`'s last lines, plurals, aligned `list` columns).
//! Each test is named after the defect it guards against.

use std::path::Path;
use std::process::{Command, Output};

use crate::store::{icepick_in, CRASH_CPP};
use crate::util::*;

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// The crash of the corpus case fe-gh59446 (clang 16, a segfault in the front end), copied
/// into a scratch directory; returns (guard, directory, argv).
fn crashing_compile() -> (tempfile::TempDir, std::path::PathBuf, Vec<String>) {
    let (tmp, dir) = scratch_copy(&corpus("fe-gh59446"));
    let argv = cmd_txt(&dir);
    (tmp, dir, argv)
}

/// `text` without ANSI escape sequences.
fn strip_ansi(s: &str) -> String {
    let mut out = String::new();
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            if chars.peek() == Some(&'[') {
                chars.next();
                for c in chars.by_ref() {
                    if c.is_ascii_alphabetic() {
                        break;
                    }
                }
            }
            continue;
        }
        out.push(c);
    }
    out
}

/// A file and a `reduce --test` script that keeps it while it still holds `needle();`.
fn script_reduction(dir: &Path) -> (String, String) {
    let body: String = (0..200)
        .map(|i| format!("int filler_{i}(int x) {{ return x * {i} + 1; }}\n"))
        .collect();
    std::fs::write(dir.join("prog.c"), format!("{body}void needle();\n{body}")).unwrap();
    let script = dir.join("keep.sh");
    crate::util::write_executable(&script, "#!/bin/sh\ngrep -q 'needle();' prog.c\n");
    (
        script.to_string_lossy().into_owned(),
        dir.join("prog.c").to_string_lossy().into_owned(),
    )
}

#[test]
fn completions_bash_was_missing_and_is_valid_bash() {
    let tmp = tempfile::tempdir().unwrap();
    let o = icepick(tmp.path(), &["completions", "bash"]);
    expect_success(&o);
    let script = tmp.path().join("icepick.bash");
    std::fs::write(&script, &o.stdout).unwrap();
    let n = Command::new("bash")
        .arg("-n")
        .arg(&script)
        .output()
        .unwrap();
    assert!(n.status.success(), "{}", text(&n.stderr));
    // It completes the subcommands and their options.
    let s = text(&o.stdout);
    for word in ["triage", "reduce", "--verbose", "--resume"] {
        assert!(s.contains(word), "{word} missing from the bash completions");
    }
    for shell in ["zsh", "fish"] {
        let o = icepick(tmp.path(), &["completions", shell]);
        expect_success(&o);
        assert!(text(&o.stdout).contains("triage"), "{shell}");
    }
    let bad = icepick(tmp.path(), &["completions", "cmd.exe"]);
    assert_eq!(bad.status.code(), Some(2));
}

#[test]
fn man_page_was_missing_and_renders_with_man_l() {
    let tmp = tempfile::tempdir().unwrap();
    let o = icepick(tmp.path(), &["man"]);
    expect_success(&o);
    let page = tmp.path().join("icepick.1");
    std::fs::write(&page, &o.stdout).unwrap();
    let m = Command::new("man")
        .arg("-l")
        .arg(&page)
        .env("MANPAGER", "cat")
        .env("PAGER", "cat")
        .env("MANWIDTH", "100")
        .output()
        .unwrap();
    assert!(m.status.success(), "{}", text(&m.stderr));
    let shown = text(&m.stdout);
    for want in ["NAME", "SYNOPSIS", "icepick", "--verbose", "triage"] {
        assert!(
            shown.contains(want),
            "{want} missing from the rendered page:\n{shown}"
        );
    }
    // --dir: one page per command, for a MANPATH directory.
    let dir = tmp.path().join("man1");
    expect_success(&icepick(
        tmp.path(),
        &["man", "--dir", dir.to_str().unwrap()],
    ));
    for name in ["icepick.1", "icepick-reduce.1", "icepick-triage.1"] {
        assert!(dir.join(name).is_file(), "{name} not written");
    }
}

#[test]
fn verbose_did_not_show_the_compiler_commands() {
    let (_tmp, dir, argv) = crashing_compile();
    let mut args = vec!["-v", "capture", "--out", "case", "--"];
    args.extend(argv.iter().map(String::as_str));
    let o = icepick(&dir, &args);
    expect_success(&o);
    let err = text(&o.stderr);
    // Every compiler run, quoted for a shell, with its exit status and time.
    let runs: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with("icepick: [exec] ") && l.contains(&argv[0]))
        .collect();
    assert!(runs.len() >= 3, "{err}");
    // Reruns write their output into icepick's scratch, never beside the build's files.
    assert!(
        runs.iter().any(|l| l.contains("-c -o /")
            && l.contains("/icepick-")
            && l.contains(" GH59446.cpp: exit ")
            && l.ends_with(" s")),
        "{err}"
    );
    assert!(runs.iter().any(|l| l.contains(" -E ")), "{err}");
    // Without -v: none of that.
    let mut args = vec!["capture", "--out", "case2", "--"];
    args.extend(argv.iter().map(String::as_str));
    let o = icepick(&dir, &args);
    expect_success(&o);
    assert!(!text(&o.stderr).contains("[exec]"), "{}", text(&o.stderr));
}

#[test]
fn quiet_did_not_exist_and_prints_only_the_result() {
    let (_tmp, dir, argv) = crashing_compile();
    let mut args = vec!["-q", "capture", "--out", "case", "--"];
    args.extend(argv.iter().map(String::as_str));
    let o = icepick(&dir, &args);
    expect_success(&o);
    assert_eq!(text(&o.stderr), "", "-q printed on stderr");
    assert!(text(&o.stdout).starts_with("case:"), "{}", text(&o.stdout));
    // The same without -q says what it does.
    let mut args = vec!["capture", "--out", "case2", "--"];
    args.extend(argv.iter().map(String::as_str));
    let loud = icepick(&dir, &args);
    expect_success(&loud);
    assert!(!loud.stderr.is_empty());

    // reduce --test: the one result line, no progress.
    let (script, file) = script_reduction(&dir);
    let o = icepick(&dir, &["-q", "reduce", "--test", &script, &file]);
    expect_success(&o);
    assert_eq!(text(&o.stderr), "", "-q printed on stderr");
    let out = text(&o.stdout);
    assert_eq!(out.lines().count(), 1, "{out}");
    assert!(out.starts_with("reduced "), "{out}");
    // -q and -v together make no sense.
    let both = icepick(&dir, &["-q", "-v", "list"]);
    assert_eq!(both.status.code(), Some(2));
}

#[test]
fn progress_line_was_not_cleared_before_the_summary_and_is_a_bar_on_a_terminal() {
    let (_tmp, dir, _) = crashing_compile();
    let (script, file) = script_reduction(&dir);
    // On a terminal (script(1) gives it a pty): a bar, cleared before the result.
    let log = dir.join("pty.out");
    let cmd = format!(
        "{} reduce --jobs 2 --test {} {}",
        BIN,
        shlex::try_quote(&script).unwrap(),
        shlex::try_quote(&file).unwrap()
    );
    let o = Command::new("script")
        .args(["-qec", &cmd])
        .arg(&log)
        .current_dir(&dir)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    let raw = text(&std::fs::read(&log).unwrap());
    assert!(raw.contains("\x1b["), "no terminal drawing: {raw:?}");
    let plain = strip_ansi(&raw);
    assert!(
        plain.contains("[=") || plain.contains("=>"),
        "no bar: {plain:?}"
    );
    assert!(plain.contains(" tests, "), "no counters: {plain:?}");
    // The summary starts its own line: nothing of the bar before it.
    let at = plain.find("reduced ").expect("the result line");
    let line_start = plain[..at].rfind(['\n', '\r']).map_or(0, |i| i + 1);
    assert_eq!(&plain[line_start..at], "", "{plain:?}");

    // Not on a terminal: plain `icepick:` lines, no escape sequences.
    std::fs::copy(format!("{file}.orig"), &file).unwrap();
    std::fs::remove_file(format!("{file}.orig")).unwrap();
    let o = icepick(&dir, &["reduce", "--jobs", "2", "--test", &script, &file]);
    expect_success(&o);
    let err = text(&o.stderr);
    assert!(!err.contains('\x1b') && !err.contains('\r'), "{err:?}");
    assert!(err.lines().all(|l| l.starts_with("icepick: ")), "{err}");
    assert!(err.contains("% removed) | pass "), "no status line: {err}");
    // --json: nothing on stderr.
    std::fs::copy(format!("{file}.orig"), &file).unwrap();
    std::fs::remove_file(format!("{file}.orig")).unwrap();
    let o = icepick(&dir, &["reduce", "--json", "--test", &script, &file]);
    expect_success(&o);
    assert_eq!(text(&o.stderr), "");
}

#[test]
fn forgetting_dashdash_before_the_compiler_got_a_bare_unexpected_argument() {
    let tmp = tempfile::tempdir().unwrap();
    for sub in ["triage", "capture"] {
        let o = icepick(tmp.path(), &[sub, "clang++-16", "-c", "x.cc"]);
        assert_eq!(o.status.code(), Some(2));
        let err = text(&o.stderr);
        assert!(err.contains("unexpected argument 'clang++-16'"), "{err}");
        assert!(
            err.contains(&format!("icepick {sub} [OPTIONS] -- clang++-16 -c x.cc")),
            "no tip: {err}"
        );
    }
}

#[test]
fn a_mistyped_case_path_said_only_not_a_case_directory() {
    let tmp = tempfile::tempdir().unwrap();
    let case = tmp.path().join("icepick-49724a2ef4a4");
    std::fs::create_dir(&case).unwrap();
    std::fs::write(case.join("case.json"), "{}").unwrap();
    for sub in ["report", "reduce", "flags", "classify", "versions"] {
        let o = icepick(tmp.path(), &[sub, "icepick-49724a2ef4b4"]);
        assert_eq!(o.status.code(), Some(2), "{sub}");
        let err = text(&o.stderr);
        assert!(
            err.contains("icepick-49724a2ef4b4 does not exist; did you mean icepick-49724a2ef4a4?"),
            "{sub}: {err}"
        );
    }
    // Nothing close: no suggestion.
    let o = icepick(tmp.path(), &["report", "elsewhere"]);
    assert_eq!(o.status.code(), Some(2));
    let err = text(&o.stderr);
    assert!(
        err.contains("elsewhere does not exist") && !err.contains("did you mean"),
        "{err}"
    );
}

#[test]
fn a_bucket_id_where_a_case_is_expected_was_not_a_case_directory() {
    let tmp = tempfile::tempdir().unwrap();
    let store = tmp.path().join("store");
    std::fs::write(tmp.path().join("crash.cpp"), CRASH_CPP).unwrap();
    // Recorded without a case first: the bucket exists, its case does not.
    let o = Command::new(BIN)
        .args(["wrap", "clang++-16", "-c", "crash.cpp", "-o", "c.o"])
        .current_dir(tmp.path())
        .env("ICEPICK_STORE", &store)
        .env("ICEPICK_WRAP_CAPTURE", "0")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    let listed = crate::store::list(&store);
    let id = listed["buckets"][0]["id"].as_str().unwrap().to_string();

    // show names the next command, and says "once".
    let o = icepick_in(&store, tmp.path(), &["show", &id]);
    expect_success(&o);
    let shown = text(&o.stdout);
    assert!(shown.contains("seen:       once on 1 machine,"), "{shown}");
    assert!(
        shown.contains("next:       icepick triage --pending"),
        "{shown}"
    );

    let o = icepick_in(&store, tmp.path(), &["report", &id]);
    assert_eq!(o.status.code(), Some(2));
    let err = text(&o.stderr);
    assert!(
        err.contains(&format!("bucket {id} has no case on this machine yet"))
            && err.contains("icepick triage --pending"),
        "{err}"
    );

    // Triaged: the id (or a prefix, as show takes) renders the bucket's case.
    let o = icepick_in(&store, tmp.path(), &["triage", "--pending", "--jobs", "2"]);
    expect_success(&o);
    let o = icepick_in(&store, tmp.path(), &["report", &id[..8]]);
    expect_success(&o);
    let md = text(&o.stdout);
    assert!(md.contains("## Reproducer"), "{md}");
    let o = icepick_in(&store, tmp.path(), &["show", &id]);
    expect_success(&o);
    assert!(!text(&o.stdout).contains("next:"), "{}", text(&o.stdout));

    // list: the title column starts at the same place in the header and the row, however
    // long the status ("triaged (compiler-bug)") is.
    let o = icepick_in(&store, tmp.path(), &["list"]);
    expect_success(&o);
    let out = text(&o.stdout);
    let mut lines = out.lines();
    let header = lines.next().unwrap();
    let row = lines.next().unwrap();
    let title_at = header.find("TITLE").unwrap();
    let status_at = header.find("STATUS").unwrap();
    assert!(row[status_at..].starts_with("triaged"), "{out}");
    assert!(
        row.len() > title_at && &row[title_at - 2..title_at] == "  ",
        "{out}"
    );
    assert_ne!(&row[title_at..title_at + 1], " ", "{out}");
    let first_seen = header.find("FIRST SEEN").unwrap();
    assert!(row[first_seen..].starts_with("20"), "{out}");
}

#[test]
fn triage_printed_report_twice_and_its_status_said_only_captured() {
    let (_tmp, dir, argv) = crashing_compile();
    let mut args = vec!["triage", "--jobs", "2", "--out", "case", "--"];
    args.extend(argv.iter().map(String::as_str));
    let o: Output = icepick(&dir, &args);
    expect_success(&o);
    let out = text(&o.stdout);
    assert_eq!(out.matches("report:").count(), 1, "{out}");
    let status: Vec<&str> = out.lines().filter(|l| l.starts_with("status:")).collect();
    assert_eq!(status.len(), 1, "{out}");
    let status = status[0];
    for stage in ["captured", "flags", "reduced", "versions", "classified"] {
        assert!(status.contains(stage), "{stage} missing: {out}");
    }
    assert!(
        out.trim_end().ends_with(status),
        "status is not last: {out}"
    );
    // The flags stage's batch lines say which stage they belong to.
    let err = text(&o.stderr);
    assert!(err.contains("icepick: flags: batch 1:"), "{err}");
    assert!(!err.contains("icepick: batch"), "{err}");
}

/// The `--json` table of docs/architecture.md: (command, promised fields), in order.
fn documented_json_outputs() -> Vec<(String, Vec<String>)> {
    let doc =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/architecture.md"))
            .unwrap();
    let start = doc.find("## `--json` outputs").expect("the --json section");
    let section = &doc[start + 3..];
    let section = &section[..section.find("\n## ").unwrap_or(section.len())];
    let backticked = |cell: &str| -> Vec<String> {
        cell.split('`')
            .skip(1)
            .step_by(2)
            .map(str::to_string)
            .collect()
    };
    section
        .lines()
        .filter(|l| l.starts_with("| `"))
        .map(|l| {
            let cells: Vec<&str> = l.split(" | ").collect();
            assert_eq!(cells.len(), 3, "a row of three cells: {l}");
            let command = backticked(cells[0]).join(" ");
            (command, backticked(cells[2].trim_end_matches('|')))
        })
        .collect()
}

#[test]
fn json_shapes_were_undocumented_and_every_documented_field_is_printed() {
    let rows = documented_json_outputs();
    assert!(rows.len() >= 15, "{rows:?}");
    // Not run here, and why.
    let elsewhere = [
        (
            "triage",
            "prints capture's object (run here) again at the end; tests/e2e/store.rs",
        ),
        (
            "ir",
            "needs a backend crash; tests/e2e/ir.rs checks the printed section",
        ),
    ];
    let (_tmp, dir, argv) = crashing_compile();
    let store = dir.join("store");
    let run = |args: &[&str]| -> serde_json::Value {
        let o = icepick_in(&store, &dir, args);
        serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
            panic!(
                "{args:?}: stdout is not one JSON object ({e}): {}\nstderr: {}",
                text(&o.stdout),
                text(&o.stderr)
            )
        })
    };
    let (script, file) = script_reduction(&dir);
    std::fs::write(dir.join("crash.cpp"), CRASH_CPP).unwrap();
    std::fs::write(dir.join("build.log"), "[1/1] Linking CXX executable app\n").unwrap();
    let mut outputs: Vec<(&str, serde_json::Value)> = Vec::new();
    outputs.push(("list", run(&["list", "--json"])));
    let mut capture = vec!["capture", "--json", "--out", "case", "--"];
    capture.extend(argv.iter().map(String::as_str));
    outputs.push(("capture", run(&capture)));
    outputs.push(("flags", run(&["flags", "--json", "--jobs", "2", "case"])));
    outputs.push(("reduce", run(&["reduce", "--json", "--jobs", "2", "case"])));
    outputs.push((
        "simulate",
        run(&[
            "simulate",
            "--json",
            "--workers",
            "1,4",
            "case/logs/reduce-trace.jsonl",
        ]),
    ));
    outputs.push((
        "reduce --test",
        run(&["reduce", "--json", "--test", &script, &file]),
    ));
    outputs.push((
        "versions",
        run(&["versions", "--json", "--compiler", &argv[0], "case"]),
    ));
    outputs.push((
        "classify",
        run(&["classify", "--json", "--runs", "1", "case"]),
    ));
    outputs.push((
        "report --format json",
        run(&["report", "--format", "json", "case"]),
    ));
    outputs.push(("probe", run(&["probe", "--json"])));
    outputs.push(("inspect", run(&["inspect", "--json", "/bin/true"])));
    let o = Command::new(BIN)
        .args(["wrap", "clang++-16", "-c", "crash.cpp", "-o", "c.o"])
        .current_dir(&dir)
        .env("ICEPICK_STORE", &store)
        .env("ICEPICK_WRAP_CAPTURE", "0")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    let listed = run(&["list", "--json"]);
    let id = listed["buckets"][0]["id"].as_str().unwrap().to_string();
    outputs.push(("show", run(&["show", "--json", &id])));
    outputs.push(("scan-log", run(&["scan-log", "--json", "build.log"])));
    outputs.push(("store status", run(&["store", "status", "--json"])));
    outputs.push(("store flush", run(&["store", "flush", "--json"])));
    // --pending on a store whose one bucket has no reproducible occurrence left is cheap:
    // the capture fails (crash.cpp is gone) and the bucket is marked failed.
    std::fs::remove_file(dir.join("crash.cpp")).unwrap();
    outputs.push(("triage --pending", run(&["triage", "--pending", "--json"])));

    for (command, fields) in &rows {
        if elsewhere.iter().any(|(c, _)| c == command) {
            continue;
        }
        let Some((_, v)) = outputs.iter().find(|(c, _)| c == command) else {
            panic!("`{command}` is documented but this test does not run it");
        };
        let obj = v
            .as_object()
            .unwrap_or_else(|| panic!("{command}: not an object: {v}"));
        for f in fields {
            assert!(obj.contains_key(f), "{command} --json has no `{f}`: {v:#}");
        }
    }
    for (command, _) in &outputs {
        assert!(
            rows.iter().any(|(c, _)| c == command),
            "`{command} --json` is not in docs/architecture.md's table"
        );
    }
}
