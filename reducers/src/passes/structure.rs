//! Blind structural passes: declarations, statements at nesting depths, lines, balanced
//! regions and tokens.
//!
//! These are C-Reduce's workhorses (`pass_lines` over topformflat levels, `pass_balanced`,
//! `pass_clex rm-toks`) rebuilt on one lexer scan. Statement chunks are brace-balanced by
//! construction, so unlike topformflat lines a candidate never deletes half a block.

use crate::lex::{self, Kind, Structure, Tok};
use crate::plan::{Cursor, Ddmin, Edit, Plan, Step, Unit, DEL, SPACE};

/// Byte spans of the statements/declarations whose first token sits at brace depth `level`.
/// A span runs from its first token to the next token (so it takes its trailing whitespace
/// along), ends after a depth-0 `;` (outside parentheses), after a closing `}` at `level`
/// (together with a directly following `;`), or after an access label; a preprocessor line is a
/// chunk of its own.
pub(crate) fn chunk_spans(
    text: &[u8],
    toks: &[Tok],
    st: &Structure,
    level: u32,
) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut cur: Option<usize> = None;
    let mut parens = 0u32;
    let span_end = |i: usize| toks.get(i + 1).map_or(text.len(), |t| t.start as usize);
    let last_code = toks.iter().rposition(|t| !is_marker(text, t)).unwrap_or(0);
    let close = |cur: &mut Option<usize>, last: usize, out: &mut Vec<(usize, usize)>| {
        if let Some(first) = cur.take() {
            out.push((toks[first].start as usize, span_end(last)));
        }
    };
    for (i, t) in toks.iter().enumerate() {
        let d = st.depth[i];
        if d < level {
            if i > 0 {
                close(&mut cur, i - 1, &mut out);
            }
            continue;
        }
        if d > level {
            if cur.is_none() {
                cur = Some(i);
                parens = 0;
            }
            continue;
        }
        if t.kind == Kind::Directive {
            if i > 0 {
                close(&mut cur, i - 1, &mut out);
            }
            // A line marker before code is none itself: deleting one alone changes no compile
            // but the lines errors are reported at, and the markers pass removes them all at
            // once. One after all code is litter.
            if !is_marker(text, t) || i > last_code {
                out.push((t.start as usize, span_end(i)));
            }
            continue;
        }
        if cur.is_none() {
            cur = Some(i);
            parens = 0;
        }
        if t.kind != Kind::Punct {
            continue;
        }
        match t.bytes(text) {
            b"(" | b"[" => parens += 1,
            b")" | b"]" => parens = parens.saturating_sub(1),
            b";" if parens == 0 => close(&mut cur, i, &mut out),
            b"}" if st
                .mate_of(i)
                .is_some_and(|open| !lex::opens_requires_body(text, toks, &st.mate, open))
                && !toks.get(i + 1).is_some_and(|n| n.is(text, b";")) =>
            {
                parens = 0;
                close(&mut cur, i, &mut out);
            }
            b":" if i > 0
                && matches!(
                    toks[i - 1].bytes(text),
                    b"public" | b"private" | b"protected"
                ) =>
            {
                close(&mut cur, i, &mut out)
            }
            _ => {}
        }
    }
    if let Some(last) = toks.len().checked_sub(1) {
        close(&mut cur, last, &mut out);
    }
    out
}

/// ddmin over the chunks at brace depth `level` (0 = top-level declarations).
pub(crate) fn chunks(text: &[u8], level: u32) -> Box<dyn Plan> {
    let toks = lex::lex(text);
    let st = lex::structure(text, &toks);
    let units = chunk_spans(text, &toks, &st, level)
        .into_iter()
        .map(|(a, b)| Unit::new(a, b, DEL))
        .collect();
    Box::new(Ddmin::new(units, usize::MAX))
}

/// True if directive token `t` is a line marker (as the markers pass sees them: at the start
/// of its line).
fn is_marker(text: &[u8], t: &Tok) -> bool {
    t.kind == Kind::Directive
        && crate::newline::starts_line(text, t.start as usize)
        && crate::markers::parse_marker(t.bytes(text)).is_some()
}

/// ddmin over physical lines (not line markers: see [`chunk_spans`]).
pub(crate) fn lines(text: &[u8]) -> Box<dyn Plan> {
    let mut units = Vec::new();
    if !lex::too_big(text) {
        let lines: Vec<(usize, usize, bool)> = crate::newline::lines(text)
            .map(|(at, end)| {
                let marker = crate::markers::parse_marker(text[at..end].trim_ascii_end());
                (at, end, marker.is_some())
            })
            .collect();
        let code = |l: &&(usize, usize, bool)| !l.2 && !text[l.0..l.1].trim_ascii().is_empty();
        let last_code = lines.iter().rposition(|l| code(&l)).unwrap_or(0);
        for (k, &(a, b, marker)) in lines.iter().enumerate() {
            if !marker || k > last_code {
                units.push(Unit::new(a, b, DEL));
            }
        }
    }
    Box::new(Ddmin::new(units, usize::MAX))
}

/// ddmin over tokens in groups of at most 8 (bigger groups are the chunk passes' job). A token
/// glued to identifier characters on both sides becomes a space, so deleting it cannot fuse its
/// neighbours into a new identifier.
pub(crate) fn tokens(text: &[u8]) -> Box<dyn Plan> {
    let toks = lex::lex(text);
    let last_code = toks.iter().rposition(|t| !is_marker(text, t)).unwrap_or(0);
    let word = |t: &Tok| matches!(t.kind, Kind::Ident | Kind::Number);
    let units = toks
        .iter()
        .enumerate()
        .filter(|&(i, t)| !is_marker(text, t) || i > last_code)
        .map(|(i, t)| {
            let glued = i > 0
                && toks[i - 1].end == t.start
                && toks
                    .get(i + 1)
                    .is_some_and(|n| n.start == t.end && word(n) && word(&toks[i - 1]));
            Unit::new(
                t.start as usize,
                t.end as usize,
                if glued { SPACE } else { DEL },
            )
        })
        .collect();
    Box::new(Ddmin::new(units, 8))
}

/// The token that names the parentheses at `open`: the word right before them (`f(…)`,
/// `__attribute__((…))`), or `sizeof` of `sizeof...(…)`.
fn call_head(text: &[u8], toks: &[lex::Tok], open: usize) -> Option<usize> {
    let before = open.checked_sub(1)?;
    if toks[before].kind == Kind::Ident {
        return Some(before);
    }
    let word = before.checked_sub(1)?;
    (toks[before].is(text, b"...") && toks[word].bytes(text) == b"sizeof").then_some(word)
}

/// True when an operand of an expression starts right after `tok`: an operator or an opening
/// that no type or declarator follows (`= f(x)`, `return g(y)`, `(h(z)`, `, sizeof(T)`).
/// `*`, `&` and `<` are left out: `int *f()`, `T &g()` and `vector<h()>` declare or name types
/// as often as they compute.
fn starts_operand(text: &[u8], tok: &lex::Tok) -> bool {
    const OPERATORS: &[&[u8]] = &[
        b"=", b"(", b",", b"[", b"?", b"+", b"-", b"/", b"%", b"!", b"~", b"|", b"^", b"&&", b"||",
        b"==", b"!=", b"<=", b">=", b"+=", b"-=", b"*=", b"/=", b"<<", b">>",
    ];
    (tok.kind == Kind::Punct && OPERATORS.contains(&tok.bytes(text)))
        || (tok.kind == Kind::Ident && tok.bytes(text) == b"return")
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Delim {
    /// With the start of the name right before it, if any (`f(…)`, `__attribute__((…))`), and
    /// whether the whole is an operand, a value `0` can stand for.
    Paren {
        head: Option<u32>,
        value: bool,
    },
    Bracket,
    Brace {
        after_head: bool,
    },
    Angle,
}

/// Balanced `()` `[]` `{}` `<>` regions, outermost-last-first (by end, descending). Variants per
/// region: braces after `)` or a name become `;` or `{}` (body → declaration / empty body),
/// other braces are deleted or emptied; parentheses are deleted, emptied or unwrapped, then
/// deleted with the name before them, then (an operand) replaced with the name by `0`; brackets
/// and angles are deleted or emptied.
pub(crate) struct Balanced {
    /// `(start, end, delimiter)`, sorted by `end` descending.
    regions: Vec<(u32, u32, Delim)>,
}

pub(crate) fn balanced(text: &[u8]) -> Box<dyn Plan> {
    let toks = lex::lex(text);
    let st = lex::structure(text, &toks);
    let mut regions = Vec::new();
    for (i, t) in toks.iter().enumerate() {
        let Some(j) = st.mate_of(i).filter(|&j| j > i) else {
            continue;
        };
        let delim = match text[t.start as usize] {
            b'(' => {
                let head = call_head(text, &toks, i);
                Delim::Paren {
                    head: head.map(|h| toks[h].start),
                    value: head.is_some_and(|h| h > 0 && starts_operand(text, &toks[h - 1])),
                }
            }
            b'[' => Delim::Bracket,
            _ => Delim::Brace {
                after_head: i > 0
                    && (toks[i - 1].is(text, b")") || toks[i - 1].kind == Kind::Ident),
            },
        };
        regions.push((t.start, toks[j].end, delim));
    }
    for (a, b) in lex::angle_spans(text, &toks) {
        regions.push((a as u32, b as u32, Delim::Angle));
    }
    regions.sort_by(|x, y| y.1.cmp(&x.1).then(x.0.cmp(&y.0)));
    Box::new(Balanced { regions })
}

impl Balanced {
    fn variant(&self, (start, end, delim): (u32, u32, Delim), v: usize) -> Option<Vec<Edit>> {
        let (s, e) = (start as usize, end as usize);
        let inner_empty = e - s <= 2;
        Some(match (delim, v) {
            (Delim::Brace { after_head: true }, 0) => vec![Edit::replace(s, e, b";")],
            (Delim::Brace { after_head: true }, 1) if !inner_empty => {
                vec![Edit::replace(s, e, b"{}")]
            }
            (Delim::Brace { after_head: false }, 0) => vec![Edit::delete(s, e)],
            (Delim::Brace { after_head: false }, 1) if !inner_empty => {
                vec![Edit::replace(s, e, b"{}")]
            }
            (Delim::Paren { .. }, 0) | (Delim::Bracket, 0) | (Delim::Angle, 0) => {
                vec![Edit::delete(s, e)]
            }
            (Delim::Paren { .. }, 1) if !inner_empty => vec![Edit::replace(s, e, b"()")],
            (Delim::Bracket, 1) if !inner_empty => vec![Edit::replace(s, e, b"[]")],
            (Delim::Angle, 1) if !inner_empty => vec![Edit::replace(s, e, b"<>")],
            (Delim::Paren { .. }, 2) if !inner_empty => {
                vec![Edit::delete(s, s + 1), Edit::delete(e - 1, e)]
            }
            // The name with its parentheses: an empty `__attribute__(())` that neither half
            // can leave alone, a call, `alignas(8)`, `noexcept(…)`.
            (Delim::Paren { head: Some(h), .. }, 3) => vec![Edit::delete(h as usize, e)],
            // A value computed by a call or `sizeof` becomes a constant: what the call named
            // may then go, and the code around it stays valid where an integer fits.
            (
                Delim::Paren {
                    head: Some(h),
                    value: true,
                },
                4,
            ) => {
                vec![Edit::replace(h as usize, e, b"0")]
            }
            _ => return None,
        })
    }
}

const VARIANTS: u64 = 5;

impl Plan for Balanced {
    /// Cursor: `[u64::MAX - end threshold, variant, _]`; regions with `end <= threshold` remain.
    fn step(&self, text: &[u8], at: Cursor) -> Option<Step> {
        let mut threshold = u64::MAX - at[0];
        let mut v = at[1];
        loop {
            let k = self.regions.partition_point(|r| u64::from(r.1) > threshold);
            let &region = self.regions.get(k)?;
            while v < VARIANTS {
                let edits = self.variant(region, v as usize);
                v += 1;
                if let Some(edits) = edits.filter(|e| crate::plan::shrinks(text.len(), e)) {
                    return Some(Step {
                        edits,
                        next: [u64::MAX - threshold, v, 0],
                        on_success: [u64::MAX - u64::from(region.0), 0, 0],
                    });
                }
            }
            threshold = u64::from(region.1) - 1;
            v = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spans(text: &str, level: u32) -> Vec<&str> {
        let t = text.as_bytes();
        let toks = lex::lex(t);
        let st = lex::structure(t, &toks);
        chunk_spans(t, &toks, &st, level)
            .into_iter()
            .map(|(a, b)| &text[a..b])
            .collect()
    }

    #[test]
    fn line_markers_before_code_are_no_units() {
        let src = "# 1 \"m.cpp\"\nint a;\n# 5 \"h.h\" 3\nint b;\n# 9 \"h.h\"\n";
        assert_eq!(spans(src, 0), ["int a;\n", "int b;\n", "# 9 \"h.h\"\n"]);
        let lines: Vec<String> = crate::passes::CPass::Lines
            .candidates(src.as_bytes(), &crate::passes::Hints::default())
            .map(|c| String::from_utf8(c).unwrap())
            .collect();
        assert!(
            lines.iter().all(|c| c.starts_with("# 1 \"m.cpp\"\n")),
            "{lines:#?}"
        );
        assert!(
            lines.iter().all(|c| c.contains("# 5 \"h.h\" 3\n")),
            "{lines:#?}"
        );
    }

    #[test]
    fn chunks_at_levels() {
        let src = "#pragma x\nint a; struct S { int b; void f() { g(); } }; namespace n { int c; }\nfor(;;) x;";
        assert_eq!(
            spans(src, 0),
            [
                "#pragma x\n",
                "int a; ",
                "struct S { int b; void f() { g(); } }; ",
                "namespace n { int c; }\n",
                "for(;;) x;"
            ]
        );
        assert_eq!(spans(src, 1), ["int b; ", "void f() { g(); } ", "int c; "]);
        assert_eq!(spans(src, 2), ["g(); "]);
    }

    #[test]
    fn a_requires_expression_body_does_not_end_a_declaration() {
        let src = "template <class T> requires requires { typename T::t; } struct S<T> { };\n\
                   template <class T> concept C = requires (T a) { a.f(); } && true;\n\
                   template <class T> void g(T) requires (C<T>) { }\nint z;";
        assert_eq!(
            spans(src, 0),
            [
                "template <class T> requires requires { typename T::t; } struct S<T> { };\n",
                "template <class T> concept C = requires (T a) { a.f(); } && true;\n",
                "template <class T> void g(T) requires (C<T>) { }\n",
                "int z;"
            ]
        );
    }

    #[test]
    fn balanced_variants_in_order() {
        let text = b"void f() { g(a); }";
        let plan = balanced(text);
        let mut at = crate::plan::START;
        let mut seen = Vec::new();
        while let Some(s) = plan.step(text, at) {
            seen.push(String::from_utf8(crate::plan::apply(text, &s.edits)).unwrap());
            at = s.next;
        }
        assert_eq!(
            seen,
            [
                "void f() ;",
                "void f() {}",
                "void f() { g; }",
                "void f() { g(); }",
                "void f() { ga; }",
                "void f() { ; }",
                "void f { g(a); }",
                "void  { g(a); }"
            ]
        );
    }

    /// Every candidate of `plan` on `text`, as strings.
    fn all_candidates(text: &str, plan: &dyn Plan) -> Vec<String> {
        let mut at = crate::plan::START;
        let mut seen = Vec::new();
        while let Some(s) = plan.step(text.as_bytes(), at) {
            seen.push(String::from_utf8(crate::plan::apply(text.as_bytes(), &s.edits)).unwrap());
            at = s.next;
        }
        seen
    }

    #[test]
    fn an_operand_call_or_sizeof_becomes_zero() {
        let text = "int n = f(a) + sizeof...(T);";
        let seen = all_candidates(text, &*balanced(text.as_bytes()));
        assert!(seen.contains(&"int n = f(a) + 0;".to_string()), "{seen:#?}");
        assert!(
            seen.contains(&"int n = 0 + sizeof...(T);".to_string()),
            "{seen:#?}"
        );
        // A declarator's parentheses are no value.
        let decl = "int *f(int a); T g(int b);";
        let seen = all_candidates(decl, &*balanced(decl.as_bytes()));
        assert!(!seen.iter().any(|c| c.contains('0')), "{seen:#?}");
    }
}
