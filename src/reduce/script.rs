//! `icepick reduce --test SCRIPT FILE`: C-Reduce/C-Vise compatible reduction driven by the
//! user's interestingness script (exit 0 = interesting), each test in a scratch directory
//! holding the candidate under FILE's name. As with those tools, FILE is rewritten in place
//! with the best-so-far (atomically, after every improvement) and the original is kept as
//! FILE.orig.

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
    pub original: PathBuf,
    pub bytes_before: usize,
    pub bytes_after: usize,
    pub tests: u64,
    pub cache_hits: u64,
    pub seconds: f64,
    pub jobs: usize,
    /// `done` or `stopped`.
    pub status: String,
}

/// Runs `script` in a fresh directory holding `text` as `name`; true when it exits 0.
fn interesting(
    script: &Path,
    name: &str,
    text: &[u8],
    timeout: Duration,
    cancel: &(dyn Fn() -> bool + Sync),
) -> bool {
    let Ok(dir) = tempfile::Builder::new()
        .prefix("test-")
        .tempdir_in(exec::scratch_dir())
    else {
        return false;
    };
    if std::fs::write(dir.path().join(name), text).is_err() {
        return false;
    }
    let cmd = Cmd::new(script)
        .cwd(dir.path())
        .timeout(timeout)
        .output_cap(64 << 10);
    matches!(
        exec::run_cancellable(&cmd, cancel).map(|o| o.status),
        Ok(Status::Exited(0))
    )
}

/// Reduces `file` in place while `script` says it is interesting.
pub fn reduce_with_script(
    script: &Path,
    file: &Path,
    settings: &Settings,
    note: &mut dyn FnMut(Note<'_>),
) -> Result<ScriptReduction, ReduceError> {
    let started = Instant::now();
    let script = std::fs::canonicalize(script).map_err(|e| ReduceError::Io(script.into(), e))?;
    let name = file
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .ok_or_else(|| {
            ReduceError::Io(
                file.into(),
                std::io::Error::new(std::io::ErrorKind::InvalidInput, "not a file name"),
            )
        })?;
    let start = std::fs::read(file).map_err(|e| ReduceError::Io(file.into(), e))?;
    let original = PathBuf::from(format!("{}.orig", file.display()));
    if !original.exists() {
        write_atomic(&original, &start)?;
    }
    let t0 = Instant::now();
    if !interesting(
        &script,
        &name,
        &start,
        settings.timeout.unwrap_or(Duration::from_secs(600)),
        &|| false,
    ) {
        return Err(ReduceError::NotReproducing(
            script.display().to_string(),
            format!(
                "the script does not exit 0 on {} as it is (it runs in a scratch directory holding only `{name}`)",
                file.display()
            ),
        ));
    }
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
