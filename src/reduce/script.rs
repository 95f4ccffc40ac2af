//! `icepick reduce --test SCRIPT FILE`: C-Reduce/C-Vise compatible reduction driven by the
//! user's interestingness script (exit 0 = interesting), each test in a scratch directory
//! holding the candidate under FILE's name. As with those tools, FILE is rewritten in place
//! with the best-so-far (atomically, after every improvement) and the original is kept as
//! FILE.orig.
//!
//! As C-Vise does, the script is first run on the original: a script that is missing, not
//! executable or not satisfied by the original is reported as such (its exit status and
//! output shown), and nothing is written. FILE.orig is written only once the reduction
//! starts, never over an existing file that holds something else (`FILE.orig.1`, … then), and
//! removed again when nothing was reduced.

use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use icepick_reducers::{CancelToken, Event, Options, Outcome, Stats};
use serde::Serialize;

use super::{Note, ReduceError, Settings};
use crate::case::write_atomic;
use crate::exec::{self, Cmd, Status};

/// What a script-driven reduction did.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ScriptReduction {
    pub file: PathBuf,
    /// The file holding FILE as it was before, when FILE was changed.
    pub original: Option<PathBuf>,
    pub bytes_before: usize,
    pub bytes_after: usize,
    pub tests: u64,
    pub cache_hits: u64,
    pub seconds: f64,
    pub jobs: usize,
    /// `done` or `stopped`.
    pub status: String,
}

/// Runs `script` in a fresh directory holding `text` as `name`; `None` when it could not be
/// set up or started.
fn run_test(
    script: &Path,
    name: &str,
    text: &[u8],
    timeout: Duration,
    cancel: &(dyn Fn() -> bool + Sync),
) -> Option<Result<exec::Output, exec::ExecError>> {
    let dir = tempfile::Builder::new()
        .prefix("test-")
        .tempdir_in(exec::scratch_dir())
        .ok()?;
    std::fs::write(dir.path().join(name), text).ok()?;
    let cmd = Cmd::new(script)
        .cwd(dir.path())
        .timeout(timeout)
        .output_cap(64 << 10);
    Some(exec::run_cancellable(&cmd, cancel))
}

/// Runs `script` in a fresh directory holding `text` as `name`; true when it exits 0.
fn interesting(
    script: &Path,
    name: &str,
    text: &[u8],
    timeout: Duration,
    cancel: &(dyn Fn() -> bool + Sync),
) -> bool {
    matches!(
        run_test(script, name, text, timeout, cancel),
        Some(Ok(exec::Output {
            status: Status::Exited(0),
            ..
        }))
    )
}

/// The script must be an executable file: said before anything runs.
fn check_script(script: &Path) -> Result<PathBuf, ReduceError> {
    use std::os::unix::fs::PermissionsExt;
    let bad = |why: String| ReduceError::BadScript {
        script: script.to_path_buf(),
        why,
    };
    let meta = std::fs::metadata(script).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => bad("does not exist".into()),
        _ => bad(format!("cannot be read: {e}")),
    })?;
    if !meta.is_file() {
        return Err(bad("is not a file".into()));
    }
    if meta.permissions().mode() & 0o111 == 0 {
        return Err(bad(format!(
            "is not executable (chmod +x {})",
            script.display()
        )));
    }
    std::fs::canonicalize(script).map_err(|e| bad(format!("cannot be resolved: {e}")))
}

/// At most this much of the script's output is shown when it rejects the original.
const SHOWN_OUTPUT: usize = 2000;

/// The script's output for a message: stdout then stderr, each cut to its first
/// [`SHOWN_OUTPUT`] bytes, on lines of their own; empty when it printed nothing.
fn shown_output(out: &exec::Output) -> String {
    let mut s = String::new();
    for (what, bytes, dropped) in [
        ("stdout", &out.stdout, out.stdout_dropped),
        ("stderr", &out.stderr, out.stderr_dropped),
    ] {
        let text = String::from_utf8_lossy(bytes);
        let text = text.trim_end();
        if text.is_empty() {
            continue;
        }
        let mut cut = text.len().min(SHOWN_OUTPUT);
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        let more = (text.len() - cut) as u64 + dropped;
        s.push_str(&format!("\n--- its {what}:\n{}", &text[..cut]));
        if more > 0 {
            s.push_str(&format!("\n[… {more} more bytes]"));
        }
    }
    s
}

/// Keeps `start` (FILE's content) beside `file`: FILE.orig, or when that holds something
/// else, the first free FILE.orig.N. Returns the path and whether this run wrote it.
fn keep_original(file: &Path, start: &[u8]) -> Result<(PathBuf, bool), ReduceError> {
    for n in 0u32.. {
        let p = PathBuf::from(if n == 0 {
            format!("{}.orig", file.display())
        } else {
            format!("{}.orig.{n}", file.display())
        });
        if std::fs::symlink_metadata(&p).is_err() {
            write_atomic(&p, start)?;
            return Ok((p, true));
        }
        if std::fs::read(&p).is_ok_and(|held| held == start) {
            return Ok((p, false));
        }
    }
    unreachable!("some FILE.orig.N is free")
}

/// Reduces `file` in place while `script` says it is interesting.
pub fn reduce_with_script(
    script: &Path,
    file: &Path,
    settings: &Settings,
    note: &mut dyn FnMut(Note<'_>),
) -> Result<ScriptReduction, ReduceError> {
    let started = Instant::now();
    let script = check_script(script)?;
    let name = file
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .ok_or_else(|| ReduceError::NoFile {
            path: file.into(),
            error: std::io::Error::new(std::io::ErrorKind::InvalidInput, "not a file name"),
        })?;
    let start = std::fs::read(file).map_err(|error| ReduceError::NoFile {
        path: file.into(),
        error,
    })?;
    let unchanged = |status: &str, tests: u64| ScriptReduction {
        file: file.to_path_buf(),
        original: None,
        bytes_before: start.len(),
        bytes_after: start.len(),
        tests,
        cache_hits: 0,
        seconds: (started.elapsed().as_secs_f64() * 10.0).round() / 10.0,
        jobs: settings.jobs.max(1),
        status: status.into(),
    };
    // The start-up check: the script must say yes to the original, as it is.
    let t0 = Instant::now();
    let first_limit = settings.timeout.unwrap_or(Duration::from_secs(600));
    let first = run_test(&script, &name, &start, first_limit, &|| {
        settings.stop.load(Ordering::SeqCst)
    });
    let out = match first {
        None => {
            return Err(ReduceError::NoFile {
                path: std::env::temp_dir(),
                error: std::io::Error::other("cannot make a scratch directory for the test"),
            })
        }
        Some(Err(e)) => {
            return Err(ReduceError::BadScript {
                script: script.clone(),
                why: format!("cannot be run: {e} (does it start with #!?)"),
            })
        }
        Some(Ok(out)) => out,
    };
    let status = match out.status {
        Status::Exited(0) => None,
        Status::Exited(n) => Some(format!("returned {n}")),
        Status::Signaled(s) => Some(format!("was killed by signal {s}")),
        Status::TimedOut => Some(format!("did not finish within {} s", first_limit.as_secs())),
        Status::Cancelled => return Ok(unchanged("stopped", 1)),
    };
    if let Some(status) = status {
        return Err(ReduceError::ScriptRejectsOriginal {
            script: script.clone(),
            file: file.to_path_buf(),
            name,
            status,
            output: shown_output(&out),
        });
    }
    let (original, wrote_original) = keep_original(file, &start)?;
    let timeout = settings
        .timeout
        .unwrap_or_else(|| (t0.elapsed() * 5).max(Duration::from_secs(3)));
    note(Note::Started {
        bytes: start.len(),
        timeout,
    });
    let opts = Options {
        jobs: settings.jobs.max(1),
        stop: settings.stop.clone(),
        ..Options::default()
    };
    let mut write_error = None;
    let test = |text: &[u8], cancel: &CancelToken| {
        if interesting(&script, &name, text, timeout, &|| cancel.is_cancelled()) {
            Outcome::Interesting
        } else {
            Outcome::Uninteresting
        }
    };
    let result = icepick_reducers::reduce(&start, &opts, &test, &mut |e| match e {
        Event::Improved { best, pass } => {
            if let Err(err) = write_atomic(file, best) {
                write_error.get_or_insert(err);
                settings.stop.store(true, Ordering::SeqCst);
            }
            note(Note::Improved {
                bytes: best.len(),
                pass,
            });
        }
        Event::Progress(stats) => note(Note::Progress(stats)),
    });
    if let Some(err) = write_error {
        return Err(err.into());
    }
    // Nothing smaller was interesting: FILE is the original, and a copy this run made of it
    // would only be litter.
    let original = if result.output == start {
        if wrote_original {
            let _ = std::fs::remove_file(&original);
        }
        None
    } else {
        Some(original)
    };
    let Stats {
        tests,
        cache_hits,
        stopped,
        ..
    } = result.stats;
    Ok(ScriptReduction {
        file: file.to_path_buf(),
        original,
        bytes_before: start.len(),
        bytes_after: result.output.len(),
        tests,
        cache_hits,
        seconds: (started.elapsed().as_secs_f64() * 10.0).round() / 10.0,
        jobs: opts.jobs,
        status: if stopped { "stopped" } else { "done" }.into(),
    })
}
