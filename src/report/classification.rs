//! The report's `## Classification` section, rendered from `case.json`'s `classification`
//! (written by the classify stage): the verdict with its row of `docs/classify.md`, the
//! experiments that ran as a table, the others one line each.

use std::fmt::Write as _;

#[cfg(test)]
use crate::case::classification::Classification;
use crate::case::classification::{outcome, parse_section, rule_name, Evidence, FRAMES_KEPT};

use super::markdown as md;

/// Experiments about a RISC-V host or build (faulting instruction, static scan, V off,
/// emulation, host facts): they say nothing about a case with no RISC-V host, target or
/// emulator, whose report leaves them out with their next step.
fn is_riscv_experiment(id: &str) -> bool {
    ["E2", "E3", "E4", "E5", "H"]
        .iter()
        .any(|p| id == *p || id.starts_with(&format!("{p}-")))
}

/// The table of the experiments that ran, one row each, and a blank line.
fn evidence_table(ran: &[&Evidence]) -> String {
    let mut s = String::new();
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
    s
}

/// "Not run here:" and a line per experiment that could not run (empty when all ran);
/// neighbours with the same experiment and reason share a line (E5's three runs).
fn not_run_lines(not_run: &[&Evidence]) -> String {
    let mut s = String::new();
    if not_run.is_empty() {
        return s;
    }
    let _ = writeln!(s, "Not run here:");
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
    s
}

/// The report's `## Classification` section for a `classification` value (empty when the
/// value is not a classification). `riscv`: a RISC-V host, target or emulator is involved;
/// when not, the RISC-V experiments, a next step about them and the "not run here" list of
/// them are left out (an x86 frontend crash's report has none of it).
/// `case_frames`: the case's own crash's named frames (`crash::named_frames`), which a run
/// that matched only coarsely is diffed against.
pub fn markdown_section(v: &serde_json::Value, riscv: bool, case_frames: &[String]) -> String {
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
        s.push_str(&evidence_table(&ran));
        s.push_str(&frame_diffs(&c.evidence, riscv, case_frames));
    }
    // Experiments that could not run on this host are one line each, not table rows: on an
    // x86 build machine most RISC-V experiments do not apply, and the table stays readable.
    s.push_str(&not_run_lines(&not_run));
    s
}

/// For the runs that crashed with the case's coarse signature but another id (the same crash
/// on another build, host or emulator, whose frames below the top one differ): a unified
/// diff of the case's frames against theirs, one per distinct list of frames (E5's three
/// runs usually share theirs). Empty when there is none, or when a run kept no frames (a
/// case classified before evidence kept them).
fn frame_diffs(evidence: &[Evidence], riscv: bool, case_frames: &[String]) -> String {
    let lines = |frames: &[String]| -> String {
        frames
            .iter()
            .map(|f| {
                let f: String = f
                    .chars()
                    .map(|c| if c.is_control() { ' ' } else { c })
                    .collect();
                f + "\n"
            })
            .collect()
    };
    let mut groups: Vec<(Vec<&Evidence>, &[String])> = Vec::new();
    for e in evidence.iter().filter(|e| {
        e.ran
            && e.outcome == outcome::SAME_CRASH_COARSE
            && !e.frames.is_empty()
            && (riscv || !is_riscv_experiment(&e.id))
    }) {
        match groups.iter_mut().find(|(_, f)| *f == e.frames.as_slice()) {
            Some((ids, _)) => ids.push(e),
            None => groups.push((vec![e], &e.frames)),
        }
    }
    let ours = lines(case_frames);
    let mut s = String::new();
    for (runs, frames) in groups {
        let ids: Vec<&str> = runs.iter().map(|e| e.id.as_str()).collect();
        let theirs = lines(frames);
        if theirs == ours {
            continue;
        }
        let diff = similar::TextDiff::from_lines(&ours, &theirs)
            .unified_diff()
            .context_radius(FRAMES_KEPT)
            .header(
                "the case's crash",
                &format!("{} ({})", ids.join(", "), runs[0].host_or_emulator)
                    .replace(|c: char| c.is_control(), " "),
            )
            .to_string();
        let _ = writeln!(
            s,
            "{} crashed the same way only coarsely (same kind, message and top frame, another signature): their frames against the case's, innermost first:\n\n{}",
            md::text(&ids.join(", ")),
            md::fence("diff", &diff)
        );
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
            frames: Vec::new(),
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
        let md = markdown_section(&serde_json::to_value(&c).unwrap(), true, &[]);
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
        let md = markdown_section(&serde_json::to_value(&c).unwrap(), false, &[]);
        assert!(md.contains("| E1 | determinism |"), "{md}");
        for gone in ["E5", "E4", "Not run here", "qemu", "Next step"] {
            assert!(!md.contains(gone), "{gone} in:\n{md}");
        }
        c.next_step = Some("rerun with more memory".into());
        let md = markdown_section(&serde_json::to_value(&c).unwrap(), false, &[]);
        assert!(md.contains("Next step: rerun with more memory"), "{md}");
    }

    /// The same parser crash from clang 14 and clang 16 (recorded samples): same kind,
    /// phase and top frame, so the coarse ids match; below it clang 16 goes through
    /// `Sema::runWithSufficientStackSpace` (the third frame: the ids differ), and 14's stack has
    /// `CodeGenAction::ExecuteAction` where 16's has none. The report shows it as a diff.
    #[test]
    fn a_coarse_match_shows_a_diff_of_the_frames_of_a_real_pair() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let crash_of = |v: &str| {
            let dir = root.join("tests/fixtures/samples").join(v);
            let stderr = std::fs::read_to_string(dir.join("parser_crash.stderr")).unwrap();
            let rc = std::fs::read_to_string(dir.join("parser_crash.rc")).unwrap();
            let code = rc.trim().trim_start_matches("rc=").parse().ok();
            let exit = crate::crash::ExitInfo { code, signal: None };
            crate::crash::parse(&stderr, exit).unwrap()
        };
        let (c14, c16) = (crash_of("clang-14"), crash_of("clang-16"));
        let (s14, s16) = (crate::crash::signature(&c14), crate::crash::signature(&c16));
        assert_eq!(s14.coarse_id, s16.coarse_id);
        assert_ne!(s14.id, s16.id);
        let ours = crate::crash::named_frames(&c14, FRAMES_KEPT);
        let theirs = crate::crash::named_frames(&c16, FRAMES_KEPT);
        let mut e6 = evidence("E6", "cross-host replay", true, "same message and phase");
        e6.outcome = outcome::SAME_CRASH_COARSE.into();
        e6.frames = theirs.clone();
        let mut e1 = evidence("E1", "determinism", true, "serial: 5 of 5");
        // A run with exactly the case's signature shows no diff, whatever its frames.
        e1.frames = theirs.clone();
        let c = Classification {
            verdict: "compiler-bug".into(),
            subcase: None,
            confidence: "medium".into(),
            rule: 3,
            reason: "crashes here and on another build".into(),
            decided_by: vec!["E1".into(), "E6".into()],
            next_step: None,
            evidence: vec![e1, e6],
        };
        let md = markdown_section(&serde_json::to_value(&c).unwrap(), false, &ours);
        let block = md
            .split("```diff\n")
            .nth(1)
            .and_then(|b| b.split("\n```").next())
            .unwrap_or_else(|| panic!("no diff block:\n{md}"));
        assert_eq!(md.matches("```diff").count(), 1, "{md}");
        let lines: Vec<&str> = block.lines().collect();
        assert_eq!(lines[0], "--- the case's crash", "{block}");
        assert_eq!(lines[1], "+++ E6 (host x86_64)", "{block}");
        assert!(
            lines.contains(&" clang::Parser::ParseDirectDeclarator"),
            "{block}"
        );
        assert!(lines.contains(&" clang::Parser::ParseDeclGroup"), "{block}");
        assert!(
            lines.contains(&"+clang::Sema::runWithSufficientStackSpace"),
            "{block}"
        );
        assert!(
            lines.contains(&"-clang::CodeGenAction::ExecuteAction"),
            "{block}"
        );
        // Every line of the diff is context, removal or addition of a frame of one side.
        for l in &lines[3..] {
            let (sign, name) = l.split_at(1);
            let side: &[String] = if sign == "+" { &theirs } else { &ours };
            assert!(side.iter().any(|f| f == name), "{l}");
        }
        assert!(md.contains("E6 crashed the same way only coarsely"), "{md}");
        // Old cases kept no frames: no diff, no error.
        let mut old = c.clone();
        old.evidence[1].frames.clear();
        let md = markdown_section(&serde_json::to_value(&old).unwrap(), false, &ours);
        assert!(!md.contains("```diff"), "{md}");
    }

    #[test]
    fn a_value_that_is_not_a_classification_renders_nothing() {
        assert_eq!(
            markdown_section(&serde_json::json!({"verdict": 3}), false, &[]),
            ""
        );
    }
}
