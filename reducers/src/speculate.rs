//! Success speculation: the levels of speculation the driver (`driver.rs`) and the simulator
//! (`simulate.rs`) share, so that a prediction follows the same rules as a real run.
//!
//! Level 0 is the window of candidates derived from the current text (`window.rs`: generated
//! assuming every earlier one fails, accepted in generation order). Level `k + 1` holds the
//! candidates a serial run would generate *if the front candidate of level `k` is accepted*:
//! the front's own pass, resumed from its `on_success` cursor on its text. A level exists only
//! while its base is the front of the level below: when that base is known to fail, the level
//! and everything above it is thrown away (its tests cancelled, wasted); when level 0 accepts
//! its front, level 1 becomes level 0 and keeps its tests. Acceptance stays in generation
//! order at level 0, so the output is the serial one for any number of workers.
//!
//! Which level gets the next worker: the one whose next candidate is most likely to be needed.
//! With `p` a pass's accept rate so far (`Rates`, learnt from level 0's decisions, with a
//! prior), a new candidate behind `j` undecided ones in level `k` is needed with probability
//! `Π p(front of each level below, when undecided) × (1 − p)^j`; the highest wins, ties go to
//! the lower level, and a new level (a branch on the top level's front) competes with `j = 0`.

use std::collections::HashMap;

use crate::driver::Outcome;
use crate::window::{Slot, State, Window};

/// Accept rates by pass name.
#[derive(Default)]
pub(crate) struct Rates(HashMap<String, (u32, u32)>);

impl Rates {
    /// The running accept rate of `pass`, with a prior of 1 in 4 (weighing 4 decisions).
    pub fn p(&self, pass: &str) -> f64 {
        let (acc, n) = self.0.get(pass).copied().unwrap_or((0, 0));
        ((f64::from(acc) + 1.0) / (f64::from(n) + 4.0)).clamp(0.02, 0.9)
    }

    fn note(&mut self, pass: &str, accepted: bool) {
        let e = match self.0.get_mut(pass) {
            Some(e) => e,
            None => self.0.entry(pass.to_string()).or_default(),
        };
        e.0 += u32::from(accepted);
        e.1 += 1;
    }
}

/// One level: its window, its generator `G`, and the id of the slot below it assumes accepted.
pub(crate) struct Level<R, P, G> {
    pub window: Window<R, P>,
    pub gen: G,
    pub on: Option<u64>,
}

/// Where the next candidate goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Pick {
    /// Generate one in this level.
    Level(usize),
    /// Open a level on the top level's front (then pick again).
    Branch,
}

/// The levels of speculation.
pub(crate) struct Tree<R, P, G> {
    pub levels: Vec<Level<R, P, G>>,
    jobs: usize,
    success: bool,
    rates: Rates,
}

impl<R, P, G> Tree<R, P, G> {
    /// No level yet ([`Tree::restart`] opens level 0); `success`: whether levels above 0
    /// may be opened.
    pub fn empty(jobs: usize, success: bool) -> Self {
        Tree {
            levels: Vec::new(),
            jobs: jobs.max(1),
            success,
            rates: Rates::default(),
        }
    }

    /// Where the next candidate goes while `busy` tests occupy workers (`None`: nowhere).
    /// `open` gives a generator's pass when it can generate more; `pass_of`, a slot's pass.
    pub fn pick<'s>(
        &self,
        busy: usize,
        open: impl Fn(&G) -> Option<&'s str>,
        pass_of: impl Fn(&P) -> &'s str,
    ) -> Option<Pick> {
        let mut best: Option<(f64, Pick)> = None;
        let mut above = 0.0f64;
        for (k, level) in self.levels.iter().enumerate() {
            if let Some(pass) = open(&level.gen).filter(|_| level.window.has_room(busy)) {
                let p = self.rates.p(pass);
                let score = above + level.window.running() as f64 * (1.0 - p).ln();
                if best.map_or(true, |(b, _)| score > b) {
                    best = Some((score, Pick::Level(k)));
                }
            }
            match level.window.front() {
                Some(f) if matches!(f.state, State::Running(_)) => {
                    above += self.rates.p(pass_of(&f.payload)).ln();
                }
                Some(f) if matches!(f.state, State::Finished(Outcome::Interesting)) => {}
                _ => return best.map(|b| b.1),
            }
        }
        let branch = self.success
            && self.levels.len() < self.jobs
            && busy < self.jobs
            && best.map_or(true, |(b, _)| above > b);
        if branch {
            return Some(Pick::Branch);
        }
        best.map(|b| b.1)
    }

    /// The top level's front, the base of a [`Pick::Branch`].
    pub fn top_front(&self) -> Option<&Slot<R, P>> {
        self.levels.last()?.window.front()
    }

    /// Opens a level on the top level's front `on`, generating with `gen`.
    pub fn branch(&mut self, on: u64, gen: G) {
        self.levels.push(Level {
            window: Window::new(self.jobs),
            gen,
            on: Some(on),
        });
    }

    /// Drops known failures off the fronts (level 0's count for the rates) and the levels
    /// whose base is no longer the front below; each dropped slot goes to `drop`.
    pub fn settle<'s>(
        &mut self,
        pass_of: impl Fn(&P) -> &'s str,
        drop: &mut impl FnMut(Slot<R, P>),
    ) {
        for k in 0..self.levels.len() {
            let rates = &mut self.rates;
            self.levels[k].window.pop_failed(|s| {
                if k == 0 {
                    rates.note(pass_of(&s.payload), false);
                }
            });
            let front = self.levels[k].window.front().map(|s| s.id);
            if k + 1 < self.levels.len() && (front.is_none() || self.levels[k + 1].on != front) {
                self.cut(k + 1, drop);
                return;
            }
        }
    }

    /// Level 0's accepted front, if any, and whether level 1 (its continuation) took level
    /// 0's place; otherwise every level is gone and the caller starts level 0 afresh.
    pub fn accept<'s>(
        &mut self,
        pass_of: impl Fn(&P) -> &'s str,
        drop: &mut impl FnMut(Slot<R, P>),
    ) -> Option<(Slot<R, P>, bool)> {
        self.settle(&pass_of, drop);
        let slot = self.levels.first_mut()?.window.take_accepted()?;
        self.rates.note(pass_of(&slot.payload), true);
        let promoted = self.levels.get(1).is_some_and(|l| l.on == Some(slot.id));
        let old = self.levels.remove(0);
        let mut w = old.window;
        w.drain().for_each(&mut *drop);
        if promoted {
            self.levels[0].on = None;
        } else {
            self.cut(0, drop);
        }
        Some((slot, promoted))
    }

    /// Starts level 0 afresh on `gen` (after an accepted candidate that was not promoted).
    pub fn restart(&mut self, gen: G) {
        self.cut(0, &mut |_| {});
        self.levels.push(Level {
            window: Window::new(self.jobs),
            gen,
            on: None,
        });
    }

    /// Records the outcome of test `id`, wherever it is.
    pub fn finish(&mut self, id: u64, outcome: Outcome) -> Option<&mut Slot<R, P>> {
        let k = self.levels.iter().position(|l| l.window.holds(id))?;
        self.levels[k].window.finish(id, outcome)
    }

    /// Drops the levels from `k` up, handing their slots to `drop`.
    pub fn cut(&mut self, k: usize, drop: &mut impl FnMut(Slot<R, P>)) {
        for mut level in self.levels.drain(k.min(self.levels.len())..) {
            level.window.drain().for_each(&mut *drop);
        }
    }
}
