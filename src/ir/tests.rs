//! Where a crash happened, from real pretty stacks.

use super::*;
use crate::crash::{ExitInfo, PrettyEntry};

fn crash_with(stack: &[&str], frames: &[&str], message: Option<&str>) -> (Crash, Signature) {
    let mut c = crate::crash::parse(
        "clang: error: clang frontend command failed with exit code 139\n",
        ExitInfo {
            code: Some(1),
            signal: None,
        },
    )
    .expect("a crash");
    c.pretty_stack = stack
        .iter()
        .enumerate()
        .map(|(i, t)| PrettyEntry {
            index: i as u32 + 1,
            text: t.to_string(),
        })
        .collect();
    c.message = message.map(str::to_owned);
    c.frames = frames
        .iter()
        .enumerate()
        .map(|(i, f)| crate::crash::Frame {
            index: i as u32,
            symbol: Some(f.to_string()),
            ..Default::default()
        })
        .collect();
    let s = crate::crash::signature(&c);
    (c, s)
}

#[test]
fn codegen_middle_end_and_frontend_crashes_are_told_apart() {
    let (c, s) = crash_with(
        &[
            "<eof> parser at end of file",
            "Code generation",
            "Running pass 'CallGraph Pass Manager' on module 'x.hip'.",
            "Running pass 'AMDGPU DAG->DAG Pattern Instruction Selection' on function '@f'",
        ],
        &["llvm::SelectionDAGISel::SelectCodeCommon(llvm::SDNode*)"],
        None,
    );
    assert_eq!(where_of(&c, &s), Where::Codegen);
    let (c, s) = crash_with(
        &[
            "<eof> parser at end of file",
            "Optimizer",
            "Running pass \"declare-to-assign\" on module \"x.c\"",
        ],
        &["llvm::at::trackAssignments(llvm::Function&)"],
        None,
    );
    assert_eq!(where_of(&c, &s), Where::MiddleEnd);
    let (c, s) = crash_with(
        &["x.cpp:3:9: current parser token 'a'"],
        &[
            "clang::Sema::getDestructorName(clang::IdentifierInfo const&)",
            "clang::Parser::ParseUnqualifiedId()",
        ],
        None,
    );
    match where_of(&c, &s) {
        Where::Frontend(p) => assert!(p.starts_with("the parser"), "{p}"),
        w => panic!("{w:?}"),
    }
}

#[test]
fn the_opt_key_ignores_the_pipeline_text_and_the_llc_key_keeps_the_pass() {
    let (_, a) = crash_with(
        &["Running pass \"function(declare-to-assign)\" on module \"a.ll\""],
        &["llvm::at::trackAssignments(llvm::Function&)"],
        Some("Invalid size request on a scalable vector."),
    );
    let (_, b) = crash_with(
        &["Running pass \"declare-to-assign\" on module \"x.c\""],
        &["llvm::at::trackAssignments(llvm::Function&)"],
        Some("Invalid size request on a scalable vector."),
    );
    assert_eq!(crash_key(&a, Tool::Opt), crash_key(&b, Tool::Opt));
    assert_ne!(crash_key(&a, Tool::Llc), crash_key(&b, Tool::Llc));
}
