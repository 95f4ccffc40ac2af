//! `icepick flags`: the minimal command line of a case and the crash's dimensions.
//!
//! Why this exists: a maintainer's first questions are "which flags matter?" and, on RISC-V,
//! "does it need the vector extension?" (issue 4). This stage ddmins the case's
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
pub mod ddmin;
mod dims;
pub mod isa;
mod original;
mod render;
mod riscv;
mod run;

use serde::{Deserialize, Serialize};

pub use analyse::analyse;
pub use ddmin::{minimize, Oracle, Outcome, Tester};
pub use render::{markdown_section, text_table};
pub use run::{flags_for_case, FlagsError, Options};

/// The `flags` section of `case.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Flags {
    /// The smallest command (program first) that still gives the case's crash; run it
    /// inside the case directory.
    pub minimal_command: Vec<String>,
    /// Argument units ddmin removed from `replay_command`, each as written.
    #[serde(default)]
    pub removed: Vec<String>,
    /// The smallest RISC-V `-march` that still crashes, when the target is RISC-V.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub minimal_march: Option<String>,
    /// Whether a RISC-V vector extension (v, zve*, zvl*) is needed; `None`: not RISC-V or
    /// could not tell.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vector_needed: Option<bool>,
    /// One row per probed dimension.
    pub dimensions: Vec<Dimension>,
    /// Compiler runs this stage made (cached repeats not counted).
    pub compiler_runs: usize,
    /// False when the replay command itself did not give the case's crash.
    pub reproduced: bool,
    /// One line when something stopped the analysis.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// Wall time of the stage.
    #[serde(default)]
    pub seconds: f64,
    /// Compiler runs allowed at once.
    #[serde(default)]
    pub jobs: usize,
    /// Candidates had to crash with no source error before the crash (the case's original
    /// is valid and `--allow-invalid` was not given): dropping a flag that makes the code
    /// invalid (`-std=c++20`) was refused.
    #[serde(default)]
    pub keep_valid: bool,
    /// Rows probed on the original command in its build directory, because their values
    /// change what the preprocessor produces ([`original`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub on_original: Vec<String>,
    /// Why such rows could not be probed on the original command (they are then reported as
    /// not testable on preprocessed input).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub original_note: Option<String>,
}

/// One dimension: what was tried and whether it matters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Dimension {
    /// `-O`, `-g`, `-std`, `-march`, `vector extension`, `offload arch`, `-mabi` …
    pub name: String,
    pub tried: Vec<Tried>,
    /// True: the crash depends on this dimension's value (some values lose it); false: it
    /// crashes regardless (or without it); null: could not tell.
    pub needed: Option<bool>,
    /// The answer in words.
    pub note: String,
}

/// One value of a dimension and what it did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tried {
    pub value: String,
    pub outcome: Outcome,
}

impl Dimension {
    /// Values that gave the same crash, and the others with their outcomes.
    pub fn split(&self) -> (Vec<&str>, Vec<(&str, Outcome)>) {
        let same = self
            .tried
            .iter()
            .filter(|t| t.outcome.is_same())
            .map(|t| t.value.as_str())
            .collect();
        let other = self
            .tried
            .iter()
            .filter(|t| !t.outcome.is_same())
            .map(|t| (t.value.as_str(), t.outcome))
            .collect();
        (same, other)
    }
}

/// `needed` from a dimension's outcomes: some crash and some don't → true; all crash →
/// false; none crash → unknown.
pub(crate) fn needed_from(tried: &[Tried]) -> Option<bool> {
    let same = tried.iter().filter(|t| t.outcome.is_same()).count();
    if same == 0 {
        None
    } else {
        Some(same < tried.len())
    }
}
