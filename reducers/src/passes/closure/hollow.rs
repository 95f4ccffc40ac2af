//! Hollowing a class: its definition cut back to a declaration, and what only its body named.
//!
//! The closure keeps a class whole once its name is used, and with it everything its members
//! name: `std::variant` keeps its storage, visitation and comparison machinery, most of
//! `<variant>`, though code that only asks `variant_size` or `variant_alternative` of it needs
//! no complete type at all. Which classes the crash can take incomplete only the compiler can
//! say, so, as `prune.rs` does for names, this plan asks it, heaviest first: for each kept
//! class definition whose body and what only the body reached weigh at least a few KB, one
//! candidate writes the class as a declaration (`template <…> class variant;`) and deletes
//! what the closure no longer reaches. A kept-valid test rejects the ones the code needs
//! complete; an accepted one removes a class and its helpers in one test. Two more kinds of
//! candidate: the classes whose bodies each name one of the heaviest names, together (two
//! classes that each keep `<string>` for the other gain nothing alone), and function
//! definitions outside the roots written as declarations (`template <class T> int f(T);`),
//! for what only their bodies named.

use std::collections::HashSet;

use super::split::{Decl, Split};
use super::{edits_for, keep_banned, prune, Hints, Roots};
use crate::lex;
use crate::plan::{Edit, Empty, Item, List, Plan};

/// At most this many classes are tried per plan (the heaviest).
const MAX_CLASSES: usize = 24;

/// At most this many class definitions are weighed alone (the largest bodies).
const MAX_WEIGHED: usize = 64;

/// At most this many function definitions are weighed alone (the largest bodies).
const MAX_FUNCTIONS: usize = 32;

/// At most this many groups of classes are weighed (see [`groups`]), each of at most
/// [`MAX_GROUP`] classes.
const MAX_GROUPS: usize = 16;
const MAX_GROUP: usize = 16;

/// A class is tried when hollowing it removes at least this many bytes, or this share of the
/// text.
const MIN_BYTES: usize = 2048;
const MIN_SHARE: usize = 200;

pub(crate) fn hollow(text: &[u8], hints: &Hints) -> Box<dyn Plan> {
    if lex::too_big(text) {
        return Box::new(Empty);
    }
    let mut s = Split::new(text);
    let roots = Roots::of(&s, hints, false).all();
    if roots.is_empty() {
        return Box::new(Empty);
    }
    let none = HashSet::new();
    let base = keep_banned(&s, &roots, &none).kept;
    let kept_bytes = |kept: &[bool], s: &Split| -> usize {
        (0..kept.len())
            .filter(|&k| kept[k] && s.decls[k].children.is_empty())
            .map(|k| s.decls[k].end - s.decls[k].start)
            .sum()
    };
    let before = kept_bytes(&base, &s);
    // A set: the roots are every main-file declaration, asked about once per declaration.
    let is_root: HashSet<usize> = roots.iter().copied().collect();
    let bodies: Vec<(usize, Body)> = (0..s.decls.len())
        .filter(|&k| base[k])
        .filter_map(|k| {
            // The roots' functions are the crash site and the code around it.
            let function = || function_body_of(&s, k).filter(|_| !is_root.contains(&k));
            body_of(&s, k).or_else(function).map(|b| (k, b))
        })
        .collect();
    let floor = MIN_BYTES.max(text.len() / MIN_SHARE);
    let mut items: Vec<(usize, Vec<Edit>)> = Vec::new();
    for set in singles(&s, &bodies).chain(groups(&mut s, &roots, &bodies)) {
        let chosen: Vec<(usize, &Body)> =
            set.iter().map(|&b| (bodies[b].0, &bodies[b].1)).collect();
        let mut kept = with_heads_only(&mut s, &chosen, |s| keep_banned(s, &roots, &none).kept);
        let hollowed: usize = chosen.iter().map(|(_, b)| b.bytes(&s)).sum();
        let gain = before - kept_bytes(&kept, &s).min(before) + hollowed;
        if gain < floor {
            continue;
        }
        let mut edits = edits_for(&s, &mut kept);
        for &(k, body) in &chosen {
            edits.extend(body.edits(&s, k));
        }
        edits.sort_by_key(|e| e.start);
        items.push((gain, edits));
    }
    items.sort_by_key(|(gain, _)| std::cmp::Reverse(*gain));
    items.truncate(MAX_CLASSES + MAX_GROUPS);
    Box::new(List {
        items: items
            .into_iter()
            .map(|(_, edits)| Item {
                edits,
                // The plan of the smaller text is built afresh: start at its top.
                on_success: 0,
            })
            .collect(),
    })
}

/// Where a class definition's body is: the token its declaration ends before (the base
/// clause's `:`, a `final`, or the body's `{`) and the body's `}`.
struct Body {
    cut_from: usize,
    close: usize,
    /// A function's body: the cut ends with a `;` of its own.
    function: bool,
}

impl Body {
    fn bytes(&self, s: &Split) -> usize {
        s.toks[self.close].end as usize - s.toks[self.cut_from].start as usize
    }

    /// The deletion of the base clause and the body (the `;` after it stays), the line markers
    /// inside kept on lines of their own.
    fn edits(&self, s: &Split, k: usize) -> Vec<Edit> {
        // From the end of the head's last token: `struct Big;`, no blank before the `;`.
        let (from, to) = (
            s.toks[self.cut_from - 1].end as usize,
            s.toks[self.close].end as usize,
        );
        let mut out = Vec::new();
        let mut at = from;
        for &(a, b) in s.decls[k]
            .directives
            .iter()
            .filter(|d| d.0 >= from && d.1 <= to)
        {
            // The first marker starts a line of its own after the class head.
            if at == from {
                out.push(Edit::replace(at, a, b"\n"));
            } else {
                out.push(Edit::delete(at, a));
            }
            at = b;
        }
        out.push(if self.function {
            Edit::replace(at, to, b";")
        } else {
            Edit::delete(at, to)
        });
        out
    }
}

/// The body of declaration `k` when it is a function definition at namespace scope that
/// can be written as a declaration: the cut starts at a constructor's initialisers or the
/// body's `{`. Not an out-of-line member (a declaration of one is an error), nor a function
/// whose return type is deduced from its body.
fn function_body_of(s: &Split, k: usize) -> Option<Body> {
    let d = &s.decls[k];
    let plain = d.function && d.children.is_empty() && !d.always && d.attached.is_empty();
    if !plain || d.params_close <= d.first || !s.p(d.last, b"}") {
        return None;
    }
    let open = s.mate(d.last).filter(|&o| o > d.params_close)?;
    let mut cut_from = open;
    let mut trailing = false;
    let mut j = d.params_close + 1;
    while j < open {
        match s.b(j) {
            b":" if cut_from == open => cut_from = j,
            b"->" => trailing = true,
            b"(" | b"[" | b"{" => j = s.mate(j).filter(|&m| m < open)?,
            _ => {}
        }
        j += 1;
    }
    let head = s.skip_template_prefix(d.first, d.params_close);
    let deduced = (head..d.params_close).any(|t| s.w(t, b"auto")) && !trailing;
    (!deduced).then_some(Body {
        cut_from,
        close: d.last,
        function: true,
    })
}

/// The body of declaration `k` when it is a class, struct or union definition that ends
/// with `};` and can be written as a declaration (`enum`s cannot without their type; a
/// definition with declarators after it, `struct S {…} s;`, is no class alone).
fn body_of(s: &Split, k: usize) -> Option<Body> {
    let d = &s.decls[k];
    if !d.children.is_empty() || d.classes.is_empty() || d.always {
        return None;
    }
    let head = s.skip_template_prefix(d.first, d.last);
    if !matches!(s.b(head), b"class" | b"struct" | b"union") || head >= d.last {
        return None;
    }
    let mut cut_from = None;
    let mut j = head + 1;
    let open = loop {
        if j >= d.last {
            return None;
        }
        match s.b(j) {
            b"{" => break j,
            b";" | b"=" => return None,
            b":" if cut_from.is_none() => cut_from = Some(j),
            b"(" | b"[" => j = s.mate(j).filter(|&m| m < d.last)?,
            _ => {}
        }
        j += 1;
    };
    let close = s.mate(open)?;
    if close + 1 != d.last || !s.p(d.last, b";") || close == open + 1 {
        return None;
    }
    let mut cut_from = cut_from.unwrap_or(open);
    if s.w(cut_from - 1, b"final") && cut_from - 1 > head + 1 {
        cut_from -= 1;
    }
    Some(Body {
        cut_from,
        close,
        function: false,
    })
}

/// The single classes to try: the [`MAX_WEIGHED`] largest bodies, as indices into `bodies`.
fn singles<'a>(s: &Split, bodies: &'a [(usize, Body)]) -> impl Iterator<Item = Vec<usize>> + 'a {
    let largest = |function: bool, n: usize| {
        let mut by_size: Vec<usize> = (0..bodies.len())
            .filter(|&b| bodies[b].1.function == function)
            .collect();
        by_size.sort_by_key(|&b| (std::cmp::Reverse(bodies[b].1.bytes(s)), bodies[b].0));
        by_size.truncate(n);
        by_size
    };
    let mut chosen = largest(false, MAX_WEIGHED);
    chosen.extend(largest(true, MAX_FUNCTIONS));
    chosen.into_iter().map(|b| vec![b])
}

/// The classes to try together: for each of the names that pull the most into the closure,
/// every kept class whose body (not its head) names it, when there are several (`struct Get
/// { string key; }` and `struct Put { string key, value; }` each keep `<string>` for the
/// other, so neither gains alone). As indices into `bodies`.
fn groups(s: &mut Split, roots: &[usize], bodies: &[(usize, Body)]) -> Vec<Vec<usize>> {
    let names: Vec<&[u8]> = prune::heaviest_names(s, roots, s.text.len())
        .into_iter()
        .take(MAX_GROUPS)
        .collect();
    // The uses of a head, read again only for the bodies that name one of those names.
    let mut heads: Vec<Option<Vec<&[u8]>>> = vec![None; bodies.len()];
    for (b, (k, body)) in bodies.iter().enumerate() {
        if names.iter().any(|n| s.decls[*k].uses.contains(n)) {
            heads[b] = Some(with_heads_only(s, &[(*k, body)], |s| {
                s.decls[*k].uses.clone()
            }));
        }
    }
    let mut out: Vec<Vec<usize>> = Vec::new();
    for name in names {
        let in_body = |b: usize| heads[b].as_ref().is_some_and(|h| !h.contains(&name));
        let users: Vec<usize> = (0..bodies.len())
            .filter(|&b| s.decls[bodies[b].0].uses.contains(&name) && in_body(b))
            .collect();
        if (2..=MAX_GROUP).contains(&users.len()) && !out.contains(&users) {
            out.push(users);
        }
    }
    out
}

/// Runs `f` with the uses of each chosen declaration cut back to those of its head
/// (everything before its body's `cut_from`), then restores them.
fn with_heads_only<'t, R>(
    s: &mut Split<'t>,
    chosen: &[(usize, &Body)],
    f: impl FnOnce(&Split<'t>) -> R,
) -> R {
    let mut saved = Vec::with_capacity(chosen.len());
    for &(k, body) in chosen {
        let d = &s.decls[k];
        let mut head = Decl::empty(d.first, d.last, d.start, d.end, d.parent);
        s.names(d.first, body.cut_from - 1, &mut head);
        let d = &mut s.decls[k];
        let uses = std::mem::replace(&mut d.uses, head.uses);
        let scoped = std::mem::replace(&mut d.scoped, head.scoped);
        let spells = std::mem::replace(&mut d.spells, head.spells);
        let calls = std::mem::replace(&mut d.calls, head.calls);
        saved.push((k, uses, scoped, spells, calls));
    }
    let out = f(s);
    for (k, uses, scoped, spells, calls) in saved {
        let d = &mut s.decls[k];
        (d.uses, d.scoped, d.spells, d.calls) = (uses, scoped, spells, calls);
    }
    out
}
