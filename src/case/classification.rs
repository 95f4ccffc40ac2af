//! `case.json`'s `classification` section, written by the classify stage (`src/classify/`):
//! the verdict, the row of the decision table that gave it (`docs/classify.md`), and every
//! experiment as [`Evidence`].

use serde::{Deserialize, Serialize};

/// One experiment's result: an item of `classification.evidence[]`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Evidence {
    /// `E1`, `E2`, `E3`, `E4`, `E5-v-off`, `E5-v128`, `E5-v256`, `E6` or `baseline`, `E7`,
    /// `H` (the capturing host's facts).
    pub id: String,
    /// What ran, in words (command lines are in `detail`).
    pub experiment: String,
    /// False when the experiment could not run here (the reason is in `detail`).
    pub ran: bool,
    /// `host x86_64`, `qemu-riscv64 -cpu rv64,v=false` …
    pub host_or_emulator: String,
    /// One of the `outcome` constants in [`outcome`].
    pub outcome: String,
    /// Signature id of the crash this experiment saw, when it saw one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signature: Option<String>,
    /// Coarse signature id (top frame only) of that crash, for comparing across builds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub coarse_signature: Option<String>,
    /// The named frames of that crash, innermost first, function names as the signature
    /// normalises them (`crash::named_frames`), at most [`FRAMES_KEPT`]: the report diffs
    /// them against the case's when the two match only coarsely. Empty when the experiment
    /// saw no crash, and in cases classified before icepick kept them (they still load).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub frames: Vec<String>,
    /// What happened, in a sentence or two.
    pub detail: String,
}

/// How many frames [`Evidence::frames`] keeps: enough to see where two builds' stacks part.
pub const FRAMES_KEPT: usize = 12;

/// The outcome words evidence uses.
pub mod outcome {
    /// The same signature as the case.
    pub const SAME_CRASH: &str = "same-crash";
    /// Another signature id, but the same coarse id or the same message and phase (frame
    /// names may differ between builds of the same version).
    pub const SAME_CRASH_COARSE: &str = "same-crash-coarse";
    pub const OTHER_CRASH: &str = "other-crash";
    pub const NO_CRASH: &str = "no-crash";
    pub const TIMEOUT: &str = "timeout";
    pub const NOT_RUN: &str = "not-run";
    /// E1: every rerun crashed with the case's signature.
    pub const DETERMINISTIC: &str = "deterministic";
    /// E1: some reruns crashed with the case's signature, the others did not crash.
    pub const INTERMITTENT: &str = "intermittent";
    /// E1: reruns crashed with different signatures.
    pub const VARYING: &str = "varying";
    /// E2: the faulting instruction.
    pub const VECTOR: &str = "vector";
    pub const TRAP: &str = "trap";
    pub const OTHER: &str = "other";
    /// E2: the crash is not a signal at an instruction (a fatal error exits normally).
    pub const NOT_APPLICABLE: &str = "not-applicable";
    /// E7: killed (OOM) or timed out.
    pub const RESOURCE_KILLED: &str = "killed";
    /// E7: the stack overflow is gone with an unlimited stack.
    pub const FIXED_BY_STACK: &str = "fixed-by-bigger-stack";
    /// E7: still crashes with an unlimited stack.
    pub const NOT_FIXED_BY_STACK: &str = "not-fixed-by-bigger-stack";
    /// E7: the crash kind says nothing about resources.
    pub const NO_RESOURCE_SIGN: &str = "no-resource-sign";
    /// H: a T-Head XTheadVector (0.7.1) core whose kernel claims V (RVV 1.0) in AT_HWCAP.
    pub const HOST_THEAD_CLAIMS_V: &str = "thead-core-claims-v";
    /// H: a RISC-V host whose AT_HWCAP claims V.
    pub const HOST_V: &str = "v";
    /// H: a RISC-V host without V in AT_HWCAP.
    pub const HOST_NO_V: &str = "no-v";
    /// H: a RISC-V host whose AT_HWCAP was not read.
    pub const HOST_V_UNKNOWN: &str = "v-unknown";
    /// H: the capturing machine is not RISC-V.
    pub const HOST_NOT_RISCV: &str = "not-riscv";
}

/// `case.json`'s `classification`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Classification {
    /// `compiler-bug`, `compiler-bug-riscv-build`, `host-rvv`, `host-kernel`,
    /// `nondeterministic`, `resource` or `insufficient-evidence`.
    pub verdict: String,
    /// A refinement of the verdict (`dialect-mismatch`, `kernel-vector-context`, `stack` …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subcase: Option<String>,
    /// `high`, `medium` or `low`.
    pub confidence: String,
    /// Row of the decision table (docs/classify.md) that matched.
    pub rule: u32,
    /// Why, in one sentence.
    pub reason: String,
    /// Ids of the evidence items the verdict rests on.
    pub decided_by: Vec<String>,
    /// The experiment that would settle it, when the evidence is incomplete.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_step: Option<String>,
    pub evidence: Vec<Evidence>,
}

/// The row of the table as docs/classify.md writes it: `3`, `3b`, `4c` …
pub fn rule_name(rule: u32) -> String {
    if rule > 10 && rule % 10 != 0 {
        let letter = char::from(b'a' + (rule % 10) as u8);
        format!("{}{letter}", rule / 10)
    } else {
        rule.to_string()
    }
}

/// Reads a `classification` section back (`None` when it is not one this build understands).
pub fn parse_section(v: &serde_json::Value) -> Option<Classification> {
    serde_json::from_value(v.clone()).ok()
}
