//! Hostile text through the binary: shell syntax in a
//! compiler path, a working directory and `-D` values never runs, in `repro.sh` or in a
//! command icepick prints; a `-D` value with a code fence cannot break `report.md`;
//! `--redact` removes what the case recorded of its machine, and `dashboard --redact` the
//! store path and the names of the machines; read-only commands on a store that does not
//! exist create nothing. Real clang-19 crashes (`#pragma clang __debug crash`).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::util::*;

const PRAGMA_CRASH: &str = "#pragma clang __debug crash\nint x;\n";

/// A directory name with every kind of shell syntax that could run something if unquoted.
const HOSTILE_DIR: &str = "bin $(touch PWNED) `touch PWNED_BT` \"q\" it's \\x\n!x ~";
/// The working directory of the build, hostile too.
const HOSTILE_CWD: &str = "proj $(touch PWNED_CWD) `touch PWNED_CWD_BT` 'q'";
/// A `-D` value holding a line break, a code fence, a heading and HTML (clang warns and
/// ignores what follows the line break; the argument is kept whole in the case).
const FENCE_D: &str = "-DY=1\n```\n# Injected heading <b>x</b>\n```";

/// Every file and directory under `root`, relative.
fn tree(root: &Path) -> BTreeSet<PathBuf> {
    walk(root).into_iter().collect()
}

/// Asserts no file named `PWNED*` exists anywhere under `root` (or in `extra`).
#[track_caller]
fn assert_nothing_ran(root: &Path, extra: &[&Path]) {
    let mut dirs: Vec<&Path> = vec![root];
    dirs.extend(extra);
    for d in dirs {
        for p in tree(d) {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            assert!(
                !name.starts_with("PWNED"),
                "{} was created",
                d.join(&p).display()
            );
        }
    }
}

/// A tree with clang-19 behind a hostile directory name and a hostile project directory
/// holding `crash.c`: (guard, compiler path, project dir).
fn hostile_setup() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let bin = tmp.path().join(HOSTILE_DIR);
    std::fs::create_dir(&bin).unwrap();
    let clang = bin.join("clang-19");
    std::os::unix::fs::symlink("/usr/bin/clang-19", &clang).unwrap();
    let proj = tmp.path().join(HOSTILE_CWD);
    std::fs::create_dir(&proj).unwrap();
    std::fs::write(proj.join("crash.c"), PRAGMA_CRASH).unwrap();
    (tmp, clang, proj)
}

fn hostile_argv(clang: &Path) -> Vec<String> {
    [
        clang.to_str().unwrap(),
        "-DX=$(touch PWNED2)",
        "-DZ=`touch PWNED3`",
        FENCE_D,
        "-c",
        "crash.c",
        "-o",
        "crash.o",
    ]
    .map(String::from)
    .to_vec()
}

/// The lines of a Markdown text outside fenced code blocks, read as CommonMark does for
/// backtick and tilde fences (a block closes at a line of at least as many of its fence
/// characters, indented up to three spaces, with nothing else but spaces).
fn outside_fences(md: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut open: Option<(char, usize)> = None;
    for line in md.lines() {
        let t = line.trim_start_matches(' ');
        let indent = line.len() - t.len();
        let run = |c: char| t.chars().take_while(|x| *x == c).count();
        match open {
            None => {
                let fence = ['`', '~']
                    .into_iter()
                    .map(|c| (c, run(c)))
                    .find(|(_, n)| *n >= 3);
                match fence {
                    Some(f) if indent <= 3 => open = Some(f),
                    _ => out.push(line),
                }
            }
            Some((c, n)) => {
                let r = run(c);
                if indent <= 3 && r >= n && t[r..].trim_end_matches(' ').is_empty() {
                    open = None;
                }
            }
        }
    }
    assert!(open.is_none(), "a fence is left open:\n{md}");
    out
}

/// A line with its inline code spans (a backtick run up to the next run of the same length)
/// removed.
fn without_code_spans(line: &str) -> String {
    let chars: Vec<char> = line.chars().collect();
    let run_at = |i: usize| chars[i..].iter().take_while(|c| **c == '`').count();
    let mut out = String::new();
    let mut i = 0;
    while i < chars.len() {
        if chars[i] != '`' {
            out.push(chars[i]);
            i += 1;
            continue;
        }
        let n = run_at(i);
        let mut j = i + n;
        let close = loop {
            if j >= chars.len() {
                break None;
            }
            if chars[j] == '`' {
                let m = run_at(j);
                if m == n {
                    break Some(j + m);
                }
                j += m;
            } else {
                j += 1;
            }
        };
        match close {
            Some(end) => i = end,
            None => {
                out.extend(&chars[i..i + n]);
                i += n;
            }
        }
    }
    out
}

#[test]
fn shell_syntax_in_compiler_path_and_d_values_never_runs_and_repro_still_crashes() {
    let (tmp, clang, proj) = hostile_setup();
    let case = capture_case(&proj, &hostile_argv(&clang));
    assert_nothing_ran(tmp.path(), &[]);

    // repro.sh parses, runs the case's compiler through the hostile path and crashes it,
    // from an unrelated directory, without running any of the substitutions.
    let repro = std::fs::read_to_string(case.join("repro.sh")).unwrap();
    let n = Command::new("sh")
        .arg("-n")
        .arg(case.join("repro.sh"))
        .output()
        .unwrap();
    assert!(
        n.status.success(),
        "{}\n{repro}",
        String::from_utf8_lossy(&n.stderr)
    );
    let elsewhere = tempfile::tempdir().unwrap();
    let o = Command::new("sh")
        .arg(case.join("repro.sh"))
        .current_dir(elsewhere.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        !o.status.success(),
        "repro.sh did not crash:\n{stderr}\n{repro}"
    );
    assert!(stderr.contains("Stack dump"), "{stderr}\n{repro}");
    assert!(
        !stderr.contains("not found") && !stderr.contains("No such file"),
        "{stderr}"
    );
    assert_nothing_ran(tmp.path(), &[elsewhere.path()]);
    // The same through bash, and with ICEPICK_COMPILER holding shell syntax too.
    let o = Command::new("bash")
        .arg(case.join("repro.sh"))
        .current_dir(elsewhere.path())
        .env("ICEPICK_COMPILER", &clang)
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&o.stderr).contains("Stack dump"));
    assert_nothing_ran(tmp.path(), &[elsewhere.path()]);

    // report.md: the fence in the -D value stays inside its code block.
    let md = std::fs::read_to_string(case.join("report.md")).unwrap();
    let outside = outside_fences(&md);
    let text: Vec<String> = outside.iter().map(|l| without_code_spans(l)).collect();
    assert!(
        !text.iter().any(|l| l.contains("Injected heading")),
        "the -D value escaped its code block:\n{md}"
    );
    assert!(md.contains("# Injected heading <b>x</b>"), "{md}");
    let headings: Vec<&&str> = outside.iter().filter(|l| l.starts_with('#')).collect();
    assert!(
        headings
            .iter()
            .all(|h| h.starts_with("# ") || h.starts_with("## ")),
        "{headings:?}"
    );
    assert_eq!(headings.iter().filter(|h| h.starts_with("# ")).count(), 1);
    assert!(
        !text.iter().any(|l| l.contains("<b>")),
        "HTML outside code:\n{md}"
    );
}

#[test]
fn show_prints_a_cd_line_that_is_a_valid_command_for_a_hostile_cwd() {
    let (tmp, clang, proj) = hostile_setup();
    let store = tmp.path().join("store");
    let mut args = vec!["wrap".to_string()];
    args.extend(hostile_argv(&clang));
    let o = Command::new(BIN)
        .args(&args)
        .current_dir(&proj)
        .env("ICEPICK_STORE", &store)
        .env("ICEPICK_WRAP_CAPTURE", "0")
        .output()
        .unwrap();
    assert_ne!(o.status.code(), Some(0));
    assert_nothing_ran(tmp.path(), &[]);
    let list = Command::new(BIN)
        .args(["list", "--json"])
        .env("ICEPICK_STORE", &store)
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&list.stdout).unwrap();
    let bucket = v["buckets"][0]["id"]
        .as_str()
        .expect("one bucket")
        .to_string();
    let show = Command::new(BIN)
        .args(["show", &bucket])
        .env("ICEPICK_STORE", &store)
        .output()
        .unwrap();
    expect_success(&show);
    let text = String::from_utf8(show.stdout).unwrap();
    // The command line may span lines (the -D value holds line breaks): from `cd` to the end.
    let start = text.find("    cd ").expect("a cd line");
    let line = text[start..].trim();
    let n = Command::new("bash")
        .args(["-n", "-c", line])
        .output()
        .unwrap();
    assert!(
        n.status.success(),
        "{line}\n{}",
        String::from_utf8_lossy(&n.stderr)
    );
    // Run it: the cd lands in the hostile directory and the compiler crashes there again.
    let elsewhere = tempfile::tempdir().unwrap();
    let o = Command::new("bash")
        .args(["-c", line])
        .current_dir(elsewhere.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(stderr.contains("Stack dump"), "{line}\n{stderr}");
    assert_nothing_ran(tmp.path(), &[elsewhere.path()]);
}

#[test]
fn report_redact_removes_the_capturing_machines_host_user_and_home() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("crash.c"), PRAGMA_CRASH).unwrap();
    let argv = ["clang-19", "-c", "crash.c", "-o", "crash.o"].map(String::from);
    let case = capture_case(tmp.path(), &argv);
    // As if captured on host `q7` by `zelda` in her home (a scratch copy of the case).
    let path = case.join("case.json");
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    v["cwd"] = "/home/zelda/q7-work".into();
    let host = v["host"]
        .as_object_mut()
        .expect("capture records host facts");
    host.insert("hostname".into(), "q7".into());
    host.insert("user".into(), "zelda".into());
    host.insert("home".into(), "/home/zelda".into());
    v["compiler"]["path"] = "/home/zelda/q7/bin/clang-19".into();
    std::fs::write(&path, serde_json::to_string_pretty(&v).unwrap()).unwrap();
    for format in ["md", "json"] {
        let plain = icepick(tmp.path(), &["report", "--format", format, "case"]);
        expect_success(&plain);
        let plain = String::from_utf8(plain.stdout).unwrap();
        assert!(plain.contains("/home/zelda/q7-work"), "{plain}");
        let o = icepick(
            tmp.path(),
            &["report", "--redact", "--format", format, "case"],
        );
        expect_success(&o);
        let red = String::from_utf8(o.stdout).unwrap();
        for gone in ["zelda", "q7", "/home/"] {
            assert!(
                !red.contains(gone),
                "{gone:?} left in the {format} report:\n{red}"
            );
        }
        assert!(red.contains("~/HOST-work"), "{red}");
    }
}

#[test]
fn dashboard_redact_pages_name_no_store_host_user_or_home() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home").join("zedd");
    let proj = home.join("proj");
    std::fs::create_dir_all(&proj).unwrap();
    std::fs::write(proj.join("crash.c"), PRAGMA_CRASH).unwrap();
    let store = home.join(".local/share/icepick");
    let run = |args: &[&str], cwd: &Path| -> Output {
        Command::new(BIN)
            .args(args)
            .current_dir(cwd)
            .env("ICEPICK_STORE", &store)
            .env("HOME", &home)
            .env("USER", "zedd")
            .output()
            .unwrap()
    };
    let o = run(
        &[
            "wrap",
            "clang-19",
            "-I",
            home.to_str().unwrap(),
            "-c",
            "crash.c",
        ],
        &proj,
    );
    assert_ne!(o.status.code(), Some(0));
    let hostname = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .unwrap()
        .trim()
        .to_string();
    let pages = |redact: bool| -> Vec<(PathBuf, String)> {
        let out = tmp.path().join(if redact { "red" } else { "plain" });
        let mut args = vec!["dashboard", "--out", out.to_str().unwrap()];
        if redact {
            args.push("--redact");
        }
        expect_success(&run(&args, tmp.path()));
        tree(&out)
            .into_iter()
            .filter(|p| out.join(p).is_file())
            .map(|p| (p.clone(), std::fs::read_to_string(out.join(&p)).unwrap()))
            .collect()
    };
    let host_word = regex::Regex::new(&format!(
        r"(^|[^A-Za-z0-9_.-]){}($|[^A-Za-z0-9_-])",
        regex::escape(&hostname)
    ))
    .unwrap();
    let plain = pages(false);
    let index = &plain
        .iter()
        .find(|(p, _)| p == Path::new("index.html"))
        .unwrap()
        .1;
    assert!(index.contains(store.to_str().unwrap()) && host_word.is_match(index));
    for (p, text) in pages(true) {
        for gone in [
            store.to_str().unwrap(),
            home.to_str().unwrap(),
            "zedd",
            "file://",
        ] {
            assert!(!text.contains(gone), "{gone:?} in {}:\n{text}", p.display());
        }
        assert!(
            !host_word.is_match(&text),
            "host name {hostname:?} in {}:\n{text}",
            p.display()
        );
    }
}

#[test]
fn read_only_commands_on_a_missing_store_create_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let store = tmp.path().join("missing").join("store");
    let before = tree(tmp.path());
    let run = |args: &[&str]| -> Output {
        Command::new(BIN)
            .args(args)
            .current_dir(tmp.path())
            .env("ICEPICK_STORE", &store)
            .output()
            .unwrap()
    };
    let o = run(&["list"]);
    expect_success(&o);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.starts_with("no crashes recorded (store") && text.contains("does not exist"),
        "{text}"
    );
    let o = run(&["list", "--json"]);
    expect_success(&o);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["buckets"], serde_json::json!([]));
    assert_eq!(v["exists"], false);
    let o = run(&["show", "0123456789ab"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("does not exist"));
    let out = tmp.path().join("site");
    let o = run(&["dashboard", "--out", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    let o = run(&[
        "dashboard",
        "--out",
        out.to_str().unwrap(),
        "--store",
        store.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        tree(tmp.path()),
        before,
        "a read-only command created files"
    );
}

/// Runs `icepick ARGS` in `cwd` inside a UTS namespace whose host name is `host`, as `user`
/// with home `home` (needs root, as the tests run: `unshare -u`).
fn icepick_as(host: &str, user: &str, home: &Path, cwd: &Path, args: &[&str]) -> Output {
    Command::new("unshare")
        .args([
            "-u",
            "sh",
            "-c",
            "hostname \"$0\" && exec \"$@\"",
            host,
            BIN,
        ])
        .args(args)
        .env("USER", user)
        .env("LOGNAME", user)
        .env("HOME", home)
        .current_dir(cwd)
        .output()
        .unwrap()
}

#[test]
fn report_redact_made_elsewhere_removes_the_names_capture_recorded() {
    // Captured on host `zq` by `zelda`; the report is made on host `far` by `ops`: only what
    // the case recorded can tell redaction the capturing machine's names.
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("zelda");
    let work = tmp.path().join("zq-build");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&work).unwrap();
    std::fs::write(work.join("crash.c"), PRAGMA_CRASH).unwrap();
    let o = icepick_as(
        "zq",
        "zelda",
        &home,
        &work,
        &[
            "capture", "--out", "case", "--", "clang-19", "-c", "crash.c",
        ],
    );
    expect_success(&o);
    let case: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(work.join("case/case.json")).unwrap())
            .unwrap();
    assert_eq!(case["host"]["kernel"]["nodename"], "zq");
    assert_eq!(case["host"]["user"], "zelda");
    let elsewhere = tmp.path().join("ops");
    std::fs::create_dir_all(&elsewhere).unwrap();
    for format in ["md", "json"] {
        let plain = icepick_as(
            "far",
            "ops",
            &elsewhere,
            &work,
            &["report", "--format", format, "case"],
        );
        expect_success(&plain);
        let plain = String::from_utf8(plain.stdout).unwrap();
        assert!(plain.contains("zq-build"), "{plain}");
        let o = icepick_as(
            "far",
            "ops",
            &elsewhere,
            &work,
            &["report", "--redact", "--format", format, "case"],
        );
        expect_success(&o);
        let red = String::from_utf8(o.stdout).unwrap();
        for gone in ["zq", "zelda", home.to_str().unwrap()] {
            assert!(
                !red.contains(gone),
                "{gone:?} left in the {format} report:\n{red}"
            );
        }
    }
}

/// Terminal escapes in a build's directory, file name and arguments (a window title, a
/// screen clear, a bidi override) reach no output of icepick raw: `capture`, `-v`, `report`,
/// `show`, `list` and `wrap`'s line show them as text.
#[test]
fn terminal_escapes_from_a_build_are_shown_as_text() {
    const ESCAPES: &str = "\u{1b}]0;OWNED\u{7}\u{1b}[2J\u{9b}31m\u{202e}";
    let tmp = tempfile::tempdir().unwrap();
    let proj = tmp.path().join(format!("proj{ESCAPES}"));
    std::fs::create_dir(&proj).unwrap();
    let src = format!("f{ESCAPES}.c");
    std::fs::write(proj.join(&src), PRAGMA_CRASH).unwrap();
    let argv = [
        "clang-19".to_string(),
        "-c".into(),
        format!("-DX=\"{ESCAPES}\""),
        src.clone(),
    ];
    let raw = |o: &Output, what: &str| {
        for bytes in [&o.stdout, &o.stderr] {
            let t = String::from_utf8_lossy(bytes);
            assert!(
                !t.chars()
                    .any(|c| (c.is_control() && c != '\n' && c != '\t') || c == '\u{202e}'),
                "{what} printed a control character raw: {t:?}"
            );
        }
    };
    let out = tmp.path().join("case");
    let mut args = vec!["-v", "capture", "--out", out.to_str().unwrap(), "--"];
    args.extend(argv.iter().map(String::as_str));
    let o = icepick(&proj, &args);
    raw(&o, "capture -v");
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    // `-v` names the command it runs: the escapes are there, as text.
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("\\x1b]0;OWNED\\x07"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let o = icepick(&proj, &["report", out.to_str().unwrap()]);
    expect_success(&o);
    raw(&o, "report");
    let store = tmp.path().join("store");
    let o = Command::new(BIN)
        .arg("wrap")
        .args(&argv)
        .current_dir(&proj)
        .env("ICEPICK_STORE", &store)
        .env("ICEPICK_WRAP_CAPTURE", "0")
        .output()
        .unwrap();
    // The compiler's own output passes through wrap as it is; icepick's line is shown safe.
    let line = String::from_utf8_lossy(&o.stderr)
        .lines()
        .filter(|l| l.starts_with("icepick:"))
        .collect::<Vec<_>>()
        .join("\n");
    assert!(
        !line.chars().any(|c| c == '\u{1b}' || c == '\u{7}'),
        "{line:?}"
    );
    let list = Command::new(BIN)
        .args(["list", "--json"])
        .env("ICEPICK_STORE", &store)
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&list.stdout).unwrap();
    let bucket = v["buckets"][0]["id"]
        .as_str()
        .expect("one bucket")
        .to_string();
    for args in [vec!["show", bucket.as_str()], vec!["list"]] {
        let o = Command::new(BIN)
            .args(&args)
            .env("ICEPICK_STORE", &store)
            .output()
            .unwrap();
        expect_success(&o);
        raw(&o, args[0]);
    }
}
