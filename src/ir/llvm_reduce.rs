//! One llvm-reduce run whose interestingness test is icepick's own oracle.
//!
//! Why this exists: llvm-reduce's run and its recovery rules (a parallel result that lost
//! the crash is redone with `-j 1`, a timeout keeps llvm-reduce's best so far, debug info
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

impl LlvmReduce<'_> {
    /// llvm-reduce on `ir` under `cmd`: the reduced IR (verified to crash) or `ir` itself,
    /// and a note when the result is not llvm-reduce's full run. Tests are counted next to
    /// `oracle.json` (`oracle.json.count`, over all runs).
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
        let mut note = None;
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
        .map_err(io(&spec_path))?;
        std::fs::write(self.work.join("input.ll"), ir).map_err(io(self.work))?;
        let me = std::env::current_exe().map_err(|e| IrError::Io(e.to_string()))?;
        let stop = crate::interrupt::stop_flag();
        let cancelled = || stop.load(std::sync::atomic::Ordering::Relaxed);
        // llvm-reduce 19 with -j > 1 can write a result that is no longer interesting; such a
        // result is rerun with -j 1.
        let mut jobs = self.jobs;
        let has_debug_info = ir.contains("!llvm.dbg.cu");
        loop {
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
            if has_debug_info {
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
                .timeout(self.timeout)
                .output_cap(1 << 20);
            let _ = std::fs::remove_file(self.work.join("reduced.ll"));
            let out =
                exec::run_cancellable(&red, &cancelled).map_err(|e| IrError::Io(e.to_string()))?;
            if out.status == Status::Cancelled {
                return Err(IrError::Io("interrupted".into()));
            }
            let reduced_path = self.work.join("reduced.ll");
            let timed_out = out.status == Status::TimedOut;
            if timed_out {
                // llvm-reduce writes each new best to its output: keep the last one.
                note = Some(format!(
                    "llvm-reduce stopped after {} s (--reduce-timeout); its best so far is kept",
                    self.timeout.as_secs()
                ));
            }
            if (out.success() || timed_out) && reduced_path.is_file() {
                let got = std::fs::read_to_string(&reduced_path).map_err(io(&reduced_path))?;
                if judge.ir_crashes("check.ll", &got, cmd)? {
                    return Ok((got, note));
                }
                if jobs > 1 && !timed_out {
                    progress("llvm-reduce's parallel result lost the crash; again with -j 1");
                    jobs = 1;
                    continue;
                }
                note = Some("llvm-reduce's result lost the crash; the IR is unreduced".into());
            } else if timed_out {
                note = Some(format!(
                    "llvm-reduce stopped after {} s (--reduce-timeout) before its first reduction; the IR is unreduced",
                    self.timeout.as_secs()
                ));
            } else {
                let text = out.stderr_text();
                let last = text
                    .lines()
                    .rev()
                    .find(|l| !l.trim().is_empty())
                    .unwrap_or("");
                note = Some(format!(
                    "llvm-reduce failed ({:?}: {}); the IR is unreduced",
                    out.status,
                    exec::one_line(last, 200)
                ));
            }
            return Ok((ir.to_owned(), note));
        }
    }
}
