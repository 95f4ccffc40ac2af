//! `icepick capture` on real crashes: the repository's corpus (cases written for icepick and
//! crashes from public LLVM bug reports), each through the real compiler.

use crate::util::*;

/// Captures a repository corpus case in a scratch copy and checks its expected.json.
fn capture_corpus_case(name: &str) -> serde_json::Value {
    let (_tmp, dir) = scratch_copy(&corpus(name));
    let out = dir.join("case");
    let (code, case, stderr) = capture_json(&dir, &out, &cmd_txt(&dir));
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(case["status"], "captured", "{case:#}");
    check_expected(&case, &dir.join("expected.json"));
    // The reproducer crashes from anywhere, on its own.
    let r = run_repro(&out);
    assert_ne!(r.status.code(), Some(0));
    let err = String::from_utf8_lossy(&r.stderr);
    assert!(
        err.contains("Stack dump:") || err.contains("PLEASE submit"),
        "{err}"
    );
    case
}

#[test]
fn destructor_lookup_crash_in_a_project_with_headers_and_defines() {
    let case = capture_corpus_case("destructor-lookup");
    // Preprocessing inlined the project header and the standard library: no -I, no -D left.
    let replay: Vec<&str> = case["replay_command"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    assert!(
        !replay
            .iter()
            .any(|a| a.starts_with("-I") || a.starts_with("-D")),
        "{replay:?}"
    );
    assert_eq!(case["preprocessing"]["mode"], "full");
    assert_eq!(case["reproducibility"]["same_signature"], 3);
}

#[test]
fn two_arch_hip_device_compile_finds_the_crashing_arch() {
    let case = capture_corpus_case("hip-two-arch");
    let listed = case["job"]["listed"].as_array().unwrap();
    assert!(listed.iter().any(|j| j == "device:gfx90a"), "{listed:?}");
    // The pragma fires in the preprocessor, so only -frewrite-includes input keeps it.
    assert_eq!(case["preprocessing"]["mode"], "rewrite-includes");
    let replay = case["replay_command"].to_string();
    assert!(
        replay.contains("--offload-arch=gfx1030") && !replay.contains("gfx90a"),
        "{replay}"
    );
}

#[test]
fn riscv_vector_cross_compile() {
    let case = capture_corpus_case("rv-vector-pragma");
    let replay = case["replay_command"].to_string();
    assert!(replay.contains("-march=rv64gcv"), "{replay}");
}

/// Captures a corpus case of a public LLVM bug report; `strip` removes flags from its cmd.txt
/// first. The facts of its `expected.json` must hold for the capture.
fn capture_report_case(name: &str, strip: &[&str]) -> serde_json::Value {
    let (_tmp, dir) = scratch_copy(&corpus(name));
    let argv: Vec<String> = cmd_txt(&dir)
        .into_iter()
        .filter(|a| !strip.contains(&a.as_str()))
        .collect();
    let out = dir.join("case");
    let (code, case, stderr) = capture_json(&dir, &out, &argv);
    assert_eq!(code, 0, "{stderr}\n{case:#}");
    assert_eq!(case["status"], "captured");
    assert_eq!(case["preprocessing"]["status"], "reproduced");
    assert!(out.join(case["input"].as_str().unwrap()).is_file());
    check_expected(&case, &dir.join("expected.json"));
    case
}

fn frames(case: &serde_json::Value) -> Vec<String> {
    case["signature"]["frames"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f.as_str().unwrap().to_string())
        .collect()
}

#[test]
fn gh59446_frontend_segfault_on_clang16() {
    let case = capture_report_case("fe-gh59446", &[]);
    assert_eq!(case["crash"]["kind"], "segfault");
    assert_eq!(
        frames(&case)[..2],
        [
            "clang::Sema::getDestructorName",
            "clang::Parser::ParseUnqualifiedId"
        ]
    );
    let stack = case["crash"]["pretty_stack"].to_string();
    assert!(
        stack.contains("parsing function body 'GH59446::f'"),
        "{stack}"
    );
    assert_eq!(case["job"]["kind"], "single");
}

#[test]
fn gh75010_riscv_backend_fatal_error() {
    let case = capture_report_case("rv-gh75010", &[]);
    assert_eq!(case["crash"]["kind"], "fatal_error");
    assert_eq!(
        case["crash"]["message"],
        "Invalid size request on a scalable vector."
    );
    assert_eq!(case["signature"]["phase"], "declare-to-assign");
    let f = frames(&case);
    assert!(
        f.contains(&"llvm::at::trackAssignments".to_string()),
        "{f:?}"
    );
}

#[test]
fn amdgpu_cannot_select_is_the_gfx600_device_job() {
    let case = capture_report_case("amdgpu-si-flat", &[]);
    assert_eq!(case["crash"]["kind"], "fatal_error");
    assert!(case["crash"]["message"]
        .as_str()
        .unwrap()
        .starts_with("Cannot select:"));
    assert_eq!(
        case["signature"]["phase"],
        "AMDGPU DAG->DAG Pattern Instruction Selection"
    );
    assert_eq!(case["job"]["kind"], "device");
    assert_eq!(case["job"]["offload_arch"], "gfx600");
    assert_eq!(frames(&case)[0], "llvm::SelectionDAGISel::SelectCodeCommon");
}

#[test]
fn gh68553_stack_overflow_without_a_stack_dump_is_rerun_out_of_process() {
    // Without -fno-integrated-cc1 the driver dies with SIGSEGV and prints nothing.
    let case = capture_report_case("opt-gh68553", &["-fno-integrated-cc1"]);
    assert_eq!(case["crash"]["kind"], "stack_overflow");
    assert_eq!(case["capture"]["added_flags"][0], "-fno-integrated-cc1");
    assert!(case["crash"]["frames"].as_array().unwrap().len() > 100);
    let f = frames(&case);
    assert!(
        f.iter()
            .any(|x| x.contains("computeKnownBits") || x.contains("ScalarEvolution")),
        "{f:?}"
    );
    let replay = case["replay_command"].to_string();
    assert!(
        replay.contains("-fno-integrated-cc1") && replay.contains("-O2"),
        "{replay}"
    );
}

#[test]
fn from_clang_reproducer_script_gives_the_same_signature() {
    let (_tmp, dir) = scratch_copy(&corpus("rv-vector-pragma"));
    let argv = cmd_txt(&dir);
    let out = capture_reproducer(&dir, &argv);
    let from_script = read_case(&out);
    assert_eq!(from_script["preprocessing"]["mode"], "given");
    assert_eq!(from_script["job"]["kind"], "single");

    let (code, direct, _) = capture_json(&dir, &dir.join("case2"), &argv);
    assert_eq!(code, 0);
    assert_eq!(from_script["signature"]["id"], direct["signature"]["id"]);
}

#[test]
fn from_compilation_database() {
    let (_tmp, dir) = scratch_copy(&corpus("destructor-lookup"));
    let argv = cmd_txt(&dir);
    let db = serde_json::json!([
        {"directory": dir, "file": "src/other.cpp", "arguments": ["clang++-16", "-c", "src/other.cpp"]},
        {"directory": dir, "file": "src/widget.cpp", "arguments": argv},
    ]);
    std::fs::write(dir.join("compile_commands.json"), db.to_string()).unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    let out = elsewhere.path().join("case");
    let o = icepick(
        elsewhere.path(),
        &[
            "capture",
            "--json",
            "--out",
            out.to_str().unwrap(),
            "--compdb",
            dir.join("compile_commands.json").to_str().unwrap(),
            "--file",
            dir.join("src/widget.cpp").to_str().unwrap(),
        ],
    );
    expect_success(&o);
    let case: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        case["signature"]["frames"][0],
        "clang::Sema::getDestructorName"
    );
    assert_eq!(case["cwd"], dir.to_str().unwrap());
}

#[test]
fn human_output_names_the_case_and_report_reads_it_back() {
    let (_tmp, dir) = scratch_copy(&corpus("rv-vector-pragma"));
    let mut args = vec!["capture".to_string(), "--".to_string()];
    args.extend(cmd_txt(&dir));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let o = icepick(&dir, &args);
    assert_eq!(o.status.code(), Some(0));
    let stdout = String::from_utf8_lossy(&o.stdout);
    let case_line = stdout.lines().find(|l| l.starts_with("case:")).unwrap();
    let case_dir = std::path::PathBuf::from(case_line.trim_start_matches("case:").trim());
    assert!(
        case_dir.starts_with(&dir)
            && case_dir
                .file_name()
                .unwrap()
                .to_str()
                .unwrap()
                .starts_with("icepick-")
    );
    let md = icepick(&dir, &["report", case_dir.to_str().unwrap()]);
    assert_eq!(md.status.code(), Some(0));
    let md = String::from_utf8_lossy(&md.stdout);
    assert!(md.starts_with("# \\[clang\\] illegal instruction"), "{md}");
    assert!(md.contains("## Reproducer"));
    // The capturing machine's facts, taken at capture time.
    let uname = |flag: &str| {
        let o = std::process::Command::new("uname")
            .arg(flag)
            .output()
            .unwrap();
        String::from_utf8(o.stdout).unwrap().trim().to_string()
    };
    let host_line = format!("- host: Linux {} {}", uname("-r"), uname("-m"));
    assert!(md.contains(&host_line), "{host_line:?} in\n{md}");
    let json = icepick(
        &dir,
        &["report", "--format", "json", case_dir.to_str().unwrap()],
    );
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(v["schema_version"], 1);
    assert_eq!(v["host"]["kernel"]["release"], uname("-r"));
    assert_eq!(v["host"]["riscv"], cfg!(target_arch = "riscv64"));
}
