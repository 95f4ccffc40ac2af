//! One snapshot of `report.md` and one of the JSON report per kind of crash upstream sees:
//! a frontend crash, an x86 backend crash, an AArch64 backend crash, a RISC-V backend crash,
//! an AMDGPU backend crash and an `llc` (IR tool) crash.
//!
//! The inputs are real case directories: `icepick triage` (this build, `scripts/bench-corpus
//! --keep`) ran once on the corpus entries `fe-gh59446`, `x86-avx512-no-evex512`,
//! `sve-gh109270`, `rv-gh100855`, `amdgpu-gh83005` and `llc-gh100855`, and each case's
//! `case.json` with the files it names (preprocessed input, reduction) is kept under
//! `tests/fixtures/report-kinds/NAME/`. So the test needs no compiler, and any change of a
//! report's wording shows as a snapshot diff (`cargo insta review`).
//!
//! What differs from one run of icepick to the next, or from machine to machine, is taken out
//! before the comparison: the case's own host, user and home ([`Redactions::of_case`]) and
//! the scratch directory under `/tmp` (by [`super::redact`]); then insta filters (Markdown)
//! and redactions (JSON) replace times, run counts, kernel and CPU names, so that refreshing a
//! fixture from a new run changes the snapshot only where the report's content changed.

use std::path::PathBuf;

use super::*;

const KINDS: &[&str] = &[
    "fe-gh59446",
    "x86-avx512-no-evex512",
    "sve-gh109270",
    "rv-gh100855",
    "amdgpu-gh83005",
    "llc-gh100855",
];

fn fixture_dir(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("tests/fixtures/report-kinds/{name}"))
}

/// The fixture's report, redacted as `icepick report --redact` would on the machine that ran it.
fn report(name: &str) -> Report {
    let dir = fixture_dir(name);
    // sve-gh109270's 3 MB preprocessed input (arm_sve.h) is not kept: its report is rendered
    // without it, as for a case whose input is gone (the link uses the reduction).
    let raw = Report::load(&dir).unwrap_or_else(|_| {
        let text = std::fs::read_to_string(dir.join("case.json")).expect("case.json");
        let case: crate::case::Case =
            serde_json::from_str(&text).expect("a case.json icepick wrote");
        Report {
            reduced: reduced_input(&dir, &case).expect("its reduction"),
            input: None,
            case,
        }
    });
    raw.redacted(&Redactions::of_case(&raw.case))
        .expect("redactable")
}

/// Markdown filters: what a rerun of icepick or another machine changes.
fn markdown_filters() -> Vec<(&'static str, &'static str)> {
    vec![
        // Durations ("(4.2 s)", "in 31.3 s", "31 s").
        (r"\b\d+(\.\d+)? s\b", "[SECS] s"),
        // Run and test counts that depend on timing and the cache.
        (r"\b\d+ compiler runs\b", "[N] compiler runs"),
        (r"\b\d+ tests\b", "[N] tests"),
        // The kernel and CPU of the capturing host.
        (r"(?m)^- host: .*$", "- host: [HOST]"),
        (r"(?m)^- cpu: .*$", "- cpu: [CPU]"),
    ]
}

fn markdown_snapshot(name: &str) {
    let md = report(name).markdown();
    assert!(!md.contains("/tmp/ipfx"), "scratch path left in:\n{md}");
    insta::with_settings!({
        snapshot_suffix => name,
        filters => markdown_filters(),
        prepend_module_to_snapshot => true,
    }, {
        insta::assert_snapshot!("markdown", md);
    });
}

fn json_snapshot(name: &str) {
    let r = report(name);
    insta::with_settings!({
        snapshot_suffix => name,
        prepend_module_to_snapshot => true,
    }, {
        insta::assert_json_snapshot!("json", r.json(), {
            ".**.seconds" => "[SECS]",
            ".**.compiler_runs" => "[N]",
            ".**.cache_hits" => "[N]",
            ".**.tests" => "[N]",
            ".**.tests_local" => "[N]",
            ".**.check_runs" => "[N]",
            ".**.confirm_runs" => "[N]",
            ".**.spare_checks" => "[N]",
            ".host.kernel" => "[KERNEL]",
            ".host.cpuinfo" => "[CPU]",
            ".**.started" => "[TIME]",
            ".**.finished" => "[TIME]",
        });
    });
}

#[test]
fn every_kind_has_a_fixture_of_its_kind() {
    // The fixtures are what the names say: otherwise a snapshot proves nothing about a kind.
    let fe = report("fe-gh59446");
    assert!(fe.case.signature.phase.contains("compound statement"));
    assert_eq!(
        fe.case.bug_info.as_ref().and_then(|b| b.triple.as_deref()),
        Some("x86_64-pc-linux-gnu")
    );
    for (name, tag, phase) in [
        ("fe-gh59446", "[clang]", "in compound statement ('X')"),
        (
            "x86-avx512-no-evex512",
            "[X86]",
            "X86 DAG->DAG Instruction Selection",
        ),
        ("sve-gh109270", "[AArch64]", "AArch64 Instruction Selection"),
        (
            "rv-gh100855",
            "[RISC-V]",
            "RISC-V DAG->DAG Pattern Instruction Selection",
        ),
        (
            "amdgpu-gh83005",
            "[AMDGPU]",
            "AMDGPU DAG->DAG Pattern Instruction Selection",
        ),
        (
            "llc-gh100855",
            "[RISC-V]",
            "RISC-V DAG->DAG Pattern Instruction Selection",
        ),
    ] {
        let case = report(name).case;
        assert_eq!(case.signature.phase, phase, "{name}");
        assert!(title(&case).starts_with(tag), "{name}: {}", title(&case));
    }
    assert!(report("llc-gh100855").case.is_llvm_tool());
    assert_eq!(KINDS.len(), 6);
}

#[test]
fn fe_gh59446_markdown() {
    markdown_snapshot("fe-gh59446");
}

#[test]
fn fe_gh59446_json() {
    json_snapshot("fe-gh59446");
}

#[test]
fn x86_avx512_no_evex512_markdown() {
    markdown_snapshot("x86-avx512-no-evex512");
}

#[test]
fn x86_avx512_no_evex512_json() {
    json_snapshot("x86-avx512-no-evex512");
}

#[test]
fn sve_gh109270_markdown() {
    markdown_snapshot("sve-gh109270");
}

#[test]
fn sve_gh109270_json() {
    json_snapshot("sve-gh109270");
}

#[test]
fn rv_gh100855_markdown() {
    markdown_snapshot("rv-gh100855");
}

#[test]
fn rv_gh100855_json() {
    json_snapshot("rv-gh100855");
}

#[test]
fn amdgpu_gh83005_markdown() {
    markdown_snapshot("amdgpu-gh83005");
}

#[test]
fn amdgpu_gh83005_json() {
    json_snapshot("amdgpu-gh83005");
}

#[test]
fn llc_gh100855_markdown() {
    markdown_snapshot("llc-gh100855");
}

#[test]
fn llc_gh100855_json() {
    json_snapshot("llc-gh100855");
}

/// The filters and redactions take out only what changes between runs: each fixture still
/// holds a value they replace (otherwise they are dead), and nothing of the machine is left.
#[test]
fn the_normalisation_has_work_to_do_and_leaves_no_machine_names() {
    for name in KINDS {
        let md = report(name).markdown();
        let hits = markdown_filters()
            .iter()
            .filter(|(re, _)| regex::Regex::new(re).unwrap().is_match(&md))
            .count();
        assert!(hits >= 3, "{name}: only {hits} filters apply");
        let json = serde_json::to_string(&report(name).json()).unwrap();
        for gone in ["/root", "\"vm\"", "/tmp/ipfx"] {
            assert!(!json.contains(gone), "{name}: {gone} left");
            assert!(!md.contains(gone), "{name}: {gone} left");
        }
    }
}
