//! Compiler output → a typed [`Crash`], and a crash → a stable [`Signature`].
//!
//! Everything here is pure (text in, values out) except [`symbolize`], which reads ELF symbol
//! tables of the modules named in the frames. The parsers cover clang 14/16/19 (symbolized,
//! unsymbolized `module+0xOFF`, dladdr and glibc `backtrace_symbols` formats), in-process and
//! out-of-process cc1, LLVM tools, and GCC ICEs; see `docs/crash-formats.md`.

mod diagnostics;
pub mod family;
mod frames;
mod model;
mod parse;
mod signature;
mod symbolize;
#[cfg(test)]
mod tests;

pub use diagnostics::{first_error, prior_diagnostics};
pub use family::{CrashFamily, FamilyRule};
pub use frames::demangle;
pub use model::{kind_words, Crash, CrashKind, ExitInfo, Family, Frame, PrettyEntry, Signature};
pub use parse::{is_source_error, may_be_crash, parse};
pub use signature::{crash_site, named_frames, normalize_function, phase_as_printed, signature};
pub use symbolize::Symbolizer;
