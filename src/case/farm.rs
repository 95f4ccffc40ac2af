//! What an executor did during a stage (tests remote and local, retries, fallbacks): part
//! of the case model because the reduction and flags sections of case.json carry it; the
//! executor (`src/executor`) fills it in.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// What the executor did, for the summary, `--json` and case.json (`farm` in the reduction
/// and flags sections).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FarmSummary {
    /// `local`, `icecream` or `distcc`: what ran the tests in the end.
    pub executor: String,
    /// What was asked for (differs from `executor` when the farm was refused).
    #[serde(default)]
    pub requested: String,
    /// Why the farm was not used (one line), when it was asked for and refused.
    #[serde(default)]
    pub refused: Option<String>,
    /// Tests that ran on a farm node.
    #[serde(default)]
    pub tests_remote: u64,
    /// Tests that ran on this machine (all of them for `local`; for a farm, the ones its
    /// client quietly compiled locally, plus icepick's own fallbacks).
    #[serde(default)]
    pub tests_local: u64,
    /// Attempts repeated because a node failed or timed out.
    #[serde(default)]
    pub retries: u64,
    /// Tests the farm client compiled locally on its own (icecream's silent local builds).
    #[serde(default)]
    pub client_local: u64,
    /// Tests icepick ran here after the farm failed them on every retry.
    #[serde(default)]
    pub fallbacks: u64,
    /// Tests cancelled in flight because the stage no longer needed them (a farm test only:
    /// the node the client was given may never have received it, so these are in neither
    /// `tests_remote` nor `per_node`).
    #[serde(default)]
    pub cancelled: u64,
    /// Tests per node.
    #[serde(default)]
    pub per_node: BTreeMap<String, u64>,
    /// Failed attempts per node (`?` when the farm did not say which).
    #[serde(default)]
    pub node_failures: BTreeMap<String, u64>,
    /// Nodes left out before the run, with why (compiler identity).
    #[serde(default)]
    pub nodes_dropped: Vec<String>,
}
