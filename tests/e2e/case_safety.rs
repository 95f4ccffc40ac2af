//! Hostile and faulty cases: a `case.json` cannot make icepick read or write outside the case,
//! and a broken case, a missing compiler or a bad test script is an error (exit 2) with one
//! clear message, never a false result. Each way a case can be hostile or broken has its test
//! here.

use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::SystemTime;

use crate::util::*;

/// The stages that take a case directory, with the arguments they need besides it.
const STAGES: &[&[&str]] = &[
    &["report"],
    &["reduce", "--jobs", "1"],
    &["flags", "--jobs", "1"],
    &["versions", "--compiler", "clang-19"],
    &["classify"],
];

fn stage(cwd: &Path, args: &[&str], case: &Path) -> Output {
    let mut all: Vec<&str> = args.to_vec();
    all.push(case.to_str().unwrap());
    icepick(cwd, &all)
}

fn text(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// Exit 2 and exactly one error line, each part of it said once (no "X: X").
#[track_caller]
fn expect_one_error(o: &Output, what: &str) -> String {
    let (_, stderr) = text(o);
    assert_eq!(o.status.code(), Some(2), "{what}: {stderr}");
    let errors: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("icepick: error:"))
        .collect();
    assert_eq!(errors.len(), 1, "{what}: {stderr}");
    let parts: Vec<&str> = errors[0].split(": ").collect();
    for w in parts.windows(2) {
        assert_ne!(w[0], w[1], "{what}: repeated text in {stderr}");
    }
    stderr
}

/// A real clang-19 crash (`#pragma clang __debug crash`) captured into `dir/case`.
fn crash_case(dir: &Path) -> PathBuf {
    std::fs::write(
        dir.join("f.c"),
        "int g;\nvoid f(void) {\n#pragma clang __debug crash\n}\n",
    )
    .unwrap();
    capture_case(dir, &["clang-19".into(), "-c".into(), "f.c".into()])
}

fn edit_case(case: &Path, edit: impl FnOnce(&mut serde_json::Value)) {
    let mut v = read_case(case);
    edit(&mut v);
    std::fs::write(case.join("case.json"), v.to_string()).unwrap();
}

/// A file outside the case, and what must stay true of it.
struct Outside {
    path: PathBuf,
    secret: String,
    mtime: SystemTime,
}

impl Outside {
    fn new(dir: &Path) -> Outside {
        let path = dir.join("secret.c");
        let secret = format!("int TOPSECRET_{};\n", std::process::id());
        std::fs::write(&path, &secret).unwrap();
        let mtime = std::fs::metadata(&path).unwrap().modified().unwrap();
        Outside {
            path,
            secret,
            mtime,
        }
    }

    /// Untouched, and its content in no output and no file of the case.
    #[track_caller]
    fn check_untouched(&self, outputs: &[Output], case: &Path) {
        assert_eq!(std::fs::read_to_string(&self.path).unwrap(), self.secret);
        assert_eq!(
            std::fs::metadata(&self.path).unwrap().modified().unwrap(),
            self.mtime
        );
        let needle = self.secret.trim_end().trim_end_matches(';');
        let needle = needle.trim_start_matches("int ");
        for o in outputs {
            let (out, err) = text(o);
            assert!(
                !out.contains(needle) && !err.contains(needle),
                "{out}\n{err}"
            );
        }
        for e in std::fs::read_dir(case).unwrap() {
            let p = e.unwrap().path();
            // (The symlink the test itself planted leads to the secret; it is not read here.)
            if std::fs::symlink_metadata(&p).unwrap().is_symlink() {
                continue;
            }
            if let Ok(t) = std::fs::read_to_string(&p) {
                assert!(!t.contains(needle), "{} holds the secret", p.display());
            }
        }
    }
}

/// Runs every stage on `case` and expects each to refuse it naming `field`.
fn every_stage_refuses(dir: &Path, case: &Path, field: &str) -> Vec<Output> {
    STAGES
        .iter()
        .map(|args| {
            let o = stage(dir, args, case);
            let stderr = expect_one_error(&o, &format!("{args:?} with {field} outside"));
            assert!(
                stderr.contains(&format!("`{field}`")) && stderr.contains("inside"),
                "{args:?}: {stderr}"
            );
            o
        })
        .collect()
}

#[test]
fn case_json_input_outside_the_case_is_refused() {
    let d = tempfile::tempdir().unwrap();
    let case = crash_case(d.path());
    let outside = Outside::new(d.path());
    let absolute = outside.path.to_str().unwrap().to_string();
    for value in ["../secret.c", absolute.as_str(), "./../secret.c"] {
        edit_case(&case, |v| v["input"] = value.into());
        let outputs = every_stage_refuses(d.path(), &case, "input");
        outside.check_untouched(&outputs, &case);
    }
    // A symlink in the case that leads out is refused the same way.
    edit_case(&case, |v| v["input"] = "input.c".into());
    std::fs::remove_file(case.join("input.c")).unwrap();
    std::os::unix::fs::symlink(&outside.path, case.join("input.c")).unwrap();
    let outputs = every_stage_refuses(d.path(), &case, "input");
    outside.check_untouched(&outputs, &case);
}

#[test]
fn case_json_reduction_output_outside_the_case_is_refused() {
    let d = tempfile::tempdir().unwrap();
    let case = crash_case(d.path());
    let outside = Outside::new(d.path());
    let replay = read_case(&case)["replay_command"].clone();
    // A verified reduction naming a file outside: `report` would read it into the report and
    // the Compiler Explorer link, and `repro.sh` would recreate it under that name.
    for value in ["../secret.c", outside.path.to_str().unwrap()] {
        edit_case(&case, |v| {
            v["reduction"] = serde_json::json!({
                "status": "done", "output": value, "bytes_before": 10, "bytes_after": 5,
                "tests": 1, "cache_hits": 0, "seconds": 0.1, "jobs": 1, "verified": true,
                "extra_flags": [], "replay_command": replay,
            })
        });
        let mut outputs = every_stage_refuses(d.path(), &case, "reduction.output");
        let o = icepick(d.path(), &["reduce", "--resume", case.to_str().unwrap()]);
        expect_one_error(&o, "reduce --resume");
        outputs.push(o);
        outside.check_untouched(&outputs, &case);
    }
}

#[test]
fn versions_with_missing_compiler_is_an_error() {
    let d = tempfile::tempdir().unwrap();
    let case = crash_case(d.path());
    let before = std::fs::read(case.join("case.json")).unwrap();
    for args in [
        &["versions", "--compiler", "/nonexistent/clang"][..],
        &["versions", "--json", "--compiler", "clang-does-not-exist-7"],
        &[
            "versions",
            "--compiler",
            "clang-19",
            "--compiler",
            "/nonexistent/clang",
        ],
    ] {
        let mut all = args.to_vec();
        all.push(case.to_str().unwrap());
        let o = icepick(d.path(), &all);
        let stderr = expect_one_error(&o, &format!("{args:?}"));
        let named = args
            .iter()
            .rev()
            .find(|a| a.contains("nonexistent") || a.contains("7"));
        assert!(stderr.contains(named.unwrap()), "{stderr}");
        assert!(stderr.contains("not found"), "{stderr}");
        assert!(!String::from_utf8_lossy(&o.stdout).contains("no-crash"));
        // No result was recorded.
        assert_eq!(std::fs::read(case.join("case.json")).unwrap(), before);
    }
    // The same compiler found on PATH still runs and reports.
    let o = icepick(
        d.path(),
        &[
            "versions",
            "--json",
            "--compiler",
            "clang-19",
            case.to_str().unwrap(),
        ],
    );
    expect_success(&o);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["versions"][0]["outcome"], "same-crash", "{v}");
}

#[test]
fn missing_input_is_an_error_for_every_stage() {
    let d = tempfile::tempdir().unwrap();
    let case = crash_case(d.path());
    std::fs::remove_file(case.join("input.c")).unwrap();
    let before = std::fs::read(case.join("case.json")).unwrap();
    for args in STAGES {
        let o = stage(d.path(), args, &case);
        let stderr = expect_one_error(&o, &format!("{args:?}"));
        // It names the file and says what to do; `flags` does not call it "did not reproduce".
        assert!(
            stderr.contains("input.c") && stderr.contains("missing"),
            "{args:?}: {stderr}"
        );
        assert!(stderr.contains("icepick capture"), "{args:?}: {stderr}");
        assert!(!stderr.contains("reproduce"), "{args:?}: {stderr}");
        assert_eq!(std::fs::read(case.join("case.json")).unwrap(), before);
    }
}

#[test]
fn corrupt_case_json_is_exit_2() {
    let d = tempfile::tempdir().unwrap();
    let case = crash_case(d.path());
    let good = read_case(&case);
    let mut wrong_schema = good.clone();
    wrong_schema["schema_version"] = 0.into();
    let mut wrong_type = good.clone();
    wrong_type["signature"] = "SIGSEGV".into();
    let mut no_command = good.clone();
    no_command["replay_command"] = serde_json::json!([]);
    let mut bad_section = good.clone();
    bad_section["reduction"] = serde_json::json!({"output": 7});
    let corrupt = [
        ("truncated", good.to_string()[..100].to_string()),
        ("not json", "not json at all\n".to_string()),
        ("empty", String::new()),
        ("wrong schema_version", wrong_schema.to_string()),
        ("wrong type", wrong_type.to_string()),
        ("empty replay command", no_command.to_string()),
        ("reduction.output not a string", bad_section.to_string()),
    ];
    for (what, content) in &corrupt {
        std::fs::write(case.join("case.json"), content).unwrap();
        for args in STAGES {
            let o = stage(d.path(), args, &case);
            let stderr = expect_one_error(&o, &format!("{what}: {args:?}"));
            assert!(stderr.contains("case"), "{what}: {args:?}: {stderr}");
            assert!(!stderr.contains("panicked"), "{what}: {args:?}: {stderr}");
        }
    }
}

#[test]
fn capture_into_non_empty_out_is_refused_before_running() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(
        d.path().join("f.c"),
        "void f(void) {\n#pragma clang __debug crash\n}\n",
    )
    .unwrap();
    // A compiler that leaves a mark each time it runs, then is the real clang-19.
    let marker = d.path().join("ran");
    let cc = d.path().join("marking-cc");
    crate::util::write_executable(
        &cc,
        &format!(
            "#!/bin/sh\necho x >> {}\nexec clang-19 \"$@\"\n",
            marker.display()
        ),
    );
    let out = d.path().join("taken");
    std::fs::create_dir(&out).unwrap();
    std::fs::write(out.join("keep.txt"), "mine").unwrap();
    let taken_file = d.path().join("a-file");
    std::fs::write(&taken_file, "mine").unwrap();
    for target in [&out, &taken_file] {
        let o = icepick(
            d.path(),
            &[
                "capture",
                "--out",
                target.to_str().unwrap(),
                "--",
                cc.to_str().unwrap(),
                "-c",
                "f.c",
            ],
        );
        let stderr = expect_one_error(&o, "capture --out taken");
        assert!(stderr.contains("already exists"), "{stderr}");
        assert!(!marker.exists(), "the compiler ran before the refusal");
    }
    assert_eq!(
        std::fs::read_to_string(out.join("keep.txt")).unwrap(),
        "mine"
    );
    assert_eq!(std::fs::read_dir(&out).unwrap().count(), 1);
    assert_eq!(std::fs::read_to_string(&taken_file).unwrap(), "mine");
    // An empty directory is fine.
    let empty = d.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let (code, _, stderr) = capture_json(
        d.path(),
        &empty,
        &[cc.to_str().unwrap().into(), "-c".into(), "f.c".into()],
    );
    assert_eq!(code, 0, "{stderr}");
    assert!(empty.join("case.json").is_file());
}

fn script(dir: &Path, name: &str, body: &str, mode: u32) -> PathBuf {
    let p = dir.join(name);
    crate::util::write_executable_mode(&p, &format!("#!/bin/sh\n{body}\n"), mode);
    p
}

fn entries(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn reduce_test_script_failing_on_original_says_so() {
    let d = tempfile::tempdir().unwrap();
    let src = "int main(void) { return 0; }\n";
    std::fs::write(d.path().join("f.c"), src).unwrap();
    // A real interestingness test that is wrong about the original: it wants a crash.
    let bad = script(
        d.path(),
        "bad.sh",
        "echo looking for the crash\nclang-19 -c f.c -o /dev/null 2>&1 | grep -q 'PLEASE submit' || { echo no crash >&2; exit 1; }",
        0o755,
    );
    let o = icepick(
        d.path(),
        &["reduce", "--test", bad.to_str().unwrap(), "f.c"],
    );
    let stderr = expect_one_error(&o, "failing script");
    for says in [
        "returned 1",
        "on the original f.c",
        "must exit 0 on the original",
        "looking for the crash",
        "no crash",
    ] {
        assert!(stderr.contains(says), "{says:?} missing: {stderr}");
    }
    assert!(!stderr.contains("icepick capture"), "{stderr}");
    assert!(!stderr.contains("signature"), "{stderr}");
    assert_eq!(std::fs::read_to_string(d.path().join("f.c")).unwrap(), src);
    assert!(!d.path().join("f.c.orig").exists());

    // A script that is not executable, or not there, is said to be so.
    let noexec = script(d.path(), "noexec.sh", "exit 0", 0o644);
    let o = icepick(
        d.path(),
        &["reduce", "--test", noexec.to_str().unwrap(), "f.c"],
    );
    let stderr = expect_one_error(&o, "script not executable");
    assert!(stderr.contains("not executable"), "{stderr}");
    let o = icepick(d.path(), &["reduce", "--test", "./nope.sh", "f.c"]);
    let stderr = expect_one_error(&o, "no script");
    assert!(
        stderr.contains("nope.sh") && stderr.contains("does not exist"),
        "{stderr}"
    );
    assert_eq!(entries(d.path()), ["bad.sh", "f.c", "noexec.sh"]);
}

#[test]
fn reduce_test_does_not_claim_an_orig_it_did_not_write() {
    let d = tempfile::tempdir().unwrap();
    let src = "int keep;\nint drop1;\nint drop2;\n";
    std::fs::write(d.path().join("f.c"), src).unwrap();
    // An older FILE.orig that holds something else (an earlier run's original).
    std::fs::write(d.path().join("f.c.orig"), "older\n").unwrap();
    let test = script(d.path(), "t.sh", "grep -q keep f.c", 0o755);
    let o = icepick(
        d.path(),
        &["reduce", "--test", test.to_str().unwrap(), "f.c"],
    );
    expect_success(&o);
    let (stdout, _) = text(&o);
    assert_eq!(
        std::fs::read_to_string(d.path().join("f.c.orig")).unwrap(),
        "older\n"
    );
    assert_eq!(
        std::fs::read_to_string(d.path().join("f.c.orig.1")).unwrap(),
        src
    );
    assert!(
        stdout.contains("original kept in") && stdout.contains("f.c.orig.1"),
        "{stdout}"
    );
    // Run again on the reduced file: nothing smaller is interesting, so nothing is claimed
    // and no new copy is left behind.
    let o = icepick(
        d.path(),
        &["reduce", "--test", test.to_str().unwrap(), "f.c"],
    );
    expect_success(&o);
    let (stdout, _) = text(&o);
    assert!(stdout.contains("f.c unchanged"), "{stdout}");
    assert!(!stdout.contains("original kept"), "{stdout}");
    assert_eq!(entries(d.path()), ["f.c", "f.c.orig", "f.c.orig.1", "t.sh"]);
}

#[test]
fn report_on_case_json_file_is_exit_2() {
    let d = tempfile::tempdir().unwrap();
    let case = crash_case(d.path());
    let file = case.join("case.json");
    for args in STAGES {
        let o = stage(d.path(), args, &file);
        let stderr = expect_one_error(&o, &format!("{args:?} on case.json"));
        assert!(
            stderr.contains("not a case directory") && stderr.contains(case.to_str().unwrap()),
            "{args:?}: {stderr}"
        );
        assert!(!stderr.contains("Not a directory"), "{stderr}");
    }
}

#[test]
fn case_kernel_log_symlink_out_of_the_case_is_not_read() {
    // `classify` reads the case's kernel.log (E2): in a case from elsewhere it may be a link
    // to any file of whoever runs icepick.
    let d = tempfile::tempdir().unwrap();
    let case = crash_case(d.path());
    let outside = d.path().join("private.log");
    std::fs::write(
        &outside,
        "[    5.100000] clang[123]: unhandled signal 4 code 0x1 at 0x0000003f8a1b2c in libLLVM.so.19.1[3f80000000+2000000]\nPRIVATE_LINE\n",
    )
    .unwrap();
    std::os::unix::fs::symlink(&outside, case.join("kernel.log")).unwrap();
    let o = icepick(
        d.path(),
        &["classify", "--json", "--runs", "1", case.to_str().unwrap()],
    );
    expect_success(&o);
    let (stdout, stderr) = text(&o);
    assert!(
        stdout.contains("kernel.log in the case is not a file inside it"),
        "{stdout}\n{stderr}"
    );
    assert!(!stdout.contains("PRIVATE_LINE") && !stdout.contains("3f8a1b2c"));
    let saved = std::fs::read_to_string(case.join("case.json")).unwrap();
    assert!(!saved.contains("PRIVATE_LINE") && !saved.contains("3f8a1b2c"));
}

/// Every name a stage writes in a case, planted as a link to a file outside: the stage refuses
/// (exit 2, naming the file and the link) and the file outside keeps its content.
#[test]
fn links_in_a_case_are_never_written_through() {
    let d = tempfile::tempdir().unwrap();
    let case = crash_case(d.path());
    let outside = Outside::new(d.path());
    let plant = |name: &str| {
        let p = case.join(name);
        let _ = std::fs::remove_file(&p);
        std::os::unix::fs::symlink(&outside.path, &p).unwrap();
        p
    };
    let mut outputs = Vec::new();
    for (name, args) in [
        ("logs/reduce-trace.jsonl", &["reduce", "--jobs", "1"][..]),
        ("report.md", &["versions", "--compiler", "clang-19"][..]),
        ("repro.sh", &["versions", "--compiler", "clang-19"][..]),
    ] {
        let p = plant(name);
        let o = stage(d.path(), args, &case);
        let stderr = expect_one_error(&o, &format!("{args:?} with {name} a link"));
        assert!(
            stderr.contains(name) && stderr.contains("symbolic link"),
            "{args:?}: {stderr}"
        );
        outputs.push(o);
        std::fs::remove_file(&p).unwrap();
    }
    // A directory of the case that is a link to a directory elsewhere: nothing appears there.
    let elsewhere = d.path().join("elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();
    std::fs::remove_dir_all(case.join("logs")).unwrap();
    std::os::unix::fs::symlink(&elsewhere, case.join("logs")).unwrap();
    let o = stage(d.path(), &["reduce", "--jobs", "1"], &case);
    let stderr = expect_one_error(&o, "reduce with logs/ a link");
    assert!(
        stderr.contains("logs") && stderr.contains("symbolic link"),
        "{stderr}"
    );
    assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 0);
    outputs.push(o);
    outside.check_untouched(&outputs, &case);
}

/// A hard link in the case to a file outside it is replaced, never written through.
#[test]
fn hard_links_in_a_case_are_replaced_not_written_through() {
    let d = tempfile::tempdir().unwrap();
    let case = crash_case(d.path());
    let outside = Outside::new(d.path());
    std::fs::remove_file(case.join("report.md")).unwrap();
    std::fs::hard_link(&outside.path, case.join("report.md")).unwrap();
    let o = stage(d.path(), &["versions", "--compiler", "clang-19"], &case);
    expect_success(&o);
    let report = std::fs::read_to_string(case.join("report.md")).unwrap();
    assert!(report.contains("## "), "{report}");
    outside.check_untouched(&[o], &case);
}

/// `case.json` (and the files it names) that are `/dev/zero`, a FIFO or a link to either: every
/// stage refuses them at once (exit 2) instead of reading forever or hanging.
#[test]
fn case_files_that_are_devices_or_fifos_are_refused() {
    let d = tempfile::tempdir().unwrap();
    let case = crash_case(d.path());
    let saved = std::fs::read(case.join("case.json")).unwrap();
    let fifo = |p: &Path| {
        let c = std::ffi::CString::new(p.as_os_str().as_encoded_bytes()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    };
    for kind in ["dev-zero", "fifo"] {
        let p = case.join("case.json");
        std::fs::remove_file(&p).unwrap();
        match kind {
            "dev-zero" => std::os::unix::fs::symlink("/dev/zero", &p).unwrap(),
            _ => fifo(&p),
        }
        for args in STAGES {
            let o = stage(d.path(), args, &case);
            let stderr = expect_one_error(&o, &format!("{args:?} on case.json {kind}"));
            assert!(stderr.contains("case.json"), "{stderr}");
        }
    }
    std::fs::remove_file(case.join("case.json")).unwrap();
    std::fs::write(case.join("case.json"), &saved).unwrap();
    // The input as a FIFO: refused the same way, never waited on.
    let input = case.join(read_case(&case)["input"].as_str().unwrap());
    std::fs::remove_file(&input).unwrap();
    fifo(&input);
    for args in [&["report"][..], &["reduce", "--jobs", "1"][..]] {
        let o = stage(d.path(), args, &case);
        let stderr = expect_one_error(&o, &format!("{args:?} on a FIFO input"));
        assert!(
            stderr.contains("FIFO") || stderr.contains("not a regular file"),
            "{stderr}"
        );
    }
}
