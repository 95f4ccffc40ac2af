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
use crate::lex::{self, Kind, Tok};
use crate::markers;
use crate::plan::{Edit, Empty, Item, List, Plan};

/// Keywords and builtins: never declared names, never uses.
#[rustfmt::skip]
const KEYWORDS: &[&str] = &[
    "alignas", "alignof", "asm", "auto", "bool", "break", "case", "catch", "char", "char8_t",
    "char16_t", "char32_t", "class", "co_await", "co_return", "co_yield", "concept", "const",
    "consteval", "constexpr", "constinit", "const_cast", "continue", "decltype", "default",
    "delete", "do", "double", "dynamic_cast", "else", "enum", "explicit", "export", "extern",
    "false", "final", "float", "for", "friend", "goto", "if", "inline", "int", "long", "mutable",
    "namespace", "new", "noexcept", "nullptr", "operator", "override", "private", "protected",
    "public", "register", "reinterpret_cast", "requires", "restrict", "return", "short",
    "signed", "sizeof", "static", "static_assert", "static_cast", "struct", "switch", "template",
    "this", "thread_local", "throw", "true", "try", "typedef", "typeid", "typename", "union",
    "unsigned", "using", "virtual", "void", "volatile", "wchar_t", "while", "_Bool", "_Alignas",
    "_Alignof", "_Atomic", "_Noreturn", "_Static_assert", "_Thread_local", "__attribute__",
    "__attribute", "__asm__", "__asm", "__declspec", "__extension__", "__typeof__", "__typeof",
    "typeof", "__restrict", "__restrict__", "__inline", "__inline__", "__volatile__", "__const",
    "__signed__", "_Pragma", "__decltype", "__global__", "__device__", "__host__", "__shared__",
    "__constant__", "__launch_bounds__",
];

/// Names C++ uses without spelling them (range-for, braced lists, structured bindings).
const IMPLICIT: &[&str] = &[
    "begin",
    "end",
    "initializer_list",
    "tuple_size",
    "tuple_element",
    "get",
];

/// The suffixes of the standard library's user-defined literals (`<chrono>`, `<complex>`,
/// `<string>`, `<string_view>`); a program's own start with `_`. Others (`u`, `l`, `f`, `z`)
/// are the language's and call nothing.
const LITERAL_SUFFIXES: &[&str] = &[
    "h", "min", "s", "ms", "us", "ns", "y", "d", "i", "il", "if", "sv",
];

/// The user-defined literal suffix of a number token (`ms` of `100ms`, `_km` of `1.5_km`).
fn literal_suffix(num: &[u8]) -> Option<&[u8]> {
    let radix_prefix = num.len() > 2 && num[0] == b'0' && matches!(num[1] | 0x20, b'x' | b'b');
    let (mut i, hex) = if radix_prefix {
        (2, num[1] | 0x20 == b'x')
    } else {
        (0, false)
    };
    let digit =
        |c: u8| c.is_ascii_digit() || c == b'\'' || c == b'.' || hex && c.is_ascii_hexdigit();
    while i < num.len() && digit(num[i]) {
        i += 1;
    }
    let exp: &[u8] = if hex { b"pP" } else { b"eE" };
    let signed = |k: usize| num.get(k).is_some_and(|c| matches!(c, b'+' | b'-'));
    if i < num.len() && exp.contains(&num[i]) {
        let k = if signed(i + 1) { i + 2 } else { i + 1 };
        if num.get(k).is_some_and(u8::is_ascii_digit) {
            i = k;
            while i < num.len() && num[i].is_ascii_digit() {
                i += 1;
            }
        }
    }
    let suffix = &num[i..];
    let standard = std::str::from_utf8(suffix).is_ok_and(|s| LITERAL_SUFFIXES.contains(&s));
    (suffix.first() == Some(&b'_') || standard).then_some(suffix)
}

fn keyword(w: &[u8]) -> bool {
    w.starts_with(b"__builtin") || std::str::from_utf8(w).map_or(true, |s| KEYWORDS.contains(&s))
}

/// One deletable declaration, or a `namespace`/`extern "C"` block of them.
struct Decl<'t> {
    /// Byte span, trailing whitespace included.
    start: usize,
    end: usize,
    declares: Vec<&'t [u8]>,
    /// Kept as soon as any of these names is kept (the class of an out-of-line member, the
    /// template of a specialisation, the parameter types of a free operator).
    attached: Vec<&'t [u8]>,
    uses: Vec<&'t [u8]>,
    /// A function or a free operator, with one list of names per parameter. It is kept only
    /// when every parameter's class (the first class name in its list, if any) is used: an
    /// overload nobody can call is not needed (else `swap` would keep every class that has a
    /// `swap`). A function also needs its name used; an operator is used implicitly.
    function: bool,
    operator: bool,
    params: Vec<Vec<&'t [u8]>>,
    /// The names in a specialisation's template arguments (`hash<__shared_ptr<T>>`): it is
    /// kept only when its template and every class among these are used (a `hash` for a
    /// class nobody names is not needed).
    spec_args: Vec<&'t [u8]>,
    /// The class, struct, union or enum names among `declares`.
    classes: Vec<&'t [u8]>,
    /// Directives and `using namespace`: always kept.
    always: bool,
    /// Directive lines inside the declaration (line markers in a long template argument
    /// list): kept when the declaration goes, so the lines after it keep their file and line.
    directives: Vec<(usize, usize)>,
    /// For a block: its children's indices; the block goes only when all of them go.
    children: Vec<usize>,
    parent: Option<usize>,
}

struct Split<'t> {
    text: &'t [u8],
    toks: Vec<Tok>,
    mate: Vec<u32>,
    decls: Vec<Decl<'t>>,
}

impl<'t> Split<'t> {
    fn b(&self, i: usize) -> &'t [u8] {
        self.toks[i].bytes(self.text)
    }
    fn p(&self, i: usize, s: &[u8]) -> bool {
        i < self.toks.len() && self.toks[i].is(self.text, s)
    }
    fn w(&self, i: usize, s: &[u8]) -> bool {
        i < self.toks.len() && self.toks[i].kind == Kind::Ident && self.b(i) == s
    }
    fn mate(&self, i: usize) -> Option<usize> {
        (self.mate[i] != u32::MAX).then_some(self.mate[i] as usize)
    }
    fn span_end(&self, last: usize, limit: usize) -> usize {
        self.toks
            .get(last + 1)
            .map_or(self.text.len(), |t| t.start as usize)
            .min(limit)
    }

    /// Splits tokens `lo..hi` (one scope) into declarations, recursing into blocks.
    fn split(&mut self, lo: usize, hi: usize, limit: usize, parent: Option<usize>) -> Vec<usize> {
        let mut out = Vec::new();
        let mut i = lo;
        while i < hi {
            let start = i;
            if self.toks[i].kind == Kind::Directive {
                out.push(self.push(start, i, limit, parent, true));
                i += 1;
                continue;
            }
            // A block scope: `[inline] namespace [a::b] {` or `extern "C" {`.
            let mut k = i;
            if self.w(k, b"inline") {
                k += 1;
            }
            let block_open = if self.w(k, b"namespace") {
                // `namespace a::b __attribute__((…)) [[…]] {`
                let mut j = k + 1;
                while j < hi {
                    if self.toks[j].kind == Kind::Ident || self.p(j, b"::") {
                        j += 1;
                    } else if self.p(j, b"(") || self.p(j, b"[") {
                        match self.mate(j).filter(|&m| m > j && m < hi) {
                            Some(m) => j = m + 1,
                            None => break,
                        }
                    } else {
                        break;
                    }
                }
                self.p(j, b"{").then_some(j)
            } else if self.w(k, b"extern")
                && self.toks.get(k + 1).is_some_and(|t| t.kind == Kind::Str)
                && self.p(k + 2, b"{")
            {
                Some(k + 2)
            } else {
                None
            };
            if let Some(open) = block_open {
                if let Some(close) = self.mate(open).filter(|&c| c < hi) {
                    let me = self.push(start, close, limit, parent, false);
                    // A block's own names are namespace names: nothing is attached to them.
                    let names: Vec<&[u8]> = (start..open)
                        .filter(|&q| self.toks[q].kind == Kind::Ident && !keyword(self.b(q)))
                        .map(|q| self.b(q))
                        .collect();
                    self.decls[me].declares = names;
                    self.decls[me].attached.clear();
                    self.decls[me].uses.clear();
                    let inner_limit = self.toks[close].start as usize;
                    let kids = self.split(open + 1, close, inner_limit, Some(me));
                    self.decls[me].children = kids;
                    out.push(me);
                    i = close + 1;
                    continue;
                }
            }
            // An ordinary declaration: up to `;` outside brackets, or a body's `}` (with a
            // following declarator list when it is a class or an initialiser).
            let mut j = self.skip_template_prefix(i, hi - 1);
            let mut last = hi - 1;
            let mut typed = false;
            while j < hi {
                let t = self.toks[j];
                if t.kind == Kind::Ident
                    && matches!(
                        self.b(j),
                        b"struct" | b"class" | b"union" | b"enum" | b"typedef"
                    )
                {
                    typed = true;
                }
                if self.p(j, b"=") && !(j > 0 && self.w(j - 1, b"operator")) {
                    typed = true;
                }
                if self.p(j, b";") {
                    last = j;
                    break;
                }
                if self.p(j, b"(") || self.p(j, b"[") || self.p(j, b"{") {
                    match self.mate(j).filter(|&m| m > j && m < hi) {
                        Some(m) => {
                            let brace = self.p(j, b"{");
                            let open = j;
                            j = m;
                            // A braced member initialiser (`: _M_y{y}, _M_d{d} { }`) is
                            // followed by `,` or the body: no body ends there.
                            if brace
                                && !self.p(m + 1, b";")
                                && !self.p(m + 1, b",")
                                && !self.p(m + 1, b"{")
                                && !typed
                                && !lex::opens_requires_body(
                                    self.text, &self.toks, &self.mate, open,
                                )
                            {
                                last = m;
                                break;
                            }
                        }
                        None => {
                            last = hi - 1;
                            break;
                        }
                    }
                }
                j += 1;
            }
            let last = last.max(start).min(hi - 1);
            out.push(self.push(start, last, limit, parent, false));
            i = last + 1;
        }
        out
    }

    fn push(
        &mut self,
        first: usize,
        last: usize,
        limit: usize,
        parent: Option<usize>,
        directive: bool,
    ) -> usize {
        let mut d = Decl {
            start: self.toks[first].start as usize,
            end: self.span_end(last, limit),
            declares: Vec::new(),
            attached: Vec::new(),
            uses: Vec::new(),
            function: false,
            operator: false,
            params: Vec::new(),
            spec_args: Vec::new(),
            classes: Vec::new(),
            always: directive,
            directives: Vec::new(),
            children: Vec::new(),
            parent,
        };
        if !directive {
            self.names(first, last, &mut d);
            for k in first + 1..=last {
                if self.toks[k].kind == Kind::Directive {
                    let t = self.toks[k];
                    let end = (t.end as usize + 1).min(self.text.len());
                    d.directives.push((t.start as usize, end));
                }
            }
        }
        self.decls.push(d);
        self.decls.len() - 1
    }

    /// Fills the declared, attached and used names of tokens `first..=last`.
    fn names(&self, first: usize, last: usize, d: &mut Decl<'t>) {
        let mut seen = HashSet::new();
        let mut i = first;
        while i <= last {
            // `friend class X;` in a class body needs no `X` (libstdc++'s `basic_string`
            // befriends `basic_stringbuf`, which would keep all of <sstream>).
            if self.w(i, b"friend")
                && matches!(self.b(i + 1), b"class" | b"struct" | b"union")
                && i + 3 <= last
                && self.toks[i + 2].kind == Kind::Ident
                && self.p(i + 3, b";")
            {
                while i <= last && !self.p(i, b";") {
                    i += 1;
                }
                continue;
            }
            if self.toks[i].kind == Kind::Ident && !keyword(self.b(i)) && seen.insert(self.b(i)) {
                d.uses.push(self.b(i));
            }
            // `100ms` calls `operator""ms`, declared as `ms`.
            if self.toks[i].kind == Kind::Number {
                if let Some(suffix) = literal_suffix(self.b(i)).filter(|s| seen.insert(s)) {
                    d.uses.push(suffix);
                }
            }
            i += 1;
        }
        if self.w(first, b"using") && self.w(first + 1, b"namespace") {
            d.always = true;
            return;
        }
        // An explicit instantiation (`extern template class __cxx11::money_get<char>;`,
        // `template struct S<int>;`) declares nothing: code that names the template never
        // needs it, so no name keeps it.
        let explicit = if self.w(first, b"extern") {
            first + 1
        } else {
            first
        };
        if self.w(explicit, b"template") && !self.p(explicit + 1, b"<") {
            return;
        }
        let i = self.skip_template_prefix(first, last);
        let mut in_init = false;
        let mut after_colon = false;
        let mut fn_name: Option<usize> = None;
        let mut j = i;
        while j <= last {
            let t = self.toks[j];
            let b = self.b(j);
            if t.kind == Kind::Punct {
                match b {
                    b"=" => in_init = true,
                    b"," if !after_colon => in_init = false,
                    // A constructor's initialisers, a base clause, a bit-field width.
                    b":" => {
                        in_init = true;
                        after_colon = true;
                    }
                    b"<" if j > first
                        && self.toks[j - 1].kind == Kind::Ident
                        && !self.w(j - 1, b"operator") =>
                    {
                        // Template arguments are uses, never declared names, also in an
                        // initialiser (`using map = std::map<_Key, _Tp>;`: the commas in the
                        // list start no new declarator).
                        let mut depth = 0i32;
                        let mut k = j;
                        while k <= last {
                            match self.b(k) {
                                b"<" => depth += 1,
                                b">" => depth -= 1,
                                b">>" => depth -= 2,
                                // Not a template argument list (`a < b;`): the `;` or the
                                // body is looked at as usual.
                                b";" | b"{" => {
                                    k -= 1;
                                    break;
                                }
                                b"(" | b"[" => k = self.mate(k).filter(|&m| m <= last).unwrap_or(k),
                                _ => {}
                            }
                            if depth <= 0 {
                                break;
                            }
                            k += 1;
                        }
                        j = k.min(last);
                    }
                    b"{" if self.w(first, b"enum") || self.decl_has(first, j, b"enum") => {
                        // Enumerators.
                        let end = self.mate(j).unwrap_or(last).min(last);
                        for k in j + 1..end {
                            if self.toks[k].kind == Kind::Ident
                                && (self.p(k + 1, b",") || self.p(k + 1, b"=") || k + 1 == end)
                            {
                                d.declares.push(self.b(k));
                            }
                        }
                        j = end;
                    }
                    b"[" if !in_init && self.structured_binding(first, j) => {
                        // `auto [first, last] = …;` declares `first` and `last`.
                        let m = self.mate(j).unwrap_or(last).min(last);
                        for k in j + 1..m {
                            if self.toks[k].kind == Kind::Ident {
                                d.declares.push(self.b(k));
                            }
                        }
                        j = m;
                    }
                    b"(" | b"[" | b"{" => {
                        let m = self.mate(j).unwrap_or(last).min(last);
                        let qualified_op = j > 1
                            && (self.w(j - 1, b"operator") && self.p(j - 2, b"::")
                                || j > 2 && self.w(j - 2, b"operator") && self.p(j - 3, b"::"));
                        let op = !qualified_op
                            && (j > 0 && self.w(j - 1, b"operator")
                                || (j > 1 && self.w(j - 2, b"operator")));
                        let func = b == b"(" && j > 0 && fn_name == Some(j - 1) && !d.function;
                        if (op || func) && !d.operator {
                            // One list of names per parameter (split at top-level commas).
                            let (open, close) = if op && self.p(m + 1, b"(") {
                                (m + 1, self.mate(m + 1).unwrap_or(m + 1).min(last))
                            } else {
                                (j, m)
                            };
                            d.operator = op;
                            d.function = true;
                            d.params.clear();
                            let mut cur: Vec<&[u8]> = Vec::new();
                            let mut angles = 0i32;
                            for k in open + 1..close {
                                match self.b(k) {
                                    b"<" => angles += 1,
                                    b">" => angles -= 1,
                                    b">>" => angles -= 2,
                                    b"," if angles <= 0 => {
                                        d.params.push(std::mem::take(&mut cur));
                                    }
                                    w if self.toks[k].kind == Kind::Ident && !keyword(w) => {
                                        cur.push(w)
                                    }
                                    _ => {}
                                }
                            }
                            d.params.push(cur);
                        }
                        j = m;
                    }
                    _ => {}
                }
            } else if t.kind == Kind::Ident && !keyword(b) && !in_init {
                let after_key = j > first
                    && matches!(
                        self.b(j - 1),
                        b"struct" | b"class" | b"union" | b"enum" | b"concept"
                    );
                let next = self
                    .toks
                    .get(j + 1)
                    .map_or(&b";"[..], |n| n.bytes(self.text));
                let declarator =
                    matches!(next, b"(" | b";" | b"=" | b"," | b"[" | b"{" | b":") || j == last;
                let member = j > 0 && (self.p(j - 1, b".") || self.p(j - 1, b"->"));
                if after_key || (declarator && !member) {
                    // `A::B<int>::f`: an out-of-line member is found through its class only
                    // (but `using A::f;` declares `f`).
                    let qualified = j > first && self.p(j - 1, b"::") && !self.w(first, b"using");
                    if qualified {
                        let mut q = j.saturating_sub(2);
                        if self.p(q, b">") || self.p(q, b">>") {
                            while q > first && !self.p(q, b"<") {
                                q -= 1;
                            }
                            q = q.saturating_sub(1);
                        }
                        if self.toks[q].kind == Kind::Ident {
                            d.attached.push(self.b(q));
                        }
                    } else {
                        d.declares.push(b);
                        if after_key {
                            d.classes.push(b);
                        } else if next == b"(" && fn_name.is_none() {
                            fn_name = Some(j);
                        }
                    }
                    if after_key && next == b"<" {
                        d.attached.push(b); // a specialisation goes with its template
                        self.spec_args(j + 1, last, d);
                    }
                } else if next == b"<" && !member && self.w(first, b"template") {
                    // `template<> constexpr unsigned id<T> = 2;`, `template<> void f<int>(int)`:
                    // a variable or function template's specialisation goes with it too.
                    let declares_after = self.angle_close(j + 1, last).is_some_and(|c| {
                        matches!(
                            self.toks.get(c + 1).map(|t| t.bytes(self.text)),
                            Some(b"=" | b";" | b"(" | b"{")
                        )
                    });
                    if declares_after {
                        d.attached.push(b);
                        self.spec_args(j + 1, last, d);
                    }
                }
            }
            j += 1;
        }
    }

    /// Records the identifiers of the template argument list opened at token `open`.
    fn spec_args(&self, open: usize, last: usize, d: &mut Decl<'t>) {
        let close = self.angle_close(open, last).unwrap_or(open);
        for k in open + 1..close {
            if self.toks[k].kind == Kind::Ident && !keyword(self.b(k)) {
                d.spec_args.push(self.b(k));
            }
        }
    }

    /// The `>` (or `>>`) closing the `<` at token `open`, within `last`.
    fn angle_close(&self, open: usize, last: usize) -> Option<usize> {
        let mut depth = 0i32;
        for k in open..=last {
            match self.b(k) {
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

    /// The first token after any `template <…>` prefixes starting at `i` (bounded by `last`).
    fn skip_template_prefix(&self, mut i: usize, last: usize) -> usize {
        while self.w(i, b"template") && self.p(i + 1, b"<") {
            let mut depth = 0i32;
            let mut j = i + 1;
            // The list's non-type parameters (`size_t __w`): a `<` after one of them (as
            // after a number or a `)`) compares, in a default argument such as libstdc++'s
            // `bool = __w < static_cast<size_t>(…)`.
            let mut values: Vec<&[u8]> = Vec::new();
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
                        values.push(self.b(j));
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

    /// True when the `[` at `open` starts a structured binding: `auto`, then only
    /// qualifiers and `&`/`&&` before it.
    fn structured_binding(&self, first: usize, open: usize) -> bool {
        let mut k = open;
        while k > first
            && (self.p(k - 1, b"&")
                || self.p(k - 1, b"&&")
                || matches!(self.b(k - 1), b"const" | b"volatile"))
        {
            k -= 1;
        }
        k > first && self.w(k - 1, b"auto")
    }

    fn decl_has(&self, first: usize, before: usize, w: &[u8]) -> bool {
        (first..before).any(|k| self.w(k, w))
    }
}

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
mod tests {
    use super::*;
    use crate::plan::apply;

    /// Hints naming line 1 of the tests' main file `m.cpp` as the crash site.
    fn at_main() -> Hints {
        Hints {
            location: Some(("m.cpp".into(), 1)),
            ..Hints::default()
        }
    }

    fn first(text: &str, hints: &Hints) -> String {
        let plan = closure(text.as_bytes(), hints);
        let step = plan
            .step(text.as_bytes(), crate::plan::START)
            .expect("a cut");
        String::from_utf8(apply(text.as_bytes(), &step.edits)).unwrap()
    }

    #[test]
    fn keeps_the_closure_of_the_crash_site() {
        let text = "# 1 \"m.cpp\"\n# 1 \"h.h\" 1 3\nnamespace std { typedef unsigned long size_t; struct unused { int u; }; template <class T> struct vec { size_t n; }; template <class T> bool operator==(vec<T>, vec<T>); bool operator<(unused, unused); }\nusing namespace std;\nstruct Other { };\nint helper(int);\nint helper(int x) { return x; }\n# 2 \"m.cpp\" 2\nstruct A;\nstruct A { vec<int> v; void m(); };\nvoid A::m() {}\nenum E { e1, e2 };\nint f(A *a) {\n  return a->v == a->v ? e2 : helper(1);\n}\nint g() { return 0; }\n";
        let hints = Hints {
            location: Some(("m.cpp".into(), 6)),
            function: None,
            column: None,
        };
        let out = first(text, &hints);
        for keep in [
            "typedef unsigned long size_t;",
            "template <class T> struct vec",
            "bool operator==(vec<T>, vec<T>);",
            "using namespace std;",
            "int helper(int);",
            "int helper(int x) { return x; }",
            "struct A;",
            "struct A { vec<int> v; void m(); };",
            "void A::m() {}",
            "enum E { e1, e2 };",
            "return a->v == a->v",
        ] {
            assert!(out.contains(keep), "{keep} missing from\n{out}");
        }
        for gone in ["struct unused", "operator<", "struct Other", "int g()"] {
            assert!(!out.contains(gone), "{gone} kept in\n{out}");
        }
        assert!(out.contains("namespace std {"), "{out}");
    }

    #[test]
    fn a_constrained_specialisation_stays_with_its_template_head() {
        // libstdc++'s <compare>: the head's requires-expression body must not end the
        // declaration, or the cut keeps `struct R<T, U>` without `template <…>`.
        let text = "# 1 \"m.cpp\"\n# 1 \"h.h\" 1 3\ntemplate <class T, class U> struct R { };\ntemplate <class T, class U>\n  requires requires { typename T::t; }\n  struct R<T, U> { using type = T; };\nstruct Unused { };\n# 2 \"m.cpp\" 2\nR<int, int> r;\n";
        let out = first(text, &at_main());
        assert!(
            out.contains("template <class T, class U>\n  requires requires { typename T::t; }\n  struct R<T, U>"),
            "{out}"
        );
        assert!(!out.contains("Unused"), "{out}");
    }

    #[test]
    fn a_variable_templates_specialisations_go_with_it() {
        // libstdc++'s <compare>: `__cmp_cat_id<partial_ordering>` decides
        // `common_comparison_category`; without the specialisations it is `void`.
        let text = "# 1 \"m.cpp\"\n# 1 \"h.h\" 1 3\nstruct P { };\ntemplate <class T> constexpr unsigned id = 1;\ntemplate <> constexpr unsigned id<P> = 2;\ntemplate <class T> T make();\ntemplate <> P make<P>();\ntemplate <class T> P unrelated();\n# 2 \"m.cpp\" 2\nunsigned u = id<P> + sizeof(make<int>());\n";
        let out = first(text, &at_main());
        assert!(
            out.contains("template <> constexpr unsigned id<P> = 2;"),
            "{out}"
        );
        assert!(out.contains("template <> P make<P>();"), "{out}");
        assert!(!out.contains("unrelated"), "{out}");
    }

    #[test]
    fn says_why_a_declaration_is_kept() {
        let text = b"struct U {};\nstruct T { U u; };\nstruct V {};\nint f(T *t);\n";
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
        let (kept, why) = keep(&s, &[3]);
        assert_eq!(kept, [true, true, false, true]);
        assert_eq!(why[1], Some((3, &b"T"[..])));
        assert_eq!(why[0], Some((1, &b"U"[..])));
        assert_eq!(why[3], None);
    }

    #[test]
    fn no_roots_no_cut() {
        let plan = closure(b"int a; int b;", &Hints::default());
        assert!(plan.step(b"int a; int b;", crate::plan::START).is_none());
    }

    #[test]
    fn an_alias_templates_arguments_declare_nothing() {
        // `using map = std::map<_Key, _Tp>`: the commas in the argument list start no new
        // declarator, so `_Tp` (every template's parameter) is no name of the alias.
        let text = "# 1 \"m.cpp\"\n# 1 \"h.h\" 1 3\ntemplate <class K, class T> struct map { };\ntemplate <class K, class T> using alias = map<K, T>;\ntemplate <class T> struct vec { T t; };\n# 2 \"m.cpp\" 2\nvec<int> v;\n";
        let out = first(text, &at_main());
        assert!(out.contains("struct vec"), "{out}");
        assert!(!out.contains("alias"), "{out}");
        assert!(!out.contains("struct map"), "{out}");
    }

    #[test]
    fn a_specialisation_waits_for_the_classes_it_is_for() {
        // `hash<shared>` is needed only when `shared` is used too; an explicit instantiation
        // is never needed; `ranges::end` (an object) is not what a range-for calls; the
        // template argument list of `operator<` is no list.
        let text = "# 1 \"m.cpp\"\n# 1 \"h.h\" 1 3\ntemplate <class T> struct hash { };\nstruct shared { int s; };\ntemplate <> struct hash<shared> { shared s; };\nstruct used { };\ntemplate <> struct hash<used> { };\nstruct big { int b; };\nextern template struct hash<big>;\nstruct End { };\ninline constexpr End end{};\ntemplate <class T> struct box { };\ntemplate <class T> bool operator<(const box<T>&, const box<T>&) { struct Inner { } i; return true; }\n# 2 \"m.cpp\" 2\nhash<used> h;\n";
        let out = first(text, &at_main());
        assert!(out.contains("template <> struct hash<used> { };"), "{out}");
        assert!(!out.contains("hash<shared>"), "{out}");
        assert!(!out.contains("struct shared"), "{out}");
        assert!(!out.contains("extern template"), "{out}");
        assert!(!out.contains("End"), "{out}");
        assert!(!out.contains("operator<"), "{out}");
    }

    #[test]
    fn user_defined_literal_suffixes() {
        assert_eq!(literal_suffix(b"100ms"), Some(&b"ms"[..]));
        assert_eq!(literal_suffix(b"1.5_km"), Some(&b"_km"[..]));
        assert_eq!(literal_suffix(b"1e10s"), Some(&b"s"[..]));
        assert_eq!(literal_suffix(b"2h"), Some(&b"h"[..]));
        assert_eq!(literal_suffix(b"0x1fu"), None);
        assert_eq!(literal_suffix(b"0xd"), None);
        assert_eq!(literal_suffix(b"1.0f"), None);
        assert_eq!(literal_suffix(b"10'000ull"), None);
        assert_eq!(literal_suffix(b"1e-3"), None);
        let text = "# 1 \"m.cpp\"\n# 1 \"h.h\" 1 3\nstruct ms_t { };\nconstexpr ms_t operator\"\"ms(unsigned long long) { return {}; }\nconstexpr int operator\"\"_km(long double) { return 1; }\n# 2 \"m.cpp\" 2\nauto t = 100ms;\n";
        let out = first(text, &at_main());
        assert!(out.contains("operator\"\"ms"), "{out}");
        assert!(!out.contains("_km"), "{out}");
    }

    #[test]
    fn a_structured_binding_declares_its_names() {
        let text = "# 1 \"m.cpp\"\n# 1 \"h.h\" 1 3\nstruct P { int a, b; };\nextern P p;\nauto [x, y] = p;\nconst auto& [z, w] = p;\nint unused_one;\n# 2 \"m.cpp\" 2\nint f() { return y + z; }\n";
        let out = first(text, &at_main());
        assert!(out.contains("auto [x, y] = p;"), "{out}");
        assert!(out.contains("const auto& [z, w] = p;"), "{out}");
        assert!(out.contains("extern P p;"), "{out}");
        assert!(!out.contains("unused_one"), "{out}");
    }

    #[test]
    fn a_constructor_with_braced_initialisers_is_one_declaration() {
        let text = "# 1 \"m.cpp\"\n# 1 \"h.h\" 1 3\nstruct Y { Y(int); int a, b; };\nY::Y(int v)\n: a{v}, b{v}\n{ }\nint unused_one;\n# 2 \"m.cpp\" 2\nY y(1);\n";
        let out = first(text, &at_main());
        assert!(out.contains(": a{v}, b{v}\n{ }"), "{out}");
        assert!(!out.contains("unused_one"), "{out}");
    }
}
