//! What an upstream LLVM issue needs beyond the crash itself: the target tag for the title,
//! and suggested labels (docs/crash-formats.md §6). Redaction of local paths and names before a
//! report leaves the machine is [`super::redact`].

use std::sync::LazyLock;

use regex::Regex;

use crate::case::{target_tag, Case};
use crate::crash::{crash_site, kind_words, normalize_function, CrashKind};

/// Backends by the word LLVM's pass names and issue labels use, with the triple prefixes
/// that select them.
const BACKENDS: &[(&str, &[&str])] = &[
    ("X86", &["x86_64", "i386", "i486", "i586", "i686"]),
    ("AArch64", &["aarch64", "arm64"]),
    ("ARM", &["arm", "thumb"]),
    ("RISC-V", &["riscv"]),
    ("AMDGPU", &["amdgcn", "r600"]),
    ("NVPTX", &["nvptx"]),
    ("PowerPC", &["powerpc", "ppc"]),
    ("SystemZ", &["s390x", "systemz"]),
    ("WebAssembly", &["wasm"]),
    ("LoongArch", &["loongarch"]),
    ("Mips", &["mips"]),
    ("Hexagon", &["hexagon"]),
];

/// The backend a crash is in: named by the crashing pass (`AArch64 Instruction Selection`,
/// `X86 DAG->DAG Instruction Selection`), else by the target triple the job compiled for,
/// else by the command (`--target`, `-march=rv…`, the host's x86 without one).
pub(crate) fn backend_target(case: &Case) -> Option<&'static str> {
    let pass = case.signature.phase.split_whitespace().next().unwrap_or("");
    let by_pass = match pass {
        "RISCV" | "RISC-V" => Some("RISC-V"),
        "SI" | "GCN" | "R600" | "AMDGPU" => Some("AMDGPU"),
        p => BACKENDS.iter().map(|(t, _)| *t).find(|t| *t == p),
    };
    let by_triple = || {
        let triple = case.bug_info.as_ref()?.triple.as_deref()?;
        BACKENDS
            .iter()
            .find(|(_, prefixes)| prefixes.iter().any(|p| triple.starts_with(p)))
            .map(|(t, _)| *t)
    };
    by_pass.or_else(by_triple).or_else(|| target_tag(case))
}

/// The `[Target]` tag LLVM issue titles carry for backend crashes.
pub(crate) fn title_tag(case: &Case) -> Option<&'static str> {
    (stage(case) == "backend")
        .then(|| backend_target(case))
        .flatten()
}

static ADDRESS: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\b0x[0-9a-fA-F]+\b:?").expect("valid regex"));
static SELECT_NODE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^Cannot select: (?:0x[0-9a-fA-F]+: |t\d+: )?([^=]+= [\w:]+)").expect("valid regex")
});
/// `src/masks.c:43:10`, `/home/me/x.cpp:3`, `at x.c:4`: a source location of the user's.
static LOCATION: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?:\bat )?(?:[\w.~+-]*/)*[\w.+-]+\.[A-Za-z]+:\d+(?::\d+)?").expect("valid regex")
});
/// An absolute path's directories.
static DIRS: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r#"(^|[\s'"`(=])(?:/[^\s'"`/:()]+)+/"#).expect("valid regex"));
static SPACES: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"\s+").expect("valid regex"));

/// A crash message as a title says it: its first line, with no addresses (`Cannot select:
/// 0x55d0…: v16i1 = setcc 0x…, 0x…` → `Cannot select: v16i1 = setcc`), no source locations
/// and no directories; what is left differs from run to run or machine to machine.
pub(crate) fn title_message(message: &str) -> String {
    let first = message.lines().next().unwrap_or(message).trim();
    if let Some(c) = SELECT_NODE.captures(first) {
        return format!("Cannot select: {}", c[1].trim());
    }
    let s = LOCATION.replace_all(first, "");
    let s = ADDRESS.replace_all(&s, "");
    let s = DIRS.replace_all(&s, "$1");
    let s = SPACES.replace_all(&s, " ");
    let s = s
        .trim()
        .trim_end_matches([',', ':', ';'])
        .replace(" ,", ",")
        .replace("()", "");
    let s = s.trim();
    s.strip_suffix(" at").unwrap_or(s).trim().to_string()
}

/// A crash without a message in words: its kind and where it happened. The crash site is the
/// frame the signal came in; when it has no symbol the title says so, with its library,
/// and names the first named frame as what it is, a caller, never as the crash site.
pub(crate) fn site_words(
    crash: &crate::crash::Crash,
    signature: &crate::crash::Signature,
) -> String {
    let kind = kind_words(crash.kind);
    if crash.kind == CrashKind::StackOverflow {
        return match signature.frames.first() {
            Some(f) => format!("{kind} in a recursion through {f}"),
            None => kind.to_string(),
        };
    }
    let named = signature.frames.first();
    match crash_site(crash) {
        Some(site) => match site.symbol.as_deref().filter(|s| !s.is_empty()) {
            Some(sym) => format!(
                "{kind} in {}",
                normalize_function(&crate::crash::demangle(sym))
            ),
            None => {
                let lib = site
                    .module
                    .as_deref()
                    .map(|m| m.rsplit('/').next().unwrap_or(m))
                    .map(|m| format!(" of {m}"))
                    .unwrap_or_default();
                match named {
                    Some(f) => format!("{kind} in an unsymbolised function{lib}, called under {f}"),
                    None => format!("{kind} in an unsymbolised function{lib}"),
                }
            }
        },
        None => match named {
            Some(f) => format!("{kind} in {f}"),
            None => kind.to_string(),
        },
    }
}

/// Where in the compiler the crash is, from the signature's phase and frames.
fn stage(case: &Case) -> &'static str {
    let phase = &case.signature.phase;
    let top = case
        .signature
        .frames
        .first()
        .map(String::as_str)
        .unwrap_or("");
    let stack = case
        .crash
        .pretty_stack
        .iter()
        .map(|e| e.text.as_str())
        .collect::<Vec<_>>()
        .join("\n");
    if top.starts_with("clang::Parser")
        || top.starts_with("clang::Sema")
        || top.starts_with("clang::Preprocessor")
        || top.starts_with("clang::Lexer")
        || (phase.contains("pars") && !stack.contains("Code generation"))
    {
        "frontend"
    } else if stack.contains("Code generation")
        || phase.contains("Instruction Selection")
        // The legacy pass manager runs only the code generator since LLVM 15: llc's stack
        // says `Running pass 'Function Pass Manager'` and then the machine pass (`Greedy
        // Register Allocator`), with no clang stage around it.
        || stack.contains("Running pass 'Function Pass Manager'")
    {
        "backend"
    } else if stack.contains("Optimizer") || stack.contains("Running pass \"") {
        "optimizer"
    } else if top.starts_with("clang::CodeGen") {
        "codegen"
    } else {
        "unknown"
    }
}

/// Labels to suggest for the LLVM issue tracker.
pub fn labels(case: &Case, invalid_code: bool) -> Vec<String> {
    let mut l = vec!["crash".to_string()];
    if !matches!(case.crash.kind, CrashKind::Killed | CrashKind::Timeout) {
        l.push(
            if invalid_code {
                "crash-on-invalid"
            } else {
                "crash-on-valid"
            }
            .into(),
        );
    }
    match stage(case) {
        "frontend" => l.push("clang:frontend".into()),
        "codegen" => l.push("clang:codegen".into()),
        "backend" => {
            if let Some(t) = backend_target(case) {
                l.push(format!("backend:{t}"));
            }
            if case.signature.phase.contains("DAG->DAG")
                || case
                    .signature
                    .frames
                    .iter()
                    .any(|f| f.starts_with("llvm::SelectionDAG"))
            {
                l.push("llvm:SelectionDAG".into());
            }
        }
        _ => {}
    }
    let frames = case.signature.frames.join(" ");
    if case.signature.phase.contains("declare-to-assign")
        || frames.contains("DebugInfo")
        || frames.contains("llvm::at::")
    {
        l.push("debuginfo".into());
    }
    if case.signature.phase.contains("instcombine") {
        l.push("llvm:instcombine".into());
    }
    l
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::case::tests::sample_case;

    #[test]
    fn labels_follow_the_stage_and_target() {
        let mut case = sample_case();
        case.signature.frames = vec!["clang::Sema::getDestructorName".into()];
        assert_eq!(
            labels(&case, true),
            ["crash", "crash-on-invalid", "clang:frontend"]
        );
        case.command = [
            "clang",
            "--target=riscv64-linux-gnu",
            "-march=rv64gcv",
            "-c",
            "f.c",
        ]
        .map(String::from)
        .to_vec();
        case.signature.frames = vec!["llvm::SelectionDAGISel::SelectCodeCommon".into()];
        case.signature.phase = "RISC-V DAG->DAG Pattern Instruction Selection".into();
        assert_eq!(
            labels(&case, false),
            [
                "crash",
                "crash-on-valid",
                "backend:RISC-V",
                "llvm:SelectionDAG"
            ]
        );
        assert_eq!(target_tag(&case), Some("RISC-V"));
    }

    /// A case whose crash is the recorded output of a corpus case, compiled for `triple`.
    fn corpus_case(name: &str, triple: &str) -> Case {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("corpus")
            .join(name);
        let stderr = std::fs::read_to_string(dir.join("stderr.txt")).unwrap();
        let rc: i32 = std::fs::read_to_string(dir.join("rc.txt"))
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        let exit = if rc > 128 {
            crate::crash::ExitInfo {
                code: None,
                signal: Some(rc - 128),
            }
        } else {
            crate::crash::ExitInfo {
                code: Some(rc),
                signal: None,
            }
        };
        let mut crash = crate::crash::parse(&stderr, exit).expect("a crash");
        crate::crash::Symbolizer::new(vec![]).symbolize(&mut crash);
        let mut case = sample_case();
        case.signature = crate::crash::signature(&crash);
        case.crash = crash;
        case.command = ["clang", &format!("--target={triple}"), "-c", "t.c"]
            .map(String::from)
            .to_vec();
        case.bug_info = Some(crate::case::BugInfo {
            triple: Some(triple.into()),
            ..Default::default()
        });
        case
    }

    #[test]
    fn a_backend_title_is_target_and_message_without_addresses() {
        let case = corpus_case("x86-avx512-no-evex512", "x86_64-unknown-linux-gnu");
        let t = crate::report::title(&case);
        assert_eq!(t, "[X86] Cannot select: v16i1 = setcc");
        assert!(labels(&case, false).contains(&"backend:X86".to_string()));
    }

    #[test]
    fn an_unsymbolised_crash_site_is_said_so_not_replaced_by_a_caller() {
        // #4 is named, #5.. are not: the site is #4.
        let case = corpus_case("fe-gh200682", "x86_64-unknown-linux-gnu");
        assert_eq!(
            crate::report::title(&case),
            "[clang] segmentation fault in clang::Sema::SubstParmVarDecl"
        );
        // With #4's symbol gone, the title must not name the next named frame as the site.
        let mut case = case;
        case.crash.frames[4].symbol = None;
        case.signature = crate::crash::signature(&case.crash);
        let t = crate::report::title(&case);
        assert!(
            t.starts_with("[clang] segmentation fault in an unsymbolised function of libclang-cpp.so.19.1, called under "),
            "{t}"
        );
        assert!(!t.contains("0x"), "{t}");
    }

    #[test]
    fn an_llc_crash_after_instruction_selection_is_still_the_backend() {
        let mut case = corpus_case("llc-gh169205", "x86_64-unknown-linux-gnu");
        let last = case.crash.pretty_stack.last_mut().unwrap();
        last.text = "Running pass 'Greedy Register Allocator' on function '@f'".into();
        case.signature = crate::crash::signature(&case.crash);
        assert_eq!(case.signature.phase, "Greedy Register Allocator");
        assert_eq!(stage(&case), "backend");
        assert!(
            crate::report::title(&case).starts_with("[X86] "),
            "{}",
            crate::report::title(&case)
        );
        assert!(labels(&case, false).contains(&"backend:X86".to_string()));
        // An optimizer crash in opt (the new pass manager's double quotes) is not.
        let opt = corpus_case("opt-ir-gh68553", "x86_64-unknown-linux-gnu");
        assert_eq!(stage(&opt), "optimizer", "{:?}", opt.crash.pretty_stack);
        assert_eq!(title_tag(&opt), None);
    }

    #[test]
    fn a_backend_segfault_on_aarch64_gets_its_target() {
        let mut case = corpus_case("fe-gh200682", "aarch64-unknown-linux-gnu");
        case.signature.phase = "AArch64 Instruction Selection".into();
        case.signature.frames = vec!["llvm::SelectionDAGISel::SelectCodeCommon".into()];
        let l = labels(&case, false);
        assert!(l.contains(&"backend:AArch64".to_string()), "{l:?}");
        assert!(crate::report::title(&case).starts_with("[AArch64] segmentation fault"));
    }

    #[test]
    fn title_messages_lose_addresses_and_local_paths() {
        assert_eq!(
            title_message("Cannot select: 0x55d0edd0f9c0: v16i1 = setcc 0x55d0edd0f6b0, 0x55d0edd0f870, seteq:ch\n  0x55: more"),
            "Cannot select: v16i1 = setcc"
        );
        assert_eq!(
            title_message("Cannot select: t25: v32i1 = setcc t7, t8, setgt:ch"),
            "Cannot select: v32i1 = setcc"
        );
        assert_eq!(
            title_message("invalid operand for instruction at src/masks.c:43:10"),
            "invalid operand for instruction"
        );
        assert_eq!(
            title_message("cannot open '/home/me/build/x.h' at 0x7ffd1234"),
            "cannot open 'x.h'"
        );
    }
}
