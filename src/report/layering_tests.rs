//! The house's layering, checked on the source text (docs/architecture.md, "Module map").
//!
//! Stages write their section of `case.json`; the report renders from the case alone; the case
//! model knows no stage. These tests read `src/` and fail when an arrow points the wrong way:
//! `src/report/` naming a stage module, `src/case/` naming anything but the pure models it is
//! built on (`crash`, `command`), or a pipeline stage naming `report`.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// Modules the report may not name: the stages and everything above them.
const ABOVE_REPORT: &[&str] = &[
    "capture",
    "classify",
    "flags",
    "reduce",
    "versions",
    "ir",
    "store",
    "dashboard",
    "cli",
    "scanlog",
];

/// What `src/case/` may name besides itself: pure models with no processes and no stages,
/// and the exit-code table (`error`: constants and the trait that maps an error to one).
const BELOW_CASE: &[&str] = &["case", "crash", "command", "error"];

/// The pipeline stages: they write their section and never render the report.
const STAGES: &[&str] = &["capture", "classify", "flags", "reduce", "versions", "ir"];

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// Every top-level module a Rust source names through `crate::` (paths, `use crate::{a, b}`
/// groups and doc links alike).
fn crate_modules(text: &str) -> BTreeSet<String> {
    let ident = |s: &str| -> String {
        s.trim_start()
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect()
    };
    let mut found = BTreeSet::new();
    for (i, _) in text.match_indices("crate::") {
        // `some_crate::` is not this crate.
        let before = text[..i].chars().next_back();
        if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_') {
            continue;
        }
        let rest = &text[i + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let mut depth = 1;
            let mut item_start = true;
            for (j, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' => {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    ',' if depth == 1 => item_start = true,
                    _ if item_start && depth == 1 && !c.is_whitespace() => {
                        found.insert(ident(&group[j..]));
                        item_start = false;
                    }
                    _ => {}
                }
            }
        } else {
            found.insert(ident(rest));
        }
    }
    found.retain(|m| !m.is_empty());
    found
}

/// `(file, module)` for every module a file under `src/DIR` names that `allowed` refuses.
fn violations(dir: &str, allowed: impl Fn(&str) -> bool) -> Vec<(String, String)> {
    let mut files = Vec::new();
    rust_files(&src().join(dir), &mut files);
    if let Some(single) = Some(src().join(format!("{dir}.rs"))).filter(|p| p.is_file()) {
        files.push(single);
    }
    let mut bad = Vec::new();
    // This file names the modules it forbids.
    files.retain(|f| !f.ends_with("report/layering_tests.rs"));
    for f in files {
        let text = std::fs::read_to_string(&f).expect("readable source");
        for m in crate_modules(&text) {
            if !allowed(&m) {
                let rel = f.strip_prefix(src()).unwrap_or(&f).display().to_string();
                bad.push((rel, m));
            }
        }
    }
    bad
}

#[test]
fn module_names_are_read_from_paths_groups_and_links() {
    let m = crate_modules(
        "use crate::case::{Case, X};\nuse crate::{crash::{self, Crash}, exec};\n/// [`crate::capture::f`]\nsome_crate::flags::x",
    );
    assert_eq!(
        m.into_iter().collect::<Vec<_>>(),
        ["capture", "case", "crash", "exec"]
    );
}

#[test]
fn the_report_names_no_stage() {
    let bad = violations("report", |m| !ABOVE_REPORT.contains(&m));
    assert!(
        bad.is_empty(),
        "src/report/ renders from the case only; it names stage modules: {bad:?}"
    );
}

#[test]
fn the_case_model_names_only_the_models_below_it() {
    let bad = violations("case", |m| BELOW_CASE.contains(&m));
    assert!(
        bad.is_empty(),
        "src/case/ may name only {BELOW_CASE:?}; it names: {bad:?}"
    );
}

#[test]
fn no_stage_renders_the_report() {
    let mut bad = Vec::new();
    for stage in STAGES {
        bad.extend(violations(stage, |m| m != "report"));
    }
    assert!(
        bad.is_empty(),
        "stages write their section; the CLI re-renders the report: {bad:?}"
    );
}

#[test]
fn the_checks_see_the_files_they_check() {
    // A moved `src/` would make every check above pass vacuously.
    let mut files = Vec::new();
    rust_files(&src().join("report"), &mut files);
    assert!(
        files.iter().any(|f| f.ends_with("report/mod.rs")),
        "{files:?}"
    );
    assert!(violations("case", |_| false)
        .iter()
        .any(|(_, m)| m == "crash"));
}
