//! `icepick wrap` (being written).

use clap::Args;

/// Arguments of `icepick wrap`.
#[derive(Debug, Args)]
pub struct WrapArgs {}

/// Runs `icepick wrap`.
pub fn run(_args: WrapArgs) -> anyhow::Result<u8> {
    anyhow::bail!("`icepick wrap` is not implemented yet")
}
