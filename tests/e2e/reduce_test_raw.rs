//! `icepick reduce --test` as a drop-in for C-Vise on raw (unpreprocessed) C, with real
//! compilers (clang-19, gcc): directives reduced away down to the one line the script needs,
//! several files at once, the file's mode kept, TMPDIR left empty even when tests are killed,
//! and the same result for any `--jobs`.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::util::*;

/// A raw C file full of directives whose only interesting part is a division by zero.
const DIRECTIVE_HEAVY: &str = r#"/* config */
#include <stdio.h>
#include <stdlib.h>
#define VERSION 3
#define MAX(a, b) ((a) > (b) ? (a) : (b))
#ifdef __linux__
# define PLATFORM "linux"
#else
# define PLATFORM "other"
#endif
#if VERSION > 2
#  define USE_NEW 1
#elif VERSION > 1
#  define USE_OLD 1
#else
#  error too old
#endif
#ifndef DEBUG
#define LOG(x) do { } while (0)
#endif
#pragma GCC diagnostic warning "-Wall"
#undef NDEBUG

static int helper(int x) {
    LOG(x);
    return MAX(x, 3);
}

int main(void) {
#if USE_NEW
    int zero = 0;
    printf("%s %d\n", PLATFORM, helper(2));
    return 1 / 0;
#else
    return 0;
#endif
}
"#;

fn write_script(path: &Path, body: &str) {
    crate::util::write_executable(path, &format!("#!/bin/sh\n{body}\n"));
}

/// Runs `icepick reduce --json --test SCRIPT FILES…` in `dir` with `extra` flags and TMPDIR set
/// to `tmpdir`; returns the JSON.
fn reduce_test(
    dir: &Path,
    script: &Path,
    files: &[&str],
    extra: &[&str],
    tmpdir: &Path,
) -> serde_json::Value {
    let o = Command::new(BIN)
        .args(["reduce", "--json", "--test", script.to_str().unwrap()])
        .args(extra)
        .args(files)
        .current_dir(dir)
        .env("TMPDIR", tmpdir)
        .output()
        .unwrap();
    expect_success(&o);
    serde_json::from_slice(&o.stdout).unwrap()
}

fn script_says_yes(dir: &Path, script: &Path) -> bool {
    Command::new(script)
        .current_dir(dir)
        .status()
        .unwrap()
        .success()
}

/// A scratch directory with `tmp/` (the TMPDIR given to icepick) inside.
fn setup() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("work");
    let tmp = d.path().join("tmp");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::create_dir_all(&tmp).unwrap();
    (d, dir, tmp)
}

#[test]
fn directive_heavy_c_file_is_reduced_to_the_one_line_the_script_needs() {
    let (_d, dir, tmp) = setup();
    std::fs::write(dir.join("t.c"), DIRECTIVE_HEAVY).unwrap();
    let script = dir.join("check.sh");
    write_script(
        &script,
        "clang-19 -fsyntax-only t.c 2>&1 | grep -q 'division by zero'",
    );
    let r = reduce_test(&dir, &script, &["t.c"], &["--jobs", "2"], &tmp);
    let out = std::fs::read_to_string(dir.join("t.c")).unwrap();
    assert_eq!(r["bytes_after"], out.len());
    // No directive is left, nor a line break: the C-Vise end state (C-Vise 2.7 stops at 16
    // bytes on this file, `main() {\n  1 / 0`).
    assert!(!out.contains('#') && !out.contains('\n'), "{out:?}");
    assert!(out.contains("1/0"), "{out:?}");
    assert!(out.len() <= 16, "{out:?}");
    assert!(script_says_yes(&dir, &script));
    assert_eq!(
        std::fs::read_to_string(dir.join("t.c.orig")).unwrap(),
        DIRECTIVE_HEAVY
    );
}

#[test]
fn reduce_test_jobs_1_and_jobs_2_give_the_same_result() {
    let mut results = Vec::new();
    for jobs in ["1", "2"] {
        let (_d, dir, tmp) = setup();
        std::fs::write(dir.join("t.c"), DIRECTIVE_HEAVY).unwrap();
        let script = dir.join("check.sh");
        // A test that needs a directive: the warning comes from `#warning` inside the
        // conditionals, and the division from a macro.
        let src = DIRECTIVE_HEAVY.replace(
            "#  define USE_NEW 1\n",
            "#  define USE_NEW 1\n#  warning \"new code\"\n",
        );
        std::fs::write(dir.join("t.c"), &src).unwrap();
        write_script(
            &script,
            "gcc -fsyntax-only t.c >log 2>&1; grep -q 'warning: #warning \"new code\"' log && grep -q 'division by zero' log",
        );
        reduce_test(&dir, &script, &["t.c"], &["--jobs", jobs], &tmp);
        let out = std::fs::read_to_string(dir.join("t.c")).unwrap();
        assert!(
            out.starts_with("#warning") && out.contains("\"new code\""),
            "{out:?}"
        );
        assert!(out.len() < 60, "{out:?}");
        assert!(script_says_yes(&dir, &script));
        results.push(out);
    }
    assert_eq!(results[0], results[1], "--jobs 1 and --jobs 2 differ");
}

#[test]
fn reduce_test_reduces_two_files_together() {
    let (_d, dir, tmp) = setup();
    let header = "#ifndef A_H\n#define A_H\n#include <stddef.h>\nstruct unused { int a, b; };\n\
                  typedef unsigned long ulong_t;\nstatic inline int div0(int x) { return x / ZERO; }\n\
                  static inline int twice(int x) { return 2 * x; }\n#endif\n";
    let source = "#define ZERO 0\n#include \"a.h\"\n#include <string.h>\n\
                  int main(void) {\n  int n = twice(3);\n  if (n > 2)\n    n = (int)strlen(\"abc\");\n\
                  return div0(n);\n}\n";
    std::fs::write(dir.join("a.h"), header).unwrap();
    std::fs::write(dir.join("a.c"), source).unwrap();
    let script = dir.join("check.sh");
    // The script needs both files: the division sits in the header, ZERO in the source.
    write_script(
        &script,
        "test -f a.h || exit 1\nclang-19 -fsyntax-only a.c 2>&1 | grep -q 'division by zero'",
    );
    let r = reduce_test(&dir, &script, &["a.h", "a.c"], &["--jobs", "2"], &tmp);
    let h = std::fs::read_to_string(dir.join("a.h")).unwrap();
    let c = std::fs::read_to_string(dir.join("a.c")).unwrap();
    assert!(h.len() * 3 < header.len(), "{h:?}");
    assert!(c.len() * 3 < source.len(), "{c:?}");
    assert_eq!(r["bytes_after"], h.len() + c.len());
    assert_eq!(r["files"].as_array().unwrap().len(), 2, "{r:#}");
    assert_eq!(
        std::fs::read_to_string(dir.join("a.h.orig")).unwrap(),
        header
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("a.c.orig")).unwrap(),
        source
    );
    assert!(script_says_yes(&dir, &script));
}

#[test]
fn reduce_test_keeps_the_file_mode() {
    let (_d, dir, tmp) = setup();
    let file = dir.join("t.c");
    std::fs::write(&file, DIRECTIVE_HEAVY).unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
    let script = dir.join("check.sh");
    // The script sees the candidate with the file's mode too.
    write_script(
        &script,
        "test \"$(stat -c %a t.c)\" = 600 || exit 1\nclang-19 -fsyntax-only t.c 2>&1 | grep -q 'division by zero'",
    );
    let r = reduce_test(&dir, &script, &["t.c"], &["--jobs", "2"], &tmp);
    assert!(r["bytes_after"].as_u64().unwrap() < 40, "{r:#}");
    let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "mode {mode:o}");
}

#[test]
fn reduce_test_leaves_tmpdir_empty_even_when_tests_are_killed() {
    let (_d, dir, tmp) = setup();
    std::fs::write(dir.join("t.c"), DIRECTIVE_HEAVY).unwrap();
    let script = dir.join("check.sh");
    // Like gcc's `cc*.s` when a test is killed mid-compile: a temporary in $TMPDIR that only a
    // finished script removes. Candidates without `int` kill the script before it cleans up.
    write_script(
        &script,
        "t=$(mktemp)\ngcc -c -o /dev/null t.c 2>&1 | grep -q 'division by zero' || { rm -f \"$t\"; exit 1; }\n\
         grep -q int t.c || kill -KILL $$\nrm -f \"$t\"",
    );
    let r = reduce_test(&dir, &script, &["t.c"], &["--jobs", "2"], &tmp);
    let out = std::fs::read_to_string(dir.join("t.c")).unwrap();
    assert!(out.contains("int"), "{out:?}");
    assert!(r["tests"].as_u64().unwrap() > 10);
    let left = walk(&tmp);
    assert!(left.is_empty(), "left in TMPDIR: {left:?}");
}
