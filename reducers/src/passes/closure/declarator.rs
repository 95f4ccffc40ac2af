//! Telling a declared name from a used one: `size` in `constexpr size_t size()` declares a
//! member, `size` in `return size();` uses one.
//!
//! The closure keeps what the kept code uses by name, so a member declaration mistaken for a
//! use keeps every namespace-scope function of that name: `static char_type* move(char_type*,
//! const char_type*, size_t)` in `char_traits` would keep the `std::move` algorithm and the
//! iterator machinery behind it.

use std::collections::HashSet;

use super::split::{keyword, Split};
use crate::lex::{self, Kind};

const OPERATOR_WORDS: &[&[u8]] = &[
    b"and", b"or", b"not", b"xor", b"bitand", b"bitor", b"compl", b"and_eq", b"or_eq", b"xor_eq",
    b"not_eq",
];

/// What may follow a declared name.
const DECLARATOR_END: &[&[u8]] = &[b"(", b")", b";", b"=", b"{", b"[", b",", b":"];

/// Keywords that may come before a declaration's type.
const SPECIFIERS: &[&[u8]] = &[
    b"static",
    b"inline",
    b"constexpr",
    b"consteval",
    b"constinit",
    b"const",
    b"volatile",
    b"virtual",
    b"friend",
    b"explicit",
    b"extern",
    b"typename",
    b"mutable",
    b"thread_local",
    b"__inline",
    b"__inline__",
    b"__extension__",
];

impl<'t> Split<'t> {
    /// True if identifier `i` is declared, not used: a type (an identifier or a type keyword)
    /// before it and a declarator's end after it, as in a member (`constexpr size_t size()`
    /// in `integer_sequence` names no `ranges::size`, `static const strong_ordering equal;`
    /// no `std::equal`), a parameter or a local. An expression never puts a name right after
    /// a type: `return f(…)`, `x.f(…)`, `N::f(…)`, `= f(…)`. With a pointer or reference
    /// between them (`const _Tp& get() const`, `static char_type* move(…)`) only a
    /// declaration's start may come before the type: an expression would multiply or `&`.
    pub(super) fn declared_here(&self, first: usize, i: usize) -> bool {
        if i <= first || !DECLARATOR_END.iter().any(|e| self.p(i + 1, e)) {
            return false;
        }
        if self.toks[i - 1].kind == Kind::Ident {
            return self.type_word(i - 1);
        }
        let mut k = i - 1;
        let mut pointer = false;
        while k > first {
            let sigil = self.p(k, b"*") || self.p(k, b"&") || self.p(k, b"&&");
            if !sigil && !self.w(k, b"const") {
                break;
            }
            pointer |= sigil;
            k -= 1;
        }
        pointer && self.type_from_start(first, k)
    }

    /// True if identifier `i` names a member through an object (`x.begin()`, `p->get()`,
    /// `x.template get<0>()`): never a namespace-scope declaration. After `->` only when an
    /// object's name or an element comes before it: `) -> T` may be a trailing return type
    /// and `} -> C` is a compound requirement's concept.
    pub(super) fn through_object(&self, i: usize) -> bool {
        let k = if i > 1 && self.w(i - 1, b"template") {
            i - 1
        } else {
            i
        };
        if k == 0 {
            return false;
        }
        if self.p(k - 1, b".") {
            return true;
        }
        let object = k > 1
            && (self.p(k - 2, b"]")
                || self.toks[k - 2].kind == Kind::Ident && !keyword(self.b(k - 2)));
        self.p(k - 1, b"->") && object
    }

    /// The names declared locally in tokens `first..=last`: type and template parameters
    /// (`typename _Tp`, `class... _Args`, `template <class> class _Tt`), member classes and
    /// aliases. Inside the declaration they name the local, never a declaration of the same
    /// name elsewhere (`_Size`, `_Tp`).
    pub(super) fn template_parameters(&self, first: usize, last: usize) -> HashSet<&'t [u8]> {
        let mut out = HashSet::new();
        for i in first + 1..=last {
            if self.toks[i].kind != Kind::Ident || keyword(self.b(i)) {
                continue;
            }
            let mut k = i - 1;
            if self.p(k, b"...") && k > first {
                k -= 1;
            }
            let introduced = self.w(k, b"typename") || self.w(k, b"class");
            let ends = [&b","[..], b">", b">>", b"=", b"..."];
            if introduced && ends.iter().any(|e| self.p(i + 1, e)) {
                out.insert(self.b(i));
            }
            // A member class or alias (`struct _Size : …`, `using size_type = …`) shadows
            // any other of its name inside the declaration.
            let class_key = matches!(self.b(i - 1), b"struct" | b"class" | b"union" | b"enum");
            let befriended = i >= 2 && self.w(i - 2, b"friend");
            let defines = [&b"{"[..], b":", b"<", b";", b"final"];
            let member_class = class_key && !befriended && defines.iter().any(|e| self.p(i + 1, e));
            let member_alias = self.w(i - 1, b"using") && self.p(i + 1, b"=");
            if i > first + 1 && (member_class || member_alias) {
                out.insert(self.b(i));
            }
        }
        out
    }

    /// The namespace qualifying identifier `i` (`ranges` of `ranges::min`), if any.
    pub(super) fn namespace_qualifier(&self, i: usize) -> Option<&'t [u8]> {
        (i >= 2 && self.p(i - 1, b"::"))
            .then(|| self.b(i - 2))
            .filter(|q| self.namespaces.contains(q))
    }

    /// True if identifier `i` is qualified by a class (`strong_ordering::equal`,
    /// `vector<T>::iterator`, `_Tp::type`): it names a member, never a declaration at
    /// namespace scope, and the class itself is a use of its own.
    pub(super) fn member_of_class(&self, i: usize) -> bool {
        if i < 2 || !self.p(i - 1, b"::") {
            return false;
        }
        let q = i - 2;
        let by_class_name = self.toks[q].kind == Kind::Ident
            && !keyword(self.b(q))
            && !self.namespaces.contains(self.b(q));
        by_class_name || self.p(q, b">") || self.p(q, b">>")
    }

    /// True if the word at `k` can end a type.
    fn type_word(&self, k: usize) -> bool {
        let before = self.b(k);
        if keyword(before) {
            lex::TYPE_WORDS.contains(&before)
        } else {
            !OPERATOR_WORDS.contains(&before)
        }
    }

    /// True if tokens up to `k` end with a type that starts a declaration: a (qualified,
    /// templated) name or type keywords, after only specifiers, a template head, an access
    /// label or the start of a statement.
    fn type_from_start(&self, first: usize, mut k: usize) -> bool {
        // The type itself: `basic_string<_CharT>`, `std::size_t`, `unsigned long`.
        loop {
            if self.p(k, b">") || self.p(k, b">>") {
                match self.angle_open(first, k) {
                    Some(o) if o > first => k = o - 1,
                    _ => return false,
                }
            }
            if self.toks[k].kind != Kind::Ident || !self.type_word(k) {
                return false;
            }
            if k > first + 1 && self.p(k - 1, b"::") {
                k -= 2;
                continue;
            }
            break;
        }
        // What comes before it.
        while k > first {
            k -= 1;
            let b = self.b(k);
            if self.toks[k].kind == Kind::Ident {
                if SPECIFIERS.contains(&b) || lex::TYPE_WORDS.contains(&b) {
                    continue;
                }
                return false;
            }
            return match b {
                b";" | b"{" | b"}" => true,
                b":" => k > first && matches!(self.b(k - 1), b"public" | b"private" | b"protected"),
                b">" | b">>" => self
                    .angle_open(first, k)
                    .is_some_and(|o| o > first && self.w(o - 1, b"template")),
                b"]" => self.p(k.saturating_sub(1), b"]"),
                _ => false,
            };
        }
        true
    }

    /// The `<` that the `>` at `close` closes, searching back to `first`.
    fn angle_open(&self, first: usize, close: usize) -> Option<usize> {
        let mut depth = 0i32;
        let mut k = close;
        loop {
            match self.b(k) {
                b">" => depth += 1,
                b">>" => depth += 2,
                b"<" => depth -= 1,
                b";" | b"{" | b"}" => return None,
                b")" | b"]" => k = self.mate(k).filter(|&m| m >= first).unwrap_or(k),
                _ => {}
            }
            if depth <= 0 {
                return Some(k);
            }
            if k == first {
                return None;
            }
            k -= 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn declared(src: &str, name: &str) -> bool {
        let s = Split::new(src.as_bytes());
        let i = (0..s.toks.len())
            .rev()
            .find(|&i| s.b(i) == name.as_bytes())
            .unwrap();
        s.declared_here(0, i)
    }

    #[test]
    fn members_returning_pointers_and_references_are_declared() {
        assert!(declared(
            "struct T { static char_type* move(char_type* a, size_t n); };",
            "move"
        ));
        assert!(declared("struct T { const _Tp& get() const; };", "get"));
        assert!(declared(
            "struct T { public: std::basic_string<C, T>& append(int); };",
            "append"
        ));
        assert!(declared("template <class T> T&& forward(T& t);", "forward"));
        assert!(declared(
            "template<size_t N, class... T> constexpr alt_t<N, variant<T...>> const&\n\
             get(const variant<T...>&);",
            "get"
        ));
        assert!(declared(
            "struct T { constexpr size_t size() const; };",
            "size"
        ));
    }

    #[test]
    fn expressions_use() {
        assert!(!declared("int f() { return a * get(b); }", "get"));
        assert!(!declared("int f() { x = a & get(b); }", "get"));
        assert!(!declared("int f() { g(a * get(b)); }", "get"));
        assert!(!declared("int f() { return size(); }", "size"));
        assert!(!declared("int f() { return x.size(); }", "size"));
    }

    #[test]
    fn members_through_objects_are_no_uses() {
        let src = "template<class T> constexpr const T* begin(initializer_list<T> l) noexcept\n\
                   { return l.begin() + p->end() + l.template get<0>() + size(l); }\n\
                   template<class T> concept C = requires(T t) { { t.x } -> same_as<int>; };\n\
                   auto f() -> tuple<int>;";
        let s = Split::new(src.as_bytes());
        let uses: Vec<&[u8]> = s.decls[0].uses.clone();
        assert!(uses.contains(&&b"size"[..]) && uses.contains(&&b"initializer_list"[..]));
        assert!(s.decls[1].uses.contains(&&b"same_as"[..]));
        assert!(s.decls[2].uses.contains(&&b"tuple"[..]));
        for name in [&b"begin"[..], b"end", b"get"] {
            assert!(!uses.contains(&name), "{}", String::from_utf8_lossy(name));
        }
    }
}
