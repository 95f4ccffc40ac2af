//! Structural edits llvm-reduce leaves undone, offered as candidates on numbered IR.
//!
//! Why this exists: after llvm-reduce and the line cuts, the IR is in the numbered form
//! ([`super::numbered`]), where a line that defines a value cannot simply go (the numbers
//! after it would be off), and some edits need more than one line changed at once. On a
//! reduced loop nest these are left:
//! - [`constant_branches`]: `br i1 false, label %a, label %b` becomes `br label %b`, and the
//!   block no longer branched to loses its `phi` entries from this block (a loop that never
//!   iterates; its blocks then fold away as forwarding blocks, [`super::numbered::folded`]);
//! - [`dead_defs`]: a value nothing uses, its line taken out and the rest numbered again;
//! - [`bypassed`]: a binary operation replaced by one of its operands of its own type (the
//!   `xor` and `and` llvm-reduce's quick round leaves in a chain);
//! - [`constant_operands`]: a local operand of a binary operation replaced by 0 or 1 (the
//!   `xor` with a `load` from null it leaves; the `load` is then unused, [`dead_defs`]).
//!
//! Pure: text in, candidate texts out (each numbered again); the stage keeps one only when the
//! crash stays.

use std::sync::LazyLock;

use regex::Regex;

use super::numbered::{blocks, defined, labelled, numbered, refers};

/// A conditional branch on a constant.
static CONST_BR: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(\s*)br i1 (true|false), label %v(\d+), label %v(\d+)\s*$").expect("valid regex")
});
/// A binary operation whose operands have the result's type.
static BINOP: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"^\s*%v(\d+) = (?:add|sub|mul|and|or|xor|shl|lshr|ashr)(?: (?:nuw|nsw|exact|disjoint))* [a-z0-9]+ ([^,]+), ([^,]+?)\s*$",
    )
    .expect("valid regex")
});

/// `phi` line `l` without its entry from block `from`, or `None` when it has no such entry
/// this can take out (an entry with brackets inside, or its only entry).
fn without_entry(l: &str, from: usize) -> Option<String> {
    let re = Regex::new(&format!(r"(, )?\[ [^\[\]]*, %v{from} \](, )?")).ok()?;
    let c = re.captures(l)?;
    let m = c.get(0)?;
    let rep = if c.get(1).is_some() && c.get(2).is_some() {
        ", "
    } else {
        ""
    };
    if c.get(1).is_none() && c.get(2).is_none() {
        return None;
    }
    Some(format!("{}{rep}{}", &l[..m.start()], &l[m.end()..]))
}

/// Each `br i1 true|false` made unconditional, the untaken block's `phi` entries from the
/// branch's block taken out; one candidate per branch.
pub fn constant_branches(ir: &str) -> Vec<String> {
    let Some(text) = labelled(ir) else {
        return Vec::new();
    };
    let (lines, block_of) = blocks(&text);
    let mut out = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        let Some(c) = CONST_BR.captures(l.trim_end_matches('\n')) else {
            continue;
        };
        let (Some(from), Ok(t), Ok(f)) =
            (block_of[i], c[3].parse::<usize>(), c[4].parse::<usize>())
        else {
            continue;
        };
        let (taken, dropped) = if &c[2] == "true" { (t, f) } else { (f, t) };
        let mut cand = String::with_capacity(text.len());
        let mut ok = true;
        for (j, m) in lines.iter().enumerate() {
            if j == i {
                cand.push_str(&format!("{}br label %v{taken}\n", &c[1]));
            } else if taken != dropped
                && block_of[j] == Some(dropped)
                && m.contains(" = phi ")
                && refers(m, from)
            {
                match without_entry(m, from) {
                    Some(x) => cand.push_str(&x),
                    None => {
                        ok = false;
                        break;
                    }
                }
            } else {
                cand.push_str(m);
            }
        }
        if let (true, Some(n)) = (ok, numbered(&cand)) {
            out.push(n);
        }
    }
    out
}

/// Each value nothing uses, its line taken out; one candidate per value.
pub fn dead_defs(ir: &str) -> Vec<String> {
    let Some(text) = labelled(ir) else {
        return Vec::new();
    };
    let (lines, block_of) = blocks(&text);
    let mut out = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        let Some(n) = defined(l) else {
            continue;
        };
        if block_of[i].is_none() || block_of[i] == Some(n) {
            continue;
        }
        let used = lines
            .iter()
            .enumerate()
            .any(|(j, m)| j != i && block_of[j].is_some() && refers(m, n));
        if used {
            continue;
        }
        let cand: String = lines
            .iter()
            .enumerate()
            .filter(|&(j, _)| j != i)
            .map(|(_, m)| *m)
            .collect();
        if let Some(c) = numbered(&cand) {
            out.push(c);
        }
    }
    out
}

/// Runs `each` on every binary operation inside a block of `ir`'s labelled form, with the
/// labelled lines, their blocks, the operation's line index and its [`BINOP`] captures, and
/// returns the candidates it pushed.
fn each_binop(
    ir: &str,
    mut each: impl FnMut(&[&str], &[Option<usize>], usize, &regex::Captures<'_>, &mut Vec<String>),
) -> Vec<String> {
    let Some(text) = labelled(ir) else {
        return Vec::new();
    };
    let (lines, block_of) = blocks(&text);
    let mut out = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        if block_of[i].is_none() {
            continue;
        }
        if let Some(c) = BINOP.captures(l.trim_end_matches('\n')) {
            each(&lines, &block_of, i, &c, &mut out);
        }
    }
    out
}

/// Each binary operation replaced by one of its local operands (its uses then use that
/// operand); one candidate per operation and operand.
pub fn bypassed(ir: &str) -> Vec<String> {
    each_binop(ir, |lines, block_of, i, c, out| {
        let Ok(n) = c[1].parse::<usize>() else {
            return;
        };
        for op in [&c[2], &c[3]] {
            let op = op.trim();
            let Some(k) = op.strip_prefix("%v").and_then(|k| k.parse::<usize>().ok()) else {
                continue;
            };
            if k == n {
                continue;
            }
            let pat = Regex::new(&format!(r"%v{n}\b")).expect("valid regex");
            let cand: String = lines
                .iter()
                .enumerate()
                .filter(|&(j, _)| j != i)
                .map(|(j, m)| {
                    if block_of[j].is_some() {
                        pat.replace_all(m, format!("%v{k}").as_str()).into_owned()
                    } else {
                        (*m).to_owned()
                    }
                })
                .collect();
            if let Some(c) = numbered(&cand) {
                out.push(c);
            }
        }
    })
}

/// Each local operand of a binary operation replaced by 0, then by 1; one candidate each.
pub fn constant_operands(ir: &str) -> Vec<String> {
    each_binop(ir, |lines, _, i, c, out| {
        let l = lines[i];
        if !l.contains(" i") {
            return;
        }
        for g in [2, 3] {
            let Some(m) = c.get(g) else { continue };
            if !m.as_str().trim().starts_with("%v") {
                continue;
            }
            for k in ["0", "1"] {
                let line = format!("{}{k}{}", &l[..m.start()], &l[m.end()..]);
                let cand: String = lines
                    .iter()
                    .enumerate()
                    .map(|(j, x)| if j == i { line.as_str() } else { x })
                    .collect();
                if let Some(n) = numbered(&cand) {
                    out.push(n);
                }
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// opt-gh68553's loop nest as the shallow path leaves it (24 lines; the middle bound
    /// already multiplied: 7 → 700).
    const GH68553: &str = "define ptr @j() {
  br label %1

  %2 = phi i32 [ 0, %0 ], [ %15, %21 ]
  br label %3

  br label %4

  %5 = phi i32 [ 0, %3 ], [ %19, %18 ]
  %6 = phi i32 [ 0, %3 ], [ %15, %18 ]
  br label %7

  %8 = phi i32 [ 0, %4 ], [ %16, %7 ]
  %9 = phi i32 [ %6, %4 ], [ %15, %7 ]
  %10 = sext i32 %9 to i64
  %11 = getelementptr [0 x i32], ptr null, i64 0, i64 %10
  %12 = load i32, ptr %11
  %13 = and i32 %12, 1
  %14 = xor i32 %13, 1
  %15 = and i32 %14, 1
  %16 = add i32 %8, 1
  %17 = icmp ult i32 %8, 8
  br i1 %17, label %7, label %18

  %19 = add i32 %5, 1
  %20 = icmp ult i32 %5, 700
  br i1 %20, label %4, label %21

  br i1 false, label %3, label %1

}
";

    #[test]
    fn a_constant_branch_becomes_unconditional() {
        let got = constant_branches(GH68553);
        assert_eq!(got.len(), 1, "{got:?}");
        assert!(got[0].contains("\n  br label %1\n\n}"), "{}", got[0]);
        assert!(!got[0].contains("br i1 false"), "{}", got[0]);
        // Block %3 is no longer branched to from %21: its forwarding now folds.
        let folded = super::super::numbered::folded(&got[0]);
        assert!(!folded.is_empty());
        // A dropped target's phi loses the entry from the branch's block.
        let ir = "define i32 @f(i32 %0) {\n  br i1 true, label %2, label %3\n\n  ret i32 0\n\n  %4 = phi i32 [ %0, %1 ], [ 1, %3 ]\n  br label %3\n}\n";
        assert_eq!(
            constant_branches(ir),
            ["define i32 @f(i32 %0) {\n  br label %2\n\n  ret i32 0\n\n  %4 = phi i32 [ 1, %3 ]\n  br label %3\n}\n"]
        );
    }

    #[test]
    fn an_unused_value_goes_and_the_rest_is_numbered_again() {
        let got = dead_defs(GH68553);
        assert_eq!(got.len(), 1, "{got:?}");
        assert!(got[0].starts_with("define ptr @j() {\n  br label %1\n\n  br label %2\n"));
        assert!(got[0].contains("%19 = icmp ult i32 %4, 700"), "{}", got[0]);
    }

    #[test]
    fn a_local_operand_becomes_0_or_1() {
        let ir = "define i32 @f(i32 %0) {\n  %2 = load i32, ptr null\n  %3 = xor i32 %0, %2\n  ret i32 %3\n}\n";
        let got = constant_operands(ir);
        assert_eq!(got.len(), 4, "{got:?}");
        assert!(got.contains(&"define i32 @f(i32 %0) {\n  %2 = load i32, ptr null\n  %3 = xor i32 %0, 0\n  ret i32 %3\n}\n".to_owned()));
        assert!(got.contains(&"define i32 @f(i32 %0) {\n  %2 = load i32, ptr null\n  %3 = xor i32 1, %2\n  ret i32 %3\n}\n".to_owned()));
        // The load is then unused and goes.
        assert_eq!(
            dead_defs(&got[2]),
            ["define i32 @f(i32 %0) {\n  %2 = xor i32 %0, 0\n  ret i32 %2\n}\n"]
        );
    }

    #[test]
    fn a_binary_operation_is_bypassed_by_its_local_operands() {
        let got = bypassed(GH68553);
        // and %12, xor %13, and %14, add %8, add %5: one local operand each.
        assert_eq!(got.len(), 5, "{got:?}");
        let xor = got
            .iter()
            .find(|c| !c.contains("xor") && c.contains("and i32 %13, 1"))
            .unwrap();
        assert!(xor.contains("%14 = and i32 %13, 1\n  %15 = add"), "{xor}");
    }
}
