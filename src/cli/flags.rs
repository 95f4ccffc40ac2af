//! `icepick flags` (being written).

use clap::Args;

/// Arguments of `icepick flags`.
#[derive(Debug, Args)]
pub struct FlagsArgs {}

/// Runs `icepick flags`.
pub fn run(_args: FlagsArgs) -> anyhow::Result<u8> {
    anyhow::bail!("`icepick flags` is not implemented yet")
}
