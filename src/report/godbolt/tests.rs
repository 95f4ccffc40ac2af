//! Compiler Explorer ids, URL encoding and the link rule.

use base64::Engine as _;
use serde_json::json;

use super::*;
use crate::case::tests::sample_case;

/// The inverse of [`clientstate_url`]: the ClientState JSON in a URL.
fn decode(url: &str) -> Value {
    let b64 = url
        .strip_prefix("https://godbolt.org/clientstate/")
        .expect("a clientstate URL");
    assert!(
        !b64.contains(['+', '/', '=']),
        "unescaped base64 specials in {b64}"
    );
    let b64 = b64
        .replace("%2B", "+")
        .replace("%2F", "/")
        .replace("%3D", "=");
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(b64)
        .expect("standard base64");
    serde_json::from_slice(&bytes).expect("JSON")
}

#[test]
fn ids_are_the_ones_compiler_explorer_lists() {
    // Checked against etc/config/c++.amazon.properties and c.amazon.properties of
    // compiler-explorer/compiler-explorer (group.clang.compilers, group.cclang.compilers,
    // group.gcc86.compilers, group.cgcc86.compilers, group.clangx86trunk.compilers).
    let cxx = |m| clang_id(m, CeLang::Cxx).map(|(id, _)| id);
    let c = |m| clang_id(m, CeLang::C).map(|(id, _)| id);
    assert_eq!(cxx(14).as_deref(), Some("clang1400"));
    assert_eq!(cxx(15).as_deref(), Some("clang1500"));
    assert_eq!(cxx(16).as_deref(), Some("clang1600"));
    assert_eq!(cxx(17).as_deref(), Some("clang1701"));
    assert_eq!(cxx(18).as_deref(), Some("clang1810"));
    assert_eq!(cxx(19).as_deref(), Some("clang1910"));
    assert_eq!(cxx(20).as_deref(), Some("clang2010"));
    assert_eq!(cxx(21).as_deref(), Some("clang2110"));
    assert_eq!(cxx(13).as_deref(), Some("clang1301"));
    assert_eq!(c(19).as_deref(), Some("cclang1910"));
    assert_eq!(c(14).as_deref(), Some("cclang1400"));
    assert_eq!(c(17).as_deref(), Some("cclang1701"));
    assert_eq!(clang_id(19, CeLang::Cxx).map(|(_, v)| v), Some("19.1.0"));
    assert_eq!(cxx(22), None, "no release of 22 on Compiler Explorer");
    assert_eq!(cxx(6), None);
    assert_eq!(gcc_id(12, 2, CeLang::Cxx).as_deref(), Some("g122"));
    assert_eq!(gcc_id(12, 2, CeLang::C).as_deref(), Some("cg122"));
    assert_eq!(gcc_id(15, 2, CeLang::Cxx).as_deref(), Some("g152"));
    assert_eq!(gcc_id(12, 6, CeLang::Cxx), None);
    assert_eq!(
        trunk_id(Family::Clang, CeLang::Cxx, true),
        "clang_assertions_trunk"
    );
    assert_eq!(
        trunk_id(Family::Clang, CeLang::C, true),
        "cclang_assertions_trunk"
    );
    assert_eq!(trunk_id(Family::Clang, CeLang::Cxx, false), "clang_trunk");
    assert_eq!(trunk_id(Family::Gcc, CeLang::C, true), "cgsnapshot");
}

#[test]
fn releases_come_from_the_version_line() {
    assert_eq!(
        release("Debian clang version 19.1.7 (3~deb12u1)"),
        Some((19, 1))
    );
    assert_eq!(release("Debian clang version 14.0.6"), Some((14, 0)));
    assert_eq!(
        release("clang version 22.0.0git (https://github.com/llvm/llvm-project abc)"),
        Some((22, 0))
    );
    assert_eq!(release("gcc (Debian 12.2.0-14) 12.2.0"), Some((12, 2)));
    assert_eq!(
        release("Apple clang version 15.0.0 (clang-1500.3.9.4)"),
        None
    );
    assert_eq!(release("some compiler"), None);
}

#[test]
fn the_url_decodes_back_to_the_client_state() {
    // Bytes chosen so the base64 has '+', '/' and padding to escape.
    let source = "int f(int a) { return a >> 1 ? ~a : a; } // ü?>\n";
    let state = client_state(
        CeLang::Cxx,
        source,
        &[("clang1910".into(), "-O2 -x c++-cpp-output".into())],
    );
    let raw = base64::engine::general_purpose::STANDARD.encode(state.to_string());
    assert!(raw.contains('+') && raw.contains('/'), "{raw}");
    let url = clientstate_url(&state);
    let back = decode(&url);
    assert_eq!(back, state);
    assert_eq!(back["sessions"][0]["id"], 1);
    assert_eq!(back["sessions"][0]["language"], "c++");
    assert_eq!(back["sessions"][0]["source"], source);
    assert_eq!(back["sessions"][0]["compilers"][0]["id"], "clang1910");
    assert_eq!(
        back["sessions"][0]["compilers"][0]["options"],
        "-O2 -x c++-cpp-output"
    );
}

#[test]
fn options_drop_the_compiler_inputs_outputs_and_local_paths() {
    let argv: Vec<String> = [
        "/usr/bin/clang++-16",
        "-std=c++17",
        "-O1",
        "-I",
        "include",
        "-isystem/home/alice/sdk",
        "-c",
        "-fno-crash-diagnostics",
        "-o",
        "/dev/null",
        "-MD",
        "-MF",
        "widget.d",
        "--target=riscv64-linux-gnu",
        "-x",
        "c++-cpp-output",
        "input.ii",
    ]
    .map(String::from)
    .to_vec();
    let cmd = CompilerCommand::from_argv(&argv).unwrap();
    assert_eq!(
        ce_options(&cmd),
        [
            "-std=c++17",
            "-O1",
            "--target=riscv64-linux-gnu",
            "-x",
            "c++-cpp-output"
        ]
    );
}

fn small_case() -> Case {
    let mut case = sample_case();
    case.replay_command = [
        "clang",
        "-O2",
        "-c",
        "-o",
        "/dev/null",
        "-x",
        "c",
        "input.i",
    ]
    .map(String::from)
    .to_vec();
    case
}

#[test]
fn a_small_preprocessed_input_gets_a_link_on_the_same_major_and_assertions_trunk() {
    let case = small_case();
    let link = compiler_explorer(&case, None, Some(b"int f(void) { return 0; }\n"));
    let state = decode(link.url.as_deref().expect(&link.note));
    let s = &state["sessions"][0];
    assert_eq!(s["language"], "c");
    assert_eq!(s["source"], "int f(void) { return 0; }\n");
    assert_eq!(s["compilers"][0]["id"], "cclang1910");
    assert_eq!(s["compilers"][0]["options"], "-O2 -x c");
    assert_eq!(s["compilers"][1]["id"], "cclang_assertions_trunk");
    assert!(
        link.note.contains("x86-64 clang 19.1.0") && link.note.contains("preprocessed input"),
        "{}",
        link.note
    );
}

#[test]
fn a_verified_reduction_is_preferred_with_its_own_command() {
    let mut case = small_case();
    case.reduction = Some(json!({
        "verified": true,
        "output": "reduced.i",
        "replay_command": ["clang", "-O1", "-c", "-o", "/dev/null", "-x", "c", "reduced.i"],
    }));
    let link = compiler_explorer(&case, Some(b"int g;\n"), Some(b"big input"));
    let state = decode(link.url.as_deref().unwrap());
    assert_eq!(state["sessions"][0]["source"], "int g;\n");
    assert_eq!(state["sessions"][0]["compilers"][0]["options"], "-O1 -x c");
    assert!(
        link.note.starts_with("the reduced test case"),
        "{}",
        link.note
    );
    // Not verified: the preprocessed input, with the replay command.
    case.reduction.as_mut().unwrap()["verified"] = false.into();
    let link = compiler_explorer(&case, Some(b"int g;\n"), Some(b"int h;\n"));
    let state = decode(link.url.as_deref().unwrap());
    assert_eq!(state["sessions"][0]["source"], "int h;\n");
}

#[test]
fn the_flags_minimal_command_gives_the_options() {
    let mut case = small_case();
    case.flags = Some(json!({
        "reproduced": true,
        "minimal_command": ["clang", "-c", "-o", "/dev/null", "-x", "c", "input.i"],
    }));
    let link = compiler_explorer(&case, None, Some(b"int h;\n"));
    let state = decode(link.url.as_deref().unwrap());
    assert_eq!(state["sessions"][0]["compilers"][0]["options"], "-x c");
}

#[test]
fn large_inputs_and_long_urls_get_no_link_and_say_why() {
    let case = small_case();
    let big = vec![b'x'; MAX_SOURCE + 1];
    let link = compiler_explorer(&case, None, Some(&big));
    assert_eq!(link.url, None);
    assert!(link.note.contains("65537 bytes"), "{}", link.note);
    let long = vec![b'y'; 7000];
    let link = compiler_explorer(&case, None, Some(&long));
    assert_eq!(link.url, None);
    assert!(link.note.contains("characters long"), "{}", link.note);
}

#[test]
fn an_unknown_release_falls_back_to_trunk_and_says_so() {
    let mut case = small_case();
    case.compiler.version = "clang version 22.0.0git (https://github.com/llvm/llvm-project)".into();
    let link = compiler_explorer(&case, None, Some(b"int h;\n"));
    let state = decode(link.url.as_deref().unwrap());
    assert_eq!(state["sessions"][0]["compilers"][0]["id"], "cclang_trunk");
    assert!(link.note.contains("no release matching"), "{}", link.note);
}

#[test]
fn a_cross_target_compile_on_x86_keeps_its_target() {
    let mut case = small_case();
    case.replay_command = [
        "/usr/bin/clang-19",
        "--target=riscv64-linux-gnu",
        "-march=rv64gcv",
        "-O2",
        "-c",
        "-o",
        "/dev/null",
        "-x",
        "c",
        "input.c",
    ]
    .map(String::from)
    .to_vec();
    let link = compiler_explorer(&case, None, Some(b"int h;\n"));
    let state = decode(link.url.as_deref().unwrap());
    assert_eq!(
        state["sessions"][0]["compilers"][0]["options"],
        "--target=riscv64-linux-gnu -march=rv64gcv -O2 -x c"
    );
}

fn riscv64_frames() -> Vec<crate::crash::Frame> {
    serde_json::from_value(json!([
        {"index": 0, "symbol": null, "module": "/lib/riscv64-linux-gnu/libLLVM.so.19.1", "offset": 1234},
        {"index": 1, "symbol": null, "module": "/lib/riscv64-linux-gnu/libc.so.6", "offset": 99},
    ]))
    .unwrap()
}

#[test]
fn the_compiler_arch_comes_from_the_emulator_or_the_library_paths() {
    let v = json!({"emulator": ["/usr/bin/qemu-riscv64-static", "-L", "/srv/rv64"]});
    assert_eq!(compiler_arch(&v).as_deref(), Some("riscv64"));
    let mut case = sample_case();
    assert_eq!(compiler_arch(&serde_json::to_value(&case).unwrap()), None);
    case.crash.frames = riscv64_frames();
    assert_eq!(
        compiler_arch(&serde_json::to_value(&case).unwrap()).as_deref(),
        Some("riscv64")
    );
}

#[test]
fn a_riscv64_compiler_gets_a_link_only_when_x86_crashes_the_same_way() {
    let mut case = small_case();
    case.crash.frames = riscv64_frames();
    let link = compiler_explorer(&case, None, Some(b"int h;\n"));
    assert_eq!(link.url, None);
    assert!(link.note.contains("riscv64 build"), "{}", link.note);

    let evidence = |outcome: &str| {
        json!({
            "verdict": "compiler-bug-riscv-build", "confidence": "high", "rule": 4,
            "reason": "r", "decided_by": ["E5-v-off", "E6"],
            "evidence": [{"id": "E6", "experiment": "x", "ran": true,
                "host_or_emulator": "host x86_64", "outcome": outcome, "detail": "d"}]
        })
    };
    case.classification = Some(evidence("no-crash"));
    let link = compiler_explorer(&case, None, Some(b"int h;\n"));
    assert_eq!(link.url, None);
    assert!(
        link.note.contains("compiler-bug-riscv-build"),
        "{}",
        link.note
    );

    case.classification = Some(evidence("same-crash-coarse"));
    let link = compiler_explorer(&case, None, Some(b"int h;\n"));
    let state = decode(link.url.as_deref().expect(&link.note));
    // The riscv64 compiler's default target is riscv64: the x86-64 one must be told.
    assert_eq!(
        state["sessions"][0]["compilers"][0]["options"],
        "--target=riscv64-linux-gnu -O2 -x c"
    );
    assert!(link.note.contains("E6"), "{}", link.note);
}

#[test]
fn gcc_cases_use_gcc_ids_and_cross_gcc_gets_no_link() {
    let mut case = small_case();
    case.crash.family = Family::Gcc;
    case.compiler.version = "gcc (Debian 12.2.0-14) 12.2.0".into();
    case.replay_command = ["gcc", "-O2", "-c", "-x", "cpp-output", "input.i"]
        .map(String::from)
        .to_vec();
    let link = compiler_explorer(&case, None, Some(b"int h;\n"));
    let state = decode(link.url.as_deref().unwrap());
    assert_eq!(state["sessions"][0]["compilers"][0]["id"], "cg122");
    assert_eq!(state["sessions"][0]["compilers"][1]["id"], "cgsnapshot");
    case.replay_command[0] = "riscv64-linux-gnu-gcc-12".into();
    let link = compiler_explorer(&case, None, Some(b"int h;\n"));
    assert_eq!(link.url, None);
    assert!(link.note.contains("riscv64"), "{}", link.note);
}

#[test]
fn an_unreliable_case_without_a_reduction_gets_no_link() {
    let mut case = small_case();
    case.status = CaseStatus::LostInPreprocessing;
    let link = compiler_explorer(&case, None, Some(b"int h;\n"));
    assert_eq!(link.url, None);
    assert!(link.note.contains("captured"), "{}", link.note);
}

fn llc_case() -> Case {
    let mut case = sample_case();
    case.crash.family = Family::LlvmTool;
    case.compiler.version = "Debian LLVM version 19.1.7".into();
    case.input = "input.ll".into();
    case.replay_command = [
        "/usr/lib/llvm-19/bin/llc",
        "-O2",
        "-o",
        "/dev/null",
        "input.ll",
    ]
    .map(String::from)
    .to_vec();
    case
}

/// An `llc` crash's link opens its input IR, byte for byte, in an LLVM IR session with the
/// replay command's flags (no input or output) on `llc` of the same major and `llc` trunk
/// with assertions.
#[test]
fn an_llc_crash_links_its_input_ir_with_its_flags() {
    let ir =
        "; ModuleID = 'x'\ntarget triple = \"riscv32\"\ndefine void @c(i64 %0) {\n  ret void\n}\n";
    let link = compiler_explorer(&llc_case(), None, Some(ir.as_bytes()));
    let state = decode(link.url.as_deref().expect(&link.note));
    let s = &state["sessions"][0];
    assert_eq!(s["language"], "llvm");
    assert_eq!(s["source"], ir);
    assert_eq!(s["compilers"][0]["id"], "llc1910");
    assert_eq!(s["compilers"][0]["options"], "-O2");
    assert_eq!(s["compilers"][1]["id"], "llc-assertions-trunk");
    assert_eq!(s["compilers"][1]["options"], "-O2");
    assert!(
        link.note
            .starts_with("the input IR with `-O2` on `llc` 19.1.0"),
        "{}",
        link.note
    );
}

#[test]
fn an_llc_crash_without_a_fitting_text_input_gets_no_link_and_says_why() {
    let case = llc_case();
    let none = |input: Option<&[u8]>| {
        let l = compiler_explorer(&case, None, input);
        assert!(l.url.is_none());
        l.note
    };
    assert!(none(None).contains("not in the case directory"));
    assert!(none(Some(b"BC\xc0\xde\x35\x14")).contains("not text"));
    let big = vec![b';'; MAX_SOURCE + 1];
    assert!(none(Some(&big)).contains("too long for a link"));
    // Fits MAX_SOURCE but not the URL.
    let long = "; x\n".repeat(3000);
    assert!(none(Some(long.as_bytes())).contains("refuses URLs over"));
    let mut clang = case.clone();
    clang.replay_command[0] = "/usr/bin/llvm-as".into();
    assert!(compiler_explorer(&clang, None, Some(b"; x\n"))
        .note
        .contains("`llc` and `opt`"));
}
