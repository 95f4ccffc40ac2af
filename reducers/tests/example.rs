//! The `reduce` example, run as its README shows: a file and a shell command as the test. The
//! example is the crate's one complete program (files, processes, cancellation around a library
//! that does no I/O), so it is run here, not only built.

use std::path::PathBuf;
use std::process::Command;

/// The example's binary. A whole `cargo test` builds it into `examples/` beside the test's
/// `deps/`; a run of this test alone (`--test example`) does not, so then it is built here,
/// with the same cargo, target folder and profile.
fn example() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let profile_dir = exe.parent().and_then(|deps| deps.parent()).unwrap();
    let binary = profile_dir.join("examples").join("reduce");
    if !binary.exists() {
        let profile = match profile_dir.file_name().and_then(|n| n.to_str()) {
            Some("debug") | None => "dev",
            Some(other) => other,
        };
        let status = Command::new(env!("CARGO"))
            .args(["build", "--quiet", "-p", "reducers", "--example", "reduce"])
            .args(["--profile", profile, "--target-dir"])
            .arg(profile_dir.parent().unwrap())
            .status()
            .unwrap();
        assert!(status.success(), "cargo build --example reduce: {status}");
    }
    binary
}

/// A folder of its own under the system's temporary folder, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new() -> Self {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos();
        let dir =
            std::env::temp_dir().join(format!("reducers-example-{}-{nanos}", std::process::id()));
        std::fs::create_dir(&dir).unwrap();
        Scratch(dir)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[test]
fn the_example_reduces_a_file_with_a_shell_test_and_leaves_the_file_alone() {
    let dir = Scratch::new();
    let file = dir.0.join("bug.c");
    let input = "int unused_one(void) { return 1; }\n\
                 int keep_me(int x) { return x + 2; }\n\
                 struct unused_two { int a, b; };\n";
    std::fs::write(&file, input).unwrap();
    let out = Command::new(example())
        .arg(&file)
        .args(["--", "sh", "-c", "grep -q keep_me bug.c"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let reduced = std::fs::read_to_string(dir.0.join("bug.c.reduced")).unwrap();
    assert_eq!(reduced.trim(), "keep_me");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), input);
}

#[test]
fn the_example_says_how_to_call_it() {
    let out = Command::new(example()).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("usage: reduce FILE -- COMMAND"));
}
