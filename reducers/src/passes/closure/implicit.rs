//! What C++ calls without its name being spelt: comparison operators, and the functions a
//! range-for or a structured binding calls.
//!
//! A range-for calls `begin` and `end`, a structured binding `get` (and asks `tuple_size` and
//! `tuple_element`): the closure keeps the functions and classes of those names only once kept
//! code has one (else `get` keeps every overload of `<tuple>`, `<variant>` and `<ranges>` whose
//! class is used), with pseudo-names for the two constructs.
//!
//! Every class template of the standard library declares a family of free comparison
//! operators, and their signatures and bodies name the `<compare>` machinery (`<=>` of a
//! `variant` names `common_comparison_category_t` and the visitation helpers). The closure
//! keeps an operator once its classes are used; these wait, in addition, for kept code to
//! compare at all. A comparison is seen by its family's tokens: `==`, `!=` and a range-for
//! (which calls `!=`) for equality; `<=>`, `<=`, `>=` and a `<` or `>` that is no template
//! bracket for ordering (the rewritten candidates of C++20 cross the old operators).

use super::split::Split;
use crate::lex::Kind;

/// The pseudo-token that stands for any equality comparison.
pub(super) const EQUALITY: &[u8] = b"==";
/// The pseudo-token that stands for any ordering comparison.
pub(super) const ORDERING: &[u8] = b"<=>";

/// The pseudo-name a range-for uses.
pub(super) const RANGE_FOR: &[u8] = b"for(:)";
/// The pseudo-name a structured binding uses.
pub(super) const BINDING: &[u8] = b"auto[]";

/// What a use of pseudo-name `n` calls without spelling it: functions that take one argument,
/// and classes.
pub(super) fn implied(n: &[u8]) -> &'static [&'static [u8]] {
    match n {
        RANGE_FOR => &[b"begin", b"end"],
        BINDING => &[b"tuple_size", b"tuple_element", b"get"],
        _ => &[],
    }
}

/// The family an operator of token `op` belongs to.
pub(super) fn family(op: &[u8]) -> Option<&'static [u8]> {
    match op {
        b"==" | b"!=" => Some(EQUALITY),
        b"<=>" | b"<" | b">" | b"<=" | b">=" => Some(ORDERING),
        _ => None,
    }
}

impl<'t> Split<'t> {
    /// The family of the comparison token `i` spells, if it compares (see the module doc).
    /// `angles` is how many `<` are open before it.
    pub(super) fn compares(&self, i: usize, last: usize, angles: usize) -> Option<&'static [u8]> {
        if self.toks[i].kind != Kind::Punct || i > 0 && self.w(i - 1, b"operator") {
            return None;
        }
        match self.b(i) {
            b"==" | b"!=" => Some(EQUALITY),
            b"<=>" | b"<=" | b">=" => Some(ORDERING),
            // A bracket follows a template's name and is closed before the statement ends.
            b"<" => {
                let after_name = i > 0 && self.toks[i - 1].kind == Kind::Ident;
                let closed = self.angle_close(i, last).is_some();
                (!after_name || !closed).then_some(ORDERING)
            }
            b">" => (angles == 0).then_some(ORDERING),
            _ => None,
        }
    }

    /// True if the `for` at token `i` is a range-for: a `:` at the top of its parentheses.
    pub(super) fn range_for(&self, i: usize, last: usize) -> bool {
        if !self.w(i, b"for") || !self.p(i + 1, b"(") {
            return false;
        }
        let Some(close) = self.mate(i + 1).filter(|&c| c <= last) else {
            return false;
        };
        let mut k = i + 2;
        while k < close {
            match self.b(k) {
                b":" => return true,
                b"(" | b"[" | b"{" => k = self.mate(k).filter(|&m| m < close).unwrap_or(k),
                _ => {}
            }
            k += 1;
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn families(src: &str) -> Vec<&'static [u8]> {
        let s = Split::new(src.as_bytes());
        let d = &s.decls[0];
        let mut out: Vec<&[u8]> = d
            .spells
            .iter()
            .copied()
            .filter(|t| *t == EQUALITY || *t == ORDERING)
            .collect();
        out.sort();
        out.into_iter()
            .map(|t| if t == EQUALITY { EQUALITY } else { ORDERING })
            .collect()
    }

    #[test]
    fn range_for_and_bindings_are_seen() {
        let s =
            Split::new(b"void f() { for (auto& x : v) g(x); auto& [a, b] = p; h([&](int) {}); }");
        let spells = &s.decls[0].spells;
        assert!(spells.contains(&RANGE_FOR) && spells.contains(&BINDING));
        let s = Split::new(b"void f() { for (;;) g([&] { return v[0]; }); }");
        let spells = &s.decls[0].spells;
        assert!(!spells.contains(&RANGE_FOR) && !spells.contains(&BINDING));
    }

    #[test]
    fn comparisons_are_told_from_template_brackets() {
        assert!(families("void f() { g<int>(vector<pair<A, B>>{}); }").is_empty());
        assert_eq!(families("bool f() { return a < b; }"), [ORDERING]);
        assert_eq!(families("bool f() { return a.size() > 0; }"), [ORDERING]);
        assert_eq!(families("bool f() { return a == b; }"), [EQUALITY]);
        assert_eq!(families("void f() { for (auto& x : v) g(x); }"), [EQUALITY]);
        assert!(families("void f() { for (int i = 0; i != n; ++i) g(i); }").contains(&EQUALITY));
        assert_eq!(families("auto f() { return a <=> b; }"), [ORDERING]);
    }

    #[test]
    fn operators_wait_for_their_family() {
        let s = Split::new(b"bool operator==(const V& a, const V& b);\nauto operator<=>(const V& a, const V& b);\nbool operator<(const V&, const V&);\n");
        let spelled: Vec<_> = s.decls.iter().map(|d| d.spelled).collect();
        assert_eq!(spelled, [Some(EQUALITY), Some(ORDERING), Some(ORDERING)]);
    }
}
