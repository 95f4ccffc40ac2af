//! Command-line interface: clap definitions, dispatch to the stages, human and `--json`
//! output, and the mapping of outcomes to the exit codes in [`crate::error`].

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};

use crate::error;

mod capture;
mod classify;
mod dashboard;
mod flags;
mod inspect;
mod list;
mod probe;
mod reduce;
mod scan_log;
mod show;
mod triage;
mod versions;
mod wrap;

use crate::capture as capture_stage;

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
    Capture(capture::CaptureArgs),
    /// Is it the compiler or the RISC-V host (vector unit, kernel)? Experiments and a verdict.
    #[command(after_help = error::EXIT_CODES_HELP)]
    Classify(classify::ClassifyArgs),
    /// Write the crash store as static HTML pages (index.html: one row per bucket, with its
    /// occurrences; one page per bucket with its report), to open from disk or publish.
    #[command(after_help = error::EXIT_CODES_HELP)]
    Dashboard(dashboard::DashboardArgs),
    /// Find the minimal command line and which flags matter (-march extensions, offload
    /// arches, -O, -g) by parallel ddmin over the case's crashing job.
    #[command(after_help = error::EXIT_CODES_HELP)]
    Flags(flags::FlagsArgs),
    /// Scan ELF files (and an executable's shared libraries) for RISC-V vector code.
    #[command(after_help = error::EXIT_CODES_HELP)]
    Inspect(inspect::InspectArgs),
    /// Print this host's facts (kernel, CPU ISA, vector support) for attaching to a case.
    #[command(after_help = error::EXIT_CODES_HELP)]
    Probe(probe::ProbeArgs),
    /// Shrink the case's preprocessed input while it crashes with the same signature
    /// (parallel, deterministic, resumable); or with --test, any file C-Reduce style.
    #[command(after_help = error::EXIT_CODES_HELP)]
    Reduce(reduce::ReduceArgs),
    /// The whole pipeline on a crashing compile: capture, flags, reduce, versions, classify,
    /// report.
    #[command(after_help = error::EXIT_CODES_HELP)]
    Triage(triage::TriageArgs),
    /// Compiler launcher for builds (CMAKE_CXX_COMPILER_LAUNCHER, CC="icepick wrap clang"):
    /// transparent, and a crash is captured into the crash store.
    Wrap(wrap::WrapArgs),
    /// The crash store's buckets (one per signature).
    List(list::ListArgs),
    /// One bucket of the crash store: its occurrences and case.
    Show(show::ShowArgs),
    /// Find crashed compiles in a ninja, make or CMake log and capture them into the store.
    ScanLog(scan_log::ScanLogArgs),
    /// Run the case on every clang found (or --compiler …): which versions crash the same way.
    #[command(after_help = error::EXIT_CODES_HELP)]
    Versions(versions::VersionsArgs),
    /// Render a case's report (Markdown or JSON) on stdout.
    #[command(after_help = error::EXIT_CODES_HELP)]
    Report(ReportArgs),
}

#[derive(Debug, Args)]
struct ReportArgs {
    /// The case directory.
    case: PathBuf,
    /// Output format.
    #[arg(long, default_value = "md", value_parser = ["md", "json"])]
    format: String,
    /// Remove the home directory, user and host names and temporary directories.
    #[arg(long)]
    redact: bool,
}

/// Entry point used by `main`.
/// The `icepick-wrap` binary's entry point ([`wrap::launcher`]).
pub fn wrap_launcher() -> ExitCode {
    ExitCode::from(wrap::launcher())
}

pub fn main() -> ExitCode {
    // `icepick wrap <compiler> …` runs once per compile of a build: skip clap.
    if let Some(code) = wrap::fast_path() {
        return ExitCode::from(code);
    }
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
            let not_reproducing = e.chain().any(|c| {
                matches!(
                    c.downcast_ref::<crate::reduce::ReduceError>(),
                    Some(crate::reduce::ReduceError::NotReproducing(..))
                )
            });
            let code = if not_reproducing {
                error::NOT_REPRODUCED
            } else if is_usage_error(&e) {
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
            c.downcast_ref::<capture_stage::CaptureError>(),
            Some(
                capture_stage::CaptureError::CompilerNotFound(_)
                    | capture_stage::CaptureError::EmulatorNotFound(_)
                    | capture_stage::CaptureError::BadEmulator(_)
                    | capture_stage::CaptureError::NoInput
                    | capture_stage::CaptureError::UnreadableInput(..)
            )
        ) || c.downcast_ref::<capture_stage::SourceError>().is_some()
            || matches!(
                c.downcast_ref::<crate::versions::VersionsError>(),
                Some(crate::versions::VersionsError::Case(
                    crate::case::CaseError::NotACase { .. }
                ))
            )
            || matches!(
                c.downcast_ref::<crate::reduce::ReduceError>(),
                Some(
                    crate::reduce::ReduceError::NothingToResume
                        | crate::reduce::ReduceError::Case(
                            crate::case::CaseError::NotACase { .. }
                                | crate::case::CaseError::TooNew { .. }
                        )
                )
            )
            || matches!(
                c.downcast_ref::<crate::classify::ClassifyError>(),
                Some(
                    crate::classify::ClassifyError::NoRiscv64Compiler(_)
                        | crate::classify::ClassifyError::KernelLog { .. }
                        | crate::classify::ClassifyError::Core { .. }
                        | crate::classify::ClassifyError::Case(
                            crate::case::CaseError::NotACase { .. }
                                | crate::case::CaseError::TooNew { .. }
                        )
                )
            )
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
        Command::Capture(args) => capture::run(args),
        Command::Classify(args) => classify::run(args),
        Command::Dashboard(args) => dashboard::run(args),
        Command::Report(args) => run_report(args),
        Command::Flags(args) => flags::run(args),
        Command::Reduce(args) => reduce::run(args),
        Command::Triage(args) => triage::run(args),
        Command::Versions(args) => versions::run(args),
        Command::Wrap(args) => wrap::run(args),
        Command::List(args) => list::run(args),
        Command::Show(args) => show::run(args),
        Command::ScanLog(args) => scan_log::run(args),
        Command::Inspect(args) => inspect::run(args),
        Command::Probe(args) => probe::run(args),
    }
}

fn run_report(args: ReportArgs) -> anyhow::Result<u8> {
    let report = crate::report::Report::load(&args.case)?;
    // Redact the case and its files before rendering, so the Compiler Explorer link (base64
    // that text redaction cannot see into) is made from redacted source too.
    let report = if args.redact {
        report.redacted(&crate::report::Redactions::for_case(&report.case))?
    } else {
        report
    };
    let text = if args.format == "json" {
        serde_json::to_string_pretty(&report.json())?
    } else {
        report.markdown()
    };
    // `icepick report CASE | head` is not an error: a closed pipe ends the output quietly.
    use std::io::Write as _;
    match writeln!(std::io::stdout().lock(), "{text}") {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(e.into()),
        _ => Ok(error::OK),
    }
}

pub(crate) fn absolutize(cwd: &Path, p: &Path) -> PathBuf {
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
