//! The "Reduced IR" section and the IR branch of `repro.sh`, rendered from the case's `ir`
//! section alone (written by `icepick ir`; this module does not call the stage).
//!
//! Why this exists: for a backend crash the reproducer LLVM maintainers turn into a
//! regression test is a few lines of IR and one `llc`/`opt` line; when the case has one and
//! it verified, it is the report's first reproducer.

use std::fmt::Write as _;

use crate::case::Case;
use crate::command::{shell_join, shell_quote};

use super::markdown::{code, fence, text};

/// The verified IR reproducer: (command, file name, IR text with its RUN line, pass).
struct Ir<'a> {
    command: Vec<String>,
    output: &'a str,
    text: &'a str,
    pass: Option<&'a str>,
    tool: &'a str,
    note: Option<&'a str>,
}

fn verified_ir(case: &Case) -> Option<Ir<'_>> {
    let ir = case.ir.as_ref()?;
    if ir.get("verified")?.as_bool() != Some(true) {
        return None;
    }
    let command: Vec<String> = ir
        .get("command")?
        .as_array()?
        .iter()
        .map(|a| a.as_str().map(str::to_owned))
        .collect::<Option<_>>()?;
    if command.is_empty() {
        return None;
    }
    Some(Ir {
        command,
        output: ir.get("output")?.as_str()?,
        text: ir.get("text")?.as_str()?,
        pass: ir.get("pass").and_then(|p| p.as_str()),
        tool: ir.get("tool").and_then(|p| p.as_str()).unwrap_or("llc"),
        note: ir.get("note").and_then(|p| p.as_str()),
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
        "The crash without clang: `{}` on {} (an LLVM regression test; the RUN line is the \
         command lit runs).{}\n",
        ir.tool,
        code(ir.output),
        match ir.pass {
            Some(p) => format!(" Crashing pass: {}.", code(p)),
            None => String::new(),
        }
    );
    let _ = writeln!(s, "{}", fence("llvm", ir.text.trim_end()));
    let _ = writeln!(s, "{}", fence("sh", &shell_join(&ir.command)));
    if let Some(n) = ir.note {
        let _ = writeln!(s, "{}\n", text(n));
    }
    s
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
        ir.tool
    );
    let _ = writeln!(s, "if [ \"${{1:-}}\" = ir ]; then");
    let _ = writeln!(s, "  dir=$(mktemp -d) || exit 1");
    let _ = writeln!(s, "  trap 'rm -rf \"$dir\"' EXIT");
    let _ = writeln!(s, "  cat > \"$dir\"/reduced.ll <<'{delim}'");
    s.push_str(ir.text);
    if !ir.text.ends_with('\n') {
        s.push('\n');
    }
    let _ = writeln!(s, "{delim}");
    let _ = writeln!(s, "  cd \"$dir\" || exit 1");
    let args: Vec<String> = ir.command[1..]
        .iter()
        .map(|a| {
            if a == ir.output {
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
