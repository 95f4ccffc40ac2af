//! `icepick versions` and `icepick triage` end to end on real clang 14, 15, 16 and 19.

use crate::util::*;

/// Captures the corpus case `name` and runs `icepick versions --json` on it with clang of the
/// given majors; returns the case directory and the JSON.
fn versions_of(
    name: &str,
    majors: &[u32],
) -> (tempfile::TempDir, std::path::PathBuf, serde_json::Value) {
    let (tmp, dir) = scratch_copy(&corpus(name));
    let out = dir.join("case");
    let (code, _, stderr) = capture_json(&dir, &out, &cmd_txt(&dir));
    assert_eq!(code, 0, "{stderr}");
    let v = versions_json(&dir, &out, majors, &[]);
    (tmp, out, v)
}

/// `icepick versions --json` on `case` (run in `dir`) with clang of the given majors and the
/// `extra` options: its JSON, once it succeeded.
fn versions_json(
    dir: &std::path::Path,
    case: &std::path::Path,
    majors: &[u32],
    extra: &[&str],
) -> serde_json::Value {
    let compilers: Vec<String> = majors
        .iter()
        .map(|v| format!("/usr/lib/llvm-{v}/bin/clang"))
        .collect();
    let mut args = vec!["versions", "--json"];
    args.extend(extra);
    for c in &compilers {
        args.extend(["--compiler", c.as_str()]);
    }
    args.push(case.to_str().unwrap());
    let o = icepick(dir, &args);
    expect_success(&o);
    serde_json::from_slice(&o.stdout).unwrap()
}

fn outcomes(v: &serde_json::Value) -> Vec<(u64, String)> {
    v["versions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["major"].as_u64().unwrap(),
                r["outcome"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// clang 19 prints an error for this invalid code and exits 1: it rejects it, which is not a
/// fix, and the summary must not call it one.
#[test]
fn gh59446_crashes_on_14_to_16_and_19_rejects_it() {
    let (_tmp, out, v) = versions_of("fe-gh59446", &[14, 15, 16, 19]);
    assert_eq!(
        outcomes(&v),
        [
            (14, "same-crash".to_string()),
            (15, "same-crash".to_string()),
            (16, "same-crash".to_string()),
            (19, "rejects".to_string())
        ]
    );
    assert_eq!(
        v["versions"][3]["detail"],
        "GH59446.cpp:5:10: error: no template named 'X'; did you mean 'N::X'?"
    );
    assert_eq!(
        v["summary"],
        "crashes the same way on 14–16; rejects the code on 19"
    );
    let report = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(report.contains("rejects the code on 19"), "{report}");
    assert!(!report.contains("fixed by"), "{report}");
}

/// Real clang 14 rejects the code (no `_Bool` ext-vectors), 15 compiles it (it ignores the
/// `target` attribute it cannot parse), 19 crashes: three rows that must not all read "no crash".
#[test]
fn x86_mask_vector_rejected_by_14_compiled_by_15_crashes_19() {
    let (_tmp, out, v) = versions_of("x86-avx512-no-evex512", &[14, 15, 19]);
    assert_eq!(
        outcomes(&v),
        [
            (14, "rejects".to_string()),
            (15, "compiles".to_string()),
            (19, "same-crash".to_string())
        ]
    );
    let detail = v["versions"][0]["detail"].as_str().unwrap();
    assert!(
        detail.ends_with(":2:35: error: invalid vector element type '_Bool'"),
        "{detail}"
    );
    assert!(!detail.contains('/'), "a local path in {detail}");
    assert_eq!(
        v["summary"],
        "crashes the same way on 19 (the newest tried); rejects the code on 14; compiles it on 15"
    );
    let report = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(report.contains("| rejects | `"), "{report}");
    assert!(
        report.contains("invalid vector element type '_Bool'"),
        "{report}"
    );
}

#[test]
fn triage_runs_the_whole_pipeline_on_the_demo_project() {
    let (_tmp, dir) = scratch_copy(&corpus("destructor-lookup"));
    let out = dir.join("case");
    let mut args = vec![
        "triage".to_string(),
        "--out".into(),
        out.to_str().unwrap().into(),
        "--".into(),
    ];
    args.extend(cmd_txt(&dir));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let o = icepick(&dir, &args);
    expect_success(&o);
    let case = read_case(&out);
    // flags: the include path and the define were consumed by preprocessing; -O1 and -std are
    // not needed for this frontend crash.
    let minimal = case["flags"]["minimal_command"].to_string();
    assert!(!minimal.contains("-O1"), "{minimal}");
    assert_eq!(case["reduction"]["verified"], true);
    assert!(case["reduction"]["bytes_after"].as_u64().unwrap() < 200);
    assert!(case["versions"].as_array().unwrap().len() >= 2);
    let report = std::fs::read_to_string(out.join("report.md")).unwrap();
    for section in [
        "## Reduced test case",
        "## Flags",
        "## Versions",
        "## Reproducer",
    ] {
        assert!(report.contains(section), "{section} missing:\n{report}");
    }
    // The reproducer now replays the reduced file, embedded in the script.
    let r = run_repro(&out);
    assert!(String::from_utf8_lossy(&r.stderr).contains("getDestructorName"));
    let script = std::fs::read_to_string(out.join("repro.sh")).unwrap();
    assert!(script.contains("reduced.ii"), "{script}");
}

/// A compiler killed at `--timeout` is a `timeout` row, not "no crash". The case is a real
/// capture of fe-gh59446 whose input the test prefixes with constant evaluations that take
/// any clang seconds each (a loop of 300,000 iterations, inside the default step limit), so
/// every compiler is still evaluating when the one-second limit kills it.
#[test]
fn a_compiler_killed_at_the_timeout_is_a_timeout_row() {
    let (_tmp, dir) = scratch_copy(&corpus("fe-gh59446"));
    let out = capture_case(&dir, &cmd_txt(&dir));
    let input = out.join(read_case(&out)["input"].as_str().unwrap());
    let mut slow = String::from(
        "constexpr long slow(long n) { long s = 0; for (long i = 0; i < n; ++i) s += i % 7; return s; }\n",
    );
    for i in 0..10 {
        slow.push_str(&format!("static_assert(slow(300000 + {i}) > 0, \"\");\n"));
    }
    let text = std::fs::read_to_string(&input).unwrap();
    std::fs::write(&input, slow + &text).unwrap();
    let v = versions_json(&dir, &out, &[14, 19], &["--timeout", "1"]);
    assert_eq!(
        outcomes(&v),
        [(14, "timeout".to_string()), (19, "timeout".to_string())]
    );
    assert_eq!(
        v["summary"],
        "no version tried crashes the same way; times out on 14–19"
    );
    let report = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(report.contains("| timeout |"), "{report}");
}

/// `#pragma clang __debug parser_crash` at file scope crashes clang 14, 16 and 19 in the
/// parser (a `__builtin_trap`, SIGILL). Captured with clang 16, clang 14's stack has the same
/// kind, message and top frame but other frames below (no
/// `Sema::runWithSufficientStackSpace`): the same crash at the coarse grain, which the row
/// says, with 14's own id, and which counts for the range.
#[test]
fn an_older_clang_with_the_same_top_frame_crashes_the_same_way_coarsely() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::write(
        dir.join("pragma.c"),
        "#pragma clang __debug parser_crash\nint x;\n",
    )
    .unwrap();
    let argv: Vec<String> = [
        "/usr/lib/llvm-16/bin/clang",
        "-c",
        "pragma.c",
        "-o",
        "/dev/null",
    ]
    .map(String::from)
    .to_vec();
    let out = capture_case(dir, &argv);
    let v = versions_json(dir, &out, &[14, 16], &[]);
    assert_eq!(
        outcomes(&v),
        [
            (14, "same-crash-coarse".to_string()),
            (16, "same-crash".to_string())
        ],
        "{v:#}"
    );
    let sig14 = v["versions"][0]["signature"].as_str().unwrap();
    assert_ne!(sig14, read_case(&out)["signature"]["id"].as_str().unwrap());
    assert_eq!(
        v["summary"],
        "crashes the same way on 16 (the newest tried); crashes with the same message and top \
         frame (deeper frames differ) on 14"
    );
}
