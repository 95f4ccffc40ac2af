//! A stack overflow over an unrolled recurrence, rewritten as the smallest loop nest that
//! unrolls it.
//!
//! Why this exists: opt-gh68553's crash is a recursion in ScalarEvolution as deep as a chain
//! of values the unroller writes: a loop-carried recurrence (`%c = phi i32 [ 0, … ], [ %n, … ]`,
//! `%n` computed from `%c` by a `sext`, a `getelementptr` and a `load`) unrolled a few thousand
//! times, inside a loop whose exit value `indvars` rewrites. llvm-reduce and the textual cuts
//! delete code; they cannot trade a loop of the nest for a larger trip count of another, nor
//! give the function a `ret` of the chain's value, so they stop at the four-loop nest clang
//! wrote (23 lines; BENCHMARKS.md, Sessions 9–11). By hand the crash needs only two loops:
//! - the recurrence alone in a one-block loop that runs `trip` + 1 times (unrolled fully),
//! - inside a loop that never iterates (`br i1 false`), whose exit value is the chain's last
//!   value, returned: `indvars` rewrites that exit value and walks the unrolled chain.
//!
//! [`nests`] writes that nest around each recurrence of a one-block loop of the reduced IR, as
//! a replacement of its function (the other functions and globals stay). It is a rewrite, not
//! a deletion: the stage keeps it only when the crash stays and the result is shorter, and
//! searches the trip count (the depth) by testing.
//!
//! Pure: text in, candidate texts out (numbered, [`super::numbered`]).

use std::collections::HashSet;
use std::sync::LazyLock;

use regex::Regex;

use super::numbered::{blocks, labelled, numbered, refers};

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
/// A value definition of the labelled form.
static VDEF: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^\s*%v(\d+) = ").expect("valid regex"));
/// A local of the labelled form.
static VREF: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"%v(\d+)\b").expect("valid regex"));
/// A `define` line: what precedes the name, the name, and the parameter list onwards.
static DEFINE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"^define (.*?)(@(?:[-a-zA-Z$._0-9]+|"[^"]*"))(\(.*)$"#).expect("valid regex")
});

/// A loop-carried recurrence of a one-block loop: the `phi`, and the lines of its block that
/// lead from it to the value it takes on the back edge.
struct Recurrence {
    /// Index of the `phi` line.
    phi: usize,
    /// Its number and type.
    value: usize,
    ty: String,
    /// The value on entry (a constant; a local becomes the type's zero).
    init: String,
    /// The value from the back edge.
    next: usize,
    /// The lines of the chain, in order.
    chain: Vec<usize>,
}

/// Each recurrence of a one-block loop in `ir`, its function replaced by the two-loop nest
/// described in the module doc, the inner loop's exit test `icmp ult i32 %i, trip` (`trip` + 1
/// iterations); numbered. One candidate per recurrence: functions in text order, within one
/// the longest chain first. None for a function this does not read (a define over several
/// lines, quoted local names, a parameter tied to the return type, a `phi` with a constant
/// expression or more than two entries).
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
                // The longest chain first: an induction variable's is one `add`.
                rs.sort_by_key(|r| std::cmp::Reverse(r.chain.len()));
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

/// The recurrences of the one-block loops of the function on lines `s..=e`.
fn recurrences(lines: &[&str], block_of: &[Option<usize>], s: usize, e: usize) -> Vec<Recurrence> {
    let define = lines[s];
    let Some(params) = define
        .find('(')
        .zip(define.rfind(')'))
        .and_then(|(open, close)| define.get(open..close))
    else {
        return Vec::new();
    };
    // A parameter tied to the return type cannot stay when the return type changes.
    if params.contains(" returned") || params.contains("sret(") {
        return Vec::new();
    }
    let nargs = VREF.find_iter(params).count();
    let mut out = Vec::new();
    for i in s + 1..e {
        let Some(h) = block_of[i] else { continue };
        let Some(c) = PHI.captures(lines[i].trim_end()) else {
            continue;
        };
        let (Ok(value), ty) = (c[1].parse::<usize>(), c[2].to_owned()) else {
            continue;
        };
        let entries: Vec<(String, usize)> = ENTRY
            .captures_iter(&c[3])
            .filter_map(|e| Some((e[1].to_owned(), e[2].parse().ok()?)))
            .collect();
        // Two entries, neither with brackets inside (a constant expression), so that the
        // entries read are all there are.
        let written = c[3].matches("], [").count() + 1;
        if entries.len() != 2 || written != 2 || ty.ends_with('}') || ty.ends_with('>') {
            continue;
        }
        // The block's lines, and its terminator: a branch back to itself.
        let body: Vec<usize> = (s + 1..e)
            .filter(|&j| block_of[j] == Some(h))
            .filter(|&j| {
                let t = lines[j].trim();
                !(t.is_empty() || t.starts_with(';') || t.ends_with(':'))
            })
            .collect();
        let Some(&last) = body.last() else { continue };
        let Some(br) = CONDBR.captures(lines[last].trim_end()) else {
            continue;
        };
        if br[1].parse() != Ok(h) && br[2].parse() != Ok(h) {
            continue;
        }
        let (back, init) = match (entries[0].1 == h, entries[1].1 == h) {
            (true, false) => (&entries[0].0, &entries[1].0),
            (false, true) => (&entries[1].0, &entries[0].0),
            _ => continue,
        };
        let Some(next) = back
            .strip_prefix("%v")
            .and_then(|n| n.parse::<usize>().ok())
        else {
            continue;
        };
        let defined = |j: usize| {
            VDEF.captures(lines[j])
                .and_then(|c| c[1].parse::<usize>().ok())
        };
        // Forward from the phi: the values that depend on it.
        let mut from_phi: HashSet<usize> = HashSet::from([value]);
        for &j in &body {
            if j == i || j == last {
                continue;
            }
            if let Some(d) = defined(j) {
                if from_phi.iter().any(|&v| refers(rest_of(lines[j]), v)) {
                    from_phi.insert(d);
                }
            }
        }
        // Backward from the back-edge value: the values it depends on.
        let mut to_next: HashSet<usize> = HashSet::from([next]);
        for &j in body.iter().rev() {
            if let Some(d) = defined(j) {
                if to_next.contains(&d) {
                    for r in VREF.captures_iter(rest_of(lines[j])) {
                        if let Ok(n) = r[1].parse() {
                            to_next.insert(n);
                        }
                    }
                }
            }
        }
        let chain: Vec<usize> = body
            .iter()
            .copied()
            .filter(|&j| j != i && j != last)
            .filter(|&j| defined(j).is_some_and(|d| from_phi.contains(&d) && to_next.contains(&d)))
            .collect();
        if !chain.iter().any(|&j| defined(j) == Some(next)) {
            continue;
        }
        // Every local a chain line uses is the phi, a chain value or an argument.
        let inside: HashSet<usize> = chain.iter().filter_map(|&j| defined(j)).collect();
        let closed = chain.iter().all(|&j| {
            VREF.captures_iter(rest_of(lines[j])).all(|r| {
                r[1].parse::<usize>()
                    .is_ok_and(|n| n == value || n < nargs || inside.contains(&n))
            })
        });
        if !closed {
            continue;
        }
        // An argument stays (the nest keeps the parameters); another local becomes zero.
        let argument = init
            .strip_prefix("%v")
            .and_then(|n| n.parse::<usize>().ok())
            .is_some_and(|n| n < nargs);
        let init = if init.contains('%') && !argument {
            zero_of(&ty)
        } else {
            init.clone()
        };
        out.push(Recurrence {
            phi: i,
            value,
            ty,
            init,
            next,
            chain,
        });
    }
    out
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
    f.push_str("nest.entry:\n  br label %nest.outer\n");
    f.push_str("nest.outer:\n  br label %nest.loop\n");
    f.push_str("nest.loop:\n");
    f.push_str("  %nest.i = phi i32 [ 0, %nest.outer ], [ %nest.i1, %nest.loop ]\n");
    f.push_str(&format!(
        "  %v{} = phi {ty} [ {}, %nest.outer ], [ %v{}, %nest.loop ]\n",
        r.value, r.init, r.next
    ));
    for &j in &r.chain {
        debug_assert!(j != r.phi);
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

    /// opt-gh68553's IR as the stage reduced it in Session 11 (23 lines): four loops, the
    /// recurrence in the innermost.
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
        // Block %7 carries two recurrences: the load chain (%9, longest first) and the
        // induction variable (%8).
        assert_eq!(c.len(), 2, "{c:#?}");
        assert_eq!(
            c[0],
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
        assert!(
            c[1].contains(
                "  %5 = add i32 %4, 1
"
            ),
            "{}",
            c[1]
        );
        assert!(
            c[1].contains(
                "  ret i32 %5
"
            ),
            "{}",
            c[1]
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
    fn a_chain_that_uses_a_value_from_outside_its_loop_is_left() {
        let ir = "define i32 @f(i32 %0) {
  %2 = add i32 %0, 1
  br label %3

  %4 = phi i32 [ 0, %1 ], [ %6, %3 ]
  %5 = add i32 %4, %2
  %6 = add i32 %5, %0
  %7 = icmp ult i32 %4, 9
  br i1 %7, label %3, label %8

  ret i32 %6
}
";
        // `%2` is defined in the entry block: no nest.
        assert!(nests(ir, 100).is_empty());
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
        assert_eq!(c.len(), 1, "{c:#?}");
        // The argument stays the start value; the chain still uses it.
        assert!(
            c[0].contains("  %5 = phi i32 [ %0, %2 ], [ %7, %3 ]\n"),
            "{}",
            c[0]
        );
        assert!(c[0].contains("  %7 = xor i32 %6, %0\n"), "{}", c[0]);
        assert!(
            c[0].ends_with("  ret i32 %7\n}\n\n!0 = distinct !{!0}\n"),
            "{}",
            c[0]
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
