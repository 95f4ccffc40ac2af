//! Finishing passes: short identifiers, trivial literals and a readable layout.
//!
//! They run once the blind passes reach a fixpoint (C-Reduce's "last" phase): renaming and
//! literal simplification rarely remove tokens, but they make the report shorter and easier to
//! read, and the normalised layout is what a human will paste into a bug report.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};

use crate::lex::{self, Kind};
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
    rename_if(text, |w| !reserved(w))
}

/// [`rename`], trying `__names` too (a user's script decides; for `reduce --test`).
pub(crate) fn rename_all(text: &[u8]) -> Box<dyn Plan> {
    rename_if(text, |w| {
        std::str::from_utf8(w).is_ok_and(|w| !RESERVED.contains(&w))
    })
}

fn rename_if(text: &[u8], renamable: impl Fn(&[u8]) -> bool) -> Box<dyn Plan> {
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
        .filter(|(w, _)| w.len() > name.len() && renamable(w))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fresh_names_skip_used_and_reserved() {
        let used: HashSet<&[u8]> = [&b"a"[..], b"b"].into_iter().collect();
        assert_eq!(fresh_name(&used), b"c");
    }
}
