//! What an upstream LLVM issue needs beyond the crash itself: the target tag for the title,
//! and suggested labels (docs/crash-formats.md §6). Redaction of local paths and names before a
//! report leaves the machine is [`super::redact`].

use crate::case::{target_tag, Case};
use crate::crash::CrashKind;

/// The `[Target]` tag LLVM issue titles carry for backend crashes.
pub(crate) fn title_tag(case: &Case) -> Option<&'static str> {
    (stage(case) == "backend")
        .then(|| target_tag(case))
        .flatten()
}

/// Where in the compiler the crash is, from the signature's phase and frames.
fn stage(case: &Case) -> &'static str {
    let phase = &case.signature.phase;
    let top = case
        .signature
        .frames
        .first()
        .map(String::as_str)
        .unwrap_or("");
    let stack = case
        .crash
        .pretty_stack
        .iter()
        .map(|e| e.text.as_str())
        .collect::<Vec<_>>()
        .join("\n");
    if top.starts_with("clang::Parser")
        || top.starts_with("clang::Sema")
        || top.starts_with("clang::Preprocessor")
        || top.starts_with("clang::Lexer")
        || (phase.contains("pars") && !stack.contains("Code generation"))
    {
        "frontend"
    } else if stack.contains("Code generation") || phase.contains("Instruction Selection") {
        "backend"
    } else if stack.contains("Optimizer") {
        "optimizer"
    } else if top.starts_with("clang::CodeGen") {
        "codegen"
    } else {
        "unknown"
    }
}

/// Labels to suggest for the LLVM issue tracker.
pub fn labels(case: &Case, invalid_code: bool) -> Vec<String> {
    let mut l = vec!["crash".to_string()];
    if !matches!(case.crash.kind, CrashKind::Killed | CrashKind::Timeout) {
        l.push(
            if invalid_code {
                "crash-on-invalid"
            } else {
                "crash-on-valid"
            }
            .into(),
        );
    }
    match stage(case) {
        "frontend" => l.push("clang:frontend".into()),
        "codegen" => l.push("clang:codegen".into()),
        "backend" => {
            if let Some(t) = target_tag(case) {
                l.push(format!("backend:{t}"));
            }
            if case.signature.phase.contains("DAG->DAG")
                || case
                    .signature
                    .frames
                    .iter()
                    .any(|f| f.starts_with("llvm::SelectionDAG"))
            {
                l.push("llvm:SelectionDAG".into());
            }
        }
        _ => {}
    }
    let frames = case.signature.frames.join(" ");
    if case.signature.phase.contains("declare-to-assign")
        || frames.contains("DebugInfo")
        || frames.contains("llvm::at::")
    {
        l.push("debuginfo".into());
    }
    if case.signature.phase.contains("instcombine") {
        l.push("llvm:instcombine".into());
    }
    l
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::case::tests::sample_case;

    #[test]
    fn labels_follow_the_stage_and_target() {
        let mut case = sample_case();
        case.signature.frames = vec!["clang::Sema::getDestructorName".into()];
        assert_eq!(
            labels(&case, true),
            ["crash", "crash-on-invalid", "clang:frontend"]
        );
        case.command = [
            "clang",
            "--target=riscv64-linux-gnu",
            "-march=rv64gcv",
            "-c",
            "f.c",
        ]
        .map(String::from)
        .to_vec();
        case.signature.frames = vec!["llvm::SelectionDAGISel::SelectCodeCommon".into()];
        case.signature.phase = "RISC-V DAG->DAG Pattern Instruction Selection".into();
        assert_eq!(
            labels(&case, false),
            [
                "crash",
                "crash-on-valid",
                "backend:RISC-V",
                "llvm:SelectionDAG"
            ]
        );
        assert_eq!(target_tag(&case), Some("RISC-V"));
    }
}
