//! Tests run the compiler with `LLVM_DISABLE_SYMBOLIZATION=1` (icepick names the frames from
//! the ELF files, and clang's own llvm-symbolizer is most of a crashing test's time). A
//! compiler built with debug info names, through its symbolizer, functions its ELF symbol
//! tables do not (local and inlined ones), so its crash signs differently without it: then
//! reduce and flags must turn the symbolizer back on, not report "does not reproduce".
//!
//! Debian's clang has no debug info, so a FAKE compiler models that build: real clang-19 on a
//! `#pragma clang __debug crash` input, whose stack dump, when its symbolizer is on, names
//! frame #4 (a local function of libclang-cpp, unnamed in the ELF tables) as a debug-info
//! build would.

use std::path::{Path, PathBuf};

use crate::util::*;

fn fake_debuginfo_clang(dir: &Path) -> PathBuf {
    let script = dir.join("debuginfo-clang");
    crate::util::write_executable(
        &script,
        r#"#!/bin/bash
# FAKE compiler for icepick's tests: real clang-19, but with its symbolizer on, the stack dump
# names frame #4 as a clang built with debug info would (Debian's has none to do so).
real=/usr/lib/llvm-19/bin/clang
if [ -n "$LLVM_DISABLE_SYMBOLIZATION" ]; then exec "$real" "$@"; fi
# The dump goes through a file, not a pipe to sed: the rewritten text is whole before this
# script ends, however loaded the machine is.
err=$(mktemp)
"$real" "$@" 2> "$err"
rc=$?
sed -E 's/^( *#4 0x[0-9a-f]+) \(/\1 (anonymous namespace)::PragmaDebugHandler::HandlePragma(clang::Preprocessor\&, clang::PragmaIntroducer, clang::Token\&) (/' "$err" >&2
rm -f "$err"
exit $rc
"#,
    );
    script
}

#[test]
fn a_crash_that_signs_the_same_only_with_the_compilers_symbolizer_is_still_reduced() {
    let d = tempfile::tempdir().unwrap();
    let compiler = fake_debuginfo_clang(d.path());
    let mut text = String::new();
    for k in 0..20 {
        text.push_str(&format!("int filler{k}(int x) {{ return x * {k} + 1; }}\n"));
    }
    text.push_str("void g(void) {\n#pragma clang __debug crash\n}\n");
    std::fs::write(d.path().join("p.c"), text).unwrap();
    let argv: Vec<String> = [
        compiler.to_str().unwrap(),
        "-fno-crash-diagnostics",
        "-c",
        "-o",
        "/dev/null",
        "p.c",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let case = capture_case(d.path(), &argv);
    let c = read_case(&case);
    let frames = c["signature"]["text"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(
        frames.contains("PragmaDebugHandler::HandlePragma"),
        "the capture (symbolizer on) names the local frame: {c:#}"
    );

    let o = icepick(d.path(), &["flags", "--json", case.to_str().unwrap()]);
    expect_success(&o);
    let f: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(f["reproduced"], true, "{f:#}");

    let o = icepick(
        d.path(),
        &["reduce", "--json", "--jobs", "2", case.to_str().unwrap()],
    );
    expect_success(&o);
    let r: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(r["verified"], true, "{r:#}");
    let after = r["bytes_after"].as_u64().unwrap();
    assert!(after < 80, "the filler is gone: {after} bytes");
}
