//! Planning stays near-linear on inputs that are big in the ways real translation units are:
//! a main file of many declarations under line markers (an amalgamation such as sqlite3.c),
//! template arguments nested very deep, and namespaces nested very deep. The sizes are ones that a quadratic planner takes
//! minutes on and the crate plans in well under a second in release; no time is asserted,
//! only that planning finishes with the candidates it should offer (`examples/plan_bench.rs`
//! prints the times).

use reducers::passes::{CPass, Hints};

#[path = "common/generate.rs"]
mod generate;

/// The first candidate of `pass` for `text`, as text.
fn first_candidate(pass: CPass, text: &[u8]) -> Option<String> {
    let first = pass.candidates(text, &Hints::default()).next()?;
    Some(String::from_utf8(first).unwrap())
}

#[test]
fn a_big_main_file_is_planned() {
    let text = generate::main_file(2 << 20);
    let cut = first_candidate(CPass::Closure, &text).expect("the closure offers a cut");
    // The header's unused class goes; what the main file calls and all of its functions stay.
    assert!(!cut.contains("struct S") && cut.contains("int helper(int);"));
    assert!(cut.contains("int f0(int x)") && cut.len() + 32 > text.len());
    // Hollowing weighs every main-file function: it must finish too.
    assert!(CPass::Hollow.candidates(&text, &Hints::default()).count() < 100);
}

#[test]
fn deeply_nested_templates_are_planned() {
    let text = generate::nested_templates(50_000);
    let cut = first_candidate(CPass::Closure, &text).expect("the closure offers a cut");
    assert!(!cut.contains("int unused;") && cut.contains("struct A"));
    assert!(cut.contains("return f<A<A<"));
}

#[test]
fn deeply_nested_namespaces_are_planned() {
    let text = generate::nested_namespaces(20_000);
    let cut = first_candidate(CPass::Closure, &text).expect("the closure offers a cut");
    assert!(!cut.contains("struct Unused") && cut.contains("struct Used"));
    // The marker between the two stays, so the lines after it keep their place.
    assert!(cut.contains("# 7 \"h.h\"") && cut.contains("namespace n19999 {"));
}
