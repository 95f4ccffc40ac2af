//! Command-line interface: clap definitions, dispatch to the stages, human and `--json`
//! output, and the mapping of outcomes to the exit codes in [`crate::error`].

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context as _;
use clap::{Args, Parser, Subcommand};

use crate::capture::{self, Outcome, Request};
use crate::case::{Case, CaseStatus};
use crate::error;

#[derive(Debug, Parser)]
#[command(
    name = "icepick",
    version,
    about = "Turns a compiler crash buried in a huge build into a small, verified, classified bug report",
    after_help = error::EXIT_CODES_HELP
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Rerun a crashing compile, capture the crash, move it onto preprocessed input and write
    /// a case directory (case.json, input, original.stderr, repro.sh, report.md).
    #[command(after_help = error::EXIT_CODES_HELP)]
    Capture(CaptureArgs),
    /// Render a case's report (Markdown or JSON) on stdout.
    #[command(after_help = error::EXIT_CODES_HELP)]
    Report(ReportArgs),
}

#[derive(Debug, Args)]
struct CaptureArgs {
    /// Case directory to create (must not exist); default ./icepick-<signature>.
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Print the case as one JSON object on stdout, and nothing else.
    #[arg(long)]
    json: bool,
    /// Time limit for each compiler run, in seconds.
    #[arg(long, default_value_t = 300, value_name = "SECS")]
    timeout: u64,
    /// Reruns of the original command to check the crash is deterministic.
    #[arg(long, default_value_t = 2, value_name = "N")]
    reruns: u32,
    /// Take the command from clang's crash reproducer script (the .sh beside the
    /// preprocessed file it wrote).
    #[arg(long, value_name = "CRASH.sh", conflicts_with_all = ["compdb", "command"])]
    from_reproducer: Option<PathBuf>,
    /// Take the command from a compilation database; needs --file.
    #[arg(
        long,
        value_name = "compile_commands.json",
        requires = "file",
        conflicts_with = "command"
    )]
    compdb: Option<PathBuf>,
    /// The source file whose entry in --compdb to use.
    #[arg(long, value_name = "SRC", requires = "compdb")]
    file: Option<PathBuf>,
    /// The compile command that crashed: -- <compiler> <args…>
    #[arg(last = true, value_name = "COMMAND")]
    command: Vec<String>,
}

#[derive(Debug, Args)]
struct ReportArgs {
    /// The case directory.
    case: PathBuf,
    /// Output format.
    #[arg(long, default_value = "md", value_parser = ["md", "json"])]
    format: String,
}

/// Entry point used by `main`.
pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() {
                error::USAGE
            } else {
                error::OK
            };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    match run(cli) {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            let code = if is_usage_error(&e) {
                error::USAGE
            } else {
                error::FAILED
            };
            eprintln!("icepick: error: {e:#}");
            ExitCode::from(code)
        }
    }
}

fn is_usage_error(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        matches!(
            c.downcast_ref::<capture::CaptureError>(),
            Some(
                capture::CaptureError::CompilerNotFound(_)
                    | capture::CaptureError::NoInput
                    | capture::CaptureError::UnreadableInput(..)
            )
        ) || c.downcast_ref::<capture::SourceError>().is_some()
            || matches!(
                c.downcast_ref::<crate::case::CaseError>(),
                Some(
                    crate::case::CaseError::NotACase { .. }
                        | crate::case::CaseError::Exists { .. }
                        | crate::case::CaseError::TooNew { .. }
                )
            )
    })
}

fn run(cli: Cli) -> anyhow::Result<u8> {
    match cli.command {
        Command::Capture(args) => run_capture(args),
        Command::Report(args) => run_report(args),
    }
}

fn run_capture(args: CaptureArgs) -> anyhow::Result<u8> {
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
    let req = Request {
        argv,
        cwd: run_dir,
        out: args.out.as_ref().map(|o| absolutize(&cwd, o)),
        cases_parent: cwd.clone(),
        timeout: Duration::from_secs(args.timeout.max(1)),
        reruns: args.reruns,
        given_input,
    };
    let quiet = args.json;
    let mut progress = |msg: &str| {
        if !quiet {
            eprintln!("icepick: {msg}");
        }
    };
    let outcome = capture::capture(&req, &mut progress)?;
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
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
                print_case_summary(&mut out, &dir, &case)?;
            }
            Ok(code)
        }
        Outcome::NoCrash { reason, stderr } => {
            if args.json {
                let v = serde_json::json!({"outcome": "no-crash", "reason": reason});
                writeln!(out, "{v}")?;
            } else {
                eprintln!("icepick: not a crash: {reason}");
                if std::io::stderr().is_terminal() && !stderr.is_empty() {
                    let tail: Vec<&str> = stderr.lines().take(5).collect();
                    eprintln!("{}", tail.join("\n"));
                }
            }
            Ok(error::NO_CRASH)
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
            Ok(error::NO_CRASH)
        }
    }
}

fn print_case_summary(out: &mut impl Write, dir: &Path, case: &Case) -> anyhow::Result<()> {
    writeln!(out, "case:      {}", dir.display())?;
    writeln!(out, "crash:     {}", crate::report::title(case))?;
    writeln!(
        out,
        "signature: {} (coarse {})",
        case.signature.id, case.signature.coarse_id
    )?;
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
    writeln!(out, "report:    {}", dir.join("report.md").display())?;
    writeln!(out, "repro:     {}", dir.join("repro.sh").display())?;
    match case.status {
        CaseStatus::Captured => writeln!(out, "status:    captured")?,
        _ => writeln!(
            out,
            "status:    {} ({})",
            serde_json::to_value(case.status)?.as_str().unwrap_or(""),
            case.status_detail.as_deref().unwrap_or("")
        )?,
    }
    Ok(())
}

fn run_report(args: ReportArgs) -> anyhow::Result<u8> {
    let case = Case::load(&args.case)?;
    let text = if args.format == "json" {
        serde_json::to_string_pretty(&case)?
    } else {
        crate::report::markdown(&case)
    };
    println!("{text}");
    Ok(error::OK)
}

fn absolutize(cwd: &Path, p: &Path) -> PathBuf {
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        cwd.join(p)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn clap_definition_is_valid() {
        use clap::CommandFactory;
        super::Cli::command().debug_assert();
    }
}
