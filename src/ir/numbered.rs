//! Local names written as numbers, so that no block needs a label line; forwarding blocks
//! folded away.
//!
//! Why this exists: llvm-reduce keeps the names clang and the passes gave (`.lr.ph`,
//! `._crit_edge`, `%.lcssa7`), and a named block needs its `name:` line, which the line cuts
//! cannot drop while a `br`/`phi` refers to it. With every
//! argument, block and value of a function numbered in the order LLVM numbers unnamed ones
//! (arguments, then each block and the values defined in it), every label is implicit and is
//! left out, as the stage's numbered labels already are. In that form a block that only
//! branches on (`br label %X`), from one predecessor, is a line llvm-reduce 19 leaves:
//! [`folded`] offers each such block folded into its
//! predecessor's branch.
//!
//! Pure: text in, text out; the stage keeps the result only when the crash stays.

use std::collections::HashMap;
use std::sync::LazyLock;

use regex::Regex;

/// A local name (`%x`, `%.lcssa7`, `%12`); quoted names are not handled (`None` below).
static LOCAL: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"%([-a-zA-Z$._0-9]+)").expect("valid regex"));
/// A block label line: `name:` with an optional comment.
static LABEL: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^([-a-zA-Z$._0-9]+):\s*(?:;.*)?$").expect("valid regex"));
/// A value definition at the start of an instruction line.
static DEF: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^%([-a-zA-Z$._0-9]+) = ").expect("valid regex"));
/// A named type (`%struct.S = type …`): a name a local must not be mistaken for.
static TYPE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?m)^%([-a-zA-Z$._0-9]+) = type ").expect("valid regex"));

const TERMINATORS: &[&str] = &[
    "br",
    "switch",
    "ret",
    "unreachable",
    "indirectbr",
    "invoke",
    "resume",
    "callbr",
    "catchswitch",
    "catchret",
    "cleanupret",
];

/// `ir` with each function's locals numbered and its label lines left out, or `None` when
/// nothing changes or the text has a form this does not read (quoted local names, a local
/// named like a type).
pub fn numbered(ir: &str) -> Option<String> {
    let out = each_function(ir, false)?;
    (out != ir).then_some(out)
}

/// `ir` with every local named `%vN` (N its number) and every block given its `vN:` label:
/// a form where blocks can be edited and the result numbered again ([`numbered`]).
pub(super) fn labelled(ir: &str) -> Option<String> {
    each_function(ir, true)
}

/// `ir` with every `define … {` body renamed by [`function`] (`labels`: the `vN` form).
fn each_function(ir: &str, labels: bool) -> Option<String> {
    if ir.contains("%\"") {
        return None;
    }
    let types: Vec<&str> = TYPE
        .captures_iter(ir)
        .filter_map(|c| c.get(1))
        .map(|m| m.as_str())
        .collect();
    let mut out = String::with_capacity(ir.len());
    let mut lines = ir.split_inclusive('\n').peekable();
    while let Some(l) = lines.next() {
        if !l.starts_with("define ") || !l.trim_end().ends_with('{') {
            out.push_str(l);
            continue;
        }
        let mut body = Vec::new();
        for b in lines.by_ref() {
            let end = b.trim_end() == "}";
            body.push(b);
            if end {
                break;
            }
        }
        out.push_str(&function(l, &body, &types, labels)?);
    }
    Some(out)
}

/// The renaming of one function.
struct Names<'a> {
    /// Old name → new number (the count of names given before it).
    map: HashMap<String, String>,
    /// Old unnamed values so far: a numbered old name must be the next one.
    unnamed: usize,
    types: &'a [&'a str],
}

impl Names<'_> {
    fn add(&mut self, old: &str) -> Option<()> {
        if old.bytes().all(|b| b.is_ascii_digit()) {
            if old.parse::<usize>().ok()? != self.unnamed {
                return None;
            }
            self.unnamed += 1;
        }
        if self.types.contains(&old) || self.map.contains_key(old) {
            return None;
        }
        self.map.insert(old.to_owned(), self.map.len().to_string());
        Some(())
    }
}

/// The arguments' names: the `%x` in the `define` line's parameter list, in order; `None`
/// unless each parameter has one (and for a variadic function).
fn argument_names(define: &str) -> Option<Vec<&str>> {
    let open = define.find('(')?;
    let close = define.rfind(')')?;
    let params = define.get(open + 1..close)?;
    let mut depth = 0i32;
    let mut count = usize::from(!params.trim().is_empty());
    for b in params.bytes() {
        match b {
            b'(' | b'{' | b'[' | b'<' => depth += 1,
            b')' | b'}' | b']' | b'>' => depth -= 1,
            b',' if depth == 0 => count += 1,
            _ => {}
        }
    }
    let args: Vec<&str> = LOCAL
        .captures_iter(params)
        .filter_map(|c| c.get(1))
        .map(|m| m.as_str())
        .collect();
    (args.len() == count && !params.contains("...")).then_some(args)
}

/// One function: its `define` line and body lines (the closing `}` last).
/// `labelled`: locals become `%vN` and each block gets its `vN:` line ([`labelled`]).
fn function(define: &str, body: &[&str], types: &[&str], labelled: bool) -> Option<String> {
    let mut names = Names {
        map: HashMap::new(),
        unnamed: 0,
        types,
    };
    for a in argument_names(define)? {
        names.add(a)?;
    }
    // Blocks and values; a block starts at a label or after a terminator.
    let mut at_block_start = true;
    let mut depth = 0i32;
    let mut in_terminator = false;
    // Lines kept, and before which of them a block starts (its new number).
    let mut kept: Vec<(&str, Option<usize>)> = Vec::new();
    let mut label = None;
    for &l in body {
        let t = l.trim();
        if t == "}" {
            kept.push((l, None));
            break;
        }
        if t.is_empty() || t.starts_with(';') || t.starts_with("uselistorder") {
            kept.push((l, None));
            continue;
        }
        if depth == 0 {
            if let Some(c) = LABEL.captures(t) {
                label = Some(names.map.len());
                names.add(&c[1])?;
                at_block_start = false;
                continue; // the label line is left out
            }
            if at_block_start {
                let key = names.unnamed.to_string(); // an implicit block: its old number
                label = Some(names.map.len());
                names.add(&key)?;
                at_block_start = false;
            }
        }
        let def = if depth == 0 { DEF.captures(t) } else { None };
        if let Some(c) = &def {
            names.add(&c[1])?;
        }
        let op = def.map_or(t, |c| &t[c.get(0).map_or(0, |m| m.end())..]);
        let word = op.split_whitespace().next().unwrap_or("");
        if depth == 0 && TERMINATORS.contains(&word) {
            in_terminator = true;
        }
        depth += t.matches('[').count() as i32 - t.matches(']').count() as i32;
        // A block ends with its terminator (a multi-line `switch` at its `]`).
        if in_terminator && depth == 0 {
            in_terminator = false;
            at_block_start = true;
        }
        kept.push((l, label.take()));
    }
    let prefix = if labelled { "v" } else { "" };
    let rename = |s: &str| {
        LOCAL
            .replace_all(s, |c: &regex::Captures| match names.map.get(&c[1]) {
                Some(n) => format!("%{prefix}{n}"),
                None => c[0].to_owned(),
            })
            .into_owned()
    };
    let mut f = rename(define);
    for (l, block) in kept {
        if let (true, Some(n)) = (labelled, block) {
            f.push_str(&format!("v{n}:\n"));
        }
        f.push_str(&rename(l));
    }
    Some(f)
}

/// A value definition of the [`labelled`] form.
pub(super) static VDEF: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^\s*%v(\d+) = ").expect("valid regex"));

/// The value line `l` of the [`labelled`] form defines.
pub(super) fn defined(l: &str) -> Option<usize> {
    VDEF.captures(l).and_then(|c| c[1].parse().ok())
}

/// A block label of the [`labelled`] form.
static VLABEL: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^v(\d+):$").expect("valid regex"));

/// The labelled text's lines and the block (`vN`) each line is in.
pub(super) fn blocks(text: &str) -> (Vec<&str>, Vec<Option<usize>>) {
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let mut block_of = vec![None; lines.len()];
    let mut cur = None;
    for (i, l) in lines.iter().enumerate() {
        let t = l.trim();
        if let Some(c) = VLABEL.captures(t) {
            cur = c[1].parse::<usize>().ok();
        } else if t == "}" || l.starts_with("define ") {
            cur = None;
        }
        block_of[i] = cur;
    }
    (lines, block_of)
}

/// Does `l` name `%vN` (not `%vN0`)?
pub(super) fn refers(l: &str, n: usize) -> bool {
    let pat = format!("%v{n}");
    l.match_indices(&pat).any(|(at, _)| {
        !l[at + pat.len()..]
            .bytes()
            .next()
            .is_some_and(|b| b.is_ascii_alphanumeric() || b"$._-".contains(&b))
    })
}

/// Candidates with one forwarding block folded away, each numbered again: a block that is
/// only `br label %X`, branched to from one terminator that does not branch to X already;
/// that terminator then branches to X, and X's `phi`s take the value from its block. One
/// candidate per such block.
pub fn folded(ir: &str) -> Vec<String> {
    let Some(text) = labelled(ir) else {
        return Vec::new();
    };
    let (lines, block_of) = blocks(&text);
    let code = |i: usize| {
        let t = lines[i].trim();
        !t.is_empty() && !t.starts_with(';') && !VLABEL.is_match(t) && block_of[i].is_some()
    };
    let mut out = Vec::new();
    let blocks: Vec<usize> = block_of.iter().flatten().copied().collect::<Vec<_>>();
    let mut seen = std::collections::HashSet::new();
    for b in blocks {
        if !seen.insert(b) {
            continue;
        }
        let own: Vec<usize> = (0..lines.len())
            .filter(|&i| block_of[i] == Some(b) && code(i))
            .collect();
        let [only] = own[..] else { continue };
        let Some(x) = lines[only]
            .trim()
            .strip_prefix("br label %v")
            .and_then(|n| n.parse::<usize>().ok())
        else {
            continue;
        };
        if x == b {
            continue;
        }
        let users: Vec<usize> = (0..lines.len())
            .filter(|&i| code(i) && block_of[i] != Some(b) && refers(lines[i], b))
            .collect();
        let branch = format!("label %v{b}");
        let from: Vec<usize> = users
            .iter()
            .copied()
            .filter(|&i| lines[i].contains(&branch))
            .collect();
        let [term] = from[..] else { continue };
        let Some(p) = block_of[term] else { continue };
        // Every other use is a `phi` of X; the terminator must not branch to X already.
        let phis_ok = users
            .iter()
            .all(|&i| i == term || (block_of[i] == Some(x) && lines[i].contains(" = phi ")));
        if !phis_ok || refers(lines[term], x) || lines[term].matches(&branch).count() != 1 {
            continue;
        }
        let mut cand = String::with_capacity(text.len());
        for (i, l) in lines.iter().enumerate() {
            if block_of[i] == Some(b) && (i == only || VLABEL.is_match(l.trim())) {
                continue;
            }
            if i == term {
                cand.push_str(&l.replace(&branch, &format!("label %v{x}")));
            } else if users.contains(&i) {
                cand.push_str(&l.replace(&format!("%v{b} ]"), &format!("%v{p} ]")));
            } else {
                cand.push_str(l);
            }
        }
        if let Some(n) = numbered(&cand) {
            out.push(n);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn named_blocks_and_values_become_numbers_without_labels() {
        let ir = "define ptr @j(i32 %n) {\n.lr.ph:\n  br label %0\n\n  %.x = phi i32 [ 0, %.lr.ph ], [ %a, %0 ]\n  %a = add i32 %.x, %n\n  switch i32 %a, label %0 [\n    i32 0, label %done\n  ]\n\ndone:                                  ; preds = %0\n  ret ptr null\n}\n";
        let got = numbered(ir).unwrap();
        assert_eq!(
            got,
            "define ptr @j(i32 %0) {\n  br label %2\n\n  %3 = phi i32 [ 0, %1 ], [ %4, %2 ]\n  %4 = add i32 %3, %0\n  switch i32 %4, label %2 [\n    i32 0, label %5\n  ]\n\n  ret ptr null\n}\n"
        );
        // Already numbered, no labels: nothing to do.
        assert_eq!(numbered(&got), None);
    }

    #[test]
    fn forwarding_blocks_with_one_predecessor_fold_into_their_target() {
        // %1 forwards to %2, but no terminator branches to it.
        let ir = "define void @f(i1 %c) {\n  br label %2\n\n  br label %2\n\n  %3 = phi i32 [ 0, %1 ], [ 1, %4 ]\n  br label %4\n\n  br i1 %c, label %2, label %5\n\n  ret void\n}\n";
        let got = folded(ir);
        assert_eq!(got.len(), 0, "{got:?}");
        // %5 forwards to %2 from %4's terminator alone.
        let ir = "define void @f(i1 %0) {\n  br label %2\n\n  %3 = phi i32 [ 0, %1 ], [ 1, %5 ]\n  br label %4\n\n  br i1 %0, label %5, label %6\n\n  br label %2\n\n  ret void\n}\n";
        let got = folded(ir);
        assert_eq!(
            got,
            ["define void @f(i1 %0) {\n  br label %2\n\n  %3 = phi i32 [ 0, %1 ], [ 1, %4 ]\n  br label %4\n\n  br i1 %0, label %2, label %5\n\n\n  ret void\n}\n"]
        );
    }

    #[test]
    fn quoted_names_and_type_clashes_are_left_alone() {
        assert_eq!(
            numbered("define void @f() {\n\"a b\":\n  br label %\"a b\"\n}\n"),
            None
        );
        assert_eq!(
            numbered("%T = type { i32 }\ndefine void @f() {\n  %T = alloca %T\n  ret void\n}\n"),
            None
        );
    }
}
