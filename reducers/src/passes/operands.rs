//! The main file's statements that use a header, cut down to one of their operands while the
//! headers are still there.
//!
//! A crash-on-valid keeps every header its code uses, and one logging statement can hold a
//! whole library: `std::cout << "value " << v << std::endl;` in the function the crash needs
//! keeps `<iostream>`'s streams, locales and strings valid and compiled, hundreds of KB
//! that the closure cannot cut and the blind passes grind through one test at a time. Such a
//! statement is often needed only for one operand (a use of `v`); written as `v;` it names
//! no header, and the closure then drops what only it needed. Deleting the statement, which
//! the main file's chunks try first, loses the crash when the operand matters.

use std::borrow::Cow;

use super::guided::MainText;
use crate::lex::{self, Kind, Tok};
use crate::plan::{Edit, Empty, Item, List, Plan};

/// Candidates offered per statement, and in all: each is a test of the whole file.
const PER_STATEMENT: usize = 4;
const MAX_CANDIDATES: usize = 32;

/// One candidate per operand of each main-file expression statement that names something
/// qualified (`std::cout`) or holds a string literal (`printf("%d", x)`), the usual marks of a
/// header's API: the operands of a chain of `<<`, `>>`, `+`, `-`, `|`, `&&`, `||` or `,`, or
/// a call's arguments, each written alone as the statement (`v;`). Literals and qualified
/// operands are not offered: they are the header's side.
pub(crate) fn main_operands(text: &[u8]) -> Box<dyn Plan> {
    let Some(main) = MainText::of(text) else {
        return Box::new(Empty);
    };
    let (toks, st) = (&main.toks, &main.st);
    let mut items = Vec::new();
    for semi in (0..toks.len()).filter(|&k| toks[k].is(text, b";")) {
        let Some(start) = statement_start(text, toks, st, semi) else {
            continue;
        };
        let span = (toks[start].start as usize, toks[semi].start as usize);
        if !main.inside(span.0, span.1) || !names_a_header(text, &toks[start..semi]) {
            continue;
        }
        // After a success the plan is made again on the new text, where this statement's
        // candidates are gone: it resumes with the next statement's.
        let first_of_statement = items.len();
        for op in operands(text, toks, st, start..semi)
            .into_iter()
            .filter(|op| offered(text, &toks[op.clone()]))
            .take(PER_STATEMENT)
        {
            let with = text[toks[op.start].start as usize..toks[op.end - 1].end as usize].to_vec();
            items.push(Item {
                edits: vec![Edit {
                    start: span.0,
                    end: span.1,
                    with: Cow::Owned(with),
                }],
                on_success: first_of_statement,
            });
        }
        if items.len() >= MAX_CANDIDATES {
            break;
        }
    }
    Box::new(List { items })
}

/// The first token of the statement that token `semi` (a `;`) ends: right after the `;`,
/// `{` or `}` before it at the same depth, when that is inside a block (not at file scope:
/// those are declarations) and the `;` is not in parentheses (a `for` head).
fn statement_start(text: &[u8], toks: &[Tok], st: &lex::Structure, semi: usize) -> Option<usize> {
    let mut k = semi;
    loop {
        k = k.checked_sub(1)?;
        let t = &toks[k];
        if t.is(text, b";") || t.is(text, b"}") {
            break;
        }
        if t.is(text, b"{") {
            st.mate_of(k).filter(|&m| m > semi)?;
            break;
        }
        if t.is(text, b"(") && st.mate_of(k).is_some_and(|m| m > semi) {
            return None;
        }
        if let Some(m) = st.mate_of(k).filter(|&m| m < k) {
            k = m;
        }
    }
    // Inside a block: some `{` before `k` is still open at `semi`.
    let in_block = (0..=k)
        .rev()
        .any(|j| toks[j].is(text, b"{") && st.mate_of(j).is_some_and(|m| m > semi));
    (in_block && k + 1 < semi).then_some(k + 1)
}

/// True when the tokens name something qualified (`a::b`) or hold a string literal.
fn names_a_header(text: &[u8], toks: &[Tok]) -> bool {
    toks.iter()
        .any(|t| t.is(text, b"::") || t.kind == Kind::Str)
}

/// Binary operators whose chains are split into operands.
const SPLIT_AT: &[&[u8]] = &[b"<<", b">>", b"+", b"-", b"|", b"&&", b"||", b","];

/// The operands of the expression statement `range`: of its top-level operator chain, or the
/// arguments of the call it is. Empty when it looks like a declaration (two words side by
/// side, `T x(…)`, or a keyword first).
fn operands(
    text: &[u8],
    toks: &[Tok],
    st: &lex::Structure,
    range: std::ops::Range<usize>,
) -> Vec<std::ops::Range<usize>> {
    const KEYWORDS: &[&[u8]] = &[
        b"return",
        b"if",
        b"for",
        b"while",
        b"do",
        b"switch",
        b"case",
        b"goto",
        b"break",
        b"continue",
        b"typedef",
        b"using",
        b"static",
        b"const",
        b"constexpr",
        b"auto",
        b"template",
        b"else",
        b"throw",
        b"co_return",
        b"co_yield",
    ];
    let first = &toks[range.start];
    if first.kind == Kind::Ident && KEYWORDS.contains(&first.bytes(text)) {
        return Vec::new();
    }
    let mut top = Vec::new();
    let mut k = range.start;
    while k < range.end {
        top.push(k);
        k = st
            .mate_of(k)
            .filter(|&m| m > k && m < range.end)
            .unwrap_or(k)
            + 1;
    }
    let word =
        |k: usize| toks[k].kind == Kind::Ident || toks[k].is(text, b">") || toks[k].is(text, b">>");
    if top
        .windows(2)
        .any(|w| word(w[0]) && toks[w[1]].kind == Kind::Ident)
    {
        return Vec::new();
    }
    let splits: Vec<usize> = top
        .iter()
        .copied()
        .filter(|&k| toks[k].kind == Kind::Punct && SPLIT_AT.contains(&toks[k].bytes(text)))
        .collect();
    if !splits.is_empty() {
        let mut out = Vec::new();
        let mut from = range.start;
        for s in splits.into_iter().chain([range.end]) {
            if from < s {
                out.push(from..s);
            }
            from = s + 1;
        }
        return out;
    }
    // A call: `callee(args)` with the `)` last.
    let last = range.end - 1;
    match st.mate_of(last) {
        Some(open) if toks[last].is(text, b")") && open > range.start && open + 1 < last => {
            super::unwrap::split_commas(text, toks, open + 1..last)
        }
        _ => Vec::new(),
    }
}

/// True when the operand is worth a test alone: not a literal, nothing qualified, and not
/// empty.
fn offered(text: &[u8], op: &[Tok]) -> bool {
    !op.is_empty()
        && !op
            .iter()
            .all(|t| matches!(t.kind, Kind::Str | Kind::Number | Kind::Char))
        && !op.iter().any(|t| t.is(text, b"::"))
}

#[cfg(test)]
mod tests {
    use crate::passes::{candidate_strings, CPass};

    fn all(text: &str) -> Vec<String> {
        candidate_strings(CPass::MainOperands, text)
    }

    const HEADER: &str =
        "# 1 \"m.cpp\"\n# 1 \"io.h\" 1 3\nnamespace std { int cout; }\n# 2 \"m.cpp\" 2\n";

    #[test]
    fn a_logging_statement_becomes_its_operand() {
        let text = format!(
            "{HEADER}template <int &T> void f() {{\n  std::cout << \"value \" << T << std::endl;\n}}\n"
        );
        assert_eq!(
            all(&text),
            [format!("{HEADER}template <int &T> void f() {{\n  T;\n}}\n")]
        );
    }

    #[test]
    fn a_call_with_a_string_offers_its_other_arguments() {
        let text = format!("{HEADER}void g(int x) {{ printf(\"%d %d\", x, h(x)); }}\n");
        assert_eq!(
            all(&text),
            [
                format!("{HEADER}void g(int x) {{ x; }}\n"),
                format!("{HEADER}void g(int x) {{ h(x); }}\n"),
            ]
        );
    }

    #[test]
    fn declarations_headers_and_plain_statements_are_left_alone() {
        let text = format!(
            "{HEADER}void g(int x) {{\n  std::vector<int> v(x, y);\n  return std::f(x) + 1;\n  \
             x = y + z;\n  for (int i = 0; i < n; i++) std::h(i, 2);\n}}\n"
        );
        assert!(all(&text).is_empty(), "{:#?}", all(&text));
        // Nothing of a header's own text.
        let only_header = "# 1 \"m.cpp\"\n# 1 \"io.h\" 1 3\nvoid f() { std::g(x, \"a\"); }\n";
        assert!(all(only_header).is_empty());
    }
}
