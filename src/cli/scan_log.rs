//! `icepick scan-log` (being written).

use clap::Args;

/// Arguments of `icepick scan-log`.
#[derive(Debug, Args)]
pub struct ScanLogArgs {}

/// Runs `icepick scan-log`.
pub fn run(_args: ScanLogArgs) -> anyhow::Result<u8> {
    anyhow::bail!("`icepick scan-log` is not implemented yet")
}
