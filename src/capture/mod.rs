//! The capture stage: run the failing compile, decide whether it crashed, make the crash
//! portable (preprocessed input of the crashing job) and verified (same signature on
//! replay), and write the case directory every later stage reads.
//!
//! Compiler runs, in order: the original command; `--version`; a `-fno-integrated-cc1` rerun
//! when the in-process cc1 died without a stack dump; `--reruns` reruns to check
//! determinism; `-###` for offload compiles, and each job alone when the output does not name
//! the crashing one ([`jobs`]); `-###` once more for the crashing job's cc1 line and triple
//! ([`bug_info`]); then per attempted preprocessing mode one `-E` and one replay.
//! Only the original command may write clang's reproducer files; they move into the case
//! ([`reproducer`]). No run writes into the build's directory, the first included: each
//! writes its output, and what it writes beside it, into a fresh scratch directory
//! ([`CompilerCommand::without_build_outputs`]); the replay the case keeps writes nowhere.

mod bug_info;
mod embed;
mod jobs;
mod link;
pub mod link_sources;
mod lto;
mod preprocess;
mod reproducer;
mod reruns;
mod sources;
mod tool;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::case::{
    CaptureStats, Case, CaseError, CaseStatus, Compiler, JobInfo, NewCaseDir, Preprocessing,
    Reproducibility, SCHEMA_VERSION,
};
use crate::command::{CompilerCommand, JobSelector, Sink};
use crate::crash::family::Seen;
use crate::crash::{self, Crash, CrashFamily, ExitInfo, Signature, Symbolizer};
use crate::exec::{self, Cmd, ExecError, Output, Status};

pub use bug_info::BugInfo;
use jobs::{find_job, info_label};
pub use lto::is_link_output;
pub use reproducer::REPRODUCER_DIR;
use reproducer::{move_reproducer_files, no_crash_diagnostics};
pub use reruns::stack_of_frameless;
use reruns::{first_crash, in_family, rerun, retry_out_of_process};
pub use sources::{command_from_compdb, command_from_reproducer, FoundCommand, SourceError};

/// What to capture and how.
#[derive(Debug, Clone)]
pub struct Request {
    /// The compile command, program first.
    pub argv: Vec<String>,
    /// Where it runs.
    pub cwd: PathBuf,
    /// Where the case goes (`None`: `./icepick-<signature>` under `cwd_for_case`).
    pub out: Option<PathBuf>,
    /// Directory under which a default-named case is created.
    pub cases_parent: PathBuf,
    /// Per-run time limit.
    pub timeout: Duration,
    /// Reruns of the original command to check that the crash is deterministic.
    pub reruns: u32,
    /// The input is already preprocessed (a clang reproducer): copy it, do not run `-E`.
    pub given_input: Option<PathBuf>,
    /// A user-mode emulator to run the compiler under, program first (`qemu-riscv64 -cpu
    /// rv64,v=true`): for a compiler built for another machine. Empty: run it directly.
    pub emulator: Vec<String>,
}

/// How capture ended, when icepick itself did not fail.
#[derive(Debug)]
pub enum Outcome {
    /// A case was written. Its `status` says whether it is fully verified.
    Case { dir: PathBuf, case: Box<Case> },
    /// The command did not crash.
    NoCrash { reason: String, stderr: String },
    /// The command timed out every time: not a crash.
    TimedOut { seconds: u64 },
}

/// Why capture could not be done.
#[derive(Debug, thiserror::Error)]
pub enum CaptureError {
    #[error("compiler `{0}` not found (not on PATH and not a path to an executable); install it or give its full path")]
    CompilerNotFound(String),
    #[error(
        "emulator `{0}` not found; install it (qemu-user for qemu-riscv64) or give its full path"
    )]
    EmulatorNotFound(String),
    #[error("--emulator {0:?} is not a command (empty, or unbalanced quotes)")]
    BadEmulator(String),
    #[error("no input file in the command; give the compile command that crashed, e.g. `clang -c file.c`")]
    NoInput,
    #[error("input file {0} cannot be read: {1}")]
    UnreadableInput(PathBuf, std::io::Error),
    #[error("the link crashed, but its crash could not be moved onto IR: {0}")]
    LinkNotReproduced(String),
    #[error(transparent)]
    Exec(#[from] ExecError),
    #[error(transparent)]
    Case(#[from] CaseError),
}

impl crate::error::ExitCoded for CaptureError {
    fn exit_code(&self) -> u8 {
        match self {
            CaptureError::CompilerNotFound(_)
            | CaptureError::EmulatorNotFound(_)
            | CaptureError::BadEmulator(_)
            | CaptureError::NoInput
            | CaptureError::UnreadableInput(..) => crate::error::USAGE,
            CaptureError::Case(e) => crate::error::ExitCoded::exit_code(e),
            CaptureError::Exec(_) => crate::error::FAILED,
            CaptureError::LinkNotReproduced(_) => crate::error::NOT_REPRODUCED,
        }
    }
}

/// One compiler run, parsed.
struct Run {
    output: Output,
    crash: Option<Crash>,
    signature: Option<Signature>,
}

/// Runs compiler commands for one capture and counts them.
struct Runner {
    cwd: PathBuf,
    emulator: Vec<String>,
    timeout: Duration,
    runs: u32,
    /// Runs of the command that did not crash before the first that did ([`first_crash`]):
    /// they count against the crash's rate.
    misses_before_crash: u32,
    symbolizer: Symbolizer,
}

impl Runner {
    /// A runner for `resolved` (the compiler's file, whose libraries name its frames), run in
    /// `cwd` behind `emulator`.
    fn new(cwd: &Path, emulator: &[String], timeout: Duration, resolved: &Path) -> Self {
        Runner {
            cwd: cwd.to_path_buf(),
            emulator: emulator.to_vec(),
            timeout,
            runs: 0,
            misses_before_crash: 0,
            symbolizer: Symbolizer::new(library_dirs_emulated(resolved, emulator)),
        }
    }

    fn run(&mut self, cmd: &CompilerCommand, cwd: Option<&Path>) -> Result<Run, ExecError> {
        self.run_with_tmpdir(cmd, cwd, None)
    }

    /// [`Self::run`] with `TMPDIR` set: a link that compiles sources keeps their objects
    /// there, and ThinLTO writes their save-temps beside them.
    fn run_with_tmpdir(
        &mut self,
        cmd: &CompilerCommand,
        cwd: Option<&Path>,
        tmpdir: Option<&Path>,
    ) -> Result<Run, ExecError> {
        self.runs += 1;
        let argv = crate::case::emulated(&self.emulator, &cmd.argv());
        let mut c = Cmd::new(&argv[0])
            .args(&argv[1..])
            .cwd(cwd.unwrap_or(&self.cwd))
            .timeout(self.timeout);
        if let Some(t) = tmpdir {
            c = c.env("TMPDIR", t);
        }
        let output = exec::run(&c)?;
        let (crash, signature) = match output.status {
            Status::TimedOut | Status::Cancelled => (None, None),
            _ => match crash::parse(&output.stderr_text(), output.status.exit_info()) {
                Some(mut crash) => {
                    self.symbolizer.symbolize(&mut crash);
                    let sig = crash::signature(&crash);
                    (Some(crash), Some(sig))
                }
                None => (None, None),
            },
        };
        Ok(Run {
            output,
            crash,
            signature,
        })
    }

    /// Runs `cmd` (a build's command, or a replay) so that it writes nothing where the
    /// build's command would: its output and the files it writes beside it go into a fresh
    /// scratch directory, removed after the run ([`CompilerCommand::without_build_outputs`]).
    fn run_sandboxed(
        &mut self,
        cmd: &CompilerCommand,
        cwd: Option<&Path>,
    ) -> Result<Run, ExecError> {
        let dir = scratch_for(&cmd.program)?;
        self.run(&cmd.without_build_outputs(&Sink::Dir(dir.path())), cwd)
    }

    /// Runs `cmd` sandboxed up to the family's [`CrashFamily::tries`] times, until a run
    /// crashes as the family does; that run, else the last.
    fn run_in_family(
        &mut self,
        cmd: &CompilerCommand,
        cwd: Option<&Path>,
        family: &CrashFamily,
    ) -> Result<Run, ExecError> {
        let mut last = self.run_sandboxed(cmd, cwd)?;
        for _ in 1..family.tries() {
            if in_family(family, &last) {
                break;
            }
            last = self.run_sandboxed(cmd, cwd)?;
        }
        Ok(last)
    }

    /// What an output of a candidate run says against the case's `signature`.
    fn outcome(&self, output: &Output, signature: &Signature) -> crate::case::flags::Outcome {
        use crate::case::flags::Outcome;
        match output.status {
            Status::TimedOut => return Outcome::Timeout,
            Status::Cancelled => return Outcome::Error,
            _ => {}
        }
        match crash::parse(&output.stderr_text(), output.status.exit_info()) {
            Some(mut c) => {
                self.symbolizer.symbolize(&mut c);
                let s = crash::signature(&c);
                if s.id == signature.id {
                    Outcome::SameCrash
                } else if s.coarse_id == signature.coarse_id {
                    Outcome::SameCrashCoarse
                } else {
                    Outcome::OtherCrash
                }
            }
            None if output.status == Status::Exited(0) => Outcome::NoCrash,
            None => Outcome::Error,
        }
    }

    /// Runs `cmd -###` for its listing of the jobs, as if it wrote nowhere: `-###` compiles
    /// nothing, but the driver still writes its own warnings into the build's
    /// `--serialize-diagnostics` file. The cc1 lines it prints (one goes into the bug
    /// report) then name `/dev/null`, the same in every capture, not a scratch path.
    fn run_listing(&mut self, cmd: &CompilerCommand) -> Result<Run, ExecError> {
        let listing = cmd
            .without_build_outputs(&Sink::Nowhere)
            .with_extra_args(&["-###"]);
        self.run(&listing, None)
    }
}

/// A fresh scratch directory for one run of `program`.
fn scratch_for(program: &str) -> Result<tempfile::TempDir, ExecError> {
    exec::fresh_scratch("run-").map_err(|source| ExecError::Spawn {
        program: program.to_string(),
        source,
    })
}

/// The exit status as the crash parser takes it ([`Status::exit_info`], in the process
/// layer; this name stays for the reduce stage's oracle, which calls it here).
pub fn exit_info(status: Status) -> ExitInfo {
    status.exit_info()
}

/// Captures a crash into a case directory. `progress` receives one-line status messages.
pub fn capture(req: &Request, progress: &mut dyn FnMut(&str)) -> Result<Outcome, CaptureError> {
    let started = Instant::now();
    let (original, found, resolved) = check_request(req)?;
    let mut runner = Runner::new(&req.cwd, &req.emulator, req.timeout, &resolved);
    // Replays use the compiler found, by the name it was called (clang++ vs clang matters).
    let command = CompilerCommand {
        program: found.to_string_lossy().into_owned(),
        args: original.args.clone(),
    };

    progress(&format!("running {}", original.to_shell()));
    // Even the first run leaves the build's directory as it was: it writes its output and
    // side outputs into scratch (clang's reproducer files go to the temp directory, and
    // into the case from there).
    let first = first_crash(&mut runner, &command, progress)?;
    let (crash, signature) = match (first.crash, first.signature) {
        (Some(c), Some(s)) => (c, s),
        _ if first.output.status == Status::TimedOut => {
            return Ok(Outcome::TimedOut {
                seconds: req.timeout.as_secs(),
            })
        }
        _ => {
            return Ok(Outcome::NoCrash {
                reason: no_crash_reason(&first.output, runner.runs),
                stderr: first.output.stderr_text(),
            })
        }
    };
    let is_link = link::is_link_crash(&command, &first.output.stderr, &crash);
    if is_link || command.llvm_tool().is_some() {
        progress(&format!(
            "crashed: {} (signature {})",
            crate::crash::kind_words(crash.kind),
            signature.id
        ));
        let found_tool = tool::Found {
            command,
            found: &found,
            resolved: &resolved,
            crash,
            signature,
            stderr: first.output.stderr,
            started,
            link: None,
        };
        if is_link {
            return link::capture_link(req, &mut runner, found_tool, progress);
        }
        return tool::capture_tool(req, &mut runner, found_tool, progress);
    }
    let seen = Observed {
        reproducer_files: crash.reproducer_files.clone(),
        command,
        crash,
        signature,
        stderr: first.output.stderr,
    };
    let o = observe(req, &mut runner, seen, progress)?;
    record(req, &mut runner, o, (&found, &resolved), started, progress)
}

/// A compile's crash as known so far: the command that shows it, the crash, and its stderr.
struct Observed {
    /// The reproducer files clang wrote in the user's own run (reruns write none).
    reproducer_files: Vec<String>,
    command: CompilerCommand,
    crash: Crash,
    signature: Signature,
    stderr: Vec<u8>,
}

/// What a compile's crash is, found by running it again: rerun out of process when clang
/// printed no stack, how often it reproduces, which job crashed and the facts a bug report
/// needs.
struct Observation {
    seen: Observed,
    added_flags: Vec<String>,
    version: String,
    replay_base: CompilerCommand,
    reruns: Vec<Run>,
    reproducibility: Reproducibility,
    family: CrashFamily,
    job: CrashingJob,
    bug: BugInfo,
}

fn observe(
    req: &Request,
    runner: &mut Runner,
    mut seen: Observed,
    progress: &mut dyn FnMut(&str),
) -> Result<Observation, CaptureError> {
    let mut added_flags = Vec::new();
    // A stack overflow kills clang's in-process crash handler: no stack dump at all. Out of
    // process, the driver survives and reports the cc1 crash properly.
    let is_clang = !seen.command.is_gcc() && seen.crash.family != crash::Family::Gcc;
    if is_clang {
        if let Some(o) = retry_out_of_process(runner, &seen.command, &seen.crash, progress)? {
            (seen.crash, seen.signature, seen.stderr, seen.command) =
                (o.crash, o.signature, o.stderr, o.command);
            added_flags.push("-fno-integrated-cc1".to_string());
        }
    }
    progress(&format!(
        "crashed: {} (signature {})",
        crate::crash::kind_words(seen.crash.kind),
        seen.signature.id
    ));
    let version = compiler_version(runner, &seen.command)?;
    // Reruns: later stages rely on "same signature" meaning "same crash". Every rerun, here
    // and in the later stages (they run `replay_command`, derived from this), carries
    // `-fno-crash-diagnostics`: only the user's own run leaves clang's reproducer files.
    let replay_base = if is_clang {
        no_crash_diagnostics(&seen.command)
    } else {
        seen.command.clone()
    };
    let (reruns, reproducibility, family) = rerun(
        runner,
        &replay_base,
        req.reruns,
        (&seen.crash, &seen.signature),
        progress,
    )?;
    let job = crashing_job(
        runner,
        &replay_base,
        &mut seen.crash,
        &mut seen.signature,
        progress,
    )?;
    let family = if job.crash_from_job {
        family.seen_as(&Seen::new(&seen.crash, &seen.signature))
    } else {
        family
    };
    let crash_stderr = match &job.stderr {
        Some(e) if job.crash_from_job => e,
        _ => &seen.stderr,
    };
    let bug = bug_report_facts(
        runner,
        &seen.command,
        &replay_base,
        crash_stderr,
        &job.sel,
        is_clang,
    )?;
    Ok(Observation {
        seen,
        added_flags,
        version,
        replay_base,
        reruns,
        reproducibility,
        family,
        job,
        bug,
    })
}

/// Writes the case directory: the stderr of every run as evidence, clang's own reproducer
/// files, the preprocessed input checked to keep the crash, and `case.json`.
fn record(
    req: &Request,
    runner: &mut Runner,
    o: Observation,
    (found, resolved): (&Path, &Path),
    started: Instant,
    progress: &mut dyn FnMut(&str),
) -> Result<Outcome, CaptureError> {
    let Observation { mut seen, .. } = o;
    let case_dir = NewCaseDir::start(case_parent(req))?;
    let _unfinished = exec::remove_at_exit(case_dir.path()); // Ctrl-C leaves no half case
    case_dir.write("original.stderr", &seen.stderr)?;
    if let Some(stderr) = &o.job.stderr {
        case_dir.write("logs/job.stderr", stderr)?;
    }
    // Clang's own reproducer pair from the user's run is evidence: into the case with it.
    seen.crash.reproducer_files =
        move_reproducer_files(&seen.reproducer_files, started, case_dir.path());
    for (i, r) in o.reruns.iter().enumerate() {
        case_dir.write(&format!("logs/rerun-{}.stderr", i + 1), &r.output.stderr)?;
    }
    // Preprocess the crashing job and check that the preprocessed input keeps the crash.
    let (input_name, preprocessing, replay) = preprocess::preprocess_and_replay(
        &preprocess::Job {
            req,
            command: &seen.command,
            replay_base: &o.replay_base,
            job_sel: &o.job.sel,
            signature: &seen.signature,
            family: &o.family,
        },
        runner,
        &case_dir,
        progress,
    )?;
    finish(
        req,
        case_dir,
        Parts {
            command: seen.command.argv(),
            found,
            resolved,
            version: o.version,
            crash: seen.crash,
            signature: seen.signature,
            job: o.job.job,
            input_name,
            replay,
            preprocessing,
            reproducibility: o.reproducibility,
            family: o.family,
            runs: runner.runs,
            started,
            added_flags: o.added_flags,
            bug: o.bug,
            link: None,
        },
    )
}

/// The job of the compile that crashed, and what running it alone showed.
struct CrashingJob {
    sel: JobSelector,
    job: JobInfo,
    /// The job's own stderr, when it was run alone.
    stderr: Option<Vec<u8>>,
    /// The crash is now the job's own run's (the whole command printed no stack).
    crash_from_job: bool,
}

/// Which job crashed. A multi-job compile whose device cc1 died in `report_fatal_error`
/// prints no stack; the job alone (one job runs in process, under clang's crash handler)
/// prints the frames. The case is about that job from then on, so `crash` and `signature`
/// become its own.
fn crashing_job(
    runner: &mut Runner,
    replay_base: &CompilerCommand,
    crash: &mut Crash,
    signature: &mut Signature,
    progress: &mut dyn FnMut(&str),
) -> Result<CrashingJob, CaptureError> {
    let (sel, job, job_run) = find_job(runner, replay_base, crash, signature, progress)?;
    let mut crash_from_job = false;
    let stderr = job_run.map(|r| {
        if let (Some(c), Some(s)) = (r.crash, r.signature) {
            if crash.frames.is_empty() && !c.frames.is_empty() {
                crash_from_job = true;
                progress(&format!(
                    "job {} alone prints a stack dump: signature {} from here on",
                    info_label(&job),
                    s.id
                ));
                *crash = c;
                *signature = s;
            }
        }
        r.output.stderr
    });
    Ok(CrashingJob {
        sel,
        job,
        stderr,
        crash_from_job,
    })
}

/// What a bug report needs beyond the stack: the diagnostics before the crash (`stderr`, of
/// the run whose crash the case is about), the triple and the crashing job's cc1 line.
fn bug_report_facts(
    runner: &mut Runner,
    command: &CompilerCommand,
    replay_base: &CompilerCommand,
    stderr: &[u8],
    job_sel: &JobSelector,
    is_clang: bool,
) -> Result<crate::case::BugInfo, CaptureError> {
    let mut bug = bug_info::with_diagnostics(&String::from_utf8_lossy(stderr));
    if is_clang {
        if command.is_cc1() {
            bug_info::from_cc1(&mut bug, command);
        } else {
            let r = runner.run_listing(replay_base)?;
            bug_info::from_listing(&mut bug, &r.output.stderr_text(), job_sel);
        }
    }
    Ok(bug)
}

/// The request's command, the compiler it names as found on PATH and as resolved: errors
/// for a command with no input, an unreadable input, a missing compiler or emulator.
fn check_request(req: &Request) -> Result<(CompilerCommand, PathBuf, PathBuf), CaptureError> {
    let original = CompilerCommand::from_argv(&req.argv).ok_or(CaptureError::NoInput)?;
    let found = exec::which(&original.program, &req.cwd)
        .ok_or_else(|| CaptureError::CompilerNotFound(original.program.clone()))?;
    let inputs = original.inputs();
    let Some(first_input) = inputs.first() else {
        return Err(CaptureError::NoInput);
    };
    // A response file (`@objs.rsp`, as GN and Meson links name their objects) is read.
    let input_path = req
        .cwd
        .join(first_input.strip_prefix('@').unwrap_or(first_input));
    if *first_input != "-" {
        if let Err(e) = std::fs::File::open(&input_path) {
            return Err(CaptureError::UnreadableInput(input_path, e));
        }
    }
    let resolved = std::fs::canonicalize(&found).unwrap_or_else(|_| found.clone());
    if let Some(emu) = req.emulator.first() {
        if exec::which(emu, &req.cwd).is_none() {
            return Err(CaptureError::EmulatorNotFound(emu.clone()));
        }
    }
    Ok((original, found, resolved))
}

/// Everything `finish` needs to assemble the case.
struct Parts<'a> {
    command: Vec<String>,
    found: &'a Path,
    resolved: &'a Path,
    version: String,
    crash: Crash,
    signature: Signature,
    job: JobInfo,
    input_name: String,
    replay: Vec<String>,
    preprocessing: Preprocessing,
    reproducibility: Reproducibility,
    family: CrashFamily,
    runs: u32,
    started: Instant,
    added_flags: Vec<String>,
    bug: BugInfo,
    link: Option<crate::case::link::LinkInfo>,
}

fn finish(req: &Request, dir: NewCaseDir, p: Parts<'_>) -> Result<Outcome, CaptureError> {
    let (status, status_detail) = if p.family.runs > 1 && p.family.crashed <= 1 {
        (
            CaseStatus::Flaky,
            Some(format!(
                "the crash did not come back: none of {} reruns crashed",
                p.family.runs - 1
            )),
        )
    } else if p.preprocessing.status != "reproduced" {
        (
            CaseStatus::LostInPreprocessing,
            Some(format!(
                "the crash is lost in preprocessing: {}",
                p.preprocessing.detail.clone().unwrap_or_default()
            )),
        )
    } else {
        (CaseStatus::Captured, None)
    };
    let case = Case {
        schema_version: SCHEMA_VERSION,
        icepick_version: env!("CARGO_PKG_VERSION").to_string(),
        status,
        status_detail,
        command: p.command,
        cwd: req.cwd.to_string_lossy().into_owned(),
        emulator: req.emulator.clone(),
        host: serde_json::to_value(crate::host::probe()).ok(),
        compiler: Compiler {
            path: p.found.to_string_lossy().into_owned(),
            resolved_path: p.resolved.to_string_lossy().into_owned(),
            version: p.version,
        },
        crash: p.crash,
        signature: p.signature,
        job: p.job,
        input: p.input_name,
        replay_command: p.replay,
        preprocessing: p.preprocessing,
        reproducibility: p.reproducibility,
        family: Some(p.family),
        capture: CaptureStats {
            compiler_runs: p.runs,
            seconds: (p.started.elapsed().as_secs_f64() * 10.0).round() / 10.0,
            added_flags: p.added_flags,
        },
        bug_info: Some(p.bug),
        flags: None,
        reduction: None,
        classification: None,
        versions: None,
        ir: None,
        triage: None,
        link: p.link,
    };
    let dest = dir.finish(&case, req.out.as_deref())?;
    Ok(Outcome::Case {
        dir: dest,
        case: Box::new(case),
    })
}

/// The directory the new case is made in: `--out`'s parent, else the default place.
fn case_parent(req: &Request) -> &Path {
    req.out
        .as_deref()
        .and_then(Path::parent)
        .map_or(req.cases_parent.as_path(), |p| {
            if p.as_os_str().is_empty() {
                Path::new(".")
            } else {
                p
            }
        })
}

/// The replay of a command whose input was already preprocessed: the same command with the
/// input replaced, writing nothing.
fn given_replay(command: &CompilerCommand, input_name: &str) -> CompilerCommand {
    let mut c = command.without_build_outputs(&Sink::Nowhere);
    if let Some(&i) = c.input_indices().last() {
        c.args[i] = input_name.to_string();
    }
    c
}

pub use crate::case::{library_dirs, library_dirs_emulated};

fn compiler_version(runner: &mut Runner, command: &CompilerCommand) -> Result<String, ExecError> {
    let v = CompilerCommand {
        program: command.program.clone(),
        args: vec!["--version".into()],
    };
    let r = runner.run(&v, None)?;
    let text = String::from_utf8_lossy(&r.output.stdout).into_owned();
    Ok(version_line(&text))
}

/// The version line of `compiler --version`, for a crash whose output named no version (clang
/// prints it only with its crash diagnostics, which `-fno-crash-diagnostics` turns off): a
/// crash store counts the versions that hit a bucket by it. `None` when it cannot be run.
pub fn version_line_of(compiler: &Path) -> Option<String> {
    let cmd = Cmd::new(compiler)
        .args(["--version"])
        .timeout(Duration::from_secs(10));
    let out = exec::run(&cmd).ok()?;
    let line = version_line(&String::from_utf8_lossy(&out.stdout));
    (out.success() && line != "unknown").then_some(line)
}

/// The version line of a `--version` output (its first), and whether the build has assertions when a later
/// line says so (LLVM's tools print `Optimized build with assertions.` there; the report's
/// "release build, no assertions" note reads it).
fn version_line(text: &str) -> String {
    // Upstream builds of LLVM's tools start with a heading (`LLVM (http://llvm.org/):`),
    // their version on the next line.
    let mut lines = text.lines().map(str::trim).filter(|l| !l.is_empty());
    let first = match lines.next() {
        Some(h) if h.ends_with(':') => lines.next().unwrap_or(h),
        Some(l) => l,
        None => "unknown",
    }
    .to_string();
    if text.lines().skip(1).any(|l| l.contains("with assertions")) {
        format!("{first}, with assertions")
    } else {
        first
    }
}

fn first_line(out: &Output) -> String {
    let text = out.stderr_text();
    let line = text
        .lines()
        .find(|l| l.contains("error"))
        .or_else(|| text.lines().next())
        .unwrap_or("");
    let status = match out.status {
        Status::Exited(c) => format!("exit {c}"),
        Status::Signaled(s) => format!("signal {s}"),
        Status::TimedOut => "timed out".into(),
        Status::Cancelled => "cancelled".into(),
    };
    if line.is_empty() {
        status
    } else {
        format!("{status}: {}", exec::one_line(line, exec::ONE_LINE_MAX))
    }
}

fn no_crash_reason(out: &Output, runs: u32) -> String {
    let times = if runs > 1 {
        format!(" in each of {runs} runs")
    } else {
        String::new()
    };
    match out.status {
        Status::Exited(0) => format!("the command compiled successfully{times}"),
        _ => format!(
            "the command failed with ordinary diagnostics{times} ({})",
            first_line(out)
        ),
    }
}

#[cfg(test)]
mod version_tests {
    use super::version_line;

    #[test]
    fn an_assertions_build_says_so_after_its_first_line() {
        assert_eq!(
            version_line("Debian clang version 19.1.7 (3~deb12u1)\nTarget: x86_64-pc-linux-gnu\n"),
            "Debian clang version 19.1.7 (3~deb12u1)"
        );
        assert_eq!(
            version_line("LLVM (http://llvm.org/):\n  LLVM version 20.0.0git\n  Optimized build with assertions.\n"),
            "LLVM version 20.0.0git, with assertions"
        );
        assert_eq!(version_line(""), "unknown");
    }
}
