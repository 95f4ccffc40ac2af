//! The report's statements about the crash and the reduced case that need care to be true:
//! the Crash table (phase in clang's own words, the target triple), the
//! diagnostics clang printed before the crash and the crashing job's `-cc1` line, what the
//! reduction verified (k of n reproductions, valid or `--allow-invalid`, a back-off), which
//! code the labels describe, and whether a RISC-V host or target is involved at all.
//!
//! Why this exists: the report's readers are LLVM maintainers, and LLVM's bug guide asks for
//! the triple, the diagnostics and the cc1 command; a label or a sentence that the reduced
//! file contradicts (a crash-on-valid label on code with errors) costs the report its
//! credibility. Every string here is case data from a possibly hostile build: it goes
//! through the [`super::markdown`] helpers. Pure.

use std::fmt::Write as _;

use super::markdown::{code, fence, table_code, table_text, text};
use crate::case::Case;
use crate::command::shell_join;

/// What the case's `reduction` section says about its result (what the report may claim;
/// every field optional, so older sections read as "not recorded").
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReductionFacts {
    pub verified: bool,
    /// Source errors before the crash when the result was verified; `None` when not recorded.
    pub source_errors: Option<u32>,
    pub keep_valid: bool,
    pub allow_invalid: bool,
    /// (same signature, runs) of the final check, when recorded.
    pub verify: Option<(u32, u32)>,
    pub backed_off: Option<String>,
    /// The result is valid only with its line markers: what clang said without them.
    pub markers_needed: Option<String>,
}

impl ReductionFacts {
    pub fn of(case: &Case) -> Option<ReductionFacts> {
        let r = case.reduction_section()?;
        let verify = (r.verify_runs > 0).then_some((r.verify_same, r.verify_runs));
        Some(ReductionFacts {
            verified: r.verified,
            source_errors: case
                .reduction_records_source_errors()
                .then_some(r.source_errors),
            keep_valid: r.keep_valid,
            allow_invalid: r.allow_invalid,
            verify,
            backed_off: r.backed_off.filter(|s| !s.trim().is_empty()),
            markers_needed: r.markers_needed.clone(),
        })
    }
}

/// Whether the code the report shows has source errors before the crash: the verified
/// reduced case's, when it recorded them, else the original's.
pub fn invalid_code(case: &Case) -> bool {
    match ReductionFacts::of(case) {
        Some(ReductionFacts {
            verified: true,
            source_errors: Some(n),
            ..
        }) => n > 0,
        _ => case.crash.source_errors > 0,
    }
}

/// Case text for a code block: ANSI colour sequences dropped, other control characters
/// (but tabs) shown as spaces.
fn plain(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            if chars.peek() == Some(&'[') {
                chars.next();
                for d in chars.by_ref() {
                    if d.is_ascii_alphabetic() {
                        break;
                    }
                }
            }
            continue;
        }
        out.push(if c.is_control() && c != '\t' { ' ' } else { c });
    }
    out
}

/// The reduced case's facts, one paragraph (empty when there is nothing to say).
pub fn reduction_paragraph(case: &Case) -> String {
    let Some(r) = ReductionFacts::of(case).filter(|r| r.verified) else {
        return String::new();
    };
    let mut parts = Vec::new();
    if let Some((same, runs)) = r.verify {
        let family = case.family();
        parts.push(if family.is_deterministic() {
            format!(
                "The reduced test case reproduced the crash (same signature) {same} of {runs} times in the final check."
            )
        } else {
            format!(
                "The reduced test case crashed as the original does ({}) in {same} of {runs} runs of the final check; the original {}.",
                family.rule.words(),
                family.describe()
            )
        });
    }
    match r.source_errors {
        Some(0) if r.keep_valid => parts.push(
            "It compiles with no error before the crash, like the original: every candidate had to.".into(),
        ),
        Some(0) => parts.push("It compiles with no error before the crash.".into()),
        Some(n) if r.allow_invalid => parts.push(format!(
            "**It is invalid code**: clang prints {n} error{} before the crash, because it was reduced with `--allow-invalid` (smaller, but a crash-on-invalid reproducer).",
            if n == 1 { "" } else { "s" }
        )),
        Some(n) => parts.push(format!(
            "Clang prints {n} error{} before the crash on it.",
            if n == 1 { "" } else { "s" }
        )),
        None => {}
    }
    if let Some(why) = &r.markers_needed {
        parts.push(format!(
            "**It is valid only as a system header**: it keeps the preprocessor's line markers, which make its code a system header's (`# 1 \"…\" 1 3`); without them clang reports {}.",
            text(why)
        ));
    }
    if let Some(b) = &r.backed_off {
        parts.push(format!(
            "The smallest candidate did not reproduce every time, so this is a larger one that did: {}",
            text(b)
        ));
    }
    if parts.is_empty() {
        String::new()
    } else {
        format!("{}\n\n", parts.join(" "))
    }
}

/// The `## Crash` table rows that name what crashed: kind, message, phase (clang's words),
/// target triple.
pub fn crash_rows(case: &Case, kind: &str) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "| | |\n|---|---|");
    let _ = writeln!(s, "| kind | {} |", table_text(kind));
    if let Some(m) = &case.crash.message {
        let _ = writeln!(s, "| message | {} |", table_code(m));
    }
    if let Some(p) = crate::crash::phase_as_printed(&case.crash) {
        let _ = writeln!(s, "| phase | {} |", table_code(&p));
    }
    if let Some(t) = case.bug_info.as_ref().and_then(|b| b.triple.as_deref()) {
        let _ = writeln!(s, "| target | {} |", table_code(t));
    }
    s
}

/// The diagnostics before the crash and the crashing job's cc1 line (empty for a case
/// captured before they were recorded).
pub fn bug_info_section(case: &Case) -> String {
    let Some(b) = &case.bug_info else {
        return String::new();
    };
    let mut s = String::new();
    if b.diagnostics.is_empty() {
        let _ = writeln!(
            s,
            "The compiler printed no diagnostic before the crash (original command).\n"
        );
    } else {
        let omitted = if b.diagnostics_omitted > 0 {
            format!(", the first {} lines", b.diagnostics.len())
        } else {
            String::new()
        };
        let _ = writeln!(
            s,
            "Diagnostics the compiler printed before the crash (original command{omitted}):\n"
        );
        let body: Vec<String> = b.diagnostics.iter().map(|l| plain(l)).collect();
        let _ = writeln!(s, "{}", fence("", &body.join("\n")));
        if b.diagnostics_omitted > 0 {
            let _ = writeln!(s, "({} more lines not shown.)\n", b.diagnostics_omitted);
        }
    }
    if !b.cc1.is_empty() {
        let _ = writeln!(
            s,
            "The crashing job's {} command (from {}):\n",
            code("-cc1"),
            code("-###")
        );
        let _ = writeln!(s, "{}", fence("sh", &plain(&shell_join(&b.cc1))));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::case::tests::sample_case;
    use crate::case::BugInfo;

    #[test]
    fn labels_follow_the_reduced_case_when_it_recorded_its_errors() {
        let mut case = sample_case();
        case.crash.source_errors = 0;
        case.reduction = Some(serde_json::json!({"verified": true, "source_errors": 3}));
        assert!(invalid_code(&case));
        case.reduction = Some(serde_json::json!({"verified": false, "source_errors": 3}));
        assert!(!invalid_code(&case));
        case.crash.source_errors = 2;
        case.reduction = Some(serde_json::json!({"verified": true}));
        assert!(invalid_code(&case), "not recorded: the original's");
        case.reduction = Some(serde_json::json!({"verified": true, "source_errors": 0}));
        assert!(!invalid_code(&case));
    }

    #[test]
    fn the_reduction_paragraph_says_k_of_n_invalid_and_backed_off() {
        let mut case = sample_case();
        case.reduction = Some(serde_json::json!({
            "verified": true, "verify_runs": 5, "verify_same": 5, "source_errors": 4,
            "allow_invalid": true, "backed_off": "the 210-byte result crashed 2 of 3 times",
        }));
        let p = reduction_paragraph(&case);
        assert!(p.contains("5 of 5 times"), "{p}");
        assert!(
            p.contains("**It is invalid code**: clang prints 4 errors"),
            "{p}"
        );
        assert!(p.contains("`--allow-invalid`"), "{p}");
        assert!(
            p.contains("the 210-byte result crashed 2 of 3 times"),
            "{p}"
        );
        case.reduction = Some(serde_json::json!({
            "verified": true, "verify_runs": 3, "verify_same": 3, "source_errors": 0,
            "keep_valid": true,
        }));
        let p = reduction_paragraph(&case);
        assert!(p.contains("no error before the crash"), "{p}");
        case.reduction = Some(serde_json::json!({"verified": false}));
        assert_eq!(reduction_paragraph(&case), "");
    }

    #[test]
    fn hostile_diagnostics_stay_inside_their_block() {
        let mut case = sample_case();
        case.bug_info = Some(BugInfo {
            triple: Some("x86_64|pc`linux".into()),
            cc1: vec!["clang".into(), "-cc1".into(), "$(id)".into()],
            diagnostics: vec![
                "f.c:1:1: error: ```\u{1b}[0;1;31mred\u{1b}[0m".into(),
                "</details>".into(),
            ],
            diagnostics_omitted: 7,
        });
        let s = bug_info_section(&case);
        assert!(
            s.contains("````\nf.c:1:1: error: ```red\n</details>\n````"),
            "{s}"
        );
        assert!(s.contains("'$(id)'"), "{s}");
        assert!(s.contains("7 more lines"), "{s}");
        let rows = crash_rows(&case, "segmentation fault");
        assert!(
            rows.contains("| target | ``x86_64\\|pc`linux`` |"),
            "{rows}"
        );
    }
}
