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

/// The `; RUN:` line of report.md's "Reduced IR" section and its IR, as lit would get them.
fn reduced_ir_in_report(md: &str) -> (Vec<String>, String) {
    let at = md
        .find("## Reduced IR")
        .unwrap_or_else(|| panic!("no IR section:\n{md}"));
    let fence = &md[at..];
    let start = fence.find("```llvm\n").expect("an llvm fence") + "```llvm\n".len();
    let ir = &fence[start..start + fence[start..].find("\n```").unwrap()];
    let run = ir.lines().next().unwrap();
    let words = shlex::split(
        run.strip_prefix("; RUN: ")
            .unwrap_or_else(|| panic!("{run}")),
    )
    .unwrap();
    (words, format!("{ir}\n"))
}

/// Runs a RUN line of the form `llc ARGS < %s` as lit does (the IR on stdin), with LLVM 19's
/// `llc`, from an empty directory and with no environment but PATH; returns its stderr.
fn run_like_lit(words: &[String], ir: &str) -> (Option<i32>, String) {
    use std::io::Write as _;
    let n = words.len();
    assert!(n >= 3 && words[0] == "llc" && words[n - 2] == "<" && words[n - 1] == "%s");
    let empty = tempfile::tempdir().unwrap();
    let mut child = std::process::Command::new("/usr/lib/llvm-19/bin/llc")
        .args(&words[1..n - 2])
        .current_dir(empty.path())
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(ir.as_bytes())
        .unwrap();
    let o = child.wait_with_output().unwrap();
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// The RUN line upstream reads does not lean on the machine it runs on. For an x86 crash
/// (x86-avx512-no-evex512, from C) and a RISC-V crash given to `llc` directly
/// (llc-gh100855), after `icepick ir`:
/// - the RUN line names `-mtriple=` of the crash's target architecture, no `-mcpu=native`,
///   and the IR carries no `target triple` of its own;
/// - run as lit runs it (IR on stdin, an empty directory, no environment), it gives the
///   case's crash: its message and pass. For llc-gh100855 this x86-64 host is another
///   architecture than the target;
/// - a host with another default triple is stood in for by a `target triple` line of another
///   architecture put into the IR: llc takes `-mtriple` over the module's triple and the
///   module's over its default, so a line whose `-mtriple` decides over the module's triple
///   decides over any host's default too. It still crashes the same way (a RUN line without
///   `-mtriple` would compile for the inserted triple and not reach the crashing pass; the
///   last check shows that for the RISC-V case).
#[test]
fn the_reduced_ir_run_line_names_its_target_and_crashes_the_same_on_another_default_triple() {
    for (name, arch, other) in [
        (
            "x86-avx512-no-evex512",
            "x86_64",
            "riscv64-unknown-linux-gnu",
        ),
        ("llc-gh100855", "riscv32", "x86_64-unknown-linux-gnu"),
    ] {
        let (_tmp, dir) = scratch_copy(&corpus(name));
        let case = capture_case(&dir, &cmd_txt(&dir));
        let o = icepick(&dir, &["ir", case.to_str().unwrap(), "--jobs", "2"]);
        expect_success(&o);
        let json = read_case(&case);
        let message = json["signature"]["message"].as_str().unwrap().to_string();
        let phase = json["signature"]["phase"].as_str().unwrap().to_string();
        assert!(message.starts_with("Cannot select"), "{name}: {message}");
        let (words, ir) = reduced_ir_in_report(&report_md(&case));
        let triple = words
            .iter()
            .find_map(|w| w.strip_prefix("-mtriple="))
            .unwrap_or_else(|| panic!("{name}: no -mtriple in {words:?}"));
        assert!(triple.starts_with(arch), "{name}: {triple}");
        assert!(
            !words.iter().any(|w| w.contains("native")),
            "{name}: {words:?}"
        );
        assert!(!ir.contains("\ntarget triple"), "{name}:\n{ir}");
        let crashes_like_the_case = |(code, stderr): &(Option<i32>, String)| {
            // The signature's message is normalised (`Cannot select: setcc` for `Cannot
            // select: 0x…: v16i1 = setcc …`): each of its words must be there.
            code != &Some(0)
                && message.split_whitespace().all(|w| stderr.contains(w))
                && stderr.contains(&phase)
        };
        let plain = run_like_lit(&words, &ir);
        assert!(
            crashes_like_the_case(&plain),
            "{name}: not `{message}` in `{phase}`: {}",
            plain.1
        );
        let foreign = ir.replacen('\n', &format!("\ntarget triple = \"{other}\"\n"), 1);
        let moved = run_like_lit(&words, &foreign);
        assert!(crashes_like_the_case(&moved), "{name}: {}", moved.1);
        if arch == "riscv32" {
            // Control: without its -mtriple the line follows the module's triple instead.
            let without: Vec<String> = words
                .iter()
                .filter(|w| !w.starts_with("-mtriple=") && !w.starts_with("-mattr="))
                .cloned()
                .collect();
            let elsewhere = run_like_lit(&without, &foreign);
            assert!(
                !crashes_like_the_case(&elsewhere),
                "{name}: {}",
                elsewhere.1
            );
        }
    }
}
