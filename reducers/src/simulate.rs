//! Predicts the wall time of a reduction with any number of workers from the trace of one
//! run, by replaying the driver's speculation on a virtual clock.
//!
//! Acceptance is in generation order, so the sequence of candidates a serial run tests — the
//! *serial path* — is the same for any `jobs`: the prediction needs only each candidate's
//! outcome and the time its test took. A parallel run does more: it keeps `jobs` candidates
//! in flight, derived from the current text on the assumption that the earlier ones fail
//! (failure speculation), and — success speculation (`speculate.rs`) — derived from a
//! candidate (a level's front, or a known success behind it) on the assumption that it is
//! accepted, recursively: a tree of levels. Tests that turn out not to be needed are
//! thrown away (wasted work), and they are not in a serial trace, so the simulator stands in
//! for them:
//!
//! - failure speculation past the accepted candidate: the candidates the serial run tested
//!   next (of about the same size and pass, so of about the same cost), judged uninteresting;
//! - success speculation on a candidate that fails (an *off-path* level): candidates of the
//!   serial path's pass at that point, each charged the mean time of that pass's failed tests
//!   in the trace (the pass's typical test: most candidates fail), judged uninteresting. A real
//!   run may find some of them interesting or cached; that changes only which wasted tests
//!   run, never what is accepted.
//!
//! The time-aware accept odds (`speculate.rs`: a test that outlives its pass's failures is
//! likely a success) see the virtual clock: a slot's test started when it was generated.
//!
//! Success speculation on the candidate that the serial run accepts is exact: its level is
//! the serial continuation, with the trace's outcomes and times.
//!
//! The acceptance path of a test: a trace may record its phases (a first run, then two checks
//! that ran side by side, say a second program that must agree and confirming reruns;
//! [`Phases`]). [`Policy`] picks the model: `concurrent_acceptance` takes the recorded time;
//! otherwise the two checks are charged one after the other (the second before the third, so a
//! reject in the second costs no third). A trace without phases is taken as is.
//!
//! The scheduling rules are the driver's own ([`crate::window`], [`crate::speculate`]): when
//! another candidate may be generated and in which level, when the front one is accepted, that
//! a cache hit costs nothing and that an interesting cache hit stops its level's filling; and,
//! as the driver does, generation goes on into the next passes without waiting for a pass's
//! tests to end. The time the driver spends generating candidates is not modelled (measured by
//! `Stats::gen_time`, a few percent of a run with clang tests).

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, HashMap};

use crate::speculate::{Kind, Pick, Tree};
use crate::types::{Outcome, TestRecord, Tested};
use crate::window::{Filling, Slot, State, Window};

/// Seconds of each phase of one test's acceptance path, as a trace records them: a first run,
/// after which the test hints ([`crate::CancelToken::hint`]), and two checks that ran side by
/// side after it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Phases {
    /// The first run.
    pub first: f64,
    /// The check a sequential test runs second, when it ran.
    pub second: Option<f64>,
    /// The check a sequential test runs last, when it ran.
    pub third: Option<f64>,
    /// The phase that rejected it; `None`: accepted.
    pub rejected: Option<Phase>,
}

/// One phase of a test's acceptance path ([`Phases`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// The first run.
    First,
    /// The check run second.
    Second,
    /// The check run last.
    Third,
}

/// What to predict for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Policy {
    /// The driver's earliest policy: a pass run's tests all ended before the next pass run's
    /// candidates were generated (failure speculation only).
    pub pass_barrier: bool,
    /// The two checks after the first run side by side (as now), or one after the other.
    pub concurrent_acceptance: bool,
    /// Speculate on success too (as now).
    pub success: bool,
    /// Tests hint that they are likely interesting once their first compiler run crashed
    /// the right way ([`Step::hint_after`], `CancelToken::hint`), as now.
    pub hints: bool,
    /// A worker may be lent to a running test instead of starting a new one (scored against
    /// new tests, `speculate.rs`); the test then runs its checks beside its first compiler
    /// run ([`crate::CancelToken::has_spare`]), as now.
    pub spare: bool,
}

impl Default for Policy {
    /// The driver as it is.
    fn default() -> Self {
        Policy {
            pass_barrier: false,
            concurrent_acceptance: true,
            success: true,
            hints: true,
            spare: true,
        }
    }
}

/// One candidate of a trace.
#[derive(Clone, Debug, PartialEq)]
pub struct Step {
    /// Generation order.
    pub seq: u64,
    /// Its pass's name.
    pub pass: String,
    /// The run of a pass it belongs to.
    pub pass_run: u64,
    /// Improvements accepted (or assumed) before it was generated.
    pub base: u64,
    /// The candidate its text derives from (`None`: the input, or a trace without links).
    pub parent: Option<u64>,
    /// What its test said.
    pub outcome: Outcome,
    /// Seconds its test took; `None` for a cache hit.
    pub cost: Option<f64>,
    /// Its acceptance path's phases, when the trace has them.
    pub phases: Option<Phases>,
    /// Its [`TestRecord::edit`], when the trace has it (older traces do not).
    pub edit: Option<u64>,
}

impl Step {
    /// The step of a driver's record; `None` for a cancelled test (no outcome).
    pub fn from_record(r: &TestRecord) -> Option<Step> {
        let (outcome, cost) = match r.result {
            Tested::Interesting => (Outcome::Interesting, true),
            Tested::Uninteresting => (Outcome::Uninteresting, true),
            Tested::Cached(o) => (o, false),
            Tested::Cancelled => return None,
        };
        Some(Step {
            seq: r.seq,
            pass: r.pass.to_string(),
            pass_run: r.pass_run,
            base: r.base,
            parent: r.parent,
            outcome,
            cost: cost.then(|| r.end.saturating_sub(r.start).as_secs_f64()),
            phases: None,
            edit: Some(r.edit),
        })
    }

    /// Seconds after its start that its test hints that it is likely interesting: the end of
    /// its first compiler run, when that run crashed the right way (it was not rejected in
    /// phase `first`). `None` without phases.
    pub fn hint_after(&self) -> Option<f64> {
        let p = self.phases.as_ref()?;
        (p.rejected != Some(Phase::First)).then_some(p.first)
    }

    /// Seconds its test takes under `concurrent` acceptance or the sequential one (`None`
    /// for a cache hit): the recorded time, less the side-by-side checks, plus the checks as
    /// the model runs them.
    pub fn cost_under(&self, concurrent: bool) -> Option<f64> {
        let t = self.cost?;
        let Some(p) = self.phases.as_ref().filter(|_| !concurrent) else {
            return Some(t);
        };
        let (w, c) = (p.second.unwrap_or(0.0), p.third.unwrap_or(0.0));
        let (side_by_side, one_after) = match p.rejected {
            Some(Phase::First) => (0.0, 0.0),
            // The third was killed; in order, it would not have started.
            Some(Phase::Second) => (w, w),
            // The second was killed (or had passed); in order, it ran first.
            Some(Phase::Third) => (c, w + c),
            _ => (w.max(c), w + c),
        };
        Some((t - side_by_side).max(0.0) + one_after)
    }
}

/// The candidates a serial run tests, from the trace of a run with any `jobs`: from the input,
/// each text's candidates in generation order up to and including the one accepted (the
/// first interesting one), then the candidates derived from that one (`parent` links;
/// without them, the next `base`). Cancelled tests, the wasted ones after an accepted
/// candidate and those derived from a candidate that was not accepted are dropped. Several
/// driver runs in one trace (roots, no parent) follow each other by `base`.
pub fn serial_path(steps: &[Step]) -> Vec<Step> {
    let mut steps = steps.to_vec();
    steps.sort_by_key(|s| s.seq);
    let mut roots: BTreeMap<u64, Vec<Step>> = BTreeMap::new();
    let mut kids: HashMap<u64, Vec<Step>> = HashMap::new();
    for s in steps {
        match s.parent {
            None => roots.entry(s.base).or_default().push(s),
            Some(p) => kids.entry(p).or_default().push(s),
        }
    }
    let mut out: Vec<Step> = Vec::new();
    for (_, root) in roots {
        let mut group = root;
        loop {
            let mut accepted = None;
            for s in group {
                let interesting = s.outcome == Outcome::Interesting;
                let seq = s.seq;
                out.push(s);
                if interesting {
                    accepted = Some(seq);
                    break;
                }
            }
            match accepted.and_then(|a| kids.remove(&a)) {
                Some(next) => group = next,
                None => break,
            }
        }
    }
    out
}

/// The prediction for one number of workers.
#[derive(Clone, Debug, PartialEq)]
pub struct Prediction {
    /// Tests in flight at once.
    pub workers: usize,
    /// Predicted wall time of the tests, in seconds.
    pub wall_s: f64,
    /// Tests started.
    pub tests: u64,
    /// Tests started whose result was not on the serial path (thrown away).
    pub wasted_tests: u64,
}

/// Replays `path` (a [`serial_path`]) with `workers` tests in flight, each test taking its
/// recorded time plus `latency_s` (a remote executor's dispatch cost), under the driver's policy.
pub fn simulate(path: &[Step], workers: usize, latency_s: f64) -> Prediction {
    simulate_policy(path, workers, latency_s, &Policy::default())
}

/// [`simulate`]; with `pass_barrier`, under the driver's earliest policy, kept for comparison:
/// a pass run's tests all ended before the next pass run's candidates were generated.
pub fn simulate_with(
    path: &[Step],
    workers: usize,
    latency_s: f64,
    pass_barrier: bool,
) -> Prediction {
    let policy = Policy {
        pass_barrier,
        success: !pass_barrier,
        ..Policy::default()
    };
    simulate_policy(path, workers, latency_s, &policy)
}

/// [`simulate`] under `policy`.
pub fn simulate_policy(
    path: &[Step],
    workers: usize,
    latency_s: f64,
    policy: &Policy,
) -> Prediction {
    if policy.success && !policy.pass_barrier {
        return levels_replay(path, workers, latency_s, policy);
    }
    window_replay(path, workers, latency_s, policy)
}

/// Failure speculation only: one window (the driver before success speculation). One event
/// loop on purpose, as [`levels_replay`].
fn window_replay(path: &[Step], workers: usize, latency_s: f64, policy: &Policy) -> Prediction {
    let pass_barrier = policy.pass_barrier;
    let workers = workers.max(1);
    let cost = |i: usize| {
        path[i]
            .cost_under(policy.concurrent_acceptance)
            .map(|c| c + latency_s)
    };
    // The index of the candidate accepted from the text `path[p]` is derived from (or
    // `path.len()` when none is).
    let accepted_from = |p: usize| {
        (p..path.len())
            .find(|&i| path[i].outcome == Outcome::Interesting)
            .unwrap_or(path.len())
    };
    let mut window: Window<(), usize> = Window::new(workers, false);
    // Running tests by end time: (end, id, index); cancelled ones are skipped when popped.
    let mut running: BinaryHeap<Reverse<(Ordered, u64, usize)>> = BinaryHeap::new();
    let mut live: std::collections::HashSet<u64> = std::collections::HashSet::new();
    let (mut now, mut next_id, mut tests) = (0.0f64, 0u64, 0u64);
    let serial_tests = path.iter().filter(|s| s.cost.is_some()).count() as u64;
    // `g`: next candidate to generate; `a`: the one the current text's run accepts.
    let (mut g, mut a) = (0usize, accepted_from(0));
    // With a pass barrier: the pass run being generated.
    let mut run = path.first().map(|s| s.pass_run);
    loop {
        // As the driver's `run_pass`: accept if the front is interesting, else fill (as its
        // `fill` does) and look again.
        let mut accepted = window.take_accepted();
        while accepted.is_none() && window.has_room(live.len()) && g < path.len() {
            if pass_barrier && Some(path[g].pass_run) != run {
                // Past the accepted candidate, the old text's plan ends with its pass run:
                // wait for the acceptance. Otherwise the next pass run starts once this
                // one's window is empty.
                if g > a || !window.is_empty() {
                    break;
                }
                run = Some(path[g].pass_run);
            }
            let id = next_id;
            next_id += 1;
            // Past `a`, a candidate stands in for one of the old text's (never accepted).
            let outcome = if g <= a {
                path[g].outcome
            } else {
                Outcome::Uninteresting
            };
            match cost(g) {
                None => {
                    if window.push(id, State::Finished(outcome), g, now) == Filling::Stop {
                        g += 1;
                        break;
                    }
                }
                Some(c) => {
                    tests += 1;
                    live.insert(id);
                    running.push(Reverse((Ordered(now + c), id, g)));
                    window.push(id, State::Running(()), g, now);
                }
            }
            g += 1;
        }
        if accepted.is_none() {
            accepted = window.take_accepted();
        }
        if let Some(slot) = accepted {
            // Accepted: everything else is cancelled, generation resumes after it.
            window.drain().for_each(drop);
            live.clear();
            let i = slot.payload;
            g = i + 1;
            a = accepted_from(g);
            continue;
        }
        if g < path.len() && window.has_room(live.len()) && (!pass_barrier || window.is_empty()) {
            // Known failures left the window: generate more before waiting (as the driver).
            continue;
        }
        if window.is_empty() {
            break;
        }
        // Wait for the next test to end.
        let Some(Reverse((Ordered(end), id, i))) = running.pop() else {
            break;
        };
        if !live.remove(&id) {
            continue;
        }
        now = now.max(end);
        let outcome = if i <= a {
            path[i].outcome
        } else {
            Outcome::Uninteresting
        };
        window.finish(id, outcome, now);
    }
    Prediction {
        workers,
        wall_s: now,
        tests,
        wasted_tests: tests.saturating_sub(serial_tests),
    }
}

/// A level's generator in the replay: the next path index it stands in for, the path index
/// its text's run accepts, and whether its text is on the serial path.
struct SimGen {
    next: usize,
    accept: usize,
    on_path: bool,
}

/// A candidate in the replay: its path index and whether its outcome is the trace's.
#[derive(Clone, Copy)]
struct SimCand {
    i: usize,
    real: bool,
}

/// Failure and success speculation (the driver now), with [`crate::speculate::Tree`].
///
/// One event loop on purpose: it mirrors the driver's loop step for step (accept, fill the
/// tree, wait for the next hint or end), and every case reads and changes the same clock,
/// tree and running tests; split, the correspondence with `engine.rs` is what gets lost.
fn levels_replay(path: &[Step], workers: usize, latency_s: f64, policy: &Policy) -> Prediction {
    let workers = workers.max(1);
    let accepted_from = |p: usize| {
        (p..path.len())
            .find(|&i| path[i].outcome == Outcome::Interesting)
            .unwrap_or(path.len())
    };
    // An off-path test's cost: the mean failed test of its pass in the trace.
    let mut fails: HashMap<&str, (f64, u32)> = HashMap::new();
    for s in path {
        if let (Some(c), Outcome::Uninteresting) =
            (s.cost_under(policy.concurrent_acceptance), s.outcome)
        {
            let e = fails.entry(s.pass.as_str()).or_default();
            e.0 += c;
            e.1 += 1;
        }
    }
    let all = fails
        .values()
        .fold((0.0, 0u32), |a, b| (a.0 + b.0, a.1 + b.1));
    let mean_all = if all.1 > 0 {
        all.0 / f64::from(all.1)
    } else {
        0.0
    };
    let mean_fail = |pass: &str| fails.get(pass).map_or(mean_all, |&(t, n)| t / f64::from(n));
    // Only the trace's own tests know their edit (stand-ins are failures of no known edit).
    let kind_of = |c: &SimCand| Kind {
        pass: path[c.i].pass.as_str(),
        edit: path[c.i].edit.filter(|_| c.real),
    };
    let open = |g: &SimGen| (g.next < path.len()).then(|| path[g.next].pass.as_str());
    let serial_tests = path.iter().filter(|s| s.cost.is_some()).count() as u64;

    let mut tree: Tree<(), SimCand, SimGen> =
        Tree::empty(workers, policy.success).lending(policy.spare);
    tree.restart(SimGen {
        next: 0,
        accept: accepted_from(0),
        on_path: true,
    });
    // Running tests' hints and ends by time: (time, id, event); cancelled ones are skipped.
    let mut running: BinaryHeap<Reverse<(Ordered, u64, Ev)>> = BinaryHeap::new();
    let mut live: HashMap<u64, Live> = HashMap::new();
    let (mut now, mut next_id, mut tests) = (0.0f64, 0u64, 0u64);
    loop {
        let mut accepted = tree.accept(kind_of, &mut |s: Slot<(), SimCand>| {
            live.remove(&s.id);
        });
        if accepted.is_none() {
            // As the driver's `fill`.
            loop {
                tree.settle(kind_of, &mut |s: Slot<(), SimCand>| {
                    live.remove(&s.id);
                });
                match tree.pick(busy(&live), now, open, kind_of) {
                    None => break,
                    Some(Pick::Branch { level, on }) => {
                        let Some(base) = tree.slot(level, on) else {
                            break;
                        };
                        let c = base.payload;
                        // On the serial path only when it is the candidate the run accepts.
                        let on_path = c.real && path[c.i].outcome == Outcome::Interesting;
                        let gen = SimGen {
                            next: c.i + 1,
                            accept: if on_path {
                                accepted_from(c.i + 1)
                            } else {
                                path.len()
                            },
                            on_path,
                        };
                        tree.branch(level, on, gen);
                    }
                    Some(Pick::Lend(id)) => {
                        let Some(test) = live.get_mut(&id).filter(|_| tree.lend(id).is_some())
                        else {
                            break;
                        };
                        test.lent = true;
                        if let Some((first, rest)) = test.checks {
                            let end = (test.start + first).max(now.max(test.start) + rest);
                            if end < test.end {
                                test.end = end;
                                running.push(Reverse((Ordered(end), id, Ev::End(test.outcome))));
                            }
                        }
                    }
                    Some(Pick::Level(k)) => {
                        let level = &mut tree.levels[k];
                        let i = level.gen.next;
                        level.gen.next += 1;
                        let real = level.gen.on_path && i <= level.gen.accept;
                        let outcome = if real {
                            path[i].outcome
                        } else {
                            Outcome::Uninteresting
                        };
                        let cost = if level.gen.on_path {
                            path[i].cost_under(policy.concurrent_acceptance)
                        } else {
                            Some(mean_fail(&path[i].pass))
                        };
                        let id = next_id;
                        next_id += 1;
                        let cand = SimCand { i, real };
                        match cost {
                            None => {
                                let state = State::Finished(outcome);
                                tree.push(k, id, state, cand, now, kind_of);
                            }
                            Some(c) => {
                                tests += 1;
                                let end = now + c + latency_s;
                                running.push(Reverse((Ordered(end), id, Ev::End(outcome))));
                                // When its first run ends (only the trace's own tests hint:
                                // stand-ins are failures), and what a spare worker would run
                                // beside it: the checks after it.
                                let first = path[i].hint_after().filter(|_| real);
                                let checks = first.map(|f| (f, (c - f).max(0.0)));
                                let start = now + latency_s;
                                let test = Live {
                                    end,
                                    outcome,
                                    start,
                                    checks,
                                    lent: false,
                                };
                                live.insert(id, test);
                                let hint = first.filter(|_| policy.hints);
                                if let Some(h) = hint.map(|h| now + h + latency_s) {
                                    if h < end {
                                        running.push(Reverse((Ordered(h), id, Ev::Hint)));
                                    }
                                }
                                tree.push(k, id, State::Running(()), cand, now, kind_of);
                            }
                        }
                    }
                }
            }
            accepted = tree.accept(kind_of, &mut |s: Slot<(), SimCand>| {
                live.remove(&s.id);
            });
        }
        if let Some((slot, promoted)) = accepted {
            if !promoted {
                let next = slot.payload.i + 1;
                tree.restart(SimGen {
                    next,
                    accept: accepted_from(next),
                    on_path: true,
                });
            }
            continue;
        }
        let Some(l0) = tree.levels.first() else { break };
        if l0.window.is_empty() && open(&l0.gen).is_none() {
            break;
        }
        if tree.pick(busy(&live), now, open, kind_of).is_some() {
            continue;
        }
        // Wait for the next test to hint or end.
        let Some(Reverse((Ordered(at), id, ev))) = running.pop() else {
            break;
        };
        // Cancelled tests, and ends a spare worker moved earlier, are stale.
        match (live.get(&id), ev) {
            (None, _) => continue,
            (Some(t), Ev::End(_)) if t.end != at => continue,
            _ => {}
        }
        now = now.max(at);
        match ev {
            Ev::Hint => tree.hint(id),
            Ev::End(outcome) => {
                live.remove(&id);
                tree.finish(id, outcome, now, kind_of);
            }
        }
    }
    Prediction {
        workers,
        wall_s: now,
        tests,
        wasted_tests: tests.saturating_sub(serial_tests),
    }
}

/// A test running in the replay.
struct Live {
    /// When it ends, and how.
    end: f64,
    outcome: Outcome,
    /// When its first run starts (after the dispatch latency).
    start: f64,
    /// For an accepted test of the trace: its first run's time and the checks' after it.
    checks: Option<(f64, f64)>,
    /// A spare worker was lent to it.
    lent: bool,
}

/// Workers taken: running tests, and the spare workers lent to them.
fn busy(live: &HashMap<u64, Live>) -> usize {
    live.len() + live.values().filter(|t| t.lent).count()
}

/// What happens to a running test in the replay (a hint sorts before an end at the same time).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
enum Ev {
    Hint,
    End(Outcome),
}

/// An `f64` that orders (times are finite and non-negative).
#[derive(Clone, Copy, PartialEq, Debug)]
struct Ordered(f64);

impl Eq for Ordered {}

impl PartialOrd for Ordered {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Ordered {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&other.0)
    }
}

#[cfg(test)]
mod tests;
