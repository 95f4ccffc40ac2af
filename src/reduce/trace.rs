//! The one event loop of the reduce stage, for a case and for `--test SCRIPT` alike: it runs
//! the driver of `reducers` and, in one place, writes the best-so-far (through the
//! caller's `improved`), tells the caller's progress printer, and writes the trace.
//!
//! The trace (`--trace FILE`, and `logs/reduce-trace.jsonl` in a case) has one JSON line per
//! candidate that was tested or answered from the cache, written when its result is in:
//! `seq` (generation order = acceptance order within a text), `pass`, `run` (which run of a
//! pass), `base` (improvements accepted, or assumed by success speculation, before it was
//! generated), `parent` (the `seq` of the candidate its text derives from, `null` for the
//! input: the serial path follows these links), `bytes`, `outcome` (`interesting`,
//! `uninteresting`, `cached`, `cancelled`, `timeout`), `interesting` (for a cache hit too),
//! `start`/`end` (seconds since the stage started) and `worker` (`null` for a cache hit); for
//! a case's tests also the acceptance path's phases (`accept.rs`): `first` (the first
//! compiler run), `witness` and `confirm` (seconds, `null` when it did not run; they ran side
//! by side) and `rejected` (`first`, `witness`, `confirm` or `null`).
//! Several driver runs in one stage (the stricter second reduction, several files) continue
//! the numbering, so one trace is one sequence. `icepick simulate` replays it (see
//! `reducers::simulate`); the report draws it (`src/report/chart.rs`).

use std::fs::File;
use std::io::{LineWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use reducers::{CancelToken, Event, Options, Outcome, Reduction, Stats, TestRecord, Tested};

use super::accept::PhaseLog;
use super::{Note, ReduceError};
use crate::case::reduction::ResumeAt;

/// Where a case keeps the trace of its last reduction (case-relative).
pub const CASE_TRACE: &str = "logs/reduce-trace.jsonl";

/// The trace files of one stage.
pub struct Trace {
    files: Vec<(PathBuf, LineWriter<File>)>,
    origin: Instant,
    /// An uninteresting test that ran this long is reported as a `timeout`.
    pub timeout: Option<Duration>,
    /// Added to the next driver run's numbers, so that one trace is one sequence.
    seq: u64,
    run: u64,
    base: u64,
    error: Option<ReduceError>,
}

impl Trace {
    /// A trace written to the case's [`CASE_TRACE`] in `case_dir` (a fresh file, see
    /// [`crate::case::fileio::create`]) and to each of `paths` the user named (created or
    /// truncated); none: nothing written.
    pub fn create(case_dir: Option<&Path>, paths: &[PathBuf]) -> Result<Trace, ReduceError> {
        let mut files = Vec::new();
        if let Some(dir) = case_dir {
            let f = crate::case::fileio::create(dir, CASE_TRACE)?;
            files.push((dir.join(CASE_TRACE), LineWriter::new(f)));
        }
        for p in paths {
            if let Some(dir) = p.parent().filter(|d| !d.as_os_str().is_empty()) {
                std::fs::create_dir_all(dir).map_err(|e| ReduceError::Io(dir.into(), e))?;
            }
            let f = File::create(p).map_err(|e| ReduceError::Io(p.clone(), e))?;
            files.push((p.clone(), LineWriter::new(f)));
        }
        Ok(Trace {
            files,
            origin: Instant::now(),
            timeout: None,
            seq: 0,
            run: 0,
            base: 0,
            error: None,
        })
    }

    /// One record of a driver run that started `offset` after the stage.
    fn write(&mut self, r: &TestRecord, offset: Duration, phases: Option<&PhaseLog>) {
        let phases = match (phases, r.worker) {
            (Some(log), Some(_)) => log
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .remove(&r.hash),
            _ => None,
        };
        if self.files.is_empty() || self.error.is_some() {
            return;
        }
        let timed_out = matches!(r.result, Tested::Uninteresting)
            && self
                .timeout
                .is_some_and(|t| r.end.saturating_sub(r.start) >= t);
        let (outcome, interesting) = match r.result {
            Tested::Interesting => ("interesting", true),
            Tested::Uninteresting if timed_out => ("timeout", false),
            Tested::Uninteresting => ("uninteresting", false),
            Tested::Cached(o) => ("cached", o == Outcome::Interesting),
            Tested::Cancelled => ("cancelled", false),
        };
        let secs = |d: Duration| ((offset + d).as_secs_f64() * 1e4).round() / 1e4;
        let mut line = serde_json::json!({
            "seq": self.seq + r.seq,
            "pass": r.pass,
            "run": self.run + r.pass_run,
            "base": self.base + r.base,
            "parent": r.parent.map(|p| self.seq + p),
            "bytes": r.bytes,
            "outcome": outcome,
            "interesting": interesting,
            "start": secs(r.start),
            "end": secs(r.end),
            "worker": r.worker,
            "edit": format!("{:016x}", r.edit),
        });
        if let (Some(p), Some(obj)) = (phases, line.as_object_mut()) {
            let round = |x: f64| (x * 1e4).round() / 1e4;
            obj.insert("first".into(), round(p.first).into());
            obj.insert("witness".into(), p.witness.map(round).into());
            obj.insert("confirm".into(), p.confirm.map(round).into());
            obj.insert("rejected".into(), p.rejected.into());
            if p.spare {
                obj.insert("spare".into(), true.into());
            }
        }
        for (path, f) in &mut self.files {
            if let Err(e) = writeln!(f, "{line}") {
                self.error = Some(ReduceError::Io(path.clone(), e));
                return;
            }
        }
    }

    /// After a driver run: the next one's numbers follow this one's.
    fn next_run(&mut self, seen: (u64, u64, u64)) {
        self.seq += seen.0;
        self.run += seen.1;
        self.base += seen.2;
    }
}

/// What [`drive`] calls with each improvement and the counters so far: writes it.
/// `resume` as the case records it.
fn resume_at(resume: reducers::Resume, pass: &str) -> ResumeAt {
    ResumeAt {
        phase: resume.phase,
        pass: resume.pass,
        pass_name: pass.to_string(),
        rounds: resume.rounds,
        round_improved: resume.round_improved,
        cursor: resume.cursor,
    }
}

/// The recorded position, for `pipeline`: `None` when that pipeline has no pass of that name
/// there (the passes changed since).
pub(super) fn resume_from(
    at: &ResumeAt,
    pipeline: &reducers::Pipeline,
) -> Option<reducers::Resume> {
    let phase = match at.phase {
        0 => &pipeline.first,
        1 => &pipeline.main,
        2 => &pipeline.last,
        _ => return None,
    };
    let same = phase.get(at.pass).is_some_and(|p| p.name() == at.pass_name);
    same.then_some(reducers::Resume {
        phase: at.phase,
        pass: at.pass,
        rounds: at.rounds,
        round_improved: at.round_improved,
        cursor: at.cursor,
    })
}

pub(super) type Improved<'a> = dyn FnMut(&[u8], &Stats, ResumeAt) -> Result<(), ReduceError> + 'a;

/// Runs the driver on `start`: every improvement goes to `improved` (with the counters so
/// far), which writes it (an error stops the run and is returned); progress goes to `note`
/// (sizes plus `others`, the bytes of files not being reduced); each test to `trace` (with its
/// phases from `phases`, when the test records them).
#[allow(clippy::too_many_arguments)]
pub(super) fn drive<T>(
    start: &[u8],
    opts: &Options,
    test: &T,
    stop: &AtomicBool,
    others: usize,
    trace: &mut Trace,
    phases: Option<&PhaseLog>,
    note: &mut dyn FnMut(Note<'_>),
    improved: &mut Improved<'_>,
) -> Result<Reduction, ReduceError>
where
    T: Fn(&[u8], &CancelToken) -> Outcome + Sync,
{
    let mut failed = None;
    let mut last = Stats::default();
    let offset = trace.origin.elapsed();
    // Records' numbers, for the next run's offsets: seq, pass runs, improvements.
    let mut seen = (0u64, 0u64, 0u64);
    let result = reducers::reduce(start, opts, test, &mut |e| match e {
        Event::Improved { best, pass, resume } => {
            if failed.is_some() {
                return;
            }
            if let Err(e) = improved(best, &last, resume_at(resume, pass)) {
                failed = Some(e);
                stop.store(true, Ordering::SeqCst);
                return;
            }
            note(Note::Improved {
                bytes: others + best.len(),
                pass,
            });
        }
        Event::Progress(stats) => {
            last = stats.clone();
            note(Note::Progress(stats));
        }
        Event::Tested(r) => {
            seen.0 = seen.0.max(r.seq + 1);
            seen.1 = seen.1.max(r.pass_run + 1);
            trace.write(r, offset, phases);
        }
    });
    seen.2 = result.stats.improvements + 1;
    trace.next_run(seen);
    if let Some(e) = failed.or_else(|| trace.error.take()) {
        return Err(e);
    }
    Ok(result)
}
