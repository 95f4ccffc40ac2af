//! Compiler stderr → [`Crash`]. (Stub: being written.)

use super::{Crash, ExitInfo};

/// Parses compiler output. Returns `None` when the output and exit status show no crash
/// (success, or ordinary diagnostics).
pub fn parse(_stderr: &str, _exit: ExitInfo) -> Option<Crash> {
    None
}
