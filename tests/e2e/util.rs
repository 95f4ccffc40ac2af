//! Helpers: run the binary, copy corpus cases to scratch directories, read JSON paths.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub const BIN: &str = env!("CARGO_BIN_EXE_icepick");
/// The small launcher binary (`icepick-wrap <compiler> …` = `icepick wrap <compiler> …`).
pub const LAUNCHER: &str = env!("CARGO_BIN_EXE_icepick-wrap");

/// A case of the repository's own corpus (`corpus/NAME`): the cases written for icepick and the
/// real crashes from public LLVM bug reports (each folder's README gives its provenance).
pub fn corpus(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("corpus")
        .join(name)
}

/// Copies a directory tree into a fresh temp dir and returns (guard, path of the copy).
pub fn scratch_copy(src: &Path) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let dest = tmp.path().join(src.file_name().unwrap());
    copy_tree(src, &dest);
    (tmp, dest)
}

fn copy_tree(src: &Path, dest: &Path) {
    std::fs::create_dir_all(dest).unwrap();
    for e in std::fs::read_dir(src).unwrap() {
        let e = e.unwrap();
        let to = dest.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_tree(&e.path(), &to);
        } else {
            std::fs::copy(e.path(), &to).unwrap();
        }
    }
}

/// Every file and directory under `root`, relative to it, sorted; symlinked directories are
/// listed, not entered.
pub fn walk(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            out.push(p.strip_prefix(root).unwrap().to_path_buf());
            if p.is_dir() && !p.is_symlink() {
                stack.push(p);
            }
        }
    }
    out.sort();
    out
}

/// Runs `icepick ARGS` in `cwd`.
pub fn icepick(cwd: &Path, args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .current_dir(cwd)
        .output()
        .unwrap()
}
/// Asserts that a finished command exited 0, showing its stderr when it did not.
#[track_caller]
pub fn expect_success(o: &Output) {
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// The first command line of a corpus `cmd.txt`, as argv.
pub fn cmd_txt(dir: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(dir.join("cmd.txt")).unwrap();
    let line = text.lines().find(|l| !l.trim().is_empty()).unwrap();
    let line = line.split(" # ").next().unwrap();
    shlex::split(line).unwrap()
}

/// `icepick capture --json --out OUT -- ARGV` in `cwd`; returns (exit code, JSON, stderr).
pub fn capture_json(cwd: &Path, out: &Path, argv: &[String]) -> (i32, serde_json::Value, String) {
    let mut args = vec!["capture", "--json", "--out", out.to_str().unwrap(), "--"];
    args.extend(argv.iter().map(String::as_str));
    let o = icepick(cwd, &args);
    let stderr = String::from_utf8_lossy(&o.stderr).into_owned();
    let json = serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not one JSON object ({e}): {}\nstderr: {stderr}",
            String::from_utf8_lossy(&o.stdout)
        )
    });
    (o.status.code().unwrap_or(-1), json, stderr)
}

/// Looks up `a.b[0].c` in a JSON value.
pub fn at<'a>(v: &'a serde_json::Value, path: &str) -> &'a serde_json::Value {
    let mut cur = v;
    for part in path.split('.') {
        let (name, index) = match part.split_once('[') {
            Some((n, i)) => (n, Some(i.trim_end_matches(']').parse::<usize>().unwrap())),
            None => (part, None),
        };
        cur = &cur[name];
        if let Some(i) = index {
            cur = &cur[i];
        }
    }
    cur
}

/// Checks every `"path": value` of a corpus `expected.json` against a case.
pub fn check_expected(case: &serde_json::Value, expected_file: &Path) {
    let expected: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(expected_file).unwrap()).unwrap();
    for (path, want) in expected.as_object().unwrap() {
        if path == "compiler" {
            continue;
        }
        assert_eq!(
            at(case, path),
            want,
            "{path} in {}",
            expected_file.display()
        );
    }
}

/// Runs a case's repro.sh from an unrelated directory; returns its output.
pub fn run_repro(case_dir: &Path) -> Output {
    let elsewhere = tempfile::tempdir().unwrap();
    Command::new("sh")
        .arg(case_dir.join("repro.sh"))
        .current_dir(elsewhere.path())
        .output()
        .unwrap()
}

/// Captures `argv` (run in `dir`) into `dir/case`, asserting success; returns the case dir.
pub fn capture_case(dir: &Path, argv: &[String]) -> PathBuf {
    let out = dir.join("case");
    let (code, case, stderr) = capture_json(dir, &out, argv);
    assert_eq!(code, 0, "{stderr}\n{case:#}");
    out
}

/// Reads a case directory's `case.json`.
pub fn read_case(dir: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("case.json")).unwrap()).unwrap()
}

/// Makes clang write its own crash reproducer for `argv` (run in `dir`), captures it with
/// `icepick capture --from-reproducer` into `dir/case`, and returns the case directory.
pub fn capture_reproducer(dir: &Path, argv: &[String]) -> PathBuf {
    let crashdir = dir.join("crashdir");
    let o = Command::new(&argv[0])
        .args(argv[1..].iter().filter(|a| *a != "-fno-crash-diagnostics"))
        .arg(format!("-fcrash-diagnostics-dir={}", crashdir.display()))
        .current_dir(dir)
        .output()
        .unwrap();
    assert_ne!(o.status.code(), Some(0));
    let script = std::fs::read_dir(&crashdir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "sh"))
        .expect("clang wrote a reproducer script");
    let out = dir.join("case");
    let o = icepick(
        dir,
        &[
            "capture",
            "--json",
            "--out",
            out.to_str().unwrap(),
            "--from-reproducer",
            script.to_str().unwrap(),
        ],
    );
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    out
}

/// Builds `corpus/rvv-programs/NAME.c` into `dir` with `riscv64-linux-gnu-gcc -O2 -static`.
pub fn build_riscv64(dir: &Path, name: &str) -> PathBuf {
    let src = corpus("rvv-programs").join(format!("{name}.c"));
    let out = dir.join(name);
    let o = Command::new("riscv64-linux-gnu-gcc")
        .args(["-O2", "-static", "-o"])
        .arg(&out)
        .arg(&src)
        .output()
        .unwrap_or_else(|e| {
            panic!("cannot run riscv64-linux-gnu-gcc ({e}): scripts/setup installs it")
        });
    assert!(
        o.status.success(),
        "riscv64-linux-gnu-gcc failed on {}:\n{}",
        src.display(),
        String::from_utf8_lossy(&o.stderr)
    );
    out
}

/// Runs a command given as a JSON array of strings (a case's `replay_command`, `ir.command`)
/// inside `dir`; returns its output.
pub fn run_json_argv(dir: &Path, argv: &serde_json::Value) -> Output {
    let argv: Vec<&str> = argv
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    Command::new(argv[0])
        .args(&argv[1..])
        .current_dir(dir)
        .output()
        .unwrap()
}

/// Writes `text` to `path` as an executable (mode 755) file: test scripts and wrappers.
///
/// A child process writes it; this process never opens it for writing. Tests run on threads
/// that fork: a fork while this process held the file open for writing would hand that
/// descriptor to the child until it execs, and running the file then fails with ETXTBSY
/// ("text file busy"), a test failure that comes and goes with the load.
pub fn write_executable(path: &Path, text: &str) {
    write_executable_mode(path, text, 0o755);
}

/// [`write_executable`] with another mode.
pub fn write_executable_mode(path: &Path, text: &str, mode: u32) {
    use std::io::Write;
    let mut child = Command::new("sh")
        .args(["-c", "cat > \"$1\" && chmod \"$2\" \"$1\"", "sh"])
        .arg(path)
        .arg(format!("{mode:o}"))
        .stdin(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    assert!(
        child.wait().unwrap().success(),
        "cannot write {}",
        path.display()
    );
}
