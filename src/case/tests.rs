//! Case files round-trip, refuse what they cannot read, and appear only when complete.

use super::*;
use crate::crash::{CrashKind, Family};

pub(crate) fn sample_case() -> Case {
    Case {
        schema_version: SCHEMA_VERSION,
        icepick_version: "test".into(),
        status: CaseStatus::Captured,
        status_detail: None,
        command: vec!["clang".into(), "-c".into(), "f.c".into()],
        cwd: "/src".into(),
        emulator: Vec::new(),
        host: None,
        compiler: Compiler {
            path: "/usr/bin/clang".into(),
            resolved_path: "/usr/lib/llvm-19/bin/clang".into(),
            version: "Debian clang version 19.1.7".into(),
        },
        crash: Crash {
            family: Family::Clang,
            kind: CrashKind::Segfault,
            signal: Some(11),
            message: None,
            tool: Some("clang".into()),
            in_process: Some(true),
            cc1_exit_code: Some(139),
            program_arguments: None,
            pretty_stack: vec![],
            frames: vec![],
            gcc_pass: None,
            reproducer_files: vec![],
            source_errors: 0,
        },
        signature: Signature {
            id: "0123456789ab".into(),
            coarse_id: "ba9876543210".into(),
            text: "v1|SIGSEGV|||f".into(),
            kind: "SIGSEGV".into(),
            message: String::new(),
            phase: String::new(),
            frames: vec!["f".into()],
            unnamed_frames: 0,
            weak: true,
        },
        job: JobInfo {
            kind: "single".into(),
            offload_arch: None,
            listed: vec![],
        },
        input: "input.i".into(),
        replay_command: vec!["clang".into(), "input.i".into()],
        preprocessing: Preprocessing {
            mode: "full".into(),
            command: vec![],
            status: "reproduced".into(),
            detail: None,
        },
        reproducibility: Reproducibility {
            runs: 3,
            same_signature: 3,
        },
        capture: CaptureStats {
            compiler_runs: 5,
            seconds: 1.5,
            added_flags: vec![],
        },
        flags: None,
        reduction: None,
        classification: None,
        versions: None,
    }
}

#[test]
fn round_trips_and_keeps_unknown_stage_sections() {
    let dir = tempfile::tempdir().unwrap();
    let mut case = sample_case();
    case.reduction = Some(serde_json::json!({"bytes_before": 10, "bytes_after": 2}));
    case.save(dir.path()).unwrap();
    assert_eq!(Case::load(dir.path()).unwrap(), case);
}

#[test]
fn a_directory_without_case_json_is_named_as_such() {
    let dir = tempfile::tempdir().unwrap();
    let err = Case::load(dir.path()).unwrap_err();
    assert!(matches!(err, CaseError::NotACase { .. }), "{err}");
    assert!(err.to_string().contains("icepick capture"));
}

#[test]
fn a_newer_schema_is_refused_with_advice() {
    let dir = tempfile::tempdir().unwrap();
    let mut v = serde_json::to_value(sample_case()).unwrap();
    v["schema_version"] = 99.into();
    fs::write(dir.path().join(CASE_FILE), v.to_string()).unwrap();
    let err = Case::load(dir.path()).unwrap_err();
    assert!(matches!(err, CaseError::TooNew { found: 99, .. }), "{err}");
}

#[test]
fn a_new_case_appears_only_when_finished() {
    let parent = tempfile::tempdir().unwrap();
    let case = sample_case();
    let new = NewCaseDir::start(parent.path()).unwrap();
    new.write("input.i", b"int x;").unwrap();
    // While assembling, nothing under the parent looks like a case.
    let visible: Vec<_> = fs::read_dir(parent.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| !n.starts_with('.'))
        .collect();
    assert!(visible.is_empty(), "{visible:?}");
    let dest = new.finish(&case, None).unwrap();
    assert_eq!(dest, parent.path().join("icepick-0123456789ab"));
    assert_eq!(Case::load(&dest).unwrap(), case);
    // A second case with the same signature gets a fresh name.
    let new = NewCaseDir::start(parent.path()).unwrap();
    let dest2 = new.finish(&case, None).unwrap();
    assert_eq!(dest2, parent.path().join("icepick-0123456789ab-2"));
}

#[test]
fn an_abandoned_case_leaves_nothing() {
    let parent = tempfile::tempdir().unwrap();
    drop(NewCaseDir::start(parent.path()).unwrap());
    assert_eq!(fs::read_dir(parent.path()).unwrap().count(), 0);
}

#[test]
fn finishing_into_an_existing_nonempty_directory_is_refused() {
    let parent = tempfile::tempdir().unwrap();
    let dest = parent.path().join("taken");
    fs::create_dir(&dest).unwrap();
    fs::write(dest.join("x"), "y").unwrap();
    let new = NewCaseDir::start(parent.path()).unwrap();
    let err = new.finish(&sample_case(), Some(&dest)).unwrap_err();
    assert!(matches!(err, CaseError::Exists { .. }), "{err}");
}
