//! The flags section as text: a Markdown section for `report.md` and a plain table for the
//! terminal.
//!
//! Why this exists: the answer must be readable in one glance by a maintainer ("needs -g,
//! -O1 or higher and a vector extension"), in the report and on the terminal alike; both
//! render the one model ([`Flags`]). Pure.

use super::markdown as md;
use crate::case::flags::{Dimension, Flags};
use crate::command::shell_join;

fn needed_word(d: &Dimension) -> &'static str {
    match d.needed {
        Some(true) => "yes",
        Some(false) => "no",
        None => "?",
    }
}

fn cell(s: &str) -> String {
    md::table_text(s)
}

fn crashes_with(d: &Dimension) -> (String, String) {
    let (same, other) = d.split();
    let other: Vec<String> = other
        .iter()
        .map(|(v, o)| format!("{v} ({})", o.as_str()))
        .collect();
    (same.join(", "), other.join(", "))
}

/// The `## Flags` section of `report.md`, from the `flags` value of `case.json`. A value
/// that is not a flags section gives a one-line note instead.
pub fn markdown_section(flags: &serde_json::Value) -> String {
    match serde_json::from_value::<Flags>(flags.clone()) {
        Ok(f) => markdown(&f),
        // serde's message quotes the offending value, which is the case's text.
        Err(e) => format!(
            "## Flags\n\nThe flags section of this case cannot be read ({}).\n",
            super::markdown::text(&e.to_string())
        ),
    }
}

/// The `## Flags` section for a typed model.
pub fn markdown(f: &Flags) -> String {
    let mut out = String::from("## Flags\n\n");
    if !f.reproduced {
        out.push_str(&format!(
            "Not analysed: {}.\n",
            md::text(
                f.note
                    .as_deref()
                    .unwrap_or("the replay command did not crash")
            )
        ));
        return out;
    }
    out.push_str("Minimal command (run in the case directory):\n\n");
    out.push_str(&md::fence("sh", &shell_join(&f.minimal_command)));
    out.push('\n');
    if !f.removed.is_empty() {
        let removed: Vec<String> = f.removed.iter().map(|r| md::code(r)).collect();
        out.push_str(&format!(
            "Not needed for the crash on the case's input: {}.\n\n",
            removed.join(", ")
        ));
    }
    out.push_str(&validity_and_probes(f, true));
    if let Some(v) = f.vector_needed {
        let march = f
            .minimal_march
            .as_deref()
            .map(|m| format!(" Minimal `-march`: {}.", md::code(m)))
            .unwrap_or_default();
        out.push_str(&format!(
            "**RISC-V vector extension needed: {}.**{march}\n\n",
            if v { "yes" } else { "no" }
        ));
    }
    out.push_str("| dimension | needed | crashes with | does not crash with | note |\n");
    out.push_str("|---|---|---|---|---|\n");
    for d in &f.dimensions {
        let (same, other) = crashes_with(d);
        out.push_str(&format!(
            "| {} | {} | {} | {} | {} |\n",
            md::table_code(&d.name),
            needed_word(d),
            cell(&same),
            cell(&other),
            cell(&d.note)
        ));
    }
    out.push_str(&format!(
        "\n{} compiler runs ({} at a time).\n",
        f.compiler_runs, f.jobs
    ));
    out
}

/// What the rows rest on: whether flags were kept to keep the code valid, and which rows
/// were probed on the original command (or could not be). Empty when there is nothing to
/// say; Markdown-escaped when `markdown`.
fn validity_and_probes(f: &Flags, markdown: bool) -> String {
    let esc = |s: &str| if markdown { md::text(s) } else { s.to_string() };
    let mut parts = Vec::new();
    if f.keep_valid {
        parts.push(
            "The original compiles with no error before the crash, so a flag was dropped only when the crash stayed free of source errors (--allow-invalid drops that rule)."
                .to_string(),
        );
    }
    if !f.on_original.is_empty() {
        parts.push(format!(
            "Rows {} were probed on the original command in its build directory: their values change what the preprocessor produces.",
            f.on_original.join(", ")
        ));
    }
    if let Some(n) = &f.original_note {
        parts.push(format!(
            "Rows whose values change what the preprocessor produces could not be probed on the original command ({n}): they are not testable on preprocessed input."
        ));
    }
    if parts.is_empty() {
        String::new()
    } else {
        format!("{}\n\n", esc(&parts.join(" ")))
    }
}

/// The plain-text table `icepick flags` prints.
pub fn text_table(f: &Flags) -> String {
    let mut out = String::new();
    if !f.reproduced {
        out.push_str(&format!(
            "not analysed: {}\n",
            f.note
                .as_deref()
                .unwrap_or("the replay command did not crash")
        ));
        return out;
    }
    out.push_str(&format!(
        "minimal command: {}\n",
        shell_join(&f.minimal_command)
    ));
    if !f.removed.is_empty() {
        out.push_str(&format!("removed:         {}\n", shell_join(&f.removed)));
    }
    let notes = validity_and_probes(f, false);
    if !notes.is_empty() {
        out.push_str(&format!("note:            {}", notes.trim_end()));
        out.push('\n');
    }
    if let Some(m) = &f.minimal_march {
        out.push_str(&format!("minimal -march:  {m}\n"));
    }
    if let Some(v) = f.vector_needed {
        out.push_str(&format!(
            "vector needed:   {}\n",
            if v { "yes" } else { "no" }
        ));
    }
    let w = f
        .dimensions
        .iter()
        .map(|d| d.name.len())
        .max()
        .unwrap_or(0)
        .max("dimension".len());
    out.push_str(&format!("\n{:<w$}  needed  result\n", "dimension"));
    for d in &f.dimensions {
        out.push_str(&format!(
            "{:<w$}  {:<6}  {}\n",
            d.name,
            needed_word(d),
            d.note
        ));
    }
    out.push_str(&format!(
        "\n{} compiler runs, {} at a time, {:.1} s\n",
        f.compiler_runs, f.jobs, f.seconds
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::case::flags::{Outcome, Tried};

    fn sample() -> Flags {
        Flags {
            minimal_command: vec!["clang".into(), "-O2".into(), "-c".into(), "input.i".into()],
            removed: vec!["-w".into()],
            minimal_march: Some("rv64iv".into()),
            vector_needed: Some(true),
            dimensions: vec![Dimension {
                name: "-O".into(),
                tried: vec![
                    Tried {
                        value: "-O0".into(),
                        outcome: Outcome::NoCrash,
                    },
                    Tried {
                        value: "-O2".into(),
                        outcome: Outcome::SameCrash,
                    },
                ],
                needed: Some(true),
                note: "crashes with -O2; not with -O0 (no-crash)".into(),
            }],
            compiler_runs: 7,
            reproduced: true,
            note: None,
            seconds: 1.5,
            jobs: 2,
            keep_valid: false,
            on_original: Vec::new(),
            original_note: None,
            farm: None,
            budget_cut: false,
        }
    }

    #[test]
    fn markdown_has_the_command_and_a_row_per_dimension() {
        let md = markdown_section(&serde_json::to_value(sample()).unwrap());
        assert!(md.starts_with("## Flags\n"));
        assert!(md.contains("clang -O2 -c input.i"));
        assert!(md.contains("| `-O` | yes | -O2 | -O0 (no-crash) |"), "{md}");
        assert!(md.contains("vector extension needed: yes"));
        assert!(md.contains("7 compiler runs"));
        assert!(!md.contains("original command"), "{md}");
        let mut f = sample();
        f.keep_valid = true;
        f.on_original = vec!["-O".into()];
        let md = markdown(&f);
        assert!(
            md.contains("free of source errors (--allow-invalid"),
            "{md}"
        );
        assert!(
            md.contains("Rows -O were probed on the original command"),
            "{md}"
        );
        f.original_note = Some("the source `x|y` is gone".into());
        let md = markdown(&f);
        assert!(md.contains("the source \\`x\\|y\\` is gone"), "{md}");
        assert!(text_table(&f).contains("note:            The original compiles"));
    }

    #[test]
    fn json_round_trips_with_kebab_outcomes() {
        let v = serde_json::to_value(sample()).unwrap();
        assert_eq!(v["dimensions"][0]["tried"][0]["outcome"], "no-crash");
        assert_eq!(v["dimensions"][0]["needed"], true);
        let back: Flags = serde_json::from_value(v).unwrap();
        assert_eq!(back, sample());
        assert!(markdown_section(&serde_json::json!({"x": 1})).contains("cannot be read"));
    }

    #[test]
    fn text_table_lines_up() {
        let t = text_table(&sample());
        assert!(t.contains("minimal command: clang -O2 -c input.i"));
        assert!(t.contains("-O         yes     crashes with -O2"), "{t}");
    }
}
