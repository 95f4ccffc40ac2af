//! The synchronous spawns of the compiler launcher (`icepick wrap`, `icepick-wrap`): it runs
//! once per compile of a build, so it runs the compiler without the tokio runtime, the
//! process-group session or the output capture of [`super::run`], and leaves stdin, stdout
//! and signals to the compiler exactly as a build without icepick would.

use std::ffi::{OsStr, OsString};
use std::io;
use std::process::Stdio;

/// Runs `program` like `exec` would, for `icepick wrap`: stdin and stdout are inherited (the
/// child writes them itself), stderr is forwarded to ours chunk by chunk as it arrives, in
/// order, while the last `stderr_cap` bytes are kept (a crash report is at the end of the
/// output). No process group of its own: a Ctrl-C or a build tool's kill reaches the compiler
/// as it would without icepick. Synchronous and without the tokio runtime, to keep the
/// per-compile overhead small. `Err` only when the program cannot be started.
pub fn passthrough(
    program: &OsStr,
    args: &[OsString],
    stderr_cap: usize,
) -> io::Result<(std::process::ExitStatus, Vec<u8>)> {
    use std::io::{Read, Write};
    let mut child = std::process::Command::new(program)
        .args(args)
        .stderr(Stdio::piped())
        .spawn()?;
    let mut pipe = child.stderr.take().expect("stderr is piped");
    let mut ours = io::stderr().lock();
    let mut kept: Vec<u8> = Vec::new();
    let mut buf = [0u8; 16 * 1024];
    let mut forwarding = true;
    loop {
        match pipe.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                // Our stderr gone (EPIPE) must not block the compiler or change its result:
                // keep draining and copying.
                if forwarding && ours.write_all(&buf[..n]).is_err() {
                    forwarding = false;
                }
                kept.extend_from_slice(&buf[..n]);
                if kept.len() > stderr_cap.saturating_mul(2).max(1) {
                    let cut = kept.len() - stderr_cap;
                    kept.drain(..cut);
                }
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        }
    }
    drop(pipe);
    let status = loop {
        match child.wait() {
            Ok(s) => break s,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        }
    };
    if kept.len() > stderr_cap {
        let cut = kept.len() - stderr_cap;
        kept.drain(..cut);
    }
    Ok((status, kept))
}

/// Replaces this process with `program` (`execvp`): for a launcher inside another launcher,
/// which leaves the crash to the outer one. Returns only when it cannot be started.
pub fn become_program(program: &OsStr, args: &[OsString]) -> io::Error {
    use std::os::unix::process::CommandExt;
    std::process::Command::new(program).args(args).exec()
}

/// Runs `program` with `input` on its stdin and its stdout discarded, and returns its exit
/// status and stderr: how `icepick-wrap` hands a failed compile to `icepick`. A child that
/// exits before reading all of `input` does not stop the wait.
pub fn run_fed(
    program: &OsStr,
    args: &[OsString],
    input: &[u8],
) -> io::Result<(std::process::ExitStatus, Vec<u8>)> {
    use std::io::Write;
    let mut child = std::process::Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()?;
    if let Some(mut stdin) = child.stdin.take() {
        let _ = stdin.write_all(input);
    }
    let out = child.wait_with_output()?;
    Ok((out.status, out.stderr))
}
