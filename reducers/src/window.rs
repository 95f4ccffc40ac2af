//! The speculation window: the scheduling policy the driver (`driver.rs`) and the simulator
//! (`simulate.rs`) share, so that a prediction made from a trace follows the same rules as a
//! real run. Candidates enter in generation order; a new one may be generated while fewer
//! than `jobs` tests are on workers and the window holds fewer than its cap of slots
//! ([`Window::new`]); the front slot is accepted when it is interesting (every slot before it having
//! failed); a slot known to be interesting cancels the ones behind it, and an accepted
//! candidate the rest.

use std::collections::VecDeque;

use crate::types::Outcome;

/// Slots a window may hold beyond one per job under success speculation (finished ones
/// waiting for an earlier test included). Few: with many workers, levels of success
/// speculation put idle workers to better use than failure speculation far behind the front.
pub(crate) const SPARE: usize = 4;

/// Slots per job a window may hold with failure speculation only (nothing else can use an
/// idle worker, so it looks further ahead).
pub(crate) const PER_JOB: usize = 4;

/// Where a candidate's test stands. `R` is what a running test needs to be cancelled.
pub(crate) enum State<R> {
    Running(R),
    Finished(Outcome),
}

/// A candidate in the window, with the caller's `payload`.
pub(crate) struct Slot<R, P> {
    pub id: u64,
    pub state: State<R>,
    pub payload: P,
    /// When its test started (seconds on the caller's clock).
    pub started: f64,
    /// How long its test took, once finished (`None`: running, or answered from a cache).
    pub took: Option<f64>,
    /// Its running test said it will likely be interesting ([`crate::CancelToken::hint`]).
    pub hinted: bool,
    /// A spare worker was lent to its running test ([`crate::CancelToken::has_spare`]).
    pub lent: bool,
    /// Its edit had failed in another test when it was generated (`speculate.rs` learns
    /// how often such retries are accepted).
    pub retry: bool,
}

/// Candidates in generation order.
pub(crate) struct Window<R, P> {
    slots: VecDeque<Slot<R, P>>,
    jobs: usize,
    /// At most this many slots.
    cap: usize,
    /// Slots known to be interesting (waiting for earlier tests): nothing generated after
    /// them can be accepted first.
    interesting: usize,
    /// Slots answered uninteresting from the cache (no test ran), waiting for an earlier test
    /// to leave the front: free, so they do not count against the cap (a fixpoint round
    /// repeats a whole round's candidates: behind one slow test they would fill the window).
    cached: usize,
}

impl<R, P> Window<R, P> {
    /// A window for `jobs` workers; `success`: levels of success speculation share them (cap
    /// `jobs` + [`SPARE`] slots; otherwise [`PER_JOB`] × `jobs`).
    pub fn new(jobs: usize, success: bool) -> Self {
        let jobs = jobs.max(1);
        Window {
            slots: VecDeque::new(),
            jobs,
            cap: if success {
                jobs + SPARE
            } else {
                PER_JOB * jobs
            },
            interesting: 0,
            cached: 0,
        }
    }

    /// True when another candidate may be generated while `busy` tests occupy workers
    /// (cancelled ones still running included): fewer than `jobs` busy, fewer slots than
    /// its cap (cache hits not counted), and none known to be interesting (a candidate after
    /// it would be thrown away for sure).
    pub fn has_room(&self, busy: usize) -> bool {
        busy < self.jobs && self.slots.len() - self.cached < self.cap && self.interesting == 0
    }

    /// Adds a candidate behind the others, its test started `at` (or answered from a cache
    /// then). A finished interesting one (a cache hit) ends the filling: nothing after it can
    /// be accepted before it.
    pub fn push(&mut self, id: u64, state: State<R>, payload: P, at: f64) -> Filling {
        let stop = matches!(state, State::Finished(Outcome::Interesting));
        self.interesting += usize::from(stop);
        self.cached += usize::from(matches!(state, State::Finished(Outcome::Uninteresting)));
        self.slots.push_back(Slot {
            id,
            state,
            payload,
            started: at,
            took: None,
            hinted: false,
            lent: false,
            retry: false,
        });
        if stop {
            Filling::Stop
        } else {
            Filling::Go
        }
    }

    /// Records the outcome of test `id`, ended `at`; the slot, when it is still in the window.
    pub fn finish(&mut self, id: u64, outcome: Outcome, at: f64) -> Option<&mut Slot<R, P>> {
        let slot = self.slots.iter_mut().find(|s| s.id == id)?;
        slot.state = State::Finished(outcome);
        slot.took = Some((at - slot.started).max(0.0));
        self.interesting += usize::from(outcome == Outcome::Interesting);
        Some(slot)
    }

    /// Pops known-uninteresting candidates off the front; returns the front one if it is
    /// interesting (all before it having failed).
    pub fn take_accepted(&mut self) -> Option<Slot<R, P>> {
        while let Some(front) = self.slots.front() {
            match front.state {
                State::Running(_) => return None,
                State::Finished(Outcome::Uninteresting) => {
                    self.pop_front_failed();
                }
                State::Finished(Outcome::Interesting) => {
                    self.interesting -= 1;
                    return self.slots.pop_front();
                }
            }
        }
        None
    }

    /// Pops known-uninteresting candidates off the front, showing each to `f`.
    pub fn pop_failed(&mut self, mut f: impl FnMut(&Slot<R, P>)) {
        while let Some(front) = self.slots.front() {
            if !matches!(front.state, State::Finished(Outcome::Uninteresting)) {
                return;
            }
            f(front);
            self.pop_front_failed();
        }
    }

    /// Pops the front slot, known to be uninteresting.
    fn pop_front_failed(&mut self) {
        if let Some(s) = self.slots.pop_front() {
            self.cached -= usize::from(is_cached(&s));
        }
    }

    /// Drops the slots behind the first one known to be interesting (none of them can be
    /// accepted before it), handing each to `drop` (to cancel its test).
    pub fn cut_behind_interesting(&mut self, mut drop: impl FnMut(Slot<R, P>)) {
        if self.interesting == 0 {
            return;
        }
        let first = self
            .slots
            .iter()
            .position(|s| matches!(s.state, State::Finished(Outcome::Interesting)));
        if let Some(i) = first {
            self.slots.drain(i + 1..).for_each(&mut drop);
            self.interesting = 1;
            self.cached = self.slots.iter().filter(|s| is_cached(s)).count();
        }
    }

    /// The slots in generation order.
    pub fn slots(&self) -> impl Iterator<Item = &Slot<R, P>> {
        self.slots.iter()
    }

    /// Marks running slot `id` as likely interesting; false when it is not in the window
    /// or no longer running.
    pub fn hint(&mut self, id: u64) -> bool {
        match self.slots.iter_mut().find(|s| s.id == id) {
            Some(s) if matches!(s.state, State::Running(_)) => {
                s.hinted = true;
                true
            }
            _ => false,
        }
    }

    /// The slot pushed last.
    pub fn last_mut(&mut self) -> Option<&mut Slot<R, P>> {
        self.slots.back_mut()
    }

    /// Marks running slot `id` as lent a spare worker, handing back its running state (what
    /// tells the test); `None` when it is not here, no longer running or already lent.
    pub fn lend(&mut self, id: u64) -> Option<&R> {
        let s = self.slots.iter_mut().find(|s| s.id == id && !s.lent)?;
        let State::Running(r) = &s.state else {
            return None;
        };
        s.lent = true;
        Some(r)
    }

    /// True when slot `id` is in the window.
    pub fn holds(&self, id: u64) -> bool {
        self.slots.iter().any(|s| s.id == id)
    }

    /// Empties the window, handing back what was in it (to cancel the running ones).
    pub fn drain(&mut self) -> impl Iterator<Item = Slot<R, P>> + '_ {
        self.interesting = 0;
        self.cached = 0;
        self.slots.drain(..)
    }

    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }
}

/// True for a slot answered uninteresting from the cache: finished without a test time.
fn is_cached<R, P>(s: &Slot<R, P>) -> bool {
    s.took.is_none() && matches!(s.state, State::Finished(Outcome::Uninteresting))
}

/// Whether the caller may go on generating after [`Window::push`].
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Filling {
    Go,
    Stop,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cache_hits_behind_a_running_front_leave_room() {
        let mut w: Window<(), ()> = Window::new(2, true);
        w.push(0, State::Running(()), (), 0.0);
        // A fixpoint round answered from the cache: far more than the cap of jobs + SPARE.
        for id in 1..40 {
            w.push(id, State::Finished(Outcome::Uninteresting), (), 0.0);
        }
        assert!(w.has_room(1));
        for id in 40..40 + (2 + SPARE as u64 - 1) {
            w.push(id, State::Running(()), (), 0.0);
        }
        assert!(!w.has_room(1), "tested slots count against the cap");
        // Finished tests still count until they leave the front.
        w.finish(40, Outcome::Uninteresting, 1.0);
        assert!(!w.has_room(1));
        w.finish(0, Outcome::Uninteresting, 1.0);
        w.pop_failed(|_| {});
        assert_eq!(w.slots().next().map(|s| s.id), Some(41));
        assert!(w.has_room(1));
    }
}
