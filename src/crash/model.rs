//! The crash data model shared by every stage; serialised into `case.json`.

use serde::{Deserialize, Serialize};

/// How the compiler process ended, as the parser needs to know it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExitInfo {
    /// Exit code when the process exited normally.
    pub code: Option<i32>,
    /// Signal number when the process was killed by a signal.
    pub signal: Option<i32>,
}

/// Which compiler family printed the crash. Never a version: versions go into metadata.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Family {
    Clang,
    Gcc,
    /// An LLVM tool other than the clang driver (`llc`, `opt`, …).
    LlvmTool,
}

/// What kind of failure the crash is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CrashKind {
    Segfault,
    IllegalInstruction,
    Abort,
    BusError,
    FloatingPointException,
    Trap,
    /// `Assertion `…' failed.` (assertion-enabled builds).
    Assertion,
    /// `UNREACHABLE executed at …`.
    Unreachable,
    /// `fatal error: error in backend: …` / `LLVM ERROR: …` / cc1 exit code 70.
    FatalError,
    /// A segfault from running out of stack (deep recursion in the frames).
    StackOverflow,
    /// GCC `internal compiler error: …` (not a signal the driver reported).
    GccIce,
    /// Killed by SIGKILL (usually the OOM killer): infrastructure, not a compiler bug.
    Killed,
    /// Did not finish within the time limit: infrastructure, not a compiler bug.
    Timeout,
    /// Any other signal death.
    OtherSignal,
}

/// Human words for a crash kind ("segmentation fault", "assertion failure" …): the one
/// wording the report, the store's titles and the stages' evidence share.
pub fn kind_words(kind: CrashKind) -> &'static str {
    match kind {
        CrashKind::Segfault => "segmentation fault",
        CrashKind::IllegalInstruction => "illegal instruction",
        CrashKind::Abort => "abort",
        CrashKind::BusError => "bus error",
        CrashKind::FloatingPointException => "floating point exception",
        CrashKind::Trap => "trap",
        CrashKind::Assertion => "assertion failure",
        CrashKind::Unreachable => "unreachable executed",
        CrashKind::FatalError => "fatal error",
        CrashKind::StackOverflow => "stack overflow",
        CrashKind::GccIce => "internal compiler error",
        CrashKind::Killed => "killed",
        CrashKind::Timeout => "timeout",
        CrashKind::OtherSignal => "signal",
    }
}

/// One pretty-stack entry (`N.\t<text>` after `Stack dump:`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PrettyEntry {
    pub index: u32,
    pub text: String,
}

/// One backtrace frame.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Frame {
    pub index: u32,
    /// Demangled function name, when known (printed or symbolized).
    pub symbol: Option<String>,
    /// Path or basename of the module (`/usr/lib/llvm-19/lib/libLLVM.so.19.1`).
    pub module: Option<String>,
    /// File-relative offset inside the module, when printed.
    pub offset: Option<u64>,
    /// Source file and line, when the symbolizer printed them.
    pub file: Option<String>,
    pub line: Option<u32>,
    /// Runtime address of the frame, when printed. Not stable across runs (ASLR); kept so the
    /// symbolizer can recover module offsets of dladdr-format frames, which print no offset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub address: Option<u64>,
    /// Offset of `address` from the start of `symbol`, when printed (`name + 54` in the dladdr
    /// format, `(_ZN…+0x31)` in the glibc format). Together with `address` it gives the
    /// module's load base.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub symbol_offset: Option<u64>,
    /// True when `symbol` was filled in by icepick from the module's ELF symbols.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub symbolized_by_icepick: bool,
}

/// A crash parsed from compiler output.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Crash {
    pub family: Family,
    pub kind: CrashKind,
    /// Signal number behind the crash, when known (from the process status, `exit code 128+N`,
    /// or `unable to execute command: <strsignal>`).
    pub signal: Option<i32>,
    /// The verbatim error text: fatal error / assertion / ICE message. `None` for plain signals.
    pub message: Option<String>,
    /// The driver's prefix (`clang-19`), when printed.
    pub tool: Option<String>,
    /// `Some(true)` for in-process cc1 (`exit code N`), `Some(false)` for out-of-process
    /// (`due to signal`, `unable to execute command`), `None` when the driver said neither.
    pub in_process: Option<bool>,
    /// The cc1 exit code reported by the driver (`… failed with exit code N`).
    pub cc1_exit_code: Option<i32>,
    /// The `0. Program arguments:` line, verbatim (no quoting is printed by clang).
    pub program_arguments: Option<String>,
    /// Pretty-stack entries other than `Program arguments`, outermost first.
    pub pretty_stack: Vec<PrettyEntry>,
    /// Backtrace frames, innermost first.
    pub frames: Vec<Frame>,
    /// GCC `during <IR> pass: <name>` as `IR:name`.
    pub gcc_pass: Option<String>,
    /// Paths of clang's own reproducer files (`diagnostic msg: /…`).
    pub reproducer_files: Vec<String>,
    /// Source diagnostics with severity `error` printed before the crash: more than zero
    /// makes it a crash on invalid code.
    #[serde(default)]
    pub source_errors: u32,
}

/// A stable identity for a crash (SIGNATURE v1, `docs/crash-formats.md` §8).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Signature {
    /// 12 hex digits of sha1 over `text`.
    pub id: String,
    /// 12 hex digits of sha1 over the coarse text (top frame only), for matching across versions.
    pub coarse_id: String,
    /// The canonical string that was hashed: `v1|kind|msg'|phase'|F1' > F2' > F3'` (the
    /// reference implementation behind `SIGNATURES.txt` hashes no family; the kinds already tell GCC from clang).
    pub text: String,
    /// Kind as hashed (`SIGSEGV`, `fatal_error`, `assert`, `gcc_ice` …).
    pub kind: String,
    /// Normalised message (may be empty).
    pub message: String,
    /// Normalised innermost pass or stage (may be empty).
    pub phase: String,
    /// The normalised meaningful frames that were hashed (at most 3).
    pub frames: Vec<String>,
    /// Unnamed frames skipped before the hashed ones were found.
    pub unnamed_frames: u32,
    /// Fewer than two named frames and no message: a poor identity.
    pub weak: bool,
}
