//! The code that instantiates the crashing template, trimmed to the statements that do.
//!
//! A crash inside a template instantiation names where the templates are defined, never the
//! non-template code whose use instantiates them (clang instantiates function templates at the
//! end of the file, so the parser location says only `<eof>`). That code is usually a function
//! of the main file that also does much else: kept whole, its other statements keep most of
//! the headers. So the closure roots at the statements of such a function that name the
//! template, plus the statements declaring the local names those use, and deletes the rest of
//! its body.

use std::collections::HashSet;

use super::split::{keyword, Split};
use crate::lex::Kind;
use crate::plan::Edit;

/// A caller cut down to what instantiates the template.
#[derive(Clone)]
pub(super) struct Trimmed<'t> {
    /// Deletions inside the caller's body, sorted.
    pub edits: Vec<Edit>,
    /// The names the remaining code uses (the head's and the kept statements').
    pub uses: Vec<&'t [u8]>,
    /// The same with their namespace qualifiers (see `scope.rs`).
    pub scoped: Vec<(&'t [u8], Option<&'t [u8]>)>,
}

/// Keywords that start a statement declaring nothing.
const NOT_DECLARING: &[&[u8]] = &[
    b"return",
    b"if",
    b"for",
    b"while",
    b"switch",
    b"do",
    b"try",
    b"throw",
    b"co_return",
    b"co_await",
    b"co_yield",
    b"break",
    b"continue",
    b"goto",
    b"case",
    b"default",
    b"delete",
];

/// The leaf declarations in `among` that use `name` without declaring it: the code that
/// instantiates the template `name`.
pub(super) fn callers(s: &Split, among: &[usize], name: &[u8]) -> Vec<usize> {
    among
        .iter()
        .copied()
        .filter(|&k| {
            let d = &s.decls[k];
            d.children.is_empty() && d.uses.contains(&name) && !d.declares.contains(&name)
        })
        .collect()
}

/// Declaration `k` with its body's statements that do not name `name` deleted (see [`trim`]).
pub(super) fn trim_to_name<'t>(s: &Split<'t>, k: usize, name: &[u8]) -> Option<Trimmed<'t>> {
    trim(s, k, |a, b| (a..=b).any(|i| s.w(i, name)), None)
}

/// Declaration `k` with its body's statements that do not hold byte `at` deleted (see
/// [`trim`]): the parser was in that statement, the ones after it were never read. With
/// `truncate`, that statement also ends right before the token at `at` (the parser's current
/// token: what follows it was never read either), its open brackets closed.
pub(super) fn trim_to_byte<'t>(
    s: &Split<'t>,
    k: usize,
    at: usize,
    truncate: bool,
) -> Option<Trimmed<'t>> {
    let holds = |a: usize, b: usize| s.toks[a].start as usize <= at && at < s.toks[b].end as usize;
    trim(s, k, holds, truncate.then_some(at))
}

/// Statement `a..=b` cut before the token at byte `at`, its open `(` and `[` closed: the
/// kept range and the edit, or `None` when that token starts the statement or sits in a
/// nested block.
fn truncated(s: &Split, a: usize, b: usize, at: usize) -> Option<((usize, usize), Edit)> {
    let c = (a..=b).find(|&i| s.toks[i].end as usize > at)?;
    if c == a {
        return None;
    }
    let mut open = Vec::new();
    for i in a..c {
        match s.b(i) {
            b"(" | b"[" | b"{" => open.push(s.b(i)),
            b")" | b"]" | b"}" => {
                open.pop();
            }
            _ => {}
        }
    }
    if open.contains(&&b"{"[..]) {
        return None;
    }
    let mut with: Vec<u8> = open
        .iter()
        .rev()
        .map(|o| if *o == b"(" { b')' } else { b']' })
        .collect();
    with.push(b';');
    let mut edit = Edit::delete(s.toks[c].start as usize, s.toks[b].end as usize);
    edit.with = std::borrow::Cow::Owned(with);
    Some(((a, c - 1), edit))
}

/// Declaration `k` with the statements of its body that `wanted` rejects deleted, except those
/// declaring local names the kept ones use; `None` when it is not a function definition, or no
/// statement or every statement is wanted.
fn trim<'t>(
    s: &Split<'t>,
    k: usize,
    wanted: impl Fn(usize, usize) -> bool,
    cut_at: Option<usize>,
) -> Option<Trimmed<'t>> {
    let d = &s.decls[k];
    let close = d.last;
    if !s.p(close, b"}") {
        return None;
    }
    let open = s.mate(close).filter(|&o| o > d.first && o < close)?;
    let mut stmts = statements(s, open + 1, close)?;
    let mut kept: Vec<bool> = stmts.iter().map(|&(a, b)| wanted(a, b)).collect();
    let mut cut = None;
    if let Some(at) = cut_at {
        let j = kept.iter().position(|&w| w)?;
        let (range, edit) = truncated(s, stmts[j].0, stmts[j].1, at)?;
        stmts[j] = range;
        cut = Some(edit);
    }
    if !kept.contains(&true) || !kept.contains(&false) && cut.is_none() {
        return None;
    }
    // The statements declaring local names the kept ones use, to a fixpoint.
    let locals: Vec<Vec<&[u8]>> = stmts.iter().map(|&(a, b)| declared(s, a, b)).collect();
    loop {
        let used: HashSet<&[u8]> = stmts
            .iter()
            .zip(&kept)
            .filter(|(_, &keep)| keep)
            .flat_map(|(&(a, b), _)| (a..=b).map(|i| s.b(i)))
            .collect();
        let mut grew = false;
        for (j, names) in locals.iter().enumerate() {
            if !kept[j] && names.iter().any(|n| used.contains(n)) {
                kept[j] = true;
                grew = true;
            }
        }
        if !grew {
            break;
        }
    }
    let mut edits: Vec<Edit> = cut.into_iter().collect();
    let mut kept_toks: Vec<usize> = (d.first..=open).collect();
    for (&(a, b), keep) in stmts.iter().zip(&kept) {
        if *keep {
            kept_toks.extend(a..=b);
        } else {
            let end = s.toks[b + 1].start as usize;
            edits.push(Edit::delete(s.toks[a].start as usize, end));
        }
    }
    let mut seen = HashSet::new();
    let mut seen_scoped = HashSet::new();
    edits.sort_by_key(|e| e.start);
    let mut t = Trimmed {
        edits,
        uses: Vec::new(),
        scoped: Vec::new(),
    };
    for i in kept_toks {
        if s.toks[i].kind != Kind::Ident || keyword(s.b(i)) {
            continue;
        }
        if seen.insert(s.b(i)) {
            t.uses.push(s.b(i));
        }
        let scoped = (s.b(i), s.namespace_qualifier(i));
        if seen_scoped.insert(scoped) {
            t.scoped.push(scoped);
        }
    }
    Some(t)
}

/// The statements of a body (tokens `lo..hi`) as inclusive token ranges, or `None` when a
/// directive (a line marker) sits among them: deleting around it could move lines.
fn statements(s: &Split, lo: usize, hi: usize) -> Option<Vec<(usize, usize)>> {
    let mut out = Vec::new();
    let mut start = lo;
    let mut j = lo;
    while j < hi {
        if s.toks[j].kind == Kind::Directive {
            return None;
        }
        let mut end_here = s.p(j, b";");
        if s.p(j, b"(") || s.p(j, b"[") || s.p(j, b"{") {
            let brace = s.p(j, b"{");
            j = s.mate(j).filter(|&m| m > j && m < hi)?;
            // A block ends its statement unless the statement goes on after it (`};`, an
            // initialiser list, `else`, a lambda being called or passed on).
            end_here = brace
                && !s.p(j + 1, b";")
                && !s.p(j + 1, b",")
                && !s.p(j + 1, b")")
                && !s.p(j + 1, b"(")
                && !s.p(j + 1, b".")
                && !s.p(j + 1, b"->")
                && !s.w(j + 1, b"else")
                && !s.w(j + 1, b"catch")
                && !s.w(j + 1, b"while");
        }
        if end_here {
            out.push((start, j));
            start = j + 1;
        }
        j += 1;
    }
    if start < hi {
        out.push((start, hi - 1));
    }
    Some(out)
}

/// The local names statement `a..=b` declares: the name before its first `=`, `(`, `{` or `;`
/// outside brackets (`auto g = …;`, `T x(…);`), or a structured binding's names.
fn declared<'t>(s: &Split<'t>, a: usize, b: usize) -> Vec<&'t [u8]> {
    if s.toks[a].kind != Kind::Ident || NOT_DECLARING.contains(&s.b(a)) {
        return Vec::new();
    }
    let mut last_name = None;
    let mut i = a;
    while i <= b {
        if s.p(i, b"[") && last_name.is_none() {
            let m = s.mate(i).unwrap_or(b).min(b);
            let names = (i + 1..m).filter(|&k| s.toks[k].kind == Kind::Ident);
            return names.map(|k| s.b(k)).collect();
        }
        if s.p(i, b"=") || s.p(i, b"(") || s.p(i, b"{") || s.p(i, b";") {
            break;
        }
        if s.p(i, b"<") {
            // Template arguments name no local.
            let mut depth = 0i32;
            while i <= b {
                match s.b(i) {
                    b"<" => depth += 1,
                    b">" => depth -= 1,
                    b">>" => depth -= 2,
                    _ => {}
                }
                if depth <= 0 {
                    break;
                }
                i += 1;
            }
        } else if s.toks[i].kind == Kind::Ident && !keyword(s.b(i)) {
            last_name = Some(i);
        }
        i += 1;
    }
    last_name.map(|k| vec![s.b(k)]).unwrap_or_default()
}
