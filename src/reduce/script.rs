//! `icepick reduce --test SCRIPT FILE…`: C-Reduce/C-Vise compatible reduction driven by the
//! user's interestingness script (exit 0 = interesting), each test in a fresh scratch
//! directory holding every FILE under its own name (the candidate among them, with the
//! file's mode) and a private TMPDIR, all removed after the test, even a killed one. As with
//! those tools, each FILE is rewritten in place with the best-so-far (atomically, after every
//! improvement, keeping its mode) and its original is kept as FILE.orig. Several files are
//! reduced one at a time, in rounds, until a round changes none. The passes are the raw
//! C/C++ pipeline (`reducers::passes::raw_pipeline`): directives too, ending on one line as C-Vise does.
//!
//! As C-Vise does, the script is first run on the originals: a script that is missing, not
//! executable or not satisfied by the originals is reported as such (its exit status and
//! output shown), and nothing is written. FILE.orig is written only once the reduction
//! starts, never over an existing file that holds something else (`FILE.orig.1`, … then), and
//! removed again when nothing was reduced.

use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use reducers::passes::{raw_pipeline, Hints};
use reducers::{CancelToken, Options, Outcome, Stats};
use serde::Serialize;

use super::fault::Faults;
use super::trace::{self, Trace};
use super::{Note, ReduceError, Settings};
use crate::case::write_atomic;
use crate::exec::{self, Cmd, Status};

/// What a script-driven reduction did. With several files, `file`, `original`, and the
/// byte counts are those of the first file and the totals; `files` has each one.
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
    /// Every file named, in order.
    pub files: Vec<ScriptFile>,
}

/// One of the files a script-driven reduction reduced.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ScriptFile {
    pub file: PathBuf,
    /// The file holding it as it was before, when it was changed.
    pub original: Option<PathBuf>,
    pub bytes_before: usize,
    pub bytes_after: usize,
}

/// A file being reduced: where it lives, the name the script sees, its permission bits.
struct Named {
    path: PathBuf,
    name: String,
    mode: u32,
}

/// The private TMPDIR of one test, inside its scratch directory (so gcc's `cc*.s` and
/// clang's reproducers go when the directory does, even when the test is killed).
const TEST_TMPDIR: &str = ".icepick-tmp";

/// Runs `script` in a fresh scratch directory holding `texts[i]` as `files[i].name` (with
/// its mode) and a private TMPDIR; `None` when it could not be set up or started.
fn run_test(
    script: &Path,
    files: &[Named],
    texts: &[&[u8]],
    timeout: Duration,
    cancel: &(dyn Fn() -> bool + Sync),
) -> Result<Result<exec::Output, exec::ExecError>, ReduceError> {
    use std::os::unix::fs::PermissionsExt;
    let scratch = exec::scratch_dir();
    let dir = tempfile::Builder::new()
        .prefix("test-")
        .tempdir_in(&scratch)
        .map_err(|e| ReduceError::Io(scratch, e))?;
    for (f, text) in files.iter().zip(texts) {
        let p = dir.path().join(&f.name);
        // The script may run what it is given (a shell script being reduced, say).
        exec::write_runnable(&p, text, f.mode).map_err(|e| ReduceError::Io(p, e))?;
    }
    let tmp = dir.path().join(TEST_TMPDIR);
    std::fs::create_dir(&tmp).map_err(|e| ReduceError::Io(tmp.clone(), e))?;
    let cmd = Cmd::new(script)
        .cwd(dir.path())
        .env("TMPDIR", &tmp)
        .timeout(timeout)
        .output_cap(64 << 10);
    let out = exec::run_cancellable(&cmd, cancel);
    // A file the script made read-only must not keep the directory from going.
    let _ = std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o700));
    Ok(out)
}

/// Runs `script` as [`run_test`] does; true when it exits 0. A test that could not be set
/// up or started is no answer: it is recorded in `faults`, which stops the reduction.
fn interesting(
    script: &Path,
    files: &[Named],
    texts: &[&[u8]],
    timeout: Duration,
    cancel: &(dyn Fn() -> bool + Sync),
    faults: &Faults,
) -> bool {
    match run_test(script, files, texts, timeout, cancel) {
        Ok(Ok(out)) => out.status == Status::Exited(0),
        Ok(Err(e)) => {
            faults.record(e.into());
            false
        }
        Err(e) => {
            faults.record(e);
            false
        }
    }
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

/// Writes `bytes` to `file` atomically, keeping the permission bits `mode`.
fn write_keeping_mode(file: &Path, bytes: &[u8], mode: u32) -> Result<(), ReduceError> {
    use std::os::unix::fs::PermissionsExt;
    write_atomic(file, bytes)?;
    std::fs::set_permissions(file, std::fs::Permissions::from_mode(mode)).map_err(|error| {
        ReduceError::NoFile {
            path: file.into(),
            error,
        }
    })
}

/// Reduces `files` in place while `script` says they are interesting: each file in turn
/// (the others as they are so far), in rounds until a round changes none. With `trace`, one
/// JSON line per test is written there (see `trace.rs`).
pub fn reduce_with_script(
    script: &Path,
    files: &[PathBuf],
    settings: &Settings,
    trace: Option<&Path>,
    note: &mut dyn FnMut(Note<'_>),
) -> Result<ScriptReduction, ReduceError> {
    let started = Instant::now();
    let script = check_script(script)?;
    let (named, starts) = read_files(files)?;
    let summary = Summary {
        named: &named,
        starts: &starts,
        started,
        jobs: settings.jobs.max(1),
    };
    let t0 = Instant::now();
    if !check_original(&script, &named, &starts, settings)? {
        let no_originals = vec![None; named.len()];
        return Ok(summary.of(&starts, &no_originals, "stopped", 1, 0));
    }
    let mut kept = Vec::new();
    for (f, start) in named.iter().zip(&starts) {
        kept.push(keep_original(&f.path, start)?);
    }
    let timeout = settings
        .timeout
        .unwrap_or_else(|| (t0.elapsed() * 5).max(Duration::from_secs(3)));
    note(Note::Started {
        bytes: total(&starts),
        timeout,
    });
    let mut trace = Trace::create(None, trace.map(Path::to_path_buf).as_slice())?;
    trace.timeout = Some(timeout);
    let rounds = Rounds {
        script: &script,
        named: &named,
        timeout,
        settings,
        faults: Faults::new(settings.stop.clone()),
    };
    let (now, stats) = rounds.run(starts.clone(), &mut trace, note)?;
    let originals = originals_kept(kept, &starts, &now);
    let status = if stats.stopped { "stopped" } else { "done" };
    Ok(summary.of(&now, &originals, status, stats.tests, stats.cache_hits))
}

/// The bytes of all `texts`.
fn total(texts: &[Vec<u8>]) -> usize {
    texts.iter().map(Vec::len).sum()
}

/// Each of `files` as the script will see it, and its content: regular files with names of
/// their own.
fn read_files(files: &[PathBuf]) -> Result<(Vec<Named>, Vec<Vec<u8>>), ReduceError> {
    use std::os::unix::fs::PermissionsExt;
    let mut named: Vec<Named> = Vec::new();
    let mut starts: Vec<Vec<u8>> = Vec::new();
    for file in files {
        let bad = |why: &str| ReduceError::NoFile {
            path: file.into(),
            error: std::io::Error::new(std::io::ErrorKind::InvalidInput, why.to_string()),
        };
        let name = file
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .ok_or_else(|| bad("not a file name"))?;
        if name == TEST_TMPDIR || named.iter().any(|f| f.name == name) {
            return Err(bad(
                "another file to reduce has the same name (the script sees them side by side)",
            ));
        }
        let unreadable = |error| ReduceError::NoFile {
            path: file.into(),
            error,
        };
        let meta = std::fs::metadata(file).map_err(unreadable)?;
        if !meta.is_file() {
            return Err(bad("not a regular file"));
        }
        starts.push(std::fs::read(file).map_err(unreadable)?);
        named.push(Named {
            path: file.clone(),
            name,
            mode: meta.permissions().mode() & 0o7777,
        });
    }
    if named.is_empty() {
        return Err(ReduceError::NoFile {
            path: PathBuf::new(),
            error: std::io::Error::new(std::io::ErrorKind::InvalidInput, "no file to reduce"),
        });
    }
    Ok((named, starts))
}

/// The start-up check: the script must say yes to the originals, as they are. False when
/// it was stopped (Ctrl-C) before it said anything.
fn check_original(
    script: &Path,
    named: &[Named],
    starts: &[Vec<u8>],
    settings: &Settings,
) -> Result<bool, ReduceError> {
    let limit = settings.timeout.unwrap_or(Duration::from_secs(600));
    let texts: Vec<&[u8]> = starts.iter().map(Vec::as_slice).collect();
    let first = run_test(script, named, &texts, limit, &|| {
        settings.stop.load(Ordering::SeqCst)
    });
    let out = match first? {
        Err(e) => {
            return Err(ReduceError::BadScript {
                script: script.to_path_buf(),
                why: format!("cannot be run: {e} (does it start with #!?)"),
            })
        }
        Ok(out) => out,
    };
    let status = match out.status {
        Status::Exited(0) => return Ok(true),
        Status::Cancelled => return Ok(false),
        Status::Exited(n) => format!("returned {n}"),
        Status::Signaled(s) => format!("was killed by signal {s}"),
        Status::TimedOut => format!("did not finish within {} s", limit.as_secs()),
    };
    let names: Vec<&str> = named.iter().map(|f| f.name.as_str()).collect();
    Err(ReduceError::ScriptRejectsOriginal {
        script: script.to_path_buf(),
        file: named[0].path.clone(),
        // Shown as `a.c` in the message; several as `a.h`, `a.c`.
        name: names.join("`, `"),
        status,
        output: shown_output(&out),
    })
}

/// The reduction proper: each file in turn while the others stay as they are so far.
struct Rounds<'a> {
    script: &'a Path,
    named: &'a [Named],
    timeout: Duration,
    settings: &'a Settings,
    /// A test that could not run stops the reduction with it as the error.
    faults: Faults,
}

impl Rounds<'_> {
    /// Reduces from `now` in rounds until a round changes no file (one round for one
    /// file) or the reduction is stopped; returns the texts and the summed counters.
    fn run(
        &self,
        mut now: Vec<Vec<u8>>,
        trace: &mut Trace,
        note: &mut dyn FnMut(Note<'_>),
    ) -> Result<(Vec<Vec<u8>>, Stats), ReduceError> {
        let opts = Options {
            jobs: self.settings.jobs.max(1),
            stop: self.settings.stop.clone(),
            ..Options::new(raw_pipeline(Hints::default()))
        };
        let mut sum = Stats::default();
        loop {
            let mut changed = false;
            for k in 0..self.named.len() {
                if self.settings.stop.load(Ordering::SeqCst) {
                    sum.stopped = true;
                    return Ok((now, sum));
                }
                let result = self.reduce_one(&now, k, &opts, trace, note)?;
                sum.tests += result.stats.tests;
                sum.cache_hits += result.stats.cache_hits;
                sum.stopped |= result.stats.stopped;
                if result.output != now[k] {
                    changed = true;
                    now[k] = result.output;
                }
                if sum.stopped {
                    return Ok((now, sum));
                }
            }
            if !changed || self.named.len() == 1 {
                return Ok((now, sum));
            }
        }
    }

    /// One reducer run on file `k`, the others as in `now`; each improvement is written to
    /// the file at once.
    fn reduce_one(
        &self,
        now: &[Vec<u8>],
        k: usize,
        opts: &Options,
        trace: &mut Trace,
        note: &mut dyn FnMut(Note<'_>),
    ) -> Result<reducers::Reduction, ReduceError> {
        let test = |text: &[u8], cancel: &CancelToken| {
            let texts: Vec<&[u8]> = now
                .iter()
                .enumerate()
                .map(|(j, t)| if j == k { text } else { t.as_slice() })
                .collect();
            let off = || cancel.is_cancelled();
            if interesting(
                self.script,
                self.named,
                &texts,
                self.timeout,
                &off,
                &self.faults,
            ) {
                Outcome::Interesting
            } else {
                Outcome::Uninteresting
            }
        };
        let rest = total(now) - now[k].len();
        let file = &self.named[k];
        let driven = trace::drive(
            &now[k],
            opts,
            &test,
            &self.settings.stop,
            rest,
            trace,
            None,
            note,
            &mut |best, _, _| write_keeping_mode(&file.path, best, file.mode),
        );
        match (driven, self.faults.take()) {
            (Ok(r), None) => Ok(r),
            (Ok(r), Some(cause)) => Err(ReduceError::Fault {
                cause: Box::new(cause),
                bytes: r.output.len(),
                output: file.path.clone(),
            }),
            (Err(e), _) => Err(e),
        }
    }
}

/// The FILE.orig of each file that changed. A file nothing smaller was found for is its
/// original, and a copy this run made of it would only be litter: it goes.
fn originals_kept(
    kept: Vec<(PathBuf, bool)>,
    starts: &[Vec<u8>],
    now: &[Vec<u8>],
) -> Vec<Option<PathBuf>> {
    kept.into_iter()
        .zip(starts.iter().zip(now))
        .map(|((orig, wrote), (start, end))| {
            if start == end {
                if wrote {
                    let _ = std::fs::remove_file(&orig);
                }
                None
            } else {
                Some(orig)
            }
        })
        .collect()
}

/// What the [`ScriptReduction`] is made of besides the end state.
struct Summary<'a> {
    named: &'a [Named],
    starts: &'a [Vec<u8>],
    started: Instant,
    jobs: usize,
}

impl Summary<'_> {
    fn of(
        &self,
        now: &[Vec<u8>],
        originals: &[Option<PathBuf>],
        status: &str,
        tests: u64,
        cache_hits: u64,
    ) -> ScriptReduction {
        let files: Vec<ScriptFile> = self
            .named
            .iter()
            .zip(self.starts)
            .zip(now)
            .zip(originals)
            .map(|(((f, s), n), o)| ScriptFile {
                file: f.path.clone(),
                original: o.clone(),
                bytes_before: s.len(),
                bytes_after: n.len(),
            })
            .collect();
        ScriptReduction {
            file: self.named[0].path.clone(),
            original: originals[0].clone(),
            bytes_before: total(self.starts),
            bytes_after: total(now),
            tests,
            cache_hits,
            seconds: (self.started.elapsed().as_secs_f64() * 10.0).round() / 10.0,
            jobs: self.jobs,
            status: status.into(),
            files,
        }
    }
}
