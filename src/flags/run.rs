//! The process side of `icepick flags`: run candidates, judge them, save the section.
//!
//! Why this exists: the analysis is pure over a batch oracle; this is the oracle. It runs
//! each batch of candidate command lines in parallel through [`exec::run_all`] inside the
//! case directory (where `case.input` lives), parses and symbolizes each crash and calls it
//! the same crash when the case's crash family holds it (its one signature, for a crash
//! that repeats itself; a candidate that missed is then run up to the family's tries), the
//! same at the coarse grain when its
//! kind, message and pass are (what a dimension's verdict uses; ddmin keeps exact ones). Timeouts and other crashes are
//! not the same crash. The first run (the replay itself) sets the time limit of the rest:
//! ten times what it took, at least 10 s, at most `--timeout`, so a candidate that hangs
//! costs little. The result goes into `case.json` (`flags`) atomically.

use std::cell::{Cell, RefCell};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::ddmin::{Outcome, Tester};
use super::{analyse, original, Flags};
use crate::case::{Case, CaseError};
use crate::command::{CompilerCommand, Sink};
use crate::crash::family::Seen;
use crate::crash::{self, CrashFamily, Symbolizer};
use crate::exec::{Output, Status};
use crate::executor::{Executor, Job};

/// How to run the probes.
#[derive(Debug, Clone)]
pub struct Options {
    /// Compiler runs at once.
    pub jobs: usize,
    /// Upper limit on one run.
    pub timeout: Duration,
    /// Accept a candidate that crashes the same way after source errors even when the
    /// case's original compiles with none before its crash (`--allow-invalid`). Off: such a
    /// candidate is [`Outcome::CrashAfterErrors`], so a flag whose removal makes the code
    /// invalid (`-std=c++20` under C++17) is kept.
    pub allow_invalid: bool,
    /// Where the probes of the case's input run (`--executor`); the original command's
    /// recheck (the user's sources and headers) always runs here.
    pub executor: crate::executor::Choice,
    /// When the stage must end (the triage budget): no run starts after it and none runs
    /// past it. A probe cut this way is a `Timeout` outcome, and every dimension it touched
    /// is left undecided ([`Flags::budget_cut`]).
    pub deadline: Option<Instant>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            jobs: std::thread::available_parallelism().map_or(2, |n| n.get()),
            timeout: Duration::from_secs(300),
            allow_invalid: false,
            executor: Default::default(),
            deadline: None,
        }
    }
}

/// Why `icepick flags` could not run (a crash or a lost crash is a result, not an error).
#[derive(Debug, thiserror::Error)]
pub enum FlagsError {
    #[error(transparent)]
    Case(#[from] CaseError),
}

impl crate::error::ExitCoded for FlagsError {
    fn exit_code(&self) -> u8 {
        match self {
            FlagsError::Case(e) => crate::error::ExitCoded::exit_code(e),
        }
    }
}

/// Judges one finished run against the case's crash family; `keep_valid`: the same crash
/// after source errors is [`Outcome::CrashAfterErrors`].
fn judge(out: &Output, family: &Family<'_>, symbolizer: &Symbolizer, keep_valid: bool) -> Outcome {
    match out.status {
        Status::TimedOut | Status::Cancelled => return Outcome::Timeout,
        _ => {}
    }
    match crash::parse(&out.stderr_text(), out.status.exit_info()) {
        Some(mut c) => {
            symbolizer.symbolize(&mut c);
            let got = crash::signature(&c);
            if !family.crashes.contains(&Seen::new(&c, &got)) {
                if same_coarse(&got, family.signature) {
                    Outcome::SameCrashCoarse
                } else {
                    Outcome::OtherCrash
                }
            } else if keep_valid && c.source_errors > 0 {
                Outcome::CrashAfterErrors
            } else {
                Outcome::SameCrash
            }
        }
        None if out.success() => Outcome::NoCrash,
        None => Outcome::Error,
    }
}

/// Two crashes are the same at the coarse grain when their coarse signatures agree (kind,
/// message, pass, top frame), or when they agree on kind, a message and a pass: a release
/// build's truncated or differently inlined stack moves the frames, not the bug.
pub(crate) fn same_coarse(a: &crash::Signature, b: &crash::Signature) -> bool {
    a.coarse_id == b.coarse_id
        || (a.kind == b.kind
            && !a.message.is_empty()
            && a.message == b.message
            && !a.phase.is_empty()
            && a.phase == b.phase)
}

/// The case's crash as runs are judged against it: its family, and the signature a crash
/// outside it is compared with at the coarse grain.
struct Family<'a> {
    crashes: CrashFamily,
    signature: &'a crash::Signature,
}

impl<'a> Family<'a> {
    fn of(case: &'a Case) -> Self {
        Family {
            crashes: case.family(),
            signature: &case.signature,
        }
    }
}

/// Runs batches of candidates in one directory and judges them; the first batch sets the
/// time limit of the rest.
struct Runner<'a, 'b> {
    cwd: &'a Path,
    emulator: &'a [String],
    family: &'a Family<'a>,
    symbolizer: &'a Symbolizer,
    keep_valid: bool,
    opts: &'a Options,
    executor: &'a Executor,
    /// The compiler symbolizes its own stack dumps (`Job::symbolize`).
    symbolize: bool,
    limit: Cell<Option<Duration>>,
    /// Said before every batch: `batch N` or `original command, batch N`.
    label: &'static str,
    /// Every run writes its output and side outputs into a fresh scratch directory of its
    /// own: for runs of the original command in the build's directory. Otherwise only a
    /// candidate that would write beside its output does (ddmin may have dropped the
    /// `-Xclang` pair that pinned its `.su` to `/dev/null`, and not `-fstack-usage`).
    outputs_in_scratch: bool,
    batches: Cell<usize>,
    progress: &'a RefCell<&'b mut dyn FnMut(&str)>,
}

impl Runner<'_, '_> {
    /// Runs and judges `cands`. For a crash that comes in some runs only, a candidate that
    /// did not crash as the family does is run again, up to the family's tries.
    fn run(&self, cands: &[Vec<String>]) -> Vec<Outcome> {
        let mut outcomes = self.run_once(cands);
        for _ in 1..self.family.crashes.tries() {
            let missed: Vec<usize> = (0..cands.len())
                .filter(|&i| outcomes[i] != Outcome::SameCrash)
                .collect();
            if missed.is_empty() {
                break;
            }
            let again: Vec<Vec<String>> = missed.iter().map(|&i| cands[i].clone()).collect();
            for (i, o) in missed.into_iter().zip(self.run_once(&again)) {
                if o == Outcome::SameCrash {
                    outcomes[i] = o;
                }
            }
        }
        outcomes
    }

    fn run_once(&self, cands: &[Vec<String>]) -> Vec<Outcome> {
        let Some(deadline) = self.opts.deadline else {
            return self.run_batch(cands, self.limit.get().unwrap_or(self.opts.timeout));
        };
        // Under a deadline, `jobs` runs at a time, each limited to what is left when it
        // starts: a queued run never starts late with a full time limit.
        let mut outcomes = Vec::with_capacity(cands.len());
        for chunk in cands.chunks(self.opts.jobs.max(1)) {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                outcomes.resize(outcomes.len() + chunk.len(), Outcome::Timeout);
                continue;
            }
            let timeout = self.limit.get().unwrap_or(self.opts.timeout).min(left);
            outcomes.extend(self.run_batch(chunk, timeout));
        }
        outcomes
    }

    fn run_batch(&self, cands: &[Vec<String>], timeout: Duration) -> Vec<Outcome> {
        // Kept until the batch has run, then removed with what the runs wrote.
        let mut scratch = Vec::new();
        let argvs: Vec<Vec<String>> = cands
            .iter()
            .map(|argv| {
                let cmd = CompilerCommand::from_argv(argv);
                let writes_beside = |c: &CompilerCommand| {
                    self.outputs_in_scratch || c.without_side_outputs(&Sink::Nowhere) != *c
                };
                let argv = match cmd.filter(writes_beside) {
                    Some(c) => match crate::exec::fresh_scratch("run-") {
                        Ok(dir) => {
                            let c = c.without_build_outputs(&Sink::Dir(dir.path()));
                            scratch.push(dir);
                            c.argv()
                        }
                        // No scratch: the command as made, which writes nowhere.
                        Err(_) => c.without_build_outputs(&Sink::Nowhere).argv(),
                    },
                    None => argv.clone(),
                };
                crate::case::emulated(self.emulator, &argv)
            })
            .collect();
        let cmds: Vec<Job<'_>> = argvs
            .iter()
            .map(|argv| Job {
                argv,
                cwd: self.cwd,
                timeout,
                symbolize: self.symbolize,
                tmpdir: None,
            })
            .collect();
        self.batches.set(self.batches.get() + 1);
        let farm = match self
            .executor
            .is_farm()
            .then(crate::executor::live)
            .flatten()
        {
            Some(l) => format!(" ({} so far)", l.line()),
            None => String::new(),
        };
        (self.progress.borrow_mut())(&format!(
            "{}batch {}: {} compiler run{}{farm}",
            self.label,
            self.batches.get(),
            cmds.len(),
            if cmds.len() == 1 { "" } else { "s" }
        ));
        let results = self.executor.run_all(&cmds, self.opts.jobs);
        let outcomes: Vec<Outcome> = results
            .iter()
            .map(|r| match r {
                Ok(out) => judge(out, self.family, self.symbolizer, self.keep_valid),
                Err(_) => Outcome::Error,
            })
            .collect();
        if self.limit.get().is_none() {
            let slowest = results
                .iter()
                .filter_map(|r| r.as_ref().ok())
                .map(|o| o.elapsed)
                .max()
                .unwrap_or_default();
            self.limit.set(Some(
                (slowest * 10)
                    .max(Duration::from_secs(10))
                    .min(self.opts.timeout),
            ));
        }
        outcomes
    }
}

/// Whether the case's probes ran on input icepick preprocessed (so some rows are confounded
/// by it): not when the input was given preprocessed (a `.i` file, a clang reproducer) or
/// the command is a cc1 line; then the input probed is the user's own.
fn preprocessed_by_icepick(case: &Case) -> bool {
    case.preprocessing.mode != "given"
        && !CompilerCommand::from_argv(&case.command).is_some_and(|c| c.is_cc1())
}

/// The original command, ready to run in its build directory without writing anything
/// there or beside `/dev/null` (`-o /dev/null`, its side outputs dropped or pinned to
/// `/dev/null`, no crash reproducers; each run moves them into scratch), or why it cannot
/// run.
fn original_base(case: &Case) -> Result<Vec<String>, String> {
    let cmd = CompilerCommand::from_argv(&case.command)
        .ok_or_else(|| "the case has no original command".to_string())?;
    let cwd = Path::new(&case.cwd);
    if !cwd.is_dir() {
        return Err(format!("its build directory {} is gone", case.cwd));
    }
    for input in cmd.inputs() {
        if input != "-" && !cwd.join(input).is_file() {
            return Err(format!(
                "the original source {input} is not in {}",
                case.cwd
            ));
        }
    }
    let mut out = cmd.without_build_outputs(&Sink::Nowhere);
    if !out.is_cc1() && !out.args.iter().any(|a| a == "-fno-crash-diagnostics") {
        out = out.with_extra_args(&["-fno-crash-diagnostics"]);
    }
    Ok(out.argv())
}

/// The executor for the probes of the case's input: the chosen farm when the replay command
/// crashes the same way there on a node, else this machine (said through `progress`) and why.
fn farm_for(
    case: &Case,
    dir: &Path,
    opts: &Options,
    symbolizer: &Symbolizer,
    keep_valid: bool,
    progress: &mut dyn FnMut(&str),
) -> (Executor, Option<String>) {
    use crate::executor::Kind;
    if opts.executor.kind == Kind::Local {
        return (Executor::local(), None);
    }
    let name = opts.executor.kind.name();
    let verdict = case
        .classification
        .as_ref()
        .and_then(crate::case::classification::parse_section)
        .map(|c| c.verdict);
    let cc1 = CompilerCommand::from_argv(&case.replay_command).is_some_and(|c| c.is_cc1());
    let why = match crate::executor::must_stay_local(
        verdict.as_deref(),
        !case.emulator.is_empty(),
        cc1,
    ) {
        Some(why) => why,
        None => match Executor::new(&opts.executor, &case.replay_command[0]) {
            Err(e) => e.to_string(),
            Ok(exe) => {
                let argv = crate::case::emulated(&case.emulator, &case.replay_command);
                let job = Job {
                    argv: &argv,
                    cwd: dir,
                    timeout: Duration::from_secs(600),
                    symbolize: false,
                    tmpdir: None,
                };
                let out = exe.run(&job, &|| false);
                let same = out.as_ref().is_ok_and(|o| {
                    judge(o, &Family::of(case), symbolizer, keep_valid) == Outcome::SameCrash
                });
                if same && exe.summary().tests_remote > 0 {
                    progress(&format!("testing on the {name} farm (the crash travels)"));
                    return (exe, None);
                }
                if same {
                    format!("the {name} client compiled the test on this machine, not on a node")
                } else {
                    format!("the case's input does not crash the same way on the {name} farm")
                }
            }
        },
    };
    progress(&format!(
        "not using the {name} farm: {why}; testing locally"
    ));
    (Executor::local(), Some(why))
}

/// Rechecks what `flags` found on the original command, in its own folder, when icepick
/// preprocessed the input itself (the minimal command must hold on what the user ran too).
fn recheck_on_original(case: &Case, on_case: &Runner<'_, '_>, flags: &mut Flags) {
    let cwd = PathBuf::from(&case.cwd);
    let local = Executor::local();
    let on_original = Runner {
        cwd: &cwd,
        label: "original command, ",
        outputs_in_scratch: true,
        executor: &local,
        limit: Cell::new(None),
        batches: Cell::new(0),
        ..*on_case
    };
    let oracle = |cands: &[Vec<String>]| on_original.run(cands);
    let mut t = Tester::new(&oracle);
    let base = original_base(case);
    original::recheck(flags, base.as_deref().map_err(Clone::clone), &mut t);
    flags.compiler_runs += t.runs();
}

/// Runs `icepick flags` on the case in `dir`: analyses, saves `flags` into `case.json`, and
/// returns the section. `progress` gets one line per batch.
pub fn flags_for_case(
    dir: &Path,
    opts: &Options,
    progress: &mut dyn FnMut(&str),
) -> Result<Flags, FlagsError> {
    let started = Instant::now();
    let (mut case, _lock) = Case::load_for_writing(dir)?;
    let symbolizer = Symbolizer::new(case.library_dirs());
    let keep_valid = case.crash.source_errors == 0 && !opts.allow_invalid;
    let progress = RefCell::new(progress);
    let (emulator, signature) = (case.emulator.clone(), case.signature.clone());
    let family = Family {
        crashes: case.family(),
        signature: &signature,
    };
    let (executor, refused) = farm_for(&case, dir, opts, &symbolizer, keep_valid, &mut |m| {
        (progress.borrow_mut())(m)
    });
    let mut on_case = Runner {
        cwd: dir,
        emulator: &emulator,
        family: &family,
        symbolizer: &symbolizer,
        keep_valid,
        opts,
        executor: &executor,
        symbolize: false,
        limit: Cell::new(None),
        label: "",
        outputs_in_scratch: false,
        batches: Cell::new(0),
        progress: &progress,
    };
    let (mut flags, base) = {
        let oracle = |c: &[Vec<String>]| on_case.run(c);
        let mut tester = Tester::new(&oracle);
        let flags = analyse(&case.replay_command, &mut tester);
        let base = if flags.reproduced {
            None
        } else {
            tester.known(&case.replay_command)
        };
        (flags, base)
    };
    if matches!(base, Some(Outcome::OtherCrash | Outcome::SameCrashCoarse)) {
        // Another signature: a compiler with debug info names inlined frames only through its
        // own symbolizer (no crash, or a timeout, it cannot change).
        on_case.symbolize = true;
        let runs = flags.compiler_runs;
        flags = analyse(&case.replay_command, &mut Tester::new(&|c| on_case.run(c)));
        flags.compiler_runs += runs;
    }
    flags.keep_valid = keep_valid;
    if preprocessed_by_icepick(&case) {
        recheck_on_original(&case, &on_case, &mut flags);
    }
    if opts.deadline.is_some_and(|d| Instant::now() >= d) {
        flags.mark_budget_cut();
    }
    flags.seconds = (started.elapsed().as_secs_f64() * 10.0).round() / 10.0;
    flags.jobs = opts.jobs;
    if opts.executor.kind != crate::executor::Kind::Local {
        flags.farm = Some(crate::executor::FarmSummary {
            requested: opts.executor.kind.name().into(),
            refused,
            ..executor.summary()
        });
    }
    case.flags = Some(serde_json::to_value(&flags).expect("the flags section serialises"));
    case.save(dir)?;
    Ok(flags)
}

#[cfg(test)]
mod coarse_tests {
    use super::*;

    /// The recorded X86 ISel crash against itself with its frames cut short (as a release
    /// build's stack differs at another -O): the same at the coarse grain, not exactly.
    #[test]
    fn a_truncated_stack_is_the_same_crash_at_the_coarse_grain() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus/x86-avx512-no-evex512");
        let stderr = std::fs::read_to_string(dir.join("stderr.txt")).unwrap();
        let exit = crash::ExitInfo {
            code: Some(70),
            signal: None,
        };
        let full = crash::parse(&stderr, exit).unwrap();
        let mut cut = full.clone();
        cut.frames.retain(|f| {
            !f.symbol
                .as_deref()
                .is_some_and(|s| s.contains("SelectCodeCommon"))
        });
        let (a, b) = (crash::signature(&full), crash::signature(&cut));
        assert_ne!(a.id, b.id);
        assert!(same_coarse(&a, &b));
        let mut other = b.clone();
        other.message = "Do not know how to scalarize".into();
        other.coarse_id = "x".into();
        assert!(!same_coarse(&a, &other));
    }
}
