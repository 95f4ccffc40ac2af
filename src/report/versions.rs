//! The report's `## Versions` section, rendered from `case.json`'s `versions` (written by the
//! versions stage): the regression range in words and one row per compiler.

use std::fmt::Write as _;

use crate::case::versions::{summary, VersionRow};
use crate::case::Case;

use super::markdown::{table_code, table_text, text};

/// `## Versions`, or nothing when the case has no readable `versions` section.
pub fn markdown_section(case: &Case) -> String {
    let mut s = String::new();
    if let Some(rows) = case
        .versions
        .as_ref()
        .and_then(|v| serde_json::from_value::<Vec<VersionRow>>(v.clone()).ok())
    {
        let _ = writeln!(s, "## Versions\n");
        let _ = writeln!(s, "{}.\n", text(&summary(&rows)));
        let _ = writeln!(
            s,
            "| version | outcome | first error or other crash |\n|---|---|---|"
        );
        for r in &rows {
            let _ = writeln!(
                s,
                "| {} | {} | {} |",
                table_text(&r.version),
                r.outcome.as_str(),
                r.detail.as_deref().map(table_code).unwrap_or_default()
            );
        }
        let _ = writeln!(s);
    }
    s
}
