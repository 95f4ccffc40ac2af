//! `icepick versions` and `icepick triage` end to end on real clang 14, 15, 16 and 19.

use crate::util::*;

#[test]
fn gh59446_crashes_on_14_to_16_and_is_fixed_by_19() {
    let (_tmp, dir) = scratch_copy(&corpus("fe-gh59446"));
    let out = dir.join("case");
    let (code, _, stderr) = capture_json(&dir, &out, &cmd_txt(&dir));
    assert_eq!(code, 0, "{stderr}");
    let mut args = vec!["versions", "--json", out.to_str().unwrap()];
    let compilers: Vec<String> = [14, 15, 16, 19]
        .iter()
        .map(|v| format!("/usr/lib/llvm-{v}/bin/clang"))
        .collect();
    for c in &compilers {
        args.extend(["--compiler", c.as_str()]);
    }
    let o = icepick(&dir, &args);
    expect_success(&o);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let outcomes: Vec<(u64, String)> = v["versions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["major"].as_u64().unwrap(),
                r["outcome"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        outcomes,
        [
            (14, "same-crash".to_string()),
            (15, "same-crash".to_string()),
            (16, "same-crash".to_string()),
            (19, "no-crash".to_string())
        ]
    );
    assert_eq!(v["summary"], "crashes on 14–16, fixed by 19");
    let report = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(report.contains("crashes on 14–16, fixed by 19"), "{report}");
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
