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
        family: None,
        capture: CaptureStats {
            compiler_runs: 5,
            seconds: 1.5,
            added_flags: vec![],
        },
        bug_info: None,
        flags: None,
        reduction: None,
        classification: None,
        versions: None,
        ir: None,
        triage: None,
        link: None,
    }
}

#[test]
fn round_trips_and_keeps_unknown_stage_sections() {
    let dir = tempfile::tempdir().unwrap();
    let mut case = sample_case();
    case.reduction = Some(serde_json::json!({"bytes_before": 10, "bytes_after": 2}));
    fs::write(dir.path().join(&case.input), "int x;").unwrap();
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

/// A case directory holding the real `destructor-lookup` case.json (after `icepick triage`:
/// flags, reduction, versions, classification) and the files it names.
fn real_case_dir() -> (tempfile::TempDir, serde_json::Value) {
    let dir = tempfile::tempdir().unwrap();
    let text = include_str!("../report/testdata/destructor-lookup/case.json");
    fs::write(dir.path().join("input.ii"), "struct A {};\n").unwrap();
    fs::write(dir.path().join("reduced.ii"), "struct A;\n").unwrap();
    fs::write(dir.path().join(CASE_FILE), text).unwrap();
    (dir, serde_json::from_str(text).unwrap())
}

fn write_case_json(dir: &Path, v: &serde_json::Value) {
    fs::write(dir.join(CASE_FILE), v.to_string()).unwrap();
}

#[test]
fn the_real_case_loads() {
    let (dir, _) = real_case_dir();
    Case::load(dir.path()).unwrap();
}

/// Values of a path field that name something outside the case directory.
const ESCAPES: &[&str] = &[
    "../secret/x",
    "/etc/passwd",
    "sub/../../x",
    "..",
    ".",
    "",
    "a\0b",
    "./input.ii",
    "input.ii/",
    "logs//x",
];

#[test]
fn path_fields_leaving_the_case_are_refused_naming_the_field() {
    fn set(v: &mut serde_json::Value, field: &str, s: &str) {
        match field {
            "input" => v["input"] = s.into(),
            _ => v["reduction"]["output"] = s.into(),
        }
    }
    for field in ["input", "reduction.output"] {
        for bad in ESCAPES {
            let (dir, mut v) = real_case_dir();
            set(&mut v, field, bad);
            write_case_json(dir.path(), &v);
            let err = Case::load(dir.path()).unwrap_err();
            assert!(
                matches!(&err, CaseError::OutsideCase { field: f, .. } if f == field),
                "{field} = {bad:?}: {err}"
            );
            assert!(err.is_bad_input());
            assert!(err.to_string().contains(&format!("`{field}`")), "{err}");
        }
    }
}

#[test]
fn a_symlink_leading_out_of_the_case_is_refused() {
    let outside = tempfile::tempdir().unwrap();
    fs::write(outside.path().join("secret"), "TOPSECRET").unwrap();
    // The file itself is a link out.
    let (dir, _) = real_case_dir();
    fs::remove_file(dir.path().join("input.ii")).unwrap();
    std::os::unix::fs::symlink(outside.path().join("secret"), dir.path().join("input.ii")).unwrap();
    let err = Case::load(dir.path()).unwrap_err();
    assert!(matches!(err, CaseError::OutsideCase { .. }), "{err}");
    assert!(err.to_string().contains("outside"), "{err}");
    // A directory on the way is a link out, and the file is not there (yet): writing it
    // would land outside.
    let (dir, mut v) = real_case_dir();
    std::os::unix::fs::symlink(outside.path(), dir.path().join("sub")).unwrap();
    v["reduction"]["output"] = "sub/reduced.ii".into();
    write_case_json(dir.path(), &v);
    let err = Case::load(dir.path()).unwrap_err();
    assert!(
        matches!(&err, CaseError::OutsideCase { field, .. } if field == "reduction.output"),
        "{err}"
    );
    // A link that leads nowhere.
    let (dir, _) = real_case_dir();
    fs::remove_file(dir.path().join("reduced.ii")).unwrap();
    std::os::unix::fs::symlink("/nonexistent/x", dir.path().join("reduced.ii")).unwrap();
    assert!(matches!(
        Case::load(dir.path()).unwrap_err(),
        CaseError::OutsideCase { .. }
    ));
    // A link inside the case is fine.
    let (dir, mut v) = real_case_dir();
    std::os::unix::fs::symlink("input.ii", dir.path().join("alias.ii")).unwrap();
    v["input"] = "alias.ii".into();
    write_case_json(dir.path(), &v);
    Case::load(dir.path()).unwrap();
}

#[test]
fn an_input_that_is_not_a_regular_file_is_refused() {
    let (dir, _) = real_case_dir();
    fs::remove_file(dir.path().join("input.ii")).unwrap();
    fs::create_dir(dir.path().join("input.ii")).unwrap();
    let err = Case::load(dir.path()).unwrap_err();
    assert!(err.to_string().contains("not a regular file"), "{err}");
}

#[test]
fn a_missing_input_is_named_with_what_to_do() {
    let (dir, _) = real_case_dir();
    fs::remove_file(dir.path().join("input.ii")).unwrap();
    let err = Case::load(dir.path()).unwrap_err();
    assert!(matches!(err, CaseError::MissingInput { .. }), "{err}");
    let text = err.to_string();
    assert!(
        text.contains("input.ii") && text.contains("icepick capture"),
        "{text}"
    );
    // A missing reduction output is not an error: the report goes without it.
    let (dir, _) = real_case_dir();
    fs::remove_file(dir.path().join("reduced.ii")).unwrap();
    Case::load(dir.path()).unwrap();
}

#[test]
fn a_file_given_as_the_case_is_refused_naming_its_directory() {
    let (dir, _) = real_case_dir();
    let err = Case::load(&dir.path().join(CASE_FILE)).unwrap_err();
    assert!(matches!(err, CaseError::NotADirectory { .. }), "{err}");
    assert!(
        err.to_string().contains(&dir.path().display().to_string()),
        "{err}"
    );
}

#[test]
fn damaged_case_files_are_one_clear_message() {
    for (text, says) in [
        ("{bad", "not JSON"),
        ("[]", "not a JSON object"),
        ("{}", "schema_version"),
        (r#"{"schema_version": 0}"#, "schema_version 0"),
        (r#"{"schema_version": "1"}"#, "schema_version"),
    ] {
        let (dir, _) = real_case_dir();
        fs::write(dir.path().join(CASE_FILE), text).unwrap();
        let err = Case::load(dir.path()).unwrap_err();
        assert!(matches!(err, CaseError::Invalid { .. }), "{text}: {err}");
        let msg = err.to_string();
        assert!(msg.contains(says), "{text}: {msg}");
        // The detail is part of the message, not a cause that would print it twice.
        assert!(std::error::Error::source(&err).is_none());
    }
    // A field of the wrong type is named.
    let (dir, mut v) = real_case_dir();
    v["crash"]["signal"] = "eleven".into();
    write_case_json(dir.path(), &v);
    let err = Case::load(dir.path()).unwrap_err();
    assert!(err.to_string().contains("field `crash`"), "{err}");
    // Commands the stages index must have a program.
    let (dir, mut v) = real_case_dir();
    v["replay_command"] = serde_json::json!([]);
    write_case_json(dir.path(), &v);
    let err = Case::load(dir.path()).unwrap_err();
    assert!(err.to_string().contains("`replay_command`"), "{err}");
}

mod fuzz {
    //! `Case::load` on arbitrary bytes and on the real case.json with values replaced by
    //! random JSON of other types, hostile paths included: it never panics, every failure is
    //! a bad-input error (exit 2), and what it accepts names only files inside the case.

    use super::*;
    use proptest::prelude::*;
    use serde_json::Value;

    fn hostile_string() -> impl Strategy<Value = String> {
        prop_oneof![
            proptest::sample::select(ESCAPES).prop_map(String::from),
            proptest::sample::select(&["input.ii", "reduced.ii", "case.json", "logs", "x/y"][..])
                .prop_map(String::from),
            ".{0,12}",
            "[a-z./\\x00]{0,8}",
        ]
    }

    fn json() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            any::<i64>().prop_map(Value::from),
            any::<f64>().prop_map(Value::from),
            hostile_string().prop_map(Value::from),
        ];
        leaf.prop_recursive(3, 12, 4, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                proptest::collection::btree_map(hostile_string(), inner, 0..4)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    /// Every place in `v` (object keys and array indexes), as paths from the root.
    fn places(v: &Value, at: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
        match v {
            Value::Object(m) => {
                for (k, x) in m {
                    at.push(k.clone());
                    out.push(at.clone());
                    places(x, at, out);
                    at.pop();
                }
            }
            Value::Array(a) => {
                for (i, x) in a.iter().enumerate().take(3) {
                    at.push(i.to_string());
                    out.push(at.clone());
                    places(x, at, out);
                    at.pop();
                }
            }
            _ => {}
        }
    }

    fn slot<'a>(v: &'a mut Value, path: &[String]) -> &'a mut Value {
        path.iter().fold(v, |cur, k| match cur {
            Value::Array(a) => &mut a[k.parse::<usize>().unwrap()],
            other => &mut other[k.as_str()],
        })
    }

    fn check(dir: &Path) -> Result<(), TestCaseError> {
        match Case::load(dir) {
            Ok(case) => {
                prop_assert!(unsafe_name(&case.input).is_none(), "{:?}", case.input);
                if let Some(out) = case
                    .reduction
                    .as_ref()
                    .and_then(|r| r.get("output"))
                    .and_then(Value::as_str)
                {
                    prop_assert!(unsafe_name(out).is_none(), "{out:?}");
                }
                prop_assert!(!case.replay_command.is_empty() && !case.command.is_empty());
            }
            Err(e) => prop_assert!(e.is_bad_input(), "not a bad-input error: {e}"),
        }
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]

        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
            let (dir, _) = real_case_dir();
            fs::write(dir.path().join(CASE_FILE), &bytes).unwrap();
            check(dir.path())?;
        }

        #[test]
        fn mutated_real_case_never_panics(
            picks in proptest::collection::vec((any::<prop::sample::Index>(), json()), 1..4),
            remove in any::<bool>(),
        ) {
            let (dir, mut v) = real_case_dir();
            for (i, value) in picks {
                let mut all = Vec::new();
                places(&v, &mut Vec::new(), &mut all);
                let path = i.get(&all).clone();
                if remove && path.len() == 1 {
                    v.as_object_mut().unwrap().remove(&path[0]);
                } else {
                    *slot(&mut v, &path) = value;
                }
            }
            write_case_json(dir.path(), &v);
            check(dir.path())?;
        }

        #[test]
        fn hostile_path_values_are_refused_or_inside(
            input in hostile_string(),
            output in hostile_string(),
        ) {
            let (dir, mut v) = real_case_dir();
            v["input"] = input.into();
            v["reduction"]["output"] = output.into();
            write_case_json(dir.path(), &v);
            check(dir.path())?;
        }
    }
}

#[test]
fn every_top_level_field_of_case_json_is_documented_in_architecture_md() {
    // Every optional part set, so that each top-level field is serialised.
    let mut case = sample_case();
    case.status_detail = Some("x".into());
    case.emulator = vec!["qemu-riscv64".into()];
    case.host = Some(serde_json::json!({}));
    case.bug_info = Some(BugInfo::default());
    for section in [
        &mut case.flags,
        &mut case.reduction,
        &mut case.classification,
        &mut case.versions,
    ] {
        *section = Some(serde_json::json!({}));
    }
    let value = serde_json::to_value(&case).unwrap();
    let fields: Vec<&String> = value.as_object().unwrap().keys().collect();
    assert!(fields.len() >= 22, "{fields:?}");
    let doc = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/architecture.md"),
    )
    .expect("docs/architecture.md");
    // The field table has one row per field, its name first, in backticks.
    let missing: Vec<&&String> = fields
        .iter()
        .filter(|f| !doc.contains(&format!("| `{f}` |")))
        .collect();
    assert!(
        missing.is_empty(),
        "case.json fields missing from docs/architecture.md's field table: {missing:?}"
    );
}
