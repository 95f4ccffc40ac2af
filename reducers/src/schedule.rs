//! Which pass runs next: the pipeline's order as a small state machine, so that the driver can
//! ask "and after this pass?" before the pass is over. `first` once; `main` in rounds until a
//! round improves nothing (or `max_rounds`); `last` once, as C-Reduce does: renaming, simpler
//! literals and the layout do not enable deletions often enough to pay for another main round.
//!
//! The state is `Copy`: the driver keeps a copy with every candidate, and when a candidate is
//! accepted it resumes from that candidate's copy (the pass it came from, now improved), which
//! is what makes speculating into the next passes safe.

use std::sync::Arc;

use crate::pass::{Pass, Pipeline};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    First(usize),
    RoundStart,
    Main(usize),
    Last(usize),
    Done,
}

/// A position in the pipeline.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Schedule {
    phase: Phase,
    /// A pass of this round improved the text beyond its layout.
    round_improved: bool,
    /// Main-phase rounds started.
    pub rounds: u64,
}

impl Schedule {
    /// The start of `pipeline`.
    pub fn start(pipeline: &Pipeline, max_rounds: Option<usize>) -> Schedule {
        let mut s = Schedule {
            phase: Phase::First(0),
            round_improved: false,
            rounds: 0,
        };
        s.settle(pipeline, max_rounds);
        s
    }

    /// This position with a plan cursor, as [`crate::Resume`] says it.
    pub fn resume_at(&self, cursor: [u64; 3]) -> crate::Resume {
        let (phase, pass) = match self.phase {
            Phase::First(i) => (0, i),
            Phase::Main(i) => (1, i),
            Phase::Last(i) => (2, i),
            // Never a pass's position; resuming from it starts over.
            Phase::RoundStart | Phase::Done => (u8::MAX, 0),
        };
        crate::Resume {
            phase,
            pass,
            rounds: self.rounds,
            round_improved: self.round_improved,
            cursor,
        }
    }

    /// The position `r` names in `pipeline`, or `None` when it names no pass of it.
    pub fn from_resume(pipeline: &Pipeline, r: &crate::Resume) -> Option<Schedule> {
        let phase = match r.phase {
            0 => Phase::First(r.pass),
            1 => Phase::Main(r.pass),
            2 => Phase::Last(r.pass),
            _ => return None,
        };
        let s = Schedule {
            phase,
            round_improved: r.round_improved,
            rounds: r.rounds,
        };
        s.pass(pipeline).is_some().then_some(s)
    }

    /// The pass to run at this position (`None`: the pipeline is over).
    pub fn pass<'p>(&self, pipeline: &'p Pipeline) -> Option<&'p Arc<dyn Pass>> {
        match self.phase {
            Phase::First(i) => pipeline.first.get(i),
            Phase::Main(i) => pipeline.main.get(i),
            Phase::Last(i) => pipeline.last.get(i),
            Phase::RoundStart | Phase::Done => None,
        }
    }

    /// The position after the current pass, which `improved` the text or not.
    pub fn next(mut self, pipeline: &Pipeline, max_rounds: Option<usize>, improved: bool) -> Self {
        // A new layout alone is no reason for another round: only whitespace changed (and a
        // round could undo it, then the layout redo it, forever).
        let counts = improved && !self.pass(pipeline).is_some_and(|p| p.only_whitespace());
        self.phase = match self.phase {
            Phase::First(i) => Phase::First(i + 1),
            Phase::Main(i) => {
                self.round_improved |= counts;
                Phase::Main(i + 1)
            }
            Phase::Last(i) => Phase::Last(i + 1),
            other => other,
        };
        self.settle(pipeline, max_rounds);
        self
    }

    /// Moves past the ends of phases to the next pass to run (or `Done`).
    fn settle(&mut self, pipeline: &Pipeline, max_rounds: Option<usize>) {
        loop {
            self.phase = match self.phase {
                Phase::First(i) if i >= pipeline.first.len() => Phase::RoundStart,
                Phase::RoundStart => {
                    if max_rounds.is_some_and(|m| self.rounds >= m as u64) {
                        Phase::Done
                    } else {
                        self.rounds += 1;
                        self.round_improved = false;
                        Phase::Main(0)
                    }
                }
                Phase::Main(i) if i >= pipeline.main.len() => {
                    if self.round_improved {
                        Phase::RoundStart
                    } else {
                        Phase::Last(0)
                    }
                }
                Phase::Last(i) if i >= pipeline.last.len() => Phase::Done,
                _ => return,
            };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{Empty, Plan};

    /// A pass known by its name only (`normalise` changes only whitespace).
    #[derive(Debug)]
    struct Named(&'static str);

    impl Pass for Named {
        fn name(&self) -> &'static str {
            self.0
        }
        fn only_whitespace(&self) -> bool {
            self.0 == "normalise"
        }
        fn plan(&self, _: &[u8]) -> Box<dyn Plan> {
            Box::new(Empty)
        }
    }

    fn passes(names: &[&'static str]) -> Vec<Arc<dyn Pass>> {
        names
            .iter()
            .map(|&n| Arc::new(Named(n)) as Arc<dyn Pass>)
            .collect()
    }

    fn names(
        p: &Pipeline,
        improved: &dyn Fn(usize, &str) -> bool,
        max: Option<usize>,
    ) -> Vec<&'static str> {
        let mut s = Schedule::start(p, max);
        let mut out = Vec::new();
        while let Some(pass) = s.pass(p) {
            let k = out.len();
            out.push(pass.name());
            s = s.next(p, max, improved(k, pass.name()));
            assert!(out.len() < 100);
        }
        out
    }

    #[test]
    fn rounds_repeat_until_one_improves_nothing_then_last_once() {
        let p = Pipeline {
            first: passes(&["provenance"]),
            main: passes(&["lines", "tokens"]),
            last: passes(&["rename", "normalise"]),
        };
        // Lines improves in the first round only; rename improves, and no round follows it.
        let got = names(
            &p,
            &|k, pass| (k == 1 && pass == "lines") || (k == 5 && pass == "rename"),
            None,
        );
        assert_eq!(
            got,
            [
                "provenance",
                "lines",
                "tokens",
                "lines",
                "tokens",
                "rename",
                "normalise"
            ]
        );
        // A layout alone starts no round.
        let got = names(&p, &|_, pass| pass == "normalise", None);
        assert_eq!(
            got,
            ["provenance", "lines", "tokens", "rename", "normalise"]
        );
        // max_rounds stops before a round.
        let got = names(&p, &|_, pass| pass == "lines", Some(2));
        assert_eq!(got, ["provenance", "lines", "tokens", "lines", "tokens"]);
    }
}
