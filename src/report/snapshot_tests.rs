//! Snapshots of the Markdown and JSON reports, rendered as `icepick report --redact` renders
//! them but with fixed [`Redactions`] (not this machine's), so they are the same everywhere.
//!
//! Cases: `sample_case` (a bare capture), and two real cases written by `icepick` from the
//! corpus in a home directory (`/home/alice/build-pioneer/…`): `destructor-lookup` after
//! `icepick triage` (flags, reduction, versions and classification sections) and
//! `hip-two-arch` after `icepick capture` (a HIP device job, small preprocessed input).
//! `destructor-lookup` is an x86 frontend crash: its `bug_info` (triple,
//! diagnostics before the crash, cc1 line) and `flags` (the `-std` and `-O` rows probed on
//! the original command) come from a capture and `icepick flags` run by this build.
//! Snapshots live in `snapshots/`; a missing or changed one fails the test (`scripts/test`
//! runs with `INSTA_UPDATE=no`). Review changes with `cargo insta review`, or rerun with
//! `INSTA_UPDATE=always` and read the diff.

use super::*;
use crate::case::tests::sample_case;

fn redactions() -> Redactions {
    Redactions {
        homes: vec!["/home/alice".into()],
        users: vec!["alice".into()],
        hosts: vec!["pioneer".into()],
        paths: Vec::new(),
    }
}

/// Nothing of the machine is left: no home directory, user or host name, or temporary path.
fn assert_redacted(text: &str) {
    for gone in ["/home/alice", "alice", "pioneer"] {
        assert!(!text.contains(gone), "{gone:?} left in:\n{text}");
    }
    let tmp = regex::Regex::new(r"/tmp/([^/\s'`\x22]+)").unwrap();
    for c in tmp.captures_iter(text) {
        assert_eq!(&c[1], "…", "temporary path left in:\n{text}");
    }
}

fn fixture(name: &str) -> Case {
    let text = match name {
        "destructor-lookup" => include_str!("testdata/destructor-lookup/case.json"),
        "hip-two-arch" => include_str!("testdata/hip-two-arch/case.json"),
        _ => unreachable!(),
    };
    serde_json::from_str(text).expect("a case.json icepick wrote")
}

/// `sample_case`, as if captured in a home directory, from a temporary build directory.
fn sample() -> Report {
    let mut case = sample_case();
    case.cwd = "/home/alice/src/pioneer-fw".into();
    case.command = [
        "clang",
        "-O2",
        "-c",
        "/tmp/icepick-demo.x1/project/f.c",
        "-o",
        "/tmp/icepick-demo.x1/f.o",
    ]
    .map(String::from)
    .to_vec();
    Report {
        case,
        reduced: None,
        input: None,
    }
}

fn destructor_lookup() -> Report {
    Report {
        case: fixture("destructor-lookup"),
        reduced: Some(include_bytes!("testdata/destructor-lookup/reduced.ii").to_vec()),
        // The 850 KB preprocessed input is not kept: the link uses the reduction.
        input: None,
    }
}

fn hip_two_arch() -> Report {
    Report {
        case: fixture("hip-two-arch"),
        reduced: None,
        input: Some(include_bytes!("testdata/hip-two-arch/input.hip").to_vec()),
    }
}

fn markdown_of(report: &Report) -> String {
    let md = report.redacted(&redactions()).unwrap().markdown();
    assert_redacted(&md);
    md
}

/// The redacted report, after checking its JSON form (in the CLI's key order) is redacted.
fn redacted_for_json(report: &Report) -> Report {
    let r = report.redacted(&redactions()).unwrap();
    assert_redacted(&serde_json::to_string_pretty(&r.json()).unwrap());
    r
}

#[test]
fn the_fixtures_do_hold_what_redaction_must_remove() {
    // Otherwise the redaction checks below prove nothing.
    for r in [sample(), destructor_lookup(), hip_two_arch()] {
        let raw = serde_json::to_string(&r.json()).unwrap();
        assert!(
            raw.contains("/home/alice/build-pioneer") || raw.contains("/home/alice/src/pioneer")
        );
    }
    assert!(serde_json::to_string(&sample().json())
        .unwrap()
        .contains("/tmp/icepick-demo.x1/"));
    assert!(serde_json::to_string(&hip_two_arch().json())
        .unwrap()
        .contains("/tmp/kernel-gfx1030-"));
}

#[test]
fn sample_markdown() {
    insta::assert_snapshot!(markdown_of(&sample()));
}

#[test]
fn sample_json() {
    insta::assert_json_snapshot!(redacted_for_json(&sample()).json());
}

#[test]
fn destructor_lookup_markdown() {
    let md = markdown_of(&destructor_lookup());
    assert!(md.contains("[Try it on Compiler Explorer](https://godbolt.org/clientstate/"));
    insta::assert_snapshot!(md);
}

/// An x86 frontend crash's report names the target triple, shows the
/// diagnostics clang printed before the crash and the crashing job's cc1 line, shows the
/// phase in clang's words, never says `-std` is needed (the source crashes with -std=c++11
/// too) and has no RISC-V experiments, next step or "not run here" list.
#[test]
fn x86_frontend_report_says_what_llvm_asks_and_nothing_about_riscv() {
    let md = markdown_of(&destructor_lookup());
    assert!(md.contains("| target | `x86_64-pc-linux-gnu` |"), "{md}");
    assert!(
        md.contains("| phase | `in compound statement ('{}')` |"),
        "{md}"
    );
    assert!(
        md.contains("```\nsrc/widget.cpp:13:14: error: no template named 'Holder'"),
        "{md}"
    );
    assert!(
        md.contains("```sh\n/usr/lib/llvm-16/bin/clang -cc1 -triple x86_64-pc-linux-gnu"),
        "{md}"
    );
    assert!(md.contains("| `-std` | no |"), "{md}");
    for gone in ["E5", "qemu", "Not run here", "Next step", "E3 ", "E4 "] {
        assert!(!md.contains(gone), "{gone:?} in:\n{md}");
    }
    assert!(!involves_riscv(&destructor_lookup().case));
}

#[test]
fn destructor_lookup_json() {
    let r = redacted_for_json(&destructor_lookup());
    assert!(r.json().compiler_explorer_url.is_some());
    insta::assert_json_snapshot!(r.json());
}

#[test]
fn hip_two_arch_markdown() {
    insta::assert_snapshot!(markdown_of(&hip_two_arch()));
}

#[test]
fn hip_two_arch_json() {
    insta::assert_json_snapshot!(redacted_for_json(&hip_two_arch()).json());
}

#[test]
fn the_link_is_made_from_redacted_source() {
    // A home path in the source (a line marker of preprocessed input) must not survive in
    // the base64 of the link, where text redaction could not see it.
    let mut r = hip_two_arch();
    let mut input = b"# 1 \"/home/alice/build-pioneer/hip-two-arch/kernel.hip\"\n".to_vec();
    input.extend_from_slice(r.input.as_deref().unwrap());
    r.input = Some(input);
    let plain = r.json().compiler_explorer_url.unwrap();
    let redacted = r
        .redacted(&redactions())
        .unwrap()
        .json()
        .compiler_explorer_url
        .unwrap();
    let source = |url: &str| {
        use base64::Engine as _;
        let b64 = url
            .rsplit('/')
            .next()
            .unwrap()
            .replace("%2B", "+")
            .replace("%2F", "/")
            .replace("%3D", "=");
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(b64)
            .unwrap();
        let v: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
        v["sessions"][0]["source"].as_str().unwrap().to_string()
    };
    assert!(source(&plain).contains("/home/alice/build-pioneer"));
    let s = source(&redacted);
    assert!(
        s.starts_with("# 1 \"~/build-HOST/hip-two-arch/kernel.hip\""),
        "{s}"
    );
    assert_redacted(&s);
}

/// Each frame of the backtrace is printed once (the top ones in view, the rest folded away),
/// from the crash site on: the unsymbolised frame #4 the signal came in is shown, the signal
/// handler's frames above it are not.
#[test]
fn the_backtrace_is_printed_once_from_the_crash_site() {
    let md = markdown_of(&hip_two_arch());
    for n in 4..30 {
        let line = format!("\n#{n:<3} ");
        assert_eq!(md.matches(&line).count(), 1, "frame #{n}:\n{md}");
    }
    assert!(!md.contains("PrintStackTrace"), "{md}");
    assert!(md.contains("libclang-cpp.so.19.1+0xc20eb9)"), "{md}");
}
