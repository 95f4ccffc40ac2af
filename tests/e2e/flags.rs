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

/// sve-gh109270 (AArch64 `svdupq_n_f32` with `+sve+nosimd`): Debian's release build
/// segfaults in AArch64 instruction selection at every -O level; its stack is cut short
/// after one named frame, and a signal's stack can differ from level to level. The -O row
/// must not call -O needed: every level crashes the way the case does (at the exact or the
/// coarse grain), and the verdict is `needed: false`.
#[test]
fn sve_gh109270_does_not_need_any_o_level() {
    let (_tmp, dir) = scratch_copy(&corpus("sve-gh109270"));
    let case = capture_case(&dir, &cmd_txt(&dir));
    let f = flags_json(&case);
    let o = row(&f, "-O");
    assert_eq!(o["needed"], false, "{o:#}");
    for l in ["-O0", "-O1", "-O2", "-O3", "-Os", "-Oz"] {
        assert!(
            ["same-crash", "same-crash-coarse"].contains(&outcome(o, l)),
            "{l}: {o:#}"
        );
    }
    assert!(
        o["note"]
            .as_str()
            .unwrap()
            .starts_with("crashes with every value tried"),
        "{o:#}"
    );
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

/// Valid C++20 (a concept and a consteval function) followed by a deterministic crash: under
/// C++17 the crash survives, after five errors.
const CXX20_THEN_CRASH: &str = "template <typename T> concept Small = sizeof(T) <= 4;
consteval int twice(int x) { return 2 * x; }
template <Small T> int f(T t) { return twice(3) + t; }
int g() { return f(1); }
void h() {
#pragma clang __debug crash
}
";

fn cxx20_case(dir: &Path) -> std::path::PathBuf {
    std::fs::write(dir.join("a.cpp"), CXX20_THEN_CRASH).unwrap();
    let argv: Vec<String> = [
        "clang++-19",
        "-std=c++20",
        "-O1",
        "-c",
        "a.cpp",
        "-o",
        "a.o",
    ]
    .map(String::from)
    .to_vec();
    let case = capture_case(dir, &argv);
    assert_eq!(read_case(&case)["crash"]["source_errors"], 0);
    case
}

/// Guards against the flags stage dropping `-std=c++20` of a crash-on-valid because the
/// crash survives in C++17 after errors, which would make the reduced code invalid.
#[test]
fn flags_dropped_std_cxx20_of_a_crash_on_valid() {
    let tmp = tempfile::tempdir().unwrap();
    let case = cxx20_case(tmp.path());
    let f = flags_json(&case);
    assert_eq!(f["keep_valid"], true, "{f:#}");
    let cmd: Vec<&str> = f["minimal_command"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    assert!(cmd.contains(&"-std=c++20"), "{cmd:?}");
    assert!(!cmd.contains(&"-O1"), "{cmd:?}");
    let std = row(&f, "-std");
    assert_eq!(outcome(std, "-std=c++17"), "crash-after-errors", "{std:#}");
    assert_eq!(outcome(std, "-std=c++20"), "same-crash", "{std:#}");
    // The minimal command really compiles with no error before the crash.
    let o = std::process::Command::new(cmd[0])
        .args(&cmd[1..])
        .current_dir(&case)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(stderr.contains("Stack dump:"), "{stderr}");
    assert!(
        !stderr
            .lines()
            .any(|l| l.contains(".cpp:") && l.contains(": error: ")),
        "{stderr}"
    );

    // --allow-invalid opts out: the crash survives without -std=c++20, so it goes.
    let o = icepick(
        tmp.path(),
        &["flags", case.to_str().unwrap(), "--json", "--allow-invalid"],
    );
    expect_success(&o);
    let f: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(f["keep_valid"], false);
    assert!(
        !f["minimal_command"].to_string().contains("-std=c++20"),
        "{f:#}"
    );
}

/// Guards against the Flags table saying `-std` is needed ("-std=c++11 (error)") because
/// the probe ran on input preprocessed for C++17, although the source crashes with -std=c++11.
#[test]
fn std_probe_confounded_by_preprocessing_said_needed() {
    let (_tmp, dir) = scratch_copy(&corpus("destructor-lookup"));
    let case = capture_case(&dir, &cmd_txt(&dir));
    let f = flags_json(&case);
    let std = row(&f, "-std");
    assert_ne!(std["needed"], true, "{std:#}");
    assert_eq!(outcome(std, "-std=c++11"), "same-crash", "{std:#}");
    assert!(
        f["on_original"]
            .as_array()
            .unwrap()
            .contains(&"-std".into()),
        "{f:#}"
    );
    let report = std::fs::read_to_string(case.join("report.md")).unwrap();
    let line = report
        .lines()
        .find(|l| l.starts_with("| `-std` |"))
        .unwrap_or_else(|| panic!("no -std row:\n{report}"));
    assert!(line.starts_with("| `-std` | no |"), "{line}");

    // Without the sources the original command cannot be probed: then the row is "not
    // testable", never "needed".
    std::fs::remove_dir_all(dir.join("src")).unwrap();
    let f = flags_json(&case);
    let std = row(&f, "-std");
    assert!(std["needed"].is_null(), "{std:#}");
    assert!(
        std["note"]
            .as_str()
            .unwrap()
            .starts_with("not testable on preprocessed input"),
        "{std:#}"
    );
}
