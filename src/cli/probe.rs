//! `icepick probe` (being written).

use clap::Args;

/// Arguments of `icepick probe`.
#[derive(Debug, Args)]
pub struct ProbeArgs {}

/// Runs `icepick probe`.
pub fn run(_args: ProbeArgs) -> anyhow::Result<u8> {
    anyhow::bail!("`icepick probe` is not implemented yet")
}
