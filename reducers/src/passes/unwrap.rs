//! Passes that undo C++'s naming indirections, as C-Vise's clang_delta does with an AST: a
//! namespace unwrapped (its braces and every `N::` go), a type alias or variable template
//! inlined into its uses and deleted.
//!
//! No deletion pass can shorten a chain of aliases: libstdc++'s `make_index_sequence<N>` is an
//! alias of `make_integer_sequence<size_t, N>`, an alias of a builtin, and each link is used
//! by the next, so every link survives with its template head, and every kept declaration sits
//! in `namespace std { … }` with its uses qualified `std::`. A crash-on-valid reduction keeps
//! them all; these candidates fold them. They work on tokens, not on an AST: a candidate that
//! breaks a name lookup or a scope is rejected by the test like any other.

use std::borrow::Cow;
use std::collections::HashMap;

use crate::lex::{self, Kind, Tok};
use crate::plan::{Edit, Item, List, Plan};

/// Texts up to this size get candidates. On a big text nearly every alias and namespace
/// block is unused or needed whole, and the deletion passes remove the unused ones many per
/// test; one test per alias pays once the text is down to the crash's own declarations.
pub(super) const SMALL: usize = 16 << 10;

/// One candidate per namespace name: every block of it unwrapped (`[inline] namespace N
/// [attributes] {` and its `}` deleted), every `N::` and `using namespace N;` deleted. Each
/// anonymous namespace is a candidate of its own.
pub(crate) fn namespaces(text: &[u8]) -> Box<dyn Plan> {
    if text.len() > SMALL {
        return Box::new(crate::plan::Empty);
    }
    let toks = lex::lex(text);
    let st = lex::structure(text, &toks);
    let mut named: Vec<(&[u8], Vec<Edit>)> = Vec::new();
    let mut anonymous = Vec::new();
    for i in 0..toks.len() {
        match namespace_block(text, &toks, &st, i) {
            Some((Some(n), edits)) => match named.iter_mut().find(|(m, _)| *m == n) {
                Some((_, all)) => all.extend(edits),
                None => named.push((n, edits.to_vec())),
            },
            Some((None, edits)) => anonymous.push(edits.to_vec()),
            None => {}
        }
    }
    let lists = named
        .into_iter()
        .map(|(name, mut edits)| {
            edits.extend(qualifiers(text, &toks, name));
            edits
        })
        .chain(anonymous);
    Box::new(List {
        items: lists
            .enumerate()
            .map(|(k, mut edits)| {
                edits.sort_by_key(|e| (e.start, e.end));
                // The unwrapped namespace leaves the list: the next one moves up to `k`.
                Item {
                    edits,
                    on_success: k,
                }
            })
            .collect(),
    })
}

/// True when token `k` is the identifier `w`.
fn ident(text: &[u8], toks: &[Tok], k: usize, w: &[u8]) -> bool {
    toks.get(k)
        .is_some_and(|t| t.kind == Kind::Ident && t.bytes(text) == w)
}

/// The namespace block opened by the `namespace` at token `i`, if any: its name (`None`:
/// anonymous) and the deletions of its head (`[inline] namespace N [attributes] {`) and `}`.
fn namespace_block<'t>(
    text: &'t [u8],
    toks: &[Tok],
    st: &lex::Structure,
    i: usize,
) -> Option<(Option<&'t [u8]>, [Edit; 2])> {
    if !ident(text, toks, i, b"namespace") {
        return None;
    }
    let start = match i.checked_sub(1) {
        Some(p) if ident(text, toks, p, b"inline") => p,
        _ => i,
    };
    let name = toks
        .get(i + 1)
        .filter(|t| t.kind == Kind::Ident && !ident(text, toks, i + 1, b"__attribute__"))
        .map(|t| t.bytes(text));
    let mut k = if name.is_some() { i + 2 } else { i + 1 };
    // `namespace std __attribute__ ((__visibility__ ("default"))) {`
    while ident(text, toks, k, b"__attribute__")
        && toks.get(k + 1).is_some_and(|t| t.is(text, b"("))
    {
        k = st.mate_of(k + 1)? + 1;
    }
    let close = toks
        .get(k)
        .filter(|t| t.is(text, b"{"))
        .and_then(|_| st.mate_of(k))?;
    Some((
        name,
        [
            Edit::delete(toks[start].start as usize, toks[k].end as usize),
            Edit::delete(toks[close].start as usize, toks[close].end as usize),
        ],
    ))
}

/// The deletions of every `name::` and `using namespace name;`.
fn qualifiers(text: &[u8], toks: &[Tok], name: &[u8]) -> Vec<Edit> {
    let punct = |k: usize, p: &[u8]| toks.get(k).is_some_and(|t| t.is(text, p));
    let mut edits = Vec::new();
    for k in 0..toks.len() {
        if ident(text, toks, k, name) && punct(k + 1, b"::") {
            edits.push(Edit::delete(
                toks[k].start as usize,
                toks[k + 1].end as usize,
            ));
        }
        let using_namespace = ident(text, toks, k, b"using")
            && ident(text, toks, k + 1, b"namespace")
            && ident(text, toks, k + 2, name)
            && punct(k + 3, b";");
        if using_namespace {
            edits.push(Edit::delete(
                toks[k].start as usize,
                toks[k + 3].end as usize,
            ));
        }
    }
    edits
}

/// One template parameter: its name (none when unnamed), whether it is a pack, its default.
#[derive(Debug)]
struct Param<'t> {
    name: Option<&'t [u8]>,
    pack: bool,
    default: Option<String>,
}

/// An alias found in the text: the declaration's byte span, its name's token, its parameters
/// (`None`: not a template) and its body's tokens.
struct Alias<'t> {
    span: (usize, usize),
    name_tok: usize,
    params: Option<Vec<Param<'t>>>,
    body: std::ops::Range<usize>,
}

/// One candidate per alias whose name is declared once: `typedef T N;`, `using N = T;`,
/// `template <…> using N = T;` and `template <…> constexpr T N = E;` deleted, and every use
/// (with its `A::` qualifiers) replaced by the body, template arguments substituted.
pub(crate) fn aliases(text: &[u8]) -> Box<dyn Plan> {
    if text.len() > SMALL {
        return Box::new(crate::plan::Empty);
    }
    let toks = lex::lex(text);
    let st = lex::structure(text, &toks);
    let found: Vec<Alias> = (0..toks.len())
        .filter_map(|i| alias_at(text, &toks, &st, i))
        .collect();
    let mut declared: HashMap<&[u8], usize> = HashMap::new();
    for a in &found {
        *declared.entry(toks[a.name_tok].bytes(text)).or_default() += 1;
    }
    let mut items = Vec::new();
    for a in &found {
        if declared[toks[a.name_tok].bytes(text)] != 1 {
            continue;
        }
        if let Some(edits) = inline(text, &toks, a) {
            items.push(Item {
                edits,
                on_success: items.len(),
            });
        }
    }
    Box::new(List { items })
}

/// The alias declared from token `i` (a `typedef`, `using` or `template` keyword), if any.
fn alias_at<'t>(text: &'t [u8], toks: &[Tok], st: &lex::Structure, i: usize) -> Option<Alias<'t>> {
    let word = |k: usize, w: &[u8]| {
        toks.get(k)
            .is_some_and(|t| t.kind == Kind::Ident && t.bytes(text) == w)
    };
    let punct = |k: usize, p: &[u8]| toks.get(k).is_some_and(|t| t.is(text, p));
    let semicolon = |from: usize| statement_semicolon(text, toks, st, from);
    // An alias right after `template <…>` is the template's; it is found from there.
    let after_head = |k: usize| k > 0 && punct(k - 1, b">");
    if word(i, b"typedef") && !after_head(i) {
        let end = semicolon(i + 1)?;
        let name = end - 1;
        let body = i + 1..name;
        let simple = !body.is_empty()
            && toks[name].kind == Kind::Ident
            && toks[body.clone()]
                .iter()
                .all(|t| t.kind == Kind::Ident || t.is(text, b"::") || t.is(text, b"*"));
        return simple.then(|| Alias {
            span: (toks[i].start as usize, toks[end].end as usize),
            name_tok: name,
            params: None,
            body,
        });
    }
    if word(i, b"using") && !after_head(i) && punct(i + 2, b"=") {
        let end = semicolon(i + 3)?;
        return (toks[i + 1].kind == Kind::Ident && end > i + 3).then(|| Alias {
            span: (toks[i].start as usize, toks[end].end as usize),
            name_tok: i + 1,
            params: None,
            body: i + 3..end,
        });
    }
    if !(word(i, b"template") && punct(i + 1, b"<")) {
        return None;
    }
    let (close, false) = closing_angle(text, toks, i + 1)? else {
        return None;
    };
    let params = parameters(text, toks, i + 2..close)?;
    let k = close + 1;
    let (name_tok, body_start) = if word(k, b"using") && punct(k + 2, b"=") {
        (k + 1, k + 3)
    } else {
        let k = if word(k, b"inline") { k + 1 } else { k };
        if !word(k, b"constexpr") {
            return None;
        }
        let eq = (k + 1..toks.len().min(k + 16)).find(|&j| punct(j, b"=") || punct(j, b";"))?;
        if !punct(eq, b"=") || eq < k + 3 {
            return None;
        }
        (eq - 1, eq + 1)
    };
    let end = semicolon(body_start)?;
    (toks[name_tok].kind == Kind::Ident && end > body_start).then(|| Alias {
        span: (toks[i].start as usize, toks[end].end as usize),
        name_tok,
        params: Some(params),
        body: body_start..end,
    })
}

/// The `;` ending the statement that goes on at token `from`: the first one outside brackets,
/// or `None` when a brace or the text's end comes first.
pub(super) fn statement_semicolon(
    text: &[u8],
    toks: &[Tok],
    st: &lex::Structure,
    from: usize,
) -> Option<usize> {
    let mut k = from;
    while let Some(t) = toks.get(k) {
        if t.is(text, b";") {
            return Some(k);
        }
        if t.is(text, b"{") || t.is(text, b"}") {
            return None;
        }
        k = match st.mate_of(k) {
            Some(m) if m > k => m + 1,
            _ => k + 1,
        };
    }
    None
}

/// The token index of the `>` closing the `<` at `open`, and whether it is the second half of a
/// `>>` (whose first closes the last argument's list); `None` if it is not found.
pub(super) fn closing_angle(text: &[u8], toks: &[Tok], open: usize) -> Option<(usize, bool)> {
    let mut depth = 0i32;
    let mut brackets = 0i32;
    for (k, t) in toks.iter().enumerate().skip(open) {
        if t.kind != Kind::Punct {
            continue;
        }
        match t.bytes(text) {
            b"(" | b"[" | b"{" => brackets += 1,
            b")" | b"]" | b"}" => {
                brackets -= 1;
                if brackets < 0 {
                    return None;
                }
            }
            b";" if brackets == 0 => return None,
            b"<" if brackets == 0 => depth += 1,
            b">" if brackets == 0 => {
                depth -= 1;
                if depth == 0 {
                    return Some((k, false));
                }
            }
            b">>" if brackets == 0 => {
                depth -= 2;
                match depth {
                    0 => return Some((k, true)),
                    d if d < 0 => return None,
                    _ => {}
                }
            }
            _ => {}
        }
    }
    None
}

/// Token ranges of the comma-separated list `range` (commas outside brackets and `<>`).
pub(super) fn split_commas(
    text: &[u8],
    toks: &[Tok],
    range: std::ops::Range<usize>,
) -> Vec<std::ops::Range<usize>> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut from = range.start;
    for k in range.clone() {
        match toks[k].bytes(text) {
            b"(" | b"[" | b"{" | b"<" => depth += 1,
            b")" | b"]" | b"}" | b">" => depth -= 1,
            b">>" => depth -= 2,
            b"," if depth == 0 => {
                out.push(from..k);
                from = k + 1;
            }
            _ => {}
        }
    }
    if from < range.end {
        out.push(from..range.end);
    }
    out
}

/// A template head's parameters; `None` when one of them is itself a template.
fn parameters<'t>(
    text: &'t [u8],
    toks: &[Tok],
    range: std::ops::Range<usize>,
) -> Option<Vec<Param<'t>>> {
    let mut params = Vec::new();
    for p in split_commas(text, toks, range) {
        let ts = &toks[p.clone()];
        if ts
            .iter()
            .any(|t| t.kind == Kind::Ident && t.bytes(text) == b"template")
        {
            return None;
        }
        let eq = ts.iter().position(|t| t.is(text, b"="));
        let head = &ts[..eq.unwrap_or(ts.len())];
        let name = match head {
            [.., last] if head.len() >= 2 && last.kind == Kind::Ident => Some(last.bytes(text)),
            _ => None,
        };
        params.push(Param {
            name,
            pack: head.iter().any(|t| t.is(text, b"...")),
            default: eq.map(|e| spell(text, &ts[e + 1..])),
        });
    }
    Some(params)
}

/// Tokens written back with one space between them.
fn spell(text: &[u8], toks: &[Tok]) -> String {
    let words: Vec<String> = toks
        .iter()
        .map(|t| String::from_utf8_lossy(t.bytes(text)).into_owned())
        .collect();
    words.join(" ")
}

/// The edits that delete `alias` and put its body in place of every use; `None` when a use
/// cannot be rewritten.
fn inline(text: &[u8], toks: &[Tok], alias: &Alias) -> Option<Vec<Edit>> {
    let name = toks[alias.name_tok].bytes(text);
    let mut edits = vec![Edit::delete(alias.span.0, alias.span.1)];
    let mut k = 0;
    while k < toks.len() {
        let t = &toks[k];
        let inside = (t.start as usize) >= alias.span.0 && (t.end as usize) <= alias.span.1;
        let member = k > 0 && (toks[k - 1].is(text, b".") || toks[k - 1].is(text, b"->"));
        if t.kind != Kind::Ident || t.bytes(text) != name || inside || member {
            k += 1;
            continue;
        }
        let from = qualifier_start(text, toks, k);
        let (with, end) = match &alias.params {
            None => (spell(text, &toks[alias.body.clone()]), k),
            Some(params) => {
                if !toks.get(k + 1).is_some_and(|t| t.is(text, b"<")) {
                    return None;
                }
                let (close, split) = closing_angle(text, toks, k + 1)?;
                let args = split_commas(text, toks, k + 2..close);
                let mut args: Vec<String> =
                    args.iter().map(|r| spell(text, &toks[r.clone()])).collect();
                if split {
                    // The `>>`'s first `>` closes the last argument's own list.
                    args.last_mut()?.push_str(" >");
                }
                (
                    substitute(text, toks, alias.body.clone(), params, &args)?,
                    close,
                )
            }
        };
        edits.push(Edit {
            start: toks[from].start as usize,
            end: toks[end].end as usize,
            with: Cow::Owned(with.into_bytes()),
        });
        k = end + 1;
    }
    edits.sort_by_key(|e| (e.start, e.end));
    Some(edits)
}

/// The first token of the qualified name ending at token `k`: `::`, `A::`, `A<…>::` are
/// not followed (only plain names), `template` after `::` is.
fn qualifier_start(text: &[u8], toks: &[Tok], mut k: usize) -> usize {
    loop {
        let mut j = k;
        if j >= 1 && toks[j - 1].kind == Kind::Ident && toks[j - 1].bytes(text) == b"template" {
            j -= 1;
        }
        if j >= 1 && toks[j - 1].is(text, b"::") {
            if j >= 2 && toks[j - 2].kind == Kind::Ident {
                k = j - 2;
                continue;
            }
            return j - 1;
        }
        return k;
    }
}

/// The alias body `body` with `args` in place of `params`; `None` when the arguments do not
/// fit the parameters.
fn substitute(
    text: &[u8],
    toks: &[Tok],
    body: std::ops::Range<usize>,
    params: &[Param],
    args: &[String],
) -> Option<String> {
    let mut value: HashMap<&[u8], String> = HashMap::new();
    let mut packs: HashMap<&[u8], String> = HashMap::new();
    for (n, p) in params.iter().enumerate() {
        if p.pack {
            if let Some(name) = p.name {
                packs.insert(name, args.get(n..).unwrap_or_default().join(", "));
            }
            break;
        }
        let arg = args.get(n).cloned().or_else(|| p.default.clone())?;
        if let Some(name) = p.name {
            value.insert(name, arg);
        }
    }
    if !params.iter().any(|p| p.pack) && args.len() > params.len() {
        return None;
    }
    let mut out: Vec<String> = Vec::new();
    let mut k = body.start;
    while k < body.end {
        let t = &toks[k];
        let b = t.bytes(text);
        let expands = toks.get(k + 1).is_some_and(|n| n.is(text, b"...")) && k + 1 < body.end;
        if t.kind == Kind::Ident && expands && packs.contains_key(b) {
            let v = &packs[b];
            if v.is_empty() && out.last().is_some_and(|l| l == ",") {
                out.pop();
            } else if !v.is_empty() {
                out.push(v.clone());
            }
            k += 2;
            continue;
        }
        // A pack named without `...` (`sizeof...(j)`) has no single value to put there.
        if t.kind == Kind::Ident && packs.contains_key(b) {
            return None;
        }
        match value.get(b).filter(|_| t.kind == Kind::Ident) {
            Some(v) => out.push(v.clone()),
            None => out.push(String::from_utf8_lossy(b).into_owned()),
        }
        k += 1;
    }
    Some(out.join(" "))
}

/// A class written into the only class that derives from it, as clang_delta's
/// remove-base-class does: `struct d : e<long, 3> {};` with `template <class T, T v> struct e
/// { static constexpr T n = v; };` becomes `struct d { static constexpr long n = 3; };`. One
/// candidate per class (template) whose name is used once, as the single base of a class with
/// the same default access (`struct` into `struct`, `class` into `class`).
pub(crate) fn bases(text: &[u8]) -> Box<dyn Plan> {
    if text.len() > SMALL {
        return Box::new(crate::plan::Empty);
    }
    let toks = lex::lex(text);
    let st = lex::structure(text, &toks);
    let mut uses: HashMap<&[u8], usize> = HashMap::new();
    for t in toks.iter().filter(|t| t.kind == Kind::Ident) {
        *uses.entry(t.bytes(text)).or_default() += 1;
    }
    let mut items = Vec::new();
    for i in 0..toks.len() {
        let Some(base) = class_at(text, &toks, &st, i) else {
            continue;
        };
        // The name's only other token is the base clause's.
        if uses[toks[base.name_tok].bytes(text)] != 2 {
            continue;
        }
        if let Some(edits) = merge(text, &toks, &st, &base) {
            items.push(Item {
                edits,
                on_success: items.len(),
            });
        }
    }
    Box::new(List { items })
}

/// A class definition without bases: `[template <…>] struct|class N { … };`.
struct Class<'t> {
    span: (usize, usize),
    keyword: &'t [u8],
    name_tok: usize,
    params: Vec<Param<'t>>,
    open: usize,
    close: usize,
}

/// The class defined from token `i` (a `template` keyword, or `struct`/`class` not after a
/// template head), if any.
fn class_at<'t>(text: &'t [u8], toks: &[Tok], st: &lex::Structure, i: usize) -> Option<Class<'t>> {
    let word = |k: usize| {
        toks.get(k)
            .filter(|t| t.kind == Kind::Ident)
            .map(|t| t.bytes(text))
    };
    let (params, k) = if word(i) == Some(b"template") && toks.get(i + 1)?.is(text, b"<") {
        let (close, false) = closing_angle(text, toks, i + 1)? else {
            return None;
        };
        (parameters(text, toks, i + 2..close)?, close + 1)
    } else if i > 0 && toks[i - 1].is(text, b">") {
        return None;
    } else {
        (Vec::new(), i)
    };
    let keyword = word(k).filter(|w| *w == b"struct" || *w == b"class")?;
    word(k + 1)?;
    let open = k + 2;
    let close = toks
        .get(open)
        .filter(|t| t.is(text, b"{"))
        .and_then(|_| st.mate_of(open))?;
    let semi = toks.get(close + 1).filter(|t| t.is(text, b";"))?;
    Some(Class {
        span: (toks[i].start as usize, semi.end as usize),
        keyword,
        name_tok: k + 1,
        params,
        open,
        close,
    })
}

/// The edits that delete `base` and write its members into the class deriving from it; `None`
/// when its use is not a single base of a class of the same kind.
fn merge(text: &[u8], toks: &[Tok], st: &lex::Structure, base: &Class) -> Option<Vec<Edit>> {
    let name = toks[base.name_tok].bytes(text);
    let at = (0..toks.len()).find(|&k| {
        k != base.name_tok && toks[k].kind == Kind::Ident && toks[k].bytes(text) == name
    })?;
    let (end, args) = match toks.get(at + 1) {
        Some(t) if t.is(text, b"<") => {
            let (close, false) = closing_angle(text, toks, at + 1)? else {
                return None;
            };
            let args = split_commas(text, toks, at + 2..close);
            (
                close,
                args.iter().map(|r| spell(text, &toks[r.clone()])).collect(),
            )
        }
        _ => (at, Vec::new()),
    };
    let open = end + 1;
    toks.get(open).filter(|t| t.is(text, b"{"))?;
    st.mate_of(open)?;
    // `: [public|protected|private] [virtual] NAME`, the `:` after a class head's name.
    let mut colon = at.checked_sub(1)?;
    while matches!(
        toks[colon].bytes(text),
        b"public" | b"protected" | b"private" | b"virtual"
    ) {
        colon = colon.checked_sub(1)?;
    }
    if !toks[colon].is(text, b":") {
        return None;
    }
    let head = (colon.saturating_sub(24)..colon).rev().find(|&k| {
        toks[k].kind == Kind::Ident && matches!(toks[k].bytes(text), b"struct" | b"class")
    })?;
    let plain_head = toks[head + 1..colon]
        .iter()
        .all(|t| !matches!(t.bytes(text), b"(" | b")" | b";" | b"{" | b"}"));
    if !plain_head || toks[head].bytes(text) != base.keyword {
        return None;
    }
    let members = substitute(text, toks, base.open + 1..base.close, &base.params, &args)?;
    let mut edits = vec![
        Edit::delete(base.span.0, base.span.1),
        Edit::delete(toks[colon].start as usize, toks[end].end as usize),
        Edit {
            start: toks[open].end as usize,
            end: toks[open].end as usize,
            with: Cow::Owned(format!(" {members} ").into_bytes()),
        },
    ];
    edits.sort_by_key(|e| (e.start, e.end));
    Some(edits)
}

#[cfg(test)]
mod tests {
    use crate::passes::{CPass, Hints};

    /// Every candidate `pass` offers on `text`, as [`CPass::candidates`] lists them.
    fn all(pass: CPass, text: &[u8]) -> Vec<String> {
        pass.candidates(text, &Hints::default())
            .map(|c| String::from_utf8(c).unwrap())
            .collect()
    }

    fn squeeze(s: &str) -> String {
        s.split_whitespace().collect::<Vec<_>>().join(" ")
    }

    #[test]
    fn a_namespace_goes_with_its_braces_qualifiers_and_using_directives() {
        let text =
            b"namespace std __attribute__ ((__visibility__ (\"default\"))) { struct a {}; }\n\
            inline namespace v1 { int f(); }\n\
            namespace std { typedef int size_t; }\n\
            using namespace std;\n\
            namespace { int g; }\n\
            std::size_t n = ::std::v1::f();\n";
        let got: Vec<String> = all(CPass::Namespaces, text)
            .iter()
            .map(|s| squeeze(s))
            .collect();
        assert_eq!(
            got,
            [
                "struct a {}; inline namespace v1 { int f(); } typedef int size_t; \
                 namespace { int g; } size_t n = ::v1::f();",
                "namespace std __attribute__ ((__visibility__ (\"default\"))) { struct a {}; } \
                 int f(); namespace std { typedef int size_t; } using namespace std; \
                 namespace { int g; } std::size_t n = ::std::f();",
                "namespace std __attribute__ ((__visibility__ (\"default\"))) { struct a {}; } \
                 inline namespace v1 { int f(); } namespace std { typedef int size_t; } \
                 using namespace std; int g; std::size_t n = ::std::v1::f();",
            ]
        );
    }

    #[test]
    fn a_chain_of_template_aliases_folds_one_link_at_a_time() {
        let text = b"template <typename i, i l> using make = __make_integer_seq<seq, i, l>;\n\
            template <size_t... o> using index = seq<size_t, o...>;\n\
            template <size_t l> using make_index = make<size_t, l>;\n\
            template <class V> void b() { f(index<>{}, std::make_index<g<V>>{}); }\n";
        let got: Vec<String> = all(CPass::Aliases, text)
            .iter()
            .map(|s| squeeze(s))
            .collect();
        assert_eq!(got.len(), 3);
        assert_eq!(
            got[0],
            "template <size_t... o> using index = seq<size_t, o...>; \
             template <size_t l> using make_index = __make_integer_seq < seq , size_t , l >; \
             template <class V> void b() { f(index<>{}, std::make_index<g<V>>{}); }"
        );
        // An empty pack takes its comma with it.
        assert!(got[1].contains("f(seq < size_t >{}, std::make_index<g<V>>{})"));
        // Qualifiers go with the use; the argument is spelled into the body.
        assert!(
            got[2].ends_with("f(index<>{}, make < size_t , g < V > >{}); }"),
            "{}",
            got[2]
        );
    }

    #[test]
    fn typedefs_using_aliases_and_variable_templates_are_inlined() {
        let text = b"typedef unsigned long size_t;\nusing k = h<>;\n\
            template <typename f> constexpr size_t g = d<f>::n;\n\
            size_t x = g<k>; int y = q::k::z; int w = o.k;\n";
        let got: Vec<String> = all(CPass::Aliases, text)
            .iter()
            .map(|s| squeeze(s))
            .collect();
        assert_eq!(
            got,
            [
                "using k = h<>; template <typename f> constexpr unsigned long g = d<f>::n; \
                 unsigned long x = g<k>; int y = q::k::z; int w = o.k;",
                "typedef unsigned long size_t; template <typename f> constexpr size_t g = d<f>::n; \
                 size_t x = g<h < >>; int y = h < >::z; int w = o.k;",
                "typedef unsigned long size_t; using k = h<>; size_t x = d < k > :: n; \
                 int y = q::k::z; int w = o.k;",
            ]
        );
    }

    #[test]
    fn a_name_declared_twice_or_used_bare_as_a_template_is_left() {
        let text = b"struct A { typedef int T; }; struct B { typedef long T; };\n\
            template <class U> using P = U*; template <template <class> class X> struct Q {};\n\
            Q<P> q; A::T a;\n";
        assert!(all(CPass::Aliases, text).is_empty());
    }

    #[test]
    fn a_class_head_at_the_end_of_the_text_is_no_class() {
        // `struct x` with no token after it: nothing to read, nothing to offer.
        for text in [&b"struct x"[..], b"template <class T> struct", b"class"] {
            assert!(all(CPass::Bases, text).is_empty());
        }
    }

    #[test]
    fn a_class_used_once_as_a_base_is_written_into_its_derived_class() {
        let text = b"template <typename i, i v> struct e { static constexpr i n = v; };\n\
            template <typename> struct d;\n\
            template <typename... g> struct d<h<g...>> : public e<long, sizeof...(g)> {};\n\
            struct k { int a; }; class m : k {}; struct p { int b; }; struct q : p { int c; };\n";
        let got: Vec<String> = all(CPass::Bases, text).iter().map(|s| squeeze(s)).collect();
        assert_eq!(got.len(), 2, "{got:?}");
        assert_eq!(
            got[0],
            "template <typename> struct d; template <typename... g> struct d<h<g...>> { \
             static constexpr long n = sizeof ... ( g ) ; }; struct k { int a; }; class m : k {}; \
             struct p { int b; }; struct q : p { int c; };"
        );
        // `k` is a struct and `m` a class: its members would turn private.
        assert!(
            got[1].ends_with("class m : k {}; struct q { int b ; int c; };"),
            "{}",
            got[1]
        );
    }
}
