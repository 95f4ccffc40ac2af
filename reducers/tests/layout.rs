//! Golden tests of the readable layout (`normalise`) on real reduced test cases: the inputs in
//! `tests/layout/*.in` are icepick's reduced files for corpus cases before this layout existed
//! (`triage` on `corpus/fe-gh59446`, `corpus/opt-gh68553` and `corpus/destructor-lookup`), the
//! `.want` files are what a maintainer should get. Set `BLESS=1` to rewrite the `.want` files
//! after a deliberate change (then review the diff).

use std::path::Path;

use reducers::passes::{CPass, Hints};

fn check(name: &str) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/layout");
    let input = std::fs::read(dir.join(format!("{name}.in"))).expect("input");
    let out = CPass::Normalise
        .candidates(&input, &Hints::default())
        .next()
        .expect("a layout differing from the input");
    let want_path = dir.join(format!("{name}.want"));
    if std::env::var_os("BLESS").is_some() {
        std::fs::write(&want_path, &out).expect("bless");
    }
    let want = std::fs::read(&want_path).expect("golden file");
    assert_eq!(
        String::from_utf8_lossy(&out),
        String::from_utf8_lossy(&want),
        "{name}"
    );
    // Laid out already: nothing more to offer (in particular no squeezing back).
    assert!(CPass::Normalise
        .candidates(&out, &Hints::default())
        .next()
        .is_none());
    // Only whitespace changed.
    let dense = |t: &[u8]| -> Vec<u8> {
        t.iter()
            .copied()
            .filter(|c| !c.is_ascii_whitespace())
            .collect()
    };
    assert_eq!(dense(&out), dense(&input));
    for line in String::from_utf8_lossy(&out).lines() {
        assert!(!line.ends_with(' '), "trailing space: {line:?}");
        let indent = line.len() - line.trim_start().len();
        assert_eq!(indent % 2, 0, "odd indentation: {line:?}");
    }
    assert!(out.ends_with(b"\n") && !out.ends_with(b"\n\n"));
}

#[test]
fn layout_of_the_reduced_fe_gh59446() {
    check("fe-gh59446");
}

#[test]
fn layout_of_the_reduced_opt_gh68553() {
    check("opt-gh68553");
}

#[test]
fn layout_of_the_reduced_destructor_lookup() {
    check("destructor-lookup");
}
