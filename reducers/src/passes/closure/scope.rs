//! Namespace scope for the closure's variables and type aliases.
//!
//! Names are matched without scopes, which over-approximates; for functions and classes it
//! must (argument-dependent lookup finds functions in namespaces nobody names, and a class
//! is reached through its members). A variable or a type alias is never found by ADL: only a
//! use qualified by its namespace (`ranges::min`), or an unqualified one from inside that
//! namespace, or one after a `using namespace` of it, can name it. Without this, every `min`,
//! `size` or `begin` in the kept code keeps the `std::ranges` objects of that name, and with
//! them most of `<ranges>`, `<limits>` and `<string>`.

use std::collections::{HashMap, HashSet};

use super::split::Split;

/// The scoped declarations and which of their names are used where.
pub(super) struct Scopes<'t> {
    /// Declarations found only by scope: (name, innermost namespace) → declarations.
    by_key: HashMap<(&'t [u8], &'t [u8]), Vec<usize>>,
    /// Per declaration: true when it is in `by_key` (and so not found by name alone).
    pub scoped: Vec<bool>,
    used: HashSet<(&'t [u8], &'t [u8])>,
}

impl<'t> Scopes<'t> {
    pub(super) fn new(s: &Split<'t>) -> Self {
        let mut by_key: HashMap<(&[u8], &[u8]), Vec<usize>> = HashMap::new();
        let mut scoped = vec![false; s.decls.len()];
        for (k, d) in s.decls.iter().enumerate() {
            let plain = d.children.is_empty()
                && !d.function
                && !d.always
                && d.classes.is_empty()
                && d.spec_args.is_empty()
                && d.attached.is_empty();
            if !plain {
                continue;
            }
            let Some(ns) = namespace_of(s, k) else {
                continue;
            };
            if s.opened.contains(ns) {
                continue;
            }
            scoped[k] = true;
            for &n in &d.declares {
                by_key.entry((n, ns)).or_default().push(k);
            }
        }
        Scopes {
            by_key,
            scoped,
            used: HashSet::new(),
        }
    }

    /// The scoped declarations that kept declaration `by` names for the first time, each with
    /// the name.
    pub(super) fn reached(&mut self, s: &Split<'t>, by: usize) -> Vec<(usize, &'t [u8])> {
        let mut out = Vec::new();
        let enclosing = enclosing(s, by);
        for &(name, qualifier) in &s.decls[by].scoped {
            let keys: Vec<(&[u8], &[u8])> = match qualifier {
                Some(q) => vec![(name, q)],
                None => enclosing.iter().map(|&ns| (name, ns)).collect(),
            };
            for key in keys {
                if self.used.insert(key) {
                    let found = self.by_key.get(&key).into_iter().flatten();
                    out.extend(found.map(|&k| (k, name)));
                }
            }
        }
        out
    }
}

/// The innermost named, non-inline namespace around declaration `k`, if any (`extern "C"`
/// blocks and inline namespaces are looked through: their names are their parent's).
pub(super) fn namespace_of<'t>(s: &Split<'t>, k: usize) -> Option<&'t [u8]> {
    let mut p = s.decls[k].parent;
    while let Some(q) = p {
        let block = &s.decls[q];
        if let Some(&name) = block.declares.last() {
            if !s.inline.contains(name) {
                return Some(name);
            }
        }
        p = block.parent;
    }
    None
}

/// Every namespace name around declaration `k`: where its unqualified names are looked up.
fn enclosing<'t>(s: &Split<'t>, k: usize) -> Vec<&'t [u8]> {
    let mut out = Vec::new();
    let mut p = s.decls[k].parent;
    while let Some(q) = p {
        out.extend(s.decls[q].declares.iter().copied());
        p = s.decls[q].parent;
    }
    out
}
