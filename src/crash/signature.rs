//! [`Crash`] → [`Signature`]: SIGNATURE v1 (`docs/crash-formats.md` §8).
//!
//! The canonical string and its normalisations follow a reference implementation
//! (`signature_ref.py`) line for line, so that the ids it recorded in
//! `tests/fixtures/samples/SIGNATURES.txt` are reproduced. Deliberate deviations (each
//! pinned by a test below):
//! - no signature exists for outputs the reference calls `unknown`/`exit1` but that are not
//!   crashes: [`super::parse`] returns `None` for them;
//! - libc frames printed with a glibc source location (`__read ./io/../sysdeps/…:26:10`) are
//!   dropped like libc frames printed with a module, so symbolized and unsymbolized prints of
//!   one crash hash alike (the reference keeps them);
//! - SIGKILL is `killed` (infrastructure), a stack overflow hashes as `SIGSEGV` (what it is), a
//!   signal-less LLVM-tool stack dump is `unknown` as in the reference;
//! - c++filt's ` [clone .isra.0]` is removed with the argument list (the reference keeps both);
//! - `UNREACHABLE executed` takes the line before it as its reason only when that line is not a
//!   diagnostic, banner or blank (the reference always takes it), and BSD-style
//!   `Assertion failed: (cond), function f, file F, line N.` is understood too.
//!
//! Like the reference, and unlike the prose of §8, frames are not capped at 80 characters and
//! messages get no 3-digit-number normalisation: either would change recorded ids.

use std::sync::LazyLock;

use regex::Regex;

use super::{Crash, CrashKind, Frame, Signature};

/// Frames that belong to crash-reporting machinery, libc or the driver wrapper, never to the bug.
static SKIP: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"^(llvm::sys::|llvm::CrashRecoveryContext|CrashRecoverySignalHandler|SignalHandler|",
        r"llvm::report_fatal_error|llvm::llvm_unreachable_internal|llvm::reportGISelFailure|",
        r"__assert_|__GI_|__pthread_kill|pthread_kill|raise|abort|_start|__libc_|call_init|",
        r"main$|clang_main|cc1_main|ExecuteCC1Tool|operator new|malloc|_int_malloc|tcache_|free$)"
    ))
    .unwrap()
});
static SKIP_MODULES: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"/(libc\.so|libstdc\+\+\.so|libgcc_s\.so|ld-linux)").unwrap());
static ABI_TAG: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"\[abi:\w+\]").unwrap());
static CLONE_SUFFIX: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\.(cold|isra|constprop|part|llvm)\.?\d*").unwrap());
static FUNC_NUMBERS: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"0x[0-9a-fA-F]+|\b\d{3,}\b").unwrap());
static MSG_ADDR: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"0x[0-9a-fA-F]+").unwrap());
static MSG_DAG_NODE: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"\bt\d+\b").unwrap());
static MSG_IR_VALUE: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"%[\w.]+|@[\w.$]+").unwrap());
static MSG_PATH_LINE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(/[^\s:]+/)?([\w.+-]+\.(?:cpp|cc|c|h|td|inc)):\d+").unwrap());
static MSG_SPACE: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"\s+").unwrap());
static ASSERT_MSG: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^(\S+?):(\d+): (.*?): Assertion [`'](.*)' failed\.$").unwrap());
static ASSERT_BSD_MSG: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^Assertion failed: \(?(.*?)\)?, function .*, file (\S+), line \d+\.$").unwrap()
});
static GCC_AT: LazyLock<Regex> = LazyLock::new(|| Regex::new(r", at (\S+?):\d+").unwrap());
/// The reference's `(['"])(.*?)\1`, spelled as two alternatives (no backreferences here).
static RUNNING_PASS: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"^Running pass (?:'(.*?)'|"(.*?)") on (?:module|function|basic block|loop|machine function|cgscc|SCC)"#)
        .unwrap()
});
/// ` [clone .isra.0]` as c++filt prints GCC clones (the reference would keep the arguments).
static CLONE_TAG: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"\s*\[clone [^\]]*\]").unwrap());
static STAGE_LOCATION: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^\S+:\d+:\d+: ").unwrap());
static STAGE_QUOTED: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"'[^']*'").unwrap());
/// Top-level directories of the glibc source tree, as its debug info names them
/// (`./csu/../sysdeps/nptl/libc_start_call_main.h`, `../sysdeps/posix/raise.c`).
static GLIBC_SOURCE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"^(?:\.\.?/)+(?:sysdeps|csu|nptl|signal|io|stdlib|string|malloc|posix|misc|libio|elf|dlfcn|setjmp|wcsmbs|stdio-common)/",
    )
    .unwrap()
});

/// How many meaningful frames are hashed.
const HASHED_FRAMES: usize = 3;
/// Cap on the normalised message, in characters.
const MESSAGE_CAP: usize = 160;

fn basename(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// The kind as hashed.
fn kind_name(crash: &Crash) -> &'static str {
    match crash.kind {
        CrashKind::Assertion => "assert",
        CrashKind::Unreachable => "unreachable",
        CrashKind::FatalError => "fatal_error",
        CrashKind::GccIce => "gcc_ice",
        // Detected from the frames, a heuristic: hash what the process saw, so the id does not
        // move when the heuristic does.
        CrashKind::Segfault => "SIGSEGV",
        // Hashed by its recursion, not its innermost frames (see `recursion_frames`).
        CrashKind::StackOverflow => "stack_overflow",
        CrashKind::IllegalInstruction => "SIGILL",
        CrashKind::Abort => "SIGABRT",
        CrashKind::BusError => "SIGBUS",
        CrashKind::FloatingPointException => "SIGFPE",
        CrashKind::Trap => "SIGTRAP",
        CrashKind::Killed => "killed",
        CrashKind::Timeout => "timeout",
        // The reference says `signal` for `failed due to signal` without the strsignal line,
        // and `unknown` when nothing names the failure (LLVM tools print no signal).
        CrashKind::OtherSignal => match (crash.signal, crash.in_process) {
            (Some(_), _) => "signal",
            (None, Some(false)) => "signal",
            (None, _) => "unknown",
        },
    }
}

/// The message before normalisation, as the reference extracts it.
fn raw_message(crash: &Crash) -> String {
    let Some(message) = crash.message.as_deref() else {
        return String::new();
    };
    match crash.kind {
        CrashKind::Assertion => {
            if let Some(c) = ASSERT_MSG.captures(message) {
                format!("{}: {}", basename(&c[1]), &c[4])
            } else if let Some(c) = ASSERT_BSD_MSG.captures(message) {
                format!("{}: {}", basename(&c[2]), &c[1])
            } else {
                message.to_owned()
            }
        }
        CrashKind::Unreachable => {
            // `reason\nUNREACHABLE executed at /path/File.cpp:77!` → `reason @File.cpp`.
            let (reason, marker) = message.rsplit_once('\n').unwrap_or(("", message));
            let file = marker
                .split_once(" at ")
                .map(|(_, loc)| basename(loc.split(':').next().unwrap_or(loc)))
                .unwrap_or("");
            format!("{reason} @{file}")
        }
        CrashKind::GccIce => GCC_AT.replace_all(message, ", at ${1}").into_owned(),
        _ => message.to_owned(),
    }
}

/// `norm_msg` of the reference: addresses, DAG node ids, IR values and source lines go.
/// `Cannot select: <node>: <types> = <opcode><…> <operands>`: the node's id, memory operand,
/// metadata and operands change with every edit of the source, so a reduction would lose the
/// crash at once and stall (`docs/design/source-passes.md`). The opcode is the identity of an
/// ISel failure.
static CANNOT_SELECT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^Cannot select: (?:\S+: )?(?:[^=]*= )?([A-Za-z_][\w:]*)").expect("valid regex")
});

fn normalize_message(msg: &str) -> String {
    if let Some(c) = CANNOT_SELECT.captures(msg) {
        return format!("Cannot select: {}", &c[1]);
    }
    let msg = MSG_ADDR.replace_all(msg, "ADDR");
    let msg = MSG_DAG_NODE.replace_all(&msg, "tN");
    let msg = MSG_IR_VALUE.replace_all(&msg, "VAL");
    let msg = MSG_PATH_LINE.replace_all(&msg, "${2}");
    let msg = MSG_SPACE.replace_all(&msg, " ");
    msg.trim().chars().take(MESSAGE_CAP).collect()
}

/// `norm_func` of the reference: one function name without arguments, clone suffixes,
/// anonymous namespaces and numbers.
pub fn normalize_function(name: &str) -> String {
    let name = name
        .replace("(anonymous namespace)::", "")
        .replace("non-virtual thunk to ", "");
    let name = CLONE_TAG.replace_all(&name, "");
    let name = ABI_TAG.replace_all(&name, "");
    let name = CLONE_SUFFIX.replace_all(&name, "");
    let mut name: &str = name.strip_suffix(" const").unwrap_or(&name);
    // Strip the trailing `(…)` argument list, matching parentheses from the end.
    if name.ends_with(')') {
        let mut depth = 0i32;
        for (i, ch) in name.char_indices().rev() {
            match ch {
                ')' => depth += 1,
                '(' => {
                    depth -= 1;
                    if depth == 0 {
                        if i > 0 {
                            name = &name[..i];
                        }
                        break;
                    }
                }
                _ => {}
            }
        }
    }
    FUNC_NUMBERS.replace_all(name, "N").trim().to_owned()
}

/// The innermost `Running pass` name, else GCC's pass, else the innermost stage with user
/// locations and identifiers removed.
fn phase(crash: &Crash) -> String {
    let mut pass = None;
    let mut stage = None;
    for entry in &crash.pretty_stack {
        if let Some(c) = RUNNING_PASS.captures(&entry.text) {
            pass = c.get(1).or(c.get(2)).map(|m| m.as_str().to_owned());
            continue;
        }
        let text = STAGE_LOCATION.replace(&entry.text, "");
        stage = Some(STAGE_QUOTED.replace_all(&text, "'X'").into_owned());
    }
    pass.or_else(|| crash.gcc_pass.clone())
        .or(stage)
        .unwrap_or_default()
}

/// The pretty-stack entry the signature's phase comes from, in clang's own words (its
/// source location dropped, names kept: `in compound statement ('{}')`, `Running pass
/// 'Loop Strength Reduction' on loop '%for.body'`), or GCC's `during RTL pass: final`. The
/// normalised phase belongs in the signature; prose shows this.
pub fn phase_as_printed(crash: &Crash) -> Option<String> {
    let mut pass = None;
    let mut stage = None;
    for entry in &crash.pretty_stack {
        if RUNNING_PASS.is_match(&entry.text) {
            pass = Some(entry.text.clone());
            continue;
        }
        stage = Some(STAGE_LOCATION.replace(&entry.text, "").into_owned());
    }
    pass.or_else(|| {
        crash.gcc_pass.as_ref().map(|p| match p.split_once(':') {
            Some((ir, name)) => format!("during {ir} pass: {name}"),
            None => p.clone(),
        })
    })
    .or(stage)
}

/// Whether a frame is libc, libstdc++, libgcc or the dynamic loader.
fn is_system_frame(frame: &Frame) -> bool {
    let module = frame
        .module
        .as_deref()
        .is_some_and(|m| SKIP_MODULES.is_match(&format!("/{}", m.trim_start_matches('/'))));
    let glibc_source = frame
        .file
        .as_deref()
        .is_some_and(|f| GLIBC_SOURCE.is_match(f));
    module || glibc_source
}

/// The frame the process was in when the signal came: the first frame after the signal
/// handler's (the crash-reporting machinery, then libc's signal return). For a crash that
/// printed no frame of libc (a `report_fatal_error`), the first frame that is not the
/// machinery's. Symbolised or not: a title that named the first *named* frame instead would
/// name a caller as the crash site.
pub fn crash_site(crash: &Crash) -> Option<&Frame> {
    let is_machinery = |f: &Frame| {
        is_system_frame(f)
            || f.symbol
                .as_deref()
                .is_some_and(|s| SKIP.is_match(&super::frames::demangle(s)))
    };
    let frames = &crash.frames;
    // The signal handler's own frames come first (PrintStackTrace, RunSignalHandlers, unnamed
    // ones of the same library), then libc's trampoline: the crash site follows it.
    let trampoline = frames
        .iter()
        .take(8)
        .position(is_system_frame)
        .filter(|&i| {
            frames[..i].iter().any(|f| {
                f.symbol
                    .as_deref()
                    .is_some_and(|s| s.contains("llvm::sys::"))
            })
        });
    match trampoline {
        Some(i) => frames[i + 1..].iter().find(|f| !is_machinery(f)),
        None => frames
            .iter()
            .find(|f| !is_machinery(f) && f.symbol.as_deref().is_some_and(|s| !s.is_empty())),
    }
}

/// The hashed frames and the number of unnamed frames met before the last of them.
fn meaningful_frames(frames: &[Frame]) -> (Vec<String>, u32) {
    meaningful_frames_up_to(frames, HASHED_FRAMES)
}

/// The first `n` frames the signature would hash if it hashed `n`: named, not libc or the
/// crash handler, function names normalised. What a report compares when two runs of a crash
/// agree only on the coarse id (their frames differ below the top one).
pub fn named_frames(crash: &Crash, n: usize) -> Vec<String> {
    meaningful_frames_up_to(&crash.frames, n).0
}

fn meaningful_frames_up_to(frames: &[Frame], n: usize) -> (Vec<String>, u32) {
    let mut out = Vec::new();
    let mut unnamed = 0;
    for frame in frames {
        if out.len() == n {
            break;
        }
        if is_system_frame(frame) {
            continue;
        }
        let Some(symbol) = frame.symbol.as_deref().filter(|s| !s.is_empty()) else {
            unnamed += 1;
            continue;
        };
        let symbol = super::frames::demangle(symbol);
        if SKIP.is_match(&symbol) {
            continue;
        }
        out.push(normalize_function(&symbol));
    }
    (out, unnamed)
}

/// The functions of the recursion that overflowed the stack, by name. The innermost frames
/// of a stack overflow are wherever the stack happened to run out, which differs from run to
/// run (seen on GH68553: three different innermost frames in four runs); the functions that
/// recur are the same every time. Members are those seen at least three times and at least a
/// quarter as often as the most frequent one: a cycle may call one member twice per turn, so
/// a half would sit right at the ratio of their counts and flip with where the printed
/// frames end. Named ones (module+offset when none is named), the first three by name.
fn recursion_frames(frames: &[Frame]) -> Vec<String> {
    let mut counts: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    let mut unnamed: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for frame in frames.iter().filter(|f| !is_system_frame(f)) {
        match frame.symbol.as_deref().filter(|s| !s.is_empty()) {
            Some(symbol) => {
                let symbol = super::frames::demangle(symbol);
                if !SKIP.is_match(&symbol) {
                    *counts.entry(normalize_function(&symbol)).or_default() += 1;
                }
            }
            None => {
                if let (Some(m), Some(off)) = (frame.module.as_deref(), frame.offset) {
                    *unnamed
                        .entry(format!("{}+{off:#x}", basename(m)))
                        .or_default() += 1;
                }
            }
        }
    }
    let pick = |counts: std::collections::HashMap<String, usize>| {
        let max = counts.values().copied().max().unwrap_or(0);
        let mut names: Vec<String> = counts
            .into_iter()
            .filter(|(_, c)| *c >= 3 && *c * 4 >= max)
            .map(|(name, _)| name)
            .collect();
        names.sort();
        names.truncate(HASHED_FRAMES);
        names
    };
    let named = pick(counts);
    if named.is_empty() {
        pick(unnamed)
    } else {
        named
    }
}

fn sha12(text: &str) -> String {
    let mut hex = sha1_smol::Sha1::from(text).hexdigest();
    hex.truncate(12);
    hex
}

/// Computes the SIGNATURE v1 of a crash.
pub fn signature(crash: &Crash) -> Signature {
    let kind = kind_name(crash);
    let message = normalize_message(&raw_message(crash));
    let phase = phase(crash);
    let (frames, unnamed_frames) = if crash.kind == CrashKind::StackOverflow {
        (recursion_frames(&crash.frames), 0)
    } else {
        meaningful_frames(&crash.frames)
    };
    let text = format!("v1|{kind}|{message}|{phase}|{}", frames.join(" > "));
    let coarse = format!(
        "v1|{kind}|{message}|{phase}|{}",
        frames.first().map(String::as_str).unwrap_or("")
    );
    Signature {
        id: sha12(&text),
        coarse_id: sha12(&coarse),
        weak: frames.len() < 2 && message.is_empty(),
        text,
        kind: kind.to_owned(),
        message,
        phase,
        frames,
        unnamed_frames,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crash::{ExitInfo, Family, PrettyEntry};

    #[test]
    fn function_names() {
        let rows = [
            (
                "clang::Preprocessor::HandlePragmaDirective(clang::PragmaIntroducer)",
                "clang::Preprocessor::HandlePragmaDirective",
            ),
            (
                "llvm::TypeSize::operator unsigned long() const",
                "llvm::TypeSize::operator unsigned long",
            ),
            (
                "(anonymous namespace)::Foo::run(llvm::Function&) [clone .isra.0]",
                // Deviation: the reference leaves `(llvm::Function&) [clone ]`.
                "Foo::run",
            ),
            ("foo.cold.123(int)", "foo"),
            (
                "std::__cxx11::basic_string[abi:cxx11]::size() const",
                "std::__cxx11::basic_string::size",
            ),
            (
                "llvm::SmallVector<int, 1024u>::grow(unsigned long)",
                "llvm::SmallVector<int, 1024u>::grow",
            ),
            ("f(g(1), (h))", "f"),
            ("non-virtual thunk to A::f()", "A::f"),
            ("(x)", "(x)"),
        ];
        for (raw, want) in rows {
            assert_eq!(normalize_function(raw), want, "{raw}");
        }
    }

    #[test]
    fn messages() {
        let rows = [
            // Deviation from signature_ref.py: ISel failures keep only the opcode.
            (
                "Cannot select: 0x55cec7b3db00: ch = store<(store (s32) into %ir.2, align 8)> # D:1 0x55ce",
                "Cannot select: store",
            ),
            ("LLVM ERROR: t32 at 0x55cec7b3db00", "LLVM ERROR: tN at ADDR"),
            ("in f, at /src/gcc/cfgexpand.cc:1134", "in f, at cfgexpand.cc"),
            ("  a \n\t b  ", "a b"),
        ];
        for (raw, want) in rows {
            assert_eq!(normalize_message(raw), want, "{raw}");
        }
        assert_eq!(normalize_message(&"x".repeat(500)).len(), MESSAGE_CAP);
    }

    fn crash(kind: CrashKind, message: Option<&str>) -> Crash {
        Crash {
            family: Family::Clang,
            kind,
            signal: None,
            message: message.map(str::to_owned),
            tool: None,
            in_process: None,
            cc1_exit_code: None,
            program_arguments: None,
            pretty_stack: vec![],
            frames: vec![],
            gcc_pass: None,
            reproducer_files: vec![],
            source_errors: 0,
        }
    }

    #[test]
    fn raw_messages() {
        let rows = [
            (
                CrashKind::Assertion,
                "/b/llvm/lib/CodeGen/X.cpp:1962: void f(): Assertion `N && \"bad\"' failed.",
                "X.cpp: N && \"bad\"",
            ),
            (
                CrashKind::Assertion,
                "Assertion failed: (N && \"bad\"), function f, file /b/X.cpp, line 12.",
                "X.cpp: N && \"bad\"",
            ),
            (
                CrashKind::Unreachable,
                "Unhandled opcode!\nUNREACHABLE executed at /b/llvm/lib/Y.cpp:77!",
                "Unhandled opcode! @Y.cpp",
            ),
            (CrashKind::Unreachable, "UNREACHABLE executed!", " @"),
            (
                CrashKind::GccIce,
                "in expand_gimple_cond_expr, at cfgexpand.cc:1134",
                "in expand_gimple_cond_expr, at cfgexpand.cc",
            ),
        ];
        for (kind, message, want) in rows {
            assert_eq!(raw_message(&crash(kind, Some(message))), want, "{message}");
        }
    }

    #[test]
    fn phases() {
        let mut c = crash(CrashKind::Segfault, None);
        let entry = |index, text: &str| PrettyEntry {
            index,
            text: text.to_owned(),
        };
        c.pretty_stack = vec![
            entry(1, "<eof> parser at end of file"),
            entry(2, "Code generation"),
            entry(3, "Running pass 'Function Pass Manager' on module 'big.c'."),
            entry(4, "Running pass 'X86 cmov Conversion' on function '@f2325'"),
        ];
        assert_eq!(phase(&c), "X86 cmov Conversion");
        c.pretty_stack.truncate(2);
        assert_eq!(phase(&c), "Code generation");
        c.pretty_stack = vec![entry(3, "f.cpp:5:21: parsing function body 'GH59446::f'")];
        assert_eq!(phase(&c), "parsing function body 'X'");
        // Mismatched quotes are not a pass (the reference's `\1` backreference).
        c.pretty_stack = vec![entry(3, "Running pass 'a\" on module \"m\"")];
        assert_eq!(phase(&c), "Running pass 'a\" on module \"m\"");
        c.pretty_stack.clear();
        c.gcc_pass = Some("RTL:final".into());
        assert_eq!(phase(&c), "RTL:final");
        assert_eq!(phase_as_printed(&c).unwrap(), "during RTL pass: final");
    }

    #[test]
    fn phase_in_clangs_own_words() {
        let mut c = crash(CrashKind::Segfault, None);
        let entry = |index, text: &str| PrettyEntry {
            index,
            text: text.to_owned(),
        };
        c.pretty_stack = vec![
            entry(
                3,
                "src/w.cpp:13:33: parsing function body 'widgets::release'",
            ),
            entry(4, "src/w.cpp:13:33: in compound statement ('{}')"),
        ];
        assert_eq!(phase(&c), "in compound statement ('X')");
        assert_eq!(
            phase_as_printed(&c).unwrap(),
            "in compound statement ('{}')"
        );
        c.pretty_stack.push(entry(
            5,
            "Running pass 'X86 cmov Conversion' on function '@f2325'",
        ));
        assert_eq!(
            phase_as_printed(&c).unwrap(),
            "Running pass 'X86 cmov Conversion' on function '@f2325'"
        );
        c.pretty_stack.clear();
        assert_eq!(phase_as_printed(&c), None);
    }

    #[test]
    fn frames_skip_machinery_libc_and_count_unnamed() {
        let f = |symbol: Option<&str>, module: Option<&str>, file: Option<&str>| Frame {
            symbol: symbol.map(str::to_owned),
            module: module.map(str::to_owned),
            file: file.map(str::to_owned),
            ..Frame::default()
        };
        let frames = vec![
            f(
                Some("llvm::sys::PrintStackTrace(llvm::raw_ostream&, int)"),
                Some("/l/libLLVM.so.19.1"),
                None,
            ),
            f(None, Some("/l/libLLVM.so.19.1"), None),
            f(None, Some("/lib/x86_64-linux-gnu/libc.so.6"), None),
            f(
                Some("__read"),
                None,
                Some("./io/../sysdeps/unix/sysv/linux/read.c"),
            ),
            f(None, Some("libclang-cpp.so.19.1"), None),
            f(
                Some("_ZN5clang12Preprocessor3LexERNS_5TokenE"),
                Some("/l/libclang-cpp.so.14"),
                None,
            ),
            f(Some("A::b() const"), None, None),
            f(Some("c(int)"), Some("libstdc++.so.6"), None),
            f(Some("d()"), None, Some("/home/me/llvm/lib/D.cpp")),
            f(Some("e()"), None, None),
        ];
        let (names, unnamed) = meaningful_frames(&frames);
        assert_eq!(names, ["clang::Preprocessor::Lex", "A::b", "d"]);
        assert_eq!(unnamed, 2);
    }

    /// The reference hashes `__read` (a libc frame printed with a glibc source location) in
    /// the llc sample, so the symbolized and the unsymbolized print of that crash would differ.
    #[test]
    fn deviation_libc_frames_with_source_location_are_dropped() {
        let stderr = "PLEASE submit a bug report to https://github.com/llvm/llvm-project/issues/ and include the crash backtrace.\n\
Stack dump:\n\
0.\tProgram arguments: llc-19 -o /dev/null\n \
#3 0x00007f6e3885a050 (/lib/x86_64-linux-gnu/libc.so.6+0x3c050)\n \
#4 0x00007f6e389162ad __read ./io/../sysdeps/unix/sysv/linux/read.c:26:10\n \
#5 0x00007f6e398ad4c5 llvm::sys::fs::readNativeFileToEOF(int, llvm::SmallVectorImpl<char>&, long) (/usr/lib/llvm-19/bin/../lib/libLLVM.so.19.1+0xead4c5)\n \
#7 0x00007f6e3982d58e llvm::MemoryBuffer::getFileOrSTDIN(llvm::Twine const&, bool, bool, std::optional<llvm::Align>) (/usr/lib/llvm-19/bin/../lib/libLLVM.so.19.1+0xe2d58e)\n \
#8 0x00007f6e39ada970 llvm::parseIRFile(llvm::StringRef, llvm::SMDiagnostic&, llvm::LLVMContext&, llvm::ParserCallbacks) (/usr/lib/llvm-19/bin/../lib/libLLVM.so.19.1+0x10da970)\n \
#10 0x000055c2802eb370 main (/usr/lib/llvm-19/bin/llc+0x14370)\n";
        let symbolized = crate::crash::parse(stderr, ExitInfo::default()).unwrap();
        let unsymbolized = crate::crash::parse(
            &stderr.replace(
                " #4 0x00007f6e389162ad __read ./io/../sysdeps/unix/sysv/linux/read.c:26:10",
                " #4 0x00007f6e389162ad (/lib/x86_64-linux-gnu/libc.so.6+0x1162ad)",
            ),
            ExitInfo::default(),
        )
        .unwrap();
        let sig = signature(&symbolized);
        assert_eq!(sig, signature(&unsymbolized));
        assert_eq!(sig.kind, "unknown");
        assert_eq!(
            sig.frames,
            ["llvm::MemoryBuffer::getFileOrSTDIN", "llvm::parseIRFile"]
        );
        // signature_ref.py: `329dd3271178  v1|unknown|||__read > llvm::MemoryBuffer::getFileOrSTDIN > llvm::parseIRFile`
        assert_ne!(sig.id, "329dd3271178");
        assert_eq!(
            sha12("v1|unknown|||__read > llvm::MemoryBuffer::getFileOrSTDIN > llvm::parseIRFile"),
            "329dd3271178"
        );
    }

    #[test]
    fn weak_and_coarse() {
        let mut c = crash(CrashKind::Segfault, None);
        let s = signature(&c);
        assert!(s.weak);
        assert_eq!(s.text, "v1|SIGSEGV|||");
        assert_eq!(s.id, s.coarse_id);
        c.frames = ["a()", "b()", "c()", "d()"]
            .iter()
            .map(|s| Frame {
                symbol: Some((*s).to_owned()),
                ..Frame::default()
            })
            .collect();
        let s = signature(&c);
        assert!(!s.weak);
        assert_eq!(s.text, "v1|SIGSEGV|||a > b > c");
        assert_eq!(s.coarse_id, sha12("v1|SIGSEGV|||a"));
        assert_ne!(s.id, s.coarse_id);
        assert_eq!(s.id.len(), 12);
    }
}

#[cfg(test)]
mod cannot_select_tests {
    use super::normalize_message;

    #[test]
    fn isel_failures_are_identified_by_their_opcode() {
        let rows = [
            (
                "Cannot select: 0x555b1b83e7c0: ch = store<(store (s32) into %ir.2, align 8, !tbaa !5)> # D:1 0x555b1b710c48, Constant:i32<0>, 0x555b1b81e3e0, undef:i64",
                "Cannot select: store",
            ),
            ("Cannot select: t32: i32 = RISCVISD::CZERO_EQZ t25, t4", "Cannot select: RISCVISD::CZERO_EQZ"),
            ("Cannot select: 0x1: i64,ch = load<(load (s64))> 0x2", "Cannot select: load"),
            ("Cannot select: intrinsic %llvm.x86.foo", "Cannot select: intrinsic"),
        ];
        for (raw, want) in rows {
            assert_eq!(normalize_message(raw), want, "{raw}");
        }
    }
}
