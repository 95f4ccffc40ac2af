//! The `ir` section of `case.json`: the reduced IR of an LLVM-tool crash and its `llc`/`opt`
//! command. The IR stage (`src/ir`) writes it; the report, classify, versions and the
//! pipeline read it through this type instead of looking fields up in JSON. Every field has
//! a default so sections written by older icepicks (or with fields missing) still load.

use serde::{Deserialize, Serialize};

use super::Case;

/// The `ir` section of `case.json`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct IrSection {
    /// `llc` or `opt`.
    pub tool: String,
    /// The command that crashes on the reduced IR, program first; run it in the case directory.
    pub command: Vec<String>,
    /// The same command as an LLVM regression test's RUN line (`; RUN: llc … < %s`).
    #[serde(default)]
    pub run_line: String,
    /// The crashing pass: from the pretty stack (`llc`); for `opt`, OptBisect's pass by its
    /// pipeline name, else the minimal pipeline's last pass.
    #[serde(default)]
    pub pass: Option<String>,
    /// For `opt`: the last pass of the minimal pipeline (what ddmin alone says).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pass_pipeline: Option<String>,
    /// For `opt`: the class OptBisect names (`IndVarSimplifyPass`): the pass run at the
    /// smallest `-opt-bisect-limit` that still crashes (`src/ir/bisect.rs`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pass_bisect: Option<String>,
    /// That limit, and how many passes OptBisect counted in the crashing run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bisect_limit: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bisect_counted: Option<usize>,
    /// The minimal `opt` pipeline that still crashes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pipeline: Option<String>,
    /// The reduced IR itself, RUN line first (small; the report renders it from here).
    #[serde(default)]
    pub text: String,
    /// File name of the reduced IR inside the case (`reduced.ll`).
    #[serde(default)]
    pub output: String,
    /// Target triple, CPU and the features the crash needs.
    #[serde(default)]
    pub triple: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mcpu: Option<String>,
    #[serde(default)]
    pub mattr: Vec<String>,
    /// What the crashing job's `llc`/`opt` command had and the reduced IR's crash does without
    /// (each kept flag is needed: ddmin): target features (`+v`: is the vector extension
    /// needed at IR level?), `-mcpu=…`, the `-O` level.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_needed: Vec<String>,
    /// Non-empty lines of the reduced IR, the RUN line excluded.
    #[serde(default)]
    pub lines: usize,
    #[serde(default)]
    pub bytes: usize,
    /// Size of the IR before reduction.
    #[serde(default)]
    pub start_bytes: usize,
    /// Tool runs (interestingness tests of llvm-reduce included).
    #[serde(default)]
    pub tests: usize,
    #[serde(default)]
    pub seconds: f64,
    /// The command crashed the same way in `same` of `runs` final runs.
    #[serde(default)]
    pub verified: bool,
    #[serde(default)]
    pub runs: u32,
    #[serde(default)]
    pub same: u32,
    /// The identity compared across tools (see the module doc).
    #[serde(default)]
    pub key: String,
    /// One line on anything worth knowing (features kept in the IR, a tool that did not
    /// reproduce…).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl IrSection {
    /// The reduced IR verified (its command crashed the same way on every final run).
    pub fn is_verified(&self) -> bool {
        self.verified
    }

    /// The tool, `llc` when the section does not say (sections written before `opt`).
    pub fn tool_or_llc(&self) -> &str {
        if self.tool.is_empty() {
            "llc"
        } else {
            &self.tool
        }
    }
}

impl Case {
    /// The case's `ir` section, typed; `None` when it has none or it does not parse.
    pub fn ir_section(&self) -> Option<IrSection> {
        serde_json::from_value(self.ir.clone()?).ok()
    }

    /// Whether the IR stage's reproducer verified (`None`: no IR section).
    pub fn ir_verified(&self) -> Option<bool> {
        self.ir_section().map(|ir| ir.verified)
    }
}
