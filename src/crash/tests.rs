//! Tests over every recorded real crash: `tests/fixtures/samples` (clang 14/16/19, GCC 12,
//! HIP, RISC-V, llc; see its README) and `corpus/` (public LLVM issues).
//!
//! Kept out of `parse.rs`/`signature.rs` because they check the whole module at once: the
//! parsed facts, then the signature ids that a reference implementation (`signature_ref.py`)
//! recorded in `tests/fixtures/samples/SIGNATURES.txt`.

use std::path::{Path, PathBuf};

use super::{may_be_crash, parse, signature, Crash, CrashKind, ExitInfo, Family};

/// The repository root: paths below are `tests/fixtures/samples/…` and `corpus/…`.
fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf()
}

fn read(path: &Path) -> String {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    String::from_utf8_lossy(&bytes).into_owned()
}

/// `NAME.rc` (`rc=132`) or `rc.txt` (`139`) beside a stderr file. HIP samples have none: their
/// driver is clang 16/19, which returns 1.
fn exit_of(stderr: &Path) -> ExitInfo {
    let name = stderr.file_name().unwrap().to_str().unwrap();
    let rc = if let Some(stem) = name.strip_suffix(".stderr") {
        stderr.with_file_name(format!("{stem}.rc"))
    } else {
        stderr.with_file_name("rc.txt")
    };
    let code = match std::fs::read_to_string(&rc) {
        Ok(text) => text.trim().trim_start_matches("rc=").parse().ok(),
        Err(_) if stderr.to_string_lossy().contains("/hip/") => Some(1),
        Err(_) => None,
    };
    ExitInfo { code, signal: None }
}

fn parse_file(rel: &str) -> Option<Crash> {
    let path = repo().join(rel);
    parse(&read(&path), exit_of(&path))
}

fn crash_of(rel: &str) -> Crash {
    parse_file(rel).unwrap_or_else(|| panic!("{rel}: no crash"))
}

/// Samples that are not crashes; `signature_ref.py` gives them `unknown` or `exit1`.
const NOT_CRASHES: &[&str] = &[
    "assert",    // `__debug assert` is a no-op on release builds: rc 0, no output
    "overflow",  // `__debug overflow_stack` loops: killed by timeout(1), rc 124, no output
    "force_env", // FORCE_CLANG_DIAGNOSTICS_CRASH: banner + reproducers, no crash
    "genrepro",  // -gen-reproducer on a valid file
    "crash_clang16/",
    "crash_clang19/", // lld missing: `amdgcn-link command failed with exit code 1`
    "crash_devS_",    // `cannot specify -o when generating multiple output files`
];

/// Crashes whose id deliberately differs from `signature_ref.py`: (sample, our canonical text).
const DEVIATIONS: &[(&str, &str)] = &[
    // SIGKILL (OOM killer) is infrastructure: the reference calls it `unknown`.
    (
        "gcc-12/killed_sigkill.stderr",
        "v1|killed|Killed signal terminated program cc1||",
    ),
    // The reference hashes libc's `__read` because it is printed with a file:line.
    (
        "llvm-tools/llc19_sigsegv.stderr",
        "v1|unknown|||llvm::MemoryBuffer::getFileOrSTDIN > llvm::parseIRFile",
    ),
];

/// Every row of SIGNATURES.txt is checked: not-a-crash, a documented deviation, or the same
/// id and the same (150-character) canonical string as the reference.
#[test]
fn signatures_txt_is_reproduced() {
    let table = read(&repo().join("tests/fixtures/samples/SIGNATURES.txt"));
    let mut crashes = 0;
    let mut rows = 0;
    for line in table.lines().filter(|l| !l.trim().is_empty()) {
        rows += 1;
        let (id, rest) = line.split_once("  ").unwrap();
        let (canonical, rel) = rest.rsplit_once("  ").unwrap();
        let rel = rel.strip_prefix("samples/").unwrap();
        let rel = format!("tests/fixtures/samples/{rel}");
        let parsed = parse_file(&rel);
        if NOT_CRASHES.iter().any(|n| rel.contains(n)) {
            assert_eq!(parsed, None, "{rel} is not a crash");
            assert!(
                matches!(canonical, "v1|unknown|||" | "v1|exit1|||"),
                "{rel}"
            );
            continue;
        }
        let crash = parsed.unwrap_or_else(|| panic!("{rel}: no crash"));
        let sig = signature(&crash);
        crashes += 1;
        if let Some((_, ours)) = DEVIATIONS.iter().find(|(d, _)| rel.ends_with(d)) {
            assert_eq!(sig.text, *ours, "{rel}");
            assert_ne!(sig.id, id, "{rel}: no longer a deviation?");
            continue;
        }
        let prefix: String = sig.text.chars().take(150).collect();
        assert_eq!(prefix, canonical, "{rel}");
        assert_eq!(sig.id, id, "{rel}: {}", sig.text);
    }
    assert_eq!(rows, 64);
    assert_eq!(crashes, 48);
}

/// The same bug hashes alike symbolized or not, in- or out-of-process, on 14/16/19 and in the
/// HIP device job (`docs/crash-formats.md` §8 "Validation").
#[test]
fn one_bug_one_id() {
    let mut pragma = vec![];
    for v in ["clang-14", "clang-16", "clang-19"] {
        for s in [
            "crash_sym",
            "crash_nosym",
            "crash_noint",
            "crash_cxx",
            "crash_O2_opts",
        ] {
            pragma.push(format!("tests/fixtures/samples/{v}/{s}.stderr"));
        }
        let fatal = signature(&crash_of(&format!(
            "tests/fixtures/samples/{v}/fatal.stderr"
        )));
        assert_eq!(fatal.id, "49fea7e2b2b0", "{v}");
    }
    for h in ["devonly1arch", "devonly2arch", "rdc"] {
        for v in ["16", "19"] {
            pragma.push(format!(
                "tests/fixtures/samples/hip/crash_{h}_clang{v}/stderr.txt"
            ));
        }
    }
    for rel in &pragma {
        let sig = signature(&crash_of(rel));
        assert_eq!(sig.id, "5c616ef9f82c", "{rel}: {}", sig.text);
        assert_eq!(sig.kind, "SIGILL");
        assert!(!sig.weak);
    }
    // parser_crash differs between 14 and 16/19 only at F3: the coarse bucket joins them.
    let c14 = signature(&crash_of(
        "tests/fixtures/samples/clang-14/parser_crash.stderr",
    ));
    let c19 = signature(&crash_of(
        "tests/fixtures/samples/clang-19/parser_crash.stderr",
    ));
    assert_ne!(c14.id, c19.id);
    assert_eq!(c14.coarse_id, c19.coarse_id);
    assert_eq!(c14.frames[..2], c19.frames[..2]);
    // GCC: identical with and without -freport-bug.
    let g = |n: &str| {
        signature(&crash_of(&format!(
            "tests/fixtures/samples/gcc-12/{n}.stderr"
        )))
        .id
    };
    assert_eq!(g("ice_deterministic"), "33df95cabc8c");
    assert_eq!(g("ice_deterministic_reportbug"), "33df95cabc8c");
    assert_eq!(g("ice_deterministic_reportbug_noaslr"), "33df95cabc8c");
}

struct Facts {
    rel: &'static str,
    family: Family,
    kind: CrashKind,
    signal: Option<i32>,
    tool: Option<&'static str>,
    in_process: Option<bool>,
    cc1_exit_code: Option<i32>,
    /// Frame lines in the file (`grep`-counted), pretty-stack entries besides Program
    /// arguments, reproducer paths.
    frames: usize,
    pretty: usize,
    reproducers: usize,
}

#[rustfmt::skip]
const FACTS: &[Facts] = {
    use CrashKind::*;
    use Family::*;
    #[expect(clippy::too_many_arguments, reason = "one table row")]
    const fn f(rel: &'static str, family: Family, kind: CrashKind, signal: Option<i32>, tool: Option<&'static str>,
               in_process: Option<bool>, cc1_exit_code: Option<i32>, frames: usize, pretty: usize, reproducers: usize) -> Facts {
        Facts { rel, family, kind, signal, tool, in_process, cc1_exit_code, frames, pretty, reproducers }
    }
    const C: Option<&str> = Some("clang");
    const C19: Option<&str> = Some("clang-19");
    const IN: Option<bool> = Some(true);
    const OUT: Option<bool> = Some(false);
    &[
        f("clang-14/crash_O2_opts.stderr", Clang, IllegalInstruction, Some(4), C, IN, Some(132), 39, 3, 2),
        f("clang-14/crash_cxx.stderr", Clang, IllegalInstruction, Some(4), C, IN, Some(132), 38, 3, 2),
        f("clang-14/crash_noint.stderr", Clang, IllegalInstruction, Some(4), C, OUT, None, 32, 3, 2),
        f("clang-14/crash_nosym.stderr", Clang, IllegalInstruction, Some(4), C, IN, Some(132), 38, 3, 2),
        f("clang-14/crash_sym.stderr", Clang, IllegalInstruction, Some(4), C, IN, Some(132), 39, 3, 2),
        f("clang-14/fatal.stderr", Clang, FatalError, None, C, IN, Some(70), 43, 3, 2),
        f("clang-14/parser_crash.stderr", Clang, IllegalInstruction, Some(4), C, IN, Some(132), 30, 1, 2),
        f("clang-14/sigsegv_t16.stderr", Clang, Segfault, Some(11), C, IN, Some(139), 31, 4, 2),
        f("clang-14/sigsegv_t3.stderr", Clang, Segfault, Some(11), C, IN, Some(139), 52, 2, 2),
        f("clang-14/sigsegv_t9.stderr", Clang, Segfault, Some(11), C, IN, Some(139), 41, 2, 2),
        f("clang-16/crash_O2_opts.stderr", Clang, IllegalInstruction, Some(4), C, IN, Some(132), 37, 3, 2),
        f("clang-16/crash_cxx.stderr", Clang, IllegalInstruction, Some(4), C, IN, Some(132), 36, 3, 2),
        f("clang-16/crash_noint.stderr", Clang, IllegalInstruction, Some(4), C, OUT, None, 31, 3, 2),
        f("clang-16/crash_nosym.stderr", Clang, IllegalInstruction, Some(4), C, IN, Some(132), 36, 3, 2),
        f("clang-16/crash_sym.stderr", Clang, IllegalInstruction, Some(4), C, IN, Some(132), 37, 3, 2),
        f("clang-16/fatal.stderr", Clang, FatalError, None, C, IN, Some(70), 41, 3, 2),
        f("clang-16/parser_crash.stderr", Clang, IllegalInstruction, Some(4), C, IN, Some(132), 29, 1, 2),
        f("clang-16/sigsegv_t16.stderr", Clang, Segfault, Some(11), C, IN, Some(139), 33, 4, 2),
        f("clang-16/sigsegv_t3.stderr", Clang, Segfault, Some(11), C, IN, Some(139), 60, 2, 2),
        f("clang-16/sigsegv_t9.stderr", Clang, Segfault, Some(11), C, IN, Some(139), 35, 2, 2),
        f("clang-19/crash_O2_opts.stderr", Clang, IllegalInstruction, Some(4), C19, IN, Some(132), 38, 3, 2),
        f("clang-19/crash_cxx.stderr", Clang, IllegalInstruction, Some(4), C19, IN, Some(132), 37, 3, 2),
        f("clang-19/crash_noint.stderr", Clang, IllegalInstruction, Some(4), C19, OUT, None, 32, 3, 2),
        f("clang-19/crash_nosym.stderr", Clang, IllegalInstruction, Some(4), C19, IN, Some(132), 37, 3, 2),
        f("clang-19/crash_sym.stderr", Clang, IllegalInstruction, Some(4), C19, IN, Some(132), 38, 3, 2),
        f("clang-19/fatal.stderr", Clang, FatalError, None, C19, IN, Some(70), 42, 3, 2),
        f("clang-19/parser_crash.stderr", Clang, IllegalInstruction, Some(4), C19, IN, Some(132), 30, 1, 2),
        f("clang-19/sigsegv_t16.stderr", Clang, Segfault, Some(11), C19, IN, Some(139), 35, 4, 2),
        f("clang-19/sigsegv_t3.stderr", Clang, Segfault, Some(11), C19, IN, Some(139), 62, 5, 2),
        f("clang-19/sigsegv_t9.stderr", Clang, Segfault, Some(11), C19, IN, Some(139), 28, 3, 2),
        f("gcc-12/ice_deterministic.stderr", Gcc, GccIce, Some(11), None, None, None, 5, 0, 0),
        f("gcc-12/ice_deterministic_reportbug.stderr", Gcc, GccIce, Some(11), None, None, None, 5, 0, 0),
        f("gcc-12/ice_deterministic_reportbug_noaslr.stderr", Gcc, GccIce, Some(11), None, None, None, 5, 0, 1),
        f("gcc-12/ice_plain_t20.stderr", Gcc, GccIce, Some(11), None, None, None, 3, 0, 0),
        f("gcc-12/ice_plain_t4.stderr", Gcc, GccIce, Some(11), None, None, None, 3, 0, 0),
        f("gcc-12/ice_reportbug_t20.stderr", Gcc, GccIce, Some(11), None, None, None, 3, 0, 0),
        f("gcc-12/ice_reportbug_t4.stderr", Gcc, GccIce, Some(11), None, None, None, 3, 0, 0),
        f("gcc-12/killed_sigkill.stderr", Gcc, Killed, Some(9), Some("gcc-12"), None, None, 0, 0, 0),
        f("gcc-12/killed_sigtrap.stderr", Gcc, GccIce, Some(5), Some("gcc-12"), None, None, 0, 0, 0),
        f("llvm-tools/llc19_sigsegv.stderr", LlvmTool, OtherSignal, None, None, None, None, 15, 0, 0),
        f("riscv/sigsegv_rv_t15.stderr", Clang, Segfault, Some(11), C19, IN, Some(139), 46, 5, 2),
        f("riscv/sigsegv_rv_t18.stderr", Clang, Segfault, Some(11), C19, IN, Some(139), 35, 4, 2),
        f("hip/crash_devonly1arch_clang16/stderr.txt", Clang, IllegalInstruction, Some(4), C, IN, Some(132), 36, 3, 2),
        f("hip/crash_devonly1arch_clang19/stderr.txt", Clang, IllegalInstruction, Some(4), C19, IN, Some(132), 37, 3, 2),
        f("hip/crash_devonly2arch_clang16/stderr.txt", Clang, IllegalInstruction, Some(4), C, OUT, None, 30, 3, 3),
        f("hip/crash_devonly2arch_clang19/stderr.txt", Clang, IllegalInstruction, Some(4), C19, OUT, None, 31, 3, 3),
        f("hip/crash_rdc_clang16/stderr.txt", Clang, IllegalInstruction, Some(4), C, OUT, None, 30, 3, 0),
        f("hip/crash_rdc_clang19/stderr.txt", Clang, IllegalInstruction, Some(4), C19, OUT, None, 31, 3, 0),
    ]
};

#[test]
fn facts_of_every_crash_sample() {
    for facts in FACTS {
        let rel = format!("tests/fixtures/samples/{}", facts.rel);
        let c = crash_of(&rel);
        assert_eq!(c.family, facts.family, "{rel}");
        assert_eq!(c.kind, facts.kind, "{rel}");
        assert_eq!(c.signal, facts.signal, "{rel}");
        assert_eq!(c.tool.as_deref(), facts.tool, "{rel}");
        assert_eq!(c.in_process, facts.in_process, "{rel}");
        assert_eq!(c.cc1_exit_code, facts.cc1_exit_code, "{rel}");
        assert_eq!(c.frames.len(), facts.frames, "{rel}");
        assert_eq!(c.pretty_stack.len(), facts.pretty, "{rel}");
        assert_eq!(c.reproducer_files.len(), facts.reproducers, "{rel}");
        // Frames are numbered in order from 0 (the glibc and GCC formats print no numbers).
        for (i, f) in c.frames.iter().enumerate() {
            assert_eq!(f.index as usize, i, "{rel}");
        }
        if c.family == Family::Clang {
            assert!(c.program_arguments.is_some(), "{rel}");
        }
    }
    // Every crash sample of the directory is covered above.
    let mut all = 0;
    for dir in [
        "clang-14",
        "clang-16",
        "clang-19",
        "gcc-12",
        "llvm-tools",
        "riscv",
    ] {
        for entry in std::fs::read_dir(repo().join("tests/fixtures/samples").join(dir)).unwrap() {
            let name = entry.unwrap().file_name().into_string().unwrap();
            if name.ends_with(".stderr")
                && parse_file(&format!("tests/fixtures/samples/{dir}/{name}")).is_some()
            {
                all += 1;
                assert!(
                    FACTS.iter().any(|f| f.rel == format!("{dir}/{name}")),
                    "{dir}/{name}"
                );
            }
        }
    }
    assert_eq!(all, FACTS.len() - 6); // minus the six HIP samples
}

/// A block of facts per recorded sample: long because each sample is checked in full, in the
/// order the samples README lists them.
#[test]
fn details_of_selected_samples() {
    let c = crash_of("tests/fixtures/samples/clang-19/crash_sym.stderr");
    assert_eq!(
        c.program_arguments.as_deref(),
        Some("/usr/bin/clang-19 -c pragma_crash.c -o /dev/null -fcrash-diagnostics-dir=/home/user/samples/clang-19/crash_sym.crashdir")
    );
    let pretty: Vec<(u32, &str)> = c
        .pretty_stack
        .iter()
        .map(|e| (e.index, e.text.as_str()))
        .collect();
    assert_eq!(
        pretty,
        [
            (1, "pragma_crash.c:2:2: current parser token 'pragma'"),
            (2, "pragma_crash.c:1:19: parsing function body 'before'"),
            (3, "pragma_crash.c:1:19: in compound statement ('{}')"),
        ]
    );
    assert_eq!(
        c.reproducer_files,
        [
            "/home/user/samples/clang-19/crash_sym.crashdir/pragma_crash-653324.c",
            "/home/user/samples/clang-19/crash_sym.crashdir/pragma_crash-653324.sh",
        ]
    );
    let f5 = &c.frames[5];
    assert_eq!(
        f5.symbol.as_deref(),
        Some("clang::Preprocessor::HandlePragmaDirective(clang::PragmaIntroducer)")
    );
    assert_eq!(
        f5.module.as_deref(),
        Some("/usr/lib/llvm-19/bin/../lib/libclang-cpp.so.19.1")
    );
    assert_eq!(f5.offset, Some(0xc1a3fc));
    assert_eq!(c.frames[4].symbol, None);
    let f34 = &c.frames[34];
    assert_eq!(f34.symbol.as_deref(), Some("__libc_start_call_main"));
    assert_eq!(
        f34.file.as_deref(),
        Some("./csu/../sysdeps/nptl/libc_start_call_main.h")
    );
    assert_eq!(f34.line, Some(74));

    // Debian clang-14 without symbolizer: mangled glibc format, demangled here.
    let c = crash_of("tests/fixtures/samples/clang-14/crash_nosym.stderr");
    assert_eq!(
        c.frames[6].symbol.as_deref(),
        Some("clang::Preprocessor::HandlePragmaDirective(clang::PragmaIntroducer)")
    );
    assert_eq!(
        c.frames[6].module.as_deref(),
        Some("/lib/x86_64-linux-gnu/libclang-cpp.so.14")
    );
    assert_eq!(c.frames[10].symbol, None);
    assert_eq!(c.frames[10].offset, Some(0xa4e3f3));

    // dladdr format: bare basenames, named frames carry no module offset.
    let c = crash_of("tests/fixtures/samples/clang-19/crash_nosym.stderr");
    assert_eq!(c.frames[5].module.as_deref(), Some("libclang-cpp.so.19.1"));
    assert_eq!(c.frames[5].symbol_offset, Some(92));
    assert_eq!(c.frames[36].symbol.as_deref(), Some("_start"));

    // Out-of-process: Program arguments is the -cc1 line.
    let c = crash_of("tests/fixtures/samples/clang-14/crash_noint.stderr");
    assert!(c
        .program_arguments
        .unwrap()
        .starts_with("/usr/lib/llvm-14/bin/clang -cc1 -triple x86_64-pc-linux-gnu"));

    // Fatal error: the message, and `Process::Exit` frames before report_fatal_error.
    let c = crash_of("tests/fixtures/samples/clang-16/fatal.stderr");
    assert_eq!(
        c.message.as_deref(),
        Some("#pragma clang __debug llvm_fatal_error")
    );

    // GCC: pass, message, frames with their location lines.
    let c = crash_of("tests/fixtures/samples/gcc-12/ice_deterministic.stderr");
    assert_eq!(c.gcc_pass.as_deref(), Some("RTL:final"));
    assert_eq!(c.message.as_deref(), Some("Segmentation fault"));
    assert_eq!(c.frames[0].symbol, None);
    assert_eq!(
        c.frames[1].symbol.as_deref(),
        Some("__pthread_kill_implementation")
    );
    assert_eq!(c.frames[1].file.as_deref(), Some("./nptl/pthread_kill.c"));
    assert_eq!(c.frames[1].line, Some(44));
    let c = crash_of("tests/fixtures/samples/gcc-12/ice_deterministic_reportbug_noaslr.stderr");
    assert_eq!(
        c.reproducer_files,
        ["/home/user/samples/gcc-12/reportbug_tmp/ccRnCQzI.out"]
    );
    let sig = signature(&c);
    assert_eq!(
        (sig.kind.as_str(), sig.phase.as_str()),
        ("gcc_ice", "RTL:final")
    );
    assert!(sig.frames.is_empty()); // all libc: Debian's cc1 is stripped
    assert!(!sig.weak);

    // HIP multi-job: the failing device job's -cc1 line names the arch.
    let c = crash_of("tests/fixtures/samples/hip/crash_rdc_clang19/stderr.txt");
    assert!(c.program_arguments.unwrap().contains("-target-cpu gfx90a"));

    // Legacy pass manager, innermost pass.
    let sig = signature(&crash_of(
        "tests/fixtures/samples/clang-14/sigsegv_t16.stderr",
    ));
    assert_eq!(sig.phase, "X86 cmov Conversion");
    assert_eq!(sig.frames[0], "llvm::TargetSchedModel::init");
}

/// What each corpus case's recorded crash parses to, a block per case as its README says it.
#[test]
fn corpus_facts() {
    // fe-gh59446: C++ frontend SIGSEGV, crash-on-invalid, clang-16.
    let c = crash_of("corpus/fe-gh59446/stderr.txt");
    assert_eq!(c.kind, CrashKind::Segfault);
    assert_eq!((c.in_process, c.cc1_exit_code), (Some(true), Some(139)));
    assert!(c
        .pretty_stack
        .iter()
        .any(|e| e.text == "GH59446.cpp:5:21: parsing function body 'GH59446::f'"));
    assert_eq!(c.frames.len(), 43);
    let sig = signature(&c);
    assert_eq!(sig.frames[0], "clang::Sema::getDestructorName");
    assert_eq!(
        sig.frames[1..],
        [
            "clang::Parser::ParseUnqualifiedId",
            "clang::Parser::ParsePostfixExpressionSuffix"
        ]
    );
    // The reference's phase is the innermost stage, one below `parsing function body 'X'`.
    assert_eq!(sig.phase, "in compound statement ('X')");
    assert_eq!(sig.id, "49724a2ef4a4"); // signature_ref.py
    let big = signature(&crash_of("corpus/big-gh59446/stderr.txt"));
    assert_eq!(big.id, sig.id);

    // rv-gh75010: RISC-V fatal error in declare-to-assign.
    let c = crash_of("corpus/rv-gh75010/stderr.txt");
    assert_eq!(c.kind, CrashKind::FatalError);
    assert_eq!(
        c.message.as_deref(),
        Some("Invalid size request on a scalable vector.")
    );
    let sig = signature(&c);
    assert_eq!(sig.phase, "declare-to-assign");
    assert_eq!(
        sig.frames,
        [
            "llvm::TypeSize::operator unsigned long",
            "llvm::at::trackAssignments",
            "llvm::AssignmentTrackingPass::runOnFunction"
        ]
    );
    assert_eq!(sig.id, "3c6c661882c2"); // signature_ref.py

    // amdgpu-si-flat: "Cannot select" in AMDGPU ISel.
    let c = crash_of("corpus/amdgpu-si-flat/stderr.txt");
    assert_eq!(c.kind, CrashKind::FatalError);
    let message = c.message.as_deref().unwrap();
    assert!(
        message.starts_with("Cannot select: 0x55cec7b3db00: ch = store<(store (s32) into %ir.2"),
        "{message}"
    );
    let sig = signature(&c);
    assert_eq!(sig.phase, "AMDGPU DAG->DAG Pattern Instruction Selection");
    // Deviation from signature_ref.py (2ccaddb875fe): the node details of an ISel failure
    // change with every edit of the source, so only the opcode is hashed.
    assert_eq!(sig.message, "Cannot select: store");
    assert_eq!(sig.frames[0], "llvm::SelectionDAGISel::SelectCodeCommon");
    // libLLVM+0xdfd00e, +0xdfcfcb, clang+0x12013 and libLLVM+0x1762873 (frame #7)
    assert_eq!(sig.unnamed_frames, 4);
    assert_ne!(sig.id, "2ccaddb875fe");
    assert_eq!(
        signature(&crash_of("corpus/big-amdgpu-si-flat/stderr.txt")).id,
        sig.id
    );

    // opt-gh68553: stack overflow, out-of-process, 256 frames.
    let c = crash_of("corpus/opt-gh68553/stderr.txt");
    assert_eq!(c.kind, CrashKind::StackOverflow);
    assert_eq!(c.signal, Some(11));
    assert_eq!(c.in_process, Some(false));
    assert_eq!(c.frames.len(), 256);
    let scev = c
        .frames
        .iter()
        .filter(|f| {
            f.symbol
                .as_deref()
                .is_some_and(|s| s.starts_with("llvm::ScalarEvolution::getSCEVAtScope("))
        })
        .count();
    assert_eq!(scev, 115);
    let sig = signature(&c);
    assert_eq!(sig.kind, "stack_overflow");
    assert_eq!(sig.phase, "loop(loop-idiom,indvars,simple-loop-unswitch<no-nontrivial;trivial>,loop-deletion,loop-unroll-full)");
    // Deviation from signature_ref.py (11b9a3259fad, which hashes the innermost frames):
    // a stack overflow is hashed by its recursion, because where the stack runs out differs
    // between runs of the same compile.
    assert_eq!(
        sig.frames,
        [
            "llvm::ScalarEvolution::computeSCEVAtScope",
            "llvm::ScalarEvolution::getSCEVAtScope"
        ]
    );
    // fe-silent-gh132076: a recursion of unsymbolised frames where one member comes twice
    // per turn (62 against 30-33 in 256 frames). Two runs whose stacks ran out at different
    // places have one signature.
    let one = crash_of("corpus/fe-silent-gh132076/stderr-out-of-process-1.txt");
    let two = crash_of("corpus/fe-silent-gh132076/stderr-out-of-process-2.txt");
    assert_eq!(one.kind, CrashKind::StackOverflow);
    assert_ne!(one.frames[4].offset, two.frames[4].offset);
    let (s1, s2) = (signature(&one), signature(&two));
    assert_eq!(s1.frames.len(), 3, "{:?}", s1.frames);
    assert_eq!(s1.id, s2.id, "{:?} vs {:?}", s1.frames, s2.frames);
    // Cutting the innermost frames (the stack ran out elsewhere) keeps the id.
    let mut shifted = c.clone();
    shifted.frames.drain(4..9);
    assert_eq!(signature(&shifted).id, sig.id);

    // The same crash in-process: the driver dies of SIGSEGV and prints nothing.
    let c = parse(
        "",
        ExitInfo {
            code: None,
            signal: Some(11),
        },
    )
    .unwrap();
    assert_eq!(
        (c.kind, c.frames.len(), c.message.as_deref()),
        (CrashKind::Segfault, 0, None)
    );
    assert!(signature(&c).weak);
}

/// Every recorded stderr (fixtures and corpus) parses without panicking, and whatever parses has a signature.
#[test]
fn every_file_parses() {
    let mut files = vec![];
    for dir in [
        "tests/fixtures/samples/clang-14",
        "tests/fixtures/samples/clang-16",
        "tests/fixtures/samples/clang-19",
        "tests/fixtures/samples/gcc-12",
        "tests/fixtures/samples/llvm-tools",
        "tests/fixtures/samples/riscv",
    ] {
        for e in std::fs::read_dir(repo().join(dir)).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|x| x == "stderr") {
                files.push(p);
            }
        }
    }
    for root in ["tests/fixtures/samples/hip", "corpus"] {
        for e in std::fs::read_dir(repo().join(root)).unwrap() {
            let p = e.unwrap().path().join("stderr.txt");
            if p.is_file() {
                files.push(p);
            }
        }
    }
    assert!(files.len() >= 70, "{}", files.len());
    for p in files {
        if let Some(c) = parse(&read(&p), exit_of(&p)) {
            let s = signature(&c);
            assert_eq!(s.id.len(), 12, "{}", p.display());
            assert!(s.id.chars().all(|c| c.is_ascii_hexdigit()));
        }
    }
}

/// Crash on invalid code is told from crash on valid code by the source errors before it.
#[test]
fn source_errors_before_the_crash_are_counted() {
    assert!(crash_of("corpus/fe-gh59446/stderr.txt").source_errors >= 1);
    assert_eq!(crash_of("corpus/rv-gh75010/stderr.txt").source_errors, 0);
    assert_eq!(
        crash_of("corpus/amdgpu-si-flat/stderr.txt").source_errors,
        0
    );
}

/// Every stderr under `dir`, recursively.
fn stderr_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            stderr_files(&p, out);
        } else if p
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.ends_with(".stderr") || n == "stderr.txt")
        {
            out.push(p);
        }
    }
}

/// `icepick-wrap` hands a failed compile to `icepick` only when `may_be_crash` says so: it
/// must hold for every real crash that `parse` recognises, and not for ordinary errors.
#[test]
fn the_launchers_prefilter_lets_every_real_crash_through() {
    let mut files = Vec::new();
    stderr_files(&repo().join("tests/fixtures/samples"), &mut files);
    stderr_files(&repo().join("corpus"), &mut files);
    let mut crashes = 0;
    for f in &files {
        let text = std::fs::read(f).unwrap();
        let exit = exit_of(f);
        if parse(&String::from_utf8_lossy(&text), exit).is_some() {
            crashes += 1;
            assert!(may_be_crash(&text, exit), "{}", f.display());
        }
    }
    assert!(
        crashes >= 48,
        "only {crashes} crashes among {} files",
        files.len()
    );
    let ordinary = b"x.c:1:5: error: use of undeclared identifier 'y'\n1 error generated.\n";
    let failed = ExitInfo {
        code: Some(1),
        signal: None,
    };
    assert!(!may_be_crash(ordinary, failed));
    assert!(!may_be_crash(
        b"",
        ExitInfo {
            code: Some(0),
            signal: None
        }
    ));
    assert!(may_be_crash(
        b"",
        ExitInfo {
            code: None,
            signal: Some(11)
        }
    ));
    // Whatever the exit code (a wrapper script exits 139 for its compiler's SIGSEGV), the
    // prefilter never hides what the parser calls a crash.
    let texts: Vec<Vec<u8>> = files
        .iter()
        .map(|f| std::fs::read(f).unwrap())
        .chain([ordinary.to_vec(), Vec::new()])
        .collect();
    for code in 0..=255 {
        let exit = ExitInfo {
            code: Some(code),
            signal: None,
        };
        for text in &texts {
            if parse(&String::from_utf8_lossy(text), exit).is_some() {
                assert!(may_be_crash(text, exit), "exit {code}");
            }
        }
    }
}

/// Every real-crash case in `corpus/` keeps the output it was recorded with, and the facts its
/// `expected.json` states about the crash and its signature hold for that output (the e2e
/// capture tests check the same file against a live capture).
#[test]
fn corpus_expected_facts_hold_for_the_recorded_output() {
    let mut checked = 0;
    for entry in std::fs::read_dir(repo().join("corpus")).unwrap() {
        let dir = entry.unwrap().path();
        let (stderr, expected) = (dir.join("stderr.txt"), dir.join("expected.json"));
        if !stderr.is_file() {
            continue;
        }
        let expected: serde_json::Value = serde_json::from_str(&read(&expected)).unwrap();
        let crash = parse(&read(&stderr), exit_of(&stderr))
            .unwrap_or_else(|| panic!("{}: no crash", stderr.display()));
        // A link case's facts are those of the IR command its capture makes; the link's own
        // output has them too, unless the crash printed no stack (a ThinLTO backend thread's).
        if expected.get("link.lto").is_some() && crash.frames.is_empty() {
            continue;
        }
        let facts = serde_json::json!({ "crash": crash, "signature": signature(&crash) });
        for (path, want) in expected.as_object().unwrap() {
            if !(path.starts_with("crash.") || path.starts_with("signature.")) {
                continue; // `compiler`, `job.*`: facts of a capture, not of the output
            }
            let mut got = &facts;
            for part in path.split('.') {
                let (name, index) = part.split_once('[').unwrap_or((part, ""));
                got = &got[name];
                if let Ok(i) = index.trim_end_matches(']').parse::<usize>() {
                    got = &got[i];
                }
            }
            assert_eq!(got, want, "{path} in {}", dir.display());
            checked += 1;
        }
    }
    assert!(checked >= 20, "only {checked} facts checked");
}

/// docs/crash-formats.md quotes real output: every line of its excerpts (but lines elided with
/// `…`) is in a file of `tests/fixtures/samples/` or a corpus case's `stderr.txt`, and every
/// sample file it names exists.
#[test]
fn crash_formats_md_quotes_the_kept_samples() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let doc = std::fs::read_to_string(root.join("docs/crash-formats.md")).unwrap();
    fn walk(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
        for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(&p, out);
            } else {
                out.push(p);
            }
        }
    }
    let mut files = Vec::new();
    walk(&root.join("tests/fixtures/samples"), &mut files);
    for e in std::fs::read_dir(root.join("corpus")).unwrap().flatten() {
        files.push(e.path().join("stderr.txt"));
    }
    let samples: Vec<(String, String)> = files
        .iter()
        .filter_map(|f| {
            let text = String::from_utf8_lossy(&std::fs::read(f).ok()?).into_owned();
            Some((f.to_string_lossy().into_owned(), text))
        })
        .collect();
    let mut in_block = false;
    let mut quoted = 0;
    for line in doc.lines() {
        if line.trim_start().starts_with("```") {
            in_block = !in_block;
            continue;
        }
        let l = line.trim();
        if !in_block || l.is_empty() || l.contains('…') {
            continue;
        }
        assert!(
            samples.iter().any(|(_, t)| t.contains(l)),
            "docs/crash-formats.md quotes a line no kept sample has: {l}"
        );
        quoted += 1;
    }
    assert!(quoted > 10, "the excerpts were not found ({quoted} lines)");
    let named = doc
        .split('`')
        .skip(1)
        .step_by(2)
        .filter(|w| w.ends_with(".stderr") || w.ends_with("stderr.txt"))
        .filter(|w| !w.contains(' ') && !w.contains('*'));
    for name in named {
        assert!(
            samples.iter().any(|(p, _)| p.ends_with(name)),
            "docs/crash-formats.md names a sample that is not kept: {name}"
        );
    }
}
