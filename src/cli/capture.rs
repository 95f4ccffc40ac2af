//! `icepick capture`: arguments and output of the capture stage.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Context as _;
use clap::Args;

use super::absolutize;
use crate::capture::{self, Outcome, Request};
use crate::case::{Case, CaseStatus};
use crate::error;

#[derive(Debug, Args)]
pub struct CaptureArgs {
    /// Case directory to create (must not exist); default ./icepick-<signature>.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Print the case as JSON on stdout, and nothing else: one object (`triage` prints one
    /// line when capture ends and one when it is done; the last is the case).
    #[arg(long)]
    pub json: bool,
    /// Time limit for each compiler run, in seconds.
    #[arg(long, default_value_t = 300, value_name = "SECS", value_parser = crate::cli::secs_arg)]
    pub timeout: u64,
    /// Reruns of the original command to check the crash is deterministic (0 to 100).
    #[arg(long, default_value_t = 2, value_name = "N", value_parser = crate::cli::reruns_arg)]
    pub reruns: u32,
    /// Take the command from clang's crash reproducer script (the .sh beside the
    /// preprocessed file it wrote).
    #[arg(long, value_name = "CRASH.sh", conflicts_with_all = ["compdb", "command"])]
    pub from_reproducer: Option<PathBuf>,
    /// Take the command from a compilation database; needs --file.
    #[arg(
        long,
        value_name = "compile_commands.json",
        requires = "file",
        conflicts_with = "command"
    )]
    pub compdb: Option<PathBuf>,
    /// The source file whose entry in --compdb to use.
    #[arg(long, value_name = "SRC", requires = "compdb")]
    pub file: Option<PathBuf>,
    /// Run the compiler under this user-mode emulator (words split like a shell would, never
    /// run through one), e.g. "qemu-riscv64 -L /srv/rv64 -cpu rv64,v=true" for a riscv64
    /// compiler on this host; recorded in the case and used by every later stage.
    #[arg(long, value_name = "\"PROGRAM ARGS…\"")]
    pub emulator: Option<String>,
    /// The compile command that crashed: -- <compiler> <args…>
    #[arg(last = true, value_name = "COMMAND")]
    pub command: Vec<String>,
}

/// Runs `icepick capture`.
pub fn run(args: CaptureArgs) -> anyhow::Result<u8> {
    let outcome = capture_from_args(&args)?;
    print_outcome(&args, outcome, false).map(|(code, _)| code)
}

/// Runs the capture stage as the arguments say.
pub(crate) fn capture_from_args(args: &CaptureArgs) -> anyhow::Result<Outcome> {
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    let (argv, run_dir, given_input) = if let Some(script) = &args.from_reproducer {
        let f = capture::command_from_reproducer(script)?;
        (
            f.argv,
            absolutize(&cwd, &f.cwd),
            f.preprocessed_input.map(|p| absolutize(&cwd, &p)),
        )
    } else if let (Some(db), Some(file)) = (&args.compdb, &args.file) {
        let f = capture::command_from_compdb(db, file, &cwd)?;
        (f.argv, absolutize(&cwd, &f.cwd), None)
    } else if !args.command.is_empty() {
        (args.command.clone(), cwd.clone(), None)
    } else {
        anyhow::bail!(capture::CaptureError::NoInput);
    };
    let out = args.out.as_ref().map(|o| absolutize(&cwd, o));
    if let Some(out) = &out {
        refuse_taken_out(out)?;
    }
    let req = Request {
        argv,
        cwd: run_dir,
        out,
        cases_parent: cwd.clone(),
        timeout: Duration::from_secs(args.timeout.max(1)),
        reruns: args.reruns,
        given_input,
        emulator: match &args.emulator {
            None => Vec::new(),
            Some(words) => shlex::split(words)
                .filter(|w| !w.is_empty())
                .ok_or_else(|| capture::CaptureError::BadEmulator(words.clone()))?,
        },
    };
    let quiet = args.json;
    let mut progress = |msg: &str| {
        if !quiet {
            log::info!("{msg}");
        }
    };
    let outcome = capture::capture(&req, &mut progress)?;
    if let Outcome::Case { dir, case } = &outcome {
        crate::report::write_files(dir, case)?;
    }
    Ok(outcome)
}

/// `--out DIR` must not exist or be an empty directory: decided before the compiler runs,
/// so a taken name costs nothing and nothing in it is touched.
fn refuse_taken_out(out: &Path) -> Result<(), crate::case::CaseError> {
    let taken = match std::fs::symlink_metadata(out) {
        Err(_) => false,
        Ok(m) if m.is_dir() => std::fs::read_dir(out).map_or(true, |mut r| r.next().is_some()),
        Ok(_) => true,
    };
    if taken {
        return Err(crate::case::CaseError::Exists {
            path: out.to_owned(),
        });
    }
    Ok(())
}

/// A case that capture wrote: its directory and content.
pub(crate) type Written = Option<(PathBuf, Box<Case>)>;

/// Prints a capture outcome; returns the exit code and the case directory, if one was written.
/// `more`: other stages follow (`triage`), which print the `report:` and `status:` lines of a
/// captured case at the end instead.
pub(crate) fn print_outcome(
    args: &CaptureArgs,
    outcome: Outcome,
    more: bool,
) -> anyhow::Result<(u8, Written)> {
    let mut out = crate::cli::term::stdout();
    match outcome {
        Outcome::Case { dir, case } => {
            let code = match case.status {
                CaseStatus::Captured => error::OK,
                CaseStatus::Flaky | CaseStatus::LostInPreprocessing => error::NOT_REPRODUCED,
            };
            if args.json {
                let mut v = serde_json::to_value(&*case)?;
                v["case_dir"] = dir.to_string_lossy().into_owned().into();
                writeln!(out, "{}", serde_json::to_string(&v)?)?;
            } else {
                print_case_summary(&mut out, &dir, &case, more)?;
            }
            Ok((code, Some((dir, case))))
        }
        Outcome::NoCrash { reason, stderr } => {
            if args.json {
                let v = serde_json::json!({"outcome": "no-crash", "reason": reason});
                writeln!(out, "{v}")?;
            } else {
                eprintln!("icepick: not a crash: {}", super::term::visible(&reason));
                if std::io::stderr().is_terminal() && !stderr.is_empty() {
                    let tail: Vec<&str> = stderr.lines().take(5).collect();
                    eprintln!("{}", super::term::visible(&tail.join("\n")));
                }
            }
            Ok((error::NO_CRASH, None))
        }
        Outcome::TimedOut { seconds } => {
            let reason = format!(
                "the command did not finish within {seconds} s and was killed (with everything it started); a hang is not a crash here: raise --timeout if the compile is just slow"
            );
            if args.json {
                let v = serde_json::json!({"outcome": "timeout", "reason": reason});
                writeln!(out, "{v}")?;
            } else {
                eprintln!("icepick: not a crash: {reason}");
            }
            Ok((error::NO_CRASH, None))
        }
    }
}

fn print_case_summary(
    out: &mut impl Write,
    dir: &Path,
    case: &Case,
    more: bool,
) -> anyhow::Result<()> {
    writeln!(out, "case:      {}", dir.display())?;
    writeln!(out, "crash:     {}", crate::report::title(case))?;
    writeln!(
        out,
        "signature: {} (coarse {})",
        case.signature.id, case.signature.coarse_id
    )?;
    let family = case.family();
    if !family.is_deterministic() {
        // A crash of some runs only, or not the same way each run: its rate and rule.
        let key = family.key().map(|k| format!(": {k}")).unwrap_or_default();
        writeln!(
            out,
            "family:    {}{}",
            family.describe(),
            crate::cli::term::visible(&key)
        )?;
    }
    if let Some(arch) = &case.job.offload_arch {
        writeln!(out, "job:       {} {arch}", case.job.kind)?;
    } else {
        writeln!(out, "job:       {}", case.job.kind)?;
    }
    writeln!(
        out,
        "input:     {} ({} bytes, {})",
        dir.join(&case.input).display(),
        std::fs::metadata(dir.join(&case.input))
            .map(|m| m.len())
            .unwrap_or(0),
        case.preprocessing.mode
    )?;
    writeln!(out, "repro:     {}", dir.join("repro.sh").display())?;
    match case.status {
        CaseStatus::Captured if more => {}
        CaseStatus::Captured => {
            writeln!(out, "report:    {}", dir.join("report.md").display())?;
            writeln!(out, "status:    captured")?;
        }
        _ => writeln!(
            out,
            "report:    {}\nstatus:    {} ({})",
            dir.join("report.md").display(),
            serde_json::to_value(case.status)?.as_str().unwrap_or(""),
            case.status_detail.as_deref().unwrap_or("")
        )?,
    }
    Ok(())
}
