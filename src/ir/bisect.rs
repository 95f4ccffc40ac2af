//! The crashing `opt` pass named a second way: LLVM's OptBisect (`-opt-bisect-limit=N` runs
//! only the first N optional passes), beside the pipeline ddmin's last pass.
//!
//! Why this exists: ddmin's minimal pipeline says which passes the crash needs, not which one
//! crashes. In a loop or CGSCC adaptor the passes run once per loop or SCC, so the last pass
//! of the text is not always the last pass run (in `loop(indvars,loop-unroll-full)`
//! the unrolling of the inner loops is needed, and `indvars` on the outer loop then overflows
//! the stack). OptBisect counts the passes as they run: the smallest limit that still crashes
//! the case's way is the pass that crashes. Its output names the pass's class
//! (`IndVarSimplifyPass`); running each pass of the minimal pipeline alone, with the same
//! printing, maps a class back to its pipeline name. Parsing, the search and the mapping are
//! pure; [`cross_check`] runs them through the stage's [`Judge`].

use std::collections::BTreeSet;

use super::judge::Judge;
use super::pipeline::{self, Node};
use super::toolcmd::ToolCmd;

/// OptBisect's answer on the reduced IR and the pipeline name of its pass.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CrossCheck {
    pub found: Bisected,
    /// `indvars` for `IndVarSimplifyPass`, when exactly one pass of the pipeline prints it.
    pub name: Option<String>,
}

/// Bisects `cmd` on `file` (in the judge's directory), then maps the class found to a pass of
/// the command's pipeline. `None` for a command without a pipeline or when OptBisect does not
/// see the crash (see [`bisect`]).
pub(super) fn cross_check(judge: &Judge, cmd: &ToolCmd, file: &str) -> Option<CrossCheck> {
    let tree = pipeline::parse(cmd.passes.as_deref()?)?;
    let argv = cmd.argv(file);
    let found = bisect(&mut |limit| {
        let mut a = argv.clone();
        a.push(format!("-opt-bisect-limit={limit}"));
        if limit < 0 {
            judge.stderr_of(&a)
        } else {
            (String::new(), judge.outcomes(&[a])[0].is_same())
        }
    })?;
    let mut names = Vec::new();
    let mut printed = Vec::new();
    for (passes, name) in single_passes(&tree) {
        let mut c = cmd.clone();
        c.passes = Some(passes);
        let mut a = c.argv(file);
        a.push("-opt-bisect-limit=-1".into());
        let (stderr, _) = judge.stderr_of(&a);
        printed.push(parse(&stderr).into_iter().map(|l| l.1).collect());
        names.push(name);
    }
    let name = name_of(&found.class, &names, &printed);
    Some(CrossCheck { found, name })
}

/// What OptBisect found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bisected {
    /// The smallest `-opt-bisect-limit` that still crashes the case's way.
    pub limit: usize,
    /// How many passes OptBisect counted in the crashing run without a limit.
    pub counted: usize,
    /// The class OptBisect printed for pass `limit` (`IndVarSimplifyPass`).
    pub class: String,
    /// What it runs on (`loop %<unnamed loop> in function j`).
    pub on: String,
}

/// `BISECT: running pass (N) Class on target` lines: (N, class, target).
pub fn parse(stderr: &str) -> Vec<(usize, String, String)> {
    stderr
        .lines()
        .filter_map(|l| {
            let rest = l.trim().strip_prefix("BISECT: running pass (")?;
            let (n, rest) = rest.split_once(") ")?;
            let (class, on) = rest.split_once(" on ").unwrap_or((rest, ""));
            Some((n.parse().ok()?, class.to_owned(), on.to_owned()))
        })
        .collect()
}

/// The smallest limit in `1..=hi` for which `crashes` holds, `crashes(hi)` known true and
/// limit 0 (no optional pass) assumed not to crash: a binary search, as OptBisect is used.
pub fn smallest_crashing(hi: usize, crashes: &mut dyn FnMut(usize) -> bool) -> usize {
    let (mut lo, mut hi) = (0, hi);
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if crashes(mid) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    hi
}

/// Runs the search. `run_all(limit)` runs the command with `-opt-bisect-limit=limit` and
/// returns its stderr and whether it crashed the case's way. `None` when the unlimited run
/// does not crash or OptBisect printed nothing (a pipeline of required passes only).
pub fn bisect(run: &mut dyn FnMut(i64) -> (String, bool)) -> Option<Bisected> {
    let (stderr, crashed) = run(-1);
    let lines = parse(&stderr);
    if !crashed || lines.is_empty() {
        return None;
    }
    let counted = lines.iter().map(|l| l.0).max()?;
    let limit = smallest_crashing(counted, &mut |l| run(l as i64).1);
    let (_, class, on) = lines.iter().find(|l| l.0 == limit)?.clone();
    Some(Bisected {
        limit,
        counted,
        class,
        on,
    })
}

/// The minimal pipeline with only its `k`-th pass (adaptors kept), and that pass's name
/// without parameters; one per pass.
pub fn single_passes(nodes: &[Node]) -> Vec<(String, String)> {
    (0..pipeline::passes(nodes))
        .filter_map(|k| {
            let only = pipeline::only_pass(nodes, k)?;
            let name = pipeline::crashing_pass(&only)?;
            Some((pipeline::render(&only), name))
        })
        .collect()
}

/// The pipeline name of `class`: the pass whose lone run printed it while no other pass's
/// lone run did (the loop adaptor's own `LoopSimplifyPass`/`LCSSAPass` print in every run).
/// `printed[k]` are the classes printed by pass `k` run alone, `names[k]` its name.
pub fn name_of(class: &str, names: &[String], printed: &[BTreeSet<String>]) -> Option<String> {
    let with: Vec<usize> = (0..printed.len())
        .filter(|&k| printed[k].contains(class))
        .collect();
    match with.as_slice() {
        [k] => names.get(*k).cloned(),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bisect_lines_parse() {
        let err = "BISECT: running pass (1) LoopSimplifyPass on j\n\
                   BISECT: running pass (13) IndVarSimplifyPass on loop %<unnamed loop> in function j\n\
                   Stack dump:\nBISECT: NOT running pass (14) X on y\n";
        let p = parse(err);
        assert_eq!(p.len(), 2);
        assert_eq!(p[1].0, 13);
        assert_eq!(p[1].1, "IndVarSimplifyPass");
        assert_eq!(p[1].2, "loop %<unnamed loop> in function j");
    }

    #[test]
    fn the_search_finds_the_first_crashing_limit() {
        for first in 1..=13 {
            let mut runs = 0;
            let got = smallest_crashing(13, &mut |l| {
                runs += 1;
                l >= first
            });
            assert_eq!(got, first);
            assert!(runs <= 4, "{runs} runs for 13 passes");
        }
    }

    #[test]
    fn bisecting_names_the_class_run_at_the_limit() {
        let all = (1..=13)
            .map(|n| {
                let c = if n % 2 == 0 {
                    "LoopFullUnrollPass"
                } else {
                    "IndVarSimplifyPass"
                };
                format!("BISECT: running pass ({n}) {c} on loop\n")
            })
            .collect::<String>();
        let b = bisect(&mut |limit| {
            if limit < 0 {
                (all.clone(), true)
            } else {
                (String::new(), limit >= 13)
            }
        })
        .unwrap();
        assert_eq!((b.limit, b.counted), (13, 13));
        assert_eq!(b.class, "IndVarSimplifyPass");
        assert!(bisect(&mut |_| (all.clone(), false)).is_none());
        assert!(bisect(&mut |_| (String::new(), true)).is_none());
    }

    #[test]
    fn classes_map_to_pipeline_names() {
        let n = pipeline::parse("devirt<4>(function(loop(indvars,loop-unroll-full<x>)))").unwrap();
        let s = single_passes(&n);
        assert_eq!(
            s,
            [
                (
                    "devirt<4>(function(loop(indvars)))".to_owned(),
                    "indvars".to_owned()
                ),
                (
                    "devirt<4>(function(loop(loop-unroll-full<x>)))".to_owned(),
                    "loop-unroll-full".to_owned()
                )
            ]
        );
        let set = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<BTreeSet<_>>();
        let printed = [
            set(&["LoopSimplifyPass", "LCSSAPass", "IndVarSimplifyPass"]),
            set(&["LoopSimplifyPass", "LCSSAPass", "LoopFullUnrollPass"]),
        ];
        let names = ["indvars".to_owned(), "loop-unroll-full".to_owned()];
        assert_eq!(
            name_of("IndVarSimplifyPass", &names, &printed).as_deref(),
            Some("indvars")
        );
        assert_eq!(name_of("LCSSAPass", &names, &printed), None);
        assert_eq!(name_of("Other", &names, &printed), None);
    }
}
