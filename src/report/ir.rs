//! The "Reduced IR" section and the IR branch of `repro.sh`, rendered from the case's `ir`
//! section alone (written by `icepick ir`; this module does not call the stage).
//!
//! Why this exists: for a backend crash the reproducer LLVM maintainers turn into a
//! regression test is a few lines of IR and one `llc`/`opt` line; when the case has one and
//! it verified, it is the report's first reproducer, with a Compiler Explorer link running
//! that `llc`/`opt` release (and trunk with assertions) on it ([`super::godbolt::ir_link`]).

use std::fmt::Write as _;

use crate::case::Case;
use crate::command::{shell_join, shell_quote};

use super::markdown::{code, fence, text};

/// The verified IR reproducer: (command, file name, IR text with its RUN line, pass).
struct Ir {
    command: Vec<String>,
    output: String,
    text: String,
    pass: Option<String>,
    /// For `opt`: "`IndVarSimplifyPass`, pass 13 of 13" (OptBisect's cross-check).
    bisect: Option<String>,
    tool: String,
    note: Option<String>,
    /// Flags of the job's command the crash does without (`IrSection::not_needed`).
    not_needed: Vec<String>,
}

fn verified_ir(case: &Case) -> Option<Ir> {
    let ir = case.ir_section()?;
    if !ir.verified || ir.command.is_empty() || ir.output.is_empty() {
        return None;
    }
    let bisect = ir
        .pass_bisect
        .as_deref()
        .map(|c| match (ir.bisect_limit, ir.bisect_counted) {
            (Some(l), Some(c2)) => format!("{}, pass {l} of {c2}", code(c)),
            _ => code(c),
        });
    Some(Ir {
        tool: ir.tool_or_llc().to_string(),
        command: ir.command,
        output: ir.output,
        text: ir.text,
        pass: ir.pass,
        bisect,
        note: ir.note,
        not_needed: ir.not_needed,
    })
}

/// `## Reduced IR`, or nothing when the case has no verified IR reproducer.
pub fn section(case: &Case) -> String {
    let Some(ir) = verified_ir(case) else {
        return String::new();
    };
    let mut s = String::new();
    let _ = writeln!(s, "## Reduced IR\n");
    let _ = writeln!(
        s,
        "The crash without clang: {} on {} (an LLVM regression test; the RUN line is the \
         command lit runs).{}\n",
        code(&ir.tool),
        code(&ir.output),
        match (ir.pass.as_deref(), &ir.bisect) {
            (Some(p), Some(b)) =>
                format!(" Crashing pass: {} (`-opt-bisect-limit`: {b}).", code(p)),
            (Some(p), None) => format!(" Crashing pass: {}.", code(p)),
            (None, _) => String::new(),
        }
    );
    let _ = writeln!(s, "{}", fence("llvm", ir.text.trim_end()));
    let _ = writeln!(s, "{}", fence("sh", &shell_join(&ir.command)));
    let link = super::godbolt::ir_link(case, &ir.tool, &ir.text, &tool_flags(&ir));
    match &link.url {
        Some(url) => {
            let _ = writeln!(s, "[Try it on Compiler Explorer]({url}): {}.\n", link.note);
        }
        None => {
            let _ = writeln!(s, "No Compiler Explorer link: {}.\n", link.note);
        }
    }
    let not_needed: Vec<&str> = ir.not_needed.iter().map(String::as_str).collect();
    if let Some(line) = not_needed_line(&not_needed) {
        let _ = writeln!(s, "{line}\n");
    }
    if let Some(n) = &ir.note {
        let _ = writeln!(s, "{}\n", text(n));
    }
    s
}

/// The Compiler Explorer link of the verified IR reproducer (`llc`/`opt` on the reduced IR
/// with the RUN line's flags), or `None` when the case has none: the JSON report carries it
/// beside the source link, as report.md's "Reduced IR" section does.
pub fn link(case: &Case) -> Option<super::godbolt::Link> {
    let ir = verified_ir(case)?;
    Some(super::godbolt::ir_link(
        case,
        &ir.tool,
        &ir.text,
        &tool_flags(&ir),
    ))
}

/// How many flags [`not_needed_line`] names before it counts the rest.
const NAMED: usize = 8;

/// "Not needed at IR level: …": the job's flags the crash does without, `-mcpu`/`-O` and the
/// vector extension's features first (on RISC-V, whether `+v` is needed is the question the
/// reader has), then the others up to [`NAMED`], then how many more.
fn not_needed_line(list: &[&str]) -> Option<String> {
    if list.is_empty() {
        return None;
    }
    let rank = |f: &str| {
        if f.starts_with("-mcpu=") || f.starts_with("-O") {
            0
        } else if f == "+v" || f.starts_with("+zve") || f.starts_with("+zvl") {
            1
        } else if f.starts_with('+') {
            2
        } else {
            3 // a feature the job turned off (`-b`)
        }
    };
    let mut v: Vec<&str> = list.to_vec();
    v.sort_by_key(|f| rank(f)); // stable: the job's order within a rank
    let named: Vec<String> = v.iter().take(NAMED).map(|f| code(f)).collect();
    let more = v.len().saturating_sub(NAMED);
    let tail = if more > 0 {
        format!(
            " and {more} more target feature{}",
            if more == 1 { "" } else { "s" }
        )
    } else {
        String::new()
    };
    Some(format!(
        "Not needed at IR level (the job's `llc`/`opt` flags the crash does without): {}{tail}.",
        named.join(", ")
    ))
}

/// The tool's flags in the command: without the program, the IR file and what only sends the
/// output away (`-o /dev/null`, `-disable-output`): Compiler Explorer adds its own.
fn tool_flags(ir: &Ir) -> Vec<String> {
    let mut out = Vec::new();
    let mut it = ir.command.iter().skip(1);
    while let Some(a) = it.next() {
        match a.as_str() {
            "-o" => {
                it.next();
            }
            "-disable-output" => {}
            _ if *a == ir.output => {}
            _ => out.push(a.clone()),
        }
    }
    out
}

/// The `repro.sh` lines that run the IR reproducer when the script's first argument is `ir`
/// (`sh repro.sh ir`), or nothing.
pub fn repro_branch(case: &Case) -> String {
    let Some(ir) = verified_ir(case) else {
        return String::new();
    };
    let lines: std::collections::HashSet<&str> = ir.text.split('\n').collect();
    let Some(delim) = (0..)
        .map(|n| format!("ICEPICK_IR_END_{n}"))
        .find(|d| !lines.contains(d.as_str()))
    else {
        return String::new();
    };
    let mut s = String::new();
    let _ = writeln!(
        s,
        "# `sh repro.sh ir`: the reduced IR through {} instead.",
        super::comment_text(&ir.tool)
    );
    let _ = writeln!(s, "if [ \"${{1:-}}\" = ir ]; then");
    let _ = writeln!(s, "  dir=$(mktemp -d) || exit 1");
    let _ = writeln!(s, "  trap 'rm -rf \"$dir\"' EXIT");
    let _ = writeln!(s, "  cat > \"$dir\"/reduced.ll <<'{delim}'");
    s.push_str(&ir.text);
    if !ir.text.ends_with('\n') {
        s.push('\n');
    }
    let _ = writeln!(s, "{delim}");
    let _ = writeln!(s, "  cd \"$dir\" || exit 1");
    let args: Vec<String> = ir.command[1..]
        .iter()
        .map(|a| {
            if *a == ir.output {
                "reduced.ll".to_owned()
            } else {
                a.clone()
            }
        })
        .collect();
    let _ = writeln!(s, "  {} {}", shell_quote(&ir.command[0]), shell_join(&args));
    let _ = writeln!(s, "  exit $?");
    let _ = writeln!(s, "fi");
    s
}

#[cfg(test)]
mod tests {
    use base64::Engine as _;

    use super::*;
    use crate::case::tests::sample_case;

    fn with_ir(version: &str) -> Case {
        let mut case = sample_case();
        case.compiler.version = version.into();
        case.ir = Some(serde_json::json!({
            "tool": "llc",
            "command": ["/usr/lib/llvm-19/bin/llc", "-mtriple=riscv32", "-mattr=+xventanacondops",
                        "reduced.ll", "-o", "/dev/null"],
            "output": "reduced.ll",
            "text": "; RUN: llc -mtriple=riscv32 -mattr=+xventanacondops < %s\ndefine void @f() {\n  ret void\n}\n",
            "pass": "RISC-V DAG->DAG Pattern Instruction Selection",
            "verified": true,
        }));
        case
    }

    fn state_in(section: &str) -> serde_json::Value {
        let start = section
            .find("(https://godbolt.org/clientstate/")
            .expect("a link")
            + "(https://godbolt.org/clientstate/".len();
        let b64 = &section[start..start + section[start..].find(')').unwrap()];
        let b64 = b64
            .replace("%2B", "+")
            .replace("%2F", "/")
            .replace("%3D", "=");
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(b64)
            .unwrap();
        serde_json::from_slice(&bytes).unwrap()
    }

    #[test]
    fn the_ir_section_links_llc_of_the_same_major_on_compiler_explorer() {
        let case = with_ir("Debian clang version 19.1.7 (3~deb12u1)");
        let s = section(&case);
        let state = state_in(&s);
        let session = &state["sessions"][0];
        // Ids from Compiler Explorer's etc/config/llvm.amazon.properties.
        assert_eq!(session["language"], "llvm");
        assert_eq!(session["compilers"][0]["id"], "llc1910");
        assert_eq!(session["compilers"][1]["id"], "llc-assertions-trunk");
        assert_eq!(
            session["compilers"][0]["options"],
            "-mtriple=riscv32 -mattr=+xventanacondops"
        );
        assert!(session["source"]
            .as_str()
            .unwrap()
            .starts_with("; RUN: llc"));
        assert!(
            s.contains("on `llc` 19.1.0 and on `llc` trunk with assertions"),
            "{s}"
        );
    }

    /// The JSON report carries the same link as the section: it decodes to the exact IR and
    /// the RUN line's flags; a case with no verified IR has no such fields.
    #[test]
    fn the_json_report_carries_the_ir_link_of_the_section() {
        let case = with_ir("Debian clang version 19.1.7 (3~deb12u1)");
        let json = crate::report::json(&case, None, None);
        let url = json.ir_compiler_explorer_url.clone().expect("a link");
        assert!(section(&case).contains(&format!("({url})")));
        let state = state_in(&format!("({url})"));
        let session = &state["sessions"][0];
        assert_eq!(session["source"], case.ir.as_ref().unwrap()["text"]);
        assert_eq!(
            session["compilers"][1]["options"],
            "-mtriple=riscv32 -mattr=+xventanacondops"
        );
        assert!(json
            .ir_compiler_explorer_note
            .as_deref()
            .unwrap()
            .starts_with("the reduced IR with"));
        let plain = sample_case();
        let v = serde_json::to_value(crate::report::json(&plain, None, None)).unwrap();
        assert!(v["ir_compiler_explorer_url"].is_null(), "{v:#}");
        assert!(v["ir_compiler_explorer_note"].is_null(), "{v:#}");
    }

    #[test]
    fn no_ir_link_for_an_llvm_compiler_explorer_does_not_have() {
        let s = section(&with_ir("clang version 13.0.1"));
        assert!(
            s.contains("No Compiler Explorer link: Compiler Explorer has no `llc`"),
            "{s}"
        );
        assert!(!s.contains("godbolt.org"), "{s}");
    }

    #[test]
    fn an_opt_section_gives_the_bisected_pass_beside_the_pipeline() {
        let mut case = with_ir("Debian clang version 19.1.7 (3~deb12u1)");
        let ir = case.ir.as_mut().unwrap();
        ir["tool"] = "opt".into();
        ir["pass"] = "indvars".into();
        ir["pass_pipeline"] = "loop-unroll-full".into();
        ir["pass_bisect"] = "IndVarSimplifyPass".into();
        ir["bisect_limit"] = 13.into();
        ir["bisect_counted"] = 13.into();
        let s = section(&case);
        assert!(
            s.contains(
                "Crashing pass: `indvars` (`-opt-bisect-limit`: `IndVarSimplifyPass`, pass 13 of 13)."
            ),
            "{s}"
        );
    }

    #[test]
    fn flags_the_crash_does_without_are_named_vector_and_cpu_first() {
        assert_eq!(not_needed_line(&[]), None);
        // `-b`: a feature the job turned off, named after those it turned on.
        let l = not_needed_line(&[
            "-b",
            "+a",
            "+m",
            "+v",
            "-mcpu=generic-rv64",
            "+zve32x",
            "-O2",
        ])
        .unwrap();
        assert_eq!(
            l,
            "Not needed at IR level (the job's `llc`/`opt` flags the crash does without): \
             `-mcpu=generic-rv64`, `-O2`, `+v`, `+zve32x`, `+a`, `+m`, `-b`."
        );
        let many: Vec<String> = (0..12).map(|i| format!("+f{i}")).collect();
        let many: Vec<&str> = many.iter().map(String::as_str).collect();
        let l = not_needed_line(&many).unwrap();
        assert!(l.ends_with("`+f7` and 4 more target features."), "{l}");
    }
}
