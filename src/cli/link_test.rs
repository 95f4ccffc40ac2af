//! `icepick link-test CASE` (internal): the interestingness test of a link case's source
//! reduction, run by `reduce --test` in a directory holding the candidate sources. Exit 0
//! when they compile and link to the case's link crash, 1 when not, 2 when CASE is not a
//! link case with sources.

use std::path::PathBuf;
use std::time::Duration;

use clap::Args;

use crate::capture::link_sources;
use crate::case::Case;

/// Arguments of `icepick link-test`.
#[derive(Debug, Args)]
pub struct LinkTestArgs {
    /// The case directory.
    pub case: PathBuf,
}

/// A test's compile or link that runs longer is no crash.
const TIMEOUT: Duration = Duration::from_secs(300);

pub fn run(args: LinkTestArgs) -> anyhow::Result<u8> {
    let case = Case::load(&args.case)?;
    let Some((sources, signature)) = case
        .link
        .as_ref()
        .and_then(|l| Some((l.source.as_ref()?, &l.link_signature)))
    else {
        eprintln!(
            "icepick: {} is not a link case with sources",
            args.case.display()
        );
        return Ok(crate::error::USAGE);
    };
    let here = std::env::current_dir()?;
    let same = link_sources::link_test(sources, signature, &here, TIMEOUT)?;
    Ok(if same { 0 } else { 1 })
}
