//! `case.json`'s `flags` section, written by the flags stage (`src/flags/`) and read by the
//! report: the minimal command line and one row per probed dimension.

use serde::{Deserialize, Serialize};

/// What one candidate command did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    /// Crashed with the case's signature.
    SameCrash,
    /// Crashed with the case's signature, but only after source errors, when the case's
    /// original compiles with none before its crash (a crash-on-valid must stay valid: issue
    /// 12). Not the same crash.
    CrashAfterErrors,
    /// Crashed with the case's coarse identity (kind, normalised message and pass, or the
    /// coarse signature) but another exact signature: the frames below differ. The same bug
    /// for a dimension's verdict; not the same crash for ddmin, which keeps exact ones.
    SameCrashCoarse,
    /// Crashed, but with another signature.
    OtherCrash,
    /// Compiled successfully.
    NoCrash,
    /// Failed with ordinary diagnostics (or could not be run).
    Error,
    /// Killed after the time limit.
    Timeout,
}

impl Outcome {
    /// The kebab-case name used in JSON and tables.
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::SameCrash => "same-crash",
            Outcome::CrashAfterErrors => "crash-after-errors",
            Outcome::SameCrashCoarse => "same-crash-coarse",
            Outcome::OtherCrash => "other-crash",
            Outcome::NoCrash => "no-crash",
            Outcome::Error => "error",
            Outcome::Timeout => "timeout",
        }
    }

    /// Only the same crash is interesting.
    pub fn is_same(self) -> bool {
        self == Outcome::SameCrash
    }

    /// The same crash at the coarse grain: exactly, or by kind, message and pass.
    pub fn is_same_coarse(self) -> bool {
        matches!(self, Outcome::SameCrash | Outcome::SameCrashCoarse)
    }
}

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
    /// Where the probes ran when a farm was asked for (`--executor`, docs/farm.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub farm: Option<crate::case::farm::FarmSummary>,
    /// The triage budget ended the stage before every probe ran: `minimal_command` crashes
    /// but may not be minimal, and dimensions with a cut probe are undecided.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub budget_cut: bool,
}

impl Flags {
    /// Records that the budget cut the stage: a dimension whose probes include a timeout
    /// cannot tell "needed" from "cut", so it says neither.
    pub fn mark_budget_cut(&mut self) {
        self.budget_cut = true;
        for d in &mut self.dimensions {
            if d.tried.iter().any(|t| t.outcome == Outcome::Timeout) {
                d.needed = None;
                d.note = "not decided: the triage budget ran out during its probes".into();
            }
        }
        if self.vector_needed.is_some()
            && self
                .dimensions
                .iter()
                .any(|d| d.name == "vector extension" && d.needed.is_none())
        {
            self.vector_needed = None;
        }
    }
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

/// The part of a `flags` section other stages act on: whether the replay command reproduced
/// and the minimal command it found. Read leniently (every field defaulted), so a section
/// [`Flags`] cannot read still gives these.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct FlagsOutcome {
    pub reproduced: bool,
    pub minimal_command: Vec<String>,
}

impl super::Case {
    /// The `flags` section, typed; `None` when it has none or it is not one.
    pub fn flags_section(&self) -> Option<Flags> {
        serde_json::from_value(self.flags.clone()?).ok()
    }

    /// The flags stage's minimal command, when it reproduced the crash.
    pub fn minimal_command(&self) -> Option<Vec<String>> {
        let f: FlagsOutcome = serde_json::from_value(self.flags.clone()?).ok()?;
        f.reproduced.then_some(f.minimal_command)
    }
}
