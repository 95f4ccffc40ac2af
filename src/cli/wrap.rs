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
//! Environment: `ICEPICK_STORE` (the store), `ICEPICK_WRAP_CAPTURE=0` (record only, capture
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
        command,
    }))
}

fn wrap(args: WrapArgs) -> u8 {
    let (program, rest) = args.command.split_first().expect("a command is required");
    let nested = std::env::var_os(NESTED).is_some();
    if !nested {
        // Single-threaded here, before any child exists.
        std::env::set_var(NESTED, "1");
    }
    let (status, stderr) = match exec::passthrough(program, rest, STDERR_TAIL) {
        Ok(r) => r,
        Err(e) => return not_started(program, &e),
    };
    if status.success() || nested {
        return exit_like(status);
    }
    let exit = exit_info(status);
    // Handling the crash must not change the build's result, whatever happens, panics
    // included (the default hook would print a multi-line message).
    std::panic::set_hook(Box::new(|_| {}));
    let line = std::panic::catch_unwind(|| on_failure(&args, program, rest, &stderr, exit))
        .unwrap_or_else(|_| Some("icepick: (could not record the crash: internal error)".into()));
    if let Some(line) = line {
        let mut err = std::io::stderr().lock();
        let _ = writeln!(err, "{line}");
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
    let capture_off = args.no_capture
        || std::env::var("ICEPICK_WRAP_CAPTURE").is_ok_and(|v| v == "0" || v == "no");
    let mode = if capture_off {
        CaptureMode::Off
    } else {
        CaptureMode::FirstPerBucket {
            reruns: env_number("ICEPICK_WRAP_RERUNS", 0) as u32,
            timeout: Duration::from_secs(env_number("ICEPICK_WRAP_TIMEOUT", 300).max(1)),
        }
    };
    let obs = Observed {
        argv: &argv,
        cwd: &cwd,
        exit_code: exit.code,
        origin: "wrap",
    };
    let recorded = Store::open_default().and_then(|mut s| s.record_crash(&obs, &analysed, &mode));
    Some(match recorded {
        Err(e) => format!("icepick: (could not record the crash: {e})"),
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
    use std::os::unix::process::ExitStatusExt;
    ExitInfo {
        code: status.code(),
        signal: status.signal(),
    }
}

/// The shell's answer when a command cannot be started: 127 when it is not found, 126 when
/// it is not executable.
fn not_started(program: &OsString, e: &std::io::Error) -> u8 {
    let name = program.to_string_lossy();
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
