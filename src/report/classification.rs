//! The report's `## Classification` section, rendered from `case.json`'s `classification`
//! (written by the classify stage): the verdict with its row of `docs/classify.md`, the
//! experiments that ran as a table, the others one line each.

use std::fmt::Write as _;

#[cfg(test)]
use crate::case::classification::{outcome, Classification, Evidence};
use crate::case::classification::{parse_section, rule_name};

use super::markdown as md;

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
        rule_name(c.rule)
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
        c.next_step = Some(
            "E5: run a riscv64 clang of the same version under qemu-riscv64 with V off and on"
                .into(),
        );
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
