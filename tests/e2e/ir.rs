//! `icepick ir` on real crashes: each test captures a corpus case in a scratch copy,
//! runs `icepick ir CASE --json`, then runs the recorded `llc`/`opt` command itself from the
//! case directory and checks it crashes the case's way, that the `.ll` is at most 15
//! non-empty lines besides its RUN line, and that the target features are minimal.

use std::path::{Path, PathBuf};

use crate::util::*;

fn captured(name: &str) -> (tempfile::TempDir, PathBuf) {
    let (tmp, dir) = scratch_copy(&corpus(name));
    let case = capture_case(&dir, &cmd_txt(&dir));
    (tmp, case)
}

/// `icepick ir CASE --json --jobs 2`: exit 0, one JSON object, the same section in case.json.
fn ir_json(case: &Path) -> serde_json::Value {
    let o = icepick(
        case.parent().unwrap(),
        &["ir", case.to_str().unwrap(), "--json", "--jobs", "2"],
    );
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{stderr}");
    let ir: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not one JSON object ({e}): {}",
            String::from_utf8_lossy(&o.stdout)
        )
    });
    assert_eq!(read_case(case)["ir"], ir);
    ir
}

/// Runs the section's command in the case directory; returns its stderr (it must crash).
fn run_command(case: &Path, ir: &serde_json::Value) -> String {
    let o = run_json_argv(case, &ir["command"]);
    assert!(!o.status.success(), "{} did not fail", ir["command"]);
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The reduced IR: a RUN line first, at most 15 other non-empty lines, no target attributes.
fn check_ll(case: &Path, ir: &serde_json::Value, tool: &str) -> String {
    let text = std::fs::read_to_string(case.join(ir["output"].as_str().unwrap())).unwrap();
    let first = text.lines().next().unwrap();
    assert!(first.starts_with(&format!("; RUN: {tool} ")), "{text}");
    assert_eq!(first, ir["run_line"].as_str().unwrap());
    let lines = text
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with("; RUN:"))
        .count();
    assert!(lines <= 15, "{lines} lines:\n{text}");
    assert_eq!(ir["lines"].as_u64().unwrap() as usize, lines);
    assert!(!text.contains("\"target-features\""), "{text}");
    assert!(ir["verified"].as_bool().unwrap(), "{ir:#}");
    assert_eq!(ir["tool"], tool);
    text
}

/// The report's first section after its summary is the verified IR and its RUN line: before
/// the reduced source and the clang reproducer.
fn report_leads_with_the_ir(case: &Path, ir: &serde_json::Value) -> String {
    let report = std::fs::read_to_string(case.join("report.md")).unwrap();
    let first = report.find("\n## ").map(|i| &report[i + 1..]).unwrap_or("");
    assert!(first.starts_with("## Reduced IR"), "{report}");
    let ir_at = report.find("## Reduced IR").unwrap();
    assert!(
        report[ir_at..].contains(ir["run_line"].as_str().unwrap()),
        "{report}"
    );
    report
}

#[test]
fn ir_amdgpu_si_flat_cannot_select_becomes_a_small_llc_test() {
    let (_tmp, case) = captured("amdgpu-si-flat");
    let ir = ir_json(&case);
    check_ll(&case, &ir, "llc");
    assert!(
        ir["triple"].as_str().unwrap().starts_with("amdgcn"),
        "{ir:#}"
    );
    assert_eq!(ir["pass"], "AMDGPU DAG->DAG Pattern Instruction Selection");
    assert_eq!(ir["mattr"], serde_json::json!([]), "{ir:#}");
    let stderr = run_command(&case, &ir);
    assert!(stderr.contains("LLVM ERROR: Cannot select"), "{stderr}");
    assert!(stderr.contains("store"), "{stderr}");
    assert!(
        stderr.contains("Running pass 'AMDGPU DAG->DAG Pattern Instruction Selection'"),
        "{stderr}"
    );
    // The report's first reproducer is the IR.
    let report = report_leads_with_the_ir(&case, &ir);
    let ir_at = report.find("Reduced IR").expect("a Reduced IR section");
    assert!(
        report[ir_at..].contains("[Try it on Compiler Explorer](https://godbolt.org/clientstate/"),
        "{report}"
    );
}

#[test]
fn ir_rv_gh100855_riscv_isel_crash_needs_only_xventanacondops() {
    let (_tmp, case) = captured("rv-gh100855");
    let ir = ir_json(&case);
    let text = check_ll(&case, &ir, "llc");
    assert_eq!(ir["triple"], "riscv32", "{ir:#}");
    // The one feature the crash needs, out of the 170 clang's -march gave.
    assert_eq!(
        ir["mattr"],
        serde_json::json!(["+xventanacondops"]),
        "{ir:#}"
    );
    assert!(text.contains("-mattr=+xventanacondops"), "{text}");
    // The rest of the job's features are recorded as not needed, and the report says so.
    let not_needed: Vec<&str> = ir["not_needed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f.as_str().unwrap())
        .collect();
    assert!(not_needed.len() > 100, "{ir:#}");
    assert!(!not_needed.contains(&"+xventanacondops"), "{ir:#}");
    assert_eq!(ir["pass"], "RISC-V DAG->DAG Pattern Instruction Selection");
    let stderr = run_command(&case, &ir);
    assert!(
        stderr.contains("Cannot select") && stderr.contains("RISCVISD::CZERO_EQZ"),
        "{stderr}"
    );
    let report = report_leads_with_the_ir(&case, &ir);
    assert!(report.contains("Not needed at IR level"), "{report}");
}

/// opt-gh68553, x86 `-O2` stack overflow in ScalarEvolution: the pass is named twice, by the
/// minimal pipeline and by `-opt-bisect-limit`, and they differ. ddmin keeps
/// `loop(indvars,loop-unroll-full)`: the unrolling of the inner loops is needed, but the crash
/// is in `indvars` on an outer loop afterwards (OptBisect: `IndVarSimplifyPass`, the last pass
/// counted). Each `opt` run on it overflows an 8 MB stack (seconds each), so the stage reduces
/// it under a 128 KB stack (a cheap run per test) with the unroller's budget raised on the RUN
/// line (`-unroll-threshold=1000000`), rewrites the loop nest's recurrence as a two-loop nest
/// before llvm-reduce, then multiplies its loop bound until it overflows the inherited stack.
/// llvm-reduce and the textual cuts get 30 s each here. The test asserts at most 15 lines,
/// the flag the IR needs, the nest and the multiplied bound in the note, and
/// the verification.
#[test]
fn ir_opt_gh68553_names_the_scalar_evolution_pass() {
    let (_tmp, case) = captured("opt-gh68553");
    let o = icepick(
        case.parent().unwrap(),
        &[
            "ir",
            case.to_str().unwrap(),
            "--json",
            "--jobs",
            "2",
            "--reduce-timeout",
            "30",
        ],
    );
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{stderr}");
    let ir: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(ir["tool"], "opt");
    assert!(ir["verified"].as_bool().unwrap(), "{ir:#}");
    // clang's -O2 pipeline (4,149 characters, 122 passes and adaptors) cut to the two loop
    // passes; the adaptors and parameters around them (`devirt<4>(function<eager-inv;
    // no-rerun>(…))`, needed on clang's IR) are gone on the reduced IR, as upstream would
    // write the RUN line (`indvars,loop-unroll-full` when measured: opt adds the adaptors).
    let pipeline = ir["pipeline"].as_str().unwrap();
    assert!(
        pipeline.ends_with("indvars,loop-unroll-full")
            || pipeline.contains("(indvars,loop-unroll-full)"),
        "{ir:#}"
    );
    assert!(
        !pipeline.contains('<') && !pipeline.contains("devirt"),
        "{ir:#}"
    );
    assert!(
        ir["run_line"].as_str().unwrap().contains(pipeline),
        "{ir:#}"
    );
    assert_eq!(ir["pass_pipeline"], "loop-unroll-full", "{ir:#}");
    assert_eq!(ir["pass_bisect"], "IndVarSimplifyPass", "{ir:#}");
    assert_eq!(ir["pass"], "indvars", "{ir:#}");
    assert_eq!(ir["bisect_limit"], ir["bisect_counted"], "{ir:#}");
    let text = std::fs::read_to_string(case.join("reduced.ll")).unwrap();
    assert!(text.starts_with("; RUN: opt "), "{text}");
    // The RUN line names its triple: opt's default is the host's, which upstream's bots are not.
    assert!(
        ir["run_line"]
            .as_str()
            .unwrap()
            .contains(" -mtriple=x86_64"),
        "{ir:#}"
    );
    assert!(!text.contains("\"target-features\""), "{text}");
    let lines = ir["lines"].as_u64().unwrap();
    assert!(lines <= 15, "{lines} lines:\n{text}");
    // The depth comes from a multiplied loop bound that only unrolls with the raised budget.
    assert!(
        ir["run_line"]
            .as_str()
            .unwrap()
            .contains(" -unroll-threshold=1000000 "),
        "{ir:#}"
    );
    assert!(
        ir["note"]
            .as_str()
            .unwrap()
            .contains("a loop bound multiplied"),
        "{ir:#}"
    );
    assert!(
        ir["note"]
            .as_str()
            .unwrap()
            .contains("rewritten as a two-loop nest"),
        "{ir:#}"
    );
    assert!(
        ir["bytes"].as_u64().unwrap() < ir["start_bytes"].as_u64().unwrap(),
        "{ir:#}"
    );
    let stderr = run_command(&case, &ir);
    assert!(stderr.contains("llvm::ScalarEvolution::"), "{stderr}");
    let report = report_leads_with_the_ir(&case, &ir);
    assert!(
        report.contains("Crashing pass: `indvars` (`-opt-bisect-limit`: `IndVarSimplifyPass`"),
        "{report}"
    );
}

#[test]
fn ir_rv_gh75010_declare_to_assign_keeps_the_debug_info_it_needs() {
    // llvm-reduce 19's di-metadata pass used to leave a result without the crash (59 lines,
    // unreduced); the stage skips it and cuts the debug info itself.
    let (_tmp, case) = captured("rv-gh75010");
    let ir = ir_json(&case);
    let text = check_ll(&case, &ir, "opt");
    assert_eq!(ir["pass"], "declare-to-assign", "{ir:#}");
    assert_eq!(ir["mattr"], serde_json::json!([]), "{ir:#}");
    // The crash needs a variable's debug info and a scalable vector.
    assert!(
        text.contains("#dbg_declare") && text.contains("vscale"),
        "{text}"
    );
    // The case's directory does not leak into the test.
    assert!(!text.contains(case.to_str().unwrap()), "{text}");
    let stderr = run_command(&case, &ir);
    assert!(
        stderr.contains("Invalid size request on a scalable vector"),
        "{stderr}"
    );
    assert!(stderr.contains("declare-to-assign"), "{stderr}");
}

#[test]
fn ir_big_hip_rv_gh75010_rocprim_host_tu_keeps_none_of_the_headers_debug_info() {
    // The seed's situation: a 3.7 MB HIP host TU (rocPRIM, riscv64, -march=rv64gcv) whose
    // debug info describes every header. The compile unit's lists of enums, types and imports
    // reach thousands of nodes; the stage drops them and what only they reached, so the test
    // keeps the crashing function's debug info alone.
    let (_tmp, dir) = scratch_copy(&corpus("big-hip-rv-gh75010"));
    gunzip(&dir.join("big_hip_rv_gh75010.hipi.gz"));
    let case = capture_case(&dir, &cmd_txt(&dir));
    check_expected(&read_case(&case), &dir.join("expected.json"));
    let ir = ir_json(&case);
    let text = check_ll(&case, &ir, "opt");
    assert_eq!(ir["pass"], "declare-to-assign", "{ir:#}");
    assert!(
        text.contains("#dbg_declare") && text.contains("vscale"),
        "{text}"
    );
    for header in [
        "rocprim",
        "hipError",
        "hip_runtime",
        "DIEnumerator",
        "DIImportedEntity",
    ] {
        assert!(!text.contains(header), "{header} in:\n{text}");
    }
    let stderr = run_command(&case, &ir);
    assert!(
        stderr.contains("Invalid size request on a scalable vector"),
        "{stderr}"
    );
}

#[test]
fn ir_big_gh59508_clang14_coroutine_crash_gets_its_pipeline_from_opt() {
    // clang 14 ignores `-mllvm -print-pipeline-passes`: the stage takes the pipeline from
    // LLVM 14's own `opt -passes=default<O2>` and must still find the crashing pass alone
    // and reduce the 2 MB TU's IR to a few lines.
    let (_tmp, dir) = scratch_copy(&corpus("big-gh59508"));
    gunzip(&dir.join("big_gh59508.ii.gz"));
    let case = capture_case(&dir, &cmd_txt(&dir));
    let ir = ir_json(&case);
    let text = check_ll(&case, &ir, "opt");
    assert_eq!(ir["pass"], "coro-split", "{ir:#}");
    assert!(
        ir["command"][0].as_str().unwrap().contains("llvm-14"),
        "{ir:#}"
    );
    assert!(text.contains("@_Z3funv"), "{text}");
    let stderr = run_command(&case, &ir);
    assert!(
        stderr.contains("While splitting coroutine @_Z3funv"),
        "{stderr}"
    );
}

/// Decompresses `FILE.gz` beside it as `FILE`.
fn gunzip(gz: &Path) {
    let mut text = Vec::new();
    std::io::Read::read_to_end(
        &mut flate2::read::GzDecoder::new(std::fs::File::open(gz).unwrap()),
        &mut text,
    )
    .unwrap();
    std::fs::write(gz.with_extension(""), text).unwrap();
}

#[test]
fn ir_fe_gh59446_frontend_crash_has_no_ir() {
    let (_tmp, case) = captured("fe-gh59446");
    let o = icepick(case.parent().unwrap(), &["ir", case.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("no IR: the crash is in the parser"),
        "{stderr}"
    );
    assert!(read_case(&case).get("ir").is_none());
}

/// `icepick triage` on a backend crash ends with a report whose first reproducer is the
/// verified minimal IR and its `llc` RUN line. One kind is run end to
/// end here, RISC-V `llc` (rv-gh100855: its source reduction is the fastest of the three,
/// seconds against minutes). The other two kinds are covered without a second whole triage:
/// triage's IR step is `icepick ir`'s own code (`cli::ir::ir_and_report`, the same call), and
/// the `ir` tests above check, on AMDGPU `llc` (amdgpu-si-flat) and x86 `opt` (opt-gh68553),
/// that the report it leaves leads with the verified IR and its RUN line; the report puts
/// the IR section first whatever else the case has (`report::render`).
#[test]
fn triage_of_a_riscv_isel_crash_leads_with_the_verified_ir() {
    let (_tmp, dir) = scratch_copy(&corpus("rv-gh100855"));
    let out = dir.join("case");
    let mut args = vec![
        "triage".to_string(),
        "--jobs".into(),
        "2".into(),
        "--out".into(),
        out.to_str().unwrap().into(),
        "--".into(),
    ];
    args.extend(cmd_txt(&dir));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let o = icepick(&dir, &args);
    expect_success(&o);
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        stdout
            .lines()
            .any(|l| l.starts_with("status:") && l.contains(", flags, ir, reduced, ")),
        "{stdout}"
    );
    let case = read_case(&out);
    let ir = &case["ir"];
    assert_eq!(ir["verified"], true, "{ir:#}");
    assert_eq!(ir["tool"], "llc");
    check_ll(&out, ir, "llc");
    let report = report_leads_with_the_ir(&out, ir);
    // The source reproducer is there too, after the IR.
    let ir_at = report.find("## Reduced IR").unwrap();
    let src_at = report
        .find("## Reduced test case")
        .expect("a reduced source");
    assert!(ir_at < src_at, "{report}");
    let stderr = run_command(&out, ir);
    assert!(stderr.contains("Cannot select"), "{stderr}");
}

/// x86-avx512-no-evex512 with a plain function before the crashing one: the IR's first
/// attribute group is the module's defaults (`+cmov,…,+x87`), the crashing function's own is
/// `+avx512bw,…,-evex512`. The function's features are moved to -mattr and cut like any
/// (to `+avx512bw,-evex512`), and the RUN line names the triple the `.ll` no longer has, so
/// what llc compiles for does not depend on its host's default.
#[test]
fn ir_x86_function_target_features_are_moved_and_cut() {
    let (_tmp, dir) = scratch_copy(&corpus("x86-avx512-no-evex512"));
    let src = dir.join("masks.c");
    let text = std::fs::read_to_string(&src).unwrap();
    std::fs::write(&src, format!("int g(int x) {{ return x + 1; }}\n{text}")).unwrap();
    let case = capture_case(&dir, &cmd_txt(&dir));
    let ir = ir_json(&case);
    let text = check_ll(&case, &ir, "llc");
    assert!(
        ir["triple"].as_str().unwrap().starts_with("x86_64"),
        "{ir:#}"
    );
    assert_eq!(
        ir["mattr"],
        serde_json::json!(["+avx512bw", "-evex512"]),
        "{ir:#}"
    );
    assert!(
        !ir["note"].as_str().unwrap_or("").contains("stay in the IR"),
        "{ir:#}"
    );
    assert!(text.starts_with("; RUN: llc -mtriple=x86_64"), "{text}");
    assert!(!text.contains("target triple"), "{text}");
    let stderr = run_command(&case, &ir);
    assert!(
        stderr.contains("Cannot select") && stderr.contains("setcc"),
        "{stderr}"
    );
}
