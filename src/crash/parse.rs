//! Compiler stderr + exit status → [`Crash`], or `None` when the compiler did not crash.
//!
//! Every line is matched against every marker, in any order: clang prints its banner and its
//! driver error in either order (`docs/crash-formats.md` §1), and GCC prints `during … pass` before
//! the ICE. Only after the whole text is read is the crash kind decided, by a fixed precedence
//! (assertion > unreachable > fatal error > GCC ICE > signals), so the result never depends on
//! which line came first.

use std::sync::LazyLock;

use regex::Regex;

use super::frames::parse_frames;
use super::{Crash, CrashKind, ExitInfo, Family, Frame, PrettyEntry};

static PRETTY: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^(\d+)\.\t(.*)$").unwrap());
static ASSERT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?:(\S+): )?(\S+?:\d+: .*?: Assertion [`'].*' failed\.)$").unwrap()
});
/// BSD/macOS libc: `Assertion failed: (cond), function f, file X.cpp, line 12.`
static ASSERT_BSD: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?:(\S+): )?(Assertion failed: .*, function .*, file \S+, line \d+\.)$").unwrap()
});
static UNREACHABLE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^UNREACHABLE executed(?: at \S+?:\d+)?!$").unwrap());
static FATAL: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?:(\S+): )?(?:fatal error: error in backend|LLVM ERROR): (.*)$").unwrap()
});
static GCC_ICE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?:\S+:\d+:\d+: |(\S+): )?internal compiler error: (.*)$").unwrap()
});
static GCC_PASS: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^during (GIMPLE|RTL|IPA) pass: (\S+)$").unwrap());
/// `gcc-12: fatal error: Killed signal terminated program cc1` (OOM killer, rc 1).
static GCC_KILLED: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(\S+): fatal error: (Killed signal terminated program \S+)$").unwrap()
});
/// The signal part of a driver-detected GCC ICE (`Trace/breakpoint trap signal terminated …`).
static GCC_SIGNAL_TERMINATED: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^(.+) signal terminated program \S+$").unwrap());
static UNABLE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(\S+): error: unable to execute command: (.*?)(?: \(core dumped\))?$").unwrap()
});
static FAILED: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"^(\S+): error: (.+?) command failed (?:with exit code (-?\d+)|due to signal)(?: \(use -v to see invocation\))?$",
    )
    .unwrap()
});
static FORCED: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"^\S+: error: failing because (?:environment variable 'FORCE_CLANG_DIAGNOSTICS_CRASH' is set|'-gen-reproducer' is used)",
    )
    .unwrap()
});
static REPRO: LazyLock<Regex> =
    // An absolute path may hold spaces (`/tmp/my file-2d2b1a.cpp`); other text after the
    // note (the banner's sentences) has spaces and no leading `/`.
    LazyLock::new(|| Regex::new(r"^(\S+): note: diagnostic msg: (/.*\S|\S+)$").unwrap());
static GCC_REPRO: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^Preprocessed source stored into (\S+) file").unwrap());
static DIAGNOSTIC: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\S+:\d+:\d+: (?:warning|error|note|remark|fatal error):").unwrap()
});

const SIGHUP: i32 = 1;
const SIGINT: i32 = 2;
const SIGILL: i32 = 4;
const SIGTRAP: i32 = 5;
const SIGABRT: i32 = 6;
const SIGBUS: i32 = 7;
const SIGFPE: i32 = 8;
const SIGKILL: i32 = 9;
const SIGSEGV: i32 = 11;
const SIGTERM: i32 = 15;

/// The exit code of `report_fatal_error` (`docs/crash-formats.md` §1).
const FATAL_ERROR_EXIT: i32 = 70;

/// Frames at least this many times the same function (or the same unnamed module+offset)
/// mean runaway recursion (a ScalarEvolution overflow repeats `getSCEVAtScope` over a hundred
/// times in the 256 frames LLVM prints).
const RECURSION_REPEATS: usize = 20;
/// A long trace (LLVM stops printing at 256) with some repetition is also a stack overflow.
const DEEP_TRACE: usize = 100;
const DEEP_TRACE_REPEATS: usize = 5;

/// `strsignal` text → signal number (Linux, as printed by clang and GCC).
pub(crate) fn signal_from_strsignal(text: &str) -> Option<i32> {
    Some(match text {
        "Hangup" => SIGHUP,
        "Interrupt" => SIGINT,
        "Illegal instruction" => SIGILL,
        "Trace/breakpoint trap" => SIGTRAP,
        "Aborted" => SIGABRT,
        "Bus error" => SIGBUS,
        "Floating point exception" => SIGFPE,
        "Killed" => SIGKILL,
        "Segmentation fault" => SIGSEGV,
        "Terminated" => SIGTERM,
        _ => return None,
    })
}

/// Shells and clang-14 report a signal death as `128 + N`.
fn signal_from_exit_code(code: i32) -> Option<i32> {
    (129..160).contains(&code).then_some(code - 128)
}

fn kind_for_signal(signal: i32) -> CrashKind {
    match signal {
        SIGSEGV => CrashKind::Segfault,
        SIGILL => CrashKind::IllegalInstruction,
        SIGABRT => CrashKind::Abort,
        SIGBUS => CrashKind::BusError,
        SIGFPE => CrashKind::FloatingPointException,
        SIGTRAP => CrashKind::Trap,
        // Sent from outside (OOM killer, a user, a build system): never a compiler bug.
        SIGKILL | SIGTERM | SIGINT | SIGHUP => CrashKind::Killed,
        _ => CrashKind::OtherSignal,
    }
}

/// Everything seen in the text, before deciding what it means.
#[derive(Default)]
struct Evidence {
    banner: bool,
    /// The LLVM-tool banner (`…include the crash backtrace.` without "preprocessed source").
    tool_banner: bool,
    stack_dump: bool,
    forced_reproducer: bool,
    gcc_marker: bool,
    tool: Option<String>,
    assertion: Option<String>,
    unreachable: Option<String>,
    fatal: Option<String>,
    gcc_ice: Option<String>,
    gcc_killed: Option<String>,
    gcc_pass: Option<String>,
    /// `unable to execute command: <text>`, when the text is a signal.
    unable_signal: Option<i32>,
    /// A `… command failed` line was seen; `failed_code` is its exit code, if printed.
    failed: bool,
    failed_code: Option<i32>,
    due_to_signal: bool,
    program_arguments: Option<String>,
    pretty: Vec<PrettyEntry>,
    reproducers: Vec<String>,
}

impl Evidence {
    fn set_tool(&mut self, tool: Option<regex::Match<'_>>) {
        if self.tool.is_none() {
            self.tool = tool.map(|m| m.as_str().to_owned());
        }
    }

    fn scan(&mut self, lines: &[&str]) {
        for (i, &line) in lines.iter().enumerate() {
            self.scan_line(line, i.checked_sub(1).map(|p| lines[p]));
        }
    }

    fn scan_line(&mut self, line: &str, prev: Option<&str>) {
        if let Some(rest) = line.strip_prefix("PLEASE submit a bug report to ") {
            self.banner = true;
            self.tool_banner |= !rest.contains("preprocessed source");
        } else if line.trim_end() == "Stack dump:" {
            self.stack_dump = true;
        } else if line.starts_with("Please submit a full bug report")
            || line.starts_with("See <file:///usr/share/doc/gcc")
        {
            self.gcc_marker = true;
        } else if let Some(c) = PRETTY.captures(line) {
            let text = &c[2];
            match text.strip_prefix("Program arguments: ") {
                Some(args) if &c[1] == "0" => {
                    self.program_arguments
                        .get_or_insert_with(|| args.to_owned());
                }
                _ => self.pretty.push(PrettyEntry {
                    index: c[1].parse().unwrap_or(0),
                    text: text.to_owned(),
                }),
            }
        } else if let Some(c) = ASSERT.captures(line).or_else(|| ASSERT_BSD.captures(line)) {
            self.set_tool(c.get(1));
            self.assertion.get_or_insert_with(|| c[2].to_owned());
        } else if UNREACHABLE.is_match(line) {
            if self.unreachable.is_none() {
                self.unreachable = Some(match prev.filter(|p| unreachable_reason(p)) {
                    Some(reason) => format!("{reason}\n{line}"),
                    None => line.to_owned(),
                });
            }
        } else if let Some(c) = FATAL.captures(line) {
            self.set_tool(c.get(1));
            self.fatal.get_or_insert_with(|| c[2].trim().to_owned());
        } else if let Some(c) = GCC_ICE.captures(line) {
            self.gcc_marker = true;
            self.set_tool(c.get(1));
            self.gcc_ice.get_or_insert_with(|| c[2].trim().to_owned());
        } else if let Some(c) = GCC_PASS.captures(line) {
            self.gcc_marker = true;
            self.gcc_pass = Some(format!("{}:{}", &c[1], &c[2]));
        } else if let Some(c) = GCC_KILLED.captures(line) {
            self.gcc_marker = true;
            self.set_tool(c.get(1));
            self.gcc_killed.get_or_insert_with(|| c[2].to_owned());
        } else if let Some(c) = UNABLE.captures(line) {
            if let Some(signal) = signal_from_strsignal(&c[2]) {
                self.set_tool(c.get(1));
                self.unable_signal.get_or_insert(signal);
            }
        } else if let Some(c) = FAILED.captures(line) {
            let code = c.get(3).and_then(|m| m.as_str().parse::<i32>().ok());
            let crashed = match code {
                Some(code) => code == FATAL_ERROR_EXIT || signal_from_exit_code(code).is_some(),
                None => true,
            };
            // `amdgcn-link command failed with exit code 1` is an ordinary failure.
            if crashed && !self.failed {
                self.set_tool(c.get(1));
                self.failed = true;
                self.failed_code = code;
                self.due_to_signal = code.is_none();
            }
        } else if FORCED.is_match(line) {
            self.forced_reproducer = true;
        } else if let Some(c) = REPRO.captures(line) {
            let path = &c[2];
            if path.contains('/') || path.contains('.') {
                self.set_tool(c.get(1));
                self.reproducers.push(path.to_owned());
            }
        } else if let Some(c) = GCC_REPRO.captures(line) {
            self.reproducers.push(c[1].to_owned());
        }
    }

    /// True when the text alone shows a crash.
    fn shows_crash(&self) -> bool {
        self.assertion.is_some()
            || self.unreachable.is_some()
            || self.fatal.is_some()
            || self.gcc_ice.is_some()
            || self.gcc_killed.is_some()
            || self.unable_signal.is_some()
            || self.failed
            || self.stack_dump
            // FORCE_CLANG_DIAGNOSTICS_CRASH prints the banner without crashing.
            || (self.banner && !self.forced_reproducer)
    }

    fn family(&self) -> Family {
        if self.gcc_marker {
            return Family::Gcc;
        }
        if self.tool_banner {
            return Family::LlvmTool;
        }
        let argv0 = self
            .program_arguments
            .as_deref()
            .and_then(|a| a.split_whitespace().next())
            .map(|a| a.rsplit('/').next().unwrap_or(a));
        const TOOLS: [&str; 6] = ["llc", "opt", "llvm-", "lld", "ld.lld", "mlir-"];
        match argv0 {
            Some(a) if TOOLS.iter().any(|t| a.starts_with(t)) => Family::LlvmTool,
            _ => Family::Clang,
        }
    }

    fn in_process(&self) -> Option<bool> {
        if self.due_to_signal || self.unable_signal.is_some() {
            return Some(false);
        }
        if !self.failed {
            return None;
        }
        // `exit code N` is also what an out-of-process cc1 that *exited* (code 70) gives; its
        // `Program arguments` line is then the `-cc1` command rather than the driver's argv.
        let cc1 = self
            .program_arguments
            .as_deref()
            .is_some_and(|a| a.split_whitespace().any(|t| t == "-cc1"));
        Some(!cc1)
    }
}

/// Whether the line before `UNREACHABLE executed` is its reason (`llvm_unreachable("…")`
/// prints the reason on its own line) rather than unrelated output.
fn unreachable_reason(prev: &str) -> bool {
    !prev.trim().is_empty()
        && !prev.starts_with(char::is_whitespace)
        && !prev.starts_with("PLEASE submit")
        && !prev.starts_with("Stack dump")
        && !DIAGNOSTIC.is_match(prev)
}

/// The most times one frame (by name, else by module+offset) occurs in `frames`.
fn max_repeats(frames: &[Frame]) -> usize {
    let mut counts = std::collections::HashMap::new();
    for f in frames {
        let key = match (&f.symbol, &f.module, f.offset) {
            (Some(s), _, _) => s.clone(),
            (None, Some(m), Some(o)) => format!("{m}+{o:#x}"),
            _ => continue,
        };
        *counts.entry(key).or_insert(0usize) += 1;
    }
    counts.into_values().max().unwrap_or(0)
}

fn is_stack_overflow(frames: &[Frame]) -> bool {
    let repeats = max_repeats(frames);
    repeats >= RECURSION_REPEATS || (frames.len() >= DEEP_TRACE && repeats >= DEEP_TRACE_REPEATS)
}

/// Crash messages that start a line of their own, but may follow an unterminated line of
/// earlier output (a warning cut off, a tool writing without a newline): found anywhere in a
/// line, they start a new one (see [`unglued`]).
const LINE_STARTS: &[&str] = &[
    "fatal error: error in backend: ",
    "LLVM ERROR: ",
    "internal compiler error: ",
    "PLEASE submit a bug report",
    "Stack dump:",
    "UNREACHABLE executed",
];

/// `line` split before each [`LINE_STARTS`] message that something else precedes; a
/// `tool: ` or `file:line:col: ` prefix, part of how such messages are written, is kept.
fn unglued(line: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = line;
    loop {
        let at = LINE_STARTS
            .iter()
            .filter_map(|m| {
                rest[1.min(rest.len())..]
                    .find(m)
                    .map(|i| i + 1.min(rest.len()))
            })
            .filter(|&i| {
                let before = &rest[..i];
                !before.ends_with(": ") || before[..before.len() - 2].contains(char::is_whitespace)
            })
            .min();
        match at {
            Some(i) => {
                out.push(&rest[..i]);
                rest = &rest[i..];
            }
            None => {
                out.push(rest);
                return out;
            }
        }
    }
}

/// Text of which at least one appears in every crash [`parse`] recognises without a signal
/// death (`docs/crash-formats.md`): a cheap test for `icepick-wrap`, which hands only such failed
/// compiles to `icepick` for parsing.
const CRASH_MARKERS: &[&[u8]] = &[
    b"Stack dump:",
    b"PLEASE submit a bug report",
    b"internal compiler error",
    b"LLVM ERROR",
    b"error in backend",
    b"UNREACHABLE executed",
    b"Assertion",
    b"unable to execute command",
    b"command failed",
    b"signal terminated program",
];

/// False only when [`parse`] would certainly find no crash: no signal death and no crash
/// marker in stderr. Scans bytes, no allocation, so a launcher can call it on every failed
/// compile.
pub fn may_be_crash(stderr: &[u8], exit: ExitInfo) -> bool {
    // A signal, or a shell-style `128 + N` from a wrapper script around the compiler.
    if exit.signal.is_some() || exit.code.and_then(signal_from_exit_code).is_some() {
        return true;
    }
    CRASH_MARKERS
        .iter()
        .any(|m| stderr.windows(m.len()).any(|w| w == *m))
}

/// Parses compiler output. Returns `None` when the output and exit status show no crash
/// (success, ordinary diagnostics, a forced reproducer, a timeout reported as exit 124).
pub fn parse(stderr: &str, exit: ExitInfo) -> Option<Crash> {
    // Every field is made from lines: a bound per line bounds every string the crash holds.
    let lines: Vec<&str> = stderr.lines().flat_map(unglued).map(line_bounded).collect();
    let mut ev = Evidence::default();
    ev.scan(&lines);

    // The status of the process we ran: a signal, or a shell-style `128 + N`.
    let exit_signal = exit
        .signal
        .or_else(|| exit.code.and_then(signal_from_exit_code));
    if !ev.shows_crash() && exit_signal.is_none() {
        return None;
    }

    let signal = signal_of(&ev, exit_signal);
    let (kind, message) = kind_and_message(&mut ev, signal, exit);

    let is_gcc_ice = kind == CrashKind::GccIce;
    let frames = parse_frames(&lines, is_gcc_ice || ev.gcc_marker);
    let kind = if kind == CrashKind::Segfault && is_stack_overflow(&frames) {
        CrashKind::StackOverflow
    } else {
        kind
    };

    // Bounded, whatever the output: these fields go into case.json (real crashes stay far
    // below the limits, so no signature changes).
    let mut frames = frames;
    frames.truncate(MAX_FRAMES);
    let mut pretty = std::mem::take(&mut ev.pretty);
    pretty.truncate(MAX_ENTRIES);
    let mut reproducers = std::mem::take(&mut ev.reproducers);
    reproducers.truncate(MAX_ENTRIES);
    Some(Crash {
        family: ev.family(),
        kind,
        signal,
        message: message.map(|m| bounded(m, MAX_MESSAGE)),
        in_process: ev.in_process(),
        cc1_exit_code: if ev.failed { ev.failed_code } else { None },
        tool: ev.tool.take().map(|t| bounded(t, MAX_MESSAGE)),
        program_arguments: ev
            .program_arguments
            .take()
            .map(|a| bounded(a, MAX_ARGUMENTS)),
        pretty_stack: pretty,
        frames,
        gcc_pass: ev.gcc_pass.take().map(|p| bounded(p, MAX_MESSAGE)),
        reproducer_files: reproducers,
        source_errors: lines.iter().filter(|l| is_source_error(l)).count() as u32,
    })
}

/// The signal that ended the compiler, by the most specific evidence: clang's "unable to
/// execute command: <signal>", the cc1's exit code, GCC's ICE message, GCC's "killed", else
/// the status of the process that was run.
fn signal_of(ev: &Evidence, exit_signal: Option<i32>) -> Option<i32> {
    let cc1_signal = ev.failed_code.and_then(signal_from_exit_code);
    let gcc_signal = ev.gcc_ice.as_deref().and_then(|m| {
        signal_from_strsignal(m).or_else(|| {
            GCC_SIGNAL_TERMINATED
                .captures(m)
                .and_then(|c| signal_from_strsignal(&c[1]))
        })
    });
    ev.unable_signal
        .or(cc1_signal)
        .or(gcc_signal)
        .or(ev.gcc_killed.as_ref().map(|_| SIGKILL))
        .or(exit_signal)
}

/// The crash's kind and message: an assertion, `llvm_unreachable`, a fatal error, a GCC ICE
/// or kill (each with its message) before a bare fatal-error exit or the signal.
fn kind_and_message(
    ev: &mut Evidence,
    signal: Option<i32>,
    exit: ExitInfo,
) -> (CrashKind, Option<String>) {
    let fatal_exit = ev.failed_code == Some(FATAL_ERROR_EXIT)
        || (exit.code == Some(FATAL_ERROR_EXIT) && ev.shows_crash());
    if let Some(m) = ev.assertion.take() {
        (CrashKind::Assertion, Some(m))
    } else if let Some(m) = ev.unreachable.take() {
        (CrashKind::Unreachable, Some(m))
    } else if let Some(m) = ev.fatal.take() {
        (CrashKind::FatalError, Some(m))
    } else if let Some(m) = ev.gcc_ice.take() {
        (CrashKind::GccIce, Some(m))
    } else if let Some(m) = ev.gcc_killed.take() {
        (CrashKind::Killed, Some(m))
    } else if fatal_exit {
        (CrashKind::FatalError, None)
    } else if let Some(signal) = signal {
        (kind_for_signal(signal), None)
    } else {
        // A stack dump with no word on the signal (LLVM tools print none).
        (CrashKind::OtherSignal, None)
    }
}

/// Most frames, pretty-stack entries and reproducer files kept (LLVM prints at most 256
/// frames).
const MAX_FRAMES: usize = 256;
const MAX_ENTRIES: usize = 64;
/// Longest message kept (bytes), and longest `Program arguments` line.
const MAX_MESSAGE: usize = 4096;
const MAX_ARGUMENTS: usize = 256 << 10;

/// Longest line read (bytes), other than the `Program arguments` line: frame symbols,
/// pretty-stack entries and the phase come from single lines.
const MAX_LINE: usize = 8 << 10;

/// `line` cut to [`MAX_LINE`] bytes (the `Program arguments` line to [`MAX_ARGUMENTS`]), at a
/// character boundary.
fn line_bounded(line: &str) -> &str {
    let max = if line.len() > MAX_LINE && line.contains("Program arguments:") {
        MAX_ARGUMENTS
    } else {
        MAX_LINE
    };
    let mut end = line.len().min(max);
    while !line.is_char_boundary(end) {
        end -= 1;
    }
    &line[..end]
}

/// `s` cut to at most `max` bytes, at a character boundary.
fn bounded(mut s: String, max: usize) -> String {
    if s.len() > max {
        let mut end = max;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        s.truncate(end);
    }
    s
}

/// `file:line:col: error: …`: a diagnostic about the source, not the driver's own errors.
/// True for a source diagnostic of severity error (`file:line:col: error: …`), the lines
/// [`Crash::source_errors`](super::Crash::source_errors) counts.
pub fn is_source_error(line: &str) -> bool {
    SOURCE_ERROR.is_match(line)
}

static SOURCE_ERROR: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
    regex::Regex::new(r"^\S.*?:\d+:\d+: (?:fatal )?error: ").expect("valid regex")
});

#[cfg(test)]
mod tests {
    #[test]
    fn crash_messages_glued_to_an_unterminated_line_start_their_own() {
        assert_eq!(
            unglued("f.c:2:5: wfatal error: error in backend: Cannot select"),
            ["f.c:2:5: w", "fatal error: error in backend: Cannot select"]
        );
        assert_eq!(
            unglued("clang: fatal error: error in backend: x"),
            ["clang: fatal error: error in backend: x"]
        );
        assert_eq!(
            unglued("f.c:1:2: internal compiler error: y"),
            ["f.c:1:2: internal compiler error: y"]
        );
        assert_eq!(unglued("abcLLVM ERROR: z"), ["abc", "LLVM ERROR: z"]);
        let glued = "x.c:1:1: warning: w [-Wx]\nx.c:2:5: wfatal error: error in backend: Cannot select: t5\n";
        let exit = ExitInfo {
            code: Some(70),
            signal: None,
        };
        let c = parse(glued, exit).expect("a crash");
        assert!(
            c.message.as_deref().unwrap_or("").contains("Cannot select"),
            "{c:?}"
        );
    }

    use super::*;

    fn code(code: i32) -> ExitInfo {
        ExitInfo {
            code: Some(code),
            signal: None,
        }
    }

    fn signal(signal: i32) -> ExitInfo {
        ExitInfo {
            code: None,
            signal: Some(signal),
        }
    }

    #[test]
    fn not_crashes() {
        let rows: &[(&str, ExitInfo)] = &[
            ("", code(0)),
            ("x.c:1:1: error: unknown type name 'foo'\n1 error generated.\n", code(1)),
            ("x.c:1:1: warning: unused\n", code(0)),
            // A clang-19 timeout under `timeout(1)`: no output, rc 124.
            ("", code(124)),
            (
                "clang-19: error: unable to execute command: Executable \"lld\" doesn't exist!\n\
                 clang-19: error: amdgcn-link command failed with exit code 1 (use -v to see invocation)\n",
                code(1),
            ),
            (
                "clang: error: clang frontend command failed with exit code 1 (use -v to see invocation)\n",
                code(1),
            ),
            (
                "PLEASE submit a bug report to https://github.com/llvm/llvm-project/issues/ and include the crash backtrace, preprocessed source, and associated run script.\n\
                 clang-19: error: failing because environment variable 'FORCE_CLANG_DIAGNOSTICS_CRASH' is set\n",
                code(1),
            ),
        ];
        for (text, exit) in rows {
            assert_eq!(parse(text, *exit), None, "{text:?} {exit:?}");
        }
    }

    #[test]
    fn kinds() {
        use CrashKind::*;
        // (stderr, exit, kind, signal, message)
        type Row = (
            &'static str,
            ExitInfo,
            CrashKind,
            Option<i32>,
            Option<&'static str>,
        );
        let rows: &[Row] = &[
            ("", signal(11), Segfault, Some(11), None),
            ("", code(139), Segfault, Some(11), None),
            ("", code(132), IllegalInstruction, Some(4), None),
            ("", code(134), Abort, Some(6), None),
            ("", code(135), BusError, Some(7), None),
            ("", code(136), FloatingPointException, Some(8), None),
            ("", signal(9), Killed, Some(9), None),
            ("", code(137), Killed, Some(9), None),
            (
                "clang: error: clang frontend command failed with exit code 70 (use -v to see invocation)\n",
                code(1),
                FatalError,
                None,
                None,
            ),
            (
                "LLVM ERROR: Cannot select: t5: i32 = foo\n",
                code(1),
                FatalError,
                None,
                Some("Cannot select: t5: i32 = foo"),
            ),
            (
                "clang: /b/llvm/lib/X.cpp:1962: void f(): Assertion `a && \"b\"' failed.\n\
                 clang: error: clang frontend command failed with exit code 134 (use -v to see invocation)\n",
                code(1),
                Assertion,
                Some(6),
                Some("/b/llvm/lib/X.cpp:1962: void f(): Assertion `a && \"b\"' failed."),
            ),
            (
                "Unhandled opcode!\nUNREACHABLE executed at /b/llvm/lib/Y.cpp:77!\n",
                code(134),
                Unreachable,
                Some(6),
                Some("Unhandled opcode!\nUNREACHABLE executed at /b/llvm/lib/Y.cpp:77!"),
            ),
            (
                // Banner and driver error swapped, out-of-process.
                "clang: error: unable to execute command: Bus error\n\
                 PLEASE submit a bug report to https://x/ and include the crash backtrace, preprocessed source, and associated run script.\n",
                code(1),
                BusError,
                Some(7),
                None,
            ),
            (
                "gcc-12: fatal error: Killed signal terminated program cc1\ncompilation terminated.\n",
                code(1),
                Killed,
                Some(9),
                Some("Killed signal terminated program cc1"),
            ),
            (
                "gcc-12: internal compiler error: Trace/breakpoint trap signal terminated program cc1\n",
                code(4),
                GccIce,
                Some(5),
                Some("Trace/breakpoint trap signal terminated program cc1"),
            ),
        ];
        for &(text, exit, kind, sig, message) in rows {
            let crash = parse(text, exit).unwrap_or_else(|| panic!("no crash: {text:?}"));
            assert_eq!(crash.kind, kind, "{text:?}");
            assert_eq!(crash.signal, sig, "{text:?}");
            assert_eq!(crash.message.as_deref(), message, "{text:?}");
        }
    }

    #[test]
    fn order_independent() {
        let a = "fatal error: error in backend: boom\n\
                 PLEASE submit a bug report to https://x/ and include the crash backtrace, preprocessed source, and associated run script.\n\
                 Stack dump:\n\
                 0.\tProgram arguments: clang-19 -c x.c\n\
                 1.\tCode generation\n\
                 clang-19: error: clang frontend command failed with exit code 70 (use -v to see invocation)\n";
        let mut lines: Vec<&str> = a.lines().collect();
        let reference = parse(a, code(1)).unwrap();
        lines.reverse();
        let b = lines.join("\n");
        let reversed = parse(&b, code(1)).unwrap();
        assert_eq!(reference, reversed);
        assert_eq!(reference.kind, CrashKind::FatalError);
        assert_eq!(reference.tool.as_deref(), Some("clang-19"));
        assert_eq!(reference.in_process, Some(true));
        assert_eq!(reference.cc1_exit_code, Some(70));
        assert_eq!(reference.pretty_stack.len(), 1);
    }

    #[test]
    fn stack_overflow_needs_recursion() {
        let frame = |i: u32, s: &str| Frame {
            index: i,
            symbol: Some(s.to_owned()),
            ..Frame::default()
        };
        let flat: Vec<Frame> = (0..40).map(|i| frame(i, &format!("f{i}"))).collect();
        assert!(!is_stack_overflow(&flat));
        let recursive: Vec<Frame> = (0..40).map(|i| frame(i, &format!("f{}", i % 2))).collect();
        assert!(is_stack_overflow(&recursive));
    }

    #[test]
    fn every_string_of_a_crash_is_bounded_however_long_its_lines() {
        let sample = include_str!("../../tests/fixtures/samples/clang-19/crash_sym.stderr");
        let long = "x".repeat(100_000);
        let inflated: String = sample
            .lines()
            .map(|l| {
                if l.starts_with("1.\t") || l.contains("HandlePragmaDirective") {
                    l.replace("pragma", &long)
                } else {
                    l.to_owned()
                }
            })
            .collect::<Vec<_>>()
            .join("\n");
        let c = parse(&inflated, signal(11)).expect("still a crash");
        let json = serde_json::to_string(&c).unwrap();
        assert!(json.len() < 64 << 10, "{} bytes", json.len());
        assert!(c.pretty_stack.iter().all(|p| p.text.len() <= MAX_LINE));
        assert!(c
            .frames
            .iter()
            .all(|f| f.symbol.as_deref().map_or(0, str::len) <= MAX_LINE));
        // The same crash, and the signature's frame kept its (cut) name.
        assert_eq!(c.kind, parse(sample, signal(11)).unwrap().kind);
    }

    #[test]
    fn reproducer_paths_with_spaces_are_taken_whole() {
        let sample = include_str!("../../tests/fixtures/samples/clang-19/crash_sym.stderr");
        let spaced = sample.replace("pragma_crash-", "my file-");
        let c = parse(&spaced, signal(11)).unwrap();
        assert!(!c.reproducer_files.is_empty());
        for f in &c.reproducer_files {
            assert!(f.contains("/my file-"), "{f}");
        }
    }
}
