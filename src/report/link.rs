//! The report's link section: a crash in a link's LTO step is reported as what the user
//! ran (the link, its inputs) and how its IR reproducer was got from it, so that a
//! maintainer sees it is not a compile's crash and can rerun either.

use std::fmt::Write as _;

use super::markdown::{code, fence, table_code, table_text};
use crate::case::link::LinkInfo;
use crate::case::Case;
use crate::command::shell_join;

/// The opening's words for what crashed: "the link's full LTO code generator", or `None`
/// when the case is not a link's.
pub fn crashed_in(case: &Case) -> Option<String> {
    let l = case.link.as_ref()?;
    Some(format!("in the link's {} {}", l.lto_words(), step_words(l)))
}

/// The crashing step, in words.
fn step_words(l: &LinkInfo) -> &'static str {
    if l.stage == "optimizer" {
        "optimizer"
    } else {
        "code generator"
    }
}

/// `## Link`: the link command, its inputs and where the IR came from; empty when the case
/// is not a link's.
pub fn section(case: &Case) -> String {
    let Some(l) = &case.link else {
        return String::new();
    };
    let mut s = String::from("## Link\n\n");
    let linker = l
        .linker
        .as_deref()
        .map(|p| format!(" (linker {})", code(p)))
        .unwrap_or_default();
    let _ = writeln!(
        s,
        "The crash is at link time, in {}'s {}{linker}. The link (in {}):\n\n{}",
        l.lto_words(),
        step_words(l),
        code(&case.cwd),
        fence("sh", &shell_join(&l.command))
    );
    s.push_str(&inputs_table(l));
    if let (Some(needed), Some(tests)) = (&l.needed_inputs, l.input_tests) {
        let names: Vec<String> = needed.iter().map(|n| code(n)).collect();
        let _ = writeln!(
            s,
            "Of its {} bitcode inputs the link needs {} to crash: {} (ddmin over them, the \
             other inputs kept, {tests} links).\n",
            l.bitcode_inputs().count(),
            needed.len(),
            names.join(", ")
        );
    }
    let module = l
        .module
        .as_deref()
        .map(|m| format!(" (module {})", code(m)))
        .unwrap_or_default();
    let tool = case.llvm_tool().unwrap_or("llc");
    let same = match l.signature_match.as_str() {
        "same" => format!("with the link's signature {}", code(&l.link_signature)),
        "coarse" => format!(
            "with the link's kind, message, pass and top frame (the link's signature is {})",
            code(&l.link_signature)
        ),
        "message" => format!(
            "with the link's kind and message (the link printed no stack to compare; its \
             signature is {})",
            code(&l.link_signature)
        ),
        _ => "in the same step; the link's own crash printed no stack to compare (a crash \
              in a ThinLTO backend's thread prints none)"
            .to_string(),
    };
    let _ = writeln!(
        s,
        "The link rerun with `-plugin-opt=save-temps` wrote the module the crashing step saw{module} \
         as {}; it is this case's {}, and `{tool}` on it crashes {same}.\n",
        code(&l.saved_as),
        code(&case.input),
    );
    s
}

/// `## Reduced source`: the reduced sources of the needed inputs and the commands that
/// compile and link them to the crash; empty unless a verified source reduction ran.
pub fn source_section(case: &Case) -> String {
    let Some(src) = case.link.as_ref().and_then(|l| l.source.as_ref()) else {
        return String::new();
    };
    let Some(r) = src.reduction.as_ref().filter(|r| r.verified) else {
        return String::new();
    };
    let mut s = format!(
        "## Reduced source\n\nThe link crashes the same way when {} compiled and linked ({} B \
         from {} B, {} tests, verified):\n\n",
        if src.files.len() == 1 {
            "this file is".to_string()
        } else {
            format!("these {} files are", src.files.len())
        },
        r.bytes_after,
        r.bytes_before,
        r.tests
    );
    for (k, f) in src.files.iter().enumerate() {
        let _ = writeln!(s, "{} (for {}):\n", code(&f.file), code(&f.input));
        if let Some(text) = r.texts.get(k) {
            let _ = writeln!(s, "{}", fence("c", text));
        }
    }
    let mut commands: Vec<String> = src.files.iter().map(|f| shell_join(&f.compile)).collect();
    commands.push(shell_join(&src.link));
    let _ = writeln!(
        s,
        "Run beside the files (their base names), then the link:\n\n{}",
        fence("sh", &commands.join("\n"))
    );
    s
}

/// One row per input: its name, what it is, its size, and an archive's bitcode members.
fn inputs_table(l: &LinkInfo) -> String {
    if l.inputs.is_empty() {
        return String::new();
    }
    let mut s = String::from("| input | kind | bytes |\n|---|---|---:|\n");
    for i in &l.inputs {
        let kind = match (i.members, i.bitcode_members) {
            (Some(m), Some(b)) => format!("{} ({b} of {m} members bitcode)", i.kind),
            _ => i.kind.clone(),
        };
        let _ = writeln!(
            s,
            "| {} | {} | {} |",
            table_code(&i.name),
            table_text(&kind),
            i.bytes
        );
    }
    s.push('\n');
    s
}
