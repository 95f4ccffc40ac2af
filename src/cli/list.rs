//! `icepick list` (being written).

use clap::Args;

/// Arguments of `icepick list`.
#[derive(Debug, Args)]
pub struct ListArgs {}

/// Runs `icepick list`.
pub fn run(_args: ListArgs) -> anyhow::Result<u8> {
    anyhow::bail!("`icepick list` is not implemented yet")
}
