//! `icepick triage` on the kinds of crash a real build throws besides a clang compile: an LLVM
//! tool (`llc`, `opt`) crashing on IR, and a triage whose wall-clock budget runs out.

use std::path::Path;

use crate::util::*;

/// `icepick triage --jobs 2 --out case [EXTRA] -- cmd.txt` in `dir`.
fn triage(dir: &Path, extra: &[&str]) -> std::process::Output {
    let mut args = vec!["triage", "--jobs", "2", "--out", "case"];
    args.extend(extra);
    args.push("--");
    let argv = cmd_txt(dir);
    args.extend(argv.iter().map(String::as_str));
    icepick(dir, &args)
}

fn status_line(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .find(|l| l.starts_with("status:"))
        .unwrap_or_default()
        .to_string()
}

/// An `llc` crash in a build (llvm/llvm-project#100855 as IR): captured as it is, with no
/// preprocessing and none of clang's flags, and reduced as IR: a few verified lines and a
/// RUN line that names the target the module's triple gave.
#[test]
fn an_llc_command_that_crashes_triages_to_verified_reduced_ir() {
    let (_tmp, dir) = scratch_copy(&corpus("llc-gh100855"));
    let o = triage(&dir, &[]);
    expect_success(&o);
    let status = status_line(&o);
    assert!(status.contains("captured, ir, classified"), "{status}");
    let case_dir = dir.join("case");
    let case = read_case(&case_dir);
    assert_eq!(case["status"], "captured");
    assert_eq!(case["input"], "input.ll");
    assert_eq!(case["bug_info"]["triple"], "riscv32-unknown-linux-gnu");
    let replay: Vec<&str> = case["replay_command"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    assert!(!replay.contains(&"-fno-crash-diagnostics"), "{replay:?}");
    assert!(
        replay.ends_with(&["-o", "/dev/null", "input.ll"]),
        "{replay:?}"
    );

    let ir = &case["ir"];
    assert_eq!(ir["tool"], "llc", "{ir:#}");
    assert_eq!(ir["verified"], true, "{ir:#}");
    assert!(ir["lines"].as_u64().unwrap() <= 10, "{ir:#}");
    let run_line = ir["run_line"].as_str().unwrap();
    assert!(run_line.contains("-mtriple=riscv32"), "{run_line}");
    assert!(run_line.contains("+xventanacondops"), "{run_line}");
    // The reduced command crashes the same way when run from the case directory.
    let o2 = run_json_argv(&case_dir, &ir["command"]);
    let err = String::from_utf8_lossy(&o2.stderr);
    assert!(err.contains("Cannot select"), "{err}");
    assert!(err.contains("RISCVISD::CZERO_EQZ"), "{err}");
    // Neither a source reduction nor a version table is made up for IR.
    assert!(case.get("reduction").is_none(), "{case:#}");
    let stages = case["triage"]["stages"].as_array().unwrap();
    let status_of = |name: &str| {
        stages
            .iter()
            .find(|s| s["stage"] == name)
            .map(|s| s["status"].as_str().unwrap().to_string())
    };
    assert_eq!(status_of("ir").as_deref(), Some("done"));
    assert_eq!(status_of("reduce").as_deref(), Some("not-needed"));

    let report = std::fs::read_to_string(case_dir.join("report.md")).unwrap();
    let title = report.lines().next().unwrap();
    assert!(title.contains("RISC-V"), "{title}");
    assert!(!title.contains("clang"), "{title}");
    assert!(!title.contains("0x"), "{title}");
    assert!(!report.contains("preprocessed input"), "{report}");
    // repro.sh replays the build's crash from anywhere.
    let r = run_repro(&case_dir);
    assert!(!r.status.success());
    assert!(
        String::from_utf8_lossy(&r.stderr).contains("Cannot select"),
        "{}",
        String::from_utf8_lossy(&r.stderr)
    );
}

/// An `opt -O2` stack overflow (llvm/llvm-project#68553 as IR): `-O2` becomes opt's own
/// textual pipeline, cut to the loop passes that overflow, on a nest of a few lines.
#[test]
fn an_opt_command_that_overflows_its_stack_triages_to_a_minimal_pipeline() {
    let (_tmp, dir) = scratch_copy(&corpus("opt-ir-gh68553"));
    let o = triage(&dir, &[]);
    expect_success(&o);
    let case_dir = dir.join("case");
    let case = read_case(&case_dir);
    assert_eq!(case["signature"]["kind"], "stack_overflow", "{case:#}");
    let ir = &case["ir"];
    assert_eq!(ir["tool"], "opt", "{ir:#}");
    assert_eq!(ir["verified"], true, "{ir:#}");
    let pipeline = ir["pipeline"].as_str().unwrap();
    assert!(pipeline.contains("indvars"), "{pipeline}");
    assert!(!pipeline.contains("default<"), "{pipeline}");
    assert!(!pipeline.contains("instcombine"), "{pipeline}");
    assert!(ir["lines"].as_u64().unwrap() <= 20, "{ir:#}");
    let o2 = run_json_argv(&case_dir, &ir["command"]);
    assert!(!o2.status.success(), "{}", ir["command"]);
}

/// A budget that runs out is a status in the case and the report, not an error: with one
/// second, capture uses it all, every later stage is skipped, and the triage exits 0 with
/// the captured (verified) case.
#[test]
fn a_budget_that_runs_out_skips_stages_and_says_so() {
    let (_tmp, dir) = scratch_copy(&corpus("fe-gh59446"));
    let o = triage(&dir, &["--budget", "1"]);
    expect_success(&o);
    let status = status_line(&o);
    assert!(status.contains("reduce skipped (budget)"), "{status}");
    let case = read_case(&dir.join("case"));
    let t = &case["triage"];
    assert_eq!(t["budget_seconds"], 1.0);
    assert_eq!(t["budget_ran_out"], true);
    let skipped = t["stages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["status"] == "skipped-budget")
        .count();
    assert!(skipped >= 4, "{t:#}");
    assert!(case.get("reduction").is_none(), "{case:#}");
    let report = std::fs::read_to_string(dir.join("case/report.md")).unwrap();
    assert!(report.contains("Triage budget of 1 s ran out"), "{report}");
    assert!(report.contains("`reduce` did not run"), "{report}");
}

/// A CodeGen crash that needs a C23 `#embed` (llvm/llvm-project#129903): `-E` expands the
/// directive and loses the crash, so capture keeps it (`-frewrite-includes`) and carries the
/// embedded file into the case; the replay, repro.sh from anywhere and the reduction find it
/// there.
#[test]
fn an_embed_crash_keeps_its_directive_and_carries_the_embedded_file() {
    let (_tmp, dir) = scratch_copy(&corpus("cg-embed-gh129903"));
    let case_dir = capture_case(&dir, &cmd_txt(&dir));
    let case = read_case(&case_dir);
    assert_eq!(case["status"], "captured", "{case:#}");
    assert_eq!(
        case["preprocessing"]["mode"], "rewrite-includes",
        "{case:#}"
    );
    assert_eq!(
        std::fs::read(case_dir.join("embed/data.bin")).unwrap(),
        b"abcdef"
    );
    let replay = case["replay_command"].to_string();
    assert!(replay.contains("--embed-dir=embed"), "{replay}");
    // The build's file moves away: the case alone reproduces.
    std::fs::remove_file(dir.join("data.bin")).unwrap();
    let r = run_repro(&case_dir);
    assert!(
        String::from_utf8_lossy(&r.stderr).contains("LLVM IR generation of declaration"),
        "{}",
        String::from_utf8_lossy(&r.stderr)
    );
    let o = icepick(
        &dir,
        &[
            "reduce",
            case_dir.to_str().unwrap(),
            "--jobs",
            "2",
            "--json",
        ],
    );
    expect_success(&o);
    let red = &read_case(&case_dir)["reduction"];
    assert_eq!(red["verified"], true, "{red:#}");
    let out = std::fs::read_to_string(case_dir.join(red["output"].as_str().unwrap())).unwrap();
    assert!(out.contains("#embed"), "{out}");
    assert!(out.len() < 103, "{out}");
}
