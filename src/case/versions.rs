//! `case.json`'s `versions` section, written by the versions stage (`src/versions/`): one row
//! per compiler the case was run on.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// One row of `versions[]` in `case.json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VersionRow {
    /// The compiler that was run.
    pub compiler: String,
    /// First line of its `--version`.
    pub version: String,
    /// Major version, when it could be read.
    pub major: Option<u32>,
    /// `same-crash`, `other-crash`, `no-crash` or `timeout`.
    pub outcome: String,
    /// The signature id of another crash.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signature: Option<String>,
}

/// "crashes on 14–16, fixed by 19"-style summary of rows sorted by major version.
pub fn summary(rows: &[VersionRow]) -> String {
    let mut by_major: BTreeMap<u32, &str> = BTreeMap::new();
    for r in rows {
        if let Some(m) = r.major {
            by_major.insert(m, r.outcome.as_str());
        }
    }
    if by_major.is_empty() {
        return "no versioned compiler was run".into();
    }
    let crashing: Vec<u32> = by_major
        .iter()
        .filter(|(_, o)| **o == "same-crash")
        .map(|(m, _)| *m)
        .collect();
    let list = |v: &[u32]| -> String {
        // Collapse runs of consecutive majors among those tried: 14, 15, 16 → 14–16.
        let tried: Vec<u32> = by_major.keys().copied().collect();
        let mut parts = Vec::new();
        let mut i = 0;
        while i < v.len() {
            let mut j = i;
            while j + 1 < v.len() {
                let a = tried.iter().position(|t| *t == v[j]);
                let b = tried.iter().position(|t| *t == v[j + 1]);
                if matches!((a, b), (Some(a), Some(b)) if b == a + 1) {
                    j += 1;
                } else {
                    break;
                }
            }
            parts.push(if i == j {
                v[i].to_string()
            } else {
                format!("{}–{}", v[i], v[j])
            });
            i = j + 1;
        }
        parts.join(", ")
    };
    if crashing.is_empty() {
        return format!(
            "no version tried crashes this way ({})",
            list(&by_major.keys().copied().collect::<Vec<_>>())
        );
    }
    let last = *crashing.last().expect("not empty");
    let fixed: Vec<u32> = by_major
        .iter()
        .filter(|(m, o)| **m > last && **o == "no-crash")
        .map(|(m, _)| *m)
        .collect();
    let mut s = format!("crashes on {}", list(&crashing));
    if let Some(f) = fixed.first() {
        s.push_str(&format!(", fixed by {f}"));
    } else if by_major.keys().any(|m| *m > last) {
        s.push_str(", later versions fail differently");
    } else {
        s.push_str(", including the newest tried");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(major: u32, outcome: &str) -> VersionRow {
        VersionRow {
            compiler: format!("clang-{major}"),
            version: format!("Debian clang version {major}.0.1"),
            major: Some(major),
            outcome: outcome.into(),
            signature: None,
        }
    }

    #[test]
    fn summaries_read_like_a_regression_range() {
        let rows = [
            row(14, "same-crash"),
            row(15, "same-crash"),
            row(16, "same-crash"),
            row(19, "no-crash"),
        ];
        assert_eq!(summary(&rows), "crashes on 14–16, fixed by 19");
        let rows = [
            row(14, "no-crash"),
            row(16, "no-crash"),
            row(19, "same-crash"),
        ];
        assert_eq!(summary(&rows), "crashes on 19, including the newest tried");
        let rows = [
            row(14, "same-crash"),
            row(16, "no-crash"),
            row(19, "same-crash"),
        ];
        assert_eq!(
            summary(&rows),
            "crashes on 14, 19, including the newest tried"
        );
        let rows = [row(14, "same-crash"), row(19, "other-crash")];
        assert_eq!(
            summary(&rows),
            "crashes on 14, later versions fail differently"
        );
    }
}
