//! The build's directory is read-only to icepick: `capture` and `flags` run the build's own
//! command there (its first run, reruns, `-E`, the probes of the original command), and none
//! of those runs may write a file of the build (its `-o`, dependency files, time traces,
//! serialized diagnostics, saved temporaries, `.su`/`.dwo`/`.gcno` beside the object) or put
//! such a file beside `/dev/null`.

use std::collections::BTreeMap;
use std::hash::{Hash, Hasher};
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use crate::util::*;

/// One entry of a tree as the test compares it: kind, size, mtime (ns) and a hash of the
/// contents (files only).
#[derive(Debug, PartialEq, Eq)]
struct Entry {
    dir: bool,
    size: u64,
    mtime_ns: i128,
    hash: u64,
}

fn snapshot(root: &Path) -> BTreeMap<String, Entry> {
    let mut out = BTreeMap::new();
    let mut with_root = walk(root);
    with_root.push("".into());
    for rel in with_root {
        let p = root.join(&rel);
        let m = std::fs::symlink_metadata(&p).unwrap();
        let mut h = std::collections::hash_map::DefaultHasher::new();
        if m.is_file() {
            std::fs::read(&p).unwrap().hash(&mut h);
        }
        out.insert(
            rel.to_string_lossy().into_owned(),
            Entry {
                dir: m.is_dir(),
                size: m.len(),
                mtime_ns: i128::from(m.mtime()) * 1_000_000_000 + i128::from(m.mtime_nsec()),
                hash: h.finish(),
            },
        );
    }
    out
}

/// Names in `/dev` a compile could have put "beside" `/dev/null` (`null.su`, `null.dwo`,
/// `x.json`, `x.i` …).
fn dev_leftovers() -> Vec<String> {
    std::fs::read_dir("/dev")
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("null.") || n.starts_with("x."))
        .collect()
}

/// The files beside `/dev/null` that were not there before (`before`, from [`dev_leftovers`]).
fn new_in_dev(before: &[String]) -> Vec<String> {
    dev_leftovers()
        .into_iter()
        .filter(|n| !before.contains(n))
        .collect()
}

/// A build tree whose compile of `src/x.c` crashes in the parser, with the build's earlier
/// outputs already in `out/` (so an overwrite shows as well as a new file).
fn build_tree(root: &Path) {
    for d in ["src", "include", "out"] {
        std::fs::create_dir_all(root.join(d)).unwrap();
    }
    std::fs::write(root.join("include/h.h"), "#define N 3\n").unwrap();
    std::fs::write(
        root.join("src/x.c"),
        "#include \"h.h\"\nint f(int a) { return a * N; }\n#pragma clang __debug parser_crash\n",
    )
    .unwrap();
    for f in [
        "out/x.o",
        "t.d",
        "tt.json",
        "d.d",
        "s.dia",
        "out/x.su",
        "out/x.dwo",
        "out/x.gcno",
    ] {
        std::fs::write(root.join(f), format!("the build's own {f}\n")).unwrap();
    }
}

/// The crashing command with every kind of side output, its object named by `output`.
fn crashing_command(output: &[&str]) -> Vec<String> {
    let mut v: Vec<String> = [
        "clang-19",
        "-O1",
        "-g",
        "-Iinclude",
        "-c",
        "-Wp,-MMD,t.d",
        "-ftime-trace=tt.json",
        "-fstack-usage",
        "-MD",
        "-MF",
        "d.d",
        "--serialize-diagnostics",
        "s.dia",
        "-save-temps=obj",
        "-gsplit-dwarf",
        "-ftest-coverage",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    v.extend(output.iter().map(|s| s.to_string()));
    v.push("src/x.c".into());
    v
}

fn capture_and_flags_leave_the_tree_alone(output: &[&str]) {
    let d = tempfile::tempdir().unwrap();
    let tree = d.path().join("tree");
    build_tree(&tree);
    let before = snapshot(&tree);
    let dev_before = dev_leftovers();
    let case = d.path().join("case");
    let (code, json, stderr) = capture_json(&tree, &case, &crashing_command(output));
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(json["status"], "captured", "{json:#}");
    let o = icepick(d.path(), &["flags", case.to_str().unwrap(), "--json"]);
    expect_success(&o);
    let flags: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(
        flags["on_original"]
            .as_array()
            .is_some_and(|a| a.iter().any(|r| r == "-O")),
        "the -O row was not probed on the original command in the build: {flags:#}"
    );
    let after = snapshot(&tree);
    let changed: Vec<String> = before
        .keys()
        .chain(after.keys())
        .filter(|k| before.get(*k) != after.get(*k))
        .cloned()
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    assert!(
        changed.is_empty(),
        "icepick changed the build tree: {changed:?}\nbefore: {before:#?}\nafter: {after:#?}"
    );
    let new = new_in_dev(&dev_before);
    assert!(new.is_empty(), "files beside /dev/null: {new:?}");
    // The replay the case keeps writes nothing beside /dev/null either when later stages run
    // it (they run it as root here, where /dev is writable).
    let replay = read_case(&case)["replay_command"].clone();
    let r = run_json_argv(&case, &replay);
    assert!(!r.status.success(), "the replay no longer crashes");
    let new = new_in_dev(&dev_before);
    assert!(new.is_empty(), "the replay wrote beside /dev/null: {new:?}");
}

#[test]
fn capture_and_flags_write_nothing_into_the_build_with_dash_o() {
    capture_and_flags_leave_the_tree_alone(&["-o", "out/x.o"]);
}

#[test]
fn capture_and_flags_write_nothing_into_the_build_with_dash_dash_output() {
    capture_and_flags_leave_the_tree_alone(&["--output=out/x.o"]);
}
