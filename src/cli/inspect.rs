//! `icepick inspect` (being written).

use clap::Args;

/// Arguments of `icepick inspect`.
#[derive(Debug, Args)]
pub struct InspectArgs {}

/// Runs `icepick inspect`.
pub fn run(_args: InspectArgs) -> anyhow::Result<u8> {
    anyhow::bail!("`icepick inspect` is not implemented yet")
}
