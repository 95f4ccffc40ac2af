//! `icepick reduce` end to end with real clang: same-signature results, determinism across
//! `--jobs`, survival of kill -9 and Ctrl-C with `--resume`, and C-Reduce-style `--test`.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::util::*;

fn reduce_json(case: &Path, extra: &[&str]) -> serde_json::Value {
    let mut args = vec!["reduce", "--json", case.to_str().unwrap()];
    args.extend(extra);
    let o = icepick(case, &args);
    expect_success(&o);
    serde_json::from_slice(&o.stdout).unwrap()
}

/// Runs the reduced replay command in the case and returns clang's stderr.
fn replay_reduced(case: &Path, r: &serde_json::Value) -> String {
    String::from_utf8_lossy(&run_json_argv(case, &r["replay_command"]).stderr).into_owned()
}

#[test]
fn gh59446_reduces_to_a_few_lines_that_still_crash_the_same_way_for_any_jobs() {
    let (_tmp, dir) = scratch_copy(&corpus("fe-gh59446"));
    let case1 = capture_case(&dir, &cmd_txt(&dir));
    let case2 = dir.join("case2");
    copy_dir(&case1, &case2);

    let r1 = reduce_json(&case1, &["--jobs", "1"]);
    assert_eq!(r1["verified"], true, "{r1:#}");
    assert_eq!(r1["status"], "done");
    let before = r1["bytes_before"].as_u64().unwrap();
    let after = r1["bytes_after"].as_u64().unwrap();
    assert!(after * 2 < before, "{before} -> {after}");
    let err = replay_reduced(&case1, &r1);
    assert!(err.contains("clang::Sema::getDestructorName"), "{err}");
    // The case records the reduction.
    let case = read_case(&case1);
    assert_eq!(case["reduction"]["bytes_after"], after);
    assert_eq!(case["reduction"]["output"], "reduced.ii");

    let r2 = reduce_json(&case2, &["--jobs", "2"]);
    assert_eq!(
        std::fs::read(case1.join("reduced.ii")).unwrap(),
        std::fs::read(case2.join("reduced.ii")).unwrap(),
        "--jobs 1 and --jobs 2 must give the same output"
    );
    assert_eq!(r2["bytes_after"], after);

    // With more workers than the speculation finds candidates for (32 here: at 8 only a few
    // moments of a run have one idle, and some runs none), workers with nothing better to do
    // are lent to running tests, which run their confirming run beside their first one (the
    // trace says which): same output.
    let case3 = dir.join("case3");
    copy_dir(&case1, &case3);
    let trace = dir.join("trace32.jsonl");
    let r3 = reduce_json(
        &case3,
        &["--jobs", "32", "--trace", trace.to_str().unwrap()],
    );
    assert_eq!(
        std::fs::read(case1.join("reduced.ii")).unwrap(),
        std::fs::read(case3.join("reduced.ii")).unwrap(),
        "--jobs 1 and --jobs 32 must give the same output"
    );
    assert_eq!(r3["verified"], true, "{r3:#}");
    assert_eq!(r1["spare_checks"], 0, "one worker has none to lend");
    let lent: Vec<serde_json::Value> = std::fs::read_to_string(&trace)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|r| r["spare"] == true)
        .collect();
    assert!(!lent.is_empty(), "no test was lent a spare worker");
    assert!(r3["spare_checks"].as_u64().unwrap() > 0, "{r3:#}");
    // A lent test that was accepted ran its checks: their times are in its record.
    let mut accepted = lent.iter().filter(|r| r["interesting"] == true);
    assert!(
        accepted.clone().count() > 0 && accepted.all(|r| r["confirm"].is_f64()),
        "{lent:?}"
    );
    eprintln!("lent tests: {}", lent.len());
}

pub(crate) fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_file() {
            std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
}

/// Starts `icepick reduce` on `case`, waits until case.json records a first improvement and its
/// position (it is saved after `reduced.ii`, so both are on disk then), and returns the child.
fn start_reduce_and_wait_for_progress(case: &Path) -> std::process::Child {
    let input_len = std::fs::metadata(case.join("input.ii")).unwrap().len();
    let child = Command::new(BIN)
        .args(["reduce", "--jobs", "2", case.to_str().unwrap()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(300);
    loop {
        let reduction = std::fs::read_to_string(case.join("case.json"))
            .ok()
            .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
            .map(|c| c["reduction"].clone())
            .unwrap_or_default();
        let recorded = reduction["bytes_after"].as_u64().unwrap_or(input_len);
        if recorded < input_len && reduction["resume_at"].is_object() {
            break;
        }
        assert!(Instant::now() < deadline, "no improvement within 300 s");
        std::thread::sleep(Duration::from_millis(20));
    }
    child
}

#[test]
fn kill_9_mid_run_leaves_a_reproducing_best_and_resume_finishes() {
    let (_tmp, dir) = scratch_copy(&corpus("destructor-lookup"));
    let case = capture_case(&dir, &cmd_txt(&dir));
    let mut child = start_reduce_and_wait_for_progress(&case);
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();

    // Whatever was written is a complete file that still crashes the same way.
    let case_json = read_case(&case);
    assert_eq!(case_json["reduction"]["status"], "running");
    let err = replay_reduced(&case, &case_json["reduction"]);
    assert!(err.contains("clang::Sema::getDestructorName"), "{err}");
    let tests_before = case_json["reduction"]["tests"].as_u64().unwrap();
    // Where it stood, for --resume.
    assert!(case_json["reduction"]["resume_at"]["pass_name"].is_string());

    let r = reduce_json(&case, &["--resume"]);
    assert_eq!(r["verified"], true);
    assert_eq!(r["status"], "done");
    assert!(r["resume_at"].is_null(), "{r:#}");
    assert!(r["tests"].as_u64().unwrap() > tests_before);
    assert!(r["bytes_after"].as_u64().unwrap() < 1000, "{r:#}");
}

/// The passes of the default order's first phase that never run in the main rounds
/// (`reducers::passes::default_pipeline`; closure, prune and hollow run in both).
const FIRST_PASSES: [&str; 6] = [
    "main-only",
    "crash-cut",
    "provenance",
    "function-focus",
    "main-chunks",
    "main-operands",
];

#[test]
fn resume_after_kill_9_in_the_main_rounds_does_not_start_the_passes_over() {
    for _attempt in 0..3 {
        let (_tmp, dir) = scratch_copy(&corpus("destructor-lookup"));
        let case = capture_case(&dir, &cmd_txt(&dir));
        let mut child = start_reduce_and_wait_for_progress(&case);
        // Wait until the recorded position is in the main rounds.
        let deadline = Instant::now() + Duration::from_secs(300);
        let reached = loop {
            let r = std::fs::read_to_string(case.join("case.json"))
                .ok()
                .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
                .map(|c| c["reduction"].clone())
                .unwrap_or_default();
            if r["resume_at"]["phase"] == 1 {
                break true;
            }
            if r["status"] != "running" || Instant::now() > deadline {
                break false;
            }
            std::thread::sleep(Duration::from_millis(10));
        };
        child.kill().unwrap();
        child.wait().unwrap();
        if !reached {
            continue; // It finished first: try again.
        }
        let trace = case.join("logs/reduce-trace.jsonl");
        let lines_before = std::fs::read_to_string(&trace).unwrap().lines().count();
        let r = reduce_json(&case, &["--resume"]);
        assert_eq!(r["status"], "done");
        assert_eq!(r["verified"], true);
        let text = std::fs::read_to_string(&trace).unwrap();
        for line in text.lines().skip(lines_before) {
            let rec: serde_json::Value = serde_json::from_str(line).unwrap();
            let pass = rec["pass"].as_str().unwrap();
            assert!(!FIRST_PASSES.contains(&pass), "the resumed run ran {pass}");
        }
        return;
    }
    panic!("the reduction never stood in the main rounds when looked at");
}

#[test]
fn ctrl_c_stops_cleanly_and_keeps_the_best() {
    let (_tmp, dir) = scratch_copy(&corpus("destructor-lookup"));
    let case = capture_case(&dir, &cmd_txt(&dir));
    let child = start_reduce_and_wait_for_progress(&case);
    // SAFETY: plain kill(2) on our own child.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGINT);
    }
    let out = child.wait_with_output().unwrap();
    let case_json = read_case(&case);
    let status = case_json["reduction"]["status"].as_str().unwrap();
    if out.status.code() == Some(0) {
        // It reached the fixpoint and verified before the signal landed.
        assert_eq!(status, "done");
        assert_eq!(case_json["reduction"]["verified"], true);
        return;
    }
    // Exit 130 at once: the best so far is kept and recorded (verification is left to
    // --resume, it could take longer than Ctrl-C may), and it still reproduces.
    assert_eq!(out.status.code(), Some(130));
    assert!(status == "stopped" || status == "done", "{status}");
    let best = case_json["reduction"]["output"].as_str().unwrap();
    let input_len = std::fs::metadata(case.join("input.ii")).unwrap().len();
    assert!(std::fs::metadata(case.join(best)).unwrap().len() < input_len);
    let err = replay_reduced(&case, &case_json["reduction"]);
    assert!(err.contains("clang::Sema::getDestructorName"), "{err}");
}

#[test]
fn resume_without_an_earlier_run_is_a_usage_error() {
    let (_tmp, dir) = scratch_copy(&corpus("rv-vector-pragma"));
    let case = capture_case(&dir, &cmd_txt(&dir));
    let o = icepick(&dir, &["reduce", "--resume", case.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("no earlier reduction"));
}

#[test]
fn resume_with_its_best_file_missing_is_a_usage_error() {
    let (_tmp, dir) = scratch_copy(&corpus("rv-vector-pragma"));
    let case = capture_case(&dir, &cmd_txt(&dir));
    let o = icepick(&dir, &["reduce", case.to_str().unwrap()]);
    expect_success(&o);
    let output = read_case(&case)["reduction"]["output"]
        .as_str()
        .expect("reduce records its output")
        .to_owned();
    std::fs::remove_file(case.join(&output)).unwrap();
    let o = icepick(&dir, &["reduce", "--resume", case.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        stderr.contains("is missing") && stderr.contains(&output),
        "{stderr}"
    );
}

#[test]
fn creduce_style_interestingness_script() {
    let (_tmp, dir) = scratch_copy(&corpus("fe-gh59446"));
    let script = dir.join("interesting.sh");
    crate::util::write_executable(&script, "#!/bin/sh\n/usr/lib/llvm-16/bin/clang -fno-crash-diagnostics -c -o /dev/null GH59446.cpp 2>&1 | grep -q 'Sema::getDestructorName'\n",);
    let file = dir.join("GH59446.cpp");
    let original = std::fs::read(&file).unwrap();
    let o = icepick(
        &dir,
        &[
            "reduce",
            "--json",
            "--test",
            script.to_str().unwrap(),
            file.to_str().unwrap(),
        ],
    );
    expect_success(&o);
    let r: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let reduced = std::fs::read(&file).unwrap();
    assert_eq!(r["bytes_after"], reduced.len());
    assert!(reduced.len() < original.len());
    assert_eq!(
        std::fs::read(dir.join("GH59446.cpp.orig")).unwrap(),
        original
    );
    // The result still satisfies the script.
    let st = Command::new(&script).current_dir(&dir).status().unwrap();
    assert!(st.success());
}

#[test]
fn a_script_that_rejects_the_original_is_reported() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("f.c"), "int x;\n").unwrap();
    let script = d.path().join("no.sh");
    crate::util::write_executable(&script, "#!/bin/sh\nexit 1\n");
    let o = icepick(
        d.path(),
        &["reduce", "--test", script.to_str().unwrap(), "f.c"],
    );
    // Bad input (exit 2), said as C-Vise's start-up check says it.
    assert_eq!(o.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("returned 1 on the original"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}
