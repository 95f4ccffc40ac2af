//! Pruning the closure by blame: what one name pulls in, tried without it.
//!
//! The closure matches names without scopes or types, so it keeps more than the compiler
//! needs: a `size` used as a member keeps the `ranges::size` object and what that needs, a
//! `string` in one kept signature keeps all of `basic_string`. Which of these the crash can
//! do without only the compiler can say, so this plan asks it, heaviest first: for each name
//! that pulled in at least a few KB (its own declarations and everything first reached through
//! them), one candidate deletes what the closure no longer reaches once that name counts as
//! unused. A kept-valid test rejects the cuts that break the code; each accepted one removes
//! a whole cluster in one test, where ddmin over declarations would need dozens.

use std::collections::{HashMap, HashSet};

use super::split::Split;
use super::{edits_for, keep_banned, Hints, Roots};
use crate::lex;
use crate::plan::{Empty, Item, List, Plan};

/// At most this many names are tried per plan (the heaviest).
const MAX_NAMES: usize = 32;

/// A name is tried when it pulls in at least this many bytes, or this share of the text.
const MIN_BYTES: usize = 2048;
const MIN_SHARE: usize = 200;

pub(crate) fn prune(text: &[u8], hints: &Hints) -> Box<dyn Plan> {
    if lex::too_big(text) {
        return Box::new(Empty);
    }
    let s = Split::new(text);
    let roots = Roots::of(&s, hints, false).all();
    if roots.is_empty() {
        return Box::new(Empty);
    }
    let items = heaviest_names(&s, &roots, text.len())
        .into_iter()
        .map(|name| {
            let banned = HashSet::from([name]);
            let mut kept = keep_banned(&s, &roots, &banned).kept;
            Item {
                edits: edits_for(&s, &mut kept),
                // The plan of the smaller text is built afresh: start at its top.
                on_success: 0,
            }
        })
        .collect();
    Box::new(List { items })
}

/// The names that pull the most bytes into the closure of `roots`, heaviest first: each
/// kept declaration's bytes, and those of everything first reached through it, count for the
/// name that first reached it.
pub(super) fn heaviest_names<'t>(s: &Split<'t>, roots: &[usize], len: usize) -> Vec<&'t [u8]> {
    let k = keep_banned(s, roots, &HashSet::new());
    let mut subtree = vec![0usize; s.decls.len()];
    for &d in k.order.iter().rev() {
        subtree[d] += s.decls[d].end - s.decls[d].start;
        if let Some((from, _)) = k.why[d] {
            subtree[from] += subtree[d];
        }
    }
    let mut weight: HashMap<&[u8], usize> = HashMap::new();
    for &d in &k.order {
        if let Some((_, name)) = k.why[d] {
            *weight.entry(name).or_default() += subtree[d];
        }
    }
    let floor = MIN_BYTES.max(len / MIN_SHARE);
    let mut names: Vec<(&[u8], usize)> = weight.into_iter().filter(|&(_, w)| w >= floor).collect();
    names.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    names.into_iter().take(MAX_NAMES).map(|(n, _)| n).collect()
}
