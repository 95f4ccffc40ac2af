//! Property tests for every pass: candidates are strictly shorter than their input (so never
//! identical and never larger), no input makes a pass panic, and a reduction with a pass is a
//! fixpoint (reducing its output again changes nothing).

use proptest::prelude::*;
use reducers::passes::{default_pipeline, pipeline, CPass, Hints};
use reducers::{reduce, CancelToken, Options, Outcome};

fn passes() -> Vec<CPass> {
    let mut all = CPass::all();
    all.extend([CPass::Chunks(5), CPass::Chunks(12)]);
    all
}

fn hints(line: u32) -> Hints {
    Hints {
        location: Some(("a.c".into(), line)),
        function: Some("_Z1fv".into()),
        ..Hints::default()
    }
}

/// C-like text: fragments that exercise brackets, markers, literals and directives.
fn c_like() -> impl Strategy<Value = Vec<u8>> {
    let frag = prop::sample::select(vec![
        "int",
        "x",
        "f",
        "a",
        "{",
        "}",
        "(",
        ")",
        "[",
        "]",
        "<",
        ">",
        ";",
        ",",
        "::",
        "=",
        " ",
        " ",
        "\n",
        "\n",
        "# 1 \"a.c\"\n",
        "# 1 \"h.h\" 1 3\n",
        "# 3 \"a.c\" 2\n",
        "#pragma x\n",
        "\"str\"",
        "'c'",
        "42",
        "1.5f",
        "/* c */",
        "// c\n",
        "template",
        "struct",
        "namespace",
        "void f() {",
        "return",
        "\\\n",
        "R\"(x)\"",
        "\u{e9}",
        "\t",
        "\r",
        "\r\n",
        "# 2 \"a.c\"\r",
    ]);
    prop::collection::vec(frag, 0..80).prop_map(|v| v.concat().into_bytes())
}

fn any_text() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![prop::collection::vec(any::<u8>(), 0..300), c_like()]
}

fn interesting_iff_contains(needle: Vec<u8>) -> impl Fn(&[u8], &CancelToken) -> Outcome + Sync {
    move |t: &[u8], _: &CancelToken| {
        assert!(!t.is_empty(), "the empty text was tested");
        if t.windows(needle.len().max(1))
            .any(|w| w == needle.as_slice())
        {
            Outcome::Interesting
        } else {
            Outcome::Uninteresting
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn candidates_strictly_shrink(text in any_text(), line in 1u32..6) {
        for pass in passes() {
            for cand in pass.candidates(&text, &hints(line)).take(300) {
                if pass.only_whitespace() {
                    prop_assert!(cand != text, "{} kept {:?}", pass.name(), String::from_utf8_lossy(&text));
                    // Same tokens: checked with the crate's lexer in `layout.rs`'s property test.
                } else {
                    prop_assert!(cand.len() < text.len(), "{} grew or kept {:?}", pass.name(), String::from_utf8_lossy(&text));
                }
            }
        }
    }

    #[test]
    fn each_pass_reaches_a_stable_fixpoint(text in c_like(), at in any::<prop::sample::Index>(), len in 1usize..4) {
        prop_assume!(!text.is_empty());
        let start = at.index(text.len());
        let needle = text[start..(start + len).min(text.len())].to_vec();
        let test = interesting_iff_contains(needle);
        for pass in passes() {
            let opts = Options {
                jobs: 1,

                ..Options::new(pipeline(&[], &[pass], &[], Hints::default()))
            };
            let once = reduce(&text, &opts, &test, &mut |_| {});
            prop_assert!(once.output.len() <= text.len());
            prop_assert_eq!(test(&once.output, &CancelToken::new()), Outcome::Interesting);
            let twice = reduce(&once.output, &opts, &test, &mut |_| {});
            prop_assert_eq!(&twice.output, &once.output, "{} not stable", pass.name());
            prop_assert_eq!(twice.stats.improvements, 0);
        }
    }

    #[test]
    fn default_pipeline_is_stable_and_job_independent(text in c_like(), at in any::<prop::sample::Index>()) {
        prop_assume!(!text.is_empty());
        let start = at.index(text.len());
        let needle = text[start..(start + 2).min(text.len())].to_vec();
        let test = interesting_iff_contains(needle);
        let one = Options { jobs: 1, ..Options::new(default_pipeline(Hints::default())) };
        let four = Options { jobs: 4, ..Options::new(default_pipeline(Hints::default())) };
        let a = reduce(&text, &one, &test, &mut |_| {});
        let b = reduce(&text, &four, &test, &mut |_| {});
        prop_assert_eq!(&a.output, &b.output);
        let again = reduce(&a.output, &one, &test, &mut |_| {});
        prop_assert_eq!(&again.output, &a.output);
    }
}

#[test]
fn names_are_distinct() {
    let names: std::collections::HashSet<_> = CPass::all().iter().map(CPass::name).collect();
    assert_eq!(names.len(), CPass::all().len());
}

/// Old Mac text: every line ends in a lone `\r`, which compilers take as a line end.
const LONE_CR: &str =
    "#include <a.h>\r// the rest is code\rint a;\rint b;\rint main() {\r  return a;\r}\r";

#[test]
fn lone_carriage_returns_end_lines() {
    let without_b = LONE_CR.replace("int b;\r", "");
    let lines: Vec<Vec<u8>> = CPass::Lines
        .candidates(LONE_CR.as_bytes(), &Hints::default())
        .collect();
    assert!(lines.contains(&without_b.clone().into_bytes()), "{lines:?}");
    // The directive and the comment end at their `\r`: the declarations after them are code.
    let top: Vec<Vec<u8>> = CPass::Chunks(0)
        .candidates(LONE_CR.as_bytes(), &Hints::default())
        .collect();
    assert!(
        top.iter()
            .any(|c| !c.windows(6).any(|w| w == b"int b;") && c.ends_with(b"}\r")),
        "{top:?}"
    );
    // And a whole reduction gets somewhere.
    let test = interesting_iff_contains(b"return a;".to_vec());
    let opts = Options {
        jobs: 1,
        ..Options::new(reducers::passes::raw_pipeline(Hints::default()))
    };
    let r = reduce(LONE_CR.as_bytes(), &opts, &test, &mut |_| {});
    assert!(
        r.output.len() < LONE_CR.len() / 2,
        "{:?}",
        String::from_utf8_lossy(&r.output)
    );
}

/// Inputs on which a reduction's result once shrank when reduced again: literals emptied two
/// adjacent strings (`"(x)" "str"` to `"" ""`, or `R"(x)" ""`) after the last deletions, and
/// a line marker right before another one (which only `main-only` deleted, and it runs once).
const ONCE_UNSTABLE: [&[u8]; 3] = [
    b"'c'xxxxintxintxx1.5f'c'// c\nxR\"(x)\"\"str\"xxstruct'c'",
    b"intxx# 1 \"a.c\"\nint# 1 \"a.c\"\nR\"(x)\"\"str\"int",
    b"# 2 \"a.c\"\r\"str\"intx# 2 \"a.c\"\r# 1 \"a.c\"\nxx// c\nx\\\n# 1 \"a.c\"\nx42#pragma x\nstruct",
];

#[test]
fn reducing_a_result_again_changes_nothing_for_any_two_byte_needle() {
    let one = Options {
        jobs: 1,
        ..Options::new(default_pipeline(Hints::default()))
    };
    for text in ONCE_UNSTABLE {
        for start in 0..text.len() - 1 {
            let test = interesting_iff_contains(text[start..start + 2].to_vec());
            let once = reduce(text, &one, &test, &mut |_| {});
            let again = reduce(&once.output, &one, &test, &mut |_| {});
            assert_eq!(
                String::from_utf8_lossy(&again.output),
                String::from_utf8_lossy(&once.output),
                "{:?} at {start}",
                String::from_utf8_lossy(text)
            );
        }
    }
}
