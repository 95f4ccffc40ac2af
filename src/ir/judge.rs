//! Runs candidate `llc`/`opt` commands and judges each against the case's crash key.
//!
//! Why this exists: every step of the stage (pipeline ddmin, llvm-reduce's result, the
//! textual cuts, the flags, the OptBisect cross-check) keeps a change only when the tool still
//! crashes the case's way; this is that one oracle, with the stack-overflow prefilter and the
//! cuts' deadline, kept apart from the steps themselves ([`super::reduce`]).

use std::path::Path;
use std::time::{Duration, Instant};

use super::crash_key;
use super::cuts;
use super::emit::{self, Tool};
use super::metadata;
use super::toolcmd::ToolCmd;
use super::{io, IrError};
use crate::crash::Symbolizer;
use crate::ddmin::{minimize, Outcome, Tester};
use crate::exec::{self, Cmd, Status};

/// The stack a stack-overflow candidate is first run with (see [`Judge::prefilter`]).
pub(super) const SMALL_STACK: u64 = 1 << 20;

/// Runs candidates in a directory and judges them against one key.
pub(super) struct Judge<'a> {
    pub(super) cwd: &'a Path,
    pub(super) key: String,
    pub(super) tool: Tool,
    pub(super) sym: &'a Symbolizer,
    pub(super) jobs: usize,
    pub(super) timeout: Duration,
    pub(super) runs: std::cell::Cell<usize>,
    /// For a stack overflow: candidates run first with this small stack, where the deep
    /// recursion overflows sooner and the run is several times cheaper; only those that
    /// overflow the same way there are run again with the inherited stack, which decides.
    /// Not a substitute: the recursion is deep, not endless, and IR that only overflows a
    /// 1 MB stack does not reproduce the case (llvm-reduce with a 1 MB stack alone writes IR
    /// that no longer overflows 8 MB).
    pub(super) prefilter: Option<u64>,
    /// After this instant candidates are not run and count as timeouts (ddmin then keeps
    /// what it has): the textual cuts get the same budget as llvm-reduce.
    pub(super) deadline: std::cell::Cell<Option<Instant>>,
    /// The tool runs its own llvm-symbolizer on its stack dump (`executor::Job::symbolize`):
    /// the stage times one run each way at the start and keeps the faster that reproduces.
    pub(super) symbolize: bool,
    /// For a stack overflow reduced shallow ([`super::depth::shallow_stack`]): every run gets
    /// this small stack and decides there (no prefilter, no run with the inherited stack);
    /// the stage deepens the reduced IR for the inherited stack afterwards.
    pub(super) shallow: Option<u64>,
}

impl Judge<'_> {
    pub(super) fn outcomes(&self, argvs: &[Vec<String>]) -> Vec<Outcome> {
        if self.deadline.get().is_some_and(|d| Instant::now() >= d) {
            return vec![Outcome::Timeout; argvs.len()];
        }
        let Some(stack) = self.prefilter else {
            return self.run(argvs, None);
        };
        let mut first = self.run(argvs, Some(stack));
        let again: Vec<usize> = (0..argvs.len()).filter(|&i| first[i].is_same()).collect();
        let sure = self.run(
            &again.iter().map(|&i| argvs[i].clone()).collect::<Vec<_>>(),
            None,
        );
        for (i, o) in again.into_iter().zip(sure) {
            first[i] = o;
        }
        first
    }

    pub(super) fn run(&self, argvs: &[Vec<String>], stack: Option<u64>) -> Vec<Outcome> {
        if argvs.is_empty() {
            return Vec::new();
        }
        self.runs.set(self.runs.get() + argvs.len());
        let cmds: Vec<Cmd> = argvs.iter().map(|a| self.cmd(a, stack)).collect();
        exec::run_all(&cmds, self.jobs)
            .into_iter()
            .map(|r| match r {
                Err(_) => Outcome::Error,
                Ok(o) => self.outcome(&o),
            })
            .collect()
    }

    fn cmd(&self, argv: &[String], stack: Option<u64>) -> Cmd {
        let mut c = Cmd::new(&argv[0])
            .args(&argv[1..])
            .cwd(self.cwd)
            .timeout(self.timeout)
            .output_cap(1 << 20);
        c.stack_limit = stack.or(self.shallow);
        crate::executor::compiler_env(c, self.symbolize)
    }

    fn outcome(&self, o: &exec::Output) -> Outcome {
        if matches!(o.status, Status::TimedOut | Status::Cancelled) {
            return Outcome::Timeout;
        }
        match emit::judge(o, self.sym) {
            Some(s) if crash_key(&s, self.tool) == self.key => Outcome::SameCrash,
            Some(_) => Outcome::OtherCrash,
            None if o.success() => Outcome::NoCrash,
            None => Outcome::Error,
        }
    }

    /// One run with the inherited stack: its stderr, and whether it crashed the case's way.
    pub(super) fn stderr_of(&self, argv: &[String]) -> (String, bool) {
        self.runs.set(self.runs.get() + 1);
        match exec::run(&self.cmd(argv, None)) {
            Ok(o) => (o.stderr_text(), self.outcome(&o).is_same()),
            Err(_) => (String::new(), false),
        }
    }

    /// Does `ir` (written to `name` in the directory) crash under `cmd`?
    pub(super) fn ir_crashes(&self, name: &str, ir: &str, cmd: &ToolCmd) -> Result<bool, IrError> {
        let path = self.cwd.join(name);
        std::fs::write(&path, ir).map_err(io(&path))?;
        Ok(self.outcomes(&[cmd.argv(name)])[0].is_same())
    }

    /// Writes a candidate text under a name made from its content (so [`Tester`]'s cache,
    /// keyed by argv, is keyed by text); returns the name.
    pub(super) fn candidate(&self, text: &str) -> String {
        use std::hash::{Hash, Hasher};
        let mut h = std::hash::DefaultHasher::new();
        text.hash(&mut h);
        let name = format!("c-{:016x}-{}.ll", h.finish(), text.len());
        // A file that cannot be written makes the tool fail: an uninteresting candidate.
        let _ = std::fs::write(self.cwd.join(&name), text);
        name
    }

    /// `ir` with a 1-minimal set of `units` kept that still crashes under `cmd`. With `gc`
    /// (`ir` has no unreached metadata and dropping it kept the crash), every candidate also
    /// loses the metadata definitions its cut left unreached ([`metadata::collect`]).
    fn cut(&self, ir: &str, cmd: &ToolCmd, units: &cuts::Units, gc: bool) -> String {
        if units.is_empty() {
            return ir.to_owned();
        }
        let text = |kept: &[usize]| {
            let t = units.keep(ir, kept);
            if gc {
                metadata::collect(&t)
            } else {
                t
            }
        };
        let build = |kept: &[usize]| cmd.argv(&self.candidate(&text(kept)));
        let oracle = |argvs: &[Vec<String>]| self.outcomes(argvs);
        let mut t = Tester::new(&oracle);
        let kept = minimize(units.len(), &build, &mut t);
        if kept.len() == units.len() {
            return ir.to_owned();
        }
        text(&kept)
    }

    /// Does the candidate text `ir` crash the case's way under `cmd`?
    fn keeps_crash(&self, ir: &str, cmd: &ToolCmd) -> bool {
        self.outcomes(&[cmd.argv(&self.candidate(ir))])[0].is_same()
    }

    /// The textual cuts of [`cuts`], each kept only when the crash stays.
    pub(super) fn cuts(&self, ir: &str, cmd: &ToolCmd) -> String {
        let mut ir = ir.to_owned();
        let collected = metadata::collect(&ir);
        let gc = collected == ir || self.keeps_crash(&collected, cmd);
        if gc {
            ir = collected;
            if let Some(c) = metadata::without_unit_lists(&ir) {
                if self.keeps_crash(&c, cmd) {
                    ir = c;
                }
            }
        }
        ir = self.cut(&ir, cmd, &cuts::lines(&ir), gc);
        ir = self.cut(&ir, cmd, &cuts::fields(&ir), gc);
        ir = self.cut(&ir, cmd, &cuts::lines(&ir), gc);
        ir = self.cut(&ir, cmd, &cuts::tokens(&ir), gc);
        ir = self.cut(&ir, cmd, &cuts::strings(&ir), gc);
        ir = self.cut(&ir, cmd, &cuts::attribute_entries(&ir), gc);
        for n in cuts::inlinable(&ir) {
            if let Some(c) = cuts::inline_node(&ir, &n) {
                if self.keeps_crash(&c, cmd) {
                    ir = c;
                }
            }
        }
        if let Some(n) = super::numbered::numbered(&ir) {
            if self.keeps_crash(&n, cmd) {
                ir = n;
            }
        }
        // Forwarding blocks folded and the structural edits of [`super::edits`], one at a
        // time, until none keeps the crash (a candidate that lost it is not tried again).
        let mut lost = std::collections::HashSet::new();
        'fold: loop {
            let cands = super::numbered::folded(&ir)
                .into_iter()
                .chain(super::edits::constant_branches(&ir))
                .chain(super::edits::dead_defs(&ir))
                .chain(super::edits::bypassed(&ir))
                .chain(super::edits::constant_operands(&ir));
            for c in cands {
                if lost.contains(&c) {
                    continue;
                }
                if self.keeps_crash(&c, cmd) {
                    ir = c;
                    continue 'fold;
                }
                lost.insert(c);
            }
            break;
        }
        if let Some(r) = metadata::renumber(&ir) {
            if self.keeps_crash(&r, cmd) {
                ir = r;
            }
        }
        let tidy = cuts::tidy(&ir);
        if tidy != ir && self.keeps_crash(&tidy, cmd) {
            ir = tidy;
        }
        ir
    }
}
