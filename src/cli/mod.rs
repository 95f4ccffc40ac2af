//! Command-line interface: clap definitions, dispatch to the stages, human and `--json`
//! output, and the mapping of outcomes to the exit codes in [`crate::error`].

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};

use crate::error;

mod capture;
mod case_arg;
mod classify;
mod dashboard;
mod farm;
mod flags;
mod inspect;
mod ir;
mod link_test;
mod list;
mod logger;
mod probe;
mod progress;
mod reduce;
mod scan_log;
mod show;
mod simulate;
mod store;
mod term;
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
    /// The crash store: a directory (SQLite, one machine) or a `postgresql://` URL (a
    /// fleet's database; the password from the URL, PGPASSWORD or PGPASSFILE). Default:
    /// $ICEPICK_STORE, else $XDG_DATA_HOME/icepick, else ~/.local/share/icepick.
    #[arg(long, global = true, value_name = "DIR|URL")]
    store: Option<std::ffi::OsString>,
    /// Say more on stderr: -v shows every compiler and tool command run (quoted for a shell)
    /// with its exit status and time; -vv also each command as it starts.
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    verbose: u8,
    /// Print only the result (and errors): no progress, no step messages.
    #[arg(short, long, global = true, conflicts_with = "verbose")]
    quiet: bool,
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
    /// A backend crash as minimal IR and one llc/opt command (an LLVM regression test):
    /// emits the job's IR, names the crashing pass, reduces with llvm-reduce.
    #[command(after_help = error::EXIT_CODES_HELP)]
    Ir(ir::IrArgs),
    /// llvm-reduce's interestingness test for `icepick ir` (internal).
    #[command(hide = true)]
    IrOracle(ir::IrOracleArgs),
    /// The test of a link case's source reduction (internal).
    #[command(hide = true)]
    LinkTest(link_test::LinkTestArgs),
    /// Print this host's facts (kernel, CPU ISA, vector support) for attaching to a case.
    #[command(after_help = error::EXIT_CODES_HELP)]
    Probe(probe::ProbeArgs),
    /// Shrink the case's preprocessed input while it crashes with the same signature
    /// (parallel, deterministic, resumable); or with --test, any file C-Reduce style.
    #[command(after_help = error::EXIT_CODES_HELP)]
    Reduce(reduce::ReduceArgs),
    /// Predict a reduction's wall time and speedup on N workers (a build farm) from the
    /// trace of one run (`icepick reduce --trace FILE`).
    #[command(after_help = error::EXIT_CODES_HELP)]
    Simulate(simulate::SimulateArgs),
    /// The whole pipeline on a crashing compile: capture, flags, ir (backend crashes), reduce,
    /// versions, classify, report.
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
    /// The crash store itself: `store flush` sends the occurrences spooled while the store
    /// could not be reached; `store status` says where it is and what waits.
    Store(store::StoreArgs),
    /// Run the case on every clang found (or --compiler …): which versions crash the same way.
    #[command(after_help = error::EXIT_CODES_HELP)]
    Versions(versions::VersionsArgs),
    /// Render a case's report (Markdown or JSON) on stdout.
    #[command(after_help = error::EXIT_CODES_HELP)]
    Report(ReportArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell) on stdout.
    Completions(CompletionsArgs),
    /// Print icepick's man page (roff) on stdout, or with --dir write one page per command.
    Man(ManArgs),
}

#[derive(Debug, Args)]
struct CompletionsArgs {
    /// The shell.
    shell: clap_complete::Shell,
}

#[derive(Debug, Args)]
struct ManArgs {
    /// Write icepick.1 and one icepick-COMMAND.1 per command into DIR (e.g.
    /// ~/.local/share/man/man1) instead of printing icepick.1.
    #[arg(long, value_name = "DIR")]
    dir: Option<PathBuf>,
}

#[derive(Debug, Args)]
struct ReportArgs {
    /// The case directory, or a bucket id of the crash store.
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
    let code = wrap::launcher();
    crate::exec::shutdown();
    ExitCode::from(code)
}

pub fn main() -> ExitCode {
    // `icepick wrap <compiler> …` runs once per compile of a build: skip clap.
    if let Some(code) = wrap::fast_path() {
        crate::exec::shutdown();
        return ExitCode::from(code);
    }
    let code = main_code();
    // Every exit path that runs code ends here: no child left, no scratch directory left.
    if let Some(sig) = crate::interrupt::signal() {
        crate::interrupt::finish(sig);
    }
    crate::exec::shutdown();
    code
}

fn main_code() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(mut e) => {
            add_dashdash_tip(&mut e, std::env::args_os().skip(1));
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
        // An error made by the interrupt (a killed first test) is no error: `main` exits
        // with the signal's code.
        Err(_) if crate::interrupt::is_interrupted() => ExitCode::FAILURE,
        Err(e) => {
            let code = exit_code(&e);
            eprintln!("icepick: error: {}", term::visible(&message(&e)));
            ExitCode::from(code)
        }
    }
}

/// `icepick triage clang++-16 -c x.cc` (the `--` forgotten) gets clap's bare "unexpected
/// argument 'clang++-16'": add the tip that says how to pass a compile command.
fn add_dashdash_tip(e: &mut clap::Error, args: impl Iterator<Item = std::ffi::OsString>) {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    if e.kind() != ErrorKind::UnknownArgument {
        return;
    }
    let args: Vec<String> = args.map(|a| a.to_string_lossy().into_owned()).collect();
    let takes_command = ["capture", "triage"];
    let Some(sub) = args.iter().find(|a| takes_command.contains(&a.as_str())) else {
        return;
    };
    if args.iter().any(|a| a == "--") {
        return;
    }
    let Some(ContextValue::String(arg)) = e.get(ContextKind::InvalidArg) else {
        return;
    };
    let Some(at) = args.iter().position(|a| a == arg) else {
        return;
    };
    let command = crate::command::shell_join(&args[at..]);
    let tip = format!("the compile command goes after `--`: icepick {sub} [OPTIONS] -- {command}");
    e.insert(
        ContextKind::Suggested,
        ContextValue::StyledStrs(vec![tip.into()]),
    );
}

/// The error and its causes in one line, each cause once: a cause whose text its parent
/// already shows (`{path}: {source}` messages) is not repeated ("X: X").
fn message(e: &anyhow::Error) -> String {
    let mut out = String::new();
    for cause in e.chain() {
        let text = cause.to_string();
        if out.contains(&text) {
            continue;
        }
        if !out.is_empty() {
            out.push_str(": ");
        }
        out.push_str(&text);
    }
    out
}

/// The exit code of a failed command: a crash that did not reproduce (any cause says so)
/// before a usage error (any cause says so) before icepick failing.
fn exit_code(e: &anyhow::Error) -> u8 {
    let codes: Vec<u8> = e.chain().filter_map(cause_code).collect();
    [error::NOT_REPRODUCED, error::USAGE]
        .into_iter()
        .find(|c| codes.contains(c))
        .unwrap_or(error::FAILED)
}

/// The exit code a cause carries, when it is one of icepick's errors ([`error::ExitCoded`]).
fn cause_code(c: &(dyn std::error::Error + 'static)) -> Option<u8> {
    use error::ExitCoded;
    macro_rules! first_coded {
        ($($t:ty),* $(,)?) => {
            $(if let Some(e) = c.downcast_ref::<$t>() {
                return Some(e.exit_code());
            })*
        };
    }
    first_coded!(
        crate::case::CaseError,
        crate::reduce::ReduceError,
        crate::versions::VersionsError,
        crate::classify::ClassifyError,
        crate::ir::IrError,
        crate::flags::FlagsError,
        capture_stage::CaptureError,
        capture_stage::SourceError,
        case_arg::CaseArgError,
    );
    None
}

/// The reduce stage's errors: a start that does not reproduce (or not deterministically, or
/// not validly) is [`error::NOT_REPRODUCED`]; what the caller gave wrong (`--resume` with
/// nothing to resume, a bad `--test` script, a missing file) is [`error::USAGE`].
impl error::ExitCoded for crate::reduce::ReduceError {
    fn exit_code(&self) -> u8 {
        use crate::reduce::ReduceError as R;
        match self {
            R::Case(e) => error::ExitCoded::exit_code(e),
            R::NotReproducing(..) | R::FlakyInput { .. } | R::InvalidStart { .. } => {
                error::NOT_REPRODUCED
            }
            R::NothingToResume
            | R::ResumeOtherMode { .. }
            | R::ResumeFileMissing(_)
            | R::BadScript { .. }
            | R::ScriptRejectsOriginal { .. }
            | R::NoFile { .. } => error::USAGE,
            _ => error::FAILED,
        }
    }
}

fn run(cli: Cli) -> anyhow::Result<u8> {
    logger::init(cli.verbose, cli.quiet);
    // Ctrl-C and SIGTERM: see crate::interrupt (not for wrap, which stays transparent: the
    // signal reaches the compiler as it would without icepick).
    if !matches!(cli.command, Command::Wrap(_)) {
        crate::interrupt::install();
    }
    if let Some(s) = &cli.store {
        // One place says where the store is, for this process and the icepick processes it
        // starts (single-threaded here, before any child or thread exists).
        let value = if crate::store::location::is_url(&s.to_string_lossy()) {
            s.clone()
        } else {
            let cwd = std::env::current_dir().unwrap_or_default();
            absolutize(&cwd, Path::new(s)).into_os_string()
        };
        std::env::set_var("ICEPICK_STORE", value);
    }
    match cli.command {
        Command::Capture(args) => capture::run(args),
        Command::Classify(args) => classify::run(args),
        Command::Dashboard(args) => dashboard::run(args),
        Command::Report(args) => run_report(args),
        Command::Flags(args) => flags::run(args),
        Command::Reduce(args) => reduce::run(args),
        Command::Simulate(args) => simulate::run(args),
        Command::Triage(args) => triage::run(args),
        Command::Versions(args) => versions::run(args),
        Command::Wrap(args) => wrap::run(args),
        Command::List(args) => list::run(args),
        Command::Show(args) => show::run(args),
        Command::ScanLog(args) => scan_log::run(args),
        Command::Store(args) => store::run(args),
        Command::Inspect(args) => inspect::run(args),
        Command::Ir(args) => ir::run(args),
        Command::IrOracle(args) => ir::run_oracle(args),
        Command::LinkTest(args) => link_test::run(args),
        Command::Probe(args) => probe::run(args),
        Command::Completions(args) => run_completions(args),
        Command::Man(args) => run_man(args),
    }
}

fn run_completions(args: CompletionsArgs) -> anyhow::Result<u8> {
    use clap::CommandFactory;
    let mut cmd = Cli::command();
    let mut out = Vec::new();
    clap_complete::generate(args.shell, &mut cmd, "icepick", &mut out);
    write_stdout(&out)
}

fn run_man(args: ManArgs) -> anyhow::Result<u8> {
    use clap::CommandFactory;
    let cmd = Cli::command();
    if let Some(dir) = &args.dir {
        std::fs::create_dir_all(dir)
            .map_err(|e| anyhow::anyhow!("cannot create {}: {e}", dir.display()))?;
        clap_mangen::generate_to(cmd, dir).map_err(|e| {
            anyhow::anyhow!("cannot write the man pages into {}: {e}", dir.display())
        })?;
        log::info!("man pages written to {}", dir.display());
        return Ok(error::OK);
    }
    let mut out = Vec::new();
    clap_mangen::Man::new(cmd).render(&mut out)?;
    write_stdout(&out)
}

/// Writes `bytes` on stdout; a closed pipe (`| head`) ends the output quietly.
fn write_stdout(bytes: &[u8]) -> anyhow::Result<u8> {
    use std::io::Write as _;
    let mut out = crate::cli::term::stdout();
    match out.write_all(bytes).and_then(|()| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(e.into()),
        _ => Ok(error::OK),
    }
}

fn run_report(args: ReportArgs) -> anyhow::Result<u8> {
    let case = case_arg::resolve(&args.case)?;
    let report = crate::report::Report::load(&case)?;
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
    match writeln!(crate::cli::term::stdout(), "{text}") {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(e.into()),
        _ => Ok(error::OK),
    }
}

/// The most tests or compiler runs in flight that `--jobs` takes: more is a typo, and would
/// only exhaust threads and processes.
pub(crate) const MAX_JOBS: usize = 1024;

/// The longest per-run time limit (`--timeout SECS` and the like): a week. Larger values
/// overflow the clock arithmetic of a deadline and mean "no limit", which icepick has not.
pub(crate) const MAX_SECS: u64 = 7 * 24 * 3600;

/// `--jobs N`: 1 to [`MAX_JOBS`]; anything else is a usage error (exit 2), never a panic.
pub(crate) fn jobs_arg(s: &str) -> Result<usize, String> {
    match s.trim().parse::<u64>() {
        Ok(n) if (1..=MAX_JOBS as u64).contains(&n) => Ok(n as usize),
        _ => Err(format!("give a number of jobs from 1 to {MAX_JOBS}")),
    }
}

/// The most reruns of one command a count flag asks for (`classify --runs`, `--reruns`,
/// `--verify-runs`): each is a compiler run, and `classify` starts a batch of them at once.
pub(crate) const MAX_RUNS: u32 = 100;

/// `--runs N`: 1 to [`MAX_RUNS`]; anything else is a usage error (exit 2).
pub(crate) fn runs_arg(s: &str) -> Result<u32, String> {
    match s.trim().parse::<u64>() {
        Ok(n) if (1..=MAX_RUNS as u64).contains(&n) => Ok(n as u32),
        _ => Err(format!("give a number of runs from 1 to {MAX_RUNS}")),
    }
}

/// `--reruns N`: 0 to [`MAX_RUNS`]; anything else is a usage error (exit 2).
pub(crate) fn reruns_arg(s: &str) -> Result<u32, String> {
    match s.trim().parse::<u64>() {
        Ok(n) if n <= MAX_RUNS as u64 => Ok(n as u32),
        _ => Err(format!("give a number of reruns from 0 to {MAX_RUNS}")),
    }
}

/// A time limit in seconds: 1 to [`MAX_SECS`]; anything else is a usage error (exit 2).
pub(crate) fn secs_arg(s: &str) -> Result<u64, String> {
    match s.trim().parse::<u64>() {
        Ok(n) if (1..=MAX_SECS).contains(&n) => Ok(n),
        _ => Err(format!(
            "give a number of seconds from 1 to {MAX_SECS} (a week)"
        )),
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
    fn an_error_chain_says_each_cause_once() {
        // The shape that printed "Not a directory (os error 20): Not a directory (os error 20)".
        #[derive(Debug, thiserror::Error)]
        #[error("{path}: {source}")]
        struct Doubling {
            path: String,
            source: std::io::Error,
        }
        let io = std::io::Error::from_raw_os_error(libc::ENOTDIR);
        let text = io.to_string();
        let e = anyhow::Error::new(Doubling {
            path: "x/case.json".into(),
            source: io,
        })
        .context("loading the case");
        assert_eq!(
            super::message(&e),
            format!("loading the case: x/case.json: {text}")
        );
        assert_eq!(super::message(&e).matches(&text).count(), 1);
    }

    #[test]
    fn case_errors_inside_stage_errors_are_bad_input() {
        let bad = crate::case::CaseError::MissingInput {
            name: "input.c".into(),
            path: "c/input.c".into(),
        };
        let e = anyhow::Error::new(crate::flags::FlagsError::Case(bad));
        assert_eq!(super::exit_code(&e), crate::error::USAGE);
        let io = crate::case::CaseError::Io {
            path: "c/case.json".into(),
            error: std::io::Error::other("disk full"),
        };
        let e = anyhow::Error::new(crate::reduce::ReduceError::Case(io));
        assert_eq!(super::exit_code(&e), crate::error::FAILED);
    }

    #[test]
    fn clap_definition_is_valid() {
        use clap::CommandFactory;
        super::Cli::command().debug_assert();
    }
}
