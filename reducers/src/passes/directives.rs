//! Passes for raw (unpreprocessed) C and C++: preprocessor directives and the one-line end
//! state.
//!
//! The other passes see a directive line as one opaque token, which is right for preprocessed
//! input (only `# N "file"` line markers, handled by `markers.rs`) but leaves a raw source full
//! of `#if`/`#define` stuck where C-Vise goes on. These passes do what C-Vise's `ifs`, `lines`
//! and `clex` passes do on directives:
//!
//! - `directives`: first every directive line that is not in a group, a `#define` or a line marker
//!   (`#include`, `#pragma`, …) deleted at once; then per directive, in text order: a conditional
//!   group (`#if…#elif…#else…#endif`) is deleted whole, then each arm is kept alone without the
//!   directive lines; a `#define` is deleted, then left without its body (and parameters); any
//!   other directive line (`#include`, `#undef`, `#pragma`, `#line`, `#error`, a stray `#endif`) is
//!   deleted. Line markers are left to the `markers` pass, so on preprocessed input this offers
//!   nothing unless there is a `#pragma`.
//! - `directive-tokens`: ddmin over the tokens inside directive lines: the `#name` (without it
//!   the rest is code) and what follows (macro parameters and bodies, `#if` expressions),
//!   C-Reduce's `rm-toks` for what the token pass cannot reach.
//! - `one-line`: the whole file with the least whitespace that keeps every token (no comments,
//!   no line splices); newlines remain only around directives, which need lines of their own.
//!   Then the same with a final newline, then with the original line breaks kept.

use std::borrow::Cow;

use crate::lex::{self, Kind, Tok};
use crate::newline;
use crate::plan::{Ddmin, Edit, Item, List, Plan, Unit, DEL, SPACE};

/// What a directive line is, as far as the passes care.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum DirKind {
    /// `#if`, `#ifdef`, `#ifndef`.
    If,
    /// `#elif`, `#elifdef`, `#elifndef`, `#else`.
    Arm,
    Endif,
    Define,
    /// A line marker `# 12 "file"`: the `markers` pass's business.
    Marker,
    /// Anything else: `#include`, `#undef`, `#pragma`, `#line`, `#error`, `#warning`, `#`.
    Other,
}

/// One directive line.
#[derive(Clone, Copy, Debug)]
struct Dir {
    /// The `#`.
    start: usize,
    /// End of the directive's text (before its newline).
    end: usize,
    /// `end` plus the newline, if there is one.
    line_end: usize,
    /// Where the text after the directive's name starts.
    body: usize,
    kind: DirKind,
}

/// Skips spaces, tabs and line splices from `i`.
fn skip_blank(text: &[u8], mut i: usize, end: usize) -> usize {
    while i < end {
        match text[i] {
            b' ' | b'\t' | b'\r' | 0x0b | 0x0c => i += 1,
            b'\\' if newline::break_len(text, i + 1) > 0 => {
                i += 1 + newline::break_len(text, i + 1)
            }
            _ => break,
        }
    }
    i
}

fn dir_of(text: &[u8], t: &Tok) -> Dir {
    let (start, end) = (t.start as usize, t.end as usize);
    // The directive's token ends at its line's last byte: a `\n` or a lone `\r`.
    let line_end = end + usize::from(newline::ends_line(text, end));
    let w0 = skip_blank(text, start + 1, end);
    let mut w1 = w0;
    while w1 < end && (text[w1].is_ascii_alphanumeric() || text[w1] == b'_') {
        w1 += 1;
    }
    let kind = match &text[w0..w1] {
        b"if" | b"ifdef" | b"ifndef" => DirKind::If,
        b"elif" | b"elifdef" | b"elifndef" | b"else" => DirKind::Arm,
        b"endif" => DirKind::Endif,
        b"define" => DirKind::Define,
        w if w.first().is_some_and(u8::is_ascii_digit) => DirKind::Marker,
        _ => DirKind::Other,
    };
    Dir {
        start,
        end,
        line_end,
        body: w1,
        kind,
    }
}

/// Every directive line of `text`, in order.
fn directives(text: &[u8], toks: &[Tok]) -> Vec<Dir> {
    toks.iter()
        .filter(|t| t.kind == Kind::Directive)
        .map(|t| dir_of(text, t))
        .collect()
}

/// What the `directives` pass can do at one place in the text.
enum Entity {
    /// A conditional group: its directives, `#if` first, `#endif` last.
    Group(Vec<Dir>),
    Define(Dir),
    /// A line to delete (including stray `#elif`/`#else`/`#endif`).
    Line(Dir),
}

impl Entity {
    fn start(&self) -> usize {
        match self {
            Entity::Group(g) => g[0].start,
            Entity::Define(d) | Entity::Line(d) => d.start,
        }
    }
}

fn entities(dirs: &[Dir]) -> Vec<Entity> {
    let mut out = Vec::new();
    let mut open: Vec<Vec<Dir>> = Vec::new();
    for d in dirs {
        match d.kind {
            DirKind::If => open.push(vec![*d]),
            DirKind::Arm => match open.last_mut() {
                Some(g) => g.push(*d),
                None => out.push(Entity::Line(*d)),
            },
            DirKind::Endif => match open.pop() {
                Some(mut g) => {
                    g.push(*d);
                    out.push(Entity::Group(g));
                }
                None => out.push(Entity::Line(*d)),
            },
            DirKind::Define => out.push(Entity::Define(*d)),
            DirKind::Other => out.push(Entity::Line(*d)),
            DirKind::Marker => {}
        }
    }
    // Unterminated groups offer nothing: without an `#endif` the arms are not known.
    out.sort_by_key(Entity::start);
    out
}

/// For a `#define` whose name starts the body: where the name ends, and where the parameter
/// list ends (right after its `)`) when the macro is function-like.
fn define_parts(text: &[u8], d: &Dir) -> Option<(usize, Option<usize>)> {
    let n0 = skip_blank(text, d.body, d.end);
    let mut n1 = n0;
    while n1 < d.end && (text[n1].is_ascii_alphanumeric() || text[n1] == b'_' || text[n1] >= 0x80) {
        n1 += 1;
    }
    if n1 == n0 {
        return None;
    }
    let params = (text.get(n1) == Some(&b'('))
        .then(|| lex::find_byte(b')', &text[n1..d.end]).map(|k| n1 + k + 1))
        .flatten();
    Some((n1, params))
}

/// The `directives` pass (see the module docs).
pub(crate) fn directives_pass(text: &[u8]) -> Box<dyn Plan> {
    let toks = lex::lex(text);
    let dirs = directives(text, &toks);
    let entities = entities(&dirs);
    // First, every other directive line at once: a preprocessed HIP TU can have hundreds of
    // `#pragma` lines (`unroll`, `GCC diagnostic push`/`pop`, …), each a test of the whole
    // TU when deleted one at a time. The slot is there even
    // with fewer than two lines (empty: skipped), so the items' indices stay the same from
    // one text to the next.
    let lines: Vec<Edit> = entities
        .iter()
        .filter_map(|e| match e {
            Entity::Line(d) => Some(Edit::delete(d.start, d.line_end)),
            _ => None,
        })
        .collect();
    let mut items: Vec<Item> = vec![Item {
        edits: if lines.len() >= 2 { lines } else { Vec::new() },
        on_success: 0,
    }];
    for e in entities {
        // Entities before this one are untouched by its candidates, so the plan of an accepted
        // text has the same items before it: resume at its first item.
        let first = items.len();
        let mut push = |edits: Vec<Edit>| {
            items.push(Item {
                edits,
                on_success: first,
            })
        };
        match e {
            Entity::Group(g) => {
                let (open, close) = (g[0], g[g.len() - 1]);
                push(vec![Edit::delete(open.start, close.line_end)]);
                for w in g.windows(2) {
                    push(vec![
                        Edit::delete(open.start, w[0].line_end),
                        Edit::delete(w[1].start, close.line_end),
                    ]);
                }
            }
            Entity::Define(d) => {
                push(vec![Edit::delete(d.start, d.line_end)]);
                if let Some((name_end, params)) = define_parts(text, &d) {
                    if let Some(p) = params {
                        push(vec![Edit::delete(p, d.end)]);
                    }
                    push(vec![Edit::delete(name_end, d.end)]);
                }
            }
            Entity::Line(d) => push(vec![Edit::delete(d.start, d.line_end)]),
        }
    }
    Box::new(List { items })
}

/// The `directive-tokens` pass: ddmin over each directive's `#name` and the tokens after it,
/// except in `#include` lines and line markers.
pub(crate) fn directive_tokens(text: &[u8]) -> Box<dyn Plan> {
    let toks = lex::lex(text);
    let mut units = Vec::new();
    for d in directives(text, &toks) {
        let word = &text[skip_blank(text, d.start + 1, d.end)..d.body];
        if d.kind == DirKind::Marker || matches!(word, b"include" | b"include_next" | b"import") {
            continue;
        }
        // The `#name` itself first: without it the rest of the line is code (C-Vise's clex
        // sees `#` and `if` as tokens too, so `#if X>1U` can end as `1U`).
        units.push(Unit::new(d.start, d.body, DEL));
        let inner = lex::lex_inline(&text[d.body..d.end]);
        let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_' || b >= 0x80;
        for (i, t) in inner.iter().enumerate() {
            // With the whitespace before it, so deleting the last token leaves no blank.
            let from = if i == 0 { 0 } else { inner[i - 1].end as usize };
            // A token between two words with no blank after it becomes a space, so deleting
            // it cannot fuse them (`#if(X==1` must not become `#ifX==1`).
            let glued = d.body + from > 0
                && word(text[d.body + from - 1])
                && inner
                    .get(i + 1)
                    .is_some_and(|n| n.start == t.end && word(text[d.body + n.start as usize]));
            units.push(Unit::new(
                d.body + from,
                d.body + t.end as usize,
                if glued { SPACE } else { DEL },
            ));
        }
    }
    Box::new(Ddmin::new(units, 8))
}

/// True if `a` followed directly by `b` lexes as those two tokens.
fn stay_apart(a: &[u8], b: &[u8]) -> bool {
    let mut both = Vec::with_capacity(a.len() + b.len());
    both.extend_from_slice(a);
    both.extend_from_slice(b);
    let t = lex::lex(&both);
    t.len() == 2 && t[0].end as usize == a.len() && t[1].start as usize == a.len()
}

/// Appends `tokens` of `src` with the least whitespace that keeps them apart, except that a
/// gap of the original before token index `keep_gap` stays a space.
fn join_tokens(src: &[u8], toks: &[Tok], keep_gap: Option<usize>, out: &mut Vec<u8>) {
    for (i, t) in toks.iter().enumerate() {
        if i > 0 {
            let prev = &toks[i - 1];
            let gap = prev.end < t.start;
            if gap && (keep_gap == Some(i) || !stay_apart(prev.bytes(src), t.bytes(src))) {
                out.push(b' ');
            }
        }
        out.extend_from_slice(t.bytes(src));
    }
}

/// A directive line squeezed: `#name` and its tokens with the least whitespace, comments and
/// line splices gone; the gap between a macro's name and a `(` stays (it tells a function-like
/// macro from an object-like one).
fn squeeze_directive(text: &[u8], d: &Dir) -> Vec<u8> {
    if d.kind == DirKind::Marker {
        // `# 12 "a.c"`: the markers pass's business; kept as it is.
        return text[d.start..d.end].trim_ascii_end().to_vec();
    }
    let mut out = Vec::with_capacity(d.end - d.start);
    out.push(b'#');
    let head = &text[skip_blank(text, d.start + 1, d.end)..d.body];
    out.extend_from_slice(head);
    let body = &text[d.body..d.end];
    let toks = lex::lex_inline(body);
    if let Some(first) = toks.first() {
        if first.start > 0 && (head.is_empty() || !stay_apart(head, first.bytes(body))) {
            out.push(b' ');
        }
        let keep = (d.kind == DirKind::Define).then_some(1);
        join_tokens(body, &toks, keep, &mut out);
    }
    out
}

/// The tokens of `text` as compared by [`one_line`]: directives by their squeezed form.
fn token_seq(text: &[u8]) -> Vec<(Kind, Cow<'_, [u8]>)> {
    lex::lex(text)
        .iter()
        .map(|t| {
            let b = if t.kind == Kind::Directive {
                Cow::Owned(squeeze_directive(text, &dir_of(text, t)))
            } else {
                Cow::Borrowed(t.bytes(text))
            };
            (t.kind, b)
        })
        .collect()
}

/// The text with the least whitespace: tokens glued unless they would fuse, directives
/// squeezed on lines of their own, no comments; with or without a final newline. `None` if
/// the result would not lex to the same tokens.
fn flat(text: &[u8], final_newline: bool) -> Option<Vec<u8>> {
    let toks = lex::lex(text);
    let mut out = Vec::with_capacity(text.len());
    for (i, t) in toks.iter().enumerate() {
        let dir = t.kind == Kind::Directive;
        if i > 0 {
            let prev = &toks[i - 1];
            if dir || prev.kind == Kind::Directive {
                out.push(b'\n');
            } else if prev.end < t.start && !stay_apart(prev.bytes(text), t.bytes(text)) {
                out.push(b' ');
            }
        }
        if dir {
            out.extend(squeeze_directive(text, &dir_of(text, t)));
        } else {
            out.extend_from_slice(t.bytes(text));
        }
    }
    if final_newline && !out.is_empty() {
        out.push(b'\n');
    }
    (token_seq(&out) == token_seq(text)).then_some(out)
}

/// The `one-line` pass: [`flat`] without, then with a final newline, then the squeezed text
/// that keeps line breaks (see `layout::squeeze`); each only when shorter.
pub(crate) fn one_line(text: &[u8]) -> Box<dyn Plan> {
    let mut cands: Vec<Vec<u8>> = Vec::new();
    for c in [
        flat(text, false),
        flat(text, true),
        Some(super::layout::squeeze(text)).filter(|s| token_seq(s) == token_seq(text)),
    ]
    .into_iter()
    .flatten()
    {
        if c.len() < text.len() && !cands.contains(&c) {
            cands.push(c);
        }
    }
    let n = cands.len();
    let items = cands
        .into_iter()
        .map(|c| Item {
            edits: vec![Edit {
                start: 0,
                end: text.len(),
                with: Cow::Owned(c),
            }],
            on_success: n,
        })
        .collect();
    Box::new(List { items })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::passes::{CPass, Hints};
    use proptest::prelude::*;

    fn cands(pass: CPass, s: &str) -> Vec<String> {
        pass.candidates(s.as_bytes(), &Hints::default())
            .map(|c| String::from_utf8(c).unwrap())
            .collect()
    }

    #[test]
    fn conditional_groups_drop_whole_or_keep_one_arm() {
        let s = "a;\n#if X\nb;\n#elif Y\nc;\n#else\nd;\n#endif\ne;\n";
        assert_eq!(
            cands(CPass::Directives, s),
            ["a;\ne;\n", "a;\nb;\ne;\n", "a;\nc;\ne;\n", "a;\nd;\ne;\n"]
        );
    }

    #[test]
    fn nested_groups_and_stray_endif() {
        let s = "#ifdef A\n#ifndef B\nx;\n#endif\n#endif\n#endif\n";
        let c = cands(CPass::Directives, s);
        assert_eq!(c[0], "#endif\n");
        assert_eq!(c[1], "#ifndef B\nx;\n#endif\n#endif\n");
        assert!(c.contains(&"#ifdef A\nx;\n#endif\n#endif\n".to_string()));
        assert_eq!(
            c.last().unwrap(),
            "#ifdef A\n#ifndef B\nx;\n#endif\n#endif\n"
        );
    }

    #[test]
    fn defines_lose_line_then_params_then_body() {
        let s = "#define F(a, b) ((a) + \\\n  (b))\n#  define O 1\n#include <x.h>\n";
        assert_eq!(
            cands(CPass::Directives, s),
            [
                "#  define O 1\n#include <x.h>\n",
                "#define F(a, b)\n#  define O 1\n#include <x.h>\n",
                "#define F\n#  define O 1\n#include <x.h>\n",
                "#define F(a, b) ((a) + \\\n  (b))\n#include <x.h>\n",
                "#define F(a, b) ((a) + \\\n  (b))\n#  define O\n#include <x.h>\n",
                "#define F(a, b) ((a) + \\\n  (b))\n#  define O 1\n",
            ]
        );
    }

    #[test]
    fn other_directive_lines_go_all_at_once_first() {
        let s = "# 1 \"a.hipi\"\n#pragma unroll\nint x;\n#pragma GCC diagnostic push\n#define D 1\n#pragma GCC diagnostic pop\n";
        let c = cands(CPass::Directives, s);
        assert_eq!(c[0], "# 1 \"a.hipi\"\nint x;\n#define D 1\n");
        // Then one at a time, as before.
        assert_eq!(
            c[1],
            "# 1 \"a.hipi\"\nint x;\n#pragma GCC diagnostic push\n#define D 1\n#pragma GCC diagnostic pop\n"
        );
        // A single line has no all-at-once candidate of its own.
        assert_eq!(
            cands(CPass::Directives, "#pragma once\nint x;\n"),
            ["int x;\n"]
        );
    }

    #[test]
    fn line_markers_are_left_alone() {
        assert!(cands(CPass::Directives, "# 1 \"a.c\"\nint x;\n# 2 \"a.c\" 2\n").is_empty());
        assert!(cands(CPass::DirectiveTokens, "# 1 \"a.c\"\nint x;\n").is_empty());
    }

    #[test]
    fn directive_tokens_reach_macro_bodies_and_conditions() {
        let s = "#include <a.h>\n#define M(x) x+1\n#if A && B\n#endif\n";
        let c = cands(CPass::DirectiveTokens, s);
        assert!(c.contains(&"#include <a.h>\n#define M() x+1\n#if A && B\n#endif\n".into()));
        assert!(c.contains(&"#include <a.h>\n#define M(x) x+\n#if A && B\n#endif\n".into()));
        assert!(c.contains(&"#include <a.h>\n#define M(x) x+1\n#if A &&\n#endif\n".into()));
        assert!(c.contains(&"#include <a.h>\n#define M(x) x+1\n A && B\n#endif\n".into()));
        assert!(c.iter().all(|c| c.starts_with("#include <a.h>\n")));
        let c = cands(CPass::DirectiveTokens, "#if(X==1\n");
        assert!(c.contains(&"#if(X==\n".to_string()), "{c:?}");
        assert!(!c.iter().any(|c| c.starts_with("#ifX")), "{c:?}");
    }

    #[test]
    fn one_line_keeps_directives_on_their_own_lines() {
        let s = "/* c */\n#  define  F(a)  a  /* x */\n#define O (1)\nint\n  main ( )\n{\n  return F ( O ) + + 1 ; // y\n}\n";
        let c = cands(CPass::OneLine, s);
        assert_eq!(
            c[0],
            "#define F(a)a\n#define O (1)\nint main(){return F(O)+ +1;}"
        );
        assert_eq!(c[1], format!("{}\n", c[0]));
    }

    #[test]
    fn one_line_does_not_fuse_tokens() {
        let c = cands(CPass::OneLine, "a - -b;\nx = y / *p;\nu8 \"s\";\n'a' b\n");
        assert_eq!(c[0], "a- -b;x=y/ *p;u8 \"s\";'a'b");
    }

    fn c_like() -> impl Strategy<Value = Vec<u8>> {
        let frag = prop::sample::select(vec![
            "int",
            "x",
            "(",
            ")",
            "{",
            "}",
            ";",
            "+",
            "-",
            "/",
            "*",
            "#",
            " ",
            "\n",
            "\n",
            "#if X\n",
            "#ifdef Y\n",
            "#elif 1\n",
            "#else\n",
            "#endif\n",
            "#define ",
            "#define F(a) a\n",
            "#include <a.h>\n",
            "# 1 \"a.c\"\n",
            "#pragma x\n",
            "#  undef Z \\\n Q\n",
            "\"s\"",
            "\"",
            "'",
            "'c'",
            "/* c */",
            "// c\n",
            "\\\n",
            "\t",
            "\r",
            "\\\r",
            "u8",
            "R\"(x)\"",
            "42",
            "\u{e9}",
        ]);
        prop::collection::vec(frag, 0..60).prop_map(|v| v.concat().into_bytes())
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 1500, ..ProptestConfig::default() })]

        /// No panic on any bytes, and every candidate is strictly shorter than the text (so never
        /// the text itself); the one-line candidates keep the tokens.
        #[test]
        fn raw_passes_never_panic_and_always_shrink(text in prop_oneof![c_like(), prop::collection::vec(any::<u8>(), 0..200)]) {
            for pass in [CPass::Directives, CPass::DirectiveTokens, CPass::OneLine] {
                for c in pass.candidates(&text, &Hints::default()).take(500) {
                    prop_assert!(c.len() < text.len(), "{} offered a candidate that is not shorter", pass.name());
                    if pass == CPass::OneLine {
                        prop_assert!(token_seq(&c) == token_seq(&text));
                    }
                }
            }
        }
    }
}
