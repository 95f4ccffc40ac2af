//! The closure's parser: a text split into declarations at namespace scope, each with the
//! names it declares and uses and what C++ attaches to it implicitly (see the parent module).

use std::collections::{HashMap, HashSet};

use super::angles;
use super::arity::{Accepts, ANY};
use super::implicit;
use crate::lex::{self, Kind, Tok};

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

/// Operators that code calls only by spelling them: a free overload of one is needed only once
/// kept code spells its token (outside an `operator` name). The others are also called
/// implicitly (`!=`, `++` and `*` by a range-for, `<`, `==` through `<=>` rewrites) or cannot be
/// told from a template bracket, a declarator or a call.
pub(super) const SPELLED_OPERATORS: &[&[u8]] = &[
    b"<<", b"+", b"-", b"/", b"%", b"^", b"|", b"~", b"!", b"&&", b"||", b"+=", b"-=", b"*=",
    b"/=", b"%=", b"^=", b"|=", b"&=", b"<<=", b">>=", b">>",
];

/// The suffixes of the standard library's user-defined literals (`<chrono>`, `<complex>`,
/// `<string>`, `<string_view>`); a program's own start with `_`. Others (`u`, `l`, `f`, `z`)
/// are the language's and call nothing.
const LITERAL_SUFFIXES: &[&str] = &[
    "h", "min", "s", "ms", "us", "ns", "y", "d", "i", "il", "if", "sv",
];

/// The user-defined literal suffix of a number token (`ms` of `100ms`, `_km` of `1.5_km`).
pub(super) fn literal_suffix(num: &[u8]) -> Option<&[u8]> {
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

pub(super) fn keyword(w: &[u8]) -> bool {
    w.starts_with(b"__builtin") || std::str::from_utf8(w).map_or(true, |s| KEYWORDS.contains(&s))
}

/// One deletable declaration, or a `namespace`/`extern "C"` block of them.
pub(super) struct Decl<'t> {
    /// Token span: the first and the last token.
    pub(super) first: usize,
    pub(super) last: usize,
    /// Byte span, trailing whitespace included.
    pub(super) start: usize,
    pub(super) end: usize,
    pub(super) declares: Vec<&'t [u8]>,
    /// Kept as soon as any of these names is kept (the class of an out-of-line member, the
    /// template of a specialisation, the parameter types of a free operator).
    pub(super) attached: Vec<&'t [u8]>,
    pub(super) uses: Vec<&'t [u8]>,
    /// A function or a free operator, with one list of names per parameter. It is kept only
    /// when every parameter's class (the first class name in its list, if any) is used: an
    /// overload nobody can call is not needed (else `swap` would keep every class that has a
    /// `swap`). A function also needs its name used; an operator is used implicitly.
    pub(super) function: bool,
    pub(super) operator: bool,
    /// An operator's token when it is one of [`SPELLED_OPERATORS`]: the operator waits for it.
    pub(super) spelled: Option<&'t [u8]>,
    /// The [`SPELLED_OPERATORS`] this declaration spells (outside `operator` names).
    pub(super) spells: Vec<&'t [u8]>,
    pub(super) params: Vec<Vec<&'t [u8]>>,
    /// A function's argument counts (see `arity.rs`).
    pub(super) accepts: Accepts,
    /// A function's token closing its parameter list (0 for other declarations).
    pub(super) params_close: usize,
    /// The argument counts each used name is called with, where not [`ANY`] (see `arity.rs`).
    pub(super) calls: Vec<(&'t [u8], u32)>,
    /// The names in a specialisation's template arguments (`hash<__shared_ptr<T>>`): it is
    /// kept only when its template and every class among these are used (a `hash` for a
    /// class nobody names is not needed).
    pub(super) spec_args: Vec<&'t [u8]>,
    /// The class, struct, union or enum names among `declares`.
    pub(super) classes: Vec<&'t [u8]>,
    /// A using-declaration (`using ranges::get;`): it needs some declaration of its name.
    pub(super) using_decl: bool,
    /// Directives and `using namespace`: always kept.
    pub(super) always: bool,
    /// Directive lines inside the declaration (line markers in a long template argument
    /// list): kept when the declaration goes, so the lines after it keep their file and line.
    pub(super) directives: Vec<(usize, usize)>,
    /// Each name used with the namespace qualifying it (`ranges::min`), if any (see
    /// `scope.rs`).
    pub(super) scoped: Vec<(&'t [u8], Option<&'t [u8]>)>,
    /// For a block: its children's indices; the block goes only when all of them go.
    pub(super) children: Vec<usize>,
    pub(super) parent: Option<usize>,
}

impl<'t> Decl<'t> {
    /// Frees the slack of the lists: a text has a declaration per 50 bytes or so, and the
    /// lists of all of them are alive at once.
    fn shrink(&mut self) {
        self.declares.shrink_to_fit();
        self.attached.shrink_to_fit();
        self.uses.shrink_to_fit();
        self.spells.shrink_to_fit();
        self.params.iter_mut().for_each(Vec::shrink_to_fit);
        self.params.shrink_to_fit();
        self.calls.shrink_to_fit();
        self.spec_args.shrink_to_fit();
        self.classes.shrink_to_fit();
        self.directives.shrink_to_fit();
        self.scoped.shrink_to_fit();
    }

    /// The argument counts this declaration calls `name` with ([`ANY`] unless only called).
    pub(super) fn calls_of(&self, name: &[u8]) -> u32 {
        self.calls
            .binary_search_by(|(n, _)| (*n).cmp(name))
            .map_or(ANY, |k| self.calls[k].1)
    }

    /// The declaration of tokens `first..=last` (bytes `start..end`) before its names are
    /// filled in.
    pub(super) fn empty(
        first: usize,
        last: usize,
        start: usize,
        end: usize,
        parent: Option<usize>,
    ) -> Self {
        Decl {
            first,
            last,
            start,
            end,
            declares: Vec::new(),
            attached: Vec::new(),
            uses: Vec::new(),
            function: false,
            operator: false,
            params: Vec::new(),
            accepts: Accepts::ALL,
            params_close: 0,
            calls: Vec::new(),
            spelled: None,
            spells: Vec::new(),
            using_decl: false,
            scoped: Vec::new(),
            spec_args: Vec::new(),
            classes: Vec::new(),
            always: false,
            directives: Vec::new(),
            children: Vec::new(),
            parent,
        }
    }
}

/// A scope being split: its next token, its end, the byte its last declaration's span stops
/// at, its block (none at the top) and the declarations split off so far.
struct Scope {
    next: usize,
    hi: usize,
    limit: usize,
    parent: Option<usize>,
    kids: Vec<usize>,
}

/// What [`Split::next_decl`] found.
enum Next {
    /// A declaration, and the token after it.
    Decl(usize, usize),
    /// Block `me`, its body's `{` and `}`.
    Block {
        me: usize,
        open: usize,
        close: usize,
    },
}

pub(super) struct Split<'t> {
    pub(super) text: &'t [u8],
    pub(super) toks: Vec<Tok>,
    pub(super) mate: Vec<u32>,
    /// Each `<` token that closes and the token closing it, sorted (see `angles.rs`).
    pub(super) closes: Vec<(u32, u32)>,
    pub(super) decls: Vec<Decl<'t>>,
    /// Every name that follows `namespace` (blocks, aliases, also in function bodies, and
    /// `using namespace`): a name qualified by anything else is a class member.
    pub(super) namespaces: HashSet<&'t [u8]>,
    /// The namespaces a `using namespace` or a namespace alias names (the last component):
    /// their names are found from anywhere.
    pub(super) opened: HashSet<&'t [u8]>,
    /// The namespaces declared `inline` once (every later block of theirs is inline too):
    /// their names are also their parent's.
    pub(super) inline: HashSet<&'t [u8]>,
}

impl<'t> Split<'t> {
    /// `text` split into its declarations.
    pub(super) fn new(text: &'t [u8]) -> Self {
        let toks = lex::lex(text);
        let mate = lex::structure(text, &toks).mate;
        let n = toks.len();
        let closes = angles::closes(text, &toks);
        let mut s = Split {
            text,
            toks,
            mate,
            closes,
            decls: Vec::new(),
            namespaces: HashSet::new(),
            opened: HashSet::new(),
            inline: HashSet::new(),
        };
        for i in 0..n {
            if s.w(i, b"namespace") {
                let mut j = i + 1;
                let mut name = None;
                while j < n && s.toks[j].kind == Kind::Ident {
                    s.namespaces.insert(s.b(j));
                    if i > 0 && s.w(i - 1, b"inline") {
                        s.inline.insert(s.b(j));
                    }
                    name = Some(s.b(j));
                    j += if s.p(j + 1, b"::") { 2 } else { n };
                }
                let opens = i > 0 && s.w(i - 1, b"using") || s.p(i + 2, b"=");
                if opens {
                    // `namespace tc = std::__detail;`: the target's last component.
                    let mut j = i + 3;
                    while s.p(j, b"::") || j < n && s.toks[j].kind == Kind::Ident {
                        if s.toks[j].kind == Kind::Ident {
                            name = Some(s.b(j));
                        }
                        j += 1;
                    }
                    s.opened.extend(name);
                }
            }
        }
        s.split(0, n, text.len(), None);
        // Both grew by doubling and live as long as the pass's plan is built: up to half of
        // each would be slack.
        s.toks.shrink_to_fit();
        s.decls.shrink_to_fit();
        s
    }

    pub(super) fn b(&self, i: usize) -> &'t [u8] {
        self.toks[i].bytes(self.text)
    }
    pub(super) fn p(&self, i: usize, s: &[u8]) -> bool {
        i < self.toks.len() && self.toks[i].is(self.text, s)
    }
    pub(super) fn w(&self, i: usize, s: &[u8]) -> bool {
        i < self.toks.len() && self.toks[i].kind == Kind::Ident && self.b(i) == s
    }
    pub(super) fn mate(&self, i: usize) -> Option<usize> {
        (self.mate[i] != u32::MAX).then_some(self.mate[i] as usize)
    }
    pub(super) fn span_end(&self, last: usize, limit: usize) -> usize {
        self.toks
            .get(last + 1)
            .map_or(self.text.len(), |t| t.start as usize)
            .min(limit)
    }

    /// Splits tokens `lo..hi` (one scope) into declarations, and each block's body in turn.
    ///
    /// The scopes being split are a stack rather than recursion: a generated header can nest
    /// namespaces deeper than the thread's stack would allow a frame per level.
    pub(super) fn split(
        &mut self,
        lo: usize,
        hi: usize,
        limit: usize,
        parent: Option<usize>,
    ) -> Vec<usize> {
        let mut scopes = vec![Scope {
            next: lo,
            hi,
            limit,
            parent,
            kids: Vec::new(),
        }];
        loop {
            let top = scopes
                .last_mut()
                .expect("the outermost scope is popped last");
            if top.next >= top.hi {
                let done = scopes.pop().expect("the scope just looked at");
                let Some(outer) = scopes.last_mut() else {
                    return done.kids;
                };
                let block = done.parent.expect("an inner scope is a block's body");
                outer.kids.push(block);
                self.close_block(block, done.kids);
                continue;
            }
            match self.next_decl(top.next, top.hi, top.limit, top.parent) {
                Next::Decl(k, after) => {
                    top.kids.push(k);
                    top.next = after;
                }
                Next::Block { me, open, close } => {
                    top.next = close + 1;
                    scopes.push(Scope {
                        next: open + 1,
                        hi: close,
                        limit: self.toks[close].start as usize,
                        parent: Some(me),
                        kids: Vec::new(),
                    });
                }
            }
        }
    }

    /// The declaration starting at token `i` of a scope ending before token `hi`: pushed,
    /// with the token after it, or a block opened (its body is split next).
    ///
    /// One function on purpose: a single walk whose cases (directive, block, template head,
    /// declaration end) each decide where the next declaration starts.
    fn next_decl(&mut self, i: usize, hi: usize, limit: usize, parent: Option<usize>) -> Next {
        let start = i;
        if self.toks[i].kind == Kind::Directive {
            return Next::Decl(self.push(start, i, limit, parent, true), i + 1);
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
                let me = self.push_block(start, open, close, limit, parent);
                return Next::Block { me, open, close };
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
                            && !lex::opens_requires_body(self.text, &self.toks, &self.mate, open)
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
        Next::Decl(self.push(start, last, limit, parent, false), last + 1)
    }

    pub(super) fn push(
        &mut self,
        first: usize,
        last: usize,
        limit: usize,
        parent: Option<usize>,
        directive: bool,
    ) -> usize {
        let start = self.toks[first].start as usize;
        let mut d = Decl::empty(first, last, start, self.span_end(last, limit), parent);
        d.using_decl = !directive
            && self.w(first, b"using")
            && !self.w(first + 1, b"namespace")
            && !(first..=last).any(|k| self.p(k, b"="));
        d.always = directive;
        if !directive {
            self.names(first, last, &mut d);
            d.directives = self.markers(first + 1, last + 1);
        }
        d.shrink();
        self.decls.push(d);
        self.decls.len() - 1
    }

    /// The line markers among tokens `from..to`, each as its byte span with its newline.
    /// Only line markers: a `#pragma omp` in a deleted body goes with it.
    fn markers(&self, from: usize, to: usize) -> Vec<(usize, usize)> {
        (from..to).filter_map(|k| self.marker(k)).collect()
    }

    /// Token `k`'s byte span with its newline, when it is a line marker.
    fn marker(&self, k: usize) -> Option<(usize, usize)> {
        let t = self.toks[k];
        let marker = t.kind == Kind::Directive && crate::markers::parse_marker(self.b(k)).is_some();
        marker.then(|| (t.start as usize, (t.end as usize + 1).min(self.text.len())))
    }

    /// The block of tokens `first..=close` whose body opens at `open`, pushed with its head's
    /// markers; its body is split next, then [`Self::close_block`] finishes it.
    ///
    /// A block's own names are namespace names (nothing is attached to them), and the
    /// names its body uses, spells and calls are never read (only its children are kept
    /// or not, and a block goes when all of them do): its body is not analysed here, which
    /// would cost its whole text once per level of nesting.
    fn push_block(
        &mut self,
        first: usize,
        open: usize,
        close: usize,
        limit: usize,
        parent: Option<usize>,
    ) -> usize {
        let start = self.toks[first].start as usize;
        let mut d = Decl::empty(first, close, start, self.span_end(close, limit), parent);
        let name_end = (first..open)
            .find(|&q| self.p(q, b"(") || self.p(q, b"[") || self.w(q, b"__attribute__"))
            .unwrap_or(open);
        d.declares = (first..name_end)
            .filter(|&q| self.toks[q].kind == Kind::Ident && !keyword(self.b(q)))
            .map(|q| self.b(q))
            .collect();
        d.directives = self.markers(first + 1, open + 1);
        self.decls.push(d);
        self.decls.len() - 1
    }

    /// Finishes block `me` once its body is split into `kids`: its markers are its head's
    /// and its children's (they cover its body), in order.
    fn close_block(&mut self, me: usize, kids: Vec<usize>) {
        let mut directives = std::mem::take(&mut self.decls[me].directives);
        for &k in &kids {
            let kid = &self.decls[k];
            if self.toks[kid.first].kind == Kind::Directive {
                directives.extend(self.marker(kid.first));
            } else {
                directives.extend_from_slice(&kid.directives);
            }
        }
        let d = &mut self.decls[me];
        d.directives = directives;
        if kids.is_empty() {
            // An empty block may be what makes a namespace inline (`inline namespace
            // __cxx11 { }` in libstdc++'s c++config.h): kept. With no body to cost anything,
            // it is analysed as any other declaration, its names aside.
            let mut full = Decl::empty(d.first, d.last, d.start, d.end, d.parent);
            let declares = std::mem::take(&mut d.declares);
            full.directives = std::mem::take(&mut d.directives);
            self.names(full.first, full.last, &mut full);
            full.declares = declares;
            full.attached.clear();
            full.uses.clear();
            full.always = true;
            self.decls[me] = full;
        } else {
            d.children = kids;
        }
        self.decls[me].shrink();
    }

    /// Fills the declared, attached and used names of tokens `first..=last`.
    ///
    /// One function on purpose: a single walk over the tokens whose state (open angle
    /// brackets, names seen, the token before) every case reads and changes, so the cases
    /// stay in one loop in the order they are tried.
    pub(super) fn names(&self, first: usize, last: usize, d: &mut Decl<'t>) {
        let mut seen = self.template_parameters(first, last);
        let mut seen_scoped = HashSet::new();
        let mut masks: HashMap<&[u8], u32> = HashMap::new();
        // Open `<` since the last `;` or brace: a `>>` closing two of them is no shift.
        let mut angles = 0usize;
        let mut i = first;
        while i <= last {
            let open_before = angles;
            match self.b(i) {
                b"<" => angles += 1,
                b">" => angles = angles.saturating_sub(1),
                b";" | b"{" | b"}" => angles = 0,
                _ => {}
            }
            let closer = self.p(i, b">>") && angles >= 2;
            if closer {
                angles -= 2;
            }
            if self.toks[i].kind == Kind::Punct
                && !closer
                && SPELLED_OPERATORS.contains(&self.b(i))
                && !(i > 0 && self.w(i - 1, b"operator"))
                && seen.insert(self.b(i))
            {
                d.spells.push(self.b(i));
            }
            let range_for = self.range_for(i, last);
            let implied = [
                range_for.then_some(implicit::EQUALITY),
                range_for.then_some(implicit::RANGE_FOR),
                (self.p(i, b"[") && self.structured_binding(first, i)).then_some(implicit::BINDING),
                (!closer)
                    .then(|| self.compares(i, last, open_before))
                    .flatten(),
            ];
            for n in implied.into_iter().flatten() {
                if seen.insert(n) {
                    d.spells.push(n);
                }
            }
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
            if self.toks[i].kind == Kind::Ident
                && !keyword(self.b(i))
                && !self.declared_here(first, i)
                && !self.member_of_class(i)
                && !self.through_object(i)
            {
                let name = self.b(i);
                if seen.insert(name) {
                    d.uses.push(name);
                }
                let mask = self.call_mask(i, last);
                *masks.entry(name).or_default() |= mask;
                let qualifier = self.namespace_qualifier(i);
                if seen_scoped.insert((name, qualifier)) {
                    d.scoped.push((name, qualifier));
                }
            }
            // `100ms` calls `operator""ms`, declared as `ms`.
            if self.toks[i].kind == Kind::Number {
                if let Some(suffix) = literal_suffix(self.b(i)).filter(|s| seen.insert(s)) {
                    d.uses.push(suffix);
                }
            }
            i += 1;
        }
        d.calls = masks.into_iter().filter(|&(_, m)| m != ANY).collect();
        d.calls.sort_unstable();
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
                            let token = self.b(j - 1);
                            let named_op = op && self.w(j.saturating_sub(2), b"operator");
                            d.spelled = if !named_op {
                                None
                            } else if SPELLED_OPERATORS.contains(&token) {
                                Some(token)
                            } else {
                                implicit::family(token)
                            };
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
                            d.params_close = close;
                            if !op {
                                d.accepts = self.accepts(open, close);
                            }
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
    pub(super) fn spec_args(&self, open: usize, last: usize, d: &mut Decl<'t>) {
        let close = self.angle_close(open, last).unwrap_or(open);
        for k in open + 1..close {
            if self.toks[k].kind == Kind::Ident && !keyword(self.b(k)) {
                d.spec_args.push(self.b(k));
            }
        }
    }

    /// True when the `[` at `open` starts a structured binding: `auto`, then only
    /// qualifiers and `&`/`&&` before it.
    pub(super) fn structured_binding(&self, first: usize, open: usize) -> bool {
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

    pub(super) fn decl_has(&self, first: usize, before: usize, w: &[u8]) -> bool {
        (first..before).any(|k| self.w(k, w))
    }
}

#[cfg(test)]
#[path = "split_tests.rs"]
mod tests;
