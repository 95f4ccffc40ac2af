//! `case.json`'s `versions` section, written by the versions stage (`src/versions/`): one row
//! per compiler the case was run on.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// What one compiler did with the case. A maintainer reads "does not crash" as "works there",
/// so a compiler that rejects the code is told apart from one that compiles it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    /// Crashed with the case's signature.
    SameCrash,
    /// Crashed with the case's coarse signature (kind, message and top frame) but another
    /// exact one: the frames below the top differ, as inlining and refactoring move them
    /// between versions. The row's `signature` holds the exact id.
    SameCrashCoarse,
    /// Crashed with another signature (the row's `signature` and `detail`).
    OtherCrash,
    /// Killed at the time limit.
    Timeout,
    /// Exited non-zero without crashing: it rejects the code (the row's `detail` holds the
    /// first error).
    Rejects,
    /// Exited zero.
    Compiles,
    /// Written by icepick before rejects and compiles were told apart: either of them.
    NoCrash,
}

impl Outcome {
    /// The word `case.json` and the report's table use.
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::SameCrash => "same-crash",
            Outcome::SameCrashCoarse => "same-crash-coarse",
            Outcome::OtherCrash => "other-crash",
            Outcome::Timeout => "timeout",
            Outcome::Rejects => "rejects",
            Outcome::Compiles => "compiles",
            Outcome::NoCrash => "no-crash",
        }
    }

    /// How the summary says it, before a list of versions.
    fn phrase(self) -> &'static str {
        match self {
            Outcome::SameCrash => "crashes the same way on",
            Outcome::SameCrashCoarse => {
                "crashes with the same message and top frame (deeper frames differ) on"
            }
            Outcome::OtherCrash => "crashes otherwise on",
            Outcome::Timeout => "times out on",
            Outcome::Rejects => "rejects the code on",
            Outcome::Compiles => "compiles it on",
            Outcome::NoCrash => "does not crash (compiles or rejects, not recorded) on",
        }
    }
}

impl std::fmt::Display for Outcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One row of `versions[]` in `case.json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VersionRow {
    /// The compiler that was run.
    pub compiler: String,
    /// First line of its `--version`.
    pub version: String,
    /// Major version, when it could be read.
    pub major: Option<u32>,
    /// What it did with the case.
    pub outcome: Outcome,
    /// The signature id of another crash.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signature: Option<String>,
    /// One line saying why: the first error for `rejects`, the crash's kind and message for
    /// `other-crash`; without local paths.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

/// `v` (a subset of `tried`, both ascending) with runs of majors consecutive among those
/// tried collapsed: 14, 15, 16 of 14, 15, 16, 19 → "14–16"; 16, 19 of the same → "16–19".
fn ranges(v: &[u32], tried: &[u32]) -> String {
    let place = |m: u32| tried.iter().position(|t| *t == m);
    let mut parts = Vec::new();
    let mut i = 0;
    while i < v.len() {
        let mut j = i;
        while j + 1 < v.len()
            && matches!((place(v[j]), place(v[j + 1])), (Some(a), Some(b)) if b == a + 1)
        {
            j += 1;
        }
        parts.push(if i == j {
            v[i].to_string()
        } else {
            format!("{}–{}", v[i], v[j])
        });
        i = j + 1;
    }
    parts.join(", ")
}

/// "crashes the same way on 19; crashes otherwise on 14–16"-style summary: every outcome
/// seen, crashes first, each with the majors that gave it. "fixed by N" only when the first
/// version tried after the last same crash (exact or coarse) compiles the code: one that
/// rejects it fixed nothing a reader can tell.
pub fn summary(rows: &[VersionRow]) -> String {
    let mut by_major: BTreeMap<u32, Outcome> = BTreeMap::new();
    for r in rows {
        if let Some(m) = r.major {
            // Two compilers of one major: the worse outcome (a crash) wins.
            let o = by_major.entry(m).or_insert(r.outcome);
            *o = (*o).min(r.outcome);
        }
    }
    if by_major.is_empty() {
        return "no versioned compiler was run".into();
    }
    let tried: Vec<u32> = by_major.keys().copied().collect();
    let list = |v: &[u32]| ranges(v, &tried);
    let majors = |o: Outcome| -> Vec<u32> {
        by_major
            .iter()
            .filter(|(_, x)| **x == o)
            .map(|(m, _)| *m)
            .collect()
    };
    let mut parts = Vec::new();
    // The regression range counts a coarse match as the same crash: across versions the
    // frames below the top move while the bug stays.
    let last_same = by_major
        .iter()
        .filter(|(_, o)| matches!(o, Outcome::SameCrash | Outcome::SameCrashCoarse))
        .map(|(m, _)| *m)
        .next_back();
    let fixed = last_same.map(|last| match by_major.range(last + 1..).next() {
        None => " (the newest tried)".to_string(),
        Some((m, Outcome::Compiles)) => format!(", fixed by {m}"),
        Some(_) => String::new(),
    });
    let same = majors(Outcome::SameCrash);
    let coarse = majors(Outcome::SameCrashCoarse);
    for (o, v) in [
        (Outcome::SameCrash, &same),
        (Outcome::SameCrashCoarse, &coarse),
    ] {
        if let Some(&last) = v.last() {
            let tail = if Some(last) == last_same {
                fixed.clone().unwrap_or_default()
            } else {
                String::new()
            };
            parts.push(format!("{} {}{tail}", o.phrase(), list(v)));
        }
    }
    if parts.is_empty() {
        parts.push("no version tried crashes the same way".into());
    }
    for o in [
        Outcome::OtherCrash,
        Outcome::Timeout,
        Outcome::Rejects,
        Outcome::Compiles,
        Outcome::NoCrash,
    ] {
        let v = majors(o);
        if !v.is_empty() {
            parts.push(format!("{} {}", o.phrase(), list(&v)));
        }
    }
    parts.join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(major: u32, outcome: Outcome) -> VersionRow {
        VersionRow {
            compiler: format!("clang-{major}"),
            version: format!("Debian clang version {major}.0.1"),
            major: Some(major),
            outcome,
            signature: None,
            detail: None,
        }
    }

    use Outcome::*;

    #[test]
    fn fixed_by_only_when_the_next_version_compiles() {
        let rows = [
            row(14, SameCrash),
            row(15, SameCrash),
            row(16, SameCrash),
            row(19, Compiles),
        ];
        assert_eq!(
            summary(&rows),
            "crashes the same way on 14–16, fixed by 19; compiles it on 19"
        );
        let rows = [row(14, SameCrash), row(16, SameCrash), row(19, Rejects)];
        assert_eq!(
            summary(&rows),
            "crashes the same way on 14–16; rejects the code on 19"
        );
    }

    #[test]
    fn every_crashing_version_is_named() {
        let rows = [
            row(14, OtherCrash),
            row(15, OtherCrash),
            row(16, OtherCrash),
            row(19, SameCrash),
        ];
        assert_eq!(
            summary(&rows),
            "crashes the same way on 19 (the newest tried); crashes otherwise on 14–16"
        );
        let rows = [
            row(14, Rejects),
            row(15, Compiles),
            row(16, Compiles),
            row(19, SameCrash),
        ];
        assert_eq!(
            summary(&rows),
            "crashes the same way on 19 (the newest tried); rejects the code on 14; compiles it on 15–16"
        );
        let rows = [row(14, SameCrash), row(16, Compiles), row(19, SameCrash)];
        assert_eq!(
            summary(&rows),
            "crashes the same way on 14, 19 (the newest tried); compiles it on 16"
        );
        let rows = [row(14, SameCrash), row(19, OtherCrash)];
        assert_eq!(
            summary(&rows),
            "crashes the same way on 14; crashes otherwise on 19"
        );
        let rows = [row(14, Timeout), row(19, OtherCrash)];
        assert_eq!(
            summary(&rows),
            "no version tried crashes the same way; crashes otherwise on 19; times out on 14"
        );
    }

    #[test]
    fn a_coarse_match_is_named_apart_and_counts_for_the_range() {
        let rows = [
            row(14, SameCrashCoarse),
            row(15, SameCrashCoarse),
            row(16, SameCrash),
            row(19, Compiles),
        ];
        assert_eq!(
            summary(&rows),
            "crashes the same way on 16, fixed by 19; crashes with the same message and top \
             frame (deeper frames differ) on 14–15; compiles it on 19"
        );
        let rows = [row(14, SameCrash), row(16, SameCrashCoarse)];
        assert_eq!(
            summary(&rows),
            "crashes the same way on 14; crashes with the same message and top frame (deeper \
             frames differ) on 16 (the newest tried)"
        );
        let v = serde_json::to_value(row(14, SameCrashCoarse)).unwrap();
        assert_eq!(v["outcome"], "same-crash-coarse");
    }

    #[test]
    fn old_rows_saying_no_crash_still_load_and_claim_no_fix() {
        let old = r#"[{"compiler":"clang-14","version":"clang version 14.0.6","major":14,"outcome":"same-crash"},
                      {"compiler":"clang-19","version":"clang version 19.1.7","major":19,"outcome":"no-crash"}]"#;
        let rows: Vec<VersionRow> = serde_json::from_str(old).unwrap();
        assert_eq!(rows[1].outcome, NoCrash);
        assert_eq!(
            summary(&rows),
            "crashes the same way on 14; does not crash (compiles or rejects, not recorded) on 19"
        );
        let v = serde_json::to_value(row(14, Rejects)).unwrap();
        assert_eq!(v["outcome"], "rejects");
    }
}
