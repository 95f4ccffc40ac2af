//! Template angle brackets for the closure's parser: where each `<` closes, and where a
//! declaration's `template <…>` heads end.
//!
//! Uses ask where a `<` closes at every template name (a call's arguments, a comparison, a
//! specialisation's arguments). A scan per question costs the rest of the list each time, so
//! `A<A<…A<int>…>>` nested 10^5 deep took minutes; [`closes`] answers every `<` of a text in
//! one pass instead.

use std::collections::HashSet;

use super::split::Split;
use crate::lex::{Kind, Tok};

/// Each `<` token that closes, and the token closing it: the first token after it where more
/// `>` than `<` have been seen since (a `>>` counts as two), unless a `;` or `{` comes first.
/// Sorted by the `<`; only closed `<` are listed (they are few among the tokens, and a table
/// of them all would be as big as the token list). One pass with a stack of the open `<`,
/// each with the nesting it closes at.
pub(super) fn closes(text: &[u8], toks: &[Tok]) -> Vec<(u32, u32)> {
    let mut out = Vec::new();
    // The open `<` and the depth at which each closes, deepest on top.
    let mut open: Vec<(usize, i64)> = Vec::new();
    let mut depth = 0i64;
    for (k, t) in toks.iter().enumerate() {
        let delta = match t.bytes(text) {
            b"<" => {
                open.push((k, depth));
                1
            }
            b">" => -1,
            b">>" => -2,
            b";" | b"{" => {
                open.clear();
                0
            }
            _ => 0,
        };
        depth += delta;
        while let Some(&(o, at)) = open.last() {
            if depth > at {
                break;
            }
            // Token indices fit in `u32`: the text's offsets do (`lex::too_big`).
            out.push((o as u32, k as u32));
            open.pop();
        }
    }
    out.sort_unstable();
    out
}

impl Split<'_> {
    /// The `>` (or `>>`) closing the `<` at token `open`, within `last` (for any other token:
    /// the token itself, unless it is a `;` or `{`).
    pub(super) fn angle_close(&self, open: usize, last: usize) -> Option<usize> {
        if open > last {
            return None;
        }
        match self.b(open) {
            b"<" => {
                let k = self
                    .closes
                    .binary_search_by_key(&open, |&(o, _)| o as usize);
                k.ok()
                    .map(|k| self.closes[k].1 as usize)
                    .filter(|&c| c <= last)
            }
            b";" | b"{" => None,
            _ => Some(open),
        }
    }

    /// The first token after any `template <…>` prefixes starting at `i` (bounded by `last`).
    pub(super) fn skip_template_prefix(&self, mut i: usize, last: usize) -> usize {
        while self.w(i, b"template") && self.p(i + 1, b"<") {
            let mut depth = 0i32;
            let mut j = i + 1;
            // The list's non-type parameters (`size_t __w`): a `<` after one of them (as
            // after a number or a `)`) compares, in a default argument such as libstdc++'s
            // `bool = __w < static_cast<size_t>(…)`.
            let mut values: HashSet<&[u8]> = HashSet::new();
            while j <= last {
                if depth == 1 && self.toks[j].kind == Kind::Ident && j > 0 {
                    let before = self.b(j - 1);
                    let after = self
                        .toks
                        .get(j + 1)
                        .map_or(&b">"[..], |t| t.bytes(self.text));
                    let typed = self.toks[j - 1].kind == Kind::Ident
                        && !matches!(before, b"typename" | b"class");
                    if typed && matches!(after, b"," | b"=" | b">" | b">>") {
                        values.insert(self.b(j));
                    }
                }
                let compares = j > 0
                    && (matches!(self.toks[j - 1].kind, Kind::Number)
                        || self.p(j - 1, b")")
                        || values.contains(&self.b(j - 1)));
                match self.b(j) {
                    b"<" if compares => {}
                    b"<" => depth += 1,
                    b">" => depth -= 1,
                    b">>" => depth -= 2,
                    b"(" | b"[" | b"{" => j = self.mate(j).filter(|&m| m <= last).unwrap_or(j),
                    _ => {}
                }
                j += 1;
                if depth <= 0 {
                    break;
                }
            }
            i = j;
        }
        i
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    /// [`Split::angle_close`] as it was first written: a scan from `open`.
    fn angle_close_by_scan(s: &Split, open: usize, last: usize) -> Option<usize> {
        let mut depth = 0i32;
        for k in open..=last {
            match s.b(k) {
                b"<" => depth += 1,
                b">" => depth -= 1,
                b">>" => depth -= 2,
                b";" | b"{" => return None,
                _ => {}
            }
            if depth <= 0 {
                return Some(k);
            }
        }
        None
    }

    /// Token soup of angle brackets, statement ends and words.
    fn angle_text() -> impl Strategy<Value = Vec<u8>> {
        let frag = prop::sample::select(vec![
            "<", "<", ">", ">", ">>", ">>=", ";", "{", "}", "(", ")", "x", "1", "<=", " ",
        ]);
        prop::collection::vec(frag, 0..60).prop_map(|v| v.join(" ").into_bytes())
    }

    proptest! {
        #[test]
        fn closes_answer_what_the_scan_found(text in angle_text()) {
            let s = Split::new(&text);
            let n = s.toks.len();
            for open in 0..n {
                for last in open.saturating_sub(1)..n {
                    prop_assert_eq!(
                        s.angle_close(open, last),
                        angle_close_by_scan(&s, open, last),
                        "open {} last {}", open, last
                    );
                }
            }
        }
    }

    #[test]
    fn nested_lists_close_where_their_depth_returns() {
        let s = Split::new(b"A<B<C<int>>, D<(x > y)>> v; a < b; c < { d > e }");
        let close = |i: usize| s.angle_close(i, s.toks.len() - 1).map(|c| s.b(c));
        let at = |w: &[u8]| (0..s.toks.len()).find(|&i| s.b(i) == w).unwrap();
        assert_eq!(close(at(b"A") + 1), Some(&b">>"[..]));
        assert_eq!(close(at(b"B") + 1), Some(&b">>"[..]));
        assert_eq!(close(at(b"C") + 1), Some(&b">>"[..]));
        assert_eq!(close(at(b"a") + 1), None);
        assert_eq!(close(at(b"c") + 1), None);
    }
}
