//! The verdict: a pure function over the evidence implementing the decision table of
//! `docs/classify.md` (first matching row wins).
//!
//! Row numbers follow the table. Rows added here, numbered in [`Decision::rule`] as row × 10 +
//! letter ([`rule_name`]):
//! - `3b` (31), `4b` (41): a case captured on a host that is not RISC-V, where the baseline
//!   replay on the capturing host already says the host's vector unit is not involved;
//! - `4c` (42): the riscv64 build crashes the same with V off and on, and no other build was
//!   tried (E6 not run): not the host, but rows 3 and 4 cannot be told apart yet;
//! - `5b` (51): the faulting instruction is a vector instruction of one dialect only and V off
//!   removes the crash. Row 6 asks for clean emulation, but when the binary itself carries
//!   XTheadVector code, QEMU's RVV 1.0 unit is a mismatched host too, so E5 with V on crashes.
//!
//! Row 6's sub-case (a) "dialect mismatch" needs to know the dialect that faulted: E2's
//! decisive encoding, or the capturing host's facts (`H`: a T-Head 0.7.1 core whose kernel
//! claims V) together with a vector instruction at the fault (E2) or RVV 1.0 code in the
//! compiler (E3) and V off removing the crash (E4). Otherwise it is (b), the kernel's vector
//! context.

use super::outcome as o;
use super::Evidence;

/// What [`decide`] concluded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    pub verdict: &'static str,
    pub subcase: Option<&'static str>,
    pub confidence: &'static str,
    /// Row of the table (31 = row 3b, 41 = row 4b).
    pub rule: u32,
    pub reason: String,
    pub decided_by: Vec<String>,
    pub next_step: Option<String>,
}

const HIGH: &str = "high";
const MEDIUM: &str = "medium";
const LOW: &str = "low";

pub use crate::case::classification::rule_name;

/// The next step when E5 has not run.
pub const RUN_E5: &str = "E5: run a riscv64 clang of the same version under qemu-riscv64 with V off and on (--sysroot DIR, or ICEPICK_RISCV64_SYSROOT; scripts/fetch-riscv64-clang gets Debian's clang-19)";

fn get<'a>(ev: &'a [Evidence], id: &str) -> Option<&'a Evidence> {
    ev.iter().find(|e| e.id == id && e.ran)
}

fn crashed(e: Option<&Evidence>) -> bool {
    e.is_some_and(|e| e.outcome == o::SAME_CRASH || e.outcome == o::SAME_CRASH_COARSE)
}

fn exact(e: Option<&Evidence>) -> bool {
    e.is_some_and(|e| e.outcome == o::SAME_CRASH)
}

fn is(e: Option<&Evidence>, outcome: &str) -> bool {
    e.is_some_and(|e| e.outcome == outcome)
}

fn ids(es: &[Option<&Evidence>]) -> Vec<String> {
    es.iter().flatten().map(|e| e.id.clone()).collect()
}

fn decision(
    verdict: &'static str,
    subcase: Option<&'static str>,
    confidence: &'static str,
    rule: u32,
    reason: impl Into<String>,
    decided_by: Vec<String>,
    next_step: Option<&str>,
) -> Decision {
    Decision {
        verdict,
        subcase,
        confidence,
        rule,
        reason: reason.into(),
        decided_by,
        next_step: next_step.map(String::from),
    }
}

/// Decides from the evidence (docs/classify.md, first match wins).
pub fn decide(ev: &[Evidence]) -> Decision {
    let e1 = get(ev, "E1");
    let e2 = get(ev, "E2");
    let e3 = get(ev, "E3");
    let host = get(ev, "H");
    let e4 = get(ev, "E4");
    let e7 = get(ev, "E7");
    let v_off = get(ev, "E5-v-off");
    let v128 = get(ev, "E5-v128");
    let v256 = get(ev, "E5-v256");
    let v_on = if crashed(v128) { v128 } else { v256.or(v128) };
    let e5_ran = v_off.is_some() || v128.is_some() || v256.is_some();
    let e5_clean = e5_ran
        && [v_off, v128, v256]
            .iter()
            .flatten()
            .all(|e| e.outcome == o::NO_CRASH);
    let e6 = get(ev, "E6");
    let baseline = get(ev, "baseline");
    let replay = e6.or(baseline);

    // Row 1: killed (OOM) or timed out.
    if is(e7, o::RESOURCE_KILLED) || is(e1, o::TIMEOUT) {
        return decision(
            "resource",
            Some("oom-or-timeout"),
            MEDIUM,
            1,
            "the compiler was killed or timed out, which is the machine's limit, not a crash",
            ids(&[e7, e1.filter(|e| e.outcome == o::TIMEOUT)]),
            Some("rerun at -j1 while watching RSS and dmesg for the OOM killer (E7 on the host)"),
        );
    }
    // Row 2: a stack overflow that a bigger stack fixes.
    if is(e7, o::FIXED_BY_STACK) {
        return decision(
            "resource",
            Some("stack"),
            HIGH,
            2,
            "the stack overflow is gone with an unlimited stack; the build may need a bigger stack (the RISC-V build may need more than x86)",
            ids(&[e7]),
            None,
        );
    }
    // Rows 3 and 4: the riscv64 build crashes under emulation with V off and on.
    if crashed(v_off) && crashed(v_on) {
        if crashed(replay) {
            let all_exact = exact(v_off) && exact(v_on) && exact(replay);
            return decision(
                "compiler-bug",
                None,
                if all_exact { HIGH } else { MEDIUM },
                3,
                format!(
                    "the riscv64 build crashes the same way under emulation with V off and on{}, and the {} replay crashes too: the host's vector unit is not involved",
                    if all_exact { "" } else { " (same message and phase; frame names differ between builds)" },
                    replay.map_or("", |e| e.id.as_str())
                ),
                ids(&[v_off, v_on, replay, e1]),
                None,
            );
        }
        if is(replay, o::NO_CRASH) {
            return decision(
                "compiler-bug-riscv-build",
                None,
                MEDIUM,
                4,
                "the riscv64 build crashes under emulation with V off and on, the other build does not: a miscompiled LLVM or RISC-V-only undefined behaviour, not the kernel's V support",
                ids(&[v_off, v_on, replay]),
                None,
            );
        }
        // Row 4c: no other build tried.
        if replay.is_none() {
            return decision(
                "compiler-bug",
                Some("riscv64-build-untested-elsewhere"),
                MEDIUM,
                42,
                "the riscv64 build crashes the same way under emulation with V off and on: the host's vector unit and kernel are not involved",
                ids(&[v_off, v_on, e1]),
                Some("E6: replay on an x86-64 clang of the same version (--target=riscv64-linux-gnu) to tell a compiler bug from a riscv64-build-only one"),
            );
        }
    }
    // Row 3b: captured on a host that is not RISC-V and crashes there every time.
    if baseline.is_some()
        && e6.is_none()
        && crashed(baseline)
        && !e5_ran
        && is(e1, o::DETERMINISTIC)
    {
        return decision(
            "compiler-bug",
            None,
            MEDIUM,
            31,
            "the case was captured on a host that is not RISC-V and crashes there on every rerun; no RISC-V vector unit is involved",
            ids(&[baseline, e1]),
            Some(RUN_E5),
        );
    }
    // Row 4b: the capturing (non-RISC-V) host's build crashes, the riscv64 build does not.
    if baseline.is_some() && e6.is_none() && crashed(baseline) && e5_clean {
        return decision(
            "compiler-bug",
            Some("this-host-build-only"),
            LOW,
            41,
            "the build on the capturing host (not RISC-V) crashes, the riscv64 build under emulation does not: a compiler bug of that build; no RISC-V vector unit is involved",
            ids(&[baseline, v_off, v128, v256]),
            Some("compare with another build of the same version on the capturing host"),
        );
    }
    // Row 5: the faulting instruction is a trap.
    if is(e2, o::TRAP) {
        return decision(
            "compiler-bug",
            Some("assertion-trap"),
            MEDIUM,
            5,
            "the faulting instruction is a trap (an assertion or __builtin_trap in the compiler)",
            ids(&[e2]),
            Some("confirm with E5 (V off and on) and E6 (rows 3 and 4)"),
        );
    }
    // Row 5b: a one-dialect vector instruction faulted, V off removes the crash, and emulation
    // with V on crashes too (with clean emulation, row 6 decides).
    // The dialect that faulted: from E2's decisive encoding, or (docs/classify.md row 6a) from a
    // host that is a T-Head 0.7.1 core claiming V, where RVV 1.0 code (E2's instruction, or
    // what E3 finds in the compiler) cannot run.
    let thead_claims_v = is(host, o::HOST_THEAD_CLAIMS_V);
    // (what, decided by the host facts, decided by E3)
    let dialect: Option<(&str, bool, bool)> = e2
        .filter(|e| e.outcome == o::VECTOR)
        .and_then(|e| {
            if e.detail.contains("XTheadVector-only") {
                Some(("XTheadVector (0.7.1) code ran on a vector unit that does not implement it (RVV 1.0)", false, false))
            } else if e.detail.contains("RVV-1.0-only") {
                Some(("RVV 1.0 code ran on a vector unit that does not implement it (an XTheadVector core whose kernel advertises V)", false, false))
            } else if thead_claims_v {
                Some(("a vector instruction faulted on a T-Head 0.7.1 (XTheadVector) core whose kernel claims RVV 1.0 (H)", true, false))
            } else {
                None
            }
        })
        .or_else(|| {
            let what = if is(e3, "rvv1") {
                "the compiler holds RVV 1.0 code (E3) and the host is a T-Head 0.7.1 (XTheadVector) core whose kernel claims RVV 1.0 (H)"
            } else {
                "the compiler holds vector code (E3) and the host is a T-Head 0.7.1 (XTheadVector) core whose kernel claims RVV 1.0 (H), so any RVV 1.0 instruction in it faults"
            };
            (thead_claims_v && (is(e3, "rvv1") || is(e3, "ambiguous")) && is(e4, o::NO_CRASH))
                .then_some((what, true, true))
        });
    let host_decided = host.filter(|_| dialect.is_some_and(|d| d.1));
    let e3_decided = e3.filter(|_| dialect.is_some_and(|d| d.2));
    let dialect = dialect.map(|d| d.0);
    let v_off_clean = v_off.filter(|e| e.outcome == o::NO_CRASH);
    let e4_clean = e4.filter(|e| e.outcome == o::NO_CRASH);
    if let (Some(what), true) = (
        dialect,
        crashed(v_on) && (v_off_clean.is_some() || e4_clean.is_some()),
    ) {
        return decision(
            "host-rvv",
            Some("dialect-mismatch"),
            HIGH,
            51,
            format!("the faulting vector code is of a dialect the host's unit does not run and the crash is gone with V off: {what}; the host advertises V for a unit that does not run this code"),
            ids(&[e2, host_decided, e3_decided, v_off_clean, e4_clean, v_on.filter(|e| crashed(Some(e)))]),
            None,
        );
    }
    // Row 6: a vector instruction faulted, or V off removes the crash; emulation is clean.
    let vector_evidence = is(e2, o::VECTOR) || is(e4, o::NO_CRASH);
    if vector_evidence && (e5_clean || !e5_ran) {
        let decisive = dialect.is_some();
        return decision(
            "host-rvv",
            Some(if decisive {
                "dialect-mismatch"
            } else {
                "kernel-vector-context"
            }),
            if e5_clean { HIGH } else { LOW },
            6,
            if let Some(what) = dialect {
                format!("{what}: the host advertises V for a unit that does not run this code")
            } else {
                "the crash depends on the host's vector support (a vector instruction faulted or turning V off removes it) and not on the compiler".into()
            },
            ids(&[
                e2.filter(|e| e.outcome == o::VECTOR),
                host_decided,
                e3_decided,
                e4.filter(|e| e.outcome == o::NO_CRASH),
                v_off,
                v128,
                v256,
            ]),
            if e5_ran { None } else { Some(RUN_E5) },
        );
    }
    // Row 7: deterministic on the host, clean under emulation, V off does not help.
    if is(e1, o::DETERMINISTIC) && e5_clean && crashed(e4) {
        return decision(
            "host-kernel",
            None,
            LOW,
            7,
            "deterministic on the host, clean under emulation, and still crashing with user-space V off: the kernel (in-kernel vector use, vendor patches) is suspect",
            ids(&[e1, v_off, v128, v256, e4]),
            Some("rerun on a kernel without V (or with riscv_v_default_allow=0), and scan the closure for vector code (E3)"),
        );
    }
    // Row 8: varying or intermittent, not reproduced elsewhere.
    let elsewhere = crashed(v_off) || crashed(v_on) || crashed(e6);
    if (is(e1, o::VARYING) || is(e1, o::INTERMITTENT)) && !elsewhere {
        return decision(
            "nondeterministic",
            None,
            if e5_ran || e6.is_some() { MEDIUM } else { LOW },
            8,
            "the crash does not come back the same way every time and does not reproduce elsewhere: suspect hardware or the kernel",
            ids(&[e1, v_off, v128, v256, e6]),
            Some("memtest, EDAC counters, thermals, and a vector-context stress test (E8) on the host"),
        );
    }
    // Row 9: crashes under emulation only with V on.
    if is(v_off, o::NO_CRASH) && crashed(v_on) {
        return decision(
            "host-rvv",
            Some("rvv-path-or-qemu"),
            LOW,
            9,
            "under emulation it crashes only with V on: a vector code path in the binary, or a QEMU bug",
            ids(&[v_off, v_on]),
            Some("rerun E5 under a second QEMU version and scan the closure for vector code (E3)"),
        );
    }
    // Row 10.
    let next = if !e5_ran {
        RUN_E5
    } else if e4.is_none() {
        "E4 and E1 on the failing RISC-V host (icepick classify there)"
    } else {
        "rerun on the failing host with more runs (E1 --runs 20)"
    };
    decision(
        "insufficient-evidence",
        None,
        LOW,
        10,
        "no experiment reproduced the crash in a way that decides it",
        Vec::new(),
        Some(next),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(id: &str, outcome: &str) -> Evidence {
        Evidence {
            id: id.into(),
            experiment: String::new(),
            ran: true,
            host_or_emulator: String::new(),
            outcome: outcome.into(),
            signature: None,
            coarse_signature: None,
            detail: String::new(),
        }
    }

    fn ev_d(id: &str, outcome: &str, detail: &str) -> Evidence {
        Evidence {
            detail: detail.into(),
            ..ev(id, outcome)
        }
    }

    #[test]
    fn rule_names_follow_the_table() {
        assert_eq!(rule_name(3), "3");
        assert_eq!(rule_name(10), "10");
        assert_eq!(rule_name(31), "3b");
        assert_eq!(rule_name(42), "4c");
        assert_eq!(rule_name(51), "5b");
    }

    #[test]
    fn every_row_of_the_decision_table() {
        use o::*;
        // (name, evidence, verdict, subcase, rule)
        type Row = (
            &'static str,
            Vec<Evidence>,
            &'static str,
            Option<&'static str>,
            u32,
        );
        let rows: Vec<Row> = vec![
            (
                "1 oom",
                vec![ev("E1", DETERMINISTIC), ev("E7", RESOURCE_KILLED)],
                "resource",
                Some("oom-or-timeout"),
                1,
            ),
            (
                "1 timeout",
                vec![ev("E1", TIMEOUT)],
                "resource",
                Some("oom-or-timeout"),
                1,
            ),
            (
                "2 stack",
                vec![ev("E1", DETERMINISTIC), ev("E7", FIXED_BY_STACK)],
                "resource",
                Some("stack"),
                2,
            ),
            (
                "3 host-independent",
                vec![
                    ev("E1", DETERMINISTIC),
                    ev("E5-v-off", SAME_CRASH),
                    ev("E5-v128", SAME_CRASH_COARSE),
                    ev("E5-v256", SAME_CRASH),
                    ev("E6", SAME_CRASH),
                ],
                "compiler-bug",
                None,
                3,
            ),
            (
                "3 with baseline",
                vec![
                    ev("E1", DETERMINISTIC),
                    ev("E5-v-off", SAME_CRASH_COARSE),
                    ev("E5-v128", SAME_CRASH_COARSE),
                    ev("baseline", SAME_CRASH),
                ],
                "compiler-bug",
                None,
                3,
            ),
            (
                "4 riscv build",
                vec![
                    ev("E1", DETERMINISTIC),
                    ev("E5-v-off", SAME_CRASH),
                    ev("E5-v256", SAME_CRASH),
                    ev("E6", NO_CRASH),
                ],
                "compiler-bug-riscv-build",
                None,
                4,
            ),
            (
                "3b x86 capture, no emulation",
                vec![ev("E1", DETERMINISTIC), ev("baseline", SAME_CRASH)],
                "compiler-bug",
                None,
                31,
            ),
            (
                "4b x86 build only",
                vec![
                    ev("E1", DETERMINISTIC),
                    ev("baseline", SAME_CRASH),
                    ev("E5-v-off", NO_CRASH),
                    ev("E5-v128", NO_CRASH),
                ],
                "compiler-bug",
                Some("this-host-build-only"),
                41,
            ),
            (
                "5 trap",
                vec![ev("E1", DETERMINISTIC), ev("E2", TRAP)],
                "compiler-bug",
                Some("assertion-trap"),
                5,
            ),
            (
                "4c riscv build, no other build",
                vec![
                    ev("E1", DETERMINISTIC),
                    ev("E5-v-off", SAME_CRASH),
                    ev("E5-v128", SAME_CRASH),
                ],
                "compiler-bug",
                Some("riscv64-build-untested-elsewhere"),
                42,
            ),
            (
                "5b XTheadVector code on an RVV 1.0 unit",
                vec![
                    ev("E1", DETERMINISTIC),
                    ev_d(
                        "E2",
                        VECTOR,
                        "0x12050087 vector instruction (XTheadVector-only): th.vlb.v",
                    ),
                    ev("E5-v-off", NO_CRASH),
                    ev("E5-v128", SAME_CRASH),
                    ev("E5-v256", SAME_CRASH),
                ],
                "host-rvv",
                Some("dialect-mismatch"),
                51,
            ),
            (
                "6 RVV 1.0 code, V off on the host removes it, no emulation",
                vec![
                    ev("E1", DETERMINISTIC),
                    ev_d(
                        "E2",
                        VECTOR,
                        "0x0c047657 vector instruction (RVV-1.0-only): vsetvli ta,ma",
                    ),
                    ev("E4", NO_CRASH),
                ],
                "host-rvv",
                Some("dialect-mismatch"),
                6,
            ),
            (
                "9 ambiguous vector fault, crashes only with V on",
                vec![
                    ev("E1", DETERMINISTIC),
                    ev_d(
                        "E2",
                        VECTOR,
                        "0x000072d7 vector instruction (dialect-ambiguous)",
                    ),
                    ev("E5-v-off", NO_CRASH),
                    ev("E5-v128", SAME_CRASH),
                ],
                "host-rvv",
                Some("rvv-path-or-qemu"),
                9,
            ),
            (
                "6a dialect",
                vec![
                    ev("E1", DETERMINISTIC),
                    ev_d(
                        "E2",
                        VECTOR,
                        "0x12050087 vector instruction (XTheadVector-only)",
                    ),
                    ev("E5-v-off", NO_CRASH),
                    ev("E5-v128", NO_CRASH),
                    ev("E6", NO_CRASH),
                ],
                "host-rvv",
                Some("dialect-mismatch"),
                6,
            ),
            (
                "6b V off removes it",
                vec![ev("E1", DETERMINISTIC), ev("E4", NO_CRASH)],
                "host-rvv",
                Some("kernel-vector-context"),
                6,
            ),
            (
                "6b on a RISC-V host that is not a T-Head 0.7.1 core",
                vec![
                    ev("E1", DETERMINISTIC),
                    ev("E4", NO_CRASH),
                    ev("E3", "rvv1"),
                    ev("H", HOST_V),
                ],
                "host-rvv",
                Some("kernel-vector-context"),
                6,
            ),
            (
                "6a V off removes it; RVV 1.0 code in the compiler; a T-Head core claiming V",
                vec![
                    ev("E1", DETERMINISTIC),
                    ev("E4", NO_CRASH),
                    ev("E3", "rvv1"),
                    ev("H", HOST_THEAD_CLAIMS_V),
                ],
                "host-rvv",
                Some("dialect-mismatch"),
                6,
            ),
            (
                "6a an ambiguous vector instruction faulted on a T-Head core claiming V",
                vec![
                    ev("E1", DETERMINISTIC),
                    ev_d(
                        "E2",
                        VECTOR,
                        "0x0d05f057 vector instruction (dialect-ambiguous)",
                    ),
                    ev("H", HOST_THEAD_CLAIMS_V),
                ],
                "host-rvv",
                Some("dialect-mismatch"),
                6,
            ),
            (
                "5b V off clean, V on crashes under emulation, T-Head core claiming V",
                vec![
                    ev("E1", DETERMINISTIC),
                    ev_d(
                        "E2",
                        VECTOR,
                        "0x0d05f057 vector instruction (dialect-ambiguous)",
                    ),
                    ev("E4", NO_CRASH),
                    ev("E5-v128", SAME_CRASH),
                    ev("H", HOST_THEAD_CLAIMS_V),
                ],
                "host-rvv",
                Some("dialect-mismatch"),
                51,
            ),
            (
                "7 kernel",
                vec![
                    ev("E1", DETERMINISTIC),
                    ev("E4", SAME_CRASH),
                    ev("E5-v-off", NO_CRASH),
                    ev("E5-v128", NO_CRASH),
                    ev("E6", NO_CRASH),
                ],
                "host-kernel",
                None,
                7,
            ),
            (
                "8 varying",
                vec![
                    ev("E1", VARYING),
                    ev("E5-v-off", NO_CRASH),
                    ev("E5-v128", NO_CRASH),
                    ev("E6", NO_CRASH),
                ],
                "nondeterministic",
                None,
                8,
            ),
            (
                "8 intermittent",
                vec![ev("E1", INTERMITTENT)],
                "nondeterministic",
                None,
                8,
            ),
            (
                "9 only with V on",
                vec![
                    ev("E1", NO_CRASH),
                    ev("E5-v-off", NO_CRASH),
                    ev("E5-v128", OTHER_CRASH),
                    ev("E5-v256", SAME_CRASH),
                    ev("E6", NO_CRASH),
                ],
                "host-rvv",
                Some("rvv-path-or-qemu"),
                9,
            ),
            (
                "10 nothing",
                vec![ev("E1", NO_CRASH), ev("E6", NO_CRASH)],
                "insufficient-evidence",
                None,
                10,
            ),
        ];
        for (name, evidence, verdict, subcase, rule) in rows {
            let d = decide(&evidence);
            assert_eq!(
                (d.verdict, d.subcase, d.rule),
                (verdict, subcase, rule),
                "row {name}: {d:?}"
            );
        }
    }

    #[test]
    fn a_t_head_host_claiming_v_is_named_among_the_deciding_evidence() {
        use o::*;
        let d = decide(&[
            ev("E1", DETERMINISTIC),
            ev("E4", NO_CRASH),
            ev("E3", "rvv1"),
            ev("H", HOST_THEAD_CLAIMS_V),
        ]);
        assert_eq!(d.decided_by, vec!["H", "E3", "E4"]);
        assert!(d.reason.contains("T-Head"), "{}", d.reason);
        // A decisive encoding decides alone: the host fact is not named.
        let d = decide(&[
            ev("E1", DETERMINISTIC),
            ev_d("E2", VECTOR, "0x12050087 vector instruction (RVV-1.0-only)"),
            ev("H", HOST_THEAD_CLAIMS_V),
        ]);
        assert_eq!(d.subcase, Some("dialect-mismatch"));
        assert_eq!(d.decided_by, vec!["E2"]);
        // Without the host fact the same experiments do not name a dialect.
        let d = decide(&[
            ev("E1", DETERMINISTIC),
            ev("E4", NO_CRASH),
            ev("E3", "rvv1"),
        ]);
        assert_eq!(d.subcase, Some("kernel-vector-context"));
        assert_eq!(d.decided_by, vec!["E4"]);
    }

    #[test]
    fn exact_matches_give_high_confidence_and_coarse_ones_medium() {
        use o::*;
        let exact = [
            ev("E5-v-off", SAME_CRASH),
            ev("E5-v128", SAME_CRASH),
            ev("E6", SAME_CRASH),
        ];
        assert_eq!(decide(&exact).confidence, "high");
        let coarse = [
            ev("E5-v-off", SAME_CRASH_COARSE),
            ev("E5-v128", SAME_CRASH),
            ev("E6", SAME_CRASH),
        ];
        assert_eq!(decide(&coarse).confidence, "medium");
        assert_eq!(
            decide(&coarse).decided_by,
            vec!["E5-v-off", "E5-v128", "E6"]
        );
    }

    #[test]
    fn evidence_that_did_not_run_is_ignored_and_missing_e5_is_the_next_step() {
        let mut e = ev("E5-v-off", o::SAME_CRASH);
        e.ran = false;
        let d = decide(&[e, ev("E1", o::NO_CRASH)]);
        assert_eq!(d.verdict, "insufficient-evidence");
        assert_eq!(d.next_step.as_deref(), Some(RUN_E5));
    }

    #[test]
    fn evidence_round_trips_through_json() {
        let text = r#"{"id":"E5-v128","experiment":"emulation","ran":true,
            "host_or_emulator":"qemu-riscv64 -cpu rv64,v=true,vlen=128","outcome":"same-crash",
            "signature":"3c6c661882c2","detail":"x"}"#;
        let e: Evidence = serde_json::from_str(text).unwrap();
        assert_eq!(e.outcome, o::SAME_CRASH);
        assert_eq!(e.coarse_signature, None);
        let back: Evidence = serde_json::from_value(serde_json::to_value(&e).unwrap()).unwrap();
        assert_eq!(back, e);
    }
}
