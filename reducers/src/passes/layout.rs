//! The readable layout of a reduced test case: what a maintainer pastes into a regression test.
//!
//! The reduced text is the product upstream sees, so the last pass lays it out the way a person
//! would write it (close to clang-format's LLVM style): one declaration or statement per line,
//! two spaces per brace level plus one for the body of an `if`/`for`/`while`/`else` without
//! braces, `{` at the end of the line that opens it and `}` on its own line (`{}` when empty,
//! `} else {`, `};`), `case`/access labels on their own lines, template angles, calls, member
//! access and unary operators written tight, binary operators spaced, initialiser braces kept
//! inline, preprocessor lines at column 0, no trailing spaces and one final newline.
//!
//! Only whitespace (and comments) may change: a space is dropped between two tokens only if
//! they still lex as the same two tokens without it, a token the lexer ended at a newline (an
//! unterminated literal, a directive) ends its line, and the finished layout is lexed again
//! and compared token by token with the input. If anything differs (the lexer is forgiving and
//! arbitrary bytes reach it), no layout is offered. The driver accepts the layout even when it
//! is longer than the current text (see `CPass::Normalise`), but only if the test still passes.

use std::borrow::Cow;

use crate::lex::{self, Kind, Tok};
use crate::newline;
use crate::plan::{Cursor, Edit, Plan, Step};

/// Words after which a `(` or `::` is not a call or a qualified name but a new expression.
const EXPR_KEYWORDS: &[&[u8]] = &[
    b"return",
    b"case",
    b"throw",
    b"co_return",
    b"co_yield",
    b"co_await",
    b"else",
    b"do",
    b"new",
    b"delete",
    b"typename",
    b"template",
    b"using",
    b"goto",
    b"and",
    b"or",
    b"not",
];

/// Statement keywords written with a space before their `(`.
const CONTROL: &[&[u8]] = &[b"if", b"for", b"while", b"switch", b"catch"];

/// Words after which a `{` opens a block rather than an initialiser list.
const BLOCK_WORDS: &[&[u8]] = &[
    b"do",
    b"else",
    b"try",
    b"const",
    b"noexcept",
    b"override",
    b"final",
    b"mutable",
    b"namespace",
    b"struct",
    b"class",
    b"union",
    b"enum",
    b"requires",
    b"extern",
];

/// Words that make the statement a definition with a body (`struct S : B<int> {`).
const HEAD_WORDS: &[&[u8]] = &[
    b"struct",
    b"class",
    b"union",
    b"enum",
    b"namespace",
    b"extern",
    b"concept",
];

fn one_of(b: &[u8], set: &[&[u8]]) -> bool {
    set.contains(&b)
}

/// Everything the layout needs to know about the tokens, computed once.
struct Facts<'t> {
    text: &'t [u8],
    toks: Vec<Tok>,
    mate: Vec<u32>,
    tmpl_open: Vec<bool>,
    tmpl_close: Vec<bool>,
}

impl<'t> Facts<'t> {
    fn new(text: &'t [u8]) -> Self {
        let toks = lex::lex(text);
        let mate = lex::structure(text, &toks).mate;
        let mut tmpl_open = vec![false; toks.len()];
        let mut tmpl_close = vec![false; toks.len()];
        for (a, b) in lex::angle_spans(text, &toks) {
            let at = |pos: usize| toks.partition_point(|t| (t.end as usize) <= pos);
            let (i, j) = (at(a), at(b.saturating_sub(1)));
            if i < toks.len() && j < toks.len() {
                tmpl_open[i] = true;
                tmpl_close[j] = true;
            }
        }
        Facts {
            text,
            toks,
            mate,
            tmpl_open,
            tmpl_close,
        }
    }
    fn b(&self, i: usize) -> &'t [u8] {
        self.toks[i].bytes(self.text)
    }
    fn punct(&self, i: usize, s: &[u8]) -> bool {
        self.toks[i].is(self.text, s)
    }
    fn ident(&self, i: usize) -> bool {
        self.toks[i].kind == Kind::Ident
    }
    fn mate(&self, i: usize) -> Option<usize> {
        match self.mate[i] {
            u32::MAX => None,
            j => Some(j as usize),
        }
    }
    /// The token can end an operand: a name (not a keyword that starts an expression), a
    /// literal, `)`, `]` or a template's closing `>`.
    fn operand_end(&self, i: usize) -> bool {
        match self.toks[i].kind {
            Kind::Ident => !one_of(self.b(i), EXPR_KEYWORDS) && !one_of(self.b(i), CONTROL),
            Kind::Number | Kind::Str | Kind::Char => true,
            Kind::Punct => {
                matches!(self.b(i), b")" | b"]") || (self.tmpl_close[i] && self.b(i) != b">>")
            }
            _ => false,
        }
    }
    /// `*`, `&` or `&&` at `i` belongs to a declarator (`T *p`, `X<int> &r`, `T **pp`).
    fn declarator(&self, i: usize) -> bool {
        if i == 0 || !matches!(self.b(i), b"*" | b"&" | b"&&") {
            return false;
        }
        let p = i - 1;
        if self.tmpl_close[p] || one_of(self.b(p), lex::TYPE_WORDS) {
            return true;
        }
        if matches!(self.b(p), b"*" | b"&") && self.toks[p].kind == Kind::Punct {
            return self.declarator(p);
        }
        if !self.ident(p) || one_of(self.b(p), EXPR_KEYWORDS) {
            return false;
        }
        // A name that starts a declaration: at the start of a statement or parameter, or after
        // a qualifier or a class key.
        p == 0 || {
            let q = p - 1;
            matches!(self.b(q), b"(" | b"," | b";" | b"{" | b"}" | b"::")
                || self.tmpl_open[q]
                || self.toks[q].kind == Kind::Directive
                || one_of(
                    self.b(q),
                    &[
                        b"const",
                        b"struct",
                        b"class",
                        b"typename",
                        b"union",
                        b"enum",
                    ],
                )
        }
    }
    /// A prefix operator at `i` (nothing before it that could be its left operand).
    fn unary(&self, i: usize) -> bool {
        matches!(
            self.b(i),
            b"*" | b"&" | b"&&" | b"-" | b"+" | b"++" | b"--" | b"!" | b"~"
        ) && self.toks[i].kind == Kind::Punct
            && (i == 0 || !self.operand_end(i - 1))
    }
}

/// Whether the style wants a space between tokens `p` and `p + 1` on one line; `inline_brace`:
/// token `p + 1` opens an initialiser list.
fn want_space(f: &Facts, p: usize, in_label: bool, inline_brace: bool) -> bool {
    let i = p + 1;
    let (pb, tb) = (f.b(p), f.b(i));
    let (pk, tk) = (f.toks[p].kind, f.toks[i].kind);
    let pp = |s: &[u8]| pk == Kind::Punct && pb == s;
    let tp = |s: &[u8]| tk == Kind::Punct && tb == s;
    if tp(b")") || tp(b"]") || tp(b";") || tp(b",") || tp(b"...") {
        return false;
    }
    if pp(b"(") || pp(b"[") || pp(b".") || pp(b"->") || pp(b"::") || tp(b".") || tp(b"->") {
        return false;
    }
    if pp(b"{") || tp(b"}") {
        return false;
    }
    if inline_brace {
        return !(f.ident(p) || f.tmpl_close[p]) || one_of(pb, EXPR_KEYWORDS);
    }
    if pp(b",") || pp(b";") || tp(b"?") || pp(b"?") {
        return true;
    }
    if tp(b":") {
        return !in_label && !one_of(pb, &[b"public", b"private", b"protected", b"default"]);
    }
    if f.tmpl_open[i] {
        return pb == b"template";
    }
    if f.tmpl_open[p] || f.tmpl_close[i] {
        return false;
    }
    if tp(b"::") {
        let qualifier = (f.ident(p) && !one_of(pb, EXPR_KEYWORDS)) || f.tmpl_close[p] || pp(b")");
        return !qualifier;
    }
    if tp(b"(") {
        // `sizeof...(Ts)`: the operator's parenthesis is written tight, as after `sizeof`.
        if pp(b"...") && p > 0 && f.b(p - 1) == b"sizeof" {
            return false;
        }
        if f.ident(p) {
            return one_of(pb, CONTROL) || one_of(pb, EXPR_KEYWORDS);
        }
        return !(pp(b")") || pp(b"]") || f.tmpl_close[p]);
    }
    if tp(b"[") {
        let subscript = f.operand_end(p) && !matches!(pk, Kind::Number | Kind::Char);
        return !subscript;
    }
    if (tp(b"++") || tp(b"--")) && f.operand_end(p) {
        return false;
    }
    if f.unary(p) || f.declarator(p) {
        return false;
    }
    true
}

/// True if `a` followed directly by `b` would not lex as exactly those two tokens.
fn fuse(f: &Facts, p: usize, buf: &mut Vec<u8>) -> bool {
    let (a, b) = (f.b(p), f.b(p + 1));
    buf.clear();
    buf.push(b';'); // a start that is not a line start, so `#` cannot become a directive
    buf.extend_from_slice(a);
    buf.extend_from_slice(b);
    let toks = lex::lex(buf);
    !(toks.len() == 3 && toks[1].end as usize == 1 + a.len() && toks[2].end as usize == buf.len())
}

/// A token the lexer ended at a newline (so the next one must start a new line).
fn ends_line(f: &Facts, i: usize) -> bool {
    let t = f.toks[i];
    let b = f.b(i);
    let quote = match t.kind {
        Kind::Directive => return true,
        Kind::Str => b'"',
        Kind::Char => b'\'',
        _ => return false,
    };
    b.len() < 2
        || b[b.len() - 1] != quote
        || (b.len() == 2 && b[0] != quote)
        || b.ends_with(b"\\\"")
}

#[derive(Clone)]
enum Open {
    /// A block `{` at token `at`, printed on a line indented `indent` levels, with `hang`
    /// levels of unbraced-body indentation and the `if`s of `ifs` pending outside it.
    Block {
        at: usize,
        indent: usize,
        hang: usize,
        ifs: Vec<usize>,
    },
    /// An initialiser `{` (or any brace inside parentheses): laid out inline.
    Inline { at: usize },
}

/// The layout described in the module doc; `indent` false writes no indentation.
///
/// One function on purpose: a single pass over the tokens whose state (the open-brace
/// stack, the hang, the `if` levels, whether the statement has a head) every case reads and
/// changes, so the cases stay in one loop in the order they are tried.
pub(crate) fn layout(text: &[u8], indent: bool) -> Vec<u8> {
    let f = Facts::new(text);
    let n = f.toks.len();
    let mut out = Vec::with_capacity(text.len() + text.len() / 4);
    let mut stack: Vec<Open> = Vec::new();
    let mut parens = 0usize; // matched `(`/`[`/inline `{` open
    let mut hang = 0usize;
    // The hang levels of the `if`s of the current statement, and of the one just ended (an
    // `else` goes back to its `if`'s level).
    let mut ifs: Vec<usize> = Vec::new();
    let mut ended_ifs: Vec<usize> = Vec::new();
    let mut head = false; // the statement so far has a `)` or a class/namespace key
    let mut in_case = false;
    let mut newline = true;
    let mut line_indent = 0usize;
    let mut buf = Vec::new();
    let base = |stack: &[Open]| {
        stack.iter().rev().find_map(|o| match o {
            Open::Block { indent, .. } => Some(indent + 1),
            Open::Inline { .. } => None,
        })
    };
    for i in 0..n {
        let t = f.toks[i];
        let b = f.b(i);
        let is = |s: &[u8]| f.punct(i, s);
        let mut close_indent = None;
        if is(b"}") {
            if let Some(j) = f.mate(i).filter(|&j| j < i) {
                if let Some(k) = stack.iter().rposition(|o| match o {
                    Open::Block { at, .. } | Open::Inline { at } => *at == j,
                }) {
                    for o in stack.drain(k..).rev() {
                        match o {
                            Open::Block {
                                indent,
                                hang: h,
                                ifs: outer,
                                ..
                            } => {
                                close_indent = Some(indent);
                                hang = h;
                                ifs = outer;
                                ended_ifs.clear();
                            }
                            Open::Inline { .. } => parens = parens.saturating_sub(1),
                        }
                    }
                }
            }
            // An empty block stays `{}`; a closing block brace starts its own line.
            if close_indent.is_some() && !newline && !(i > 0 && f.mate(i) == Some(i - 1)) {
                out.push(b'\n');
                newline = true;
            }
        }
        let p = i.checked_sub(1);
        let pb = p.map_or(&b""[..], |p| f.b(p));
        let pk = p.map(|p| f.toks[p].kind);
        let inline = is(b"{")
            && (parens > 0
                || p.is_some_and(|p| {
                    let pp = |s: &[u8]| f.punct(p, s);
                    pp(b"=")
                        || pp(b",")
                        || pp(b"(")
                        || pp(b"[")
                        || pb == b"return"
                        || ((f.ident(p) || f.tmpl_close[p])
                            && !head
                            && !one_of(pb, BLOCK_WORDS)
                            && !one_of(pb, &[b"else", b"do", b"try"]))
                        || (pk == Some(Kind::Punct)
                            && !matches!(pb, b")" | b"]" | b";" | b"{" | b"}" | b":")
                            && !f.tmpl_close[p])
                }));
        if t.kind == Kind::Ident && b == b"else" && parens == 0 {
            // Back to the level of the `if` this `else` belongs to.
            if ifs.is_empty() {
                ifs = std::mem::take(&mut ended_ifs);
            }
            if let Some(h) = ifs.pop() {
                hang = h;
            }
        }
        if t.kind == Kind::Directive && !newline {
            out.push(b'\n');
            newline = true;
        }
        if newline {
            line_indent = if t.kind == Kind::Directive {
                0
            } else {
                close_indent.unwrap_or_else(|| base(&stack).unwrap_or(0) + hang)
            };
            if indent {
                out.resize(out.len() + 2 * line_indent, b' ');
            }
        } else if want_space(&f, i - 1, in_case, inline) || fuse(&f, i - 1, &mut buf) {
            out.push(b' ');
        }
        if t.kind == Kind::Directive {
            out.extend_from_slice(trim_directive(b));
        } else {
            out.extend_from_slice(b);
        }
        newline = false;

        // What this token does to the structure, and whether the line ends after it.
        let next = (i + 1 < n).then_some(i + 1);
        let next_is = |s: &[u8]| next.is_some_and(|k| f.punct(k, s));
        let next_word = |s: &[u8]| next.is_some_and(|k| f.ident(k) && f.b(k) == s);
        let mut brk = ends_line(&f, i);
        if t.kind == Kind::Ident {
            match b {
                b"case" if parens == 0 => in_case = true,
                b"if" if parens == 0 => ifs.push(hang),
                _ if one_of(b, HEAD_WORDS) => head = true,
                _ => {}
            }
            if matches!(b, b"else" | b"do") && parens == 0 && !next_is(b"{") && !next_word(b"if") {
                brk = true;
                hang += 1;
            }
        }
        if t.kind == Kind::Punct {
            match b {
                b"(" | b"[" if f.mate(i).is_some() => parens += 1,
                b")" | b"]" if f.mate(i).is_some() => {
                    parens = parens.saturating_sub(1);
                    head |= b == b")";
                    let control = f.mate(i).is_some_and(|o| {
                        o > 0 && f.ident(o - 1) && one_of(f.b(o - 1), &CONTROL[..4])
                    });
                    if control && parens == 0 && !next_is(b"{") && !next_is(b";") {
                        brk = true;
                        hang += 1;
                    }
                }
                b";" if parens == 0 => {
                    brk = true;
                    hang = 0;
                    ended_ifs = std::mem::take(&mut ifs);
                    head = false;
                    in_case = false;
                }
                b":" if parens == 0 => {
                    let label = i > 0 && one_of(f.b(i - 1), &[b"public", b"private", b"protected"]);
                    let default = i > 0 && f.b(i - 1) == b"default";
                    if in_case || label || default {
                        brk = true;
                        in_case = false;
                        hang = 0;
                    }
                }
                b"{" => {
                    if inline {
                        parens += 1;
                        stack.push(Open::Inline { at: i });
                    } else {
                        stack.push(Open::Block {
                            at: i,
                            indent: line_indent,
                            hang,
                            ifs: std::mem::take(&mut ifs),
                        });
                        ended_ifs.clear();
                        hang = 0;
                        head = false;
                        brk |= f.mate(i) != Some(i + 1);
                    }
                }
                b"}" if close_indent.is_some() => {
                    let opened_by_do = f
                        .mate(i)
                        .is_some_and(|o| o > 0 && f.ident(o - 1) && f.b(o - 1) == b"do");
                    let joins = next_is(b";")
                        || next_is(b",")
                        || next_is(b")")
                        || next_word(b"else")
                        || next_word(b"catch")
                        || (opened_by_do && next_word(b"while"));
                    if !joins {
                        brk = true;
                        hang = 0;
                        ended_ifs = std::mem::take(&mut ifs);
                        head = false;
                    }
                }
                _ => {}
            }
        }
        if brk {
            out.push(b'\n');
            newline = true;
        }
    }
    if !newline {
        out.push(b'\n');
    }
    out
}

/// A directive without its trailing whitespace, unless that would end it in a line splice.
fn trim_directive(b: &[u8]) -> &[u8] {
    let t = b.trim_ascii_end();
    if t.ends_with(b"\\") {
        b
    } else {
        t
    }
}

/// The same tokens in the same order (directives compared without trailing whitespace).
pub(crate) fn same_tokens(a: &[u8], b: &[u8]) -> bool {
    let (ta, tb) = (lex::lex(a), lex::lex(b));
    ta.len() == tb.len()
        && ta.iter().zip(&tb).all(|(x, y)| {
            let (bx, by) = (x.bytes(a), y.bytes(b));
            x.kind == y.kind
                && if x.kind == Kind::Directive {
                    trim_directive(bx) == trim_directive(by)
                } else {
                    bx == by
                }
        })
}

/// [`layout`], if it keeps every token (else `None`).
pub(crate) fn pretty(text: &[u8], indent: bool) -> Option<Vec<u8>> {
    let out = layout(text, indent);
    same_tokens(text, &out).then_some(out)
}

/// The whitespace and comments between tokens squeezed to one newline (if they had one) or one
/// space; no leading whitespace, one final newline. Literals are never touched.
pub(crate) fn squeeze(text: &[u8]) -> Vec<u8> {
    let toks = lex::lex(text);
    let mut out = Vec::with_capacity(text.len());
    let mut at = 0usize;
    for (k, t) in toks.iter().enumerate() {
        let gap = &text[at..t.start as usize];
        let b = t.bytes(text);
        if k > 0 && !gap.is_empty() {
            // A `#` that is not a directive (after a line splice) must not start a line.
            let nl = t.kind == Kind::Directive || (newline::has_break(gap) && b[0] != b'#');
            out.push(if nl { b'\n' } else { b' ' });
        }
        out.extend_from_slice(if t.kind == Kind::Directive {
            trim_directive(b)
        } else {
            b
        });
        at = t.end as usize;
    }
    if !out.is_empty() {
        out.push(b'\n');
    }
    out
}

/// Candidates: the indented layout (when it differs from the text, whatever its length), then
/// (if the test rejects the layout, e.g. because the crash depends on line numbers) the
/// squeezed text, only when shorter. Nothing when the text is laid out already.
pub(crate) struct Normalise {
    layout: Option<Vec<u8>>,
    squeezed: Vec<u8>,
}

pub(crate) fn normalise(text: &[u8]) -> Box<dyn Plan> {
    let pretty = pretty(text, true);
    if pretty.as_deref() == Some(text) {
        // Already laid out: squeezing it would only undo the layout.
        return Box::new(crate::plan::Empty);
    }
    let squeezed = Some(squeeze(text))
        .filter(|s| same_tokens(s, text))
        .unwrap_or_default();
    Box::new(Normalise {
        layout: pretty,
        squeezed,
    })
}

impl Plan for Normalise {
    fn step(&self, text: &[u8], at: Cursor) -> Option<Step> {
        let whole = |v: &[u8]| {
            vec![Edit {
                start: 0,
                end: text.len(),
                with: Cow::Owned(v.to_vec()),
            }]
        };
        let done = [2, 0, 0];
        if at[0] == 0 {
            if let Some(l) = &self.layout {
                return Some(Step {
                    edits: whole(l),
                    next: [1, 0, 0],
                    on_success: done,
                });
            }
        }
        if at[0] <= 1 && self.squeezed.len() < text.len() && !self.squeezed.is_empty() {
            return Some(Step {
                edits: whole(&self.squeezed),
                next: done,
                on_success: done,
            });
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn c_like() -> impl Strategy<Value = Vec<u8>> {
        let frag = prop::sample::select(vec![
            "int",
            "x",
            "if",
            "else",
            "for",
            "do",
            "while",
            "case",
            "public",
            "struct",
            "template",
            "return",
            "{",
            "}",
            "(",
            ")",
            "[",
            "]",
            "<",
            ">",
            ">>",
            ";",
            ",",
            ":",
            "::",
            "=",
            "-",
            "+",
            "*",
            "&",
            "&&",
            "++",
            "!",
            "~",
            ".",
            "->",
            "?",
            "...",
            "/",
            "#",
            " ",
            " ",
            "\n",
            "\n",
            "# 1 \"a.c\"\n",
            "#pragma x  \n",
            "\"s\"",
            "\"",
            "'c'",
            "'",
            "42",
            "1e",
            ".5",
            "/* c */",
            "// c\n",
            "\\\n",
            "R",
            "\r",
            "\\\r",
            "u8",
            "R\"(x)\"",
            "\u{e9}",
            "\t",
        ]);
        prop::collection::vec(frag, 0..60).prop_map(|v| v.concat().into_bytes())
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

        /// Whatever the input, the layout keeps the tokens (or is not offered), is laid out
        /// again to itself, ends in one newline and has no trailing spaces.
        #[test]
        fn layout_keeps_tokens_and_is_idempotent(text in prop_oneof![c_like(), prop::collection::vec(any::<u8>(), 0..200)]) {
            let raw = layout(&text, true);
            if let Some(out) = pretty(&text, true) {
                prop_assert_eq!(&out, &raw);
                prop_assert!(same_tokens(&out, &text));
                let again = layout(&out, true);
                prop_assert_eq!(&again, &out, "not idempotent: {:?}", String::from_utf8_lossy(&out));
                // (A literal keeps its own spaces and newlines, even at the end of a line.)
                let literals = text.iter().any(|c| matches!(c, b'"' | b'\'' | b'\\'));
                if !lex::lex(&text).is_empty() && !literals {
                    prop_assert!(out.ends_with(b"\n") && !out.ends_with(b"\n\n"));
                }
                for line in out.split(|&c| c == b'\n').filter(|_| !literals) {
                    prop_assert!(!line.ends_with(b" "), "trailing space in {:?}", String::from_utf8_lossy(&out));
                }
            }
            let plan = normalise(&text);
            let mut at = Some(crate::plan::START);
            while let Some(step) = at.and_then(|a| plan.step(&text, a)) {
                let cand = crate::plan::apply(&text, &step.edits);
                prop_assert!(cand != text && same_tokens(&cand, &text));
                at = Some(step.next);
            }
        }
    }

    fn lay(s: &str) -> String {
        let out = pretty(s.as_bytes(), true).expect("tokens kept");
        let again = pretty(&out, true).expect("tokens kept");
        assert_eq!(out, again, "not idempotent");
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn layout_of_ordinary_code() {
        let src = "namespace a{struct  X ;}\n#pragma once  \nvoid f(int*x){for(int i=0;i<1;i++){x -> y[i]=!g();}}";
        let want = "namespace a {\n  struct X;\n}\n#pragma once\nvoid f(int *x) {\n  for (int i = 0; i < 1; i++) {\n    x->y[i] = !g();\n  }\n}\n";
        assert_eq!(lay(src), want);
    }

    #[test]
    fn unbraced_bodies_hang_and_braces_join() {
        let src = "int f(){for(;;)if(a==1)return &a;else b=-1; do x++; while(0); if(a){}else{b();} try{}catch(...){} }";
        let want = "int f() {\n  for (;;)\n    if (a == 1)\n      return &a;\n    else\n      b = -1;\n  do\n    x++;\n  while (0);\n  if (a) {} else {\n    b();\n  }\n  try {} catch (...) {}\n}\n";
        assert_eq!(lay(src), want);
    }

    #[test]
    fn templates_initialisers_and_labels() {
        let src = "template < typename T > struct X { public : X < T > * p ; int a [ 2 ] = { 1 , 2 } ; } ; int g ( int k ) { switch ( k ) { case 1 : return N :: X < int > { } . f ( ) ; default : return - k ; } }";
        let want = "template <typename T> struct X {\n  public:\n  X<T> *p;\n  int a[2] = {1, 2};\n};\nint g(int k) {\n  switch (k) {\n    case 1:\n    return N::X<int>{}.f();\n    default:\n    return -k;\n  }\n}\n";
        assert_eq!(lay(src), want);
    }

    #[test]
    fn lambda_template_parameters_and_sizeof_packs_are_tight() {
        let src = "template<class...f>void b(){[] < long ... g > (a<long,g...>){return sizeof ... (f);}(x);}";
        let want = "template <class... f> void b() {\n  []<long... g>(a<long, g...>) {\n    return sizeof...(f);\n  }\n  (x);\n}\n";
        assert_eq!(lay(src), want);
    }

    #[test]
    fn never_fuses_tokens() {
        for src in [
            "a - -b; c + +d; e & &f;",
            "x = y / *p;",
            "R \"x\"; u8 'c';",
            "a. 5;",
            "# x\n",
        ] {
            let out = pretty(src.as_bytes(), true).expect("tokens kept");
            assert!(
                same_tokens(src.as_bytes(), &out),
                "{src:?} -> {:?}",
                String::from_utf8_lossy(&out)
            );
        }
    }

    #[test]
    fn unterminated_literals_end_their_line() {
        let src = b"char *s = \"abc\nint x;\n";
        let out = pretty(src, true).expect("tokens kept");
        assert_eq!(String::from_utf8(out).unwrap(), "char *s = \"abc\nint x;\n");
    }

    #[test]
    fn squeeze_keeps_literals() {
        assert_eq!(
            squeeze(b"  a  =  \"x  y\" ;  // c\n\n b"),
            b"a = \"x  y\" ;\nb\n"
        );
    }
}
