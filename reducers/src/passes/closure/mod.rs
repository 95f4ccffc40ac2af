//! A big first cut that keeps the code valid: the use-def closure of the crash site.
//!
//! When the test requires a crash-on-valid case to stay valid, the classic big cuts (drop all
//! headers, ddmin over top-level declarations) are mostly rejected: they remove declarations the
//! rest still uses. This pass splits the text into declarations at namespace scope (recursing
//! into `namespace … {}` and `extern "C" {}` blocks), computes for each the names it declares and
//! the identifiers it uses, starts from the declarations at the crash (the parser location, the
//! crashing function, else the main file's declarations per the line markers) and keeps the
//! transitive closure; every other declaration is deleted in one candidate. Names are matched
//! without scopes (an over-approximation: a name used anywhere keeps every declaration of it),
//! and what C++ uses implicitly is kept too: out-of-line members, specialisations, deduction
//! guides and free operators go with the class or template they name (a specialisation only
//! once the classes among its template arguments are used too; an explicit instantiation
//! never); the functions and classes named `begin`/`end`, `initializer_list` and the tuple
//! protocol are always used; `using namespace` and directives
//! (line markers, pragmas) stay. Fallbacks: the closure of the crash site plus the whole main
//! file, then halves and quarters of the deletions (back to front), then nothing.

use std::collections::{HashMap, HashSet};

use super::Hints;
use crate::lex;
use split::Split;

mod split;
use crate::markers;
use crate::plan::{Edit, Empty, Item, List, Plan};

/// Names C++ uses without spelling them (range-for, braced lists, structured bindings).
const IMPLICIT: &[&str] = &[
    "begin",
    "end",
    "initializer_list",
    "tuple_size",
    "tuple_element",
    "get",
];

/// The declarations to delete for a closure started at `roots`, as sorted edits.
fn cut(s: &Split, roots: &[usize]) -> Vec<Edit> {
    let (mut kept, _) = keep(s, roots);
    edits_for(s, &mut kept)
}

/// The declaration whose use of a name pulled a declaration in, and the name.
type Why<'t> = Option<(usize, &'t [u8])>;

/// Which declarations the closure keeps, and for each kept one why: the declaration whose use
/// of a name pulled it in (none for roots and always-kept ones).
fn keep<'t>(s: &Split<'t>, roots: &[usize]) -> (Vec<bool>, Vec<Why<'t>>) {
    let mut kept = vec![false; s.decls.len()];
    let mut why: Vec<Why> = vec![None; s.decls.len()];
    let namespaces: HashSet<&[u8]> = s
        .decls
        .iter()
        .filter(|d| !d.children.is_empty())
        .flat_map(|d| d.declares.iter().copied())
        .collect();
    let mut by_name: HashMap<&[u8], Vec<usize>> = HashMap::new();
    let mut by_attached: HashMap<&[u8], Vec<usize>> = HashMap::new();
    for (k, d) in s.decls.iter().enumerate() {
        if !d.children.is_empty() {
            continue;
        }
        for n in &d.declares {
            by_name.entry(n).or_default().push(k);
        }
        for n in d.attached.iter().filter(|n| !namespaces.contains(*n)) {
            by_attached.entry(n).or_default().push(k);
        }
    }
    // Class names: only they can make an overload unusable when absent (a typedef or a
    // variable in a parameter list can be satisfied by a literal or a conversion).
    let classes: HashSet<&[u8]> = s
        .decls
        .iter()
        .flat_map(|d| d.classes.iter().copied())
        .collect();
    let mut used: HashSet<&[u8]> = HashSet::new();
    // Functions: how many of their parameter classes are not used yet, who waits on which
    // class, and whether the name is used (operators count as named).
    let mut missing = vec![0usize; s.decls.len()];
    let mut named: Vec<bool> = s.decls.iter().map(|d| d.operator).collect();
    let mut waiting: HashMap<&[u8], Vec<usize>> = HashMap::new();
    let mut free_ops = Vec::new();
    for (k, d) in s.decls.iter().enumerate() {
        if !d.function && d.spec_args.is_empty() {
            continue;
        }
        let spec = d.spec_args.iter().copied().filter(|n| classes.contains(n));
        let mut heads: Vec<&[u8]> = d
            .params
            .iter()
            .filter_map(|p| p.iter().copied().find(|n| classes.contains(n)))
            .chain(spec)
            .filter(|n| !namespaces.contains(n) && !d.declares.contains(n))
            .filter(|n| !d.attached.contains(n))
            .collect();
        heads.sort();
        heads.dedup();
        if heads.is_empty() && d.operator {
            free_ops.push(k);
        }
        missing[k] = heads.len();
        for h in heads {
            waiting.entry(h).or_default().push(k);
        }
    }
    let mut names: Vec<(&[u8], usize)> = Vec::new();
    let mut from: HashMap<&[u8], usize> = HashMap::new();
    let mut work: Vec<(usize, Option<&[u8]>)> = roots.iter().map(|&k| (k, None)).collect();
    // What C++ calls without the name being spelt is a function or a class, never a variable
    // (`ranges::end` is an object that would pull in all of <ranges>): those are kept; the
    // name counts as used only once the kept code spells it.
    for n in IMPLICIT.iter().map(|s| s.as_bytes()) {
        for &k in by_name.get(n).into_iter().flatten() {
            let d = &s.decls[k];
            if d.function || !d.classes.is_empty() {
                named[k] = true;
                if missing[k] == 0 {
                    work.push((k, None));
                }
            }
        }
    }
    work.extend(free_ops.into_iter().map(|k| (k, None)));
    work.extend(
        s.decls
            .iter()
            .enumerate()
            .filter(|(_, d)| d.always && d.children.is_empty())
            .map(|(k, _)| (k, None)),
    );
    loop {
        while let Some((k, by)) = work.pop() {
            if kept[k] {
                continue;
            }
            kept[k] = true;
            why[k] = by.and_then(|n| from.get(n).map(|&f| (f, n)));
            let d = &s.decls[k];
            names.extend(d.uses.iter().chain(&d.declares).map(|&n| (n, k)));
        }
        let Some((n, by)) = names.pop() else {
            // A function name the kept code spells needs some declaration, even when no
            // overload's classes are used (`std::get<_Idx>(…)` in a template is looked up
            // where it is written): keep the shortest one.
            let orphans = unmet_functions(s, &used, &by_name, &kept);
            if orphans.is_empty() {
                break;
            }
            work.extend(orphans.into_iter().map(|(k, n)| (k, Some(n))));
            continue;
        };
        if !used.insert(n) {
            continue;
        }
        from.insert(n, by);
        let n_ = Some(n);
        for &k in by_name.get(n).into_iter().flatten() {
            named[k] = true;
            if missing[k] == 0 {
                work.push((k, n_));
            }
        }
        for &k in by_attached.get(n).into_iter().flatten() {
            // A specialisation waits for its argument classes; an out-of-line member goes
            // with its class at once.
            if s.decls[k].spec_args.is_empty() || missing[k] == 0 {
                work.push((k, n_));
            } else {
                named[k] = true;
            }
        }
        for k in waiting.remove(n).into_iter().flatten() {
            missing[k] -= 1;
            if missing[k] == 0 && named[k] {
                work.push((k, n_));
            }
        }
    }
    (kept, why)
}

/// For each used name that only functions declare and none of them is kept: the shortest of
/// them, and the name.
fn unmet_functions<'t>(
    s: &Split<'t>,
    used: &HashSet<&'t [u8]>,
    by_name: &HashMap<&'t [u8], Vec<usize>>,
    kept: &[bool],
) -> Vec<(usize, &'t [u8])> {
    let mut out = Vec::new();
    for &n in used {
        let Some(ks) = by_name.get(n) else { continue };
        if ks.iter().any(|&k| kept[k] || !s.decls[k].function) {
            continue;
        }
        if let Some(&k) = ks
            .iter()
            .min_by_key(|&&k| s.decls[k].end - s.decls[k].start)
        {
            out.push((k, n));
        }
    }
    out.sort_unstable();
    out
}

/// Deletions for everything not kept (a block stays if any child stays).
fn edits_for(s: &Split, kept: &mut [bool]) -> Vec<Edit> {
    // A block stays if any child stays.
    for k in (0..s.decls.len()).rev() {
        if kept[k] {
            let mut p = s.decls[k].parent;
            while let Some(q) = p {
                kept[q] = true;
                p = s.decls[q].parent;
            }
        }
    }
    let mut edits = Vec::new();
    let mut skip_until = 0usize;
    for (k, d) in s.decls.iter().enumerate() {
        if d.start < skip_until {
            continue;
        }
        if !kept[k] {
            let mut at = d.start;
            for &(a, b) in &d.directives {
                edits.push(Edit::delete(at, a));
                at = b;
            }
            edits.push(Edit::delete(at, d.end.max(at)));
            skip_until = d.end;
        }
    }
    edits.sort_by_key(|e| e.start);
    edits
}

/// Leaf declarations whose span contains byte `at`.
fn containing(s: &Split, at: usize) -> Vec<usize> {
    s.decls
        .iter()
        .enumerate()
        .filter(|(_, d)| d.children.is_empty() && d.start <= at && at < d.end)
        .map(|(k, _)| k)
        .collect()
}

/// The candidates, boldest first (see the module doc).
fn cuts(text: &[u8], hints: &Hints) -> Vec<Vec<Edit>> {
    if lex::too_big(text) {
        return Vec::new();
    }
    let toks = lex::lex(text);
    let mate = lex::structure(text, &toks).mate;
    let n = toks.len();
    let mut s = Split {
        text,
        toks,
        mate,
        decls: Vec::new(),
    };
    s.split(0, n, text.len(), None);

    let mut roots = Vec::new();
    if let Some((file, line)) = &hints.location {
        if let Some(at) = markers::locate(text, file.as_bytes(), *line) {
            roots.extend(containing(&s, at));
        }
    }
    if let Some(name) = hints
        .function
        .as_deref()
        .and_then(super::guided::crash_name)
    {
        roots.extend(s.decls.iter().enumerate().filter_map(|(k, d)| {
            (d.children.is_empty() && d.declares.contains(&name.as_bytes())).then_some(k)
        }));
    }
    // The main file's declarations (by line markers).
    let mut main_decls = Vec::new();
    if let Some(main) = markers::main_file(text) {
        for l in markers::lines(text) {
            if l.marker.is_none() && l.file == Some(main) {
                let body = &text[l.start..l.end];
                if let Some(k) = body.iter().position(|c| !c.is_ascii_whitespace()) {
                    main_decls.extend(containing(&s, l.start + k));
                }
            }
        }
        main_decls.dedup();
    }
    let mut cuts = Vec::new();
    if !roots.is_empty() {
        cuts.push(cut(&s, &roots));
    }
    if !main_decls.is_empty() {
        let mut both = roots.clone();
        both.extend(&main_decls);
        cuts.push(cut(&s, &both));
    }
    let Some(first) = cuts.first().cloned() else {
        return cuts;
    };
    // Halves and quarters of the first cut, back to front (like ddmin's first levels).
    for parts in [2usize, 4] {
        if first.len() >= parts {
            let per = first.len().div_ceil(parts);
            let chunks: Vec<_> = first.chunks(per).map(|c| c.to_vec()).collect();
            cuts.extend(chunks.into_iter().rev());
        }
    }
    cuts
}

/// The closure of the crash site alone, for other passes to try (provenance does, right
/// after "drop every header").
pub(crate) fn first_cut(text: &[u8], hints: &Hints) -> Option<Vec<Edit>> {
    cuts(text, hints).into_iter().next()
}

pub(crate) fn closure(text: &[u8], hints: &Hints) -> Box<dyn Plan> {
    let cuts = cuts(text, hints);
    if cuts.is_empty() {
        return Box::new(Empty);
    }
    let len = cuts.len();
    Box::new(List {
        items: cuts
            .into_iter()
            .map(|edits| Item {
                edits,
                // After a success the closure of the smaller text is recomputed from scratch;
                // start over once, then stop (on_success = len means done).
                on_success: len,
            })
            .collect(),
    })
}

#[cfg(test)]
mod tests;
