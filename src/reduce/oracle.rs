//! What "the same crash" means for a candidate: one compiler run judged against the case's
//! signature, and — when the reduction keeps a crash-on-valid valid — against the count of
//! source errors clang printed before crashing (`crash::parse`'s `source_errors`).
//!
//! Also the flags added to test commands, and the argv rewriting that points the replay
//! command at a candidate file.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use super::fault::Faults;
use super::ReduceError;
use crate::case::Case;
use crate::command::CompilerCommand;
use crate::crash::family::Seen;
use crate::crash::{self, CrashFamily, Symbolizer};
use crate::exec::Status;
use crate::executor::{Choice, Executor, Job, Kind};

/// Flags added to every test command. For a reduction that may go invalid: more candidates
/// stay interesting when clang does not stop after 20 errors (a crash can come after many
/// errors: `docs/design/source-passes.md`), and warnings are noise. When validity is kept, an error
/// limit is pointless (every error rejects the candidate), so only `-w` stays; the final
/// check runs without it, so a warning that `-Werror` would promote cannot slip through.
pub(super) fn test_flags(cmd: &CompilerCommand, keep_valid: bool) -> Vec<String> {
    if cmd.is_gcc() || keep_valid {
        return vec!["-w".into()];
    }
    if cmd.is_cc1() {
        return vec!["-ferror-limit".into(), "0".into(), "-w".into()];
    }
    vec!["-ferror-limit=0".into(), "-w".into()]
}

/// `argv` with the argument naming `from` replaced by `to`, and `extra` inserted before it.
pub(super) fn retarget(argv: &[String], from: &str, to: &str, extra: &[String]) -> Vec<String> {
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

/// One run that crashed.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Judged {
    /// The crash has the case's signature.
    pub same: bool,
    /// `file:line:col: error:` lines clang printed before the crash.
    pub errors: u32,
    /// The first of them, for messages.
    pub first_error: Option<String>,
}

/// Judges compiler runs against the case's crash family.
pub(super) struct Oracle {
    pub case_dir: PathBuf,
    /// Which crashes are the case's.
    pub family: CrashFamily,
    pub symbolizer: Symbolizer,
    /// The case's emulator, put in front of every run.
    pub emulator: Vec<String>,
    /// Candidates must crash with zero source errors.
    pub keep_valid: bool,
    /// Where candidate tests run (`--executor`); the final checks run here ([`Oracle::judge_local`]).
    pub executor: Arc<Executor>,
    /// The compiler symbolizes its own stack dumps ([`Job::symbolize`]): only when the start
    /// reproduces with it and not without.
    pub symbolize: bool,
    /// Where a run that could not start is recorded: it is no verdict on the candidate.
    pub faults: Arc<Faults>,
}

impl Oracle {
    /// [`Oracle::judge_on`] this machine, whatever the executor: the checks of the start and
    /// of the result say what the user's own replay command does.
    pub fn judge_local(
        &self,
        argv: &[String],
        timeout: Duration,
        cancel: &(dyn Fn() -> bool + Sync),
    ) -> Option<Judged> {
        self.judge_on(&Executor::local(), argv, None, timeout, cancel)
    }

    /// Runs `argv` in the case directory through `executor`, the compiler's TMPDIR `tmpdir`
    /// when given; `None` when it did not crash (or timed out, was cancelled). A run that
    /// could not start is `None` too, and a fault ([`Faults`]) that stops the reduction.
    pub fn judge_on(
        &self,
        executor: &Executor,
        argv: &[String],
        tmpdir: Option<&std::path::Path>,
        timeout: Duration,
        cancel: &(dyn Fn() -> bool + Sync),
    ) -> Option<Judged> {
        self.try_judge_on(executor, argv, tmpdir, timeout, cancel)
            .unwrap_or_else(|e| {
                self.faults.record(e);
                None
            })
    }

    /// [`Oracle::judge_on`], a run that could not start being `Err` instead of a fault.
    pub fn try_judge_on(
        &self,
        executor: &Executor,
        argv: &[String],
        tmpdir: Option<&std::path::Path>,
        timeout: Duration,
        cancel: &(dyn Fn() -> bool + Sync),
    ) -> Result<Option<Judged>, ReduceError> {
        let argv = crate::case::emulated(&self.emulator, argv);
        let job = Job {
            argv: &argv,
            cwd: &self.case_dir,
            timeout,
            symbolize: self.symbolize,
            tmpdir,
        };
        let out = executor.run(&job, cancel)?;
        self.judged(&out)
    }

    /// What one finished run shows: `None` when it did not crash (or timed out, was
    /// cancelled); `Err` when the compiler never got to compiling ([`cannot_start`]).
    fn judged(&self, out: &crate::exec::Output) -> Result<Option<Judged>, ReduceError> {
        if matches!(out.status, Status::TimedOut | Status::Cancelled) {
            return Ok(None);
        }
        let stderr = String::from_utf8_lossy(&out.stderr);
        let Some(mut c) = crash::parse(&stderr, crate::capture::exit_info(out.status)) else {
            return match cannot_start(&stderr) {
                Some(line) => Err(ReduceError::CompilerCannotStart(line)),
                None => Ok(None),
            };
        };
        self.symbolizer.symbolize(&mut c);
        let signature = crash::signature(&c);
        Ok(Some(Judged {
            same: self.family.contains(&Seen::new(&c, &signature)),
            errors: c.source_errors,
            first_error: stderr
                .lines()
                .find(|l| crash::is_source_error(l))
                .map(|l| l.chars().take(300).collect()),
        }))
    }

    /// True when `j` counts as the case's crash: its signature, and no source error when
    /// validity is kept.
    pub fn accepts(&self, j: &Option<Judged>) -> bool {
        matches!(j, Some(j) if j.same && (!self.keep_valid || j.errors == 0))
    }
}

/// The line of `stderr` that says the compiler could not even start, from the dynamic
/// loader: `clang-19: error while loading shared libraries: libLLVM.so.19.1: failed to map
/// segment from shared object` is what a memory limit (`ulimit -v`) or a broken install
/// gives. No candidate can cause it, so it is a fault of the machine, not "no crash". (An
/// out-of-memory error once compiling is not here: a candidate can cause that.)
pub(super) fn cannot_start(stderr: &str) -> Option<String> {
    stderr
        .lines()
        .find(|l| l.contains("error while loading shared libraries"))
        .map(|l| crate::exec::one_line(l, crate::exec::ONE_LINE_MAX))
}

/// The executor for a reduction's candidate tests: the chosen farm when the crash travels,
/// else this machine and the one line that says why (`refused`). `on_farm` runs the start
/// through a farm executor; the crash travels when that run is accepted and it ran on a node
/// (a farm whose client compiled it locally proves nothing).
pub(super) fn choose_executor(
    choice: &Choice,
    case: &Case,
    replay: &CompilerCommand,
    on_farm: &dyn Fn(&Executor) -> Option<Judged>,
    accepts: &dyn Fn(&Option<Judged>) -> bool,
) -> (Arc<Executor>, Option<String>) {
    if choice.kind == Kind::Local {
        return (Arc::new(Executor::local()), None);
    }
    let verdict = case
        .classification
        .as_ref()
        .and_then(crate::case::classification::parse_section)
        .map(|c| c.verdict);
    let refuse = |why: String| (Arc::new(Executor::local()), Some(why));
    if let Some(why) = crate::executor::must_stay_local(
        verdict.as_deref(),
        !case.emulator.is_empty(),
        replay.is_cc1(),
    ) {
        return refuse(why);
    }
    let exe = match Executor::new(choice, &replay.argv()[0]) {
        Ok(e) => e,
        Err(e) => return refuse(e.to_string()),
    };
    let j = on_farm(&exe);
    let s = exe.summary();
    if !accepts(&j) {
        return refuse(format!(
            "the case's input does not crash the same way on the {} farm ({})",
            choice.kind.name(),
            match &j {
                Some(j) if !j.same => "another crash".to_string(),
                Some(j) => format!("{} source error(s) before the crash", j.errors),
                None => "no crash".to_string(),
            }
        ));
    }
    if s.tests_remote == 0 {
        return refuse(format!(
            "the {} client compiled the test on this machine, not on a node",
            choice.kind.name()
        ));
    }
    (Arc::new(exe), None)
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
        assert_eq!(test_flags(&driver, false), ["-ferror-limit=0", "-w"]);
        let cc1 =
            CompilerCommand::from_argv(&["clang".into(), "-cc1".into(), "f.c".into()]).unwrap();
        assert_eq!(test_flags(&cc1, false), ["-ferror-limit", "0", "-w"]);
    }

    #[test]
    fn keeping_validity_drops_the_error_limit() {
        let driver =
            CompilerCommand::from_argv(&["clang".into(), "-c".into(), "f.i".into()]).unwrap();
        assert_eq!(test_flags(&driver, true), ["-w"]);
        let cc1 =
            CompilerCommand::from_argv(&["clang".into(), "-cc1".into(), "f.c".into()]).unwrap();
        assert_eq!(test_flags(&cc1, true), ["-w"]);
    }

    #[test]
    fn a_compiler_the_loader_cannot_start_is_a_fault_not_no_crash() {
        let oracle = Oracle {
            case_dir: PathBuf::from("."),
            family: crate::case::tests::sample_case().family(),
            symbolizer: Symbolizer::new(Vec::new()),
            emulator: Vec::new(),
            keep_valid: true,
            executor: Arc::new(Executor::local()),
            symbolize: false,
            faults: Arc::new(Faults::new(Default::default())),
        };
        let out = |stderr: &str, code| crate::exec::Output {
            status: Status::Exited(code),
            stdout: Vec::new(),
            stderr: stderr.as_bytes().to_vec(),
            stdout_dropped: 0,
            stderr_dropped: 0,
            elapsed: Duration::ZERO,
        };
        // What clang-19 prints under `ulimit -v 100000`.
        let loader = "clang-19: error while loading shared libraries: libLLVM.so.19.1: failed to map segment from shared object\n";
        match oracle.judged(&out(loader, 127)) {
            Err(ReduceError::CompilerCannotStart(line)) => assert!(line.contains("libLLVM")),
            other => panic!("{other:?}"),
        }
        // Ordinary errors are no crash; an out-of-memory a candidate may cause is its own
        // crash, judged as any other, never a fault.
        let errors = "f.c:1:1: error: unknown type name 'x'\n1 error generated.\n";
        assert!(matches!(oracle.judged(&out(errors, 1)), Ok(None)));
        let oom = "LLVM ERROR: out of memory\nAllocation failed\n";
        assert!(oracle.judged(&out(oom, 1)).is_ok());
    }

    #[test]
    fn the_valid_oracle_rejects_a_same_signature_crash_with_errors() {
        let oracle = |keep_valid| Oracle {
            case_dir: PathBuf::from("."),
            family: crate::case::tests::sample_case().family(),
            symbolizer: Symbolizer::new(Vec::new()),
            emulator: Vec::new(),
            keep_valid,
            executor: Arc::new(Executor::local()),
            symbolize: false,
            faults: Arc::new(Faults::new(Default::default())),
        };
        let with_errors = Some(Judged {
            same: true,
            errors: 2,
            first_error: None,
        });
        let clean = Some(Judged {
            same: true,
            errors: 0,
            first_error: None,
        });
        let other = Some(Judged {
            same: false,
            errors: 0,
            first_error: None,
        });
        assert!(!oracle(true).accepts(&with_errors));
        assert!(oracle(false).accepts(&with_errors));
        assert!(oracle(true).accepts(&clean));
        assert!(!oracle(true).accepts(&other));
        assert!(!oracle(false).accepts(&None));
    }
}
