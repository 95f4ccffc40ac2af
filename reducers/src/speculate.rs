//! Success speculation: the tree of speculation levels the driver (`driver.rs`) and the
//! simulator (`simulate.rs`) share, so that a prediction follows the same rules as a real run.
//!
//! Level 0 is the window of candidates derived from the current text (`window.rs`: generated
//! assuming every earlier one fails, accepted in generation order). Every other level holds
//! the candidates a serial run would generate *if one slot of a level below is accepted*
//! (its base): the base's own pass, resumed from its `on_success` cursor on its text. Levels
//! form a tree: a level opens on the front (first undecided slot) of any level, or on a slot
//! already known to be interesting behind a front that still runs (slow failures at the front
//! do not hold back the subtree above an accepted candidate behind them), or on a running slot whose test *hinted* that it is likely
//! interesting ([`crate::CancelToken::hint`]: a compiler-crash test does so when its first
//! compiler run crashed the right way, and only the confirming runs remain, about half of an accepted
//! test's time; its odds are [`Rates::p_hinted`], how often hints came true, prior 19 in
//! 20). When a base is known to fail, or a slot before it is known to succeed, its level
//! and everything above it is thrown away (tests cancelled, wasted); a slot known to succeed
//! also cancels the slots behind it. When level 0 accepts a slot, the level on it becomes
//! level 0 with its subtree and keeps its tests; the other levels go.
//! Acceptance stays in generation order at level 0, so the output is the serial one for any
//! number of workers and any timing.
//!
//! Which test gets the next worker: the one most likely to be needed. With `p` a slot's
//! chance of being accepted, a slot is its level's accepted one with probability
//! `need(level) × Π(1 − p) over the undecided slots before it × p`, and a level's text is
//! needed with the probability of its base; a new candidate behind the undecided slots of a
//! level (or the first one of a new level on a slot) competes with that score; the highest
//! wins. `p` comes from [`Rates`]: a pass's accept rate on the serial path (with a prior of
//! 1 in 4; the failures a level decided while above level 0 count when it becomes level 0 —
//! counting only level 0's own decisions had missed most failures and overrated every pass),
//! updated by how long the test has run against the pass's recent failed and interesting
//! test times (a crash runs clang further than a parse error, so failures are mostly the
//! quick tests and a test that outlives them is likely the accepted one: it gets its level
//! first). Those times come from every test that ended, in any level, at once (level 0 lags an
//! accepted test's whole time behind the front levels, so the texts being tested would have no
//! times of their own yet); only the accept *rates* wait for the serial path, where a rate
//! counted off-path would see mostly the quick failures. Caps keep the waste sane with many workers: no
//! test whose chance of being needed is under 1 in 10^5 ([`MIN_NEED`]), at most `jobs` levels, and
//! `jobs` + 4 slots a window (cache hits not counted)
//! (4 × `jobs` without success speculation: `window.rs`).
//!
//! A slot whose edit already failed in another test (same [`Kind::edit`] key: the same bytes
//! removed, with the same few bytes around them; a next round retries a whole round's
//! edits, and levels of success speculation retry the edits of the level below) is rated by
//! how often such retries were accepted, prior 1 in 20, instead of by its pass.
//!
//! A worker can also be *lent* to a running test ([`Pick::Lend`], when the test makes use of
//! it: `Options::spare_workers`): the test then runs its confirming runs beside its first
//! compiler run instead of after it. Levels already open on a test's hint, after its first
//! run, so a loan does not hurry the chain of levels; it hurries the accepted test that
//! everything waits for: the last one of a reduction (and level 0's acceptance, which frees
//! the workers of the levels it cuts). Loans are not kept for idle workers only: with many
//! workers the speculation always has something to start, so no worker is ever idle.
//!
//! Levels do not open on *any* running slot: ranked by the same score, that spreads the
//! workers over many unlikely branches (a text has tens of about equally likely candidates).
//! Levels do open on every front, not only on likely ones: the front rule is what chains
//! one-candidate texts at no delay.

use std::collections::{HashMap, HashSet, VecDeque};

use crate::types::Outcome;
use crate::window::{Slot, State, Window};

/// The lowest log-probability of being needed a test may have to be started: a cap on the
/// wasted tests when workers are many.
const MIN_NEED: f64 = -11.5;

/// What a spare worker lent to a running test ([`Pick::Lend`]) is worth against a new test,
/// in log-odds: the lend scores its slot's chance of being accepted (and needed) times e^-2,
/// a new test its chance of being needed. A lend only shortens a test that turns out
/// accepted, and holds the worker to the end of the first run even when it does not. At 0,
/// lends take workers from new tests when workers are few; at −2, few workers are as fast as
/// without lending and many workers keep the gain (measured with the simulator).
const LEND: f64 = -2.0;

/// How many recent test times of each kind a pass keeps (texts shrink, and their tests
/// get faster: old times would mislead).
const TIMES: usize = 32;

/// Accepted and decided counts of one kind of slot on the serial path.
#[derive(Default)]
struct Counts {
    accepted: u32,
    decided: u32,
}

impl Counts {
    fn add(&mut self, accepted: bool) {
        self.accepted += u32::from(accepted);
        self.decided += 1;
    }

    /// The accept rate with a prior of `prior` weighing `weight` decisions.
    fn rate(&self, prior: f64, weight: f64) -> f64 {
        (f64::from(self.accepted) + prior * weight) / (f64::from(self.decided) + weight)
    }
}

/// What level 0's decisions taught about one pass.
#[derive(Default)]
struct PassRates {
    counts: Counts,
    /// Recent times of its failed tests and of its interesting ones, in seconds.
    fails: VecDeque<f64>,
    wins: VecDeque<f64>,
}

/// The share of `times` longer than `t`, smoothed (1 with no times at all).
fn longer(times: &VecDeque<f64>, t: f64) -> f64 {
    let over = times.iter().filter(|&&x| x > t).count();
    (over as f64 + 1.0) / (times.len() as f64 + 1.0)
}

/// What the odds know of a slot: its pass, and its edit's key (`plan::edit_key`; `None`
/// when unknown: the simulator's stand-ins for tests the trace does not hold).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Kind<'s> {
    pub pass: &'s str,
    pub edit: Option<u64>,
}

/// Accept rates and test times by pass name; how often a hint came true; and the edits
/// seen failing, with how often an edit that failed before was accepted when tried again.
#[derive(Default)]
pub(crate) struct Rates {
    passes: HashMap<String, PassRates>,
    hinted: Counts,
    /// The edit keys of failed tests, from every level (a failure is a fact about the edit
    /// on that text whether or not the level is on the serial path).
    failed_edits: HashSet<u64>,
    /// Decisions on the serial path of slots whose edit had failed in another test before
    /// (kept out of their pass's rate: a fixpoint round retries a whole round's failures).
    again: Counts,
}

impl Rates {
    /// The chance that a hinted test turns out interesting, with a prior of 19 in 20
    /// (weighing 20 decisions): a clang crash that reproduced once mostly reproduces again.
    pub fn p_hinted(&self) -> f64 {
        self.hinted.rate(0.95, 20.0).clamp(0.5, 0.99)
    }

    /// The running accept rate of `pass`, with a prior of 1 in 4 (weighing 4 decisions).
    pub fn p_pass(&self, pass: &str) -> f64 {
        let counts = self.passes.get(pass).map(|r| &r.counts);
        counts.map_or(0.25, |c| c.rate(0.25, 4.0)).clamp(0.02, 0.9)
    }

    /// Whether `kind`'s edit failed in a test that ended.
    fn failed_before(&self, kind: Kind<'_>) -> bool {
        kind.edit.is_some_and(|e| self.failed_edits.contains(&e))
    }

    /// The chance that a slot of `kind` is accepted: how often an edit that failed before
    /// was accepted when tried again (prior 1 in 20, weighing 4 decisions) if its edit failed
    /// before, else its pass's rate.
    pub fn p(&self, kind: Kind<'_>) -> f64 {
        if self.failed_before(kind) {
            self.again.rate(0.05, 4.0).clamp(0.005, 0.9)
        } else {
            self.p_pass(kind.pass)
        }
    }

    /// The chance that a test of `kind` still running after `t` seconds turns out
    /// interesting: [`Rates::p`], updated by how often its pass's failed and interesting
    /// tests ran that long (a crash takes clang further than a parse error: failures are
    /// mostly quick, so a test that runs on is likely the one accepted).
    pub fn p_after(&self, kind: Kind<'_>, t: f64) -> f64 {
        let p = self.p(kind);
        let Some(r) = self.passes.get(kind.pass).filter(|_| t > 0.0) else {
            return p;
        };
        let (win, fail) = (p * longer(&r.wins, t), (1.0 - p) * longer(&r.fails, t));
        (win / (win + fail)).clamp(p.min(0.02), 0.9)
    }

    fn entry(&mut self, pass: &str) -> &mut PassRates {
        if !self.passes.contains_key(pass) {
            self.passes.insert(pass.to_string(), PassRates::default());
        }
        self.passes.get_mut(pass).expect("inserted above")
    }

    /// Counts a decision on the serial path (level 0's, or a level's that became level 0):
    /// for the retries' rate when `retry` (its edit had failed in another test when it was
    /// generated), else for its pass's.
    fn note(&mut self, pass: &str, retry: bool, accepted: bool, hinted: bool) {
        if hinted {
            self.hinted.add(accepted);
        }
        if retry {
            self.again.add(accepted);
        } else {
            self.entry(pass).counts.add(accepted);
        }
    }

    /// Keeps what a test of `kind` that just ended, in any level, says: its time (how long
    /// a pass's failures and successes run does not depend on whether the level turns out
    /// to be on the serial path, and waiting for level 0, which lags an accepted test's
    /// whole time behind the levels in front, left the time-aware odds without the times
    /// of the texts being tested), and its edit's failure.
    fn ended(&mut self, kind: Kind<'_>, interesting: bool, t: f64) {
        if let (Some(e), false) = (kind.edit, interesting) {
            self.failed_edits.insert(e);
        }
        let e = self.entry(kind.pass);
        let times = if interesting {
            &mut e.wins
        } else {
            &mut e.fails
        };
        if times.len() == TIMES {
            times.pop_front();
        }
        times.push_back(t);
    }
}

/// One level: its window, its generator `G`, and the slot below it assumes accepted.
pub(crate) struct Level<R, P, G> {
    pub window: Window<R, P>,
    pub gen: G,
    /// The id of the slot this level assumes accepted (`None` for level 0).
    pub on: Option<u64>,
    /// The index of the level holding that slot (0 for level 0 itself); always lower than
    /// this level's own index.
    below: usize,
    /// Accepted candidates this level's text assumes beyond level 0's text.
    pub depth: u64,
    /// The failures decided in this level while it was above level 0 (pass, retry, hinted):
    /// they count for the accept rates once it is level 0 (on the serial path).
    failed: Vec<(String, bool, bool)>,
}

/// Where the next candidate goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Pick {
    /// Generate one in this level.
    Level(usize),
    /// Open a level on slot `on` of level `level` (then pick again).
    Branch { level: usize, on: u64 },
    /// Lend a spare worker to running slot `id` (then pick again): its test runs its
    /// confirming runs beside its first run ([`crate::CancelToken::has_spare`]).
    Lend(u64),
}

/// The levels of speculation, a tree rooted at level 0: `levels[0]` is the current text's,
/// and every other level's base slot is in a level of lower index.
pub(crate) struct Tree<R, P, G> {
    pub levels: Vec<Level<R, P, G>>,
    jobs: usize,
    success: bool,
    /// Spare workers may be lent to running tests ([`Pick::Lend`]).
    spare: bool,
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
            spare: false,
            rates: Rates::default(),
        }
    }

    /// The same tree, lending spare workers to running tests when that is the best use of
    /// them (`spare`: the test makes use of them).
    pub fn lending(mut self, spare: bool) -> Self {
        self.spare = spare;
        self
    }

    /// Where the next candidate goes while `busy` tests occupy workers, at time `now` (`None`:
    /// nowhere). `open` gives a generator's pass when it can generate more; `kind_of`, a
    /// slot's pass and edit.
    pub fn pick<'s>(
        &self,
        busy: usize,
        now: f64,
        open: impl Fn(&G) -> Option<&'s str>,
        kind_of: impl Fn(&P) -> Kind<'s>,
    ) -> Option<Pick> {
        if busy >= self.jobs {
            return None;
        }
        let branching = self.success && self.levels.len() < self.jobs;
        // By slot id: the log-probability that the slot is accepted from its level and its
        // level's text becomes the current one (what a level on it needs).
        let mut odds: HashMap<u64, f64> = HashMap::new();
        let based: HashSet<u64> = self.levels.iter().filter_map(|l| l.on).collect();
        let mut best: Option<(f64, Pick)> = None;
        let mut consider = |score: f64, pick: Pick| {
            let floor = matches!(pick, Pick::Level(0)) || score >= MIN_NEED;
            if floor && best.map_or(true, |(b, _)| score > b) {
                best = Some((score, pick));
            }
        };
        for (k, level) in self.levels.iter().enumerate() {
            // The log-probability that this level's text becomes the current one.
            let here = match level.on {
                None => 0.0,
                Some(on) => odds.get(&on).copied().unwrap_or(f64::NEG_INFINITY),
            };
            // Walking the window: the log-probability that every slot so far fails.
            let mut ahead = here;
            let mut front = true;
            for slot in level.window.slots() {
                let Some(p) = self.p_slot(slot, now, &kind_of) else {
                    continue;
                };
                odds.insert(slot.id, ahead + p.ln());
                // A spare worker for a test in its first run.
                let first_run = matches!(slot.state, State::Running(_)) && !slot.hinted;
                if self.spare && first_run && !slot.lent {
                    consider(ahead + p.ln() + LEND, Pick::Lend(slot.id));
                }
                // A branch on the level's front, or on a known or hinted success behind it.
                let base = std::mem::replace(&mut front, false) || p >= 1.0 || slot.hinted;
                if branching && base && !based.contains(&slot.id) {
                    let on = slot.id;
                    consider(ahead + p.ln(), Pick::Branch { level: k, on });
                }
                ahead += (1.0 - p).ln();
            }
            if open(&level.gen).is_some() && level.window.has_room(busy) {
                consider(ahead, Pick::Level(k));
            }
        }
        best.map(|b| b.1)
    }

    /// The chance that `slot` is accepted at time `now` (`None`: it failed).
    fn p_slot<'s>(
        &self,
        slot: &Slot<R, P>,
        now: f64,
        kind_of: &impl Fn(&P) -> Kind<'s>,
    ) -> Option<f64> {
        Some(match slot.state {
            State::Running(_) if slot.hinted => self.rates.p_hinted(),
            State::Running(_) => self
                .rates
                .p_after(kind_of(&slot.payload), now - slot.started),
            State::Finished(Outcome::Interesting) => 1.0,
            State::Finished(Outcome::Uninteresting) => return None,
        })
    }

    /// Adds a candidate to level `k`'s window, noting whether its edit already failed in
    /// another test (what its decision will count for: the retries' accept rate).
    pub fn push<'s>(
        &mut self,
        k: usize,
        id: u64,
        state: State<R>,
        payload: P,
        at: f64,
        kind_of: impl Fn(&P) -> Kind<'s>,
    ) {
        let retry = self.rates.failed_before(kind_of(&payload));
        let window = &mut self.levels[k].window;
        window.push(id, state, payload, at);
        if let Some(slot) = window.last_mut() {
            slot.retry = retry;
        }
    }

    /// Lends a spare worker to running slot `id` ([`Pick::Lend`]), handing back its running
    /// state (what tells the test); `None` when it cannot be lent one.
    pub fn lend(&mut self, id: u64) -> Option<&R> {
        let k = self.levels.iter().position(|l| l.window.holds(id))?;
        self.levels[k].window.lend(id)
    }

    /// Slot `id` of level `k`.
    pub fn slot(&self, k: usize, id: u64) -> Option<&Slot<R, P>> {
        self.levels.get(k)?.window.slots().find(|s| s.id == id)
    }

    /// Opens a level on slot `on` of level `k`, generating with `gen`.
    pub fn branch(&mut self, k: usize, on: u64, gen: G) {
        let depth = self.levels[k].depth + 1;
        self.levels.push(Level {
            window: Window::new(self.jobs, self.success),
            gen,
            on: Some(on),
            below: k,
            depth,
            failed: Vec::new(),
        });
    }

    /// Drops known failures off the fronts (level 0's count for the rates), the slots behind
    /// a known success, and the levels whose base can no longer be accepted (it failed, or a
    /// slot before it succeeded, or its own base level went); each dropped slot goes to
    /// `drop`.
    pub fn settle<'s>(
        &mut self,
        kind_of: impl Fn(&P) -> Kind<'s>,
        drop: &mut impl FnMut(Slot<R, P>),
    ) {
        let rates = &mut self.rates;
        for (k, level) in self.levels.iter_mut().enumerate() {
            let failed = &mut level.failed;
            level.window.pop_failed(|s| {
                if k == 0 {
                    rates.note(kind_of(&s.payload).pass, s.retry, false, s.hinted);
                } else {
                    let pass = kind_of(&s.payload).pass.to_string();
                    failed.push((pass, s.retry, s.hinted));
                }
            });
            level.window.cut_behind_interesting(&mut *drop);
        }
        let mut keep = vec![true; self.levels.len()];
        for k in 1..self.levels.len() {
            let level = &self.levels[k];
            keep[k] = keep[level.below]
                && level.on.is_some_and(|on| {
                    self.levels[level.below].window.slots().any(|s| {
                        s.id == on && !matches!(s.state, State::Finished(Outcome::Uninteresting))
                    })
                });
        }
        self.retain(&keep, drop);
    }

    /// Level 0's accepted front, if any, and whether the level on it (its continuation) took
    /// level 0's place, with the levels above it; otherwise every level is gone and the
    /// caller starts level 0 afresh.
    pub fn accept<'s>(
        &mut self,
        kind_of: impl Fn(&P) -> Kind<'s>,
        drop: &mut impl FnMut(Slot<R, P>),
    ) -> Option<(Slot<R, P>, bool)> {
        self.settle(&kind_of, drop);
        let slot = self.levels.first_mut()?.window.take_accepted()?;
        let hinted = slot.hinted;
        self.rates
            .note(kind_of(&slot.payload).pass, slot.retry, true, hinted);
        let mut keep = vec![false; self.levels.len()];
        for k in 1..self.levels.len() {
            let level = &self.levels[k];
            keep[k] = if level.below == 0 {
                level.on == Some(slot.id)
            } else {
                keep[level.below]
            };
        }
        let promoted = keep.iter().any(|&k| k);
        self.retain(&keep, drop);
        if let Some(root) = self.levels.first_mut() {
            root.on = None;
            root.below = 0;
            for (pass, retry, hinted) in root.failed.drain(..) {
                self.rates.note(&pass, retry, false, hinted);
            }
        }
        for level in &mut self.levels {
            level.depth -= 1;
        }
        Some((slot, promoted))
    }

    /// Keeps the levels marked in `keep` (a level kept has its base level kept, or is the
    /// new level 0), handing the other levels' slots to `drop`.
    fn retain(&mut self, keep: &[bool], drop: &mut impl FnMut(Slot<R, P>)) {
        if keep.iter().all(|&k| k) {
            return;
        }
        let mut index = vec![0; keep.len()];
        let mut kept = Vec::with_capacity(self.levels.len());
        for (k, mut level) in self.levels.drain(..).enumerate() {
            if keep[k] {
                index[k] = kept.len();
                level.below = index[level.below];
                kept.push(level);
            } else {
                level.window.drain().for_each(&mut *drop);
            }
        }
        self.levels = kept;
    }

    /// Starts level 0 afresh on `gen` (after an accepted candidate that was not promoted).
    pub fn restart(&mut self, gen: G) {
        self.cut_all(&mut |_| {});
        self.levels.push(Level {
            window: Window::new(self.jobs, self.success),
            gen,
            on: None,
            below: 0,
            depth: 0,
            failed: Vec::new(),
        });
    }

    /// Marks running test `id` as likely interesting, wherever it is.
    pub fn hint(&mut self, id: u64) {
        for level in &mut self.levels {
            if level.window.hint(id) {
                return;
            }
        }
    }

    /// Records the outcome of test `id`, ended `at`, wherever it is (and, for the odds, its
    /// time and whether its edit failed; `kind_of` its payload).
    pub fn finish<'s>(
        &mut self,
        id: u64,
        outcome: Outcome,
        at: f64,
        kind_of: impl Fn(&P) -> Kind<'s>,
    ) -> Option<&mut Slot<R, P>> {
        let k = self.levels.iter().position(|l| l.window.holds(id))?;
        let slot = self.levels[k].window.finish(id, outcome, at)?;
        if let Some(t) = slot.took {
            let interesting = outcome == Outcome::Interesting;
            self.rates.ended(kind_of(&slot.payload), interesting, t);
        }
        Some(slot)
    }

    /// Drops every level, handing their slots to `drop`.
    pub fn cut_all(&mut self, drop: &mut impl FnMut(Slot<R, P>)) {
        for mut level in self.levels.drain(..) {
            level.window.drain().for_each(&mut *drop);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A slot of `pass` with no edit key.
    fn k(pass: &str) -> Kind<'_> {
        Kind { pass, edit: None }
    }

    /// A decision on the serial path, with its test's time (a retry if its edit failed
    /// before it started).
    fn decide(r: &mut Rates, kind: Kind<'_>, accepted: bool, t: f64, hinted: bool) {
        let retry = r.failed_before(kind);
        r.ended(kind, accepted, t);
        r.note(kind.pass, retry, accepted, hinted);
    }

    #[test]
    fn a_test_that_outlives_its_passs_failures_is_likely_the_accepted_one() {
        let mut r = Rates::default();
        for _ in 0..20 {
            decide(&mut r, k("tokens"), false, 0.05, false);
        }
        decide(&mut r, k("tokens"), true, 0.4, false);
        decide(&mut r, k("tokens"), true, 0.5, false);
        let p = r.p_pass("tokens");
        assert!((p - 3.0 / 26.0).abs() < 1e-9, "{p}");
        // Fresh, or no older than a failure: the accept rate.
        assert_eq!(r.p_after(k("tokens"), 0.0), p);
        assert!((r.p_after(k("tokens"), 0.01) - p).abs() < 1e-9);
        // Past every failure, before the successes end: most likely a success.
        assert!(
            r.p_after(k("tokens"), 0.1) > 0.6,
            "{}",
            r.p_after(k("tokens"), 0.1)
        );
        // A pass with no times yet keeps its prior.
        assert_eq!(r.p_after(k("lines"), 5.0), r.p_pass("lines"));
    }

    #[test]
    fn recent_times_replace_old_ones() {
        let mut r = Rates::default();
        for _ in 0..TIMES {
            decide(&mut r, k("lines"), false, 2.0, false);
        }
        let before = r.p_after(k("lines"), 1.0);
        for _ in 0..TIMES {
            decide(&mut r, k("lines"), false, 0.1, false);
        }
        assert!(r.p_after(k("lines"), 1.0) > before);
        assert_eq!(r.passes["lines"].fails.len(), TIMES);
    }

    #[test]
    fn a_hinted_slot_behind_a_running_front_gets_its_level() {
        let mut tree: Tree<(), &'static str, ()> = Tree::empty(8, true);
        tree.restart(());
        let w = &mut tree.levels[0].window;
        w.push(0, State::Running(()), "crash-cut", 0.0);
        w.push(1, State::Running(()), "provenance", 0.0);
        let open = |_: &()| Some("provenance");
        let pass_of = |p: &&'static str| k(p);
        // Only the front may take a level while slot 1 runs unhinted.
        let pick = tree.pick(2, 0.1, open, pass_of);
        assert_ne!(pick, Some(Pick::Branch { level: 0, on: 1 }), "{pick:?}");
        tree.branch(0, 0, ());
        let before = tree.pick(3, 0.1, open, pass_of);
        assert_ne!(before, Some(Pick::Branch { level: 0, on: 1 }), "{before:?}");
        tree.hint(1);
        assert!(tree.levels[0].window.slots().any(|s| s.id == 1 && s.hinted));
        assert_eq!(
            tree.pick(3, 0.1, open, pass_of),
            Some(Pick::Branch { level: 0, on: 1 })
        );
        // Hinted tests that came true raise the odds; wrong ones lower them.
        let mut r = Rates::default();
        let prior = r.p_hinted();
        decide(&mut r, k("tokens"), false, 0.2, true);
        assert!(r.p_hinted() < prior);
        decide(&mut r, k("tokens"), true, 0.2, true);
        decide(&mut r, k("tokens"), true, 0.2, true);
        assert!(r.p_hinted() > 0.9);
    }

    #[test]
    fn failures_decided_above_level_0_count_once_their_level_is_level_0() {
        let mut tree: Tree<(), &'static str, ()> = Tree::empty(4, true);
        tree.restart(());
        tree.levels[0]
            .window
            .push(0, State::Running(()), "lines", 0.0);
        tree.branch(0, 0, ());
        tree.levels[1]
            .window
            .push(1, State::Running(()), "tokens", 0.0);
        let pass_of = |p: &&'static str| k(p);
        tree.finish(1, Outcome::Uninteresting, 0.1, pass_of);
        tree.settle(pass_of, &mut |_| {});
        // Level 1 may yet be thrown away: its failure does not count for the accept rate
        // yet, but its time counts for the time-aware odds at once (a tokens test still
        // running after 0.2 s has outlived the only failure seen).
        assert_eq!(tree.rates.p_pass("tokens"), 0.25);
        assert_eq!(tree.rates.passes["tokens"].fails, [0.1]);
        assert!(tree.rates.p_after(k("tokens"), 0.2) > tree.rates.p_pass("tokens"));
        tree.finish(0, Outcome::Interesting, 0.3, pass_of);
        let (slot, promoted) = tree.accept(pass_of, &mut |_| {}).unwrap();
        assert_eq!((slot.id, promoted), (0, true));
        assert!((tree.rates.p_pass("tokens") - 0.2).abs() < 1e-9);
        assert!((tree.rates.p_pass("lines") - 0.4).abs() < 1e-9);
    }

    #[test]
    fn a_retry_is_what_failed_before_the_slot_was_generated_not_after() {
        let mut tree: Tree<(), (&'static str, u64), ()> = Tree::empty(4, true);
        tree.restart(());
        let kind_of = |p: &(&'static str, u64)| Kind {
            pass: p.0,
            edit: Some(p.1),
        };
        tree.push(0, 0, State::Running(()), ("tokens", 5), 0.0, kind_of);
        tree.branch(0, 0, ());
        // Level 1 retries edit 5 on another text; it fails first.
        tree.push(1, 1, State::Running(()), ("tokens", 5), 0.0, kind_of);
        tree.finish(1, Outcome::Uninteresting, 0.1, kind_of);
        assert!(tree.rates.p(kind_of(&("tokens", 5))) < tree.rates.p_pass("tokens"));
        tree.finish(0, Outcome::Uninteresting, 0.2, kind_of);
        tree.settle(kind_of, &mut |_| {});
        // Slot 0 was generated before any failure of edit 5: its pass's decision.
        assert_eq!(tree.rates.again.decided, 0);
        assert_eq!(tree.rates.passes["tokens"].counts.decided, 1);
        // Generated now, edit 5 is a retry.
        tree.restart(());
        tree.push(
            0,
            2,
            State::Finished(Outcome::Uninteresting),
            ("tokens", 5),
            0.3,
            kind_of,
        );
        tree.settle(kind_of, &mut |_| {});
        assert_eq!(tree.rates.again.decided, 1);
    }

    #[test]
    fn an_edit_that_failed_before_is_rated_by_how_often_retried_edits_were_accepted() {
        let mut r = Rates::default();
        let edit = |e| Kind {
            pass: "tokens",
            edit: Some(e),
        };
        for e in 0..8 {
            decide(&mut r, edit(e), false, 0.05, false);
        }
        decide(&mut r, edit(8), true, 0.2, false);
        let fresh = r.p(edit(9));
        assert_eq!(fresh, r.p_pass("tokens"));
        // Edit 3 failed once: tried again (a next round), it gets the prior of retries.
        let again = r.p(edit(3));
        assert!((again - 0.05).abs() < 1e-9, "{again}");
        // Decided again: failures that repeat lower it and leave the pass's rate alone;
        // its first failure was not a retry.
        for e in 0..8 {
            decide(&mut r, edit(e), false, 0.05, false);
        }
        assert_eq!(r.p_pass("tokens"), fresh);
        assert!(r.p(edit(3)) < again);
        assert_eq!(r.p(edit(8)), fresh, "an accepted edit is no failure");
        // Retries that win raise it.
        for e in 0..8 {
            decide(&mut r, edit(e), true, 0.2, false);
        }
        assert!(r.p(edit(3)) > again);
        // The simulator's stand-ins (no key) keep their pass's rate.
        assert_eq!(r.p(k("tokens")), r.p_pass("tokens"));
    }
}
