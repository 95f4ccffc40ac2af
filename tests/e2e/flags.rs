//! `icepick flags` on real crashes through the real compiler: each test captures a case in a
//! scratch copy, runs `icepick flags CASE --json`, and checks the rows a maintainer reads.

use std::path::Path;

use crate::util::*;

/// `icepick flags CASE --json`; checks that stdout is one JSON object and that case.json
/// got the same section.
fn flags_json(case: &Path) -> serde_json::Value {
    let o = icepick(
        case.parent().unwrap(),
        &["flags", case.to_str().unwrap(), "--json"],
    );
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{stderr}");
    let flags: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not one JSON object ({e}): {}",
            String::from_utf8_lossy(&o.stdout)
        )
    });
    let saved = read_case(case);
    assert_eq!(saved["flags"]["minimal_command"], flags["minimal_command"]);
    assert_eq!(saved["flags"]["dimensions"], flags["dimensions"]);
    flags
}

fn row<'a>(flags: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    flags["dimensions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["name"] == name)
        .unwrap_or_else(|| panic!("no {name} row: {flags:#}"))
}

fn outcome<'a>(row: &'a serde_json::Value, value: &str) -> &'a str {
    row["tried"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["value"] == value)
        .unwrap_or_else(|| panic!("{value} not tried: {row:#}"))["outcome"]
        .as_str()
        .unwrap()
}

/// The ISA letters after `rvNNi`/`rvNNg` (`rv64iv_zba` → `v`).
fn single_letters(march: &str) -> String {
    march[5..].split('_').next().unwrap().to_string()
}

#[test]
fn gh75010_needs_debug_info_optimisation_and_a_vector_extension() {
    let (_tmp, dir) = scratch_copy(&corpus("rv-gh75010"));
    let case = capture_case(&dir, &cmd_txt(&dir));
    let f = flags_json(&case);
    assert_eq!(row(&f, "-g")["needed"], true, "{f:#}");
    let o = row(&f, "-O");
    assert_eq!(o["needed"], true);
    assert_ne!(outcome(o, "-O0"), "same-crash");
    assert_eq!(outcome(o, "-O1"), "same-crash");
    assert_eq!(outcome(o, "-O2"), "same-crash");
    let v = row(&f, "vector extension");
    assert_eq!(v["needed"], true);
    assert!(v["note"].as_str().unwrap().starts_with("yes"), "{v:#}");
    assert_eq!(f["vector_needed"], true);
    let march = f["minimal_march"].as_str().unwrap();
    assert!(
        single_letters(march).contains('v') || march.contains("_zve"),
        "{march}"
    );
    let cmd: Vec<&str> = f["minimal_command"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    assert!(cmd.contains(&"-g") && cmd.contains(&"-O1"), "{cmd:?}");
    assert!(cmd.contains(&"input.i"), "{cmd:?}");
    assert!(f["compiler_runs"].as_u64().unwrap() > 0);
}

#[test]
fn amdgpu_si_flat_crashes_on_gfx600_and_gfx601_only() {
    let (_tmp, dir) = scratch_copy(&corpus("amdgpu-si-flat"));
    let case = capture_case(&dir, &cmd_txt(&dir));
    let f = flags_json(&case);
    let a = row(&f, "offload arch");
    assert_eq!(a["needed"], true);
    for arch in ["gfx600", "gfx601"] {
        assert_eq!(outcome(a, arch), "same-crash", "{arch}: {a:#}");
    }
    for arch in ["gfx700", "gfx803", "gfx900", "gfx90a", "gfx1030"] {
        assert_ne!(outcome(a, arch), "same-crash", "{arch}: {a:#}");
    }
    let note = a["note"].as_str().unwrap();
    assert!(note.contains("not on gfx700"), "{note}");
}

#[test]
fn gh68553_crashes_at_o2_o3_os_but_not_o0_o1() {
    let (_tmp, dir) = scratch_copy(&corpus("opt-gh68553"));
    let argv: Vec<String> = cmd_txt(&dir)
        .into_iter()
        .filter(|a| a != "-fno-integrated-cc1")
        .collect();
    let case = capture_case(&dir, &argv);
    let f = flags_json(&case);
    let o = row(&f, "-O");
    assert_eq!(o["needed"], true, "{o:#}");
    for l in ["-O2", "-Os"] {
        assert_eq!(outcome(o, l), "same-crash", "{l}: {o:#}");
    }
    // -O3 overflows the stack too, but through another recursion, so its signature differs
    // (the row says "crashes differently").
    assert!(
        ["same-crash", "other-crash"].contains(&outcome(o, "-O3")),
        "{o:#}"
    );
    for l in ["-O0", "-O1"] {
        assert_eq!(outcome(o, l), "no-crash", "{l}: {o:#}");
    }
    // Without -fno-integrated-cc1 the stack overflow leaves no stack dump: it stays.
    let cmd = f["minimal_command"].to_string();
    assert!(cmd.contains("-fno-integrated-cc1"), "{cmd}");
}

#[test]
fn cc1_reproducer_of_the_vector_pragma_crash_bisects_feature_groups() {
    let (_tmp, dir) = scratch_copy(&corpus("rv-vector-pragma"));
    let mut argv = cmd_txt(&dir);
    argv[0] = "/usr/lib/llvm-19/bin/clang".into();
    let case = capture_reproducer(&dir, &argv);
    let f = flags_json(&case);
    assert!(f["compiler_runs"].as_u64().unwrap() <= 40, "{f:#}");
    let m = row(&f, "-march");
    assert!(
        m["note"]
            .as_str()
            .unwrap()
            .contains("bisected 172 -target-feature"),
        "{m:#}"
    );
    // clang's reproducer is -frewrite-includes output, which already evaluated
    // `#if defined(__riscv_vector)` to 1: the pragma in the reproducer crashes whatever the
    // features, and the row says so rather than echoing the original -march.
    assert_eq!(f["vector_needed"], false, "{f:#}");
    assert_eq!(f["minimal_march"], "rv64i");
    // The minimal command drops every -target-feature and still crashes.
    let cmd = f["minimal_command"].to_string();
    assert!(!cmd.contains("-target-feature"), "{cmd}");
}

#[test]
fn cc1_reproducer_of_an_rv64gcv_backend_crash_keeps_v_in_at_most_40_runs() {
    let (_tmp, dir) = scratch_copy(&corpus("rv-gh75010"));
    let case = capture_reproducer(&dir, &cmd_txt(&dir));
    let f = flags_json(&case);
    let runs = f["compiler_runs"].as_u64().unwrap();
    assert!(runs <= 40, "{runs} runs: {f:#}");
    let march = f["minimal_march"].as_str().unwrap();
    assert!(single_letters(march).contains('v'), "{march}");
    assert_eq!(f["vector_needed"], true);
    assert_eq!(row(&f, "-g")["needed"], true);
    let cmd: Vec<&str> = f["minimal_command"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    assert!(cmd.contains(&"+v"), "{cmd:?}");
    let features = cmd.iter().filter(|a| **a == "-target-feature").count();
    assert!(features < 20, "{features} -target-feature left");
}

#[test]
fn not_a_case_is_a_usage_error() {
    let tmp = tempfile::tempdir().unwrap();
    let o = icepick(
        tmp.path(),
        &["flags", tmp.path().to_str().unwrap(), "--json"],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(o.stdout.is_empty());
}
