//! `icepick capture` on an offload compile whose crashing job the output does not name, and
//! the reproducer files clang writes on a crash (moved into the case, never written again).

use std::path::Path;
use std::process::Command;

use crate::util::*;

fn strings(v: &serde_json::Value) -> Vec<String> {
    v.as_array()
        .unwrap_or_else(|| panic!("not an array: {v}"))
        .iter()
        .map(|a| a.as_str().unwrap().to_string())
        .collect()
}

#[test]
fn two_arch_hip_device_crash_without_frames_finds_the_arch() {
    let (_tmp, dir) = scratch_copy(&corpus("amdgpu-si-flat-two-arch"));
    let argv = cmd_txt(&dir);
    let out = dir.join("case");
    let (code, case, stderr) = capture_json(&dir, &out, &argv);
    assert_eq!(code, 0, "{stderr}\n{case:#}");
    // The premise: the user's command names no arch and prints no stack.
    let original = std::fs::read_to_string(out.join("original.stderr")).unwrap();
    assert!(original.contains("Cannot select"), "{original}");
    // (Only the names of clang's reproducer files, after the `****` banner, say gfx601.)
    let diagnostics = original.split("*****").next().unwrap();
    assert!(
        !original.contains("Stack dump:") && !diagnostics.contains("gfx"),
        "{original}"
    );
    assert_eq!(case["status"], "captured", "{case:#}");
    assert_eq!(case["job"]["kind"], "device");
    assert_eq!(case["job"]["offload_arch"], "gfx601");
    assert_eq!(case["preprocessing"]["status"], "reproduced");
    // The cc1 line (from -###) is the crashing device job's, with its triple.
    let cc1 = strings(&case["bug_info"]["cc1"]);
    assert!(
        cc1.windows(2).any(|w| w == ["-target-cpu", "gfx601"]),
        "{cc1:?}"
    );
    assert_eq!(case["bug_info"]["triple"], "amdgcn-amd-amdhsa", "{case:#}");
    check_expected(&case, &dir.join("expected.json"));
    // Preprocessing is the gfx601 device job alone.
    let pp = strings(&case["preprocessing"]["command"]);
    assert!(pp.iter().any(|a| a == "--cuda-device-only"), "{pp:?}");
    assert!(pp.iter().any(|a| a == "-E"), "{pp:?}");
    let arches: Vec<&String> = pp.iter().filter(|a| a.contains("offload-arch")).collect();
    assert_eq!(arches, ["--offload-arch=gfx601"], "{pp:?}");
    // The replay compiles the preprocessed file as HIP for that job.
    let replay = strings(&case["replay_command"]);
    assert!(
        replay.windows(2).any(|w| w == ["-x", "hip"])
            && replay.iter().any(|a| a == "--offload-arch=gfx601")
            && !replay.iter().any(|a| a.contains("gfx90a")),
        "{replay:?}"
    );
    let r = run_repro(&out);
    let err = String::from_utf8_lossy(&r.stderr);
    assert_ne!(r.status.code(), Some(0), "{err}");
    assert!(
        err.contains("Cannot select") && err.contains("SelectionDAGISel::SelectCodeCommon"),
        "{err}"
    );
}

#[test]
fn single_arch_hip_device_crash_is_the_device_job() {
    let (_tmp, dir) = scratch_copy(&corpus("amdgpu-si-flat-two-arch"));
    let argv: Vec<String> = cmd_txt(&dir)
        .into_iter()
        .filter(|a| a != "--offload-arch=gfx90a")
        .chain(["-o".to_string(), "/dev/null".to_string()])
        .collect();
    let out = dir.join("case");
    let (code, case, stderr) = capture_json(&dir, &out, &argv);
    assert_eq!(code, 0, "{stderr}\n{case:#}");
    assert_eq!(case["status"], "captured", "{case:#}");
    check_expected(&case, &dir.join("expected.json"));
    let r = run_repro(&out);
    assert_ne!(r.status.code(), Some(0));
}

/// Every file under `dir`, recursively, relative to it.
fn files_under(dir: &Path) -> Vec<String> {
    walk(dir)
        .into_iter()
        .filter(|p| !dir.join(p).is_dir())
        .map(|p| p.to_string_lossy().into_owned())
        .collect()
}

#[test]
fn capture_moves_clangs_reproducer_into_the_case() {
    let work = tempfile::tempdir().unwrap();
    let tmpdir = tempfile::tempdir().unwrap();
    std::fs::write(
        work.path().join("boom.c"),
        "int f(int x) {\n#pragma clang __debug crash\n  return x;\n}\n",
    )
    .unwrap();
    let out = work.path().join("case");
    let o = Command::new(BIN)
        .args(["capture", "--json", "--out", out.to_str().unwrap(), "--"])
        .args(["clang-19", "-O1", "-c", "boom.c", "-o", "boom.o"])
        .current_dir(work.path())
        .env("TMPDIR", tmpdir.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{stderr}");
    let case: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    // The user's run wrote the pair (clang names it in original.stderr) …
    let original = std::fs::read_to_string(out.join("original.stderr")).unwrap();
    assert!(
        original.contains("Preprocessed source(s) and associated run script(s)"),
        "{original}"
    );
    // … and nothing clang wrote is left in the temp directory.
    let left: Vec<String> = files_under(tmpdir.path())
        .into_iter()
        .filter(|f| {
            [".sh", ".c", ".i", ".ii", ".cpp"]
                .iter()
                .any(|e| f.ends_with(e))
        })
        .collect();
    assert!(left.is_empty(), "left in TMPDIR: {left:?}");
    // The case holds the pair, named case-relative in case.json.
    let files = strings(&case["crash"]["reproducer_files"]);
    assert_eq!(files.len(), 2, "{files:?}");
    for f in &files {
        assert!(f.starts_with("clang-reproducer/"), "{f}");
        assert!(out.join(f).is_file(), "{f}");
    }
    assert!(files.iter().any(|f| f.ends_with(".sh")), "{files:?}");
    assert!(files.iter().any(|f| f.ends_with(".c")), "{files:?}");
    let src = files.iter().find(|f| f.ends_with(".c")).unwrap();
    let text = std::fs::read_to_string(out.join(src)).unwrap();
    assert!(text.contains("__debug crash"), "{text}");
    // Every rerun says -fno-crash-diagnostics, so later stages write no new pairs either.
    let replay = strings(&case["replay_command"]);
    assert!(
        replay.iter().any(|a| a == "-fno-crash-diagnostics"),
        "{replay:?}"
    );
    let pp = strings(&case["preprocessing"]["command"]);
    assert!(pp.iter().any(|a| a == "-fno-crash-diagnostics"), "{pp:?}");
    // The replay, run as icepick's later stages run it, crashes and writes nothing to TMPDIR.
    let replay_tmp = tempfile::tempdir().unwrap();
    let r = Command::new(&replay[0])
        .args(&replay[1..])
        .current_dir(&out)
        .env("TMPDIR", replay_tmp.path())
        .output()
        .unwrap();
    assert_ne!(r.status.code(), Some(0));
    let written = files_under(replay_tmp.path());
    assert!(written.is_empty(), "{written:?}");
}
