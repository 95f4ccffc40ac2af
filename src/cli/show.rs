//! `icepick show` (being written).

use clap::Args;

/// Arguments of `icepick show`.
#[derive(Debug, Args)]
pub struct ShowArgs {}

/// Runs `icepick show`.
pub fn run(_args: ShowArgs) -> anyhow::Result<u8> {
    anyhow::bail!("`icepick show` is not implemented yet")
}
