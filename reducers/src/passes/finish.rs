//! Finishing passes: short identifiers, trivial literals and a readable layout.
//!
//! They run once the blind passes reach a fixpoint (C-Reduce's "last" phase): renaming and
//! literal simplification rarely remove tokens, but they make the report shorter and easier to
//! read, and the normalised layout is what a human will paste into a bug report.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};

use crate::lex::{self, Kind};
use crate::plan::{Cursor, Ddmin, Edit, Item, List, Plan, Step, Unit, CONST, EMPTY_STR, INT, ZERO};

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
    let declared = declared_here(text);
    rename_if(text, |w| !reserved(w) || declared.contains(w))
}

/// The `__names` the text itself declares as a parameter or variable (`template <class _Tp,
/// _Tp __v>`, `int __n;`): a name right after a type or `...` and right before `,` `>` `=`
/// `;` or `)`. libstdc++'s code keeps them through a reduction; they are no compiler's.
fn declared_here(text: &[u8]) -> HashSet<&[u8]> {
    let toks = lex::lex(text);
    let mut out = HashSet::new();
    for i in 1..toks.len().saturating_sub(1) {
        let w = toks[i].bytes(text);
        let after_type = toks[i - 1].kind == Kind::Ident || toks[i - 1].is(text, b"...");
        let ends = [&b","[..], b">", b"=", b";", b")"]
            .iter()
            .any(|p| toks[i + 1].is(text, p));
        if toks[i].kind == Kind::Ident
            && w.starts_with(b"__")
            && !w.starts_with(b"__builtin")
            && after_type
            && ends
        {
            out.insert(w);
        }
    }
    out
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

/// ddmin over literals and types: numbers become `0`, plain strings `""`, a spelled-out integer
/// type (`unsigned long`, `short`, `long long int`) becomes `int`, `constexpr` becomes `const`
/// (where deleting it fails: a static member's in-class initialiser needs one of them);
/// first, every type parameter's `typename` becomes `class` (the same declaration, three
/// bytes shorter). Before that, and again after every success, each string literal of a
/// concatenation (`"a" "b"`) is deleted on its own (see [`Literals`]).
pub(crate) fn literals(text: &[u8]) -> Box<dyn Plan> {
    let toks = lex::lex(text);
    let mut units: Vec<Unit> = toks
        .iter()
        .filter_map(|t| {
            let b = t.bytes(text);
            let with = match t.kind {
                Kind::Number if b != b"0" => ZERO,
                Kind::Str if b.first() == Some(&b'"') && b.len() > 2 => EMPTY_STR,
                Kind::Ident if b == b"constexpr" => CONST,
                _ => return None,
            };
            Some(Unit::new(t.start as usize, t.end as usize, with))
        })
        .collect();
    units.extend(integer_types(text, &toks).map(|(a, b)| Unit::new(a, b, INT)));
    units.sort_by_key(|u| u.start);
    let concatenated = concatenated(&toks);
    let removes = concatenated
        .iter()
        .map(|t| units.binary_search_by_key(&t.start, |u| u.start).ok())
        .collect();
    let mut plan = Ddmin::new(units, usize::MAX);
    plan.prelude = concatenated
        .iter()
        .map(|t| vec![Edit::delete(t.start as usize, t.end as usize)])
        .collect();
    let class: Vec<Edit> = (1..toks.len().saturating_sub(1))
        .filter(|&i| type_parameter_keyword(text, &toks, i))
        .map(|i| Edit::replace(toks[i].start as usize, toks[i].end as usize, b"class"))
        .collect();
    if !class.is_empty() {
        plan.prelude.push(class);
    }
    Box::new(Literals { plan, removes })
}

/// The string literals next to another one (`"a" "b"`, `R"(x)" ""`): the literal they make
/// together is still one without any one of them.
fn concatenated(toks: &[lex::Tok]) -> Vec<lex::Tok> {
    let string = |i: usize| toks.get(i).is_some_and(|t| t.kind == Kind::Str);
    (0..toks.len())
        .filter(|&i| string(i) && ((i > 0 && string(i - 1)) || string(i + 1)))
        .map(|i| toks[i])
        .collect()
}

/// [`literals`]' schedule: a [`Ddmin`] whose prelude starts with one deletion per string
/// literal of a concatenation. Emptying strings is what makes those deletions work (`"(x)"
/// "str"` becomes `"" ""`, and then either one can go), and the finishing passes run once, so
/// the deletions are retried after every success here: no later pass would take them, and a
/// second reduction of the result would. A successful deletion restarts the prelude and keeps
/// the ddmin's place, one unit lower when it deleted a unit before it.
struct Literals {
    plan: Ddmin,
    /// For each concatenation deletion (the prelude's first items), the unit it deletes.
    removes: Vec<Option<usize>>,
}

impl Plan for Literals {
    fn step(&self, text: &[u8], at: Cursor) -> Option<Step> {
        let mut step = self.plan.step(text, at)?;
        // A prelude step resumes after its own item; a ddmin step at the prelude's start.
        let Some(item) = (step.on_success[0] as usize).checked_sub(1) else {
            return Some(step);
        };
        if let Some(removed) = self.removes.get(item) {
            let [_, chunk, end] = step.on_success;
            let shift = removed.is_some_and(|u| (u as u64) < end);
            step.on_success = [0, chunk, end - u64::from(shift)];
        }
        Some(step)
    }
}

/// Byte spans of the integer types spelled with more than `int`: maximal runs of `unsigned`,
/// `signed`, `long`, `short`, `int`, `char` and `__int128` with at least one word that is
/// neither `int` nor `char` (plain `char` stays: strings and pointers to it are common).
fn integer_types<'a>(
    text: &'a [u8],
    toks: &'a [lex::Tok],
) -> impl Iterator<Item = (usize, usize)> + 'a {
    const WORDS: [&[u8]; 7] = [
        b"unsigned",
        b"signed",
        b"long",
        b"short",
        b"int",
        b"char",
        b"__int128",
    ];
    let word = move |i: usize| toks[i].kind == Kind::Ident && WORDS.contains(&toks[i].bytes(text));
    let mut i = 0;
    std::iter::from_fn(move || {
        while i < toks.len() {
            if !word(i) {
                i += 1;
                continue;
            }
            let first = i;
            while i < toks.len() && word(i) {
                i += 1;
            }
            let wide = (first..i).any(|k| !matches!(toks[k].bytes(text), b"int" | b"char"));
            if wide {
                return Some((toks[first].start as usize, toks[i - 1].end as usize));
            }
        }
        None
    })
}

/// True when token `i` is the `typename` of a type parameter: after `<` or `,`, and before
/// `...`, `,`, `>`, `=` or a name one of those follows (not `typename T::type`).
fn type_parameter_keyword(text: &[u8], toks: &[lex::Tok], i: usize) -> bool {
    let ends = |k: usize| {
        toks.get(k).is_some_and(|t| {
            [&b"..."[..], b",", b">", b"="]
                .iter()
                .any(|p| t.is(text, p))
        })
    };
    toks[i].kind == Kind::Ident
        && toks[i].bytes(text) == b"typename"
        && (toks[i - 1].is(text, b"<") || toks[i - 1].is(text, b","))
        && (ends(i + 1) || (toks[i + 1].kind == Kind::Ident && ends(i + 2)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every candidate `pass` offers on `text`, as [`CPass::candidates`] lists them.
    fn candidates(pass: crate::passes::CPass, text: &[u8]) -> Vec<String> {
        pass.candidates(text, &crate::passes::Hints::default())
            .map(|c| String::from_utf8(c).unwrap())
            .collect()
    }

    #[test]
    fn type_parameters_say_class_but_a_dependent_name_keeps_typename() {
        let text = b"template <typename T, typename... U, typename = int> \
            using A = B<typename T::type, U...>;";
        let got = candidates(crate::passes::CPass::Literals, text);
        assert_eq!(
            got[0],
            "template <class T, class... U, class = int> using A = B<typename T::type, U...>;"
        );
    }

    #[test]
    fn constexpr_becomes_const_and_spelled_out_integer_types_int_plain_char_and_int_stay() {
        let text = b"unsigned long long a; char *s; int i; short x; template <long N> long f();";
        let with_constexpr = candidates(
            crate::passes::CPass::Literals,
            b"struct S { static constexpr bool v = 1; };",
        );
        assert!(
            with_constexpr.contains(&"struct S { static const bool v = 1; };".to_string()),
            "{with_constexpr:?}"
        );
        let got = candidates(crate::passes::CPass::Literals, text);
        // ddmin: halves first, then each type alone.
        assert!(
            got.contains(&"int a; char *s; int i; int x; template <long N> long f();".to_string()),
            "{got:?}"
        );
        assert!(
            got.contains(
                &"unsigned long long a; char *s; int i; int x; template <long N> long f();"
                    .to_string()
            ),
            "{got:?}"
        );
        assert!(got.iter().all(|c| c.contains("char *s; int i;")), "{got:?}");
    }

    #[test]
    fn a_double_underscore_name_the_text_declares_is_renamed_a_builtin_is_not() {
        let text =
            b"template <class _Tp, _Tp __v> struct integral { static constexpr _Tp value = __v; \
            void *p = __builtin_operator_new(__v); };";
        let got = candidates(crate::passes::CPass::Rename, text);
        assert!(
            got.iter()
                .any(|c| c.contains("_Tp a>") && c.contains("= a;")),
            "{got:?}"
        );
        assert!(
            got.iter().all(|c| c.contains("__builtin_operator_new")),
            "{got:?}"
        );
    }

    #[test]
    fn a_string_of_a_concatenation_is_deleted_first_and_again_after_strings_are_emptied() {
        let got = candidates(crate::passes::CPass::Literals, b"f(R\"(x)\" \"str\", 7);");
        assert_eq!(got[0], "f( \"str\", 7);");
        assert_eq!(got[1], "f(R\"(x)\" , 7);");
        // After `"str"` became `""`, the deletions come before the next literal.
        let plan = literals(b"f(R\"(x)\" \"\", 7);");
        let step = plan.step(b"f(R\"(x)\" \"\", 7);", [0, 1, 1]).unwrap();
        assert_eq!(step.edits, [Edit::delete(2, 8)]);
    }

    #[test]
    fn fresh_names_skip_used_and_reserved() {
        let used: HashSet<&[u8]> = [&b"a"[..], b"b"].into_iter().collect();
        assert_eq!(fresh_name(&used), b"c");
    }
}
