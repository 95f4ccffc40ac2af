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
//! The acceptance path of a test: a trace of a case's reduction records its phases (first
//! compiler run, witness, confirming runs; [`Phases`]), which ran side by side. [`Policy`]
//! picks the model: `concurrent_acceptance` takes the recorded time; otherwise the witness and
//! the confirming runs are charged one after the other (the earlier driver's order: witness
//! first, so a witness reject costs no confirming run). A trace without phases is taken as is.
//!
//! The scheduling rules are the driver's own ([`crate::window`], [`crate::speculate`]): when
//! another candidate may be generated and in which level, when the front one is accepted, that
//! a cache hit costs nothing and that an interesting cache hit stops its level's filling; and,
//! as the driver does, generation goes on into the next passes without waiting for a pass's
//! tests to end. The time the driver spends generating candidates is not modelled (measured by
//! `Stats::gen_time`, a few percent of a run with clang tests).

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, HashMap, HashSet};

use crate::driver::{Outcome, TestRecord, Tested};
use crate::speculate::{Pick, Tree};
use crate::window::{Filling, Slot, State, Window};

/// Seconds of each phase of one test's acceptance path, as a case's trace records them (the
/// witness and the confirming runs ran side by side).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Phases {
    /// The first compiler run.
    pub first: f64,
    /// The witness run, when one ran.
    pub witness: Option<f64>,
    /// The confirming runs, when any ran.
    pub confirm: Option<f64>,
    /// The phase that rejected it: `first`, `witness`, `confirm`; `None`: accepted.
    pub rejected: Option<String>,
}

/// What to predict for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Policy {
    /// The driver's earliest policy: a pass run's tests all ended before the next pass run's
    /// candidates were generated (failure speculation only).
    pub pass_barrier: bool,
    /// The witness and the confirming runs side by side (as now), or one after the other.
    pub concurrent_acceptance: bool,
    /// Speculate on success too (as now).
    pub success: bool,
    /// Tests hint that they are likely interesting once their first compiler run crashed
    /// the right way ([`Step::hint_after`], `CancelToken::hint`), as now.
    pub hints: bool,
}

impl Default for Policy {
    /// The driver as it is.
    fn default() -> Self {
        Policy {
            pass_barrier: false,
            concurrent_acceptance: true,
            success: true,
            hints: true,
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
    pub outcome: Outcome,
    /// Seconds its test took; `None` for a cache hit.
    pub cost: Option<f64>,
    /// Its acceptance path's phases, when the trace has them.
    pub phases: Option<Phases>,
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
        })
    }

    /// Seconds after its start that its test hints that it is likely interesting: the end of
    /// its first compiler run, when that run crashed the right way (it was not rejected in
    /// phase `first`). `None` without phases.
    pub fn hint_after(&self) -> Option<f64> {
        let p = self.phases.as_ref()?;
        (p.rejected.as_deref() != Some("first")).then_some(p.first)
    }

    /// Seconds its test takes under `concurrent` acceptance or the sequential one (`None`
    /// for a cache hit): the recorded time, less the side-by-side checks, plus the checks as
    /// the model runs them.
    pub fn cost_under(&self, concurrent: bool) -> Option<f64> {
        let t = self.cost?;
        let Some(p) = self.phases.as_ref().filter(|_| !concurrent) else {
            return Some(t);
        };
        let (w, c) = (p.witness.unwrap_or(0.0), p.confirm.unwrap_or(0.0));
        let (side_by_side, one_after) = match p.rejected.as_deref() {
            Some("first") => (0.0, 0.0),
            // The confirming runs were killed; in order, none would have started.
            Some("witness") => (w, w),
            // The witness was killed (or had passed); in order, it ran first.
            Some("confirm") => (c, w + c),
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
    pub workers: usize,
    /// Predicted wall time of the tests, in seconds.
    pub wall_s: f64,
    /// Tests started.
    pub tests: u64,
    /// Tests started whose result was not on the serial path (thrown away).
    pub wasted_tests: u64,
}

/// Replays `path` (a [`serial_path`]) with `workers` tests in flight, each test taking its
/// recorded time plus `latency_s` (a farm's dispatch cost), under the driver's policy.
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

/// Failure speculation only: one window (the driver before success speculation).
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
    let pass_of = |c: &SimCand| path[c.i].pass.as_str();
    let open = |g: &SimGen| (g.next < path.len()).then(|| path[g.next].pass.as_str());
    let serial_tests = path.iter().filter(|s| s.cost.is_some()).count() as u64;

    let mut tree: Tree<(), SimCand, SimGen> = Tree::empty(workers, policy.success);
    tree.restart(SimGen {
        next: 0,
        accept: accepted_from(0),
        on_path: true,
    });
    // Running tests' hints and ends by time: (time, id, event); cancelled ones are skipped.
    let mut running: BinaryHeap<Reverse<(Ordered, u64, Ev)>> = BinaryHeap::new();
    let mut live: HashSet<u64> = HashSet::new();
    let (mut now, mut next_id, mut tests) = (0.0f64, 0u64, 0u64);
    loop {
        let mut accepted = tree.accept(pass_of, &mut |s: Slot<(), SimCand>| {
            live.remove(&s.id);
        });
        if accepted.is_none() {
            // As the driver's `fill`.
            loop {
                tree.settle(pass_of, &mut |s: Slot<(), SimCand>| {
                    live.remove(&s.id);
                });
                match tree.pick(live.len(), now, open, pass_of) {
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
                                level.window.push(id, State::Finished(outcome), cand, now);
                            }
                            Some(c) => {
                                tests += 1;
                                live.insert(id);
                                let end = now + c + latency_s;
                                running.push(Reverse((Ordered(end), id, Ev::End(outcome))));
                                // Only the trace's own tests hint (stand-ins are failures).
                                let hint = path[i].hint_after().filter(|_| real && policy.hints);
                                if let Some(h) = hint.map(|h| now + h + latency_s) {
                                    if h < end {
                                        running.push(Reverse((Ordered(h), id, Ev::Hint)));
                                    }
                                }
                                level.window.push(id, State::Running(()), cand, now);
                            }
                        }
                    }
                }
            }
            accepted = tree.accept(pass_of, &mut |s: Slot<(), SimCand>| {
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
        if tree.pick(live.len(), now, open, pass_of).is_some() {
            continue;
        }
        // Wait for the next test to hint or end.
        let Some(Reverse((Ordered(at), id, ev))) = running.pop() else {
            break;
        };
        if !live.contains(&id) {
            continue;
        }
        now = now.max(at);
        match ev {
            Ev::Hint => tree.hint(id),
            Ev::End(outcome) => {
                live.remove(&id);
                tree.finish(id, outcome, now, pass_of);
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
mod tests {
    use super::*;

    fn step(seq: u64, run: u64, base: u64, interesting: bool, cost: Option<f64>) -> Step {
        Step {
            seq,
            pass: "lines".into(),
            pass_run: run,
            base,
            parent: None,
            outcome: if interesting {
                Outcome::Interesting
            } else {
                Outcome::Uninteresting
            },
            cost,
            phases: None,
        }
    }

    #[test]
    fn one_worker_takes_the_sum_of_the_tests() {
        let path = vec![
            step(0, 0, 0, false, Some(1.0)),
            step(1, 0, 0, true, Some(2.0)),
            step(2, 0, 1, false, None),
            step(3, 1, 1, false, Some(0.5)),
        ];
        let p = simulate(&path, 1, 0.0);
        assert_eq!(p.wall_s, 3.5);
        assert_eq!((p.tests, p.wasted_tests), (3, 0));
        assert_eq!(simulate(&path, 1, 0.25).wall_s, 4.25);
    }

    #[test]
    fn failures_run_side_by_side_and_work_after_a_success_is_wasted() {
        // Eight failures of 1 s, then a success, then (from the new text) four failures.
        let mut path: Vec<Step> = (0..8).map(|i| step(i, 0, 0, false, Some(1.0))).collect();
        path.push(step(8, 0, 0, true, Some(1.0)));
        path.extend((9..13).map(|i| step(i, 0, 1, false, Some(1.0))));
        let no_success = Policy {
            success: false,
            ..Policy::default()
        };
        let p = simulate_policy(&path, 4, 0.0, &no_success);
        // Batches: 0-3, 4-7, 8 with stand-ins 9-11 (wasted), then 9-12.
        assert_eq!(p.wall_s, 4.0);
        assert_eq!(p.wasted_tests, 3);
        assert_eq!(simulate(&path, 1, 0.0).wall_s, 13.0);
    }

    #[test]
    fn the_next_pass_run_starts_while_the_last_tests_run() {
        let path = vec![
            step(0, 0, 0, false, Some(3.0)),
            step(1, 1, 0, false, Some(1.0)),
            step(2, 1, 0, false, Some(1.0)),
        ];
        assert_eq!(simulate(&path, 8, 0.0).wall_s, 3.0);
        assert_eq!(simulate_with(&path, 8, 0.0, true).wall_s, 4.0);
    }

    #[test]
    fn cache_hits_that_fill_the_window_do_not_end_the_replay() {
        let mut path = vec![step(0, 0, 0, false, Some(1.0))];
        path.extend((1..11).map(|i| step(i, 0, 0, false, None)));
        path.push(step(11, 1, 0, false, Some(2.0)));
        for pass_barrier in [false, true] {
            let p = simulate_with(&path, 1, 0.0, pass_barrier);
            assert_eq!((p.wall_s, p.tests), (3.0, 2), "barrier {pass_barrier}");
        }
    }

    #[test]
    fn without_success_speculation_the_levels_replay_is_the_window_replay() {
        // Pseudo-random paths: the level code with one level must follow the window rules.
        let mut x: u64 = 0x2545_f491_4f6c_dd1d;
        let mut rnd = move |n: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % n
        };
        for _ in 0..50 {
            let (mut base, mut run) = (0, 0);
            let mut path = Vec::new();
            for seq in 0..(20 + rnd(60)) {
                let interesting = rnd(6) == 0;
                let cost = (rnd(5) > 0).then(|| 0.5 + rnd(20) as f64 / 4.0);
                path.push(step(seq, run, base, interesting, cost));
                base += u64::from(interesting);
                run += u64::from(rnd(8) == 0);
            }
            let no_success = Policy {
                success: false,
                ..Policy::default()
            };
            for w in [1, 2, 3, 8] {
                let a = window_replay(&path, w, 0.0, &no_success);
                let b = levels_replay(&path, w, 0.0, &no_success);
                assert_eq!(a, b, "workers {w}, path {path:?}");
                // Success speculation never loses a serial test, and with one worker it is
                // the serial run.
                let c = simulate(&path, w, 0.0);
                assert!(c.wall_s <= a.wall_s + 1e-9 || w > 1, "{c:?} {a:?}");
                if w == 1 {
                    assert_eq!(c, a);
                }
            }
        }
    }

    #[test]
    fn success_speculation_runs_a_chain_of_accepted_tests_side_by_side() {
        // Five accepted candidates in a row, each derived from the one before: failure
        // speculation runs them one after the other; success speculation all at once.
        let path: Vec<Step> = (0..5).map(|i| step(i, 0, i, true, Some(2.0))).collect();
        let old = simulate_with(&path, 64, 0.0, true);
        assert_eq!(old.wall_s, 10.0);
        // With 64 workers every level fits (a few stand-ins of failure speculation each).
        assert_eq!(simulate(&path, 64, 0.0).wall_s, 2.0);
        // With 8, the levels share them: still faster than one at a time.
        assert!(simulate(&path, 8, 0.0).wall_s < 10.0);
    }

    #[test]
    fn a_known_success_behind_a_slow_front_gets_its_level_at_once() {
        // The front fails after 4 s; the candidate behind it is accepted after 1 s, and three
        // more accepted candidates follow from it. A chain of levels opens only on a front,
        // so the three would wait for the slow failure (done at 5 s); the tree opens a level
        // on the known success behind it at 1 s, and they are done before the front is.
        let mut path = vec![
            step(0, 0, 0, false, Some(4.0)),
            step(1, 0, 0, true, Some(1.0)),
        ];
        path.extend((2..5).map(|i| step(i, 0, i - 1, true, Some(1.0))));
        let p = simulate(&path, 16, 0.0);
        assert_eq!(p.wall_s, 4.0, "{p:?}");
        assert_eq!(simulate(&path, 1, 0.0).wall_s, 8.0);
    }

    #[test]
    fn a_hinted_success_behind_a_slow_front_gets_its_level_before_it_ends() {
        // Three texts, each a slow failure (2 s) then the accepted candidate (1 s), which
        // hints after 0.25 s (its first compiler run crashed the right way). Without hints a
        // level opens on each accepted candidate when it ends (known success): the texts
        // start at 0, 1 and 2 s, and the last slow failure ends at 4 s. With them, at 0,
        // 0.25 and 0.5 s: done at 2.5 s. (With enough workers: with 16, the off-path levels,
        // charged the 2 s mean failure, hold every worker when the first hint comes.)
        let mut path = Vec::new();
        for k in 0..3 {
            path.push(step(2 * k, 0, k, false, Some(2.0)));
            let mut a = step(2 * k + 1, 0, k, true, Some(1.0));
            a.phases = Some(Phases {
                first: 0.25,
                witness: None,
                confirm: Some(0.75),
                rejected: None,
            });
            path.push(a);
        }
        let no_hints = Policy {
            hints: false,
            ..Policy::default()
        };
        assert_eq!(simulate(&path, 1, 0.0).wall_s, 9.0);
        let without = simulate_policy(&path, 64, 0.0, &no_hints);
        assert_eq!(without.wall_s, 4.0, "{without:?}");
        let with = simulate(&path, 64, 0.0);
        assert_eq!(with.wall_s, 2.5, "{with:?}");
        // A failure rejected in its first run does not hint.
        let mut s = step(0, 0, 0, false, Some(1.0));
        s.phases = Some(Phases {
            first: 1.0,
            witness: None,
            confirm: None,
            rejected: Some("first".into()),
        });
        assert_eq!(s.hint_after(), None);
    }

    #[test]
    fn off_path_speculation_is_charged_the_passs_mean_failed_test() {
        // The front fails after 4 s; while it runs, one idle worker speculates on its
        // success (wasted, 1 s: the mean failure) and the other tests the next candidate.
        let path = vec![
            step(0, 0, 0, false, Some(4.0)),
            step(1, 0, 0, false, Some(1.0)),
            step(2, 0, 0, false, Some(1.0)),
        ];
        let p = simulate(&path, 2, 0.0);
        assert_eq!(p.wall_s, 4.0);
        assert!(p.wasted_tests > 0, "{p:?}");
    }

    #[test]
    fn sequential_acceptance_adds_the_witness_to_the_confirming_runs() {
        let mut s = step(0, 0, 0, true, Some(3.5));
        s.phases = Some(Phases {
            first: 1.0,
            witness: Some(1.0),
            confirm: Some(2.0),
            rejected: None,
        });
        assert_eq!(s.cost_under(true), Some(3.5));
        assert_eq!(s.cost_under(false), Some(4.5));
        let p = s.phases.as_mut().unwrap();
        p.rejected = Some("witness".into());
        assert_eq!(s.cost_under(false), Some(3.5));
        s.phases.as_mut().unwrap().rejected = Some("confirm".into());
        assert_eq!(s.cost_under(false), Some(4.5));
    }

    #[test]
    fn the_serial_path_follows_parent_links_past_speculation() {
        // 0 accepted; 1 (parent 0) speculated on success of 0 and accepted; 2 and 3 derive
        // from 4 (a failure: thrown away); 5 derives from 1.
        let mut t = vec![
            step(0, 0, 0, true, Some(1.0)),
            step(1, 0, 1, true, Some(1.0)),
            step(2, 0, 1, false, Some(1.0)),
            step(3, 0, 1, true, Some(1.0)),
            step(4, 0, 0, false, Some(1.0)),
            step(5, 0, 2, false, Some(1.0)),
        ];
        for (s, parent) in t
            .iter_mut()
            .zip([None, Some(0), Some(4), Some(4), None, Some(1)])
        {
            s.parent = parent;
        }
        let seqs: Vec<u64> = serial_path(&t).iter().map(|s| s.seq).collect();
        assert_eq!(seqs, [0, 1, 5]);
    }

    #[test]
    fn the_serial_path_drops_wasted_and_cancelled_candidates() {
        let trace = vec![
            step(0, 0, 0, false, Some(1.0)),
            step(2, 0, 0, true, Some(1.0)),
            step(1, 0, 0, true, Some(1.0)),
            step(3, 0, 0, false, Some(1.0)),
            step(4, 0, 1, false, Some(1.0)),
        ];
        let seqs: Vec<u64> = serial_path(&trace).iter().map(|s| s.seq).collect();
        assert_eq!(seqs, [0, 1, 4]);
    }
}
