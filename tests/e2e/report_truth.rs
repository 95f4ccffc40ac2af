//! Every statement of `report.md` holds, and the report carries what
//! LLVM's "How to submit a bug" asks for. Real clang-19 crashes (`#pragma clang __debug
//! crash`), captured and classified by the `icepick` binary.

use std::path::Path;

use crate::util::*;

fn report_md(case: &Path) -> String {
    std::fs::read_to_string(case.join("report.md")).unwrap()
}

/// An x86 frontend crash after one source error: the report names the triple, shows the
/// error clang printed before the crash and the crashing job's cc1 line, labels it
/// crash-on-invalid, and (after classify) says nothing about RISC-V experiments.
#[test]
fn x86_frontend_report_has_triple_prior_diagnostics_and_cc1_line_and_no_riscv_section() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::write(
        dir.join("f.c"),
        "int f(void) { return undeclared_x; }\nvoid g(void) {\n#pragma clang __debug crash\n}\n",
    )
    .unwrap();
    let argv: Vec<String> = ["clang-19", "-O2", "-c", "f.c", "-o", "f.o"]
        .map(String::from)
        .to_vec();
    let case = capture_case(dir, &argv);
    let json = read_case(&case);
    assert_eq!(json["crash"]["source_errors"], 1, "{json:#}");
    assert_eq!(
        json["bug_info"]["triple"], "x86_64-pc-linux-gnu",
        "{json:#}"
    );
    let o = icepick(dir, &["classify", case.to_str().unwrap()]);
    expect_success(&o);
    let md = report_md(&case);
    assert!(md.contains("| target | `x86_64-pc-linux-gnu` |"), "{md}");
    assert!(
        md.contains("```\nf.c:1:22: error: use of undeclared identifier 'undeclared_x'"),
        "{md}"
    );
    assert!(md.contains("```sh\n"), "{md}");
    let cc1 = md
        .lines()
        .find(|l| l.contains(" -cc1 -triple x86_64-pc-linux-gnu "))
        .unwrap_or_else(|| panic!("no cc1 line:\n{md}"));
    assert!(cc1.ends_with(" f.c"), "{cc1}");
    // Clang's own words: `('{}')`, not the signature's `('X')`.
    assert!(
        md.contains("| phase | `in compound statement ('{}')` |"),
        "{md}"
    );
    assert!(md.contains("`crash-on-invalid`"), "{md}");
    assert!(md.contains("## Classification"), "{md}");
    for gone in [
        "E5:",
        "E5-v",
        "qemu",
        "Not run here",
        "Next step",
        "| E2 ",
        "| E3 ",
        "| E4 ",
    ] {
        assert!(!md.contains(gone), "{gone:?} in:\n{md}");
    }
}

/// A crash-on-valid: no diagnostic before the crash, and the report says so.
#[test]
fn report_of_a_crash_with_no_prior_diagnostic_says_so() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::write(
        dir.join("v.c"),
        "void g(void) {\n#pragma clang __debug crash\n}\n",
    )
    .unwrap();
    let argv: Vec<String> = ["clang-19", "-c", "v.c"].map(String::from).to_vec();
    let case = capture_case(dir, &argv);
    let md = report_md(&case);
    assert!(
        md.contains("The compiler printed no diagnostic before the crash"),
        "{md}"
    );
    assert!(md.contains("`crash-on-valid`"), "{md}");
}
