//! The split against its first, recursive form, which analysed every block's body as a
//! declaration (once per level of nesting) and scanned it for markers.

use proptest::prelude::*;

use super::*;

fn old_split<'t>(
    s: &mut Split<'t>,
    lo: usize,
    hi: usize,
    limit: usize,
    parent: Option<usize>,
) -> Vec<usize> {
    let mut out = Vec::new();
    let mut i = lo;
    while i < hi {
        let start = i;
        if s.toks[i].kind == Kind::Directive {
            out.push(old_push(s, start, i, limit, parent, true));
            i += 1;
            continue;
        }
        // A block scope: `[inline] namespace [a::b] {` or `extern "C" {`.
        let mut k = i;
        if s.w(k, b"inline") {
            k += 1;
        }
        let block_open = if s.w(k, b"namespace") {
            // `namespace a::b __attribute__((…)) [[…]] {`
            let mut j = k + 1;
            while j < hi {
                if s.toks[j].kind == Kind::Ident || s.p(j, b"::") {
                    j += 1;
                } else if s.p(j, b"(") || s.p(j, b"[") {
                    match s.mate(j).filter(|&m| m > j && m < hi) {
                        Some(m) => j = m + 1,
                        None => break,
                    }
                } else {
                    break;
                }
            }
            s.p(j, b"{").then_some(j)
        } else if s.w(k, b"extern")
            && s.toks.get(k + 1).is_some_and(|t| t.kind == Kind::Str)
            && s.p(k + 2, b"{")
        {
            Some(k + 2)
        } else {
            None
        };
        if let Some(open) = block_open {
            if let Some(close) = s.mate(open).filter(|&c| c < hi) {
                let me = old_push(s, start, close, limit, parent, false);
                // A block's own names are namespace names: nothing is attached to them.
                let name_end = (start..open)
                    .find(|&q| s.p(q, b"(") || s.p(q, b"[") || s.w(q, b"__attribute__"))
                    .unwrap_or(open);
                let names: Vec<&'t [u8]> = (start..name_end)
                    .filter(|&q| s.toks[q].kind == Kind::Ident && !keyword(s.b(q)))
                    .map(|q| s.b(q))
                    .collect();
                s.decls[me].declares = names;
                s.decls[me].attached.clear();
                s.decls[me].uses.clear();
                let inner_limit = s.toks[close].start as usize;
                let kids = old_split(s, open + 1, close, inner_limit, Some(me));
                // An empty block may be what makes a namespace inline
                // (`inline namespace __cxx11 { }` in libstdc++'s c++config.h): kept.
                s.decls[me].always = kids.is_empty();
                s.decls[me].children = kids;
                out.push(me);
                i = close + 1;
                continue;
            }
        }
        // An ordinary declaration: up to `;` outside brackets, or a body's `}` (with a
        // following declarator list when it is a class or an initialiser).
        let mut j = s.skip_template_prefix(i, hi - 1);
        let mut last = hi - 1;
        let mut typed = false;
        while j < hi {
            let t = s.toks[j];
            if t.kind == Kind::Ident
                && matches!(
                    s.b(j),
                    b"struct" | b"class" | b"union" | b"enum" | b"typedef"
                )
            {
                typed = true;
            }
            if s.p(j, b"=") && !(j > 0 && s.w(j - 1, b"operator")) {
                typed = true;
            }
            if s.p(j, b";") {
                last = j;
                break;
            }
            if s.p(j, b"(") || s.p(j, b"[") || s.p(j, b"{") {
                match s.mate(j).filter(|&m| m > j && m < hi) {
                    Some(m) => {
                        let brace = s.p(j, b"{");
                        let open = j;
                        j = m;
                        // A braced member initialiser (`: _M_y{y}, _M_d{d} { }`) is
                        // followed by `,` or the body: no body ends there.
                        if brace
                            && !s.p(m + 1, b";")
                            && !s.p(m + 1, b",")
                            && !s.p(m + 1, b"{")
                            && !typed
                            && !lex::opens_requires_body(s.text, &s.toks, &s.mate, open)
                        {
                            last = m;
                            break;
                        }
                    }
                    None => {
                        last = hi - 1;
                        break;
                    }
                }
            }
            j += 1;
        }
        let last = last.max(start).min(hi - 1);
        out.push(old_push(s, start, last, limit, parent, false));
        i = last + 1;
    }
    out
}

fn old_push<'t>(
    s: &mut Split<'t>,
    first: usize,
    last: usize,
    limit: usize,
    parent: Option<usize>,
    directive: bool,
) -> usize {
    let start = s.toks[first].start as usize;
    let mut d = Decl::empty(first, last, start, s.span_end(last, limit), parent);
    d.using_decl = !directive
        && s.w(first, b"using")
        && !s.w(first + 1, b"namespace")
        && !(first..=last).any(|k| s.p(k, b"="));
    d.always = directive;
    if !directive {
        s.names(first, last, &mut d);
        for k in first + 1..=last {
            // Only line markers: a `#pragma omp` in a deleted body goes with it.
            let marker = crate::markers::parse_marker(s.b(k)).is_some();
            if s.toks[k].kind == Kind::Directive && marker {
                let t = s.toks[k];
                let end = (t.end as usize + 1).min(s.text.len());
                d.directives.push((t.start as usize, end));
            }
        }
    }
    d.shrink();
    s.decls.push(d);
    s.decls.len() - 1
}

/// Every field of `d` anything reads: a block's (one with children) uses, spells, calls
/// and scoped names are not, since a block is never kept for itself.
fn read_fields(d: &Decl) -> String {
    let block = !d.children.is_empty();
    let body = |x: String| if block { String::new() } else { x };
    format!(
        "{:?} {:?} {:?} {:?} {:?} {:?} {:?} {:?} {:?} {:?} {:?} {:?} {:?} {:?} {:?} {:?} {} {} {}",
        (d.first, d.last, d.start, d.end),
        d.declares,
        d.attached,
        d.uses,
        (d.function, d.operator),
        d.spelled,
        d.params,
        d.accepts,
        d.params_close,
        d.spec_args,
        d.classes,
        d.using_decl,
        d.always,
        d.directives,
        d.children,
        d.parent,
        body(format!("{:?}", d.spells)),
        body(format!("{:?}", d.calls)),
        body(format!("{:?}", d.scoped)),
    )
}

fn same_as_before(text: &[u8]) -> Result<(), TestCaseError> {
    let new = Split::new(text);
    let mut old = Split::new(text);
    old.decls.clear();
    let n = old.toks.len();
    old_split(&mut old, 0, n, text.len(), None);
    prop_assert_eq!(new.decls.len(), old.decls.len());
    for (a, b) in new.decls.iter().zip(&old.decls) {
        prop_assert_eq!(read_fields(a), read_fields(b));
    }
    Ok(())
}

/// Blocks of every kind nested a few deep, with declarations, line markers and other
/// directives in and around them (and braces that do not always match).
fn nested_text() -> impl Strategy<Value = Vec<u8>> {
    let frag = prop::sample::select(vec![
        "namespace n {\n",
        "namespace a::b {\n",
        "inline namespace v1 {\n",
        "namespace {\n",
        "namespace x __attribute__((visibility(\"default\"))) {\n",
        "namespace e {}\n",
        "inline namespace __cxx11 { }\n",
        "extern \"C\" {\n",
        "}\n",
        "}\n",
        "# 12 \"h.h\" 3\n",
        "# 3 \"a.cc\"\n",
        "#pragma omp parallel\n",
        "int a;\n",
        "struct S { int a; bool operator==(const S&) const; };\n",
        "bool operator<(const S& a, const S& b) { return a.a < b.a; }\n",
        "template <class T>\n",
        "void g() { for (auto& x : v) f(x, 1 + 2); }\n",
        "using n::a;\n",
        "using namespace n;\n",
        "auto t = 100ms;\n",
        "template <> struct hash<S> { };\n",
        "x",
        ";",
        "{",
    ]);
    prop::collection::vec(frag, 0..40).prop_map(|v| v.concat().into_bytes())
}

proptest! {
    #[test]
    fn nested_blocks_split_as_before(text in nested_text()) {
        same_as_before(&text)?;
    }
}

#[test]
fn deep_nesting_splits_as_before() {
    let mut text = String::from("# 1 \"t.cc\"\n");
    for k in 0..40 {
        text.push_str(&format!(
            "namespace n{k} {{\n# {k} \"h.h\"\nint v{k} = a < b;\n"
        ));
    }
    text.push_str("namespace e {}\n");
    text.push_str(&"}\n".repeat(40));
    same_as_before(text.as_bytes()).unwrap();
}
