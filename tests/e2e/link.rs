//! Crashes at link time: a real clang 19 backend crash built the LTO way (the compiles write
//! bitcode and succeed, lld's LTO step crashes), through `capture`, `triage`, and `wrap` into
//! the store. The crash is corpus/x86-avx512-no-evex512's (llvm/llvm-project#113420): its
//! function carries its target features, so LTO's code generator meets them from bitcode.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::util::*;

const CLANG: &str = "/usr/lib/llvm-19/bin/clang";

/// The target and options of every compile and link here (no libc: the link stands alone).
const TARGET: [&str; 2] = ["--target=x86_64-linux-gnu", "-O1"];

/// A function that calls into `masks.c`'s crashing `f` from another file.
const CALLER_C: &str = "\
typedef short v32hi __attribute__((vector_size(64)));
unsigned f(v32hi a, v32hi b);
unsigned g(v32hi a) { return f(a, a) + 1; }
";

/// A project directory with `masks.c` and `caller.c`, compiled with `lto` (`-flto`,
/// `-flto=thin`) to `masks.o` and `caller.o`.
fn project(lto: &str) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("build");
    std::fs::create_dir(&dir).unwrap();
    std::fs::copy(
        corpus("x86-avx512-no-evex512").join("masks.c"),
        dir.join("masks.c"),
    )
    .unwrap();
    std::fs::write(dir.join("caller.c"), CALLER_C).unwrap();
    for name in ["masks", "caller"] {
        let o = Command::new(CLANG)
            .arg(lto)
            .args(TARGET)
            .args(["-c", &format!("{name}.c"), "-o", &format!("{name}.o")])
            .current_dir(&dir)
            .output()
            .unwrap();
        expect_success(&o);
    }
    (tmp, dir)
}

/// Puts the project's `masks.o` into `libmasks.a`, as a build's static library.
fn archive_masks(dir: &Path) {
    let ar = Command::new("/usr/lib/llvm-19/bin/llvm-ar")
        .args(["rcs", "libmasks.a", "masks.o"])
        .current_dir(dir)
        .output()
        .unwrap();
    expect_success(&ar);
}

/// The link a build runs: the driver with lld, a shared object with no libc.
fn link_argv(lto: &str, inputs: &[&str]) -> Vec<String> {
    let mut argv: Vec<String> = [CLANG, lto, "-fuse-ld=lld"]
        .iter()
        .chain(TARGET.iter())
        .chain(["-nostdlib", "-shared"].iter())
        .map(|s| s.to_string())
        .collect();
    argv.extend(inputs.iter().map(|s| s.to_string()));
    argv.extend(["-o".to_string(), "libm.so".to_string()]);
    argv
}

/// `icepick capture` of `argv` in `dir` into a case beside it, which must succeed and leave
/// every file of `dir` as it was (the link, its reruns and save-temps run in scratch).
fn capture_leaving_the_build_as_it_was(
    dir: &Path,
    argv: &[String],
) -> (serde_json::Value, PathBuf) {
    let before = snapshot(dir);
    let out = dir.parent().unwrap().join("case");
    let (code, case, stderr) = capture_json(dir, &out, argv);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        snapshot(dir),
        before,
        "the build's directory was written to"
    );
    (case, out)
}

/// Every file of `dir`, with its size and modification time.
fn snapshot(dir: &Path) -> Vec<(PathBuf, u64, std::time::SystemTime)> {
    walk(dir)
        .into_iter()
        .map(|p| {
            let m = std::fs::metadata(dir.join(&p)).unwrap();
            (p, m.len(), m.modified().unwrap())
        })
        .collect()
}

#[test]
fn a_full_lto_link_crash_becomes_an_llc_case_that_keeps_the_link() {
    let (_tmp, dir) = project("-flto");
    let argv = link_argv("-flto", &["caller.o", "masks.o"]);
    let (case, out) = capture_leaving_the_build_as_it_was(&dir, &argv);
    assert_eq!(case["status"], "captured", "{case:#}");
    let link = &case["link"];
    assert_eq!(link["lto"], "full", "{link:#}");
    assert_eq!(link["stage"], "codegen");
    assert_eq!(link["module"], "ld-temp.o");
    assert_eq!(link["signature_match"], "same");
    assert_eq!(link["linker"], "/usr/lib/llvm-19/bin/ld.lld");
    let inputs: Vec<(&str, &str)> = link["inputs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| (i["name"].as_str().unwrap(), i["kind"].as_str().unwrap()))
        .collect();
    assert_eq!(inputs, [("caller.o", "bitcode"), ("masks.o", "bitcode")]);
    // The crash needs masks.c's module only; ddmin over the two found it.
    assert_eq!(link["needed_inputs"], serde_json::json!(["masks.o"]));
    assert!(link["input_tests"].as_u64().unwrap() >= 2, "{link:#}");
    assert_eq!(link["command"][0], CLANG);
    // The case is llc on the merged module; it crashes alone, from anywhere.
    assert!(
        case["command"][0].as_str().unwrap().ends_with("/llc"),
        "{case:#}"
    );
    assert_eq!(case["input"], "input.bc");
    assert_eq!(case["signature"]["id"], link["link_signature"]);
    assert_eq!(
        case["signature"]["phase"],
        "X86 DAG->DAG Instruction Selection"
    );
    let r = run_repro(&out);
    assert!(String::from_utf8_lossy(&r.stderr).contains("Cannot select"));
    let stderr = std::fs::read_to_string(out.join("logs/link.stderr")).unwrap();
    assert!(stderr.contains("ld.lld"), "{stderr}");
}

#[test]
fn a_thin_lto_backend_crash_takes_the_module_of_the_file_that_crashed() {
    let (_tmp, dir) = project("-flto=thin");
    let argv = link_argv("-flto=thin", &["caller.o", "masks.o"]);
    // No backend's save-temps beside the build's objects.
    let (case, out) = capture_leaving_the_build_as_it_was(&dir, &argv);
    let link = &case["link"];
    assert_eq!(link["lto"], "thin", "{link:#}");
    assert_eq!(link["stage"], "codegen");
    assert_eq!(link["module"], "masks.o", "{link:#}");
    assert!(
        link["saved_as"]
            .as_str()
            .unwrap()
            .ends_with("masks.o.5.precodegen.bc"),
        "{link:#}"
    );
    // The module is masks.c's (with what it imported), not caller.c's.
    let dis = Command::new("/usr/lib/llvm-19/bin/llvm-dis")
        .args([out.join("input.bc").to_str().unwrap(), "-o", "-"])
        .output()
        .unwrap();
    let ir = String::from_utf8_lossy(&dis.stdout);
    assert!(ir.contains("define") && ir.contains("@f("), "{ir}");
    assert!(!ir.contains("define dso_local i32 @g("), "{ir}");
}

#[test]
fn an_archive_of_bitcode_members_is_an_input_the_case_describes() {
    let (_tmp, dir) = project("-flto");
    archive_masks(&dir);
    let out = dir.parent().unwrap().join("case");
    let argv = link_argv("-flto", &["caller.o", "libmasks.a"]);
    let (code, case, stderr) = capture_json(&dir, &out, &argv);
    assert_eq!(code, 0, "{stderr}");
    let archive = &case["link"]["inputs"][1];
    assert_eq!(archive["name"], "libmasks.a", "{case:#}");
    assert_eq!(archive["kind"], "archive");
    assert_eq!(archive["members"], 1);
    assert_eq!(archive["bitcode_members"], 1);
}

#[test]
fn triage_of_a_link_ends_in_a_verified_llc_test_and_a_report_of_the_link() {
    let (_tmp, dir) = project("-flto");
    let out = dir.parent().unwrap().join("t");
    let mut args = vec!["triage", "--jobs", "2", "--json", "--out"];
    args.push(out.to_str().unwrap());
    args.push("--");
    let argv = link_argv("-flto", &["caller.o", "masks.o"]);
    args.extend(argv.iter().map(String::as_str));
    let o = icepick(&dir, &args);
    expect_success(&o);
    let case = read_case(&out);
    assert_eq!(case["ir"]["verified"], true, "{case:#}");
    assert_eq!(case["ir"]["tool"], "llc");
    let report = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(report.contains("## Link"), "{report}");
    assert!(
        report.contains("in the link's full LTO code generator"),
        "{report}"
    );
    assert!(report.contains("| `masks.o` | bitcode |"), "{report}");
    assert!(
        report.contains("the link needs 1 to crash: `masks.o`"),
        "{report}"
    );
    assert!(report.contains(&argv.join(" ")), "{report}");
}

#[test]
fn wrap_on_a_link_line_records_an_lto_link_crash() {
    let (tmp, dir) = project("-flto=thin");
    let store = tmp.path().join("store");
    let argv = link_argv("-flto=thin", &["caller.o", "masks.o"]);
    let o = Command::new(BIN)
        .arg("wrap")
        .args(&argv)
        .current_dir(&dir)
        .env("ICEPICK_STORE", &store)
        .output()
        .unwrap();
    assert_ne!(o.status.code(), Some(0));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("crash captured as bucket"), "{err}");
    let listed = crate::store::list(&store);
    let b = &listed["buckets"][0];
    assert!(
        b["title"]
            .as_str()
            .unwrap()
            .starts_with("[clang, LTO link] "),
        "{b:#}"
    );
    let shown = icepick_json(&store, &dir, &["show", b["id"].as_str().unwrap(), "--json"]);
    let case_dir = PathBuf::from(shown["case_dir"].as_str().unwrap());
    assert_eq!(read_case(&case_dir)["link"]["lto"], "thin");
    // The store's worker triages it as `triage -- <link>` would: to a verified llc test.
    let o = crate::store::icepick_in(&store, &dir, &["triage", "--pending", "--jobs", "2"]);
    expect_success(&o);
    let case = read_case(&case_dir);
    assert_eq!(case["ir"]["verified"], true, "{case:#}");
    assert!(std::fs::read_to_string(case_dir.join("report.md"))
        .unwrap()
        .contains("## Link"));
}

#[test]
fn a_link_that_fails_without_crashing_is_not_a_crash() {
    let (_tmp, dir) = project("-flto");
    // caller.o alone: `f` is undefined, and -z defs makes that an error.
    let mut argv = link_argv("-flto", &["caller.o"]);
    argv.push("-Wl,-z,defs".into());
    let out = dir.parent().unwrap().join("case");
    let mut args = vec!["capture", "--out", out.to_str().unwrap(), "--"];
    args.extend(argv.iter().map(String::as_str));
    let o = icepick(&dir, &args);
    assert_eq!(
        o.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(!out.exists());
}

fn icepick_json(store: &Path, cwd: &Path, args: &[&str]) -> serde_json::Value {
    let o = crate::store::icepick_in(store, cwd, args);
    expect_success(&o);
    serde_json::from_slice(&o.stdout).unwrap()
}

/// Runs a link case's `prepare.txt` (the build's compiles before its link) in `dir`, and
/// writes the `compile_commands.json` a CMake build exports for its compiles.
fn prepare(dir: &Path) {
    let text = std::fs::read_to_string(dir.join("prepare.txt")).unwrap();
    let mut compdb = Vec::new();
    for line in text
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
    {
        let argv = shlex::split(line).unwrap();
        let is_source = |a: &&String| [".c", ".cc", ".cpp", ".hip"].iter().any(|e| a.ends_with(e));
        if let Some(src) = argv.iter().find(is_source) {
            compdb.push(serde_json::json!({
                "directory": dir, "arguments": argv, "file": src,
            }));
        }
        let o = Command::new(&argv[0])
            .args(&argv[1..])
            .current_dir(dir)
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "{line}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
    let json = serde_json::to_string_pretty(&compdb).unwrap();
    std::fs::write(dir.join("compile_commands.json"), json).unwrap();
}

/// Captures a corpus link case (its compiles first) and checks its expected.json; the
/// reproducer crashes on its own.
fn capture_link_case(name: &str) -> serde_json::Value {
    let (_tmp, dir) = scratch_copy(&corpus(name));
    prepare(&dir);
    let out = dir.join("case");
    let (code, case, stderr) = capture_json(&dir, &out, &cmd_txt(&dir));
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(case["status"], "captured", "{case:#}");
    check_expected(&case, &dir.join("expected.json"));
    let r = run_repro(&out);
    assert_ne!(r.status.code(), Some(0));
    case
}

#[test]
fn corpus_full_lto_riscv32_codegen_crash() {
    let case = capture_link_case("lto-full-rv-gh100855");
    assert_eq!(case["link"]["signature_match"], "same", "{case:#}");
    assert!(case["replay_command"].to_string().contains("llc"));
}

#[test]
fn corpus_thin_lto_optimizer_crash_with_no_stack_in_the_link() {
    let case = capture_link_case("lto-thin-opt-gh68553");
    // The backend thread's overflow printed nothing; opt on the imported module overflows.
    assert_eq!(case["link"]["signature_match"], "unidentified", "{case:#}");
    assert!(case["command"][0].as_str().unwrap().ends_with("/opt"));
    assert!(
        case["command"].to_string().contains("thinlto<O2>"),
        "{case:#}"
    );
}

#[test]
fn corpus_crash_that_needs_both_files_of_a_thin_lto_link() {
    let case = capture_link_case("lto-two-tu-x86-gh113420");
    assert_eq!(
        case["link"]["needed_inputs"],
        serde_json::json!(["a.o", "b.o"]),
        "{case:#}"
    );
    // Both sources, found through compile_commands.json, preprocessed into the case.
    let files = case["link"]["source"]["files"].as_array().unwrap();
    let inputs: Vec<&str> = files.iter().map(|f| f["input"].as_str().unwrap()).collect();
    assert_eq!(inputs, ["a.o", "b.o"], "{case:#}");
}

#[test]
fn triage_of_a_two_file_link_reduces_both_sources_and_the_link_still_crashes() {
    let (_tmp, dir) = scratch_copy(&corpus("lto-two-tu-x86-gh113420"));
    prepare(&dir);
    let out = dir.join("t");
    let mut args = vec![
        "triage",
        "--jobs",
        "2",
        "--out",
        out.to_str().unwrap(),
        "--",
    ];
    let argv = cmd_txt(&dir);
    args.extend(argv.iter().map(String::as_str));
    expect_success(&icepick(&dir, &args));
    let case = read_case(&out);
    let src = &case["link"]["source"];
    let r = &src["reduction"];
    assert_eq!(r["verified"], true, "{case:#}");
    assert!(
        r["bytes_after"].as_u64().unwrap() < r["bytes_before"].as_u64().unwrap(),
        "{r:#}"
    );
    // Compiled and linked by hand from a fresh directory, the reduced sources crash the link.
    let fresh = tempfile::tempdir().unwrap();
    for f in src["files"].as_array().unwrap() {
        let file = f["file"].as_str().unwrap();
        let base = Path::new(file).file_name().unwrap();
        std::fs::copy(out.join(file), fresh.path().join(base)).unwrap();
        expect_success(&run_json_argv(fresh.path(), &f["compile"]));
    }
    let o = run_json_argv(fresh.path(), &src["link"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("Cannot select"), "{err}");
    let report = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(report.contains("## Reduced source"), "{report}");
}

#[test]
fn corpus_thin_lto_archive_member_crash() {
    let case = capture_link_case("lto-archive-sve-gh102000");
    assert_eq!(
        case["link"]["module"], "libsve.a(GH102000.o at 102)",
        "{case:#}"
    );
    let archive = case["link"]["inputs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["kind"] == "archive")
        .cloned()
        .unwrap();
    assert_eq!(archive["bitcode_members"], 1, "{case:#}");
    // The member's source, found through compile_commands.json by the member's name: the
    // source test links its object in place of the archive.
    let src = &case["link"]["source"]["files"][0];
    assert_eq!(src["input"], "libsve.a", "{case:#}");
    assert!(
        src["file"].as_str().unwrap().ends_with("GH102000.ii"),
        "{case:#}"
    );
}

#[test]
fn corpus_hip_rdc_device_link_crash() {
    let case = capture_link_case("hip-rdc-amdgpu-si-flat");
    // The device link's lld crashed, not the host's: its options (gfx600) make the llc test.
    assert!(
        case["link"]["linker"].as_str().unwrap().ends_with("/lld"),
        "{case:#}"
    );
    assert!(
        case["command"].to_string().contains("-mcpu=gfx600"),
        "{case:#}"
    );
}

#[test]
fn hip_rdc_device_link_crash_through_the_new_offload_driver() {
    // The same build with --offload-new-driver: the device LTO runs inside
    // clang-linker-wrapper, which writes its save-temps into its working directory.
    let (_tmp, dir) = scratch_copy(&corpus("hip-rdc-amdgpu-si-flat"));
    let text = std::fs::read_to_string(dir.join("prepare.txt")).unwrap();
    let with_new_driver = text.replace("clang-19 ", "clang-19 --offload-new-driver ");
    std::fs::write(dir.join("prepare.txt"), with_new_driver).unwrap();
    prepare(&dir);
    let mut argv = cmd_txt(&dir);
    argv.insert(1, "--offload-new-driver".into());
    let (case, _) = capture_leaving_the_build_as_it_was(&dir, &argv);
    let link = &case["link"];
    assert!(
        link["linker"]
            .as_str()
            .unwrap()
            .ends_with("/clang-linker-wrapper"),
        "{link:#}"
    );
    assert!(
        link["saved_as"].as_str().unwrap().ends_with(".postopt.bc"),
        "{link:#}"
    );
    assert_eq!(link["signature_match"], "same", "{link:#}");
    check_expected(&case, &dir.join("expected.json"));
}

#[test]
fn a_link_through_gold_and_the_llvm_gold_plugin_uses_the_plugins_llvm() {
    // /usr/bin beside ld.gold holds an llc of another LLVM (clang-14's): the tools must come
    // from the LLVM of the plugin the link loads.
    let (_tmp, dir) = project("-flto");
    let mut argv = link_argv("-flto", &["masks.o"]);
    argv[2] = "-fuse-ld=gold".into();
    let out = dir.parent().unwrap().join("case");
    let (code, case, stderr) = capture_json(&dir, &out, &argv);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        case["link"]["linker"]
            .as_str()
            .unwrap()
            .ends_with("ld.gold"),
        "{case:#}"
    );
    assert_eq!(case["command"][0], "/usr/lib/llvm-19/bin/llc", "{case:#}");
    // The gold plugin prints the message and no stack: kind and message are what match.
    assert_eq!(case["link"]["signature_match"], "message", "{case:#}");
}

#[test]
fn every_link_case_of_the_corpus_captures_as_its_expected_json_says() {
    // The link cases (a prepare.txt with the build's compiles), evaluation set included:
    // each captures, its facts hold and its reproducer crashes alone.
    let mut names: Vec<String> = std::fs::read_dir(corpus(""))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("prepare.txt").is_file())
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert!(names.len() >= 11, "{names:?}");
    for name in &names {
        let case = capture_link_case(name);
        assert!(case["link"]["lto"].is_string(), "{name}: {case:#}");
    }
}

#[test]
fn a_thin_lto_link_through_a_response_file_and_l_writes_nothing_into_the_build() {
    // GN and Meson links name their objects in a response file; libraries come through -L/-l.
    // ThinLTO writes a backend's save-temps beside the file its module came from: each must
    // be copied into scratch first.
    let (_tmp, dir) = project("-flto=thin");
    archive_masks(&dir);
    std::fs::write(dir.join("objs.rsp"), "caller.o\n").unwrap();
    let argv = link_argv("-flto=thin", &["@objs.rsp", "-L.", "-lmasks"]);
    let (case, _) = capture_leaving_the_build_as_it_was(&dir, &argv);
    assert!(
        case["link"]["module"]
            .as_str()
            .unwrap()
            .contains("libmasks.a(masks.o"),
        "{case:#}"
    );
}
