//! `icepick flags`: the minimal command line of a case and the crash's dimensions.
//!
//! Why this exists: a maintainer's first questions are "which flags matter?" and, on RISC-V,
//! "does it need the vector extension?". This stage ddmins the case's
//! `replay_command` over argument units ([`args`], [`ddmin`]), then probes dimensions one
//! row each: `-O` level, `-g`, `-std=`, RISC-V `-march` extensions and whether a vector
//! extension is needed ([`isa`], [`riscv`]), GPU offload arches and their neighbours
//! ([`dims`]). For a cc1 command (a clang crash reproducer) it bisects `-target-feature`
//! groups and maps the answer back to a `-march`.
//!
//! Rows whose values change what the preprocessor produces (`-std`, `-O`, `-march` …) are
//! probed again on the original command in its build directory ([`original`]).
//!
//! Everything but [`run`] is pure: it works against a batch oracle
//! (`Fn(&[Vec<String>]) -> Vec<Outcome>`), so tests script the compiler. [`run`] is the
//! process side: it runs candidates in parallel through [`crate::exec::run_all`] inside the
//! case directory and judges "same signature as the case".

mod analyse;
pub mod args;
pub use crate::ddmin;
mod dims;
pub mod isa;
mod original;
mod riscv;
mod run;

pub use crate::case::flags::{Dimension, Flags, Outcome, Tried};
pub use analyse::analyse;
pub use ddmin::{minimize, Oracle, Tester};
pub use run::{flags_for_case, FlagsError, Options};

/// `needed` from a dimension's outcomes: some crash and some don't → true; all crash →
/// false; none crash → unknown.
pub(crate) fn needed_from(tried: &[Tried]) -> Option<bool> {
    let same = tried.iter().filter(|t| t.outcome.is_same_coarse()).count();
    if same == 0 {
        None
    } else {
        Some(same < tried.len())
    }
}
