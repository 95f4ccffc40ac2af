//! One llvm-reduce run whose interestingness test is icepick's own oracle.
//!
//! Why this exists: llvm-reduce's run and its recovery rules (a parallel result that lost
//! the crash is redone with `-j 1`, a timeout keeps llvm-reduce's best so far, a run that
//! gives up on the way goes on from its best so far, debug info
//! skips the `di-metadata` pass, a shallow stack overflow gets one quick round), kept apart
//! from the stage's steps ([`super::reduce`]).

use std::path::Path;
use std::time::Duration;

use super::emit::Tool;
use super::judge::Judge;
use super::toolcmd::ToolCmd;
use super::{io, IrError, OracleSpec};
use crate::exec::{self, Cmd, Status};

/// What every run shares: the scratch directory, the reducer, the oracle's key and budget.
pub(super) struct LlvmReduce<'a> {
    pub work: &'a Path,
    pub reducer: &'a Path,
    pub key: &'a str,
    pub tool: Tool,
    pub library_dirs: Vec<std::path::PathBuf>,
    pub jobs: usize,
    /// `--reduce-timeout`: llvm-reduce is stopped after it and its best so far is kept.
    pub timeout: Duration,
    /// One round of the delta passes, without those that cost many tests for little on a
    /// shallow stack overflow ([`QUICK_SKIP`]); the textual cuts follow.
    pub quick: bool,
}

/// llvm-reduce 19's delta passes a quick run skips: under a small stack most of its tests are
/// candidates these passes make that fail, so the count of candidates, not the cost of a
/// crash, bounds its time; one round without them ends a few lines longer in a fraction of
/// the time, and the operand rewrites left are what the cuts' bypass edits
/// ([`super::edits::bypassed`]) take out (`docs/design/ir-depth.md`).
const QUICK_SKIP: &str =
    "operands-to-args,operands-skip,opcodes,instruction-flags,basic-blocks,operands-nan,\
operands-one,operands-zero,ir-passes,simplify-instructions";

/// Restarts of llvm-reduce from its own best so far after it gave up on the way.
const RESTARTS: u32 = 3;

/// How one llvm-reduce run ended.
enum Ended {
    /// It finished, or was stopped at the time limit, with this output (if it wrote one).
    Done {
        output: Option<String>,
        timed_out: bool,
    },
    /// It exited with an error; its last output line, and its best so far if it wrote one.
    Failed { why: String, output: Option<String> },
}

impl LlvmReduce<'_> {
    /// Why the IR stays unreduced when llvm-reduce ended without writing a result.
    fn no_result_note(&self, timed_out: bool) -> String {
        if timed_out {
            format!(
                "llvm-reduce stopped after {} s (--reduce-timeout) before its first reduction; the IR is unreduced",
                self.timeout.as_secs()
            )
        } else {
            "llvm-reduce wrote no result; the IR is unreduced".into()
        }
    }

    /// llvm-reduce on `ir` under `cmd`: the reduced IR (verified to crash) or `ir` itself,
    /// and a note when the result is not llvm-reduce's full run. Tests are counted next to
    /// `oracle.json` (`oracle.json.count`, over all runs).
    ///
    /// llvm-reduce 14 checks at the start of every delta pass that what it has is still
    /// interesting and exits when it is not (a crash that depends on memory layout can stop
    /// being one in a reduced module); it writes its best so far first. That best, when it
    /// crashes the case's way, is where a new run starts ([`RESTARTS`] times at most, all
    /// within the one time limit).
    pub(super) fn run(
        &self,
        judge: &Judge,
        cmd: &ToolCmd,
        ir: &str,
        progress: &mut dyn FnMut(&str),
    ) -> Result<(String, Option<String>), IrError> {
        progress(&format!(
            "reducing {} bytes of IR with llvm-reduce -j {}",
            ir.len(),
            self.jobs
        ));
        self.write_spec(judge, cmd)?;
        let deadline = std::time::Instant::now() + self.timeout;
        // llvm-reduce 19 with -j > 1 can write a result that is no longer interesting; such a
        // result is rerun with -j 1.
        let mut jobs = self.jobs;
        let mut start = ir.to_owned();
        let mut restarts = 0;
        loop {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            let crashes = |got: &str| judge.ir_crashes("check.ll", got, cmd);
            match self.attempt(&start, jobs, left)? {
                Ended::Done {
                    output: Some(got),
                    timed_out,
                } => {
                    if crashes(&got)? {
                        let note = timed_out.then(|| format!(
                            "llvm-reduce stopped after {} s (--reduce-timeout); its best so far is kept",
                            self.timeout.as_secs()
                        ));
                        return Ok((got, note));
                    }
                    if jobs > 1 && !timed_out {
                        progress("llvm-reduce's parallel result lost the crash; again with -j 1");
                        jobs = 1;
                        continue;
                    }
                    let note = "llvm-reduce's result lost the crash; the IR is unreduced";
                    return Ok((start, Some(note.into())));
                }
                Ended::Done {
                    output: None,
                    timed_out,
                } => return Ok((start, Some(self.no_result_note(timed_out)))),
                Ended::Failed { why, output } => {
                    let best = match output {
                        Some(got) if got.len() < start.len() && crashes(&got)? => Some(got),
                        _ => None,
                    };
                    let Some(best) = best else {
                        let note = format!("llvm-reduce failed ({why}); the IR is unreduced");
                        return Ok((start, Some(note)));
                    };
                    restarts += 1;
                    if restarts > RESTARTS || deadline <= std::time::Instant::now() {
                        let note = format!(
                            "llvm-reduce gave up on the way ({why}); its best so far is kept"
                        );
                        return Ok((best, Some(note)));
                    }
                    progress(&format!(
                        "llvm-reduce gave up on the way ({why}); again from its best so far ({} bytes)",
                        best.len()
                    ));
                    start = best;
                }
            }
        }
    }

    /// Writes the oracle's spec, `oracle.json`, for `cmd`.
    fn write_spec(&self, judge: &Judge, cmd: &ToolCmd) -> Result<(), IrError> {
        let spec = OracleSpec {
            argv: cmd.argv("{}"),
            key: self.key.to_owned(),
            tool: self.tool,
            library_dirs: self.library_dirs.clone(),
            timeout_secs: judge.timeout.as_secs().max(1),
            stack_prefilter: judge.prefilter,
            symbolize: judge.symbolize,
            stack: judge.shallow,
        };
        let spec_path = self.work.join("oracle.json");
        std::fs::write(
            &spec_path,
            serde_json::to_vec(&spec).expect("the spec serialises"),
        )
        .map_err(io(&spec_path))
    }

    /// One llvm-reduce run on `ir` with `jobs` threads, stopped after `limit`.
    fn attempt(&self, ir: &str, jobs: usize, limit: Duration) -> Result<Ended, IrError> {
        std::fs::write(self.work.join("input.ll"), ir).map_err(io(self.work))?;
        let me = std::env::current_exe().map_err(|e| IrError::Io(e.to_string()))?;
        let stop = crate::interrupt::stop_flag();
        let cancelled = || stop.load(std::sync::atomic::Ordering::Relaxed);
        let spec_path = self.work.join("oracle.json");
        let mut args = vec![
            format!("-j={jobs}"),
            format!("--test={}", me.display()),
            "--test-arg=ir-oracle".into(),
            format!("--test-arg={}", spec_path.display()),
        ];
        // llvm-reduce 19's di-metadata pass leaves debug info the verifier rejects, and
        // writes such a module as its result, one that no longer crashes:
        // with debug info in the IR it is skipped, and the debug info is cut here instead.
        let mut skip = Vec::new();
        if ir.contains("!llvm.dbg.cu") {
            skip.push("di-metadata");
        }
        if self.quick {
            skip.push(QUICK_SKIP);
            args.push("--max-pass-iterations=1".into());
        }
        if !skip.is_empty() {
            args.push(format!("--skip-delta-passes={}", skip.join(",")));
        }
        args.extend(["-o".into(), "reduced.ll".into(), "input.ll".into()]);
        let red = Cmd::new(self.reducer)
            .args(args)
            .cwd(self.work)
            .timeout(limit.max(Duration::from_secs(1)))
            .output_cap(1 << 20);
        let reduced_path = self.work.join("reduced.ll");
        let _ = std::fs::remove_file(&reduced_path);
        let out =
            exec::run_cancellable(&red, &cancelled).map_err(|e| IrError::Io(e.to_string()))?;
        if out.status == Status::Cancelled {
            return Err(IrError::Io("interrupted".into()));
        }
        // llvm-reduce writes each new best to its output, also on the way.
        let output = if reduced_path.is_file() {
            Some(std::fs::read_to_string(&reduced_path).map_err(io(&reduced_path))?)
        } else {
            None
        };
        let timed_out = out.status == Status::TimedOut;
        if out.success() || timed_out {
            return Ok(Ended::Done { output, timed_out });
        }
        let text = out.stderr_text();
        let last = text
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("");
        Ok(Ended::Failed {
            why: format!("{:?}: {}", out.status, exec::one_line(last, 200)),
            output,
        })
    }
}
