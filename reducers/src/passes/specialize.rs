//! A class template's one specialization made its primary definition.
//!
//! libstdc++ writes its type traits as a primary template that is only declared and one
//! partial specialization that is defined: `enable_if`, `conditional`, `tuple_element`,
//! `variant_alternative`. A crash-on-valid reduction that uses one keeps both, and no deletion
//! shortens the pair: without the declaration the specialization is an error, and without
//! the specialization's argument list it redeclares the template with other parameters. One
//! rewrite does: the declaration goes and the specialization becomes the primary definition,
//! `template <bool, class> struct d; template <class g> struct d<true, g> { typedef g k; };`
//! becoming `template <bool, class g> struct d { typedef g k; };`. Like the other unwrapping
//! passes it works on tokens; a rewrite that breaks a use is one rejected test.

use std::borrow::Cow;
use std::collections::HashMap;

use super::unwrap::{closing_angle, split_commas, SMALL};
use crate::lex::{self, Kind, Tok};
use crate::plan::{Edit, Item, List, Plan};

/// `template <…> struct|class N;`, a declaration without a body.
struct Declaration {
    span: (usize, usize),
    name_tok: usize,
    /// The parameters' token ranges.
    params: Vec<std::ops::Range<usize>>,
}

/// `template <…> struct|class N<…> [: bases] { … };`, a specialization with a body.
struct Specialization {
    span: (usize, usize),
    name_tok: usize,
    /// The template head's parameter list, `<` and `>` excluded (empty for `template <>`).
    head: std::ops::Range<usize>,
    /// The specialization's arguments' token ranges.
    args: Vec<std::ops::Range<usize>>,
    /// From the token after the arguments' `>` (a base clause, the body) to the `;`.
    rest: std::ops::Range<usize>,
}

/// Two candidates per class template declared once without a body and specialized once with
/// one (and never defined otherwise): the specialization, in its place, becomes the primary
/// definition with the declaration's parameters (each named as the specialization's
/// argument in its position when that argument is one of its parameters), then with its own;
/// the declaration is deleted.
pub(crate) fn specializations(text: &[u8]) -> Box<dyn Plan> {
    if text.len() > SMALL {
        return Box::new(crate::plan::Empty);
    }
    let toks = lex::lex(text);
    let st = lex::structure(text, &toks);
    let mut declarations: HashMap<&[u8], Vec<Declaration>> = HashMap::new();
    let mut specializations: HashMap<&[u8], Vec<Specialization>> = HashMap::new();
    let mut defined: HashMap<&[u8], usize> = HashMap::new();
    for i in 0..toks.len() {
        if let Some(d) = declaration_at(text, &toks, i) {
            declarations
                .entry(toks[d.name_tok].bytes(text))
                .or_default()
                .push(d);
        } else if let Some(s) = specialization_at(text, &toks, &st, i) {
            specializations
                .entry(toks[s.name_tok].bytes(text))
                .or_default()
                .push(s);
        } else if let Some(name) = primary_definition_at(text, &toks, i) {
            *defined.entry(name).or_default() += 1;
        }
    }
    let mut items = Vec::new();
    for (name, decls) in &declarations {
        let (Some(specs), None) = (specializations.get(name), defined.get(name)) else {
            continue;
        };
        let ([decl], [spec]) = (decls.as_slice(), specs.as_slice()) else {
            continue;
        };
        if decl.span.1 > spec.span.0 {
            continue;
        }
        for head in [
            declared_head(text, &toks, decl, spec),
            own_head(text, &toks, spec),
        ] {
            let edits = vec![
                Edit::delete(decl.span.0, decl.span.1),
                Edit {
                    start: spec.span.0,
                    end: spec.span.1,
                    with: Cow::Owned(primary(text, &toks, spec, &head)),
                },
            ];
            items.push(Item {
                edits,
                on_success: items.len(),
            });
        }
    }
    items.sort_by_key(|it| it.edits[0].start);
    for (k, it) in items.iter_mut().enumerate() {
        it.on_success = k;
    }
    Box::new(List { items })
}

/// True when token `k` is the identifier `w`.
pub(super) fn word(text: &[u8], toks: &[Tok], k: usize, w: &[u8]) -> bool {
    toks.get(k)
        .is_some_and(|t| t.kind == Kind::Ident && t.bytes(text) == w)
}

/// True when token `k` is `struct` or `class`.
pub(super) fn class_key(text: &[u8], toks: &[Tok], k: usize) -> bool {
    word(text, toks, k, b"struct") || word(text, toks, k, b"class")
}

/// The `>` closing the template head `template <` at `i`, if token `i` starts one.
pub(super) fn head_end(text: &[u8], toks: &[Tok], i: usize) -> Option<usize> {
    if !word(text, toks, i, b"template") || !toks.get(i + 1)?.is(text, b"<") {
        return None;
    }
    match closing_angle(text, toks, i + 1)? {
        (close, false) => Some(close),
        _ => None,
    }
}

/// The declaration `template <…> struct|class N;` starting at token `i`, if any.
fn declaration_at(text: &[u8], toks: &[Tok], i: usize) -> Option<Declaration> {
    let close = head_end(text, toks, i)?;
    let name_tok = close + 2;
    let named = class_key(text, toks, close + 1) && toks.get(name_tok)?.kind == Kind::Ident;
    if !named || !toks.get(name_tok + 1)?.is(text, b";") {
        return None;
    }
    Some(Declaration {
        span: (toks[i].start as usize, toks[name_tok + 1].end as usize),
        name_tok,
        params: split_commas(text, toks, i + 2..close),
    })
}

/// The specialization with a body starting at token `i`, if any.
fn specialization_at(
    text: &[u8],
    toks: &[Tok],
    st: &lex::Structure,
    i: usize,
) -> Option<Specialization> {
    let close = head_end(text, toks, i)?;
    let name_tok = close + 2;
    let named = class_key(text, toks, close + 1) && toks.get(name_tok)?.kind == Kind::Ident;
    if !named || !toks.get(name_tok + 1)?.is(text, b"<") {
        return None;
    }
    // A `>>` that closes the last argument's list too still ends the arguments here.
    let (args_end, _) = closing_angle(text, toks, name_tok + 1)?;
    // A base clause may come before the body; nothing that ends or opens a declaration.
    let open = (args_end + 1..toks.len()).find(|&k| {
        toks[k].kind == Kind::Punct && matches!(toks[k].bytes(text), b"{" | b";" | b"(" | b"}")
    })?;
    if !toks[open].is(text, b"{") {
        return None;
    }
    let semi = st.mate_of(open)? + 1;
    if !toks.get(semi)?.is(text, b";") {
        return None;
    }
    Some(Specialization {
        span: (toks[i].start as usize, toks[semi].end as usize),
        name_tok,
        head: i + 2..close,
        args: split_commas(text, toks, name_tok + 2..args_end),
        rest: args_end + 1..semi + 1,
    })
}

/// The name of the primary class template defined from token `i` (`template <…>
/// struct|class N {` or `N :`), if any.
fn primary_definition_at<'t>(text: &'t [u8], toks: &[Tok], i: usize) -> Option<&'t [u8]> {
    let close = head_end(text, toks, i)?;
    let name = toks.get(close + 2).filter(|t| t.kind == Kind::Ident)?;
    let next = toks.get(close + 3)?;
    let body = next.is(text, b"{") || next.is(text, b":") || word(text, toks, close + 3, b"final");
    (class_key(text, toks, close + 1) && body).then(|| name.bytes(text))
}

/// The source of tokens `range`, as written.
pub(super) fn source<'t>(text: &'t [u8], toks: &[Tok], range: &std::ops::Range<usize>) -> &'t [u8] {
    if range.is_empty() {
        return b"";
    }
    &text[toks[range.start].start as usize..toks[range.end - 1].end as usize]
}

/// The declaration's parameter list, each parameter named as the specialization's argument in
/// its position when that argument is a single name the specialization declares.
fn declared_head(text: &[u8], toks: &[Tok], decl: &Declaration, spec: &Specialization) -> Vec<u8> {
    let spec_names: Vec<&[u8]> = split_commas(text, toks, spec.head.clone())
        .iter()
        .filter_map(|p| parameter_name(text, toks, p))
        .collect();
    let mut out = Vec::new();
    for (k, p) in decl.params.iter().enumerate() {
        if k > 0 {
            out.extend_from_slice(b", ");
        }
        let arg = spec
            .args
            .get(k)
            .filter(|a| a.len() == 1 && spec_names.contains(&toks[a.start].bytes(text)))
            .map(|a| toks[a.start].bytes(text));
        let Some(arg) = arg else {
            out.extend_from_slice(source(text, toks, p));
            continue;
        };
        let eq = (p.start..p.end).find(|&j| toks[j].is(text, b"="));
        let head = p.start..eq.unwrap_or(p.end);
        let kept = match parameter_name(text, toks, p) {
            Some(_) => head.start..head.end - 1,
            None => head.clone(),
        };
        out.extend_from_slice(source(text, toks, &kept));
        out.push(b' ');
        out.extend_from_slice(arg);
        if let Some(eq) = eq {
            out.push(b' ');
            out.extend_from_slice(source(text, toks, &(eq..p.end)));
        }
    }
    out
}

/// The specialization's own parameter list.
fn own_head(text: &[u8], toks: &[Tok], spec: &Specialization) -> Vec<u8> {
    source(text, toks, &spec.head).to_vec()
}

/// The name a template parameter declares (its last word before any `=`, after a first
/// one: `class T`, `int N`, `class... Ts`), if it has one.
pub(super) fn parameter_name<'t>(
    text: &'t [u8],
    toks: &[Tok],
    p: &std::ops::Range<usize>,
) -> Option<&'t [u8]> {
    let end = (p.start..p.end)
        .find(|&j| toks[j].is(text, b"="))
        .unwrap_or(p.end);
    let last = end.checked_sub(1).filter(|&l| l > p.start)?;
    (toks[last].kind == Kind::Ident).then(|| toks[last].bytes(text))
}

/// The specialization written as the primary definition with the parameter list `head`.
fn primary(text: &[u8], toks: &[Tok], spec: &Specialization, head: &[u8]) -> Vec<u8> {
    let mut out = b"template <".to_vec();
    out.extend_from_slice(head);
    out.extend_from_slice(b"> ");
    out.extend_from_slice(source(text, toks, &(spec.name_tok - 1..spec.name_tok + 1)));
    out.push(b' ');
    out.extend_from_slice(source(text, toks, &spec.rest));
    out
}

#[cfg(test)]
mod tests {
    use crate::passes::{candidate_strings, CPass};

    fn all(text: &str) -> Vec<String> {
        candidate_strings(CPass::Specializations, text)
    }

    #[test]
    fn the_one_partial_specialization_becomes_the_primary_definition() {
        let text = "template <bool, class> struct d;\n\
                    template <class g> struct d<true, g> { typedef g k; };\n\
                    d<true, int>::k x;\n";
        assert_eq!(
            all(text),
            [
                "\ntemplate <bool, class g> struct d { typedef g k; };\nd<true, int>::k x;\n",
                "\ntemplate <class g> struct d { typedef g k; };\nd<true, int>::k x;\n",
            ]
        );
    }

    #[test]
    fn named_parameters_take_the_arguments_names_and_keep_their_defaults() {
        let text = "template <bool _C, class _T = void> struct e;\n\
                    template <class U> struct e<true, U> : b<U> { using type = U; };";
        assert_eq!(
            all(text)[0],
            "\ntemplate <bool _C, class U = void> struct e : b<U> { using type = U; };"
        );
    }

    #[test]
    fn a_pack_argument_keeps_the_declared_parameter() {
        let text = "template <class> struct d;\n\
                    template <class... f> struct d<e<f...>> { static const int h = 0; };";
        assert_eq!(
            all(text),
            [
                "\ntemplate <class> struct d { static const int h = 0; };",
                "\ntemplate <class... f> struct d { static const int h = 0; };",
            ]
        );
    }

    #[test]
    fn a_template_defined_or_specialized_twice_is_left_alone() {
        let defined = "template <class> struct d;\n\
                       template <class T> struct d<T*> { };\n\
                       template <class T> struct d { };";
        assert!(all(defined).is_empty());
        let twice = "template <class> struct d;\n\
                     template <class T> struct d<T*> { };\n\
                     template <class T> struct d<T&> { };";
        assert!(all(twice).is_empty());
        let before = "template <class T> struct d<T*> { };\ntemplate <class> struct d;";
        assert!(all(before).is_empty());
    }
}
