//! Minimising a list of argument units against a batch oracle: the flags stage ddmins a
//! compile command with it, the IR stage an `llc`/`opt` command and an `opt` pipeline.
//!
//! Why this exists: LLVM's crash script drops arguments one at a time, one compiler run each.
//! Here the oracle takes a *batch* of candidate command lines (the process side runs them in
//! parallel) and answers each with an [`Outcome`]; [`Tester`] caches answers by argv and
//! counts the runs it asked for, and [`minimize`] finds a 1-minimal set of units with about
//! `2·k·log2(n)` runs for `k` needed units out of `n`, two candidates per batch (remove one
//! half, remove the other), so two cores are always busy. Pure: no processes, no clock.

use std::collections::HashMap;

pub use crate::case::flags::Outcome;

/// The batch oracle: candidate argvs in, one outcome each, in order.
pub type Oracle<'a> = dyn Fn(&[Vec<String>]) -> Vec<Outcome> + 'a;

/// Wraps an [`Oracle`] with a cache keyed by argv and a count of the candidates it ran.
pub struct Tester<'a> {
    oracle: &'a Oracle<'a>,
    cache: HashMap<Vec<String>, Outcome>,
    runs: usize,
}

impl std::fmt::Debug for Tester<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tester")
            .field("cached", &self.cache.len())
            .field("runs", &self.runs)
            .finish()
    }
}

impl<'a> Tester<'a> {
    pub fn new(oracle: &'a Oracle<'a>) -> Self {
        Tester {
            oracle,
            cache: HashMap::new(),
            runs: 0,
        }
    }

    /// Outcomes of `cands`, asking the oracle (in one batch) only for argvs not seen before.
    pub fn batch(&mut self, cands: &[Vec<String>]) -> Vec<Outcome> {
        let mut ask: Vec<Vec<String>> = Vec::new();
        for c in cands {
            if !self.cache.contains_key(c) && !ask.contains(c) {
                ask.push(c.clone());
            }
        }
        if !ask.is_empty() {
            let got = (self.oracle)(&ask);
            assert_eq!(got.len(), ask.len(), "the oracle answers every candidate");
            self.runs += ask.len();
            for (c, o) in ask.into_iter().zip(got) {
                self.cache.insert(c, o);
            }
        }
        cands.iter().map(|c| self.cache[c]).collect()
    }

    /// The outcome of one candidate.
    pub fn one(&mut self, cand: &[String]) -> Outcome {
        self.batch(&[cand.to_vec()])[0]
    }

    /// The outcome of an argv already tested, if it was.
    pub fn known(&self, cand: &[String]) -> Option<Outcome> {
        self.cache.get(cand).copied()
    }

    /// How many candidates the oracle was asked to run.
    pub fn runs(&self) -> usize {
        self.runs
    }
}

/// Finds a small set of unit indices (out of `0..n`) whose argv, `build(kept)`, still gives
/// the same crash, assuming `build(0..n)` does. The result is sorted and 1-minimal as far as
/// the bisection tests it: every kept unit was needed in the context it was tested in.
pub fn minimize(
    n: usize,
    build: &dyn Fn(&[usize]) -> Vec<String>,
    t: &mut Tester<'_>,
) -> Vec<usize> {
    let all: Vec<usize> = (0..n).collect();
    let mut kept = rec(all, Vec::new(), false, build, t);
    kept.sort_unstable();
    kept
}

fn union(a: &[usize], b: &[usize]) -> Vec<usize> {
    let mut v: Vec<usize> = a.iter().chain(b).copied().collect();
    v.sort_unstable();
    v.dedup();
    v
}

/// Minimises `s` given that `ctx` is kept. `ctx_fails`: `build(ctx)` is known not to give
/// the same crash (so `s` cannot be dropped whole).
fn rec(
    s: Vec<usize>,
    ctx: Vec<usize>,
    ctx_fails: bool,
    build: &dyn Fn(&[usize]) -> Vec<String>,
    t: &mut Tester<'_>,
) -> Vec<usize> {
    if s.is_empty() {
        return s;
    }
    if !ctx_fails && t.one(&build(&ctx)).is_same() {
        return Vec::new();
    }
    if s.len() == 1 {
        return s;
    }
    let (a, b) = s.split_at(s.len() / 2);
    let (a, b) = (a.to_vec(), b.to_vec());
    let without_a = union(&ctx, &b);
    let without_b = union(&ctx, &a);
    let r = t.batch(&[build(&without_a), build(&without_b)]);
    if r[0].is_same() {
        return rec(b, ctx, true, build, t);
    }
    if r[1].is_same() {
        return rec(a, ctx, true, build, t);
    }
    let ra = rec(a.clone(), without_a, true, build, t);
    let ctx_b = union(&ctx, &ra);
    // When all of `a` stayed, `ctx ∪ a` is `without_b`, known to fail.
    let rb = rec(b, ctx_b, ra == a, build, t);
    union(&ra, &rb)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::cell::Cell;

    fn build(kept: &[usize]) -> Vec<String> {
        kept.iter().map(|i| format!("u{i}")).collect()
    }

    /// An oracle: the crash needs every unit in `needed`.
    fn needs(needed: Vec<usize>) -> impl Fn(&[Vec<String>]) -> Vec<Outcome> {
        move |cands: &[Vec<String>]| {
            cands
                .iter()
                .map(|c| {
                    if needed.iter().all(|n| c.contains(&format!("u{n}"))) {
                        Outcome::SameCrash
                    } else {
                        Outcome::NoCrash
                    }
                })
                .collect()
        }
    }

    #[test]
    fn finds_the_needed_units() {
        let o = needs(vec![3, 17]);
        let mut t = Tester::new(&o);
        assert_eq!(minimize(40, &build, &mut t), vec![3, 17]);
        assert!(t.runs() <= 2 * 2 * 6 + 1, "{} runs", t.runs());
    }

    #[test]
    fn nothing_needed_costs_one_run() {
        let o = needs(vec![]);
        let mut t = Tester::new(&o);
        assert_eq!(minimize(100, &build, &mut t), Vec::<usize>::new());
        assert_eq!(t.runs(), 1);
    }

    #[test]
    fn everything_needed() {
        let o = needs(vec![0, 1, 2, 3]);
        let mut t = Tester::new(&o);
        assert_eq!(minimize(4, &build, &mut t), vec![0, 1, 2, 3]);
    }

    #[test]
    fn the_cache_answers_repeated_candidates_and_batches_are_pairs() {
        let calls = Cell::new(0);
        let sizes = std::cell::RefCell::new(Vec::new());
        let inner = needs(vec![5]);
        let o = |c: &[Vec<String>]| {
            calls.set(calls.get() + 1);
            sizes.borrow_mut().push(c.len());
            inner(c)
        };
        let mut t = Tester::new(&o);
        minimize(16, &build, &mut t);
        let runs = t.runs();
        assert!(sizes.borrow().iter().all(|&s| s <= 2));
        let before = calls.get();
        minimize(16, &build, &mut t);
        assert_eq!(
            calls.get(),
            before,
            "a second pass is answered from the cache"
        );
        assert_eq!(t.runs(), runs);
    }

    #[test]
    fn alternatives_keep_one() {
        // The crash needs unit 2 or unit 9 (either will do), plus unit 4.
        let o = |cands: &[Vec<String>]| {
            cands
                .iter()
                .map(|c| {
                    let has = |i: usize| c.contains(&format!("u{i}"));
                    if has(4) && (has(2) || has(9)) {
                        Outcome::SameCrash
                    } else {
                        Outcome::OtherCrash
                    }
                })
                .collect()
        };
        let mut t = Tester::new(&o);
        let kept = minimize(12, &build, &mut t);
        assert_eq!(kept.len(), 2, "{kept:?}");
        assert!(kept.contains(&4));
    }

    proptest! {
        /// For a monotone oracle the result is exactly the needed set, in O(k log n) runs.
        #[test]
        fn exact_for_monotone_oracles(
            n in 1usize..60,
            picks in proptest::collection::btree_set(0usize..60, 0..5),
        ) {
            let needed: Vec<usize> = picks.into_iter().filter(|&p| p < n).collect();
            let k = needed.len();
            let o = needs(needed.clone());
            let mut t = Tester::new(&o);
            let kept = minimize(n, &build, &mut t);
            prop_assert_eq!(&kept, &needed);
            let log = (usize::BITS - n.leading_zeros()) as usize;
            prop_assert!(t.runs() <= 1 + 2 * k.max(1) * (log + 1), "{} runs", t.runs());
        }
    }
}
