//! The reduce stage: shrink a case's preprocessed input while it keeps crashing with the
//! case's signature, using the parallel driver of `icepick-reducers`; or, C-Reduce style,
//! shrink any file while a user's interestingness script says yes.
//!
//! The best-so-far is written atomically after every improvement (`reduced.<ext>` in the
//! case, or the file itself for `--test`), so Ctrl-C, a crash or `kill -9` at any moment
//! leaves a result that reproduces; `--resume` starts from it. The final result is verified
//! again with the case's plain replay command before it is reported.

mod hints;
mod script;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use icepick_reducers::{CancelToken, Event, Options, Outcome, Stats};
use serde::{Deserialize, Serialize};

use crate::case::{write_atomic, Case, CaseError};
use crate::command::CompilerCommand;
use crate::crash::{self, Symbolizer};
use crate::exec::{self, Cmd, Status};

pub use hints::hints_for;
pub use script::{reduce_with_script, ScriptReduction};

/// How to reduce.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Tests in flight.
    pub jobs: usize,
    /// Start from the best-so-far of an earlier run.
    pub resume: bool,
    /// Per-test time limit; `None`: derived from the baseline run.
    pub timeout: Option<Duration>,
    /// Set to stop early (Ctrl-C); the best so far is kept and reported.
    pub stop: Arc<AtomicBool>,
}

/// What the caller is told while reducing.
#[derive(Debug)]
pub enum Note<'a> {
    /// The baseline ran: size and the per-test timeout derived from it.
    Started { bytes: usize, timeout: Duration },
    /// A smaller input was accepted and written.
    Improved { bytes: usize, pass: &'a str },
    /// Periodic counters.
    Progress(&'a Stats),
    /// Re-checking the final result.
    Verifying,
}

/// The `reduction` section of `case.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Reduction {
    /// `running` (the process is at it, or was killed), `stopped` (interrupted, best kept),
    /// `done` (fixpoint reached).
    pub status: String,
    /// File name of the best-so-far inside the case directory.
    pub output: String,
    pub bytes_before: usize,
    pub bytes_after: usize,
    /// Compiler runs by the reducer, over all resumed runs.
    pub tests: u64,
    pub cache_hits: u64,
    pub seconds: f64,
    pub jobs: usize,
    /// The final result was re-run with `replay_command` and gave the case's signature.
    pub verified: bool,
    /// Flags the reduced input needs on top of `replay_command` to crash (e.g.
    /// `-ferror-limit=0` when the crash comes after more than 20 errors).
    #[serde(default)]
    pub extra_flags: Vec<String>,
    /// The command that crashes on `output`, inside the case directory.
    pub replay_command: Vec<String>,
}

/// Why the stage could not run.
#[derive(Debug, thiserror::Error)]
pub enum ReduceError {
    #[error(transparent)]
    Case(#[from] CaseError),
    #[error("{0}: {1}")]
    Io(PathBuf, std::io::Error),
    #[error("the case's input does not reproduce its crash (signature {0}) any more: {1}; run `icepick capture` again")]
    NotReproducing(String, String),
    #[error("--resume: no earlier reduction in this case; run without --resume")]
    NothingToResume,
    #[error("--resume: the earlier reduction's best file {0} is missing; run without --resume to start again from the case's input")]
    ResumeFileMissing(PathBuf),
    #[error("cannot read {path}: {error}")]
    NoFile {
        path: PathBuf,
        error: std::io::Error,
    },
    #[error("the test script {script} {why}")]
    BadScript { script: PathBuf, why: String },
    #[error("the test script {script} {status} on the original {file}; it must exit 0 on the original (it ran in a scratch directory holding only `{name}`), so nothing was reduced{output}")]
    ScriptRejectsOriginal {
        script: PathBuf,
        file: PathBuf,
        name: String,
        /// `returned 1`, `was killed by signal 9`, `did not finish within 600 s`.
        status: String,
        /// The script's output, capped, on lines of its own (empty when it printed nothing).
        output: String,
    },
    #[error(transparent)]
    Exec(#[from] exec::ExecError),
}

/// Flags added to every test command: more candidates stay interesting when clang does not
/// stop after 20 errors (reduction-notes.md: the measured crash came after 19), and warnings
/// are noise. Dropped again at the end when the result crashes without them.
fn test_flags(cmd: &CompilerCommand) -> Vec<String> {
    if cmd.is_gcc() {
        return vec!["-w".into()];
    }
    if cmd.is_cc1() {
        return vec!["-ferror-limit".into(), "0".into(), "-w".into()];
    }
    vec!["-ferror-limit=0".into(), "-w".into()]
}

/// `argv` with the argument naming `from` replaced by `to`, and `extra` inserted before it.
fn retarget(argv: &[String], from: &str, to: &str, extra: &[String]) -> Vec<String> {
    let mut out = Vec::with_capacity(argv.len() + extra.len());
    for a in argv {
        if a == from {
            out.extend(extra.iter().cloned());
            out.push(to.to_string());
        } else {
            out.push(a.clone());
        }
    }
    out
}

/// Judges compiler runs against one signature.
struct Oracle {
    case_dir: PathBuf,
    signature: String,
    symbolizer: Symbolizer,
    /// The case's emulator, put in front of every run.
    emulator: Vec<String>,
}

impl Oracle {
    /// Runs `argv` in the case directory; true when it crashes with the case's signature.
    fn same_crash(
        &self,
        argv: &[String],
        timeout: Duration,
        cancel: &(dyn Fn() -> bool + Sync),
    ) -> bool {
        let argv = crate::case::emulated(&self.emulator, argv);
        let cmd = Cmd::new(&argv[0])
            .args(&argv[1..])
            .cwd(&self.case_dir)
            .timeout(timeout)
            .output_cap(1 << 20);
        let Ok(out) = exec::run_cancellable(&cmd, cancel) else {
            return false;
        };
        if matches!(out.status, Status::TimedOut | Status::Cancelled) {
            return false;
        }
        let Some(mut c) = crash::parse(
            &String::from_utf8_lossy(&out.stderr),
            crate::capture::exit_info(out.status),
        ) else {
            return false;
        };
        self.symbolizer.symbolize(&mut c);
        crash::signature(&c).id == self.signature
    }
}

/// Reduces the input of the case in `dir`.
pub fn reduce_case(
    dir: &Path,
    settings: &Settings,
    note: &mut dyn FnMut(Note<'_>),
) -> Result<Reduction, ReduceError> {
    let started = Instant::now();
    let mut case = Case::load(dir)?;
    let ext = Path::new(&case.input)
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or("i")
        .to_string();
    let output_name = format!("reduced.{ext}");
    let output_path = dir.join(&output_name);
    let earlier: Option<Reduction> = case
        .reduction
        .clone()
        .and_then(|v| serde_json::from_value(v).ok());
    let (start, prior_tests, prior_hits, bytes_before) = if settings.resume {
        let r = earlier.as_ref().ok_or(ReduceError::NothingToResume)?;
        let path = dir.join(&r.output);
        let text = std::fs::read(&path).map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => ReduceError::ResumeFileMissing(path.clone()),
            _ => ReduceError::Io(path.clone(), e),
        })?;
        (text, r.tests, r.cache_hits, r.bytes_before)
    } else {
        let text = std::fs::read(dir.join(&case.input))
            .map_err(|e| ReduceError::Io(dir.join(&case.input), e))?;
        let n = text.len();
        (text, 0, 0, n)
    };

    // The minimal command from `icepick flags`, when it ran, is what later stages use.
    let replay = case
        .flags
        .as_ref()
        .filter(|f| f.get("reproduced").and_then(|r| r.as_bool()) == Some(true))
        .and_then(|f| f.get("minimal_command")?.as_array().cloned())
        .map(|a| {
            a.iter()
                .filter_map(|x| x.as_str().map(String::from))
                .collect::<Vec<_>>()
        })
        .filter(|a| a.contains(&case.input))
        .unwrap_or_else(|| case.replay_command.clone());
    let replay_cmd = CompilerCommand::from_argv(&replay).expect("a case has a replay command");
    let flags = test_flags(&replay_cmd);
    let oracle = Oracle {
        emulator: case.emulator.clone(),
        case_dir: dir.to_path_buf(),
        signature: case.signature.id.clone(),
        symbolizer: Symbolizer::new(case.library_dirs()),
    };
    // Candidates live in icepick's private scratch directory (removed however icepick ends).
    let scratch = exec::scratch_dir();
    let work = tempfile::Builder::new()
        .prefix("reduce-")
        .tempdir_in(&scratch)
        .map_err(|e| ReduceError::Io(scratch, e))?;
    let counter = AtomicU64::new(0);
    let run_candidate =
        |text: &[u8], timeout: Duration, cancel: &(dyn Fn() -> bool + Sync)| -> bool {
            let k = counter.fetch_add(1, Ordering::Relaxed);
            let path = work.path().join(format!("c{k}.{ext}"));
            if std::fs::write(&path, text).is_err() {
                return false;
            }
            let argv = retarget(&replay, &case.input, &path.to_string_lossy(), &flags);
            let same = oracle.same_crash(&argv, timeout, cancel);
            let _ = std::fs::remove_file(&path);
            same
        };

    // Baseline: proves the starting point is interesting and sets the per-test timeout.
    let t0 = Instant::now();
    if !run_candidate(&start, Duration::from_secs(600), &|| false) {
        return Err(ReduceError::NotReproducing(
            case.signature.id.clone(),
            "the test command (replay command plus -ferror-limit=0 -w) does not crash the same way"
                .into(),
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
        hints: hints_for(&case.crash),
        stop: settings.stop.clone(),
        ..Options::default()
    };
    let record = |status: &str, bytes_after: usize, stats: &Stats, verified, extra: Vec<String>| {
        let mut replay_out = retarget(&replay, &case.input, &output_name, &extra);
        if replay_out == replay {
            replay_out = retarget(&replay, &case.input, &output_name, &[]);
        }
        Reduction {
            status: status.into(),
            output: output_name.clone(),
            bytes_before,
            bytes_after,
            tests: prior_tests + stats.tests,
            cache_hits: prior_hits + stats.cache_hits,
            seconds: (started.elapsed().as_secs_f64() * 10.0).round() / 10.0,
            jobs: opts.jobs,
            verified,
            extra_flags: extra,
            replay_command: replay_out,
        }
    };
    // Write the starting point and a `running` record before any test, so that a kill at any
    // later moment leaves a best file that reproduces and a case that `--resume` accepts
    // (each improvement writes the file first, then the record).
    write_atomic(&output_path, &start)?;
    let mut last_stats = Stats::default();
    {
        let mut c = case.clone();
        c.reduction = serde_json::to_value(record(
            "running",
            start.len(),
            &last_stats,
            false,
            Vec::new(),
        ))
        .ok();
        c.save(dir)?;
    }
    let mut write_error = None;
    let test = |text: &[u8], cancel: &CancelToken| {
        if run_candidate(text, timeout, &|| cancel.is_cancelled()) {
            Outcome::Interesting
        } else {
            Outcome::Uninteresting
        }
    };
    let result = icepick_reducers::reduce(&start, &opts, &test, &mut |e| match e {
        Event::Improved { best, pass } => {
            if let Err(err) = write_atomic(&output_path, best) {
                write_error.get_or_insert(err);
                settings.stop.store(true, Ordering::SeqCst);
                return;
            }
            let mut c = case.clone();
            c.reduction = serde_json::to_value(record(
                "running",
                best.len(),
                &last_stats,
                false,
                Vec::new(),
            ))
            .ok();
            if let Err(err) = c.save(dir) {
                write_error.get_or_insert(err);
            }
            note(Note::Improved {
                bytes: best.len(),
                pass,
            });
        }
        Event::Progress(stats) => {
            last_stats = stats.clone();
            note(Note::Progress(stats));
        }
    });
    if let Some(err) = write_error {
        return Err(err.into());
    }

    // Verify the result with the plain replay command; keep the test flags only if needed.
    note(Note::Verifying);
    let plain = retarget(&replay, &case.input, &output_name, &[]);
    let with_flags = retarget(&replay, &case.input, &output_name, &flags);
    let long = timeout * 2;
    let (verified, extra) = if crate::interrupt::is_interrupted() {
        // Ctrl-C: stop now; the best so far is written, `--resume` verifies it later.
        (false, Vec::new())
    } else if oracle.same_crash(&plain, long, &|| false) {
        (true, Vec::new())
    } else if oracle.same_crash(&with_flags, long, &|| false) {
        (true, flags.clone())
    } else {
        (false, Vec::new())
    };
    let status = if result.stats.stopped {
        "stopped"
    } else {
        "done"
    };
    let rec = record(status, result.output.len(), &result.stats, verified, extra);
    case.reduction = Some(serde_json::to_value(&rec).expect("serialisable"));
    case.save(dir)?;
    crate::report::write_files(dir, &case)?;
    Ok(rec)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retarget_replaces_the_input_and_inserts_flags_before_it() {
        let argv: Vec<String> = ["clang", "-O2", "-x", "c++-cpp-output", "input.ii"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let extra = vec!["-w".to_string()];
        assert_eq!(
            retarget(&argv, "input.ii", "/w/c1.ii", &extra),
            ["clang", "-O2", "-x", "c++-cpp-output", "-w", "/w/c1.ii"]
        );
    }

    #[test]
    fn test_flags_follow_the_command_kind() {
        let driver =
            CompilerCommand::from_argv(&["clang".into(), "-c".into(), "f.i".into()]).unwrap();
        assert_eq!(test_flags(&driver), ["-ferror-limit=0", "-w"]);
        let cc1 =
            CompilerCommand::from_argv(&["clang".into(), "-cc1".into(), "f.c".into()]).unwrap();
        assert_eq!(test_flags(&cc1), ["-ferror-limit", "0", "-w"]);
    }
}
