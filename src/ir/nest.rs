//! A stack overflow over an unrolled recurrence, rewritten as the smallest loop nest that
//! unrolls it.
//!
//! Why this exists: a ScalarEvolution stack overflow is a recursion as deep as a chain
//! of values the unroller writes: a loop-carried recurrence (`%c = phi i32 [ 0, … ], [ %n, … ]`,
//! `%n` computed from `%c` by a `sext`, a `getelementptr` and a `load`) unrolled a few thousand
//! times, inside a loop whose exit value `indvars` rewrites. llvm-reduce and the textual cuts
//! delete code; they cannot trade a loop of the nest for a larger trip count of another, nor
//! give the function a `ret` of the chain's value, so they stop at the four-loop nest clang
//! wrote (`docs/design/ir-depth.md`). The crash needs only two loops:
//! - the recurrence alone (with the values it takes from outside the loop computed before)
//!   in a one-block loop that runs `trip` + 1 times (unrolled fully),
//! - inside a loop that never iterates (`br i1 false`), whose exit value is the chain's last
//!   value, returned: `indvars` rewrites that exit value and walks the unrolled chain.
//!
//! [`nests`] writes that nest around each recurrence of a loop of the reduced IR (or of the IR
//! llvm-reduce has not walked yet, which is why the stage tries it first), as a replacement
//! of its function (the other functions and globals stay). It is a rewrite, not a deletion:
//! the stage keeps it only when the crash stays and the result is shorter, and searches the
//! trip count (the depth) by testing.
//!
//! Pure: text in, candidate texts out (numbered, [`super::numbered`]).

use std::collections::{HashMap, HashSet};
use std::sync::LazyLock;

use regex::Regex;

use super::numbered::{blocks, defined, labelled, numbered, refers, VDEF};

/// A `phi` of the labelled form: its value, its type and its incoming entries.
static PHI: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\s*%v(\d+) = phi (?:(?:nnan|ninf|nsz|arcp|contract|afn|reassoc|fast) )*(.+?) (\[ .*\])(?:, ![-\w.]+ ![0-9]+)*\s*$")
        .expect("valid regex")
});
/// One incoming entry of a `phi`: a value without brackets, and its block.
static ENTRY: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\[ ([^\[\]]+?), %v(\d+) \]").expect("valid regex"));
/// A conditional branch of the labelled form.
static CONDBR: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\s*br i1 [^,]+, label %v(\d+), label %v(\d+)(?:, ![-\w.]+ ![0-9]+)*\s*$")
        .expect("valid regex")
});
/// An unconditional branch of the labelled form.
static UNCONDBR: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\s*br label %v(\d+)(?:, ![-\w.]+ ![0-9]+)*\s*$").expect("valid regex")
});
/// A local of the labelled form.
static VREF: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"%v(\d+)\b").expect("valid regex"));
/// A `define` line: what precedes the name, the name, and the parameter list onwards.
static DEFINE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"^define (.*?)(@(?:[-a-zA-Z$._0-9]+|"[^"]*"))(\(.*)$"#).expect("valid regex")
});

/// A loop-carried recurrence: a `phi` of a loop's header ([`loop_of`]), and the lines of the
/// loop that lead from it to the value it takes on the back edge.
struct Recurrence {
    /// The phi's number and type.
    value: usize,
    ty: String,
    /// The value on entry (a constant; a local becomes the type's zero).
    init: String,
    /// The value from the back edge.
    next: usize,
    /// The lines of the chain, in order.
    chain: Vec<usize>,
    /// The lines computing the values the chain takes from outside it, in order.
    inputs: Vec<usize>,
}

/// The most blocks a loop's straight line of blocks may have ([`loop_of`]).
const LOOP_BLOCKS: usize = 16;
/// The most lines the chain's inputs may take ([`inputs_of`]).
const INPUT_LINES: usize = 32;

/// The loop whose header is block `h`: `h`, then each block the one before reaches with a
/// `br label` and nothing else branches to, up to a block (the latch) whose conditional branch
/// goes back to `h`. Its blocks and the latch.
fn loop_of(
    lines: &[&str],
    block_of: &[Option<usize>],
    s: usize,
    e: usize,
    h: usize,
) -> Option<(Vec<usize>, usize)> {
    let terminator = |b: usize| {
        (s + 1..e)
            .rev()
            .find(|&j| block_of[j] == Some(b) && !lines[j].trim().is_empty())
    };
    let mut blocks_in = vec![h];
    let mut b = h;
    loop {
        let t = terminator(b)?;
        let line = lines[t].trim_end();
        if let Some(br) = CONDBR.captures(line) {
            return (br[1].parse() == Ok(h) || br[2].parse() == Ok(h)).then_some((blocks_in, b));
        }
        let next: usize = UNCONDBR.captures(line)?[1].parse().ok()?;
        let label = format!("label %v{next}");
        let reached = (s + 1..e)
            .filter(|&j| refers_label(lines[j], &label))
            .count();
        if next == h || reached != 1 || blocks_in.contains(&next) || blocks_in.len() >= LOOP_BLOCKS
        {
            return None;
        }
        blocks_in.push(next);
        b = next;
    }
}

/// Does `l` branch to the block of `label` (`label %vN`, not `label %vN0`)?
fn refers_label(l: &str, label: &str) -> bool {
    l.match_indices(label).any(|(at, _)| {
        !l[at + label.len()..]
            .bytes()
            .next()
            .is_some_and(|b| b.is_ascii_digit())
    })
}

/// The lines computing the locals the chain uses that are neither the phi (`value`), nor a
/// chain value (`inside`), nor an argument: each defined by a line that is no `phi` and uses
/// only such locals itself; in text order. `None` when one is not (it depends on a loop), or
/// they take more than [`INPUT_LINES`].
fn inputs_of(
    lines: &[&str],
    chain: &[usize],
    defs: &HashMap<usize, usize>,
    value: usize,
    inside: &HashSet<usize>,
    nargs: usize,
) -> Option<Vec<usize>> {
    let mut taken: HashSet<usize> = HashSet::new();
    let mut todo: Vec<usize> = chain.to_vec();
    while let Some(j) = todo.pop() {
        for r in VREF.captures_iter(rest_of(lines[j])) {
            let n: usize = r[1].parse().ok()?;
            if n == value || n < nargs || inside.contains(&n) {
                continue;
            }
            let &d = defs.get(&n)?;
            if lines[d].contains(" = phi ") {
                return None;
            }
            if taken.insert(d) {
                if taken.len() > INPUT_LINES {
                    return None;
                }
                todo.push(d);
            }
        }
    }
    let mut v: Vec<usize> = taken.into_iter().collect();
    v.sort_unstable();
    Some(v)
}

/// Each recurrence of a loop in `ir` (a `phi` of the loop's header, [`loop_of`]), its function
/// replaced by the two-loop nest described in the module doc, the inner loop's exit test
/// `icmp ult i32 %i, trip` (`trip` + 1 iterations); numbered. One candidate per recurrence
/// and per value of the phi's type on its cycle (the phi fed back from there: a shorter
/// cycle): functions in text order, within one the shortest chain first. The values the chain
/// takes from outside the loop are computed in the nest's entry block ([`inputs_of`]). None
/// for a function this does not read (a define over several lines, quoted local names, a
/// parameter tied to the return type, a `phi` with a constant expression or more than two
/// entries).
pub fn nests(ir: &str, trip: u64) -> Vec<String> {
    let Some(text) = labelled(ir) else {
        return Vec::new();
    };
    let (lines, block_of) = blocks(&text);
    let mut out = Vec::new();
    let mut start = None;
    for (i, l) in lines.iter().enumerate() {
        if l.starts_with("define ") {
            // A define whose parameters go on over more lines is left as it is (as
            // `numbered` leaves it).
            start = l.trim_end().ends_with('{').then_some(i);
        } else if l.trim_end() == "}" {
            if let Some(s) = start.take() {
                let mut rs = recurrences(&lines, &block_of, s, i);
                // The shortest chain first (the smallest nest; an induction variable's, one
                // `add`, fails at once).
                rs.sort_by_key(|r| r.chain.len());
                for r in rs {
                    let Some(f) = nest(lines[s], &lines, &r, trip) else {
                        continue;
                    };
                    let mut cand = String::with_capacity(text.len());
                    for m in &lines[..s] {
                        cand.push_str(m);
                    }
                    cand.push_str(&f);
                    for m in &lines[i + 1..] {
                        cand.push_str(m);
                    }
                    if let Some(n) = numbered(&cand) {
                        out.push(n);
                    }
                }
            }
        }
    }
    out
}

/// A phi's incoming value and the number of the block it comes from.
type PhiEntry = (String, usize);

/// A phi of exactly two entries, neither with brackets inside (a constant expression, so that
/// the entries read are all there are), of a type that is no aggregate or vector: its value
/// number, type and `(incoming value, block)` entries.
fn two_entry_phi(line: &str) -> Option<(usize, String, Vec<PhiEntry>)> {
    let c = PHI.captures(line.trim_end())?;
    let value = c[1].parse::<usize>().ok()?;
    let ty = c[2].to_owned();
    let entries: Vec<PhiEntry> = ENTRY
        .captures_iter(&c[3])
        .filter_map(|e| Some((e[1].to_owned(), e[2].parse().ok()?)))
        .collect();
    let written = c[3].matches("], [").count() + 1;
    if entries.len() != 2 || written != 2 || ty.ends_with('}') || ty.ends_with('>') {
        return None;
    }
    Some((value, ty, entries))
}

/// N of a numbered local `%vN`.
fn local_number(v: &str) -> Option<usize> {
    v.strip_prefix("%v").and_then(|n| n.parse().ok())
}

/// How many parameters the function defined on `define` has; `None` when its parameter list
/// cannot be read, or one is tied to the return type (` returned`, `sret`), which cannot stay
/// when the return type changes.
fn argument_count(define: &str) -> Option<usize> {
    let (open, close) = define.find('(').zip(define.rfind(')'))?;
    let params = define.get(open..close)?;
    if params.contains(" returned") || params.contains("sret(") {
        return None;
    }
    Some(VREF.find_iter(params).count())
}

/// The instruction lines (no label, comment, blank or branch) of the function on lines
/// `s..=e` that lie in the blocks `blocks_in`.
fn instructions_in(
    lines: &[&str],
    block_of: &[Option<usize>],
    s: usize,
    e: usize,
    blocks_in: &[usize],
) -> Vec<usize> {
    (s + 1..e)
        .filter(|&j| block_of[j].is_some_and(|b| blocks_in.contains(&b)))
        .filter(|&j| {
            let t = lines[j].trim();
            !(t.is_empty() || t.starts_with(';') || t.ends_with(':') || t.starts_with("br "))
        })
        .collect()
}

/// Where a recurrence's cycle may close: the whole cycle (`next`), then each shorter one, the
/// phi fed back from an earlier value of its type `ty` on the chain `full` (an unrolled body
/// repeats its `load`s; one of them is a recurrence too).
fn cycle_ends(lines: &[&str], full: &[usize], next: usize, ty: &str) -> Vec<usize> {
    let mut ends = vec![next];
    for &j in full {
        let d = defined(lines[j]);
        if d != Some(next) && result_type(lines[j]) == Some(ty) {
            ends.extend(d);
        }
    }
    ends
}

/// The recurrences of the loops of the function on lines `s..=e`: for each, the whole cycle
/// and its shorter ones.
fn recurrences(lines: &[&str], block_of: &[Option<usize>], s: usize, e: usize) -> Vec<Recurrence> {
    let Some(nargs) = argument_count(lines[s]) else {
        return Vec::new();
    };
    // Where each value of the function is defined.
    let defs: HashMap<usize, usize> = (s + 1..e)
        .filter_map(|j| Some((defined(lines[j])?, j)))
        .collect();
    let mut out = Vec::new();
    for i in s + 1..e {
        let Some(h) = block_of[i] else { continue };
        let Some((value, ty, entries)) = two_entry_phi(lines[i]) else {
            continue;
        };
        // The loop: the phi's block, then blocks each only reached by the one before it
        // (`br label`), up to the latch, whose conditional branch goes back to the phi's block.
        let Some((blocks_in, latch)) = loop_of(lines, block_of, s, e, h) else {
            continue;
        };
        let body = instructions_in(lines, block_of, s, e, &blocks_in);
        let (back, init) = match (entries[0].1 == latch, entries[1].1 == latch) {
            (true, false) => (&entries[0].0, &entries[1].0),
            (false, true) => (&entries[1].0, &entries[0].0),
            _ => continue,
        };
        let Some(next) = local_number(back) else {
            continue;
        };
        // An argument stays (the nest keeps the parameters); another local becomes zero.
        let argument = local_number(init).is_some_and(|n| n < nargs);
        let init = if init.contains('%') && !argument {
            zero_of(&ty)
        } else {
            init.clone()
        };
        let Some(full) = chain_to(lines, &body, i, value, next) else {
            continue;
        };
        for end in cycle_ends(lines, &full, next, &ty) {
            let Some(chain) = chain_to(lines, &body, i, value, end) else {
                continue;
            };
            let inside: HashSet<usize> = chain.iter().filter_map(|&j| defined(lines[j])).collect();
            // Every local a chain line uses is the phi, a chain value, an argument, or an
            // input: a value computed without a phi, whose lines go to the nest's entry block.
            let Some(inputs) = inputs_of(lines, &chain, &defs, value, &inside, nargs) else {
                continue;
            };
            out.push(Recurrence {
                value,
                ty: ty.clone(),
                init: init.clone(),
                next: end,
                chain,
                inputs,
            });
        }
    }
    out
}

/// The lines of `body` (the loop's, in order; the phi on line `phi`) that lead from the phi's
/// `value` to `end`: those that depend on the phi and that `end` depends on. `None` when `end`
/// is not among them.
fn chain_to(
    lines: &[&str],
    body: &[usize],
    phi: usize,
    value: usize,
    end: usize,
) -> Option<Vec<usize>> {
    // Forward from the phi: the values that depend on it.
    let mut from_phi: HashSet<usize> = HashSet::from([value]);
    for &j in body {
        if j == phi {
            continue;
        }
        if let Some(d) = defined(lines[j]) {
            if from_phi.iter().any(|&v| refers(rest_of(lines[j]), v)) {
                from_phi.insert(d);
            }
        }
    }
    // Backward from the end: the values it depends on.
    let mut to_end: HashSet<usize> = HashSet::from([end]);
    for &j in body.iter().rev() {
        if j == phi {
            continue; // its back-edge value closes the cycle, behind `end`
        }
        if let Some(d) = defined(lines[j]) {
            if to_end.contains(&d) {
                for r in VREF.captures_iter(rest_of(lines[j])) {
                    if let Ok(n) = r[1].parse() {
                        to_end.insert(n);
                    }
                }
            }
        }
    }
    let chain: Vec<usize> = body
        .iter()
        .copied()
        .filter(|&j| j != phi)
        .filter(|&j| {
            defined(lines[j]).is_some_and(|d| from_phi.contains(&d) && to_end.contains(&d))
        })
        .collect();
    chain
        .iter()
        .any(|&j| defined(lines[j]) == Some(end))
        .then_some(chain)
}

/// The type of the value line `l` defines, where the text says it plainly: a `load`'s, a
/// cast's (after `to`), a binary operation's, a `getelementptr`'s (`ptr`); `None` otherwise.
fn result_type(l: &str) -> Option<&str> {
    let op = rest_of(l).trim();
    let mut words = op.split_whitespace();
    let opcode = words.next()?;
    match opcode {
        "load" => op["load ".len()..]
            .trim_start_matches("atomic ")
            .trim_start_matches("volatile ")
            .split(',')
            .next()
            .map(str::trim),
        "getelementptr" => Some("ptr"),
        "trunc" | "zext" | "sext" | "fptrunc" | "fpext" | "fptoui" | "fptosi" | "uitofp"
        | "sitofp" | "ptrtoint" | "inttoptr" | "bitcast" | "addrspacecast" => {
            let to = op.rfind(" to ")?;
            op[to + 4..].split(',').next().map(str::trim)
        }
        "add" | "sub" | "mul" | "udiv" | "sdiv" | "urem" | "srem" | "and" | "or" | "xor"
        | "shl" | "lshr" | "ashr" | "fadd" | "fsub" | "fmul" | "fdiv" | "frem" => words
            .find(|w| {
                !matches!(
                    *w,
                    "nuw"
                        | "nsw"
                        | "exact"
                        | "disjoint"
                        | "nnan"
                        | "ninf"
                        | "nsz"
                        | "arcp"
                        | "contract"
                        | "afn"
                        | "reassoc"
                        | "fast"
                )
            })
            .filter(|w| !w.contains('[') && !w.contains('{') && !w.contains('<')),
        _ => None,
    }
}

/// A line after its `%vN = `, so that a definition does not count as a use.
fn rest_of(l: &str) -> &str {
    VDEF.find(l).map_or(l, |m| &l[m.end()..])
}

/// The zero constant of an IR type.
fn zero_of(ty: &str) -> String {
    match ty {
        "ptr" => "null".into(),
        "half" | "bfloat" | "float" | "double" | "fp128" | "x86_fp80" => "0.0".into(),
        t if t.starts_with('i') && t[1..].bytes().all(|b| b.is_ascii_digit()) => "0".into(),
        _ => "zeroinitializer".into(),
    }
}

/// The function of `define` rewritten as the nest around `r`, in the labelled form with the
/// nest's own names (numbered by the caller).
fn nest(define: &str, lines: &[&str], r: &Recurrence, trip: u64) -> Option<String> {
    let d = DEFINE.captures(define.trim_end())?;
    let ty = &r.ty;
    let mut f = format!("define {ty} {}{}\n", &d[2], &d[3]);
    f.push_str("nest.entry:\n");
    for &j in &r.inputs {
        f.push_str(lines[j]);
    }
    f.push_str("  br label %nest.outer\n");
    f.push_str("nest.outer:\n  br label %nest.loop\n");
    f.push_str("nest.loop:\n");
    f.push_str("  %nest.i = phi i32 [ 0, %nest.outer ], [ %nest.i1, %nest.loop ]\n");
    f.push_str(&format!(
        "  %v{} = phi {ty} [ {}, %nest.outer ], [ %v{}, %nest.loop ]\n",
        r.value, r.init, r.next
    ));
    for &j in &r.chain {
        f.push_str(lines[j]);
    }
    f.push_str("  %nest.i1 = add i32 %nest.i, 1\n");
    f.push_str(&format!("  %nest.more = icmp ult i32 %nest.i, {trip}\n"));
    f.push_str("  br i1 %nest.more, label %nest.loop, label %nest.latch\n");
    f.push_str("nest.latch:\n  br i1 false, label %nest.outer, label %nest.exit\n");
    f.push_str(&format!("nest.exit:\n  ret {ty} %v{}\n}}\n", r.next));
    Some(f)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// opt-gh68553's IR as llvm-reduce and the cuts leave it without the nest (23 lines): four
    /// loops, the recurrence in the innermost.
    const NEST4: &str = "define ptr @j() {
  br label %1

  %2 = phi i32 [ 0, %0 ], [ %14, %20 ]
  br label %3

  br label %4

  %5 = phi i32 [ 0, %3 ], [ %18, %17 ]
  %6 = phi i32 [ 0, %3 ], [ %14, %17 ]
  br label %7

  %8 = phi i32 [ 0, %4 ], [ %15, %7 ]
  %9 = phi i32 [ %6, %4 ], [ %14, %7 ]
  %10 = sext i32 %9 to i64
  %11 = getelementptr [0 x i32], ptr null, i64 0, i64 %10
  %12 = load i32, ptr %11
  %13 = xor i32 %12, 1
  %14 = and i32 %13, 5
  %15 = add i32 %8, 1
  %16 = icmp ult i32 %8, 8
  br i1 %16, label %7, label %17

  %18 = add i32 %5, 1
  %19 = icmp ult i32 %5, 700
  br i1 %19, label %4, label %20

  br i1 false, label %3, label %1

}
";

    #[test]
    fn the_innermost_recurrence_becomes_a_two_loop_nest() {
        let c = nests(NEST4, 5600);
        // Block %7 carries two recurrences, shortest chain first: the induction variable
        // (%8), then the load chain (%9) fed back from the `load` (%12, a shorter cycle of
        // its type), from the `xor` (%13), and whole.
        assert_eq!(c.len(), 4, "{c:#?}");
        assert!(c[0].contains("  %5 = add i32 %4, 1\n"), "{}", c[0]);
        assert!(c[0].contains("  ret i32 %5\n"), "{}", c[0]);
        assert_eq!(
            c[1],
            "define i32 @j() {
  br label %1
  br label %2
  %3 = phi i32 [ 0, %1 ], [ %8, %2 ]
  %4 = phi i32 [ 0, %1 ], [ %7, %2 ]
  %5 = sext i32 %4 to i64
  %6 = getelementptr [0 x i32], ptr null, i64 0, i64 %5
  %7 = load i32, ptr %6
  %8 = add i32 %3, 1
  %9 = icmp ult i32 %3, 5600
  br i1 %9, label %2, label %10
  br i1 false, label %1, label %11
  ret i32 %7
}
"
        );
        assert!(c[2].contains("  ret i32 %8\n"), "{}", c[2]);
        assert_eq!(
            c[3],
            "define i32 @j() {
  br label %1
  br label %2
  %3 = phi i32 [ 0, %1 ], [ %10, %2 ]
  %4 = phi i32 [ 0, %1 ], [ %9, %2 ]
  %5 = sext i32 %4 to i64
  %6 = getelementptr [0 x i32], ptr null, i64 0, i64 %5
  %7 = load i32, ptr %6
  %8 = xor i32 %7, 1
  %9 = and i32 %8, 5
  %10 = add i32 %3, 1
  %11 = icmp ult i32 %3, 5600
  br i1 %11, label %2, label %12
  br i1 false, label %1, label %13
  ret i32 %9
}
"
        );
    }

    #[test]
    fn the_entry_value_from_another_block_becomes_zero_and_other_functions_stay() {
        let ir = "@g = global i32 0

define void @f(ptr %0) {
  %2 = load ptr, ptr %0
  br label %3

  %4 = phi ptr [ %2, %1 ], [ %5, %3 ]
  %5 = load ptr, ptr %4
  %6 = icmp eq ptr %5, null
  br i1 %6, label %3, label %7

  ret void
}

declare void @h()
";
        let c = nests(ir, 64);
        assert_eq!(c.len(), 1, "{c:#?}");
        assert!(
            c[0].starts_with("@g = global i32 0\n\ndefine ptr @f(ptr %0) {\n"),
            "{}",
            c[0]
        );
        assert!(
            c[0].contains("= phi ptr [ null, %2 ], [ %6, %3 ]\n"),
            "{}",
            c[0]
        );
        assert!(c[0].contains("icmp ult i32 %4, 64\n"), "{}", c[0]);
        assert!(
            c[0].ends_with("  ret ptr %6\n}\n\ndeclare void @h()\n"),
            "{}",
            c[0]
        );
    }

    #[test]
    fn values_from_outside_the_loop_are_computed_in_the_nests_entry() {
        let ir = "define i32 @f(i32 %0) {
  %2 = add i32 %0, 1
  %3 = mul i32 %2, 3
  br label %4

  %5 = phi i32 [ 0, %1 ], [ %8, %9 ]
  %6 = phi i32 [ 0, %1 ], [ %10, %9 ]
  br label %7

  %8 = add i32 %5, %3
  br label %9

  %10 = add i32 %6, 1
  %11 = icmp ult i32 %6, 9
  br i1 %11, label %4, label %12, !llvm.loop !0

  ret i32 %8
}
";
        // The recurrence %5 runs over a loop of three blocks; the chain uses %3, computed from
        // %2 before the loop: both go to the nest's entry.
        let c = nests(ir, 16);
        assert_eq!(c.len(), 2, "{c:#?}");
        let want = "define i32 @f(i32 %0) {
  %2 = add i32 %0, 1
  %3 = mul i32 %2, 3
  br label %4
  br label %5
  %6 = phi i32 [ 0, %4 ], [ %9, %5 ]
  %7 = phi i32 [ 0, %4 ], [ %8, %5 ]
  %8 = add i32 %7, %3
  %9 = add i32 %6, 1
  %10 = icmp ult i32 %6, 16
  br i1 %10, label %5, label %11
  br i1 false, label %4, label %12
  ret i32 %8
}
";
        assert!(c.iter().any(|x| x == want), "{c:#?}");
    }

    #[test]
    fn a_chain_that_uses_another_loops_value_is_left() {
        // %4 is the outer loop's phi: no entry block can compute it.
        let ir = "define i32 @f(i32 %0) {
  br label %2

  %3 = phi i32 [ 0, %1 ], [ %7, %9 ]
  %4 = phi i32 [ 0, %1 ], [ %10, %9 ]
  br label %5

  %6 = phi i32 [ 0, %2 ], [ %7, %5 ]
  %7 = add i32 %6, %4
  %8 = icmp ult i32 %6, 9
  br i1 %8, label %5, label %9

  %10 = add i32 %4, 1
  br label %2
}
";
        assert!(labelled(ir).is_some(), "the sample must be readable");
        let c = nests(ir, 16);
        assert!(c.is_empty(), "{c:#?}");
        // With the outer value an argument instead, the nest is written.
        let arg = ir.replace("%7 = add i32 %6, %4", "%7 = add i32 %6, %0");
        assert_eq!(nests(&arg, 16).len(), 1);
    }

    #[test]
    fn forms_this_does_not_read_give_no_nest_and_no_panic() {
        // Parameters over two lines (valid IR; `numbered` leaves such a define alone).
        let split = "define i32 @f(\n  i32 %x) {\n  ret i32 %x\n}\n";
        assert!(nests(split, 8).is_empty());
        let quoted = "define i32 @\"a)\"(\n  i32 %x) {\n  ret i32 %x\n}\n";
        assert!(nests(quoted, 8).is_empty());
        // A parameter tied to the return type.
        let returned = NEST4.replace("define ptr @j() {", "define ptr @j(ptr returned %p) {");
        assert!(nests(&returned, 8).is_empty());
        // A phi with three entries, one a constant expression with brackets.
        let three = NEST4.replace(
            "[ %6, %4 ], [ %14, %7 ]",
            "[ %6, %4 ], [ getelementptr ([2 x i32], ptr null, i64 0, i64 1), %3 ], [ %14, %7 ]",
        );
        assert_eq!(
            nests(&three, 8).len(),
            1,
            "only the induction variable is left"
        );
        for junk in ["", "define", "define {\n}\n", "}\n", "define i32 @f() {\n"] {
            assert!(nests(junk, 8).is_empty(), "{junk:?}");
        }
    }

    #[test]
    fn loop_metadata_on_the_branch_and_an_argument_as_start_value_are_read() {
        let ir = "define i32 @f(i32 %0) {
  br label %2

  %3 = phi i32 [ %0, %1 ], [ %5, %2 ]
  %4 = mul i32 %3, 3
  %5 = xor i32 %4, %0
  %6 = icmp ult i32 %5, 9
  br i1 %6, label %2, label %7, !llvm.loop !0

  ret i32 %5
}

!0 = distinct !{!0}
";
        let c = nests(ir, 16);
        // Fed back from the `mul`, then whole.
        assert_eq!(c.len(), 2, "{c:#?}");
        assert!(
            c[0].contains("  %5 = phi i32 [ %0, %2 ], [ %6, %3 ]\n"),
            "{}",
            c[0]
        );
        // The argument stays the start value; the chain still uses it.
        assert!(
            c[1].contains("  %5 = phi i32 [ %0, %2 ], [ %7, %3 ]\n"),
            "{}",
            c[1]
        );
        assert!(c[1].contains("  %7 = xor i32 %6, %0\n"), "{}", c[1]);
        assert!(
            c[1].ends_with("  ret i32 %7\n}\n\n!0 = distinct !{!0}\n"),
            "{}",
            c[1]
        );
    }

    proptest::proptest! {
        /// Any edit of the sample's lines (some dropped, some cut short, some joined) gives
        /// candidates or none, never a panic: case IR comes from strangers, and llvm-reduce
        /// hands back its input unreduced when it fails.
        #[test]
        fn edited_ir_never_panics(
            keep in proptest::collection::vec(0u8..4, 40),
            cut in proptest::collection::vec(0usize..60, 40),
        ) {
            let mut text = String::new();
            for (k, l) in NEST4.lines().enumerate() {
                match keep.get(k).copied().unwrap_or(0) {
                    0 => { text.push_str(l); text.push('\n'); }
                    1 => {}
                    2 => {
                        let n = cut.get(k).copied().unwrap_or(0).min(l.len());
                        let n = (0..=n).rev().find(|&n| l.is_char_boundary(n)).unwrap_or(0);
                        text.push_str(&l[..n]);
                        text.push('\n');
                    }
                    _ => text.push_str(l),
                }
            }
            let _ = nests(&text, 8);
        }
    }
}
