//! Depth for a stack overflow from budgets and trip counts, not from IR size.
//!
//! Why this exists: a middle-end stack overflow is a deep recursion over a long chain of
//! values (`getSCEVAtScope` through tens of thousands of unrolled instructions). When the
//! chain is written by an unrolling pass of the minimal pipeline, its length is the product
//! of the loops' trip counts, capped by the unroller's size budget; llvm-reduce can delete
//! loops and make constants smaller, never larger, so it keeps the whole loop nest. Two
//! changes llvm-reduce cannot make give it room:
//! - the budget of a pass that grows the IR is raised on the command line (a flag that only
//!   raises a limit, as upstream tests carry; [`LIMIT_FLAGS`]), kept only when the crash stays;
//! - a loop bound (the constant of an integer `icmp`) is multiplied, one bound at a time, kept
//!   only when the crash stays, so one loop gives the depth the whole nest gave and llvm-reduce
//!   can then delete the others.
//!
//! The flags stay on the RUN line only when the reduced IR needs them (the stage tries
//! without them at the end).
//!
//! Cheaper still, tried first ([`shallow_stack`], [`deepen_reduced`]): the whole reduction
//! under a small stack, where the depth the crash needs is 16–64 times smaller, so no bound
//! is multiplied while the tests run (each test unrolls a few iterations, not hundreds, and
//! overflows a small stack instead of 8 MB), and one bound of the *reduced* IR multiplied at
//! the end, for the inherited stack the RUN line runs with. What was measured and tried:
//! `docs/design/ir-depth.md`.

use std::sync::LazyLock;

use regex::Regex;

use super::judge::Judge;
use super::toolcmd::ToolCmd;
use super::IrError;

/// Per pass that grows the IR: the flag that lifts its budget (a value no real unroll decision
/// is near: the trip counts, not the budget, then decide how far the pass unrolls).
pub(super) const LIMIT_FLAGS: &[(&str, &str)] = &[
    ("loop-unroll-full", "-unroll-threshold=1000000"),
    ("loop-unroll", "-unroll-threshold=1000000"),
];

/// The factors a loop bound is multiplied by when the other loops stay, largest first.
const FACTORS: &[u64] = &[100, 10];

/// An integer compare with a constant right operand (how clang and the loop passes write a
/// loop's exit test: `icmp ult i32 %i, 8`).
static BOUND: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"icmp (?:eq|ne|[us](?:lt|le|gt|ge)) i(\d+) %[-\w.$]+, (\d+)\b")
        .expect("valid regex")
});

/// The limit flags for the passes of `pipeline` (each flag once).
pub(super) fn limit_flags(pipeline: &str) -> Vec<String> {
    let names: Vec<&str> = pipeline
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
        .filter(|w| !w.is_empty())
        .collect();
    let mut flags: Vec<String> = Vec::new();
    for (pass, flag) in LIMIT_FLAGS {
        if names.contains(pass) && !flags.iter().any(|f| f == flag) {
            flags.push((*flag).to_owned());
        }
    }
    flags
}

/// A loop bound of the IR: where its constant is and what may replace it.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Bound {
    /// Byte range of the constant in the text.
    pub at: std::ops::Range<usize>,
    pub value: u64,
    /// Bits of the compared type: a scaled bound must stay positive in it.
    pub bits: u32,
}

/// The loop bounds of `ir` worth scaling (2 and more: 0 and 1 are not trip counts), last first
/// (clang writes inner loops after outer ones; an inner bound multiplies the least code).
pub(super) fn bounds(ir: &str) -> Vec<Bound> {
    let mut v: Vec<Bound> = BOUND
        .captures_iter(ir)
        .filter_map(|c| {
            let bits: u32 = c[1].parse().ok()?;
            let m = c.get(2)?;
            let value: u64 = m.as_str().parse().ok()?;
            (value >= 2).then(|| Bound {
                at: m.range(),
                value,
                bits,
            })
        })
        .collect();
    v.reverse();
    v
}

/// `ir` with `b` multiplied by `factor`, or `None` when the product does not fit its type
/// (signed, so that a signed compare keeps its sense).
pub(super) fn scaled(ir: &str, b: &Bound, factor: u64) -> Option<String> {
    let v = b.value.checked_mul(factor)?;
    if b.bits < 2 || (b.bits < 64 && v >= 1u64 << (b.bits - 1)) || v > i64::MAX as u64 {
        return None;
    }
    Some(format!("{}{v}{}", &ir[..b.at.start], &ir[b.at.end..]))
}

/// What [`deepen`] did, for the progress line and the note.
pub(super) struct Deepened {
    pub ir: String,
    pub cmd: ToolCmd,
    /// `"8 → 800"` for the bound kept, if one was.
    pub scaled: Option<String>,
}

/// `cmd` with the limit flags of its pipeline's passes, when there are some and the crash
/// stays with them (the budget is needed to unroll a multiplied bound).
pub(super) fn raised(judge: &Judge, ir: &str, cmd: &ToolCmd) -> Result<Option<ToolCmd>, IrError> {
    let flags = limit_flags(cmd.passes.as_deref().unwrap_or(""));
    if flags.is_empty() {
        return Ok(None);
    }
    let mut raised = cmd.clone();
    for f in flags {
        if !raised.limits.contains(&f) {
            raised.limits.push(f);
        }
    }
    Ok(judge.ir_crashes("deep.ll", ir, &raised)?.then_some(raised))
}

/// The first bound of `bounds` (last first) that, multiplied by a factor of `factors` (tried
/// in that order, each over every bound), keeps the crash.
fn scale_one(
    judge: &Judge,
    ir: &str,
    cmd: &ToolCmd,
    factors: &[u64],
) -> Result<Option<Deepened>, IrError> {
    let all = bounds(ir);
    for &factor in factors {
        for b in &all {
            let Some(cand) = scaled(ir, b, factor) else {
                continue;
            };
            if judge.ir_crashes("deep.ll", &cand, cmd)? {
                return Ok(Some(Deepened {
                    ir: cand,
                    cmd: cmd.clone(),
                    scaled: Some(format!("{} → {}", b.value, b.value * factor)),
                }));
            }
        }
    }
    Ok(None)
}

/// The limit flags of the pipeline's passes, then one loop bound multiplied: the largest of
/// [`FACTORS`] first, over every bound (last first), then the next: an outer bound multiplied
/// may unroll past the test's timeout, where an inner one gives the depth alone and leaves
/// its outer loops to llvm-reduce. Unchanged when no flag applies or the crash needs
/// the budget as it is.
pub(super) fn deepen(judge: &Judge, ir: &str, cmd: &ToolCmd) -> Result<Deepened, IrError> {
    let Some(raised) = raised(judge, ir, cmd)? else {
        return Ok(Deepened {
            ir: ir.to_owned(),
            cmd: cmd.clone(),
            scaled: None,
        });
    };
    Ok(scale_one(judge, ir, &raised, FACTORS)?.unwrap_or(Deepened {
        ir: ir.to_owned(),
        cmd: raised,
        scaled: None,
    }))
}

/// The stacks a stack overflow may be reduced under, smallest first ([`shallow_stack`]).
const SHALLOW_STACKS: &[u64] = &[128 << 10, 256 << 10, 512 << 10];

/// The smallest of [`SHALLOW_STACKS`] the IR overflows the case's way under `cmd` (whose
/// budget is raised): the depth it needs there is 16–64 times smaller than with 8 MB, so
/// llvm-reduce and the cuts can delete the loops that only gave depth, without the bound
/// multiplied first (each test unrolls a few iterations instead of hundreds, several times
/// cheaper), and the reduced IR is deepened afterwards ([`deepen_reduced`]). Not below
/// 128 KB: a run costs the same there (process start dominates), and opt may overflow
/// elsewhere before the crashing pass.
pub(super) fn shallow_stack(
    judge: &Judge,
    ir: &str,
    cmd: &ToolCmd,
) -> Result<Option<u64>, IrError> {
    let path = judge.cwd.join("shallow.ll");
    std::fs::write(&path, ir).map_err(super::io(&path))?;
    for &s in SHALLOW_STACKS {
        if judge.run(&[cmd.argv("shallow.ll")], Some(s))[0].is_same() {
            return Ok(Some(s));
        }
    }
    Ok(None)
}

/// The factors a bound of IR reduced under a small stack is multiplied by, smallest first:
/// the stack grows 16–64 times (8 MB over [`SHALLOW_STACKS`]), and so must the chain; the
/// steps between powers of ten keep the unrolled chain (and each run) no longer than needed.
const DEEPEN_FACTORS: &[u64] = &[10, 20, 50, 100, 200, 500, 1000];

/// The trip counts a recurrence nest ([`super::nest`]) is tried with, smallest first, each
/// twice the one before.
const NEST_TRIPS: &[u64] = &[32, 64, 128, 256, 512, 1024, 2048];

/// The most nest candidates tried (a function with many loops has many recurrences).
const NEST_CANDIDATES: usize = 12;

/// `ir`'s recurrence rewritten as a two-loop nest of [`super::nest`], when that keeps the
/// crash and, cut ([`Judge::cuts`]), has fewer lines than `ir`: the first of the first
/// [`NEST_CANDIDATES`] candidates (shortest chain first) that does. A candidate's trip count
/// is the smallest of [`NEST_TRIPS`] that keeps the crash, doubled when that still does: the
/// cuts may shorten each step of the chain (a `xor` bypassed), and the chain must stay deep
/// enough. Meant for the small stack ([`shallow_stack`]), where each test is cheap and the
/// trip counts small (a candidate that never crashes costs one quick run per trip count);
/// [`deepen_reduced`] then multiplies the trip count for the inherited stack.
pub(super) fn nested(judge: &Judge, ir: &str, cmd: &ToolCmd) -> Result<Option<String>, IrError> {
    let before = super::toolcmd::count_lines(ir);
    let by_trip: Vec<Vec<String>> = NEST_TRIPS
        .iter()
        .chain(NEST_TRIPS.last().map(|t| t * 2).iter())
        .map(|&t| super::nest::nests(ir, t))
        .collect();
    let n = by_trip[0].len().min(NEST_CANDIDATES);
    for k in 0..n {
        for (ti, cands) in by_trip.iter().take(NEST_TRIPS.len()).enumerate() {
            let Some(c) = cands.get(k) else { break };
            if !judge.ir_crashes("nest.ll", c, cmd)? {
                continue;
            }
            // Doubled: the next trip count in the list is twice this one.
            let c = match by_trip.get(ti + 1).and_then(|d| d.get(k)) {
                Some(d) if judge.ir_crashes("nest.ll", d, cmd)? => d,
                _ => c,
            };
            let cut = judge.cuts(c, cmd);
            if super::toolcmd::count_lines(&cut) < before {
                return Ok(Some(cut));
            }
            break; // crashing but not shorter: the next candidate
        }
    }
    Ok(None)
}

/// IR reduced under a small stack, made to overflow the inherited stack the case's way:
/// as it is, or with one loop bound multiplied by the smallest of [`DEEPEN_FACTORS`] that
/// does it. `None` when nothing does (the stage then reduces with the inherited stack).
pub(super) fn deepen_reduced(
    judge: &Judge,
    ir: &str,
    cmd: &ToolCmd,
) -> Result<Option<Deepened>, IrError> {
    if judge.ir_crashes("deep.ll", ir, cmd)? {
        return Ok(Some(Deepened {
            ir: ir.to_owned(),
            cmd: cmd.clone(),
            scaled: None,
        }));
    }
    scale_one(judge, ir, cmd, DEEPEN_FACTORS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_follow_the_pipeline_passes() {
        assert_eq!(
            limit_flags("devirt<4>(function<eager-inv>(loop(indvars,loop-unroll-full)))"),
            ["-unroll-threshold=1000000"]
        );
        assert_eq!(
            limit_flags("function(loop-unroll<O2>,loop-unroll-full)"),
            ["-unroll-threshold=1000000"]
        );
        assert!(limit_flags("loop(indvars),loop-unroll-and-jam").is_empty());
        assert!(limit_flags("declare-to-assign").is_empty());
    }

    #[test]
    fn bounds_are_integer_compare_constants_last_first() {
        let ir = "  %c = icmp slt i8 %7, 6\n  %d = icmp ult i32 %.016, 8\n  %e = icmp eq i16 %1, 0\n  %f = icmp eq ptr %p, null\n  %g = icmp ult i32 %a, %b\n";
        let b = bounds(ir);
        assert_eq!(b.len(), 2, "{b:?}");
        assert_eq!((b[0].value, b[0].bits), (8, 32));
        assert_eq!((b[1].value, b[1].bits), (6, 8));
        assert_eq!(&ir[b[0].at.clone()], "8");
        let s = scaled(ir, &b[0], 100).unwrap();
        assert!(s.contains("icmp ult i32 %.016, 800\n"), "{s}");
        assert!(s.contains("icmp slt i8 %7, 6\n"), "{s}");
        // 600 does not fit a signed i8, 60 does.
        assert_eq!(scaled(ir, &b[1], 100), None);
        assert!(scaled(ir, &b[1], 10)
            .unwrap()
            .contains("icmp slt i8 %7, 60\n"));
    }
}
