//! How many arguments a call passes and a function takes: overloads told apart by count.
//!
//! The closure matches functions by name, so `std::move(x)` would keep the three-argument
//! `std::move(first, last, out)` algorithm and, through it, the iterator machinery of
//! `<bits/stl_algobase.h>`; `get(t)` every `get` of every header. A use records the argument
//! counts of its calls as a bit mask ([`ANY`] when the name is also used other than by a
//! direct call: taken by address, passed on, named in a `using`); a function declares the
//! counts it accepts. A function is kept only for a use whose counts it accepts. When a count
//! cannot be told (a pack expansion among the arguments) the use counts as [`ANY`].

use super::split::Split;
use crate::lex::Kind;

/// The mask of a use that may call any overload.
pub(super) const ANY: u32 = u32::MAX;

/// The bit for a call with `n` arguments (the last bit stands for 31 and more).
pub(super) fn bit(n: usize) -> u32 {
    1 << n.min(31)
}

/// The argument counts a function accepts, `min..=max` (`max` is `u8::MAX` for a variadic
/// one: a parameter pack or C's `...`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Accepts {
    pub(super) min: u8,
    pub(super) max: u8,
}

impl Accepts {
    /// Any count: what a declaration that is not a function, or whose list was not read, takes.
    pub(super) const ALL: Accepts = Accepts {
        min: 0,
        max: u8::MAX,
    };

    /// True if a use with call counts `mask` may call this function.
    pub(super) fn admits(self, mask: u32) -> bool {
        if mask == ANY || self == Accepts::ALL {
            return true;
        }
        let hi = if self.max == u8::MAX {
            31
        } else {
            u32::from(self.max.min(31))
        };
        let lo = u32::from(self.min.min(31));
        // The bits lo..=hi.
        let range = (u32::MAX >> (31 - (hi - lo))) << lo;
        mask & range != 0
    }
}

impl<'t> Split<'t> {
    /// The argument count of the use of the name at token `i` (`f(a, b)`, `f<T>(a)`,
    /// `N::f(a)`), as a mask: [`ANY`] unless a call follows.
    pub(super) fn call_mask(&self, i: usize, last: usize) -> u32 {
        let mut open = i + 1;
        if self.p(open, b"<") {
            match self.angle_close(open, last) {
                Some(c) => open = c + 1,
                None => return ANY,
            }
        }
        if open > last || !self.p(open, b"(") {
            return ANY;
        }
        match self.mate(open) {
            Some(close) if close <= last => self.count_args(open, close).map_or(ANY, bit),
            _ => ANY,
        }
    }

    /// The number of arguments between the parentheses at `open` and `close`, `None` when a
    /// pack expansion makes it unknown.
    fn count_args(&self, open: usize, close: usize) -> Option<usize> {
        if close == open + 1 {
            return Some(0);
        }
        let mut commas = 0;
        for k in self.top_level(open, close) {
            match self.b(k) {
                b"..." => return None,
                b"," => commas += 1,
                _ => {}
            }
        }
        Some(commas + 1)
    }

    /// The counts accepted by a function whose parameter list is the parentheses at `open`
    /// and `close`: parameters without a default are required; a pack or `...` takes any
    /// number more.
    pub(super) fn accepts(&self, open: usize, close: usize) -> Accepts {
        if close == open + 1 || (close == open + 2 && self.w(open + 1, b"void")) {
            return Accepts { min: 0, max: 0 };
        }
        let (mut params, mut required) = (0usize, 0usize);
        let (mut defaulted, mut pack, mut variadic) = (false, false, false);
        // One parameter per top-level comma, and the last: `...` makes it a pack, `=` gives
        // it a default.
        let tokens = self.top_level(open, close).map(|k| self.b(k));
        for t in tokens.chain(std::iter::once(&b","[..])) {
            match t {
                b"..." => pack = true,
                b"=" => defaulted = true,
                b"," => {
                    params += 1;
                    variadic |= pack;
                    required += usize::from(!defaulted && !pack);
                    (defaulted, pack) = (false, false);
                }
                _ => {}
            }
        }
        let clamp = |n: usize| u8::try_from(n.min(254)).unwrap_or(254);
        Accepts {
            min: clamp(required),
            max: if variadic { u8::MAX } else { clamp(params) },
        }
    }

    /// The tokens strictly between the parentheses at `open` and `close` that are not inside a
    /// nested bracket or a template argument list (`f(pair<A, B>(a, b), c)` has one comma).
    fn top_level(&self, open: usize, close: usize) -> impl Iterator<Item = usize> + '_ {
        let mut k = open + 1;
        std::iter::from_fn(move || {
            if k >= close {
                return None;
            }
            let at = k;
            k = match self.b(at) {
                b"<" if self.toks[at - 1].kind == Kind::Ident => {
                    self.angle_close(at, close - 1).unwrap_or(at)
                }
                b"(" | b"[" | b"{" => self.mate(at).filter(|&m| m < close).unwrap_or(at),
                _ => at,
            } + 1;
            Some(at)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn use_mask(src: &str, name: &str) -> u32 {
        let s = Split::new(src.as_bytes());
        let i = (0..s.toks.len())
            .find(|&i| s.b(i) == name.as_bytes())
            .unwrap();
        s.call_mask(i, s.toks.len() - 1)
    }

    fn accepts(src: &str) -> Accepts {
        let s = Split::new(src.as_bytes());
        let open = (0..s.toks.len()).find(|&i| s.p(i, b"(")).unwrap();
        s.accepts(open, s.mate(open).unwrap())
    }

    #[test]
    fn calls_count_their_arguments() {
        assert_eq!(use_mask("int x = f();", "f"), bit(0));
        assert_eq!(use_mask("int x = std::move(a);", "move"), bit(1));
        assert_eq!(use_mask("int x = get<0, 1>(t, u);", "get"), bit(2));
        assert_eq!(
            use_mask("int x = f(g(a, b), c[1, 2], pair<A, B>(a, b));", "f"),
            bit(3)
        );
        assert_eq!(use_mask("int x = f(args...);", "f"), ANY);
        assert_eq!(use_mask("auto p = &f;", "f"), ANY);
        assert_eq!(use_mask("using std::f;", "f"), ANY);
    }

    #[test]
    fn functions_accept_their_parameter_counts() {
        assert_eq!(accepts("void f();"), Accepts { min: 0, max: 0 });
        assert_eq!(accepts("void f(void);"), Accepts { min: 0, max: 0 });
        assert_eq!(accepts("T f(T&& t);"), Accepts { min: 1, max: 1 });
        assert_eq!(
            accepts("O move(I a, I b, O c);"),
            Accepts { min: 3, max: 3 }
        );
        assert_eq!(
            accepts("void f(map<K, V> m, int n = g(1, 2), C c = {});"),
            Accepts { min: 1, max: 3 }
        );
        assert_eq!(accepts("void f(A a, Args&&... args);").min, 1);
        assert_eq!(accepts("void f(A a, Args&&... args);").max, u8::MAX);
        assert_eq!(accepts("int printf(const char* f, ...);").min, 1);
    }

    #[test]
    fn admits_by_count() {
        let two = Accepts { min: 2, max: 3 };
        assert!(two.admits(bit(2)) && two.admits(bit(3)) && two.admits(bit(1) | bit(3)));
        assert!(!two.admits(bit(1)) && !two.admits(bit(4)) && !two.admits(bit(0)));
        assert!(two.admits(ANY));
        let pack = Accepts {
            min: 1,
            max: u8::MAX,
        };
        assert!(pack.admits(bit(1)) && pack.admits(bit(40)) && !pack.admits(bit(0)));
    }
}
