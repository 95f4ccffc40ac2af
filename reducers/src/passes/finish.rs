//! Finishing passes: short identifiers, trivial literals and a readable layout.
//!
//! They run once the blind passes reach a fixpoint (C-Reduce's "last" phase): renaming and
//! literal simplification rarely remove tokens, but they make the report shorter and easier to
//! read, and the normalised layout is what a human will paste into a bug report.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};

use crate::lex::{self, Kind, Tok};
use crate::plan::{Ddmin, Edit, Item, List, Plan, Unit, EMPTY_STR, ZERO};

/// C, C++, CUDA/HIP and GNU words that must keep their spelling.
const RESERVED: &[&str] = &[
    "alignas",
    "alignof",
    "and",
    "and_eq",
    "asm",
    "auto",
    "bitand",
    "bitor",
    "bool",
    "break",
    "case",
    "catch",
    "char",
    "char8_t",
    "char16_t",
    "char32_t",
    "class",
    "co_await",
    "co_return",
    "co_yield",
    "compl",
    "concept",
    "const",
    "consteval",
    "constexpr",
    "constinit",
    "const_cast",
    "continue",
    "decltype",
    "default",
    "delete",
    "do",
    "double",
    "dynamic_cast",
    "else",
    "enum",
    "explicit",
    "export",
    "extern",
    "false",
    "final",
    "float",
    "for",
    "friend",
    "goto",
    "if",
    "import",
    "inline",
    "int",
    "long",
    "module",
    "mutable",
    "namespace",
    "new",
    "noexcept",
    "not",
    "not_eq",
    "nullptr",
    "operator",
    "or",
    "or_eq",
    "override",
    "private",
    "protected",
    "public",
    "register",
    "reinterpret_cast",
    "requires",
    "restrict",
    "return",
    "short",
    "signed",
    "sizeof",
    "static",
    "static_assert",
    "static_cast",
    "struct",
    "switch",
    "template",
    "this",
    "thread_local",
    "throw",
    "true",
    "try",
    "typedef",
    "typeid",
    "typename",
    "union",
    "unsigned",
    "using",
    "virtual",
    "void",
    "volatile",
    "wchar_t",
    "while",
    "xor",
    "xor_eq",
    "_Alignas",
    "_Alignof",
    "_Atomic",
    "_Bool",
    "_Complex",
    "_Generic",
    "_Imaginary",
    "_Noreturn",
    "_Static_assert",
    "_Thread_local",
    "main",
    "std",
    "va_list",
    "size_t",
];

fn reserved(word: &[u8]) -> bool {
    // Double-underscore names are compiler extensions (`__attribute__`, `__builtin_*`, …).
    word.starts_with(b"__") || std::str::from_utf8(word).map_or(true, |w| RESERVED.contains(&w))
}

/// The shortest name (a..z, aa..zz, …) that is neither used in the text nor reserved.
fn fresh_name(used: &HashSet<&[u8]>) -> Vec<u8> {
    for len in 1..=4u32 {
        let count = 26usize.pow(len);
        for mut k in 0..count {
            let mut name = vec![b'a'; len as usize];
            for c in name.iter_mut().rev() {
                *c = b'a' + (k % 26) as u8;
                k /= 26;
            }
            if !used.contains(name.as_slice()) && !reserved(&name) {
                return name;
            }
        }
    }
    b"zzzzz".to_vec()
}

/// Renames each identifier, largest saving first, to the shortest unused name.
pub(crate) fn rename(text: &[u8]) -> Box<dyn Plan> {
    let toks = lex::lex(text);
    let mut occurrences: HashMap<&[u8], Vec<usize>> = HashMap::new();
    for (i, t) in toks.iter().enumerate() {
        if t.kind == Kind::Ident {
            occurrences.entry(t.bytes(text)).or_default().push(i);
        }
    }
    let used: HashSet<&[u8]> = occurrences.keys().copied().collect();
    let name = fresh_name(&used);
    let mut idents: Vec<(&[u8], &Vec<usize>)> = occurrences
        .iter()
        .filter(|(w, _)| w.len() > name.len() && !reserved(w))
        .map(|(w, v)| (*w, v))
        .collect();
    let saving = |(w, v): &(&[u8], &Vec<usize>)| v.len() * (w.len() - name.len());
    idents.sort_by(|a, b| saving(b).cmp(&saving(a)).then(a.0.cmp(b.0)));
    let items = idents
        .iter()
        .enumerate()
        .map(|(k, (_, occ))| Item {
            edits: occ
                .iter()
                .map(|&i| Edit {
                    start: toks[i].start as usize,
                    end: toks[i].end as usize,
                    with: Cow::Owned(name.clone()),
                })
                .collect(),
            // The renamed identifier leaves the list, so the next one moves up to index `k`.
            on_success: k,
        })
        .collect();
    Box::new(List { items })
}

/// ddmin over literals: numbers become `0`, plain strings `""`.
pub(crate) fn literals(text: &[u8]) -> Box<dyn Plan> {
    let units = lex::lex(text)
        .iter()
        .filter_map(|t| {
            let b = t.bytes(text);
            let with = match t.kind {
                Kind::Number if b != b"0" => ZERO,
                Kind::Str if b.first() == Some(&b'"') && b.len() > 2 => EMPTY_STR,
                _ => return None,
            };
            Some(Unit::new(t.start as usize, t.end as usize, with))
        })
        .collect();
    Box::new(Ddmin::new(units, usize::MAX))
}

/// Whether two adjacent tokens can be written without a space between them without changing
/// how they lex. Deliberately conservative: only pairs that can never fuse.
fn tight(text: &[u8], a: &Tok, b: &Tok) -> bool {
    let (x, y) = (a.bytes(text), b.bytes(text));
    let word = |t: &Tok| t.kind == Kind::Ident;
    let closes = |s: &[u8]| matches!(s, b")" | b"]");
    (b.kind == Kind::Punct && matches!(y, b")" | b"]" | b";" | b","))
        || (a.kind == Kind::Punct && matches!(x, b"(" | b"["))
        || (matches!(y, b"(" | b"[") && (word(a) || closes(x) || (y == b"(" && x == b">")))
        || (x == b"::" && (word(b) || y == b"~"))
        || (y == b"::" && (word(a) || x == b">"))
        || (matches!(x, b"." | b"->") && word(b))
        || (matches!(y, b"." | b"->") && (word(a) || closes(x)))
        || (matches!(x, b"~" | b"!") && (word(b) || y == b"("))
}

/// Lays the tokens out one statement per line, indented two spaces per brace, with a single
/// space only where one is needed; `indent` false drops the indentation.
pub(crate) fn pretty(text: &[u8], indent: bool) -> Vec<u8> {
    let toks = lex::lex(text);
    let mut out = Vec::with_capacity(text.len());
    let mut depth = 0usize;
    let mut parens = 0usize;
    let mut newline = true;
    for (i, t) in toks.iter().enumerate() {
        let b = t.bytes(text);
        let is = |s: &[u8]| t.kind == Kind::Punct && b == s;
        if is(b"}") {
            depth = depth.saturating_sub(1);
            if !newline {
                out.push(b'\n');
                newline = true;
            }
        }
        if t.kind == Kind::Directive && !newline {
            out.push(b'\n');
            newline = true;
        }
        if newline {
            if indent && t.kind != Kind::Directive {
                out.resize(out.len() + 2 * depth, b' ');
            }
        } else if !tight(text, &toks[i - 1], t) {
            out.push(b' ');
        }
        out.extend_from_slice(b);
        newline = false;
        if is(b"(") || is(b"[") {
            parens += 1;
        } else if is(b")") || is(b"]") {
            parens = parens.saturating_sub(1);
        }
        let next_glues = toks
            .get(i + 1)
            .is_some_and(|n| n.kind == Kind::Punct && matches!(n.bytes(text), b";" | b"," | b")"));
        let brk = t.kind == Kind::Directive
            || (is(b";") && parens == 0)
            || is(b"{")
            || (is(b"}") && !next_glues);
        if is(b"{") {
            depth += 1;
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

/// Every run of whitespace squeezed to one byte (a newline if the run had one). Keeps
/// whitespace-only texts non-empty and is the fallback when pretty-printing does not shrink.
pub(crate) fn squeeze(text: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len());
    let mut i = 0;
    while i < text.len() {
        let run = text[i..]
            .iter()
            .take_while(|b| b.is_ascii_whitespace())
            .count();
        if run == 0 {
            out.push(text[i]);
            i += 1;
        } else {
            let nl = text[i..i + run].contains(&b'\n');
            out.push(if nl { b'\n' } else { b' ' });
            i += run;
        }
    }
    out
}

/// The whole text pretty-printed; if that is not shorter, without indentation; else squeezed.
pub(crate) fn normalise(text: &[u8]) -> Box<dyn Plan> {
    let whole = |v: Vec<u8>| {
        vec![Edit {
            start: 0,
            end: text.len(),
            with: Cow::Owned(v),
        }]
    };
    Box::new(List {
        items: vec![
            Item {
                edits: whole(pretty(text, true)),
                on_success: 3,
            },
            Item {
                edits: whole(pretty(text, false)),
                on_success: 3,
            },
            Item {
                edits: whole(squeeze(text)),
                on_success: 3,
            },
        ],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pretty_layout() {
        let src = b"namespace a{struct  X ;}\n#pragma once\nvoid f(int*x){for(int i=0;i<1;i++){x -> y[i]=!g();}}";
        let want = "namespace a {\n  struct X;\n}\n#pragma once\nvoid f(int * x) {\n  for(int i = 0; i < 1; i ++) {\n    x->y[i] = !g();\n  }\n}\n";
        assert_eq!(String::from_utf8(pretty(src, true)).unwrap(), want);
        let again = pretty(want.as_bytes(), true);
        assert_eq!(String::from_utf8(again).unwrap(), want);
    }

    #[test]
    fn fresh_names_skip_used_and_reserved() {
        let used: HashSet<&[u8]> = [&b"a"[..], b"b"].into_iter().collect();
        assert_eq!(fresh_name(&used), b"c");
    }
}
