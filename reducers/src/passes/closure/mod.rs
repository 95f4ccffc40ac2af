//! A big first cut that keeps the code valid: the use-def closure of the crash site.
//!
//! When the test requires a crash-on-valid case to stay valid, the classic big cuts (drop all
//! headers, ddmin over top-level declarations) are mostly rejected: they remove declarations the
//! rest still uses. This pass splits the text into declarations at namespace scope (recursing
//! into `namespace … {}` and `extern "C" {}` blocks; `split.rs`), computes for each the names it
//! declares and the identifiers it uses, starts from the declarations at the crash (the parser
//! location, the templates being instantiated, the crashing function, and the code that
//! instantiates the outermost template; the crash site and that code trimmed to the statements
//! that matter, `callers.rs`) and keeps the transitive closure; every other declaration is
//! deleted in one candidate. Functions and classes are matched by name without scopes (an
//! over-approximation: argument-dependent lookup finds functions in namespaces nobody names),
//! functions also by argument count (`arity.rs`); variables and aliases by namespace scope
//! (`scope.rs`); what is a declared name and what a use is `declarator.rs`'s to say. What C++
//! uses implicitly is kept too: out-of-line members, specialisations, deduction guides and free
//! operators go with the class or template they name (a specialisation only once the classes
//! among its template arguments are used too; an operator only once its token, or for a
//! comparison its kind of comparison, is spelled; an explicit instantiation never);
//! `initializer_list` is always used, `begin`/`end` once kept code has a range-for and the tuple
//! protocol once it has a structured binding (`implicit.rs`); a using-declaration of functions
//! once an overload it brings in is kept; `using namespace` and directives (line markers,
//! pragmas) stay. Fallbacks, each a candidate: the roots untrimmed, plus the whole main file,
//! then halves and quarters of the first cut (back to front). `prune.rs` then asks the compiler
//! about the over-approximation, and `hollow.rs` about the classes and functions the crash can
//! take incomplete or undefined.

use std::collections::{HashMap, HashSet, VecDeque};

use super::Hints;
use crate::lex;
use crate::plan::{Edit, Empty, Item, List, Plan};
pub(crate) use hollow::hollow;
pub(crate) use prune::prune;
use roots::Roots;
use split::Split;

mod angles;
mod arity;
mod callers;
mod declarator;
mod hollow;
mod implicit;
mod prune;
mod roots;
mod scope;
mod split;

/// Names C++ uses without spelling them whatever the code: braced lists make an
/// `initializer_list` (the others wait for their construct; see `implicit.rs`).
const ALWAYS_IMPLIED: &[&[u8]] = &[b"initializer_list"];

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
    let k = keep_banned(s, roots, &HashSet::new());
    (k.kept, k.why)
}

/// What [`keep_banned`] found.
struct Kept<'t> {
    kept: Vec<bool>,
    why: Vec<Why<'t>>,
    /// The kept declarations in the order they were kept (each after the one that pulled it).
    order: Vec<usize>,
}

/// Where the closure finds declarations by name: built once per text.
struct Index<'t> {
    /// Names of namespaces (blocks with children).
    namespaces: HashSet<&'t [u8]>,
    /// The declarations that declare each name (not blocks, not those scoped in a class).
    by_name: HashMap<&'t [u8], Vec<usize>>,
    /// The declarations attached to each name (out-of-line members, specialisations).
    by_attached: HashMap<&'t [u8], Vec<usize>>,
}

impl<'t> Index<'t> {
    fn new(s: &Split<'t>, scopes: &scope::Scopes) -> Self {
        let namespaces: HashSet<&[u8]> = s
            .decls
            .iter()
            .filter(|d| !d.children.is_empty())
            .flat_map(|d| d.declares.iter().copied())
            .collect();
        let mut by_name: HashMap<&[u8], Vec<usize>> = HashMap::new();
        let mut by_attached: HashMap<&[u8], Vec<usize>> = HashMap::new();
        for (k, d) in s.decls.iter().enumerate() {
            if !d.children.is_empty() || scopes.scoped[k] {
                continue;
            }
            for n in &d.declares {
                by_name.entry(n).or_default().push(k);
            }
            for n in d.attached.iter().filter(|n| !namespaces.contains(*n)) {
                by_attached.entry(n).or_default().push(k);
            }
        }
        Index {
            namespaces,
            by_name,
            by_attached,
        }
    }
}

/// What functions and specialisations wait for before they are kept: how many of their
/// parameter classes (and spelled operators) are not used yet, who waits on which name, and
/// whether their own name is used (operators count as named).
struct Waits<'t> {
    missing: Vec<usize>,
    named: Vec<bool>,
    waiting: HashMap<&'t [u8], Vec<usize>>,
    /// Operators that wait on nothing: kept from the start.
    free_ops: Vec<usize>,
}

impl<'t> Waits<'t> {
    fn new(s: &Split<'t>, ix: &Index<'t>) -> Self {
        // Class names: only they can make an overload unusable when absent (a typedef or a
        // variable in a parameter list can be satisfied by a literal or a conversion).
        let classes: HashSet<&[u8]> = s
            .decls
            .iter()
            .flat_map(|d| d.classes.iter().copied())
            .collect();
        let mut w = Waits {
            missing: vec![0usize; s.decls.len()],
            named: s.decls.iter().map(|d| d.operator).collect(),
            waiting: HashMap::new(),
            free_ops: Vec::new(),
        };
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
                .filter(|n| !ix.namespaces.contains(n) && !d.declares.contains(n))
                .filter(|n| !d.attached.contains(n))
                .chain(d.spelled)
                .collect();
            heads.sort();
            heads.dedup();
            if heads.is_empty() && d.operator {
                w.free_ops.push(k);
            }
            w.missing[k] = heads.len();
            for h in heads {
                w.waiting.entry(h).or_default().push(k);
            }
        }
        w
    }
}

/// A declaration to keep, and the declaration whose use of a name pulled it in.
type Work<'t> = VecDeque<(usize, Why<'t>)>;

/// What the closure keeps before any name is used: the roots, what C++ calls without the
/// name being spelt, free operators and the always-kept declarations.
fn seeds<'t>(
    s: &Split<'t>,
    roots: &[usize],
    ix: &Index<'t>,
    w: &mut Waits<'t>,
    banned: &HashSet<&[u8]>,
) -> Work<'t> {
    let mut work: Work = roots.iter().map(|&k| (k, None)).collect();
    imply(s, ALWAYS_IMPLIED, None, ix, w, banned, &mut work);
    work.extend(w.free_ops.iter().map(|&k| (k, None)));
    work.extend(
        s.decls
            .iter()
            .enumerate()
            .filter(|(_, d)| d.always && d.children.is_empty())
            .map(|(k, _)| (k, None)),
    );
    work
}

/// Keeps what C++ calls by `names` without spelling them, for `why`: functions (of one
/// argument) and classes, never a variable (`ranges::end` is an object that would pull in all
/// of <ranges>). The names count as used only once kept code spells them.
fn imply<'t>(
    s: &Split<'t>,
    names: &[&[u8]],
    why: Why<'t>,
    ix: &Index<'t>,
    w: &mut Waits<'t>,
    banned: &HashSet<&[u8]>,
    work: &mut Work<'t>,
) {
    for n in names.iter().filter(|n| !banned.contains(*n)) {
        for &k in ix.by_name.get(n).into_iter().flatten() {
            let d = &s.decls[k];
            let call = d.function && d.accepts.admits(arity::bit(1));
            if call || !d.classes.is_empty() {
                w.named[k] = true;
                if w.missing[k] == 0 {
                    work.push_back((k, why));
                }
            }
        }
    }
}

/// [`keep`], with the names in `banned` never counted as used (`prune.rs` asks what the
/// closure would be if a name pulled nothing in). A fixpoint of two work lists: kept
/// declarations add the names they use, and each newly used name keeps what declares it
/// (functions once their classes are used too).
fn keep_banned<'t>(s: &Split<'t>, roots: &[usize], banned: &HashSet<&[u8]>) -> Kept<'t> {
    let scopes = scope::Scopes::new(s);
    let ix = Index::new(s, &scopes);
    let mut w = Waits::new(s, &ix);
    let work = seeds(s, roots, &ix, &mut w, banned);
    let mut walk = Walk {
        s,
        ix,
        w,
        scopes,
        banned,
        kept: Kept {
            kept: vec![false; s.decls.len()],
            why: vec![None; s.decls.len()],
            order: Vec::new(),
        },
        used: HashSet::new(),
        counts: HashMap::new(),
        names: Vec::new(),
        from: HashMap::new(),
        work,
        deferred: VecDeque::new(),
    };
    loop {
        walk.keep_queued();
        match walk.next_name() {
            Some((n, by, mask)) => walk.follow(n, by, mask),
            None if walk.names_ran_out() => continue,
            None => break,
        }
    }
    walk.kept
}

/// The state of [`keep_banned`]'s fixpoint.
struct Walk<'s, 't> {
    s: &'s Split<'t>,
    ix: Index<'t>,
    w: Waits<'t>,
    scopes: scope::Scopes<'t>,
    banned: &'s HashSet<&'s [u8]>,
    kept: Kept<'t>,
    used: HashSet<&'t [u8]>,
    /// The argument counts each used name is called with so far (see `arity.rs`).
    counts: HashMap<&'t [u8], u32>,
    /// Names to follow, last first: kept declarations, each with how many of its names
    /// ([`Walk::name`]) are left. One entry per declaration rather than per name: a main file
    /// of small functions keeps them all, and their names at 32 bytes each were the biggest
    /// list of the walk.
    names: Vec<(u32, u32)>,
    /// The first declaration that used each name.
    from: HashMap<&'t [u8], usize>,
    /// Declarations to keep, first in first out: a declaration's `why` is the first use
    /// that reached it.
    work: Work<'t>,
    /// Using-declarations waiting for an overload they bring in to be kept.
    deferred: Work<'t>,
}

impl<'t> Walk<'_, 't> {
    /// Keeps what is queued, queueing the names it uses.
    fn keep_queued(&mut self) {
        let s = self.s;
        while let Some((k, by)) = self.work.pop_front() {
            if self.kept.kept[k] {
                continue;
            }
            if waits_for_overload(s, k, &self.ix.by_name, &self.kept.kept) {
                self.deferred.push_back((k, by));
                continue;
            }
            self.kept.kept[k] = true;
            self.kept.order.push(k);
            self.kept.why[k] = by;
            let d = &s.decls[k];
            // A kept class or variable keeps its other declarations; a kept function does
            // not make its name used (a `begin` kept because range-for calls it must not keep
            // the `ranges::begin` object, nor every other overload).
            let declares = if d.function { 0 } else { d.declares.len() };
            let count = d.uses.len() + d.spells.len() + declares;
            if count > 0 {
                // Declaration and name counts fit in `u32`: there is one per token at most.
                self.names.push((k as u32, count as u32));
            }
            for (found, n) in self.scopes.reached(s, k) {
                if self.banned.contains(n) {
                    continue;
                }
                self.from.entry(n).or_insert(k);
                self.work.push_back((found, Some((k, n))));
            }
        }
    }

    /// The next name to follow, the declaration using it and its argument counts there.
    fn next_name(&mut self) -> Option<(&'t [u8], usize, u32)> {
        let (k, left) = self.names.last_mut()?;
        let (k, i) = (*k as usize, *left as usize - 1);
        *left -= 1;
        if *left == 0 {
            self.names.pop();
        }
        Some(Walk::name(self.s, k, i))
    }

    /// Name `i` of kept declaration `k`: its uses (with the argument counts it calls them
    /// with), the operators it spells, then what it declares unless it is a function (a kept
    /// class or variable keeps its other declarations; a kept function does not make its name
    /// used: a `begin` kept because range-for calls it must not keep the `ranges::begin`
    /// object, nor every other overload).
    fn name(s: &Split<'t>, k: usize, i: usize) -> (&'t [u8], usize, u32) {
        let d = &s.decls[k];
        if let Some(&n) = d.uses.get(i) {
            return (n, k, d.calls_of(n));
        }
        let i = i - d.uses.len();
        let n = d
            .spells
            .get(i)
            .unwrap_or_else(|| &d.declares[i - d.spells.len()]);
        (n, k, arity::ANY)
    }

    /// Declaration `by` uses name `n` with argument counts `mask`.
    fn follow(&mut self, n: &'t [u8], by: usize, mask: u32) {
        if self.banned.contains(n) {
            return;
        }
        let seen = self.counts.get(n).copied().unwrap_or(0);
        if self.used.contains(n) && mask & !seen == 0 {
            return;
        }
        self.counts.insert(n, seen | mask);
        if self.used.insert(n) {
            self.from.insert(n, by);
            let (s, ix, w, work) = (self.s, &self.ix, &mut self.w, &mut self.work);
            let implied = implicit::implied(n);
            imply(s, implied, Some((by, n)), ix, w, self.banned, work);
            self.use_name(by, n, seen | mask);
        } else {
            self.call_more(by, n, seen | mask);
        }
    }

    /// `n` is called with `counts` arguments (see `arity.rs`): the functions of that name that
    /// accept one of them count as named, and the other declarations of the name are kept.
    fn call_more(&mut self, by: usize, n: &'t [u8], counts: u32) {
        let w = &mut self.w;
        for &k in self.ix.by_name.get(n).into_iter().flatten() {
            if w.named[k] || !self.s.decls[k].accepts.admits(counts) {
                continue;
            }
            w.named[k] = true;
            if w.missing[k] == 0 {
                self.work.push_back((k, Some((by, n))));
            }
        }
    }

    /// `n` is used from now on: what declares it is kept (a function once its classes are
    /// used), what is attached to it too (a specialisation once its argument classes are), and
    /// what waited on it waits on one name fewer.
    fn use_name(&mut self, by: usize, n: &'t [u8], counts: u32) {
        self.call_more(by, n, counts);
        let (w, work) = (&mut self.w, &mut self.work);
        for &k in self.ix.by_attached.get(n).into_iter().flatten() {
            // A specialisation waits for its argument classes; an out-of-line member goes
            // with its class at once.
            if self.s.decls[k].spec_args.is_empty() || w.missing[k] == 0 {
                work.push_back((k, Some((by, n))));
            } else {
                w.named[k] = true;
            }
        }
        for k in w.waiting.remove(n).into_iter().flatten() {
            w.missing[k] -= 1;
            if w.missing[k] == 0 && w.named[k] {
                work.push_back((k, Some((by, n))));
            }
        }
    }

    /// With no name left to follow: queues the using-declarations whose overloads are kept
    /// now, else a declaration for each name kept code needs one of (see [`unmet_functions`]
    /// and [`unmet_using`]). False when there is nothing to queue: the fixpoint.
    fn names_ran_out(&mut self) -> bool {
        let (s, by_name, kept) = (self.s, &self.ix.by_name, &self.kept.kept);
        let before = self.deferred.len();
        let work = &mut self.work;
        self.deferred.retain(|&(k, by)| {
            let waits = waits_for_overload(s, k, by_name, kept);
            if !waits {
                work.push_back((k, by));
            }
            waits
        });
        if self.deferred.len() < before {
            return true;
        }
        // A function name the kept code spells needs some declaration, even when no
        // overload's classes are used (`std::get<_Idx>(…)` in a template is looked up where
        // it is written): keep the shortest one.
        let mut orphans = unmet_functions(s, &self.counts, by_name, kept);
        orphans.extend(unmet_using(s, by_name, kept));
        orphans.retain(|(_, n)| !self.banned.contains(n));
        let from = &self.from;
        let queued = orphans
            .into_iter()
            .map(|(k, n)| (k, from.get(n).map(|&f| (f, n))));
        let before = work.len();
        work.extend(queued);
        work.len() > before
    }
}

/// For each used name that only functions declare and none of them is kept: the shortest of
/// them, and the name.
fn unmet_functions<'t>(
    s: &Split<'t>,
    used: &HashMap<&'t [u8], u32>,
    by_name: &HashMap<&'t [u8], Vec<usize>>,
    kept: &[bool],
) -> Vec<(usize, &'t [u8])> {
    let mut out = Vec::new();
    for (&n, &counts) in used {
        let Some(ks) = by_name.get(n) else { continue };
        // A using-declaration (`using ranges::get;`) is no declaration of its own.
        let real = || ks.iter().filter(|&&k| !s.decls[k].using_decl);
        if real().any(|&k| kept[k] || !s.decls[k].function) {
            continue;
        }
        // The shortest of those called with a count they accept, else of all.
        let fits = |k: &&usize| s.decls[**k].accepts.admits(counts);
        let size = |k: &&usize| s.decls[**k].end - s.decls[**k].start;
        let pick = real().filter(fits).min_by_key(size);
        if let Some(&k) = pick.or_else(|| real().min_by_key(size)) {
            out.push((k, n));
        }
    }
    out.sort_unstable();
    out
}

/// True if declaration `k` is a using-declaration of functions only (`using ranges::get;`)
/// none of which is kept: code that calls the name reaches some other overload (the call
/// would keep this one if its classes were used), so the declaration waits.
fn waits_for_overload<'t>(
    s: &Split<'t>,
    k: usize,
    by_name: &HashMap<&'t [u8], Vec<usize>>,
    kept: &[bool],
) -> bool {
    let d = &s.decls[k];
    if !d.using_decl {
        return false;
    }
    let targets = using_targets(s, d, by_name);
    !targets.is_empty()
        && targets.iter().all(|&j| s.decls[j].function)
        && !targets.iter().any(|&j| kept[j])
}

/// The declarations a using-declaration `d` names: those of its name in its namespace.
fn using_targets<'t>(
    s: &Split<'t>,
    d: &split::Decl<'t>,
    by_name: &HashMap<&'t [u8], Vec<usize>>,
) -> Vec<usize> {
    let mut out = Vec::new();
    for &(n, q) in &d.scoped {
        let (Some(q), true) = (q, d.declares.contains(&n)) else {
            continue;
        };
        out.extend(
            by_name
                .get(n)
                .into_iter()
                .flatten()
                .copied()
                .filter(|&j| !s.decls[j].using_decl && scope::namespace_of(s, j) == Some(q)),
        );
    }
    out
}

/// For each kept using-declaration (`using ranges::get;`) whose namespace keeps no
/// declaration of its name: the shortest such declaration, and the name.
fn unmet_using<'t>(
    s: &Split<'t>,
    by_name: &HashMap<&'t [u8], Vec<usize>>,
    kept: &[bool],
) -> Vec<(usize, &'t [u8])> {
    let mut out = Vec::new();
    for (k, d) in s.decls.iter().enumerate() {
        if !kept[k] || !d.using_decl {
            continue;
        }
        for &(n, q) in &d.scoped {
            let (Some(q), true) = (q, d.declares.contains(&n)) else {
                continue;
            };
            let in_q: Vec<usize> = by_name
                .get(n)
                .into_iter()
                .flatten()
                .copied()
                .filter(|&j| !s.decls[j].using_decl && scope::namespace_of(s, j) == Some(q))
                .collect();
            if in_q.iter().any(|&j| kept[j]) {
                continue;
            }
            if let Some(&j) = in_q
                .iter()
                .min_by_key(|&&j| s.decls[j].end - s.decls[j].start)
            {
                out.push((j, n));
            }
        }
    }
    out
}

/// Deletions for everything not kept (a block stays if any child stays).
fn edits_for(s: &Split, kept: &mut [bool]) -> Vec<Edit> {
    // A block stays if any child stays. A parent comes before its children, so going
    // backwards each declaration hands its keeping to its parent only, before the parent
    // is looked at (a walk to the top from each would cost the depth of every block).
    for k in (0..s.decls.len()).rev() {
        if let Some(q) = s.decls[k].parent.filter(|_| kept[k]) {
            kept[q] = true;
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

/// The candidates, boldest first (see the module doc).
fn cuts(text: &[u8], hints: &Hints) -> Vec<Vec<Edit>> {
    if lex::too_big(text) {
        return Vec::new();
    }
    let mut s = Split::new(text);
    let Roots {
        roots,
        trimmed,
        truncated,
        callers,
        main_decls,
    } = Roots::of(&s, hints, true);
    let with_callers = [&roots[..], &callers[..]].concat();
    let mut cuts = Vec::new();
    if !truncated.is_empty() {
        cuts.push(trimmed_cut(&mut s, &with_callers, truncated));
    }
    if !trimmed.is_empty() {
        cuts.push(trimmed_cut(&mut s, &with_callers, trimmed));
    }
    if !with_callers.is_empty() {
        cuts.push(cut(&s, &with_callers));
    }
    if !main_decls.is_empty() {
        cuts.push(cut(&s, &[&with_callers[..], &main_decls[..]].concat()));
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

/// The closure of `roots` with some of them trimmed to a few statements (see `callers.rs`).
fn trimmed_cut<'t>(
    s: &mut Split<'t>,
    roots: &[usize],
    trimmed: Vec<(usize, callers::Trimmed<'t>)>,
) -> Vec<Edit> {
    let mut inside = Vec::new();
    let mut saved = Vec::new();
    for (k, t) in trimmed {
        inside.extend(t.edits);
        let uses = std::mem::replace(&mut s.decls[k].uses, t.uses);
        let scoped = std::mem::replace(&mut s.decls[k].scoped, t.scoped);
        saved.push((k, uses, scoped));
    }
    let mut edits = cut(s, roots);
    for (k, uses, scoped) in saved {
        s.decls[k].uses = uses;
        s.decls[k].scoped = scoped;
    }
    edits.extend(inside);
    edits.sort_by_key(|e| e.start);
    edits
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
