//! The classify stage (issue 5): is a crash the compiler's fault, or the RISC-V host's
//! (its vector unit, its kernel), or the machine's (memory, time)? Decided by experiment,
//! with every experiment recorded as [`Evidence`] in `case.json`'s `classification` section.
//!
//! Experiments ([`experiments`], [`emulation`]), named as in `docs/classify.md`:
//! E1 determinism (serial and parallel reruns on the capturing host, or under the emulator the
//! case was captured under), E5 emulation (a riscv64 compiler under `qemu-riscv64` with V off
//! and on), E3 a static scan of that compiler's closure for vector code, E6 cross-host replay
//! (the case on this host's clang of the same version when the case came from another host;
//! otherwise the replay is the `baseline`), E2 the faulting instruction of a RISC-V crash (from
//! a core file, [`core_file`], the host's kernel log, [`kernel_log`], or the stack dump's
//! module+offset), E4
//! V off through `prctl` on a RISC-V host, E7 resources, and H the capturing host's facts
//! ([`host_facts`]). The verdict
//! ([`verdict::decide`]) is a pure function over the evidence implementing the decision table
//! of `docs/classify.md`, first matching row wins.

pub mod core_file;
pub mod emulation;
pub mod experiments;
pub mod host_facts;
pub mod kernel_log;
pub mod verdict;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::case::{Case, CaseError};

pub use verdict::{decide, rule_name, Decision};

/// Environment variable naming the riscv64 clang sysroot when `--sysroot` is not given.
pub const SYSROOT_ENV: &str = "ICEPICK_RISCV64_SYSROOT";

/// The compiler inside a sysroot that E5 runs by default.
pub const SYSROOT_CLANG: &str = "usr/lib/llvm-19/bin/clang";

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
    /// What happened, in a sentence or two.
    pub detail: String,
}

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

/// What `icepick classify` was asked to do.
#[derive(Debug, Clone)]
pub struct Options {
    /// E1 reruns.
    pub runs: u32,
    /// The user-mode emulator for E5.
    pub emulator: PathBuf,
    /// Root of a riscv64 system with a clang in it (E5); `None`: E5 is not run.
    pub sysroot: Option<PathBuf>,
    /// The riscv64 compiler for E5 (default `SYSROOT/usr/lib/llvm-19/bin/clang`).
    pub compiler: Option<PathBuf>,
    /// A kernel log of the host where the compiler crashed, for E2; saved into the case as
    /// [`KERNEL_LOG`].
    pub kernel_log: Option<PathBuf>,
    /// A core file of the crashed compiler, for E2.
    pub core: Option<PathBuf>,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            runs: 5,
            emulator: PathBuf::from("qemu-riscv64"),
            // An empty value counts as unset (`VAR= icepick …`, or a script whose lookup failed).
            sysroot: std::env::var_os(SYSROOT_ENV)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from),
            compiler: None,
            kernel_log: None,
            core: None,
        }
    }
}

/// Why classification could not run.
#[derive(Debug, thiserror::Error)]
pub enum ClassifyError {
    #[error(transparent)]
    Case(#[from] CaseError),
    #[error("riscv64 compiler {0} not found; fetch a sysroot with scripts/fetch-riscv64-clang (--sysroot DIR) or name the compiler with --compiler")]
    NoRiscv64Compiler(PathBuf),
    #[error("kernel log {path}: {why}")]
    KernelLog { path: PathBuf, why: String },
    #[error("core file {path}: {why}")]
    Core { path: PathBuf, why: String },
}

/// Maps a core file (cores of a compiler are large: mapped, not read).
pub(crate) fn map_core(path: &Path) -> Result<memmap2::Mmap, ClassifyError> {
    let err = |why: String| ClassifyError::Core {
        path: path.to_path_buf(),
        why,
    };
    let f = std::fs::File::open(path).map_err(|e| err(format!("cannot open it: {e}")))?;
    // SAFETY: a read-only mapping of a core file nobody writes while classify reads it; a
    // core changed underneath would at worst decode a wrong instruction.
    unsafe { memmap2::Mmap::map(&f) }.map_err(|e| err(format!("cannot map it: {e}")))
}

/// The case file holding the kernel log given to `classify --kernel-log` (E2 reads it).
pub const KERNEL_LOG: &str = "kernel.log";

/// The case file naming (absolute path, one line) the core given to `classify --core`: cores
/// are too large to copy, so later runs read it where it is.
pub const CORE_PATH: &str = "core-path.txt";

/// Checks the kernel log has an "unhandled signal" report and saves it into the case.
fn save_kernel_log(dir: &Path, log: &Path) -> Result<(), ClassifyError> {
    let err = |why: String| ClassifyError::KernelLog {
        path: log.to_path_buf(),
        why,
    };
    let bytes = std::fs::read(log).map_err(|e| err(format!("cannot read it: {e}")))?;
    if kernel_log::parse(&String::from_utf8_lossy(&bytes)).is_empty() {
        return Err(err(
            "no \"unhandled signal\" report in it; pass the kernel log (`dmesg` or `journalctl -k`) of the host where the compiler crashed, with the lines after the report (the registers)".into(),
        ));
    }
    crate::case::write_atomic(&dir.join(KERNEL_LOG), &bytes)
        .map_err(|e| err(format!("cannot save it into the case: {e}")))
}

/// Runs the experiments on the case in `dir`, decides, and saves the section into
/// `case.json` (and `report.md`).
pub fn classify(dir: &Path, opts: &Options) -> Result<Classification, ClassifyError> {
    let mut case = Case::load(dir)?;
    if let Some(log) = &opts.kernel_log {
        save_kernel_log(dir, log)?;
    }
    if let Some(core) = &opts.core {
        core_file::read(&map_core(core)?).map_err(|e| ClassifyError::Core {
            path: core.clone(),
            why: e.to_string(),
        })?;
        let absolute = std::path::absolute(core).unwrap_or_else(|_| core.clone());
        let line = format!("{}\n", absolute.display());
        crate::case::write_atomic(&dir.join(CORE_PATH), line.as_bytes())?;
    }
    // A case with no RISC-V host, target or emulator: the riscv64 compiler under qemu (E5)
    // and its static scan (E3) say nothing about it, so they are not run (nor reported).
    let without_riscv;
    let opts = if crate::report::involves_riscv(&case) {
        opts
    } else {
        without_riscv = Options {
            sysroot: None,
            compiler: None,
            ..opts.clone()
        };
        &without_riscv
    };
    if let Some(rc) = emulation::riscv64_compiler(&case, opts) {
        if !rc.compiler.is_file() {
            return Err(ClassifyError::NoRiscv64Compiler(rc.compiler));
        }
    }
    let evidence = experiments::run_all(dir, &case, opts);
    let d = decide(&evidence);
    let c = Classification {
        verdict: d.verdict.to_string(),
        subcase: d.subcase.map(String::from),
        confidence: d.confidence.to_string(),
        rule: d.rule,
        reason: d.reason,
        decided_by: d.decided_by,
        next_step: d.next_step,
        evidence,
    };
    case.classification = Some(serde_json::to_value(&c).expect("serialisable"));
    case.save(dir)?;
    crate::report::write_files(dir, &case)?;
    Ok(c)
}

/// Reads a `classification` section back (`None` when it is not one this build understands).
pub fn parse_section(v: &serde_json::Value) -> Option<Classification> {
    serde_json::from_value(v.clone()).ok()
}

/// Experiments about a RISC-V host or build (faulting instruction, static scan, V off,
/// emulation, host facts): they say nothing about a case with no RISC-V host, target or
/// emulator, whose report leaves them out with their next step.
fn is_riscv_experiment(id: &str) -> bool {
    ["E2", "E3", "E4", "E5", "H"]
        .iter()
        .any(|p| id == *p || id.starts_with(&format!("{p}-")))
}

/// The report's `## Classification` section for a `classification` value (empty when the
/// value is not a classification). `riscv`: a RISC-V host, target or emulator is involved;
/// when not, the RISC-V experiments, a next step about them and the "not run here" list of
/// them are left out (an x86 frontend crash's report has none of it).
pub fn markdown_section(v: &serde_json::Value, riscv: bool) -> String {
    use crate::report::markdown as md;
    let Some(c) = parse_section(v) else {
        return String::new();
    };
    let mut s = String::new();
    let _ = writeln!(s, "## Classification\n");
    let sub = c
        .subcase
        .as_deref()
        .map(|x| format!(" ({x})"))
        .unwrap_or_default();
    let _ = writeln!(
        s,
        "**{}**{sub}, confidence {}: {} (decided by {}; docs/classify.md row {})\n",
        md::text(&c.verdict),
        md::text(&c.confidence),
        md::text(&c.reason),
        if c.decided_by.is_empty() {
            "nothing".to_string()
        } else {
            md::text(&c.decided_by.join(", "))
        },
        verdict::rule_name(c.rule)
    );
    let about_riscv = |n: &str| {
        ["E2", "E3", "E4", "E5", "riscv", "RISC-V", "qemu"]
            .iter()
            .any(|w| n.contains(w))
    };
    if let Some(n) = c.next_step.as_deref().filter(|n| riscv || !about_riscv(n)) {
        let _ = writeln!(s, "Next step: {}\n", md::text(n));
    }
    let (ran, not_run): (Vec<_>, Vec<_>) = c
        .evidence
        .iter()
        .filter(|e| riscv || !is_riscv_experiment(&e.id))
        .partition(|e| e.ran);
    if !ran.is_empty() {
        let _ = writeln!(s, "| id | experiment | on | outcome | signature | detail |");
        let _ = writeln!(s, "|---|---|---|---|---|---|");
        for e in ran {
            let _ = writeln!(
                s,
                "| {} | {} | {} | {} | {} | {} |",
                md::table_text(&e.id),
                md::table_text(&e.experiment),
                md::table_text(&e.host_or_emulator),
                md::table_text(&e.outcome),
                md::table_text(e.signature.as_deref().unwrap_or("")),
                md::table_text_with_code(&e.detail)
            );
        }
        let _ = writeln!(s);
    }
    // Experiments that could not run on this host are one line each, not table rows: on an
    // x86 build machine most RISC-V experiments do not apply, and the table stays readable.
    if !not_run.is_empty() {
        let _ = writeln!(s, "Not run here:");
        // E5's three runs share one reason: one line for them.
        let mut groups: Vec<(Vec<&str>, &str, &str)> = Vec::new();
        for e in not_run {
            match groups.last_mut() {
                Some((ids, exp, detail)) if *exp == e.experiment && *detail == e.detail => {
                    ids.push(&e.id)
                }
                _ => groups.push((vec![&e.id], &e.experiment, &e.detail)),
            }
        }
        for (ids, experiment, detail) in groups {
            let _ = writeln!(
                s,
                "- {} ({}): {}",
                md::text(&ids.join(", ")),
                md::text(experiment),
                md::text_with_code(detail)
            );
        }
        let _ = writeln!(s);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn evidence(id: &str, experiment: &str, ran: bool, detail: &str) -> Evidence {
        Evidence {
            id: id.into(),
            experiment: experiment.into(),
            ran,
            host_or_emulator: "host x86_64".into(),
            outcome: if ran {
                outcome::DETERMINISTIC
            } else {
                outcome::NOT_RUN
            }
            .into(),
            signature: ran.then(|| "49724a2ef4a4".into()),
            coarse_signature: None,
            detail: detail.into(),
        }
    }

    #[test]
    fn experiments_not_run_are_listed_below_the_table_and_share_a_line_per_reason() {
        let emu = "emulation: a riscv64 compiler under qemu-user";
        let c = Classification {
            verdict: "compiler-bug".into(),
            subcase: None,
            confidence: "medium".into(),
            rule: 31,
            reason: "crashes on every rerun".into(),
            decided_by: vec!["E1".into()],
            next_step: None,
            evidence: vec![
                evidence("E1", "determinism", true, "serial: 5 of 5"),
                evidence("E5-v-off", emu, false, "no riscv64 compiler"),
                evidence("E5-v128", emu, false, "no riscv64 compiler"),
                evidence("E5-v256", emu, false, "no riscv64 compiler"),
                evidence("E4", "V off | prctl", false, "not a RISC-V host"),
            ],
        };
        let md = markdown_section(&serde_json::to_value(&c).unwrap(), true);
        let table: Vec<&str> = md.lines().filter(|l| l.starts_with("| ")).collect();
        assert_eq!(table.len(), 2, "header and E1 only:\n{md}");
        assert!(table[1].starts_with("| E1 | determinism |"), "{md}");
        assert!(md.contains("row 3b"), "{md}");
        let after = md.split("Not run here:").nth(1).expect("a not-run list");
        let items: Vec<&str> = after.lines().filter(|l| l.starts_with("- ")).collect();
        assert_eq!(
            items,
            [
                format!("- E5-v-off, E5-v128, E5-v256 ({emu}): no riscv64 compiler"),
                "- E4 (V off \\| prctl): not a RISC-V host".to_string(),
            ]
        );
        // No RISC-V host, target or emulator: none of the RISC-V experiments, nor their
        // next step, nor a not-run list of them.
        let mut c = c;
        c.next_step = Some(crate::classify::verdict::RUN_E5.into());
        let md = markdown_section(&serde_json::to_value(&c).unwrap(), false);
        assert!(md.contains("| E1 | determinism |"), "{md}");
        for gone in ["E5", "E4", "Not run here", "qemu", "Next step"] {
            assert!(!md.contains(gone), "{gone} in:\n{md}");
        }
        c.next_step = Some("rerun with more memory".into());
        let md = markdown_section(&serde_json::to_value(&c).unwrap(), false);
        assert!(md.contains("Next step: rerun with more memory"), "{md}");
    }

    #[test]
    fn a_value_that_is_not_a_classification_renders_nothing() {
        assert_eq!(
            markdown_section(&serde_json::json!({"verdict": 3}), false),
            ""
        );
    }
}
