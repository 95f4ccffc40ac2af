//! Edits, cursors and the generic candidate schedules (ddmin and a plain list): what a
//! [`crate::Pass`] returns.
//!
//! A pass analyses the current best text once (O(n)) into a [`Plan`], and the plan yields
//! candidates lazily from a [`Cursor`]. Every candidate carries two cursors: where to continue if
//! it turns out uninteresting (`next`), and where the *new* plan built from the accepted text
//! should resume (`on_success`). Cursors are plain values, so the driver can generate candidates
//! speculatively ahead of the tests and still accept them in a fixed order: the result is a
//! function of the text and the test only, never of timing or the number of jobs.

use std::borrow::Cow;

/// Replace `text[start..end]` with `with`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Edit {
    /// The first byte replaced.
    pub start: usize,
    /// One past the last byte replaced.
    pub end: usize,
    /// What replaces them.
    pub with: Cow<'static, [u8]>,
}

impl Edit {
    /// Deletes `text[start..end]`.
    pub fn delete(start: usize, end: usize) -> Self {
        Edit {
            start,
            end,
            with: Cow::Borrowed(b""),
        }
    }
    /// Replaces `text[start..end]` with `with`.
    pub fn replace(start: usize, end: usize, with: &'static [u8]) -> Self {
        Edit {
            start,
            end,
            with: Cow::Borrowed(with),
        }
    }
}

/// Applies sorted, non-overlapping edits. Edits that overlap an earlier one or fall outside the
/// text are ignored rather than trusted, so a buggy pass can never cause a panic here.
///
/// A deletion that starts mid-line and ends with a line break before a `#` keeps that line
/// break: a preprocessed line often holds several declarations (`extern double trunc (…);
/// extern double __trunc (…);` from one macro), and deleting the last one up to the next line
/// marker would glue the marker onto the line before, where it is no directive but an error.
pub fn apply(text: &[u8], edits: &[Edit]) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len());
    let mut at = 0;
    for e in edits {
        if e.start < at || e.end < e.start || e.end > text.len() {
            continue;
        }
        out.extend_from_slice(&text[at..e.start]);
        out.extend_from_slice(&e.with);
        at = e.end;
        let glues_directive = e.with.is_empty()
            && e.end > e.start
            && crate::newline::ends_line(text, e.end - 1)
            && text.get(e.end) == Some(&b'#')
            && out.last().is_some_and(|&b| b != b'\n' && b != b'\r');
        if glues_directive {
            // The line end it deleted, in the text's own style.
            out.push(text[e.end - 1]);
        }
    }
    out.extend_from_slice(&text[at..]);
    out
}

/// Bytes of context either side of an edit that its [`edit_key`] covers.
const KEY_CONTEXT: usize = 8;

/// What a candidate does, independent of where in the text: `pass`'s name and, for every edit
/// [`apply`] would use, the bytes it removes and puts in with up to [`KEY_CONTEXT`] bytes on
/// either side. The same deletion tried on a later text (a next round, or a level of success
/// speculation assuming another candidate) gets the same key while its surroundings are the
/// same, and mostly fails again (`speculate.rs` learns how often). Stable within a process
/// (a trace's keys are compared only with each other).
pub(crate) fn edit_key(pass: &str, text: &[u8], edits: &[Edit]) -> u64 {
    use std::hash::{DefaultHasher, Hash, Hasher};
    let mut h = DefaultHasher::new();
    pass.hash(&mut h);
    let mut at = 0;
    for e in edits {
        if e.start < at || e.end < e.start || e.end > text.len() {
            continue;
        }
        text[e.start.saturating_sub(KEY_CONTEXT)..e.start].hash(&mut h);
        text[e.start..e.end].hash(&mut h);
        e.with.hash(&mut h);
        text[e.end..(e.end + KEY_CONTEXT).min(text.len())].hash(&mut h);
        at = e.end;
    }
    h.finish()
}

/// True if the edits (as [`apply`] would use them) make the text strictly shorter.
pub(crate) fn shrinks(text_len: usize, edits: &[Edit]) -> bool {
    let mut at = 0;
    let mut removed = 0usize;
    let mut added = 0usize;
    for e in edits {
        if e.start < at || e.end < e.start || e.end > text_len {
            continue;
        }
        removed += e.end - e.start;
        added += e.with.len();
        at = e.end;
    }
    added < removed
}

/// A position inside a plan: opaque to the driver, which only hands back the cursors a plan
/// gave it. A plan may use the three numbers as it likes.
pub type Cursor = [u64; 3];

/// The position of a fresh plan.
pub const START: Cursor = [0; 3];

/// One candidate: edits against the text the plan was built from.
#[derive(Clone, Debug)]
pub struct Step {
    /// The edits, sorted and non-overlapping (see [`apply`]).
    pub edits: Vec<Edit>,
    /// Where to continue in this plan if the candidate is rejected.
    pub next: Cursor,
    /// Where to start in the plan of the accepted text.
    pub on_success: Cursor,
}

/// Lazily enumerates candidates of one pass over one text.
pub trait Plan: Send {
    /// The first candidate at or after `at` that makes `text` strictly shorter (or, for a
    /// pass that only changes whitespace, differs from it); `None` when there is none. `text`
    /// is the text the plan was built from.
    fn step(&self, text: &[u8], at: Cursor) -> Option<Step>;
}

/// A plan with no candidates.
#[derive(Clone, Copy, Debug, Default)]
pub struct Empty;

impl Plan for Empty {
    fn step(&self, _: &[u8], _: Cursor) -> Option<Step> {
        None
    }
}

/// Replacement texts a [`Unit`] can refer to by index (keeps units at 12 bytes).
pub(crate) const REPL: [&[u8]; 8] = [b"", b" ", b"{}", b";", b"0", b"\"\"", b"int", b"const"];
pub(crate) const DEL: u8 = 0;
pub(crate) const SPACE: u8 = 1;
pub(crate) const ZERO: u8 = 4;
pub(crate) const EMPTY_STR: u8 = 5;
pub(crate) const INT: u8 = 6;
pub(crate) const CONST: u8 = 7;

/// A span the ddmin schedule may replace, together with the others of its group.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Unit {
    pub start: u32,
    pub end: u32,
    pub with: u8,
}

impl Unit {
    pub fn new(start: usize, end: usize, with: u8) -> Self {
        Unit {
            start: start as u32,
            end: end as u32,
            with,
        }
    }
    fn edit(&self) -> Edit {
        Edit::replace(
            self.start as usize,
            self.end as usize,
            REPL[self.with as usize],
        )
    }
}

/// Delta debugging over sorted, non-overlapping units: groups of `chunk` consecutive units are
/// replaced back to front, then `chunk` halves, down to single units. Back to front means a
/// success never moves the units before it, so the schedule continues where it was. Optional
/// `prelude` candidates (e.g. "drop every header at once") are tried first, and again after every
/// success, because a success can make them work (unless `retry_prelude` is off: then they are
/// a first stage only).
pub(crate) struct Ddmin {
    pub units: Vec<Unit>,
    pub max_chunk: usize,
    pub prelude: Vec<Vec<Edit>>,
    pub retry_prelude: bool,
}

impl Ddmin {
    pub fn new(units: Vec<Unit>, max_chunk: usize) -> Self {
        Ddmin {
            units,
            max_chunk,
            prelude: Vec::new(),
            retry_prelude: true,
        }
    }
}

impl Plan for Ddmin {
    fn step(&self, text: &[u8], at: Cursor) -> Option<Step> {
        let [mut p, chunk, end] = at.map(|x| x as usize);
        while p < self.prelude.len() {
            let edits = &self.prelude[p];
            p += 1;
            if shrinks(text.len(), edits) {
                let next = [p as u64, chunk as u64, end as u64];
                return Some(Step {
                    edits: edits.clone(),
                    next,
                    on_success: [p as u64, chunk as u64, end as u64],
                });
            }
        }
        let n = self.units.len();
        if n == 0 {
            return None;
        }
        let (mut c, mut e) = if chunk == 0 {
            (n.div_ceil(2).clamp(1, self.max_chunk.max(1)), n)
        } else {
            (chunk, end.min(n))
        };
        loop {
            if c == 0 {
                return None;
            }
            if e == 0 {
                c /= 2;
                e = n;
                continue;
            }
            let a = e.saturating_sub(c);
            let edits: Vec<Edit> = self.units[a..e].iter().map(Unit::edit).collect();
            if shrinks(text.len(), &edits) {
                return Some(Step {
                    edits,
                    next: [p as u64, c as u64, a as u64],
                    // Re-run the prelude (cheap when it is empty), then continue before `a`.
                    on_success: [
                        if self.retry_prelude { 0 } else { p as u64 },
                        c as u64,
                        a as u64,
                    ],
                });
            }
            e = a;
        }
    }
}

/// One candidate of a [`List`] and the index to resume at in the plan of the accepted text.
#[derive(Clone, Debug)]
pub struct Item {
    /// The candidate's edits.
    pub edits: Vec<Edit>,
    /// The index of the item to try first in the list built from the accepted text.
    pub on_success: usize,
}

/// A short explicit list of candidates, tried in order (those that do not shrink the text are
/// skipped).
#[derive(Clone, Debug, Default)]
pub struct List {
    /// The candidates, in order.
    pub items: Vec<Item>,
}

impl Plan for List {
    fn step(&self, text: &[u8], at: Cursor) -> Option<Step> {
        let mut i = at[0] as usize;
        while let Some(item) = self.items.get(i) {
            i += 1;
            if shrinks(text.len(), &item.edits) {
                return Some(Step {
                    edits: item.edits.clone(),
                    next: [i as u64, 0, 0],
                    on_success: [item.on_success as u64, 0, 0],
                });
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn apply_ignores_bad_edits() {
        let t = b"abcdef";
        let edits = [
            Edit::delete(1, 2),
            Edit::delete(1, 3),
            Edit::replace(4, 9, b"x"),
            Edit::replace(4, 5, b"XY"),
        ];
        assert_eq!(apply(t, &edits), b"acdXYf");
        assert!(!shrinks(t.len(), &edits));
    }

    #[test]
    fn a_deletion_never_glues_a_line_marker_onto_the_line_before() {
        let t = b"int a; int b;\n# 9 \"m.c\" 2\nint c;\n";
        // `int b;\n` deleted from mid-line: the marker keeps its own line.
        assert_eq!(
            apply(t, &[Edit::delete(7, 14)]),
            b"int a; \n# 9 \"m.c\" 2\nint c;\n"
        );
        // A deletion from the start of a line needs nothing kept.
        assert_eq!(apply(t, &[Edit::delete(0, 14)]), b"# 9 \"m.c\" 2\nint c;\n");
    }

    #[test]
    fn an_edit_keeps_its_key_on_another_text_while_its_surroundings_stay() {
        let del = |s, e| [Edit::delete(s, e)];
        let a = b"int z; int a; int b; int c; int d;";
        let b = b"int z; int b; int c; int d;";
        // `int c; ` with the same 8 bytes either side, 7 bytes further left.
        let key = edit_key("tokens", a, &del(21, 28));
        assert_eq!(key, edit_key("tokens", b, &del(14, 21)));
        // Another pass, another deletion, or other surroundings: other keys.
        assert_ne!(key, edit_key("lines", a, &del(21, 28)));
        assert_ne!(key, edit_key("tokens", a, &del(14, 21)));
        let c = b"int z; int x; int c; int d;";
        assert_ne!(key, edit_key("tokens", c, &del(14, 21)));
        // Edits apply ignores do not count.
        assert_eq!(
            edit_key("tokens", a, &[Edit::delete(21, 28), Edit::delete(22, 23)]),
            key
        );
    }

    #[test]
    fn ddmin_schedule_is_back_to_front_halving() {
        let units: Vec<Unit> = (0..5).map(|i| Unit::new(i, i + 1, DEL)).collect();
        let plan = Ddmin::new(units, usize::MAX);
        let text = b"abcde";
        let mut at = START;
        let mut seen = Vec::new();
        while let Some(s) = plan.step(text, at) {
            seen.push(String::from_utf8(apply(text, &s.edits)).unwrap());
            at = s.next;
        }
        assert_eq!(seen, ["ab", "cde", "abcd", "abce", "abde", "acde", "bcde"]);
    }
}
