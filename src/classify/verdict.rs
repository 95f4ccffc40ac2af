//! The verdict: a pure function over the evidence implementing the decision table of
//! `docs/classify.md` (first matching row wins).
//!
//! The table is [`TABLE`]: one entry per documented row, in the documented order, each a small
//! function that returns the row's decision when its evidence matches. A test reads the
//! document's table and checks it lists the same rows in the same order, and its cases reach
//! every row. Row numbers follow the table. Rows added here, numbered in [`Decision::rule`] as row × 10 +
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

/// One row of the decision table (`docs/classify.md`, "Decision table").
#[derive(Debug, Clone, Copy)]
pub struct Row {
    /// The row as the document names it: `1`, `3b`, `4c` …
    pub name: &'static str,
    /// The row's check: a decision when its evidence matches.
    check: fn(&Facts<'_>) -> Option<Decision>,
}

/// The decision table in the order [`decide`] tries it (first match wins), which is the order
/// of the table in `docs/classify.md`: rows 3, 4 and 4c before 3b and 4b, 5b before 6.
pub const TABLE: &[Row] = &[
    Row {
        name: "1",
        check: row_1,
    },
    Row {
        name: "2",
        check: row_2,
    },
    Row {
        name: "3",
        check: row_3,
    },
    Row {
        name: "4",
        check: row_4,
    },
    Row {
        name: "4c",
        check: row_4c,
    },
    Row {
        name: "3b",
        check: row_3b,
    },
    Row {
        name: "4b",
        check: row_4b,
    },
    Row {
        name: "5",
        check: row_5,
    },
    Row {
        name: "5b",
        check: row_5b,
    },
    Row {
        name: "6",
        check: row_6,
    },
    Row {
        name: "7",
        check: row_7,
    },
    Row {
        name: "8",
        check: row_8,
    },
    Row {
        name: "9",
        check: row_9,
    },
    Row {
        name: "10",
        check: row_10,
    },
];

/// Decides from the evidence: the first row of [`TABLE`] that matches.
pub fn decide(ev: &[Evidence]) -> Decision {
    let f = Facts::of(ev);
    TABLE
        .iter()
        .find_map(|r| (r.check)(&f))
        .expect("row 10 matches any evidence")
}

/// The dialect of the vector code that faulted, when the evidence names one (rows 5b and 6a).
#[derive(Debug, Clone, Copy)]
struct Dialect {
    what: &'static str,
    /// Named by the capturing host's facts (`H`) …
    by_host: bool,
    /// … and by E3's scan of the compiler.
    by_e3: bool,
}

/// The evidence the rows read, by id (only experiments that ran), and what several rows
/// derive from it.
struct Facts<'a> {
    e1: Option<&'a Evidence>,
    e2: Option<&'a Evidence>,
    e3: Option<&'a Evidence>,
    host: Option<&'a Evidence>,
    e4: Option<&'a Evidence>,
    e7: Option<&'a Evidence>,
    v_off: Option<&'a Evidence>,
    v128: Option<&'a Evidence>,
    v256: Option<&'a Evidence>,
    /// E5 with V on: the run that crashed, else the widest that ran.
    v_on: Option<&'a Evidence>,
    e5_ran: bool,
    /// E5 ran and no run of it crashed.
    e5_clean: bool,
    e6: Option<&'a Evidence>,
    baseline: Option<&'a Evidence>,
    /// The other build: E6, else the baseline replay.
    replay: Option<&'a Evidence>,
    dialect: Option<Dialect>,
}

impl<'a> Facts<'a> {
    fn of(ev: &'a [Evidence]) -> Facts<'a> {
        let v_off = get(ev, "E5-v-off");
        let v128 = get(ev, "E5-v128");
        let v256 = get(ev, "E5-v256");
        let e5_ran = v_off.is_some() || v128.is_some() || v256.is_some();
        let e6 = get(ev, "E6");
        let baseline = get(ev, "baseline");
        let mut f = Facts {
            e1: get(ev, "E1"),
            e2: get(ev, "E2"),
            e3: get(ev, "E3"),
            host: get(ev, "H"),
            e4: get(ev, "E4"),
            e7: get(ev, "E7"),
            v_off,
            v128,
            v256,
            v_on: if crashed(v128) { v128 } else { v256.or(v128) },
            e5_ran,
            e5_clean: e5_ran
                && [v_off, v128, v256]
                    .iter()
                    .flatten()
                    .all(|e| e.outcome == o::NO_CRASH),
            e6,
            baseline,
            replay: e6.or(baseline),
            dialect: None,
        };
        f.dialect = f.dialect();
        f
    }

    /// The dialect that faulted: from E2's decisive encoding, or (row 6a) from a host that is
    /// a T-Head 0.7.1 core claiming V, where RVV 1.0 code (E2's instruction, or what E3 finds
    /// in the compiler) cannot run.
    fn dialect(&self) -> Option<Dialect> {
        let thead_claims_v = is(self.host, o::HOST_THEAD_CLAIMS_V);
        let d = |what, by_host, by_e3| Dialect {
            what,
            by_host,
            by_e3,
        };
        let from_e2 = self.e2.filter(|e| e.outcome == o::VECTOR).and_then(|e| {
            if e.detail.contains("XTheadVector-only") {
                Some(d("XTheadVector (0.7.1) code ran on a vector unit that does not implement it (RVV 1.0)", false, false))
            } else if e.detail.contains("RVV-1.0-only") {
                Some(d("RVV 1.0 code ran on a vector unit that does not implement it (an XTheadVector core whose kernel advertises V)", false, false))
            } else if thead_claims_v {
                Some(d("a vector instruction faulted on a T-Head 0.7.1 (XTheadVector) core whose kernel claims RVV 1.0 (H)", true, false))
            } else {
                None
            }
        });
        from_e2.or_else(|| {
            let what = if is(self.e3, "rvv1") {
                "the compiler holds RVV 1.0 code (E3) and the host is a T-Head 0.7.1 (XTheadVector) core whose kernel claims RVV 1.0 (H)"
            } else {
                "the compiler holds vector code (E3) and the host is a T-Head 0.7.1 (XTheadVector) core whose kernel claims RVV 1.0 (H), so any RVV 1.0 instruction in it faults"
            };
            (thead_claims_v
                && (is(self.e3, "rvv1") || is(self.e3, "ambiguous"))
                && is(self.e4, o::NO_CRASH))
            .then_some(d(what, true, true))
        })
    }

    /// The host facts, when they named the dialect.
    fn host_decided(&self) -> Option<&'a Evidence> {
        self.host
            .filter(|_| self.dialect.is_some_and(|d| d.by_host))
    }

    /// E3, when it named the dialect.
    fn e3_decided(&self) -> Option<&'a Evidence> {
        self.e3.filter(|_| self.dialect.is_some_and(|d| d.by_e3))
    }

    /// The riscv64 build crashes under emulation with V off and on (rows 3, 4, 4c).
    fn emulation_crashes_with_v_off_and_on(&self) -> bool {
        crashed(self.v_off) && crashed(self.v_on)
    }
}

/// Row 1: killed (OOM) or timed out.
fn row_1(f: &Facts<'_>) -> Option<Decision> {
    (is(f.e7, o::RESOURCE_KILLED) || is(f.e1, o::TIMEOUT)).then(|| {
        decision(
            "resource",
            Some("oom-or-timeout"),
            MEDIUM,
            1,
            "the compiler was killed or timed out, which is the machine's limit, not a crash",
            ids(&[f.e7, f.e1.filter(|e| e.outcome == o::TIMEOUT)]),
            Some("rerun at -j1 while watching RSS and dmesg for the OOM killer (E7 on the host)"),
        )
    })
}

/// Row 2: a stack overflow that a bigger stack fixes.
fn row_2(f: &Facts<'_>) -> Option<Decision> {
    is(f.e7, o::FIXED_BY_STACK).then(|| {
        decision(
            "resource",
            Some("stack"),
            HIGH,
            2,
            "the stack overflow is gone with an unlimited stack; the build may need a bigger stack (the RISC-V build may need more than x86)",
            ids(&[f.e7]),
            None,
        )
    })
}

/// Row 3: the riscv64 build crashes under emulation with V off and on, and so does the other
/// build.
fn row_3(f: &Facts<'_>) -> Option<Decision> {
    if !(f.emulation_crashes_with_v_off_and_on() && crashed(f.replay)) {
        return None;
    }
    let all_exact = exact(f.v_off) && exact(f.v_on) && exact(f.replay);
    Some(decision(
        "compiler-bug",
        None,
        if all_exact { HIGH } else { MEDIUM },
        3,
        format!(
            "the riscv64 build crashes the same way under emulation with V off and on{}, and the {} replay crashes too: the host's vector unit is not involved",
            if all_exact { "" } else { " (same message and phase; frame names differ between builds)" },
            f.replay.map_or("", |e| e.id.as_str())
        ),
        ids(&[f.v_off, f.v_on, f.replay, f.e1]),
        None,
    ))
}

/// Row 4: the riscv64 build crashes under emulation with V off and on, the other build does
/// not.
fn row_4(f: &Facts<'_>) -> Option<Decision> {
    (f.emulation_crashes_with_v_off_and_on() && is(f.replay, o::NO_CRASH)).then(|| {
        decision(
            "compiler-bug-riscv-build",
            None,
            MEDIUM,
            4,
            "the riscv64 build crashes under emulation with V off and on, the other build does not: a miscompiled LLVM or RISC-V-only undefined behaviour, not the kernel's V support",
            ids(&[f.v_off, f.v_on, f.replay]),
            None,
        )
    })
}

/// Row 4c: the riscv64 build crashes under emulation with V off and on; no other build tried.
fn row_4c(f: &Facts<'_>) -> Option<Decision> {
    (f.emulation_crashes_with_v_off_and_on() && f.replay.is_none()).then(|| {
        decision(
            "compiler-bug",
            Some("riscv64-build-untested-elsewhere"),
            MEDIUM,
            42,
            "the riscv64 build crashes the same way under emulation with V off and on: the host's vector unit and kernel are not involved",
            ids(&[f.v_off, f.v_on, f.e1]),
            Some("E6: replay on an x86-64 clang of the same version (--target=riscv64-linux-gnu) to tell a compiler bug from a riscv64-build-only one"),
        )
    })
}

/// Row 3b: captured on a host that is not RISC-V and crashes there every time.
fn row_3b(f: &Facts<'_>) -> Option<Decision> {
    (f.baseline.is_some()
        && f.e6.is_none()
        && crashed(f.baseline)
        && !f.e5_ran
        && is(f.e1, o::DETERMINISTIC))
    .then(|| {
        decision(
            "compiler-bug",
            None,
            MEDIUM,
            31,
            "the case was captured on a host that is not RISC-V and crashes there on every rerun; no RISC-V vector unit is involved",
            ids(&[f.baseline, f.e1]),
            Some(RUN_E5),
        )
    })
}

/// Row 4b: the capturing (non-RISC-V) host's build crashes, the riscv64 build does not.
fn row_4b(f: &Facts<'_>) -> Option<Decision> {
    (f.baseline.is_some() && f.e6.is_none() && crashed(f.baseline) && f.e5_clean).then(|| {
        decision(
            "compiler-bug",
            Some("this-host-build-only"),
            LOW,
            41,
            "the build on the capturing host (not RISC-V) crashes, the riscv64 build under emulation does not: a compiler bug of that build; no RISC-V vector unit is involved",
            ids(&[f.baseline, f.v_off, f.v128, f.v256]),
            Some("compare with another build of the same version on the capturing host"),
        )
    })
}

/// Row 5: the faulting instruction is a trap.
fn row_5(f: &Facts<'_>) -> Option<Decision> {
    is(f.e2, o::TRAP).then(|| {
        decision(
            "compiler-bug",
            Some("assertion-trap"),
            MEDIUM,
            5,
            "the faulting instruction is a trap (an assertion or __builtin_trap in the compiler)",
            ids(&[f.e2]),
            Some("confirm with E5 (V off and on) and E6 (rows 3 and 4)"),
        )
    })
}

/// Row 5b: vector code of a known dialect faulted, V off (E5 or E4) removes the crash, and
/// emulation with V on crashes too (with clean emulation, row 6 decides).
fn row_5b(f: &Facts<'_>) -> Option<Decision> {
    let dialect = f.dialect?;
    let v_off_clean = f.v_off.filter(|e| e.outcome == o::NO_CRASH);
    let e4_clean = f.e4.filter(|e| e.outcome == o::NO_CRASH);
    if !(crashed(f.v_on) && (v_off_clean.is_some() || e4_clean.is_some())) {
        return None;
    }
    Some(decision(
        "host-rvv",
        Some("dialect-mismatch"),
        HIGH,
        51,
        format!("the faulting vector code is of a dialect the host's unit does not run and the crash is gone with V off: {}; the host advertises V for a unit that does not run this code", dialect.what),
        ids(&[
            f.e2,
            f.host_decided(),
            f.e3_decided(),
            v_off_clean,
            e4_clean,
            f.v_on.filter(|e| crashed(Some(e))),
        ]),
        None,
    ))
}

/// Row 6: a vector instruction faulted, or V off removes the crash; emulation is clean (or
/// did not run). 6a when the dialect is known, else 6b.
fn row_6(f: &Facts<'_>) -> Option<Decision> {
    let vector_evidence = is(f.e2, o::VECTOR) || is(f.e4, o::NO_CRASH);
    if !(vector_evidence && (f.e5_clean || !f.e5_ran)) {
        return None;
    }
    Some(decision(
        "host-rvv",
        Some(if f.dialect.is_some() {
            "dialect-mismatch"
        } else {
            "kernel-vector-context"
        }),
        if f.e5_clean { HIGH } else { LOW },
        6,
        if let Some(d) = f.dialect {
            format!(
                "{}: the host advertises V for a unit that does not run this code",
                d.what
            )
        } else {
            "the crash depends on the host's vector support (a vector instruction faulted or turning V off removes it) and not on the compiler".into()
        },
        ids(&[
            f.e2.filter(|e| e.outcome == o::VECTOR),
            f.host_decided(),
            f.e3_decided(),
            f.e4.filter(|e| e.outcome == o::NO_CRASH),
            f.v_off,
            f.v128,
            f.v256,
        ]),
        if f.e5_ran { None } else { Some(RUN_E5) },
    ))
}

/// Row 7: deterministic on the host, clean under emulation, V off does not help.
fn row_7(f: &Facts<'_>) -> Option<Decision> {
    (is(f.e1, o::DETERMINISTIC) && f.e5_clean && crashed(f.e4)).then(|| {
        decision(
            "host-kernel",
            None,
            LOW,
            7,
            "deterministic on the host, clean under emulation, and still crashing with user-space V off: the kernel (in-kernel vector use, vendor patches) is suspect",
            ids(&[f.e1, f.v_off, f.v128, f.v256, f.e4]),
            Some("rerun on a kernel without V (or with riscv_v_default_allow=0), and scan the closure for vector code (E3)"),
        )
    })
}

/// Row 8: varying or intermittent, not reproduced elsewhere.
fn row_8(f: &Facts<'_>) -> Option<Decision> {
    let elsewhere = crashed(f.v_off) || crashed(f.v_on) || crashed(f.e6);
    ((is(f.e1, o::VARYING) || is(f.e1, o::INTERMITTENT)) && !elsewhere).then(|| {
        decision(
            "nondeterministic",
            None,
            if f.e5_ran || f.e6.is_some() { MEDIUM } else { LOW },
            8,
            "the crash does not come back the same way every time and does not reproduce elsewhere: suspect hardware or the kernel",
            ids(&[f.e1, f.v_off, f.v128, f.v256, f.e6]),
            Some("memtest, EDAC counters, thermals, and a vector-context stress test (E8) on the host"),
        )
    })
}

/// Row 9: crashes under emulation only with V on.
fn row_9(f: &Facts<'_>) -> Option<Decision> {
    (is(f.v_off, o::NO_CRASH) && crashed(f.v_on)).then(|| {
        decision(
            "host-rvv",
            Some("rvv-path-or-qemu"),
            LOW,
            9,
            "under emulation it crashes only with V on: a vector code path in the binary, or a QEMU bug",
            ids(&[f.v_off, f.v_on]),
            Some("rerun E5 under a second QEMU version and scan the closure for vector code (E3)"),
        )
    })
}

/// Row 10: nothing above; the next experiment to run.
fn row_10(f: &Facts<'_>) -> Option<Decision> {
    let next = if !f.e5_ran {
        RUN_E5
    } else if f.e4.is_none() {
        "E4 and E1 on the failing RISC-V host (icepick classify there)"
    } else {
        "rerun on the failing host with more runs (E1 --runs 20)"
    };
    Some(decision(
        "insufficient-evidence",
        None,
        LOW,
        10,
        "no experiment reproduced the crash in a way that decides it",
        Vec::new(),
        Some(next),
    ))
}

#[cfg(test)]
#[path = "verdict_tests.rs"]
mod tests;
