//! `icepick flags`: arguments and output of the flags stage.

use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

use clap::Args;

use super::progress::Spinner;
use crate::error;
use crate::flags::{self, Options};

/// Arguments of `icepick flags`.
#[derive(Debug, Args)]
pub struct FlagsArgs {
    /// The case directory (made by `icepick capture`), or a bucket id of the crash store.
    pub case: PathBuf,
    /// Print the flags section as one JSON object on stdout, and nothing else.
    #[arg(long)]
    pub json: bool,
    /// Compiler runs at once (default: the number of cores).
    #[arg(long, value_name = "N", value_parser = crate::cli::jobs_arg)]
    pub jobs: Option<usize>,
    /// Upper limit on one compiler run, in seconds (runs after the first are limited to
    /// ten times the first run's time, at least 10 s).
    #[arg(long, default_value_t = 300, value_name = "SECS", value_parser = crate::cli::secs_arg)]
    pub timeout: u64,
    /// Accept dropping a flag when the crash survives only after source errors (by default a
    /// crash-on-valid keeps every flag whose removal makes its code invalid, e.g. -std=c++20).
    #[arg(long)]
    pub allow_invalid: bool,
    #[command(flatten)]
    pub farm: crate::cli::farm::FarmArgs,
}

/// Runs `icepick flags`.
pub fn run(args: FlagsArgs) -> anyhow::Result<u8> {
    let mut opts = Options::default();
    if let Some(j) = args.jobs {
        opts.jobs = j.max(1);
    }
    opts.timeout = Duration::from_secs(args.timeout.max(1));
    opts.allow_invalid = args.allow_invalid;
    opts.executor = match args.farm.choice() {
        Ok(c) => c,
        Err(why) => {
            eprintln!("icepick: {why}");
            return Ok(error::USAGE);
        }
    };
    let mut spinner = Spinner::start("finding the flags that matter", args.json);
    let mut progress = |msg: &str| spinner.step(msg);
    // The case error itself goes up, so that `NotACase` maps to the usage exit code.
    let case = super::case_arg::resolve(&args.case)?;
    let f = flags::flags_for_case(&case, &opts, &mut progress).map_err(|e| match e {
        flags::FlagsError::Case(c) => anyhow::Error::from(c),
    })?;
    spinner.finish();
    crate::report::rerender(&case)?;
    let mut out = crate::cli::term::stdout();
    if args.json {
        writeln!(out, "{}", serde_json::to_string(&f)?)?;
    } else {
        write!(out, "{}", crate::report::flags::text_table(&f))?;
        if let Some(farm) = &f.farm {
            writeln!(out, "farm: {}", farm.line())?;
        }
    }
    Ok(if f.reproduced {
        error::OK
    } else {
        error::NOT_REPRODUCED
    })
}
