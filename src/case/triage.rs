//! `case.json`'s `triage` section, written by the triage pipeline (`src/pipeline/`): which
//! stages ran, how each ended and how long it took, and the wall-clock budget they shared.
//!
//! A budget that ran out is a result, not an error: the stage it cut ended with its best so
//! far, the stages after it were skipped or given what was left, and this section says which,
//! so the report can say what is missing and why.

use serde::{Deserialize, Serialize};

/// The pipeline's stages, in the order they run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum StageName {
    Flags,
    Ir,
    Reduce,
    Versions,
    Classify,
}

impl StageName {
    /// All stages in pipeline order.
    pub const ALL: [StageName; 5] = [
        StageName::Flags,
        StageName::Ir,
        StageName::Reduce,
        StageName::Versions,
        StageName::Classify,
    ];

    /// The name used in `case.json`, status lines and the report.
    pub fn as_str(self) -> &'static str {
        match self {
            StageName::Flags => "flags",
            StageName::Ir => "ir",
            StageName::Reduce => "reduce",
            StageName::Versions => "versions",
            StageName::Classify => "classify",
        }
    }
}

/// How one stage ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum StageStatus {
    /// Ran to its end.
    Done,
    /// Ran, and the budget ended it early: its section holds its best so far.
    Cut,
    /// Not run: not applicable to this crash (a frontend crash has no IR), or already done
    /// by an earlier run that is being resumed.
    NotNeeded,
    /// Not run: the budget had run out before it.
    SkippedBudget,
    /// Ran and failed; `detail` says why. The pipeline went on without it.
    Failed,
    /// Ctrl-C or SIGTERM during it.
    Interrupted,
}

impl StageStatus {
    /// The kebab-case name used in JSON and tables.
    pub fn as_str(self) -> &'static str {
        match self {
            StageStatus::Done => "done",
            StageStatus::Cut => "cut",
            StageStatus::NotNeeded => "not-needed",
            StageStatus::SkippedBudget => "skipped-budget",
            StageStatus::Failed => "failed",
            StageStatus::Interrupted => "interrupted",
        }
    }
}

/// One stage's row.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StageRun {
    pub stage: StageName,
    pub status: StageStatus,
    /// Wall-clock seconds, one decimal.
    pub seconds: f64,
    /// One line: the stage's summary, or why it failed, was cut or skipped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

/// The `triage` section.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Triage {
    /// The wall-clock budget in seconds, capture included; `None`: no limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget_seconds: Option<f64>,
    /// Seconds from the start of the triage (capture included) to the end of the last stage.
    pub seconds: f64,
    /// True when the budget ended a stage early or kept one from running.
    #[serde(default)]
    pub budget_ran_out: bool,
    pub stages: Vec<StageRun>,
}

impl Triage {
    /// The row of `stage`, if it was reached.
    pub fn stage(&self, stage: StageName) -> Option<&StageRun> {
        self.stages.iter().find(|s| s.stage == stage)
    }

    /// The stages the budget cut or skipped, in order.
    pub fn budget_losses(&self) -> Vec<&StageRun> {
        self.stages
            .iter()
            .filter(|s| matches!(s.status, StageStatus::Cut | StageStatus::SkippedBudget))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_serialise_as_their_names() {
        for s in [
            StageStatus::Done,
            StageStatus::Cut,
            StageStatus::NotNeeded,
            StageStatus::SkippedBudget,
            StageStatus::Failed,
            StageStatus::Interrupted,
        ] {
            assert_eq!(
                serde_json::to_value(s).unwrap(),
                serde_json::Value::String(s.as_str().into())
            );
        }
        for s in StageName::ALL {
            assert_eq!(
                serde_json::to_value(s).unwrap(),
                serde_json::Value::String(s.as_str().into())
            );
        }
    }

    #[test]
    fn budget_losses_are_the_cut_and_skipped_stages() {
        let row = |stage, status| StageRun {
            stage,
            status,
            seconds: 1.0,
            detail: None,
        };
        let t = Triage {
            budget_seconds: Some(60.0),
            seconds: 61.0,
            budget_ran_out: true,
            stages: vec![
                row(StageName::Flags, StageStatus::Done),
                row(StageName::Ir, StageStatus::NotNeeded),
                row(StageName::Reduce, StageStatus::Cut),
                row(StageName::Versions, StageStatus::Done),
                row(StageName::Classify, StageStatus::SkippedBudget),
            ],
        };
        let lost: Vec<StageName> = t.budget_losses().iter().map(|s| s.stage).collect();
        assert_eq!(lost, vec![StageName::Reduce, StageName::Classify]);
        assert_eq!(
            t.stage(StageName::Ir).unwrap().status,
            StageStatus::NotNeeded
        );
        let back: Triage = serde_json::from_value(serde_json::to_value(&t).unwrap()).unwrap();
        assert_eq!(back, t);
    }
}
