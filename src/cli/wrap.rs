//! `icepick wrap <compiler> <args…>`: a compiler launcher for builds
//! (`CMAKE_CXX_COMPILER_LAUNCHER=icepick;wrap`, `CC="icepick wrap clang"`).
//!
//! The compile runs as if icepick were not there: same stdin and stdout (inherited), the
//! same stderr bytes in the same order (forwarded as they come, a capped tail kept), the same
//! exit status (a signal death is re-raised). Nothing else happens unless the exit status is
//! a failure and the output parses as a crash: then the occurrence goes into the crash store,
//! the first occurrence of its bucket is captured into a case right away (the headers and
//! environment are there now), and one line naming the bucket is added to stderr. Whatever
//! goes wrong inside icepick, the build gets the compiler's result and at most one line.
//!
//! `icepick-wrap <compiler> <args…>` (src/bin/icepick-wrap.rs, [`launcher`]) is the same
//! launcher in a binary of its own that links only the pass-through: a build starts it once
//! per compile, and its start-up costs less than the full `icepick`'s. It hands a failed
//! compile whose output may be a crash ([`crate::crash::may_be_crash`]) to `icepick wrap
//! --record-exit STATUS -- <compiler> <args…>`, with the stderr tail on stdin.
//!
//! Colours: icepick reads the compiler's stderr through a pipe, so clang and gcc would stop
//! colouring their diagnostics although the build's stderr is a terminal. Like ccache, the
//! launcher then adds `-fcolor-diagnostics` (clang) or `-fdiagnostics-color` (gcc) to the
//! compile it runs — only when stderr is a terminal, `TERM` is set and not `dumb`, and the
//! command does not choose itself (any `-f[no-]color-diagnostics`, `-f[no-]diagnostics-color…`);
//! see [`colour_flag`]. `NO_COLOR` is left to the compiler, as without icepick (clang and gcc
//! colour a terminal whatever it says; ccache does the same). The flag changes no object
//! file byte; it is not added when the command records itself into the object
//! (`-frecord-command-line`, `-grecord-gcc-switches` …), nor to clang compiling only
//! assembler (`argument unused` would break `-Werror`). The recorded command is the build's
//! own, and escape sequences are stripped before the output is read as a crash.
//!
//! Environment: `ICEPICK_STORE` (the store: a directory or a `postgresql://` URL; one that
//! cannot be reached gets the occurrence spooled, see [`crate::store::spool`]), `ICEPICK_WRAP_CAPTURE=0` (record only, capture
//! later with `icepick triage --pending`), `ICEPICK_WRAP_RERUNS` (determinism reruns during
//! capture, default 0: the capture's own first run already repeats the crash),
//! `ICEPICK_WRAP_TIMEOUT` (seconds per compiler run during capture, default 300).

use std::ffi::OsString;
use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

use clap::Args;

use crate::crash::ExitInfo;
use crate::exec;
use crate::store::{self, CaptureMode, Observed, Store};

/// Bytes of the compiler's stderr kept for crash parsing (the tail: a crash report comes
/// last, after any number of ordinary diagnostics).
const STDERR_TAIL: usize = 4 << 20;

/// Set for the compiler's environment, so that a nested `icepick wrap` (a launcher around
/// `CC="icepick wrap clang"`) only passes through and the crash is recorded once.
const NESTED: &str = "ICEPICK_WRAP_ACTIVE";

/// Arguments of `icepick wrap`.
#[derive(Debug, Args)]
pub struct WrapArgs {
    /// Only record a crash in the store; capture its case later (`icepick triage --pending`).
    /// Same as ICEPICK_WRAP_CAPTURE=0.
    #[arg(long)]
    no_capture: bool,
    /// Internal, for icepick-wrap: the compile already ran and failed with STATUS
    /// (`code:N` or `signal:N`), its stderr tail is on stdin; record it, print the line.
    #[arg(long, hide = true, value_name = "STATUS")]
    record_exit: Option<String>,
    /// The compiler and its arguments, exactly as the build would run them.
    #[arg(
        required = true,
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "COMPILER ARGS"
    )]
    command: Vec<OsString>,
}

/// Runs `icepick wrap`. Never fails: the exit code is the compiler's.
pub fn run(args: WrapArgs) -> anyhow::Result<u8> {
    Ok(wrap(args))
}

/// `icepick wrap <compiler> …` without clap: a build runs it once per compile, and building
/// the whole command-line parser costs a noticeable part of the overhead budget. `None`
/// when argv is anything else (options after `wrap`, no compiler): clap handles those.
pub fn fast_path() -> Option<u8> {
    let mut argv = std::env::args_os().skip(1);
    if argv.next()? != "wrap" {
        return None;
    }
    let command: Vec<OsString> = argv.collect();
    let first = command.first()?;
    if first.is_empty() || first.as_encoded_bytes().starts_with(b"-") {
        return None;
    }
    Some(wrap(WrapArgs {
        no_capture: false,
        record_exit: None,
        command,
    }))
}

/// `icepick-wrap <compiler> <args…>`: the pass-through of [`wrap`], with the crash handling
/// left to the `icepick` binary beside it (or on PATH). Returns the exit code.
pub fn launcher() -> u8 {
    let command: Vec<OsString> = std::env::args_os().skip(1).collect();
    let Some((program, rest)) = command
        .split_first()
        .filter(|(p, _)| !p.is_empty() && !p.as_encoded_bytes().starts_with(b"-"))
    else {
        let _ = writeln!(
            std::io::stderr(),
            "usage: icepick-wrap <compiler> <args…>   (a compiler launcher; see icepick wrap --help)"
        );
        return crate::error::USAGE;
    };
    if std::env::var_os(NESTED).is_some() {
        // An outer launcher records the crash: become the compiler.
        let e = exec::become_program(program, rest);
        return not_started(program, &e);
    }
    std::env::set_var(NESTED, "1");
    let (status, stderr) = match exec::passthrough(program, &coloured(program, rest), STDERR_TAIL) {
        Ok(r) => r,
        Err(e) => return not_started(program, &e),
    };
    let stderr = strip_escapes(stderr);
    let exit = exit_info(status);
    if !status.success() && crate::crash::may_be_crash(&stderr, exit) {
        if let Err(e) = hand_over(program, rest, exit, &stderr) {
            let _ = writeln!(
                std::io::stderr(),
                "icepick: (could not record the crash: cannot run icepick: {e})"
            );
        }
    }
    exit_like(status)
}

/// Runs `icepick wrap --record-exit …` with the stderr tail on its stdin.
fn hand_over(
    program: &OsString,
    rest: &[OsString],
    exit: ExitInfo,
    stderr: &[u8],
) -> std::io::Result<()> {
    let beside = std::env::current_exe()
        .ok()
        .map(|p| p.with_file_name("icepick"))
        .filter(|p| p.is_file());
    let icepick = beside.unwrap_or_else(|| PathBuf::from("icepick"));
    let status = match (exit.code, exit.signal) {
        (_, Some(sig)) => format!("signal:{sig}"),
        (code, None) => format!("code:{}", code.unwrap_or(1)),
    };
    let args: Vec<OsString> = ["wrap", "--record-exit", &status, "--"]
        .into_iter()
        .map(OsString::from)
        .chain(std::iter::once(program.clone()))
        .chain(rest.iter().cloned())
        .collect();
    let (exited, icepick_stderr) = exec::run_fed(icepick.as_os_str(), &args, stderr)?;
    let mut err = std::io::stderr().lock();
    if exited.success() {
        // The bucket line (already shown safe by the icepick that wrote it; again here, in
        // case that was an older one).
        let _ = err
            .write_all(super::term::visible(&String::from_utf8_lossy(&icepick_stderr)).as_bytes());
    } else {
        // Not a usage text in the build's log: one line (an older icepick may not know
        // --record-exit).
        let _ = writeln!(
            err,
            "icepick: (could not record the crash: {} exited with {}; install icepick and icepick-wrap from the same build)",
            icepick.display(),
            exited
        );
    }
    Ok(())
}

/// `--record-exit STATUS`: the failure `icepick-wrap` saw, as the crash parser takes it.
fn recorded_exit(status: &str) -> Option<ExitInfo> {
    let (kind, n) = status.split_once(':')?;
    let n: i32 = n.parse().ok()?;
    match kind {
        "code" => Some(ExitInfo {
            code: Some(n),
            signal: None,
        }),
        "signal" => Some(ExitInfo {
            code: None,
            signal: Some(n),
        }),
        _ => None,
    }
}

/// The second half of `icepick-wrap`: record (and capture) a failure that already happened.
fn record(args: &WrapArgs, status: &str) -> u8 {
    use std::io::Read;
    let Some(exit) = recorded_exit(status) else {
        let _ = writeln!(
            std::io::stderr(),
            "icepick: --record-exit {status:?}: expected code:N or signal:N"
        );
        return crate::error::USAGE;
    };
    let mut stderr = Vec::new();
    let _ = std::io::stdin().read_to_end(&mut stderr);
    let Some((program, rest)) = args.command.split_first() else {
        return crate::error::USAGE;
    };
    std::panic::set_hook(Box::new(|_| {}));
    let line = std::panic::catch_unwind(|| on_failure(args, program, rest, &stderr, exit))
        .unwrap_or_else(|_| Some("icepick: (could not record the crash: internal error)".into()));
    if let Some(line) = line {
        let _ = writeln!(std::io::stderr().lock(), "{}", super::term::visible(&line));
    }
    crate::error::OK
}

fn wrap(args: WrapArgs) -> u8 {
    if let Some(status) = &args.record_exit {
        return record(&args, status);
    }
    let (program, rest) = args.command.split_first().expect("a command is required");
    let nested = std::env::var_os(NESTED).is_some();
    if !nested {
        // Single-threaded here, before any child exists.
        std::env::set_var(NESTED, "1");
    }
    let run_args = if nested {
        rest.to_vec()
    } else {
        coloured(program, rest)
    };
    let (status, stderr) = match exec::passthrough(program, &run_args, STDERR_TAIL) {
        Ok(r) => r,
        Err(e) => return not_started(program, &e),
    };
    if status.success() || nested {
        return exit_like(status);
    }
    let stderr = strip_escapes(stderr);
    let exit = exit_info(status);
    // Handling the crash must not change the build's result, whatever happens, panics
    // included (the default hook would print a multi-line message).
    std::panic::set_hook(Box::new(|_| {}));
    let line = std::panic::catch_unwind(|| on_failure(&args, program, rest, &stderr, exit))
        .unwrap_or_else(|_| Some("icepick: (could not record the crash: internal error)".into()));
    if let Some(line) = line {
        let mut err = std::io::stderr().lock();
        let _ = writeln!(err, "{}", super::term::visible(&line));
    }
    exit_like(status)
}

/// After a failed compile: `None` when it was no crash, else the one line to print.
fn on_failure(
    args: &WrapArgs,
    program: &OsString,
    rest: &[OsString],
    stderr: &[u8],
    exit: ExitInfo,
) -> Option<String> {
    let text = String::from_utf8_lossy(stderr);
    let cwd = std::env::current_dir().ok()?;
    let argv: Vec<String> = std::iter::once(program)
        .chain(rest)
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let compiler = exec::which(&argv[0], &cwd).unwrap_or_else(|| PathBuf::from(&argv[0]));
    let analysed = store::analyse(&text, exit, &compiler)?;
    let timeout = Duration::from_secs(env_number("ICEPICK_WRAP_TIMEOUT", 300).max(1));
    // A crash that printed no stack is grouped by the stack a rerun prints, not with every
    // other crash of its kind and message.
    let mut analysed = if analysed.crash.frames.is_empty() {
        crate::capture::stack_of_frameless(&argv, &cwd, &analysed.crash, timeout)
            .and_then(|(stderr, exit)| {
                store::analyse(&String::from_utf8_lossy(&stderr), exit, &compiler)
            })
            .unwrap_or(analysed)
    } else {
        analysed
    };
    // One compiler is one version line in the store, whether its crash printed it or not.
    if analysed.compiler_version.is_none() {
        analysed.compiler_version = crate::capture::version_line_of(&compiler);
    }
    let capture_off = args.no_capture
        || std::env::var("ICEPICK_WRAP_CAPTURE").is_ok_and(|v| v == "0" || v == "no");
    let mode = if capture_off {
        CaptureMode::Off
    } else {
        CaptureMode::FirstPerBucket {
            reruns: env_number("ICEPICK_WRAP_RERUNS", 0) as u32,
            timeout,
        }
    };
    let obs = Observed {
        argv: &argv,
        cwd: &cwd,
        exit_code: exit.code,
        origin: "wrap",
    };
    let loc = match store::default_location() {
        Ok(l) => l,
        Err(e) => return Some(format!("icepick: (could not record the crash: {e})")),
    };
    let recorded = Store::open_at(&loc).and_then(|mut s| {
        let r = s.record_crash(&obs, &analysed, &mode)?;
        // The store answers again: send what waited for it (best effort, quietly).
        if store::spool::pending(&loc) > 0 {
            let _ = store::spool::flush(&mut s);
        }
        Ok(r)
    });
    Some(match recorded {
        // The build's result stays the compiler's: the occurrence waits in the spool.
        Err(e) => match store::spool::spool(&loc, &analysed.key, &store::occurrence_of(&obs, &analysed)) {
            Ok(_) => format!(
                "icepick: (could not record the crash: {}; spooled, `icepick store flush` sends it)",
                one_line(&e.to_string())
            ),
            Err(se) => format!("icepick: (could not record the crash: {e}; nor spool it: {se})"),
        },
        Ok(r) => {
            let id = &r.bucket;
            if r.captured {
                format!(
                    "icepick: crash captured as bucket {id} ({}); see: icepick show {id}",
                    r.title
                )
            } else if let Some(why) = &r.capture_error {
                format!(
                    "icepick: crash recorded in bucket {id} ({}) but not captured: {}; see: icepick show {id}",
                    r.title,
                    one_line(why)
                )
            } else {
                format!(
                    "icepick: crash recorded in bucket {id} ({}; {} occurrences); see: icepick show {id}",
                    r.title, r.count
                )
            }
        }
    })
}

/// `rest` with the colour flag [`colour_flag`] picks, if any, right after the compiler (or,
/// for `ccache`/`sccache`, after the compiler it runs).
fn coloured(program: &OsString, rest: &[OsString]) -> Vec<OsString> {
    let mut args = rest.to_vec();
    if !stderr_is_colour_terminal() {
        return args;
    }
    let (compiler, at) = match basename(program) {
        "ccache" | "sccache" => match rest.first() {
            Some(c) => (c, 1),
            None => return args,
        },
        _ => (program, 0),
    };
    if let Some(flag) = colour_flag(compiler, &rest[at..]) {
        args.insert(at, flag.into());
    }
    args
}

/// Whether the compiler would colour its diagnostics, were its stderr ours: a terminal, and
/// `TERM` set and not `dumb` (the test of gcc's `auto` and of ccache).
fn stderr_is_colour_terminal() -> bool {
    // SAFETY: isatty only reads the descriptor's state.
    let tty = unsafe { libc::isatty(libc::STDERR_FILENO) } == 1;
    tty && std::env::var_os("TERM")
        .is_some_and(|t| !t.is_empty() && !t.eq_ignore_ascii_case("dumb"))
}

fn basename(program: &OsString) -> &str {
    let p = program.to_str().unwrap_or("");
    p.rsplit('/').next().unwrap_or(p)
}

/// The flag that makes `compiler` colour its diagnostics into a pipe, when adding it is safe:
/// the compiler is clang or gcc (by name, as ccache guesses), the command chooses no colour
/// itself and does not record its own command line in the output, and (clang) it has an input
/// that is not plain assembler, where clang would warn that the flag is unused.
pub fn colour_flag(compiler: &OsString, args: &[OsString]) -> Option<&'static str> {
    let name = basename(compiler);
    let clang = name.contains("clang") && !name.contains("clang-cl");
    let gcc = !name.contains("clang")
        && (name.contains("gcc") || name.contains("g++"))
        && !name.contains("nvcc");
    if !clang && !gcc {
        return None;
    }
    let args: Vec<String> = args
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let chosen_or_recorded = args.iter().any(|a| {
        let a = a.as_str();
        matches!(
            a,
            "-fcolor-diagnostics"
                | "-fno-color-diagnostics"
                | "-fno-diagnostics-color"
                | "-frecord-command-line"
                | "-grecord-command-line"
                | "-frecord-gcc-switches"
                | "-grecord-gcc-switches"
        ) || a.starts_with("-fdiagnostics-color")
    });
    if chosen_or_recorded {
        return None;
    }
    if gcc {
        return Some("-fdiagnostics-color");
    }
    let command = crate::command::CompilerCommand {
        program: name.to_string(),
        args,
    };
    let inputs = command.input_indices();
    let compiles_something = inputs.iter().any(|&i| {
        let x = command.args[..i]
            .iter()
            .enumerate()
            .rev()
            .find_map(|(j, a)| {
                if a == "-x" {
                    command
                        .args
                        .get(j + 1)
                        .filter(|_| j + 1 < i)
                        .map(String::as_str)
                } else {
                    a.strip_prefix("-x")
                        .filter(|v| !v.is_empty() && !a.starts_with("-xc-"))
                }
            });
        match x {
            Some("assembler") => false,
            Some(x) if x != "none" => true,
            _ => !command.args[i].ends_with(".s"),
        }
    });
    compiles_something.then_some("-fcolor-diagnostics")
}

/// `stderr` without terminal escape sequences (CSI `ESC [ … letter`, OSC `ESC ] … BEL|ESC \`),
/// so that coloured output parses like plain output.
fn strip_escapes(stderr: Vec<u8>) -> Vec<u8> {
    if !stderr.contains(&0x1b) {
        return stderr;
    }
    let mut out = Vec::with_capacity(stderr.len());
    let mut i = 0;
    while i < stderr.len() {
        match (stderr[i], stderr.get(i + 1)) {
            (0x1b, Some(b'[')) => {
                i += 2;
                while i < stderr.len() && !(0x40..=0x7e).contains(&stderr[i]) {
                    i += 1;
                }
                i += 1;
            }
            (0x1b, Some(b']')) => {
                i += 2;
                while i < stderr.len() {
                    if stderr[i] == 0x07 {
                        i += 1;
                        break;
                    }
                    if stderr[i] == 0x1b && stderr.get(i + 1) == Some(&b'\\') {
                        i += 2;
                        break;
                    }
                    i += 1;
                }
            }
            (b, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    out
}

fn one_line(s: &str) -> String {
    let first = s.lines().next().unwrap_or("");
    if first.len() > 200 {
        let mut cut = 200;
        while !first.is_char_boundary(cut) {
            cut -= 1;
        }
        format!("{}...", &first[..cut])
    } else {
        first.to_string()
    }
}

fn env_number(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(default)
}

fn exit_info(status: std::process::ExitStatus) -> ExitInfo {
    exec::Status::from(status).exit_info()
}

/// The shell's answer when a command cannot be started: 127 when it is not found, 126 when
/// it is not executable.
fn not_started(program: &OsString, e: &std::io::Error) -> u8 {
    let name = program.to_string_lossy();
    let name = super::term::visible(&name);
    let mut err = std::io::stderr().lock();
    if e.kind() == std::io::ErrorKind::NotFound {
        let _ = writeln!(err, "icepick: {name}: command not found");
        127
    } else {
        let _ = writeln!(err, "icepick: {name}: {e}");
        126
    }
}

/// The compiler's exit code; for a signal death, the same signal is raised on icepick (so
/// the build sees the same wait status), with `128 + N` as the fallback.
fn exit_like(status: std::process::ExitStatus) -> u8 {
    use std::os::unix::process::ExitStatusExt;
    if let Some(code) = status.code() {
        return code as u8;
    }
    let sig = status.signal().unwrap_or(0);
    let _ = std::io::stderr().flush();
    // SAFETY: no core dump from us (the compiler made its own), default action for the
    // signal, then raise it: the process ends as the compiler did.
    unsafe {
        let none = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        libc::setrlimit(libc::RLIMIT_CORE, &none);
        libc::signal(sig, libc::SIG_DFL);
        libc::raise(sig);
    }
    128u8.wrapping_add(sig as u8)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn record_exit_statuses() {
        let e = recorded_exit("signal:11").unwrap();
        assert_eq!((e.code, e.signal), (None, Some(11)));
        let e = recorded_exit("code:1").unwrap();
        assert_eq!((e.code, e.signal), (Some(1), None));
        assert!(recorded_exit("11").is_none());
        assert!(recorded_exit("code:x").is_none());
        assert!(recorded_exit("exit:1").is_none());
    }

    fn flag(compiler: &str, args: &str) -> Option<&'static str> {
        let args: Vec<OsString> = args.split_whitespace().map(OsString::from).collect();
        colour_flag(&OsString::from(compiler), &args)
    }

    #[test]
    fn colour_flag_follows_the_compiler_and_the_users_choice() {
        assert_eq!(
            flag("clang-19", "-c x.c -o x.o"),
            Some("-fcolor-diagnostics")
        );
        assert_eq!(
            flag("/usr/bin/clang++", "-c x.cpp"),
            Some("-fcolor-diagnostics")
        );
        assert_eq!(flag("gcc", "-c x.c"), Some("-fdiagnostics-color"));
        assert_eq!(
            flag("riscv64-linux-gnu-g++-12", "-c x.cpp"),
            Some("-fdiagnostics-color")
        );
        assert_eq!(flag("cc", "-c x.c"), None);
        assert_eq!(flag("nvcc", "-c x.cu"), None);
        assert_eq!(flag("clang-cl", "/c x.c"), None);
        for chosen in [
            "-fno-color-diagnostics",
            "-fcolor-diagnostics",
            "-fdiagnostics-color=never",
            "-fdiagnostics-color",
            "-fno-diagnostics-color",
            "-grecord-command-line",
            "-frecord-gcc-switches",
        ] {
            assert_eq!(flag("clang", &format!("-c {chosen} x.c")), None, "{chosen}");
            assert_eq!(flag("gcc", &format!("-c {chosen} x.c")), None, "{chosen}");
        }
    }

    #[test]
    fn colour_flag_not_for_clang_on_assembler_only() {
        assert_eq!(flag("clang", "-c x.s -o x.o"), None);
        assert_eq!(flag("clang", "-x assembler -c x.asm"), None);
        assert_eq!(flag("clang", "-v"), None);
        assert_eq!(flag("clang", "-c x.S"), Some("-fcolor-diagnostics"));
        assert_eq!(
            flag("clang", "-c x.s -x c y.c"),
            Some("-fcolor-diagnostics")
        );
        assert_eq!(
            flag("clang", "x.o y.o -o prog"),
            Some("-fcolor-diagnostics")
        );
        assert_eq!(flag("gcc", "-c x.s"), Some("-fdiagnostics-color"));
    }

    #[test]
    fn escapes_are_stripped() {
        let coloured = b"clang-19: \x1b[0;1;31merror: \x1b[0m\x1b[1mclang frontend command failed\x1b[0m\n\x1b]8;;http://x\x07link\x1b]8;;\x1b\\ end";
        assert_eq!(
            String::from_utf8(strip_escapes(coloured.to_vec())).unwrap(),
            "clang-19: error: clang frontend command failed\nlink end"
        );
        assert_eq!(strip_escapes(b"plain".to_vec()), b"plain");
    }
}
