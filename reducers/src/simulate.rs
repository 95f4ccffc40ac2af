//! Predicts the wall time of a reduction with any number of workers from the trace of one
//! run, by replaying the driver's speculation on a virtual clock.
//!
//! Acceptance is in generation order, so the sequence of candidates a serial run tests — the
//! *serial path* — is the same for any `jobs`: the prediction needs only each candidate's
//! outcome and the time its test took. A parallel run does more: it keeps `jobs` candidates
//! in flight, all derived from the current text on the assumption that the earlier ones fail,
//! and when one is accepted, the tests after it are cancelled (wasted work). Those thrown-away
//! candidates are not in a serial trace; the simulator stands in for them with the candidates
//! the serial run tested next (of about the same size and pass, so of about the same cost),
//! whose outcomes do not matter (they are never accepted).
//!
//! The scheduling rules are the driver's own ([`crate::window`]): when another candidate may
//! be generated, when the front one is accepted, that a cache hit costs nothing and that an
//! interesting cache hit stops the filling; and, as the driver does, generation goes on into
//! the next passes without waiting for a pass's tests to end. The time the driver spends
//! generating candidates is not modelled (measured by `Stats::gen_time`, a few percent of a
//! run with clang tests).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::driver::{Outcome, TestRecord, Tested};
use crate::window::{Filling, State, Window};

/// One candidate of a trace.
#[derive(Clone, Debug, PartialEq)]
pub struct Step {
    /// Generation order.
    pub seq: u64,
    /// The run of a pass it belongs to.
    pub pass_run: u64,
    /// Improvements accepted before it was generated.
    pub base: u64,
    pub outcome: Outcome,
    /// Seconds its test took; `None` for a cache hit.
    pub cost: Option<f64>,
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
            pass_run: r.pass_run,
            base: r.base,
            outcome,
            cost: cost.then(|| r.end.saturating_sub(r.start).as_secs_f64()),
        })
    }
}

/// The candidates a serial run tests, from the trace of a run with any `jobs`: in generation
/// order, each text's candidates up to and including the one accepted (the first interesting
/// one); cancelled tests and the wasted ones after an accepted candidate are dropped.
pub fn serial_path(steps: &[Step]) -> Vec<Step> {
    let mut steps = steps.to_vec();
    steps.sort_by_key(|s| s.seq);
    let mut out: Vec<Step> = Vec::with_capacity(steps.len());
    let mut closed: Option<u64> = None;
    for s in steps {
        if closed == Some(s.base) {
            continue;
        }
        if s.outcome == Outcome::Interesting {
            closed = Some(s.base);
        }
        out.push(s);
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
    simulate_with(path, workers, latency_s, false)
}

/// [`simulate`]; with `pass_barrier`, under the driver's earlier policy, kept for comparison:
/// a pass run's tests all ended before the next pass run's candidates were generated.
pub fn simulate_with(
    path: &[Step],
    workers: usize,
    latency_s: f64,
    pass_barrier: bool,
) -> Prediction {
    let workers = workers.max(1);
    let cost = |i: usize| path[i].cost.map(|c| c + latency_s);
    // The index of the candidate accepted from the text `path[p]` is derived from (or
    // `path.len()` when none is).
    let accepted_from = |p: usize| {
        (p..path.len())
            .find(|&i| path[i].outcome == Outcome::Interesting)
            .unwrap_or(path.len())
    };
    let mut window: Window<(), usize> = Window::new(workers);
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
                    if window.push(id, State::Finished(outcome), g) == Filling::Stop {
                        g += 1;
                        break;
                    }
                }
                Some(c) => {
                    tests += 1;
                    live.insert(id);
                    running.push(Reverse((Ordered(now + c), id, g)));
                    window.push(id, State::Running(()), g);
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
        window.finish(id, outcome);
    }
    Prediction {
        workers,
        wall_s: now,
        tests,
        wasted_tests: tests.saturating_sub(serial_tests),
    }
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
            pass_run: run,
            base,
            outcome: if interesting {
                Outcome::Interesting
            } else {
                Outcome::Uninteresting
            },
            cost,
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
        let p = simulate(&path, 4, 0.0);
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
