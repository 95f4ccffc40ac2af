//! The `reduction` section of `case.json`: what the reduce stage (`src/reduce`) found and
//! how it got there. Other stages (report, classify, versions, the pipeline) read it through
//! this type. Every field has a default so that sections written by older icepicks, or with
//! fields missing, still load.

use serde::{Deserialize, Serialize};

use super::Case;

/// The `reduction` section of `case.json`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Reduction {
    /// `running` (the process is at it, or was killed), `stopped` (interrupted, best kept),
    /// `done` (fixpoint reached).
    pub status: String,
    /// File name of the best-so-far inside the case directory.
    pub output: String,
    pub bytes_before: usize,
    pub bytes_after: usize,
    /// Compiler runs by the reducer, over all resumed runs.
    pub tests: u64,
    pub cache_hits: u64,
    pub seconds: f64,
    pub jobs: usize,
    /// The final result was re-run `verify_runs` times with `replay_command` and gave the
    /// case's signature every time (with zero source errors when `keep_valid`).
    pub verified: bool,
    /// Every candidate had to crash with zero source errors (the original is valid and
    /// `--allow-invalid` was not given).
    #[serde(default)]
    pub keep_valid: bool,
    /// `--allow-invalid` was given.
    #[serde(default)]
    pub allow_invalid: bool,
    /// Source errors clang printed before the crash when the result was verified.
    #[serde(default)]
    pub source_errors: u32,
    /// The final check: runs, and runs that gave the signature ("k of n").
    #[serde(default)]
    pub verify_runs: u32,
    #[serde(default)]
    pub verify_same: u32,
    /// Set when the smallest result was not deterministic (or not valid without `-w`) and
    /// the stage fell back to a larger accepted candidate: why, in one line.
    #[serde(default)]
    pub backed_off: Option<String>,
    /// Second runs of candidates whose first run crashed the right way (the price of
    /// determinism; with a spare worker, also of candidates whose first run was still
    /// running, then killed if it said no), and how many of them did not crash the same way
    /// again while the first run had (candidates it kept out).
    #[serde(default)]
    pub confirm_runs: u64,
    #[serde(default)]
    pub confirm_rejects: u64,
    /// Tests whose checks (confirming run, witness) ran beside their first compiler run on a
    /// worker the reducer's driver lent them (`CancelToken::has_spare`).
    #[serde(default)]
    pub spare_checks: u64,
    /// Compiler runs of the start's and the final checks (back-off included).
    #[serde(default)]
    pub check_runs: u64,
    /// The non-crashing compiler that had to accept every candidate (validity kept) from the
    /// start, or, when it rejected the start, from the first accepted candidate it accepted
    /// (before that, candidates could only drop errors it found in the start); without the
    /// file name. `None`: it never accepted the result's ancestors (or was not used).
    #[serde(default)]
    pub witness: Option<Vec<String>>,
    /// Errors the witness found in the start (distinct file and message), tolerated until it
    /// turned strict; 0 when it accepted the start or was not used.
    #[serde(default)]
    pub witness_start_errors: usize,
    /// Its runs, and the candidates it rejected that clang alone would have accepted.
    #[serde(default)]
    pub witness_runs: u64,
    #[serde(default)]
    pub witness_rejects: u64,
    /// Flags the reduced input needs on top of `replay_command` to crash (e.g.
    /// `-ferror-limit=0` when the crash comes after more than 20 errors).
    #[serde(default)]
    pub extra_flags: Vec<String>,
    /// The command that crashes on `output`, inside the case directory.
    pub replay_command: Vec<String>,
    /// The trace of the last run (one JSON line per test, see `trace.rs`), case-relative;
    /// `None` in cases reduced before traces were kept.
    #[serde(default)]
    pub trace: Option<String>,
    /// Where the tests ran (`--executor`): remote/local counts, retries, fallbacks.
    #[serde(default)]
    pub farm: Option<super::farm::FarmSummary>,
    /// Set when the start is valid only with its line markers (code in a system header that
    /// clang rejects in user code): what clang says without them. Candidates then kept their
    /// markers; otherwise they were compiled, and the result is shipped, without any.
    #[serde(default)]
    pub markers_needed: Option<String>,
    /// Where the reduction stood when it accepted `output`, while it is not done: a
    /// `--resume` continues there instead of starting the passes over.
    #[serde(default)]
    pub resume_at: Option<ResumeAt>,
    /// Why a `stopped` reduction stopped, when a fault of the machine stopped it (a full
    /// disk, a compiler that could not start) rather than Ctrl-C or the budget.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fault: Option<String>,
}

/// A position in the reducer's pipeline: the pass that made the last accepted text (by phase,
/// index and name) with the phase's counters, and the cursor in that pass's plan to go on from.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ResumeAt {
    /// 0: the first passes, 1: the main rounds, 2: the last passes.
    pub phase: u8,
    pub pass: usize,
    /// The pass's name: a position is only used where the pipeline has that pass.
    pub pass_name: String,
    pub rounds: u64,
    pub round_improved: bool,
    pub cursor: [u64; 3],
}

impl Reduction {
    /// The command that replays the reduced input, when the result verified and has one.
    pub fn verified_replay(&self) -> Option<&[String]> {
        (self.verified && !self.replay_command.is_empty()).then_some(&self.replay_command[..])
    }
}

impl Case {
    /// The case's `reduction` section, typed; `None` when it has none or it does not parse.
    pub fn reduction_section(&self) -> Option<Reduction> {
        serde_json::from_value(self.reduction.clone()?).ok()
    }

    /// Whether the reduction recorded its source errors (sections written before it did
    /// read `source_errors` as 0, which would claim valid code).
    pub fn reduction_records_source_errors(&self) -> bool {
        self.reduction
            .as_ref()
            .and_then(|r| r.get("source_errors"))
            .is_some_and(serde_json::Value::is_u64)
    }

    /// The command to replay: the verified reduction's when there is one, else the case's.
    pub fn best_replay_command(&self) -> Vec<String> {
        self.reduction_section()
            .and_then(|r| r.verified_replay().map(<[String]>::to_vec))
            .unwrap_or_else(|| self.replay_command.clone())
    }
}
