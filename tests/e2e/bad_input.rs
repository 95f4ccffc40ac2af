//! Bad input and non-crashes: each gets a clear one-line reason and its documented exit code.

use std::path::Path;

use crate::util::*;

fn write(dir: &Path, name: &str, text: &str) {
    std::fs::write(dir.join(name), text).unwrap();
}

fn stderr_of(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn missing_compiler_is_a_usage_error_naming_it() {
    let d = tempfile::tempdir().unwrap();
    write(d.path(), "f.c", "int x;\n");
    let o = icepick(
        d.path(),
        &["capture", "--", "clang-does-not-exist-7", "-c", "f.c"],
    );
    assert_eq!(o.status.code(), Some(2));
    let e = stderr_of(&o);
    assert!(
        e.contains("clang-does-not-exist-7") && e.contains("not found"),
        "{e}"
    );
}

#[test]
fn unreadable_input_is_a_usage_error_naming_it() {
    let d = tempfile::tempdir().unwrap();
    let o = icepick(d.path(), &["capture", "--", "clang-19", "-c", "nope.c"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr_of(&o).contains("nope.c"), "{}", stderr_of(&o));
}

#[test]
fn no_command_is_a_usage_error() {
    let d = tempfile::tempdir().unwrap();
    let o = icepick(d.path(), &["capture"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr_of(&o).contains("no input file"), "{}", stderr_of(&o));
}

#[test]
fn a_successful_compile_is_not_a_crash() {
    let d = tempfile::tempdir().unwrap();
    write(d.path(), "f.c", "int f(void) { return 1; }\n");
    let o = icepick(
        d.path(),
        &["capture", "--", "clang-19", "-c", "f.c", "-o", "f.o"],
    );
    assert_eq!(o.status.code(), Some(3));
    assert!(
        stderr_of(&o).contains("compiled successfully"),
        "{}",
        stderr_of(&o)
    );
    // Nothing that looks like a case was left behind.
    assert!(!std::fs::read_dir(d.path()).unwrap().any(|e| e
        .unwrap()
        .file_name()
        .to_string_lossy()
        .starts_with("icepick-")));
}

#[test]
fn ordinary_diagnostics_are_not_a_crash() {
    let d = tempfile::tempdir().unwrap();
    write(d.path(), "f.c", "int f(void) { return undeclared; }\n");
    let o = icepick(
        d.path(),
        &["capture", "--json", "--", "clang-19", "-c", "f.c"],
    );
    assert_eq!(o.status.code(), Some(3));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["outcome"], "no-crash");
    assert!(
        v["reason"]
            .as_str()
            .unwrap()
            .contains("ordinary diagnostics"),
        "{v}"
    );
    assert!(v["reason"].as_str().unwrap().contains("undeclared"), "{v}");
}

#[test]
fn a_hanging_compile_times_out_and_leaves_nothing_running() {
    // A real hang: release builds of clang loop forever on this pragma.
    let d = tempfile::tempdir().unwrap();
    let marker = format!("hang_{}.c", std::process::id());
    write(
        d.path(),
        &marker,
        "void f(void) {\n#pragma clang __debug overflow_stack\n}\n",
    );
    let o = icepick(
        d.path(),
        &["capture", "--timeout", "2", "--", "clang-19", "-c", &marker],
    );
    assert_eq!(o.status.code(), Some(3), "{}", stderr_of(&o));
    assert!(
        stderr_of(&o).contains("did not finish within 2 s"),
        "{}",
        stderr_of(&o)
    );
    let leftovers: Vec<String> = std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| std::fs::read(e.unwrap().path().join("cmdline")).ok())
        .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
        .filter(|c| c.contains(&marker))
        .collect();
    assert!(leftovers.is_empty(), "still running: {leftovers:?}");
}

/// A shim compiler script in `dir` (chmod +x).
fn shim(dir: &Path, name: &str, body: &str) -> String {
    let p = dir.join(name);
    crate::util::write_executable(&p, &format!("#!/bin/sh\n{body}\n"));
    p.to_str().unwrap().to_string()
}

const CRASH_UNLESS_NO_CRASH: &str =
    "void f(void) {\n#ifndef NO_CRASH\n#pragma clang __debug crash\n#endif\n}\n";

#[test]
fn a_crash_that_never_comes_back_is_reported_as_flaky_after_ten_runs() {
    // Models a flaky host, which no real compiler here shows on demand: the shim runs the
    // real clang-19, with the crash enabled in its first run only. A crash that comes back
    // in some runs is a case with its rate (`flaky.rs`); one that never comes back in the
    // reruns is exit 4, after ten runs in all.
    let d = tempfile::tempdir().unwrap();
    write(d.path(), "f.c", CRASH_UNLESS_NO_CRASH);
    let counter = d.path().join("count");
    let cc = shim(
        d.path(),
        "flaky-cc",
        &format!(
            "case \"$*\" in *--version*|*-###*) exec clang-19 \"$@\";; esac\n\
             n=$(cat {c} 2>/dev/null || echo 0); echo $((n+1)) > {c}\n\
             if [ \"$n\" -eq 0 ]; then exec clang-19 \"$@\"; else exec clang-19 -DNO_CRASH \"$@\"; fi",
            c = counter.display()
        ),
    );
    let out = d.path().join("case");
    let o = icepick(
        d.path(),
        &[
            "capture",
            "--reruns",
            "3",
            "--out",
            out.to_str().unwrap(),
            "--",
            &cc,
            "-c",
            "f.c",
        ],
    );
    assert_eq!(o.status.code(), Some(4), "{}", stderr_of(&o));
    let case = read_case(&out);
    assert_eq!(case["status"], "flaky");
    assert_eq!(case["reproducibility"]["same_signature"], 1, "{case:#}");
    assert_eq!(case["family"]["runs"], 10, "{case:#}");
    assert_eq!(case["family"]["crashed"], 1, "{case:#}");
    let detail = case["status_detail"].as_str().unwrap();
    assert!(detail.contains("none of 9 reruns crashed"), "{detail}");
    assert!(String::from_utf8_lossy(&o.stdout).contains("flaky"));
}

#[test]
fn a_crash_lost_in_preprocessing_keeps_the_case_and_says_so() {
    // Models a crash that depends on the build tree, not on the source text (no real one is
    // deterministic here): the shim runs the real clang-19, with the crash disabled whenever
    // it runs outside the build directory (icepick replays inside the case directory).
    let d = tempfile::tempdir().unwrap();
    write(d.path(), "f.c", CRASH_UNLESS_NO_CRASH);
    let cc = shim(
        d.path(),
        "tree-cc",
        &format!(
            "if [ \"$PWD\" = {} ]; then exec clang-19 \"$@\"; else exec clang-19 -DNO_CRASH \"$@\"; fi",
            d.path().display()
        ),
    );
    let out = d.path().join("case");
    let o = icepick(
        d.path(),
        &[
            "capture",
            "--out",
            out.to_str().unwrap(),
            "--",
            &cc,
            "-c",
            "f.c",
        ],
    );
    assert_eq!(o.status.code(), Some(4), "{}", stderr_of(&o));
    let case = read_case(&out);
    assert_eq!(case["status"], "lost-in-preprocessing");
    assert!(
        case["status_detail"]
            .as_str()
            .unwrap()
            .contains("does not crash"),
        "{case:#}"
    );
    assert!(out.join("original.stderr").is_file());
}

#[test]
fn report_on_a_directory_that_is_not_a_case() {
    let d = tempfile::tempdir().unwrap();
    let o = icepick(d.path(), &["report", "."]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr_of(&o).contains("not a case directory"),
        "{}",
        stderr_of(&o)
    );
}

#[test]
fn help_documents_the_exit_codes() {
    let d = tempfile::tempdir().unwrap();
    let o = icepick(d.path(), &["capture", "--help"]);
    assert_eq!(o.status.code(), Some(0));
    let s = String::from_utf8_lossy(&o.stdout);
    for code in [
        "0  success",
        "2  usage",
        "3  the command did not crash",
        "4  the crash did not reproduce",
    ] {
        assert!(s.contains(code), "{code} missing from:\n{s}");
    }
}

/// Out-of-range counts and time limits are usage errors (exit 2, naming the option), never a
/// panic: they are checked where the command line is parsed, for every subcommand taking them.
#[test]
fn huge_jobs_and_timeouts_are_usage_errors_not_panics() {
    let d = tempfile::tempdir().unwrap();
    let case = d.path().join("case");
    std::fs::create_dir(&case).unwrap();
    let c = case.to_str().unwrap();
    let max = u64::MAX.to_string();
    let runs: Vec<Vec<&str>> = vec![
        vec!["reduce", "--timeout", &max, c],
        vec!["reduce", "--timeout", "0", c],
        vec!["reduce", "--jobs", "100000", c],
        vec!["reduce", "--jobs", &max, c],
        vec!["reduce", "--jobs", "0", c],
        vec!["flags", "--jobs", "100000", c],
        vec!["flags", "--timeout", &max, c],
        vec!["ir", "--reduce-timeout", &max, c],
        vec!["versions", "--jobs", "100000", c],
        vec!["capture", "--timeout", &max, "--", "clang-19", "-c", "x.c"],
        vec!["triage", "--pending", "--lease", "1e300"],
        vec!["simulate", "--workers", "1,100000", c],
    ];
    for args in runs {
        let o = icepick(d.path(), &args);
        let err = stderr_of(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains("invalid value"), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
}

/// A crash that does not repeat: the reruns compile successfully, and must not write the
/// build's output (`-o` or `--output=`), dependency file or any other file of the build
/// behind the failed build's back, nor anything beside `/dev/null`.
#[test]
fn reruns_never_write_the_builds_outputs() {
    for output in [&["-o", "obj/f.o"][..], &["--output=obj/f.o"]] {
        let d = tempfile::tempdir().unwrap();
        write(d.path(), "f.c", CRASH_UNLESS_NO_CRASH);
        let counter = d.path().join("count");
        // Crashes on the first run only.
        let cc = shim(
            d.path(),
            "once-cc",
            &format!(
                "n=$(cat {c} 2>/dev/null || echo 0); echo $((n+1)) > {c}\n\
                 case \"$*\" in *--version*) exec clang-19 \"$@\";; esac\n\
                 if [ \"$n\" -eq 0 ]; then exec clang-19 \"$@\"; else exec clang-19 -DNO_CRASH \"$@\"; fi",
                c = counter.display()
            ),
        );
        std::fs::create_dir(d.path().join("obj")).unwrap();
        let out = d.path().join("case");
        let mut args = vec![
            "capture",
            "--reruns",
            "3",
            "--out",
            out.to_str().unwrap(),
            "--",
            &cc,
            "-c",
            "-g",
            "-MD",
            "-MF",
            "obj/f.d",
            "-save-temps=obj",
            "-fstack-usage",
            "-gsplit-dwarf",
            "-ftest-coverage",
            "-fsave-optimization-record",
            "-ftime-trace",
            "--serialize-diagnostics",
            "obj/f.dia",
        ];
        args.extend_from_slice(output);
        args.push("f.c");
        let dev_before: Vec<_> = std::fs::read_dir("/dev")
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        let o = icepick(d.path(), &args);
        assert_eq!(o.status.code(), Some(4), "{}", stderr_of(&o));
        assert_eq!(read_case(&out)["status"], "flaky");
        let left: Vec<_> = std::fs::read_dir(d.path().join("obj"))
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert!(left.is_empty(), "the reruns wrote {left:?} into the build");
        let mut top: Vec<_> = std::fs::read_dir(d.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        top.sort();
        assert_eq!(
            top,
            ["case", "count", "f.c", "obj", "once-cc"],
            "{output:?}"
        );
        let new_in_dev: Vec<_> = std::fs::read_dir("/dev")
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .filter(|n| !dev_before.contains(n))
            .filter(|n| {
                n.to_string_lossy().starts_with("null.") || n.to_string_lossy().starts_with("f.")
            })
            .collect();
        assert!(new_in_dev.is_empty(), "beside /dev/null: {new_in_dev:?}");
    }
}
