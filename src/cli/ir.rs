//! `icepick ir`: arguments and output of the IR stage, and the hidden `ir-oracle`
//! subcommand llvm-reduce runs as its interestingness test.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::Args;

use crate::error;
use crate::ir::{self, IrError, IrSection, Options};

/// Arguments of `icepick ir`.
#[derive(Debug, Args)]
pub struct IrArgs {
    /// The case directory (made by `icepick capture`).
    pub case: PathBuf,
    /// Tool runs at once (llvm-reduce -j; default: the number of cores).
    #[arg(long, value_name = "N", value_parser = crate::cli::jobs_arg)]
    pub jobs: Option<usize>,
    /// Print the `ir` section as one JSON object on stdout, and nothing else.
    #[arg(long)]
    pub json: bool,
    /// Upper limit on one llc/opt run, in seconds.
    #[arg(long, default_value_t = 120, value_name = "SECS", value_parser = crate::cli::secs_arg)]
    pub timeout: u64,
    /// Upper limit on the llvm-reduce run, in seconds: when it is reached, llvm-reduce's best
    /// so far is kept (and checked like any result).
    #[arg(long, default_value_t = 180, value_name = "SECS", value_parser = crate::cli::secs_arg)]
    pub reduce_timeout: u64,
}

/// Arguments of the hidden `icepick ir-oracle SPEC FILE`.
#[derive(Debug, Args)]
pub struct IrOracleArgs {
    pub spec: PathBuf,
    pub file: PathBuf,
}

/// Runs `icepick ir-oracle`: exit 0 when FILE crashes the spec's way, 1 otherwise.
pub fn run_oracle(args: IrOracleArgs) -> anyhow::Result<u8> {
    Ok(if ir::oracle_main(&args.spec, &args.file) {
        0
    } else {
        1
    })
}

/// The stage on `dir`, then the report re-rendered (the stage itself does not import the
/// report). Shared with `triage`.
pub(crate) fn ir_and_report(dir: &Path, opts: &Options, quiet: bool) -> Result<IrSection, IrError> {
    let mut progress = |msg: &str| {
        if !quiet {
            log::info!("{msg}");
        }
    };
    let s = ir::ir_for_case(dir, opts, &mut progress)?;
    let case = crate::case::Case::load(dir)?;
    crate::report::write_files(dir, &case).map_err(|e| IrError::Io(e.to_string()))?;
    Ok(s)
}

/// Runs `icepick ir`.
pub fn run(args: IrArgs) -> anyhow::Result<u8> {
    let mut opts = Options::default();
    if let Some(j) = args.jobs {
        opts.jobs = j.max(1);
    }
    opts.timeout = Duration::from_secs(args.timeout.max(1));
    opts.reduce_timeout = Duration::from_secs(args.reduce_timeout.max(1));
    let case = super::case_arg::resolve(&args.case)?;
    let s = match ir_and_report(&case, &opts, args.json) {
        Ok(s) => s,
        Err(IrError::Case(c)) => return Err(c.into()),
        Err(e @ IrError::Frontend(_)) => {
            eprintln!("icepick: {e}");
            return Ok(error::USAGE);
        }
        Err(e @ IrError::NotReproduced { .. }) => {
            eprintln!("icepick: {e}");
            return Ok(error::NOT_REPRODUCED);
        }
        Err(e) => return Err(e.into()),
    };
    let mut out = crate::cli::term::stdout();
    if args.json {
        writeln!(out, "{}", serde_json::to_string(&s)?)?;
    } else {
        writeln!(out, "ir:       {}", case.join(&s.output).display())?;
        writeln!(out, "command:  {}", s.command.join(" "))?;
        writeln!(out, "test:     {}", s.run_line)?;
        if let Some(p) = &s.pass {
            writeln!(out, "pass:     {p}")?;
        }
        writeln!(out, "reduced:  {}", crate::ir::summary(&s))?;
        if let Some(n) = &s.note {
            writeln!(out, "note:     {n}")?;
        }
    }
    Ok(if s.verified {
        error::OK
    } else {
        error::NOT_REPRODUCED
    })
}
