//! The analysis: baseline, ddmin over argument units, then the dimension probes.
//!
//! Why this exists: one pure entry point, [`analyse`], that the process side and the tests
//! both drive; it decides what to run and in which order, against a [`Tester`]. Order
//! matters for cost: the simple dimension probes are sent as one batch (so they run in
//! parallel), the `-march` bisection after them.

use super::args::{self, Unit};
use super::ddmin::{minimize, Tester};
use super::{dims, riscv, Flags};
use crate::command::CompilerCommand;

/// Analyses `replay` (program first) against `t`; `compiler_runs` is `t.runs()` at the end.
pub fn analyse(replay: &[String], t: &mut Tester<'_>) -> Flags {
    let mut flags = Flags {
        minimal_command: replay.to_vec(),
        removed: Vec::new(),
        minimal_march: None,
        vector_needed: None,
        dimensions: Vec::new(),
        compiler_runs: 0,
        reproduced: true,
        note: None,
        seconds: 0.0,
        jobs: 0,
        keep_valid: false,
        on_original: Vec::new(),
        original_note: None,
        farm: None,
        budget_cut: false,
    };
    if replay.len() < 2 {
        flags.reproduced = false;
        flags.note = Some("the case has no replay command".into());
        return flags;
    }
    let base = t.one(replay);
    if !base.is_same() {
        flags.reproduced = false;
        flags.note = Some(format!(
            "the replay command did not give the case's crash ({}); nothing was probed",
            base.as_str()
        ));
        flags.compiler_runs = t.runs();
        return flags;
    }
    let cc1 = CompilerCommand::from_argv(replay).is_some_and(|c| c.is_cc1());
    let minimal = if cc1 {
        // cc1 lines are long and almost every argument is load-bearing; the answer people
        // want is the feature set, which riscv::cc1_features bisects below.
        replay.to_vec()
    } else {
        let (minimal, removed) = minimal_driver_command(replay, t);
        flags.removed = removed;
        minimal
    };

    // Simple dimensions: plan all, run as one batch, then read the answers from the cache.
    let plans = dims::plan_all(replay, &minimal, cc1);
    let all: Vec<Vec<String>> = plans
        .iter()
        .flat_map(|p| p.candidates.iter().map(|(_, argv)| argv.clone()))
        .collect();
    t.batch(&all);
    for p in plans {
        flags.dimensions.push(p.finish(t));
    }

    // RISC-V: -march extensions (driver) or -target-feature groups (cc1).
    let rv = if cc1 {
        riscv::cc1_features(&minimal, t)
    } else {
        riscv::driver_march(replay, &minimal, t)
    };
    let mut minimal = minimal;
    if let Some(rv) = rv {
        if let Some(cmd) = rv.minimal_command {
            minimal = cmd;
        }
        flags.minimal_march = rv.minimal_march;
        flags.vector_needed = rv.vector_needed;
        flags.dimensions.extend(rv.dimensions);
    }
    flags.minimal_command = minimal;
    flags.compiler_runs = t.runs();
    flags
}

/// ddmin over the driver command's argument units (those not pinned): the minimal command,
/// and the units it removed, each as one string.
fn minimal_driver_command(replay: &[String], t: &mut Tester<'_>) -> (Vec<String>, Vec<String>) {
    let units = args::split(replay);
    let removable: Vec<usize> = (0..units.len()).filter(|&i| !units[i].pinned).collect();
    let build = |kept: &[usize]| -> Vec<String> {
        let chosen: Vec<Unit> = units
            .iter()
            .enumerate()
            .filter(|(i, u)| u.pinned || kept.iter().any(|&k| removable[k] == *i))
            .map(|(_, u)| u.clone())
            .collect();
        args::join(&replay[0], &chosen)
    };
    let kept = minimize(removable.len(), &build, t);
    let removed = removable
        .iter()
        .enumerate()
        .filter(|(k, _)| !kept.contains(k))
        .map(|(_, &i)| units[i].args.join(" "))
        .collect();
    (build(&kept), removed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::flags::Outcome;

    fn v(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    fn row<'a>(f: &'a Flags, name: &str) -> &'a crate::flags::Dimension {
        f.dimensions
            .iter()
            .find(|d| d.name == name)
            .unwrap_or_else(|| panic!("no {name} row in {:#?}", f.dimensions))
    }

    /// A scripted clang for rv-gh75010: crashes with -g, -O≥1 and a vector extension.
    fn gh75010(cands: &[Vec<String>]) -> Vec<Outcome> {
        cands
            .iter()
            .map(|c| {
                let has = |p: &str| c.iter().any(|a| a.starts_with(p));
                let march = c
                    .iter()
                    .find_map(|a| a.strip_prefix("-march="))
                    .unwrap_or("rv64gc");
                let exts = march.trim_start_matches("rv64");
                let vector = exts.contains('v') || exts.contains("zve");
                let o0 = !c.iter().any(|a| a.starts_with("-O") && a != "-O0");
                if !has("--target=riscv64") {
                    Outcome::NoCrash
                } else if !vector {
                    Outcome::Error
                } else if has("-g") && !o0 {
                    Outcome::SameCrash
                } else {
                    Outcome::NoCrash
                }
            })
            .collect()
    }

    #[test]
    fn driver_command_gets_minimal_flags_and_rows() {
        let replay = v("clang -fno-crash-diagnostics -c --target=riscv64-linux-gnu -march=rv64gcv -O1 -g -w -fno-crash-diagnostics -o /dev/null -x cpp-output input.i");
        let oracle = gh75010;
        let mut t = Tester::new(&oracle);
        let f = analyse(&replay, &mut t);
        assert!(f.reproduced);
        assert_eq!(f.removed, ["-w", "-fno-crash-diagnostics"]);
        assert_eq!(f.minimal_march.as_deref(), Some("rv64iv"));
        assert_eq!(f.vector_needed, Some(true));
        assert!(
            f.minimal_command.contains(&"-march=rv64iv".to_string()),
            "{:?}",
            f.minimal_command
        );
        let o = row(&f, "-O");
        assert_eq!(o.needed, Some(true));
        assert!(o.note.contains("-O0"), "{}", o.note);
        assert_eq!(row(&f, "-g").needed, Some(true));
        assert_eq!(row(&f, "vector extension").needed, Some(true));
        assert_eq!(f.compiler_runs, t.runs());
        assert!(f.compiler_runs <= 40, "{} runs", f.compiler_runs);
    }

    /// A scripted clang for an AArch64 ISel crash: at -O0 it crashes in the same pass with the
    /// same message, only its (release build's, truncated) stack differs: the same crash at
    /// the coarse grain, so `-O` is not needed, and the note says which grain said so.
    fn same_pass_at_o0(cands: &[Vec<String>]) -> Vec<Outcome> {
        cands
            .iter()
            .map(|c| {
                let o0 = !c.iter().any(|a| a.starts_with("-O") && a != "-O0");
                if !c.iter().any(|a| a == "--target=aarch64-linux-gnu") {
                    Outcome::Error
                } else if o0 {
                    Outcome::SameCrashCoarse
                } else {
                    Outcome::SameCrash
                }
            })
            .collect()
    }

    #[test]
    fn a_dimension_compares_by_the_coarse_identity_and_says_so() {
        let replay =
            v("clang -c --target=aarch64-linux-gnu -O2 -o /dev/null -x cpp-output input.i");
        let oracle = same_pass_at_o0;
        let mut t = Tester::new(&oracle);
        let f = analyse(&replay, &mut t);
        assert!(f.reproduced);
        let o = row(&f, "-O");
        assert_eq!(o.needed, Some(false), "{}", o.note);
        assert!(o.note.contains("coarse grain"), "{}", o.note);
        assert!(o.note.contains("-O0"), "{}", o.note);
        // ddmin keeps only exact crashes: -O2 stays in the minimal command.
        assert!(
            f.minimal_command.iter().any(|a| a == "-O2"),
            "{:?}",
            f.minimal_command
        );
    }

    #[test]
    fn a_budget_cut_leaves_probed_dimensions_undecided_never_needed() {
        // The budget runs out after the first 6 runs: every later probe is a Timeout, as
        // the flags runner answers past its deadline. Without marking, a dimension whose
        // other values crashed would read "needed"; marked, it says it was not decided.
        let replay = v("clang -fno-crash-diagnostics -c --target=riscv64-linux-gnu -march=rv64gcv -O1 -g -w -fno-crash-diagnostics -o /dev/null -x cpp-output input.i");
        let runs = std::cell::Cell::new(0usize);
        let oracle = |c: &[Vec<String>]| -> Vec<Outcome> {
            let real = gh75010(c);
            real.into_iter()
                .map(|o| {
                    runs.set(runs.get() + 1);
                    if runs.get() > 6 {
                        Outcome::Timeout
                    } else {
                        o
                    }
                })
                .collect()
        };
        let mut t = Tester::new(&oracle);
        let mut f = analyse(&replay, &mut t);
        assert!(f.reproduced);
        let cut: Vec<String> = f
            .dimensions
            .iter()
            .filter(|d| d.tried.iter().any(|t| t.outcome == Outcome::Timeout))
            .map(|d| d.name.clone())
            .collect();
        assert!(!cut.is_empty(), "the oracle cut no probe: {f:?}");
        f.mark_budget_cut();
        assert!(f.budget_cut);
        for d in &f.dimensions {
            if cut.contains(&d.name) {
                assert_eq!(d.needed, None, "{}: {}", d.name, d.note);
                assert!(d.note.contains("budget"), "{}", d.note);
            }
        }
        if cut.iter().any(|n| n == "vector extension") {
            assert_eq!(f.vector_needed, None);
        }
        // The minimal command is one that was seen crashing: the baseline at least.
        assert!(f.minimal_command.len() <= replay.len());
    }

    #[test]
    fn a_replay_that_does_not_crash_is_reported_not_probed() {
        let oracle = |c: &[Vec<String>]| vec![Outcome::NoCrash; c.len()];
        let mut t = Tester::new(&oracle);
        let f = analyse(&v("clang -c -O2 -o /dev/null input.i"), &mut t);
        assert!(!f.reproduced);
        assert_eq!(f.compiler_runs, 1);
        assert!(f.note.unwrap().contains("no-crash"));
    }

    #[test]
    fn offload_arches_show_where_the_crash_stops() {
        let oracle = |cands: &[Vec<String>]| -> Vec<Outcome> {
            cands
                .iter()
                .map(|c| {
                    let arch = c
                        .iter()
                        .find_map(|a| a.strip_prefix("--offload-arch="))
                        .unwrap_or("gfx906");
                    if arch.starts_with("gfx6") && c.iter().any(|a| a == "-nogpulib") {
                        Outcome::SameCrash
                    } else {
                        Outcome::NoCrash
                    }
                })
                .collect()
        };
        let mut t = Tester::new(&oracle);
        let replay = v("clang -fno-crash-diagnostics -S -nogpulib -nogpuinc -O2 -fno-crash-diagnostics --cuda-device-only --offload-arch=gfx600 -o /dev/null -x hip input.hipi");
        let f = analyse(&replay, &mut t);
        let r = row(&f, "offload arch");
        assert_eq!(r.needed, Some(true));
        let (same, other) = r.split();
        assert_eq!(same, ["gfx600", "gfx601", "gfx602"]);
        let others: Vec<&str> = other.iter().map(|(v, _)| *v).collect();
        for a in ["gfx700", "gfx803", "gfx900", "gfx90a", "gfx1030"] {
            assert!(others.contains(&a), "{a} in {others:?}");
        }
        assert_eq!(row(&f, "-O").needed, Some(false));
        assert!(f
            .minimal_command
            .contains(&"--offload-arch=gfx600".to_string()));
        assert!(!f.minimal_command.contains(&"-O2".to_string()));
    }

    #[test]
    fn cc1_bisects_feature_groups_and_maps_to_march() {
        let mut replay =
            v("clang -cc1 -triple riscv64-unknown-linux-gnu -emit-obj -target-cpu generic-rv64");
        for f in "+m +a +f +d +c +v +zicsr +zifencei +zmmul +zve32f +zve32x +zve64d +zve64f +zve64x +zvl128b +zvl32b +zvl64b +relax".split(' ') {
            replay.extend(["-target-feature".to_string(), f.to_string()]);
        }
        for i in 0..150 {
            replay.extend(["-target-feature".to_string(), format!("-xfoo{i}")]);
        }
        replay.extend(v("-target-abi lp64d -O2 -x c -o /dev/null input.c"));
        let oracle = |cands: &[Vec<String>]| -> Vec<Outcome> {
            cands
                .iter()
                .map(|c| {
                    if c.iter().any(|a| a == "+zve32x") {
                        Outcome::SameCrash
                    } else {
                        Outcome::NoCrash
                    }
                })
                .collect()
        };
        let mut t = Tester::new(&oracle);
        let f = analyse(&replay, &mut t);
        assert_eq!(f.minimal_march.as_deref(), Some("rv64iv"));
        assert_eq!(f.vector_needed, Some(true));
        assert!(f.compiler_runs <= 40, "{} runs", f.compiler_runs);
        let feats: Vec<&String> = f
            .minimal_command
            .iter()
            .filter(|a| a.starts_with('+') || a.starts_with("-xfoo"))
            .collect();
        assert!(
            feats.contains(&&"+v".to_string()) && !feats.contains(&&"+m".to_string()),
            "{feats:?}"
        );
        assert!(!feats.iter().any(|a| a.starts_with("-xfoo")));
        assert_eq!(row(&f, "-O").needed, Some(false));
    }
}
