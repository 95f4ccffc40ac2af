//! Unit tests of the closure cut: each builds a small marked text and checks what stays.

use super::split::literal_suffix;
use super::*;
use crate::plan::apply;

/// Hints naming line 1 of the tests' main file `m.cpp` as the crash site.
fn at_main() -> Hints {
    Hints {
        location: Some(("m.cpp".into(), 1)),
        ..Hints::default()
    }
}

fn first(text: &str, hints: &Hints) -> String {
    let plan = closure(text.as_bytes(), hints);
    let step = plan
        .step(text.as_bytes(), crate::plan::START)
        .expect("a cut");
    String::from_utf8(apply(text.as_bytes(), &step.edits)).unwrap()
}

#[test]
fn keeps_the_closure_of_the_crash_site() {
    let text = "# 1 \"m.cpp\"\n# 1 \"h.h\" 1 3\nnamespace std { typedef unsigned long size_t; struct unused { int u; }; template <class T> struct vec { size_t n; }; template <class T> bool operator==(vec<T>, vec<T>); bool operator<(unused, unused); }\nusing namespace std;\nstruct Other { };\nint helper(int);\nint helper(int x) { return x; }\n# 2 \"m.cpp\" 2\nstruct A;\nstruct A { vec<int> v; void m(); };\nvoid A::m() {}\nenum E { e1, e2 };\nint f(A *a) {\n  return a->v == a->v ? e2 : helper(1);\n}\nint g() { return 0; }\n";
    let hints = Hints {
        location: Some(("m.cpp".into(), 6)),
        ..Hints::default()
    };
    let out = first(text, &hints);
    for keep in [
        "typedef unsigned long size_t;",
        "template <class T> struct vec",
        "bool operator==(vec<T>, vec<T>);",
        "using namespace std;",
        "int helper(int);",
        "int helper(int x) { return x; }",
        "struct A;",
        "struct A { vec<int> v; void m(); };",
        "void A::m() {}",
        "enum E { e1, e2 };",
        "return a->v == a->v",
    ] {
        assert!(out.contains(keep), "{keep} missing from\n{out}");
    }
    for gone in ["struct unused", "operator<", "struct Other", "int g()"] {
        assert!(!out.contains(gone), "{gone} kept in\n{out}");
    }
    assert!(out.contains("namespace std {"), "{out}");
}

#[test]
fn a_constrained_specialisation_stays_with_its_template_head() {
    // libstdc++'s <compare>: the head's requires-expression body must not end the
    // declaration, or the cut keeps `struct R<T, U>` without `template <…>`.
    let text = "# 1 \"m.cpp\"\n# 1 \"h.h\" 1 3\ntemplate <class T, class U> struct R { };\ntemplate <class T, class U>\n  requires requires { typename T::t; }\n  struct R<T, U> { using type = T; };\nstruct Unused { };\n# 2 \"m.cpp\" 2\nR<int, int> r;\n";
    let out = first(text, &at_main());
    assert!(
        out.contains(
            "template <class T, class U>\n  requires requires { typename T::t; }\n  struct R<T, U>"
        ),
        "{out}"
    );
    assert!(!out.contains("Unused"), "{out}");
}

#[test]
fn a_variable_templates_specialisations_go_with_it() {
    // libstdc++'s <compare>: `__cmp_cat_id<partial_ordering>` decides
    // `common_comparison_category`; without the specialisations it is `void`.
    let text = "# 1 \"m.cpp\"\n# 1 \"h.h\" 1 3\nstruct P { };\ntemplate <class T> constexpr unsigned id = 1;\ntemplate <> constexpr unsigned id<P> = 2;\ntemplate <class T> T make();\ntemplate <> P make<P>();\ntemplate <class T> P unrelated();\n# 2 \"m.cpp\" 2\nunsigned u = id<P> + sizeof(make<int>());\n";
    let out = first(text, &at_main());
    assert!(
        out.contains("template <> constexpr unsigned id<P> = 2;"),
        "{out}"
    );
    assert!(out.contains("template <> P make<P>();"), "{out}");
    assert!(!out.contains("unrelated"), "{out}");
}

#[test]
fn says_why_a_declaration_is_kept() {
    let text = b"struct U {};\nstruct T { U u; };\nstruct V {};\nint f(T *t);\n";
    let s = Split::new(text);
    let (kept, why) = keep(&s, &[3]);
    assert_eq!(kept, [true, true, false, true]);
    assert_eq!(why[1], Some((3, &b"T"[..])));
    assert_eq!(why[0], Some((1, &b"U"[..])));
    assert_eq!(why[3], None);
}

#[test]
fn no_roots_no_cut() {
    let plan = closure(b"int a; int b;", &Hints::default());
    assert!(plan.step(b"int a; int b;", crate::plan::START).is_none());
}

#[test]
fn an_alias_templates_arguments_declare_nothing() {
    // `using map = std::map<_Key, _Tp>`: the commas in the argument list start no new
    // declarator, so `_Tp` (every template's parameter) is no name of the alias.
    let text = "# 1 \"m.cpp\"\n# 1 \"h.h\" 1 3\ntemplate <class K, class T> struct map { };\ntemplate <class K, class T> using alias = map<K, T>;\ntemplate <class T> struct vec { T t; };\n# 2 \"m.cpp\" 2\nvec<int> v;\n";
    let out = first(text, &at_main());
    assert!(out.contains("struct vec"), "{out}");
    assert!(!out.contains("alias"), "{out}");
    assert!(!out.contains("struct map"), "{out}");
}

#[test]
fn a_specialisation_waits_for_the_classes_it_is_for() {
    // `hash<shared>` is needed only when `shared` is used too; an explicit instantiation
    // is never needed; `ranges::end` (an object) is not what a range-for calls; the
    // template argument list of `operator<` is no list.
    let text = "# 1 \"m.cpp\"\n# 1 \"h.h\" 1 3\ntemplate <class T> struct hash { };\nstruct shared { int s; };\ntemplate <> struct hash<shared> { shared s; };\nstruct used { };\ntemplate <> struct hash<used> { };\nstruct big { int b; };\nextern template struct hash<big>;\nstruct End { };\ninline constexpr End end{};\ntemplate <class T> struct box { };\ntemplate <class T> bool operator<(const box<T>&, const box<T>&) { struct Inner { } i; return true; }\n# 2 \"m.cpp\" 2\nhash<used> h;\n";
    let out = first(text, &at_main());
    assert!(out.contains("template <> struct hash<used> { };"), "{out}");
    assert!(!out.contains("hash<shared>"), "{out}");
    assert!(!out.contains("struct shared"), "{out}");
    assert!(!out.contains("extern template"), "{out}");
    assert!(!out.contains("End"), "{out}");
    assert!(!out.contains("operator<"), "{out}");
}

#[test]
fn user_defined_literal_suffixes() {
    assert_eq!(literal_suffix(b"100ms"), Some(&b"ms"[..]));
    assert_eq!(literal_suffix(b"1.5_km"), Some(&b"_km"[..]));
    assert_eq!(literal_suffix(b"1e10s"), Some(&b"s"[..]));
    assert_eq!(literal_suffix(b"2h"), Some(&b"h"[..]));
    assert_eq!(literal_suffix(b"0x1fu"), None);
    assert_eq!(literal_suffix(b"0xd"), None);
    assert_eq!(literal_suffix(b"1.0f"), None);
    assert_eq!(literal_suffix(b"10'000ull"), None);
    assert_eq!(literal_suffix(b"1e-3"), None);
    let text = "# 1 \"m.cpp\"\n# 1 \"h.h\" 1 3\nstruct ms_t { };\nconstexpr ms_t operator\"\"ms(unsigned long long) { return {}; }\nconstexpr int operator\"\"_km(long double) { return 1; }\n# 2 \"m.cpp\" 2\nauto t = 100ms;\n";
    let out = first(text, &at_main());
    assert!(out.contains("operator\"\"ms"), "{out}");
    assert!(!out.contains("_km"), "{out}");
}

#[test]
fn a_structured_binding_declares_its_names() {
    let text = "# 1 \"m.cpp\"\n# 1 \"h.h\" 1 3\nstruct P { int a, b; };\nextern P p;\nauto [x, y] = p;\nconst auto& [z, w] = p;\nint unused_one;\n# 2 \"m.cpp\" 2\nint f() { return y + z; }\n";
    let out = first(text, &at_main());
    assert!(out.contains("auto [x, y] = p;"), "{out}");
    assert!(out.contains("const auto& [z, w] = p;"), "{out}");
    assert!(out.contains("extern P p;"), "{out}");
    assert!(!out.contains("unused_one"), "{out}");
}

#[test]
fn a_constructor_with_braced_initialisers_is_one_declaration() {
    let text = "# 1 \"m.cpp\"\n# 1 \"h.h\" 1 3\nstruct Y { Y(int); int a, b; };\nY::Y(int v)\n: a{v}, b{v}\n{ }\nint unused_one;\n# 2 \"m.cpp\" 2\nY y(1);\n";
    let out = first(text, &at_main());
    assert!(out.contains(": a{v}, b{v}\n{ }"), "{out}");
    assert!(!out.contains("unused_one"), "{out}");
}

#[test]
fn names_in_inline_namespaces_are_their_parents() {
    let text = "# 1 \"m.cpp\"\n# 1 \"h.h\" 1 3\nnamespace std __attribute__ ((__visibility__ (\"default\"))) {\ninline namespace __cxx11 __attribute__((__abi_tag__ (\"cxx11\"))) {\n}\nnamespace __cxx11 {\ntemplate<typename _CharT> class basic_string;\n}\ntypedef basic_string<char> string;\nextern int min;\n}\n# 2 \"m.cpp\" 2\nstd::string s;\n";
    let out = first(text, &at_main());
    assert!(out.contains("class basic_string;"), "{out}");
    assert!(out.contains("typedef basic_string<char> string;"), "{out}");
    assert!(!out.contains("min"), "{out}");
}

#[test]
fn a_crash_in_an_instantiation_keeps_the_statements_that_instantiate() {
    // The parser is at the end of the file; the stack names f's definition (line 2) and f.
    let text = "# 1 \"m.cpp\"\n# 1 \"h.h\" 1 3\nnamespace std { struct big { int x; }; template <class T> T use(T); }\n# 2 \"m.cpp\" 2\nnamespace N {\ntemplate <class T> void f() { }\nint run() { std::big b; f<int>(); auto v = 1; g(v); return std::use(b).x; }\n}\n";
    let hints = Hints {
        sites: vec![("m.cpp".into(), 2)],
        instantiated: Some("f".into()),
        ..Hints::default()
    };
    let out = first(text, &hints);
    assert!(out.contains("template <class T> void f() { }"), "{out}");
    assert!(out.contains("int run() { f<int>(); }"), "{out}");
    assert!(!out.contains("big"), "{out}");
}

#[test]
fn the_crash_statement_keeps_the_locals_it_uses() {
    let text = "# 1 \"m.cpp\"\n# 1 \"h.h\" 1 3\nnamespace std { struct big { int x; }; struct small { }; int log(big); }\n# 2 \"m.cpp\" 2\nint h(int);\nint g() { std::small s; int n = 1; std::big b; std::log(b); return h(n); }\n";
    let hints = Hints {
        location: Some(("m.cpp".into(), 3)),
        column: Some(61),
        ..Hints::default()
    };
    let out = first(text, &hints);
    assert!(out.contains("int g() { int n = 1; return h(n); }"), "{out}");
    assert!(out.contains("int h(int);"), "{out}");
    assert!(!out.contains("big") && !out.contains("small"), "{out}");
}

#[test]
fn variables_are_found_through_their_namespace_only() {
    // `std::min` is a use of the function, not of the `ranges::min` object.
    let text = "# 1 \"m.cpp\"\n# 1 \"h.h\" 1 3\nnamespace std {\nnamespace ranges { struct _Min { }; inline constexpr _Min min{}; }\ntemplate <class T> T min(T, T);\nstruct unrelated { };\n}\n# 2 \"m.cpp\" 2\nint x = std::min(1, 2);\n";
    let out = first(text, &at_main());
    assert!(out.contains("template <class T> T min(T, T);"), "{out}");
    assert!(!out.contains("_Min"), "{out}");
    // Named through its namespace, the object stays.
    let used = text.replace("std::min(1, 2)", "sizeof(std::ranges::min)");
    let out = first(&used, &at_main());
    assert!(out.contains("inline constexpr _Min min{};"), "{out}");
}

#[test]
fn a_free_operator_waits_for_its_token() {
    let text = "# 1 \"m.cpp\"\n# 1 \"h.h\" 1 3\nnamespace std { template <class O, class T> O&& operator<<(O&& o, const T&); }\nstruct S { };\n# 2 \"m.cpp\" 2\nint x = 1 + 2;\n";
    let out = first(text, &at_main());
    assert!(!out.contains("operator<<"), "{out}");
    let out = first(&text.replace("1 + 2", "1 << 2"), &at_main());
    assert!(out.contains("operator<<"), "{out}");
}

#[test]
fn members_and_template_parameters_are_no_uses() {
    // `ord::equal` and `static const ord equal;` name a member, `_Size` a parameter.
    let text = "# 1 \"m.cpp\"\n# 1 \"h.h\" 1 3\ntemplate <class I> bool equal(I, I);\nstruct _Size { int big; };\nstruct ord { static const ord equal; template <class _Size> int size(_Size); };\nconst ord ord::equal{};\n# 2 \"m.cpp\" 2\nord o;\n";
    let out = first(text, &at_main());
    assert!(out.contains("const ord ord::equal{};"), "{out}");
    assert!(!out.contains("bool equal"), "{out}");
    assert!(!out.contains("int big"), "{out}");
}

/// Every candidate of the hollow pass on `text`, in order.
fn hollowed(text: &str) -> Vec<String> {
    super::super::CPass::Hollow
        .candidates(text.as_bytes(), &at_main())
        .map(|c| String::from_utf8(c).unwrap())
        .collect()
}

#[test]
fn hollow_writes_a_heavy_class_as_a_declaration_and_drops_what_only_its_body_named() {
    // `Size` only needs `Big` as a name: its body, its base and the helpers only they name
    // can go, in one candidate; the line marker inside the body keeps a line of its own.
    let pad = "int pad; ".repeat(300);
    let text = format!(
        "# 1 \"m.cpp\"\n# 1 \"h.h\" 1 3\nstruct Base {{ {pad} }};\nstruct Helper {{ {pad} }};\nvoid helper_fn(Helper);\ntemplate <class T, class A = Base> struct Big final : Base {{\n  Helper h;\n# 40 \"h.h\" 3\n  void f() {{ helper_fn(h); }}\n}};\ntemplate <class T> struct Size;\ntemplate <class T> struct Size<Big<T>> {{ static const int value = 1; }};\n# 2 \"m.cpp\" 2\nint main() {{ return Size<Big<int>>::value; }}\n"
    );
    let cands = hollowed(&text);
    let hollowed = cands
        .iter()
        .find(|c| c.contains("struct Big\n# 40 \"h.h\" 3\n;"))
        .unwrap_or_else(|| panic!("no candidate hollows Big:\n{cands:#?}"));
    assert!(
        hollowed.contains("template <class T, class A = Base> struct Big\n"),
        "{hollowed}"
    );
    for gone in ["struct Helper", "helper_fn", "Helper h;"] {
        assert!(!hollowed.contains(gone), "{gone} kept in\n{hollowed}");
    }
    // The default argument still names Base.
    assert!(hollowed.contains("struct Base {"), "{hollowed}");
    assert!(hollowed.contains("struct Size<Big<T>> { static const int value = 1; };"));
    // Base is named by the template head: hollowing it is offered too, never its removal.
    assert!(cands.iter().all(|c| c.contains("struct Base")));
}

#[test]
fn hollow_leaves_enums_and_classes_with_declarators() {
    let pad = "int pad; ".repeat(300);
    let text = format!(
        "# 1 \"m.cpp\"\n# 1 \"h.h\" 1 3\nenum class E {{ a, b }};\nstruct S {{ {pad} }} s;\n# 2 \"m.cpp\" 2\nint main() {{ return s.pad + (int)E::a; }}\n"
    );
    assert!(hollowed(&text).is_empty());
}

#[test]
fn an_overload_is_kept_only_for_a_call_with_a_count_it_takes() {
    // `std::move(x)` names the one-argument utility, not the three-argument algorithm and
    // what that needs.
    let text = "# 1 \"m.cpp\"\n# 1 \"h.h\" 1 3\nstruct iter_traits { int big; };\ntemplate <class T> T&& move(T& t) { return static_cast<T&&>(t); }\ntemplate <class I, class O> O move(I a, I b, O c) { iter_traits t; return c; }\n# 2 \"m.cpp\" 2\nint main() { int a = 0; return move(a); }\n";
    let out = first(text, &at_main());
    assert!(out.contains("T&& move(T& t)"), "{out}");
    assert!(!out.contains("O move(I a"), "{out}");
    assert!(!out.contains("iter_traits"), "{out}");
}

#[test]
fn a_using_declaration_of_functions_waits_for_an_overload_it_brings() {
    // libstdc++'s `using ranges::get;` in `std`: `get(v)` on a variant needs no `get` of a
    // subrange, nor the using-declaration, until a subrange is used.
    let text = "# 1 \"m.cpp\"\n# 1 \"h.h\" 1 3\nstruct unused {};\nnamespace std {\nnamespace ranges { struct subrange { int big; }; int get(subrange s) { return s.big; } }\nusing ranges::get;\ntemplate <class T> struct variant { T t; };\ntemplate <class T> T get(variant<T> v) { return v.t; }\n}\n# 2 \"m.cpp\" 2\nint main() { std::variant<int> v; return std::get(v); }\n";
    let out = first(text, &at_main());
    assert!(out.contains("T get(variant<T> v)"), "{out}");
    for gone in ["using ranges::get;", "struct subrange", "int get(subrange"] {
        assert!(!out.contains(gone), "{gone} kept in\n{out}");
    }
    let used = text.replace(
        "std::variant<int> v;",
        "std::variant<int> v; std::ranges::subrange s;",
    );
    let out = first(&used, &at_main());
    for keep in ["using ranges::get;", "struct subrange", "int get(subrange"] {
        assert!(out.contains(keep), "{keep} missing from\n{out}");
    }
}

#[test]
fn range_for_and_comparisons_keep_what_they_call() {
    // `begin`/`end` and the comparison operators of a used class are needed only by code that
    // has a range-for or compares.
    let text = "# 1 \"m.cpp\"\n# 1 \"h.h\" 1 3\ntemplate <class T> struct vec { T* p; };\ntemplate <class T> T* begin(vec<T>& v) { return v.p; }\ntemplate <class T> T* end(vec<T>& v) { return v.p; }\ntemplate <class T> bool operator==(const vec<T>&, const vec<T>&);\ntemplate <class T> bool operator<=>(const vec<T>&, const vec<T>&);\n# 2 \"m.cpp\" 2\nint main() { vec<int> v; return 0; }\n";
    let out = first(text, &at_main());
    for gone in ["begin(", "end(", "operator==", "operator<=>"] {
        assert!(!out.contains(gone), "{gone} kept in\n{out}");
    }
    let looped = text.replace(
        "return 0;",
        "for (int x : v) if (v == v) return x; return 0;",
    );
    let out = first(&looped, &at_main());
    for keep in ["begin(", "end(", "operator=="] {
        assert!(out.contains(keep), "{keep} missing from\n{out}");
    }
    assert!(!out.contains("operator<=>"), "{out}");
}

#[test]
fn raw_line_numbers_locate_only_in_the_text_they_were_taken_from() {
    // Without markers, line 2 is the crash site in the text the crash was seen in; once a
    // pass has cut that text, line 2 is some other line, and the crash is in the last
    // declaration (crash-cut removed what followed it).
    let text = "int unused;\nint f() { return 1; }\nint g() { return f(); }\n";
    let hints = |located_in| Hints {
        location: Some(("m.cpp".into(), 2)),
        located_in,
        ..Hints::default()
    };
    let out = first(text, &hints(Some(super::super::text_id(text.as_bytes()))));
    assert_eq!(out, "int f() { return 1; }\n");
    let out = first(text, &hints(Some(0)));
    assert_eq!(out, "int f() { return 1; }\nint g() { return f(); }\n");
}

#[test]
fn hollow_writes_together_the_classes_that_each_keep_a_header_for_the_other() {
    // `Get` and `Put` each keep `str`: neither gains alone, both together drop it.
    let pad = "int pad; ".repeat(300);
    let text = format!(
        "# 1 \"m.cpp\"\n# 1 \"h.h\" 1 3\nstruct str {{ {pad} }};\n# 2 \"m.cpp\" 2\nstruct Get {{ str key; }};\nstruct Put {{ str key; str value; }};\ntemplate <class... T> struct V;\nusing R = V<Get, Put>;\nint main() {{ R* r = 0; return 0; }}\n"
    );
    let cands: Vec<String> = crate::passes::CPass::Hollow
        .candidates(text.as_bytes(), &at_main())
        .map(|c| String::from_utf8(c).unwrap())
        .collect();
    let both = cands
        .iter()
        .find(|c| c.contains("struct Get;") && c.contains("struct Put;"))
        .unwrap_or_else(|| panic!("no candidate hollows both:\n{cands:#?}"));
    assert!(!both.contains("struct str"), "{both}");
}

#[test]
fn hollow_writes_a_function_as_a_declaration() {
    // A function's body may be all that keeps a helper; not a deduced return type's.
    let pad = "int pad; ".repeat(300);
    let text = format!(
        "# 1 \"m.cpp\"\n# 1 \"h.h\" 1 3\nstruct helper {{ {pad} }};\nstruct other {{ {pad} }};\ntemplate <class T> int f(T t) {{ helper h; return 0; }}\ntemplate <class T> auto g(T t) {{ other o; return 0; }}\n# 2 \"m.cpp\" 2\nint main() {{ return f(1) + g(1); }}\n"
    );
    let cands: Vec<String> = crate::passes::CPass::Hollow
        .candidates(text.as_bytes(), &at_main())
        .map(|c| String::from_utf8(c).unwrap())
        .collect();
    assert!(
        cands.iter().any(|c| c.contains("int f(T t);")),
        "{cands:#?}"
    );
    assert!(
        cands.iter().all(|c| c.contains("auto g(T t) {")),
        "{cands:#?}"
    );
}
