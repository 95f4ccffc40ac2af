//! A class or alias template's parameter removed from its head and from every use at once.
//!
//! A reduced template keeps parameters the crash does not need: `template <class g, g i>
//! struct a` when every use says `a<bool, …>`, or an `enable_if`-like `template <bool, class g>
//! struct d` used only as `d<C::j, int>`. No deletion shortens them in a crash-on-valid
//! reduction: the parameter without its arguments, or an argument without its parameter, is
//! an error. C-Vise's `clang_delta` has the two rewrites that do, on the AST; this is their
//! token form:
//!
//! - *instantiate*: every use passes the same argument in that position, so the parameter
//!   goes and each of its mentions in the template becomes that argument (`a<bool, i>` and
//!   `a<bool, false>` make `template <bool i> struct a`, used as `a<i>` and `a<false>`);
//! - *drop*: the template never mentions the parameter (or it has no name), so it goes with
//!   the argument in its position in every use.
//!
//! A template left without parameters loses its head, and its uses their argument lists. Only
//! templates defined once and named nowhere but before a `<` (or inside their own definition)
//! are rewritten: a template template argument or a deduced use (`a v{…}`) would need more
//! than the token view can tell. A rewrite that breaks something is one rejected test.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::ops::Range;

use super::specialize::{class_key, head_end, parameter_name, word};
use super::unwrap::{split_commas, statement_semicolon, SMALL};
use crate::lex::{self, Kind, Tok};
use crate::plan::{Edit, Empty, Item, List, Plan};

/// A class template (`template <…> struct|class|union N {…};`) or an alias template
/// (`template <…> using N = …;`) defined once.
struct Template {
    /// The `template` token.
    start: usize,
    /// The head's closing `>`.
    head_close: usize,
    /// The declaration's last token (its `;`).
    end: usize,
    name_tok: usize,
    params: Vec<Range<usize>>,
}

/// One use `N<…>`: its arguments as byte ranges, and the bytes from its `<` to its `>`
/// inclusive (the `>` may be the first half of a `>>`).
struct Use {
    args: Vec<(usize, usize)>,
    list: (usize, usize),
}

/// Per parameter of each class and alias template defined once, up to two candidates:
/// instantiate it with the one argument every use passes, and drop it when the template never
/// mentions it.
pub(crate) fn template_params(text: &[u8]) -> Box<dyn Plan> {
    if text.len() > SMALL {
        return Box::new(Empty);
    }
    let toks = lex::lex(text);
    let st = lex::structure(text, &toks);
    let heads: Vec<(usize, usize)> = (0..toks.len())
        .filter_map(|i| Some((i, head_end(text, &toks, i)?)))
        .collect();
    let mut declared: HashMap<&[u8], usize> = HashMap::new();
    for &(_, close) in &heads {
        if class_or_union(text, &toks, close + 1) || word(text, &toks, close + 1, b"using") {
            if let Some(t) = toks.get(close + 2).filter(|t| t.kind == Kind::Ident) {
                *declared.entry(t.bytes(text)).or_default() += 1;
            }
        }
    }
    let parameter_names: HashSet<&[u8]> = heads
        .iter()
        .flat_map(|&(i, close)| split_commas(text, &toks, i + 2..close))
        .filter_map(|p| parameter_name(text, &toks, &p))
        .collect();
    let mut items = Vec::new();
    for &(i, close) in &heads {
        let Some(t) = definition(text, &toks, &st, i, close) else {
            continue;
        };
        let name = toks[t.name_tok].bytes(text);
        if declared.get(name) != Some(&1) {
            continue;
        }
        let Some(uses) = uses_of(text, &toks, &t) else {
            continue;
        };
        for p in 0..t.params.len() {
            let param = &t.params[p];
            if (param.start..param.end).any(|k| toks[k].is(text, b"...")) {
                continue;
            }
            let candidates = [
                instantiate(text, &toks, &t, &uses, p, &parameter_names),
                drop_unused(text, &toks, &t, &uses, p),
            ];
            for edits in candidates.into_iter().flatten() {
                items.push(Item {
                    edits,
                    on_success: items.len(),
                });
            }
        }
    }
    Box::new(List { items })
}

/// True when token `k` is `struct`, `class` or `union`.
fn class_or_union(text: &[u8], toks: &[Tok], k: usize) -> bool {
    class_key(text, toks, k) || word(text, toks, k, b"union")
}

/// The class or alias template defined by the head `template <` at `i` closed at `close`.
fn definition(
    text: &[u8],
    toks: &[Tok],
    st: &lex::Structure,
    i: usize,
    close: usize,
) -> Option<Template> {
    let name_tok = close + 2;
    if toks.get(name_tok)?.kind != Kind::Ident {
        return None;
    }
    let end = if class_or_union(text, toks, close + 1) {
        // A specialization (`N<`) is not a definition of the template; a base clause may
        // name templates (`: b<T>`) before the body.
        if toks.get(name_tok + 1)?.is(text, b"<") {
            return None;
        }
        let open = (name_tok + 1..toks.len())
            .find(|&k| toks[k].kind == Kind::Punct && matches!(toks[k].bytes(text), b"{" | b";"))?;
        if !toks[open].is(text, b"{") {
            return None;
        }
        let semi = st.mate_of(open)? + 1;
        toks.get(semi)?.is(text, b";").then_some(semi)?
    } else if word(text, toks, close + 1, b"using") && toks.get(name_tok + 1)?.is(text, b"=") {
        statement_semicolon(text, toks, st, name_tok + 2)?
    } else {
        return None;
    };
    Some(Template {
        start: i,
        head_close: close,
        end,
        name_tok,
        params: split_commas(text, toks, i + 2..close),
    })
}

/// Every use `N<…>` of the template, or `None` when it is named another way outside its own
/// definition (or a use's argument list cannot be read).
fn uses_of(text: &[u8], toks: &[Tok], t: &Template) -> Option<Vec<Use>> {
    let name = toks[t.name_tok].bytes(text);
    let mut uses = Vec::new();
    for k in 0..toks.len() {
        if k == t.name_tok || toks[k].kind != Kind::Ident || toks[k].bytes(text) != name {
            continue;
        }
        let member = k > 0 && matches!(toks[k - 1].bytes(text), b"." | b"->" | b"::");
        if member {
            continue;
        }
        if toks.get(k + 1).is_some_and(|n| n.is(text, b"<")) {
            uses.push(use_at(text, toks, k + 1)?);
        } else if !(t.start..=t.end).contains(&k) {
            return None;
        }
    }
    Some(uses)
}

/// The use whose argument list opens at token `open`. A `>>` whose first half closes the list
/// ends it there.
fn use_at(text: &[u8], toks: &[Tok], open: usize) -> Option<Use> {
    let mut depth = 0i32;
    let mut brackets = 0i32;
    let mut args = Vec::new();
    let mut from: Option<usize> = None;
    let mut last_end = 0;
    let finish = |args: &mut Vec<(usize, usize)>, from: Option<usize>, end: usize| {
        if let Some(s) = from {
            args.push((s, end));
        }
    };
    for t in toks.iter().skip(open) {
        let b = t.bytes(text);
        let punct = t.kind == Kind::Punct;
        let close_at = match b {
            b"(" | b"[" | b"{" if punct => {
                brackets += 1;
                None
            }
            b")" | b"]" | b"}" if punct => {
                brackets -= 1;
                if brackets < 0 {
                    return None;
                }
                None
            }
            b";" if punct => return None,
            b"<" if punct && brackets == 0 => {
                depth += 1;
                if depth == 1 {
                    continue;
                }
                None
            }
            b">" if punct && brackets == 0 => {
                depth -= 1;
                (depth == 0).then_some(t.start as usize)
            }
            b">>" if punct && brackets == 0 => {
                depth -= 2;
                match depth {
                    -1 => Some(t.start as usize),
                    0 => Some(t.start as usize + 1),
                    _ => None,
                }
            }
            b"," if punct && brackets == 0 && depth == 1 => {
                finish(&mut args, from.take(), last_end);
                continue;
            }
            _ => None,
        };
        if let Some(close) = close_at {
            // The first `>` of a `>>` closing this list and an inner one ends the last argument.
            let end = if close > t.start as usize {
                close
            } else {
                last_end
            };
            finish(&mut args, from.take(), end);
            return Some(Use {
                args,
                list: (toks[open].start as usize, close + 1),
            });
        }
        from.get_or_insert(t.start as usize);
        last_end = t.end as usize;
    }
    None
}

/// The edits deleting parameter `p` from the head (the whole head when it is the only one) and
/// its argument from every use that passes one.
fn remove_everywhere(toks: &[Tok], t: &Template, uses: &[Use], p: usize) -> Vec<Edit> {
    let mut edits = Vec::new();
    if t.params.len() == 1 {
        let body = toks[t.head_close + 1].start as usize;
        edits.push(Edit::delete(toks[t.start].start as usize, body));
    } else {
        let spans: Vec<(usize, usize)> = t
            .params
            .iter()
            .map(|r| (toks[r.start].start as usize, toks[r.end - 1].end as usize))
            .collect();
        edits.push(list_item_deletion(&spans, p));
    }
    for u in uses {
        if t.params.len() == 1 {
            edits.push(Edit::delete(u.list.0, u.list.1));
        } else if p < u.args.len() {
            edits.push(list_item_deletion(&u.args, p));
        }
    }
    edits
}

/// Deleting item `p` of a comma-separated list with its comma: `, x` after an earlier item,
/// `x, ` when it is the first.
fn list_item_deletion(items: &[(usize, usize)], p: usize) -> Edit {
    match (p.checked_sub(1), items.get(p + 1)) {
        (Some(before), _) => Edit::delete(items[before].1, items[p].1),
        (None, Some(next)) => Edit::delete(items[p].0, next.0),
        (None, None) => Edit::delete(items[p].0, items[p].1),
    }
}

/// The argument bytes with whitespace removed, to compare two uses' arguments.
fn squeezed(text: &[u8], (s, e): (usize, usize)) -> Vec<u8> {
    text[s..e]
        .iter()
        .copied()
        .filter(|b| !b.is_ascii_whitespace())
        .collect()
}

/// Instantiate parameter `p`: every use passes the same argument there, one that names no
/// template parameter (it must mean the same inside the template) and expands no pack.
fn instantiate(
    text: &[u8],
    toks: &[Tok],
    t: &Template,
    uses: &[Use],
    p: usize,
    parameter_names: &HashSet<&[u8]>,
) -> Option<Vec<Edit>> {
    let name = parameter_name(text, toks, &t.params[p])?;
    let first = *uses.first()?.args.get(p)?;
    let arg = squeezed(text, first);
    if !uses
        .iter()
        .all(|u| u.args.get(p).is_some_and(|&a| squeezed(text, a) == arg))
    {
        return None;
    }
    let arg_toks = toks
        .iter()
        .filter(|tok| first.0 <= tok.start as usize && tok.end as usize <= first.1);
    for tok in arg_toks {
        let b = tok.bytes(text);
        if b == b"..." || (tok.kind == Kind::Ident && parameter_names.contains(b)) {
            return None;
        }
    }
    let with = text[first.0..first.1].to_vec();
    let mut edits = remove_everywhere(toks, t, uses, p);
    for k in mentions(text, toks, t, p, name) {
        if !matches!(toks[k - 1].bytes(text), b"." | b"->" | b"::") {
            edits.push(Edit {
                start: toks[k].start as usize,
                end: toks[k].end as usize,
                with: Cow::Owned(with.clone()),
            });
        }
    }
    sorted_apart(edits)
}

/// Drop parameter `p`, which the template never mentions (or which has no name).
fn drop_unused(
    text: &[u8],
    toks: &[Tok],
    t: &Template,
    uses: &[Use],
    p: usize,
) -> Option<Vec<Edit>> {
    if let Some(name) = parameter_name(text, toks, &t.params[p]) {
        if mentions(text, toks, t, p, name).next().is_some() {
            return None;
        }
    }
    sorted_apart(remove_everywhere(toks, t, uses, p))
}

/// The tokens of the template, its head included, spelled as parameter `p`'s `name`, except
/// the one that declares it.
fn mentions<'a>(
    text: &'a [u8],
    toks: &'a [Tok],
    t: &'a Template,
    p: usize,
    name: &'a [u8],
) -> impl Iterator<Item = usize> + 'a {
    (t.start + 2..=t.end).filter(move |&k| {
        !t.params[p].contains(&k) && toks[k].kind == Kind::Ident && toks[k].bytes(text) == name
    })
}

/// The edits in order, or `None` when two overlap (a use inside another's deleted argument).
fn sorted_apart(mut edits: Vec<Edit>) -> Option<Vec<Edit>> {
    edits.sort_by_key(|e| (e.start, e.end));
    edits
        .windows(2)
        .all(|w| w[0].end <= w[1].start)
        .then_some(edits)
}

#[cfg(test)]
mod tests {
    use crate::passes::{candidate_strings, CPass};

    fn all(text: &str) -> Vec<String> {
        candidate_strings(CPass::TemplateParams, text)
    }

    #[test]
    fn a_parameter_every_use_passes_the_same_argument_for_is_instantiated() {
        let text = "template <class g, g i> struct a { static const g j = i; };\n\
                    template <bool i> using c = a<bool, i>;\n\
                    a<bool, false> x;\n";
        assert_eq!(
            all(text)[0],
            "template <bool i> struct a { static const bool j = i; };\n\
             template <bool i> using c = a<i>;\n\
             a<false> x;\n"
        );
    }

    #[test]
    fn an_unnamed_or_unmentioned_parameter_is_dropped_with_its_arguments() {
        let text = "template <bool, class g> struct d { typedef g k; };\n\
                    template <class C> struct b { d<C::j, int>::k m; };\n";
        let got = all(text);
        assert!(got.contains(
            &"template <class g> struct d { typedef g k; };\n\
              template <class C> struct b { d<int>::k m; };\n"
                .to_string()
        ));
        // `int` is instantiated; `C::j` names another template's parameter and is not.
        assert!(got.contains(
            &"template <bool> struct d { typedef int k; };\n\
              template <class C> struct b { d<C::j>::k m; };\n"
                .to_string()
        ));
        assert_eq!(got.len(), 2, "{got:#?}");
    }

    #[test]
    fn the_last_parameter_gone_takes_the_head_and_the_argument_lists() {
        let text = "template <class g> struct e { g i; };\ne<int> a;\nf<e<int>> b;\n";
        assert_eq!(all(text), ["struct e { int i; };\ne a;\nf<e> b;\n"]);
    }

    #[test]
    fn templates_named_other_than_before_an_argument_list_are_left_alone() {
        // A template template argument, a deduced use, a second declaration, a pack.
        for text in [
            "template <class g> struct e { g i; };\ne<int> a;\nf<e> b;\n",
            "template <class g> struct e { g i; e(g); };\ne<int> a;\ne b{1};\n",
            "template <class g> struct e;\ntemplate <class g> struct e { g i; };\ne<int> a;\n",
            "template <class... g> struct e { };\ne<int> a;\n",
        ] {
            assert!(all(text).is_empty(), "{text}");
        }
    }

    #[test]
    fn a_template_with_a_base_clause_is_rewritten_and_a_specialization_is_not_a_definition() {
        let text = "template <class g> struct e : b<g> { g i; };\ne<int> a;\n";
        assert_eq!(all(text), ["struct e : b<int> { int i; };\ne a;\n"]);
        let spec = "template <class g> struct e<g*> { g i; };\ne<int> a;\n";
        assert!(all(spec).is_empty());
    }

    #[test]
    fn uses_with_different_arguments_keep_a_mentioned_parameter() {
        let text = "template <class g> struct e { g i; };\ne<int> a;\ne<long> b;\n";
        assert!(all(text).is_empty());
    }
}
