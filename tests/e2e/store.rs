//! The crash store through the binary: `icepick wrap` as a real CMake/Ninja launcher, 32
//! crashing compiles at once, `scan-log` on real ninja and make logs, `list`/`show`, and
//! `triage --pending`. Every test has its own store (`ICEPICK_STORE`).

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use crate::util::*;

/// Crashes clang 14-16 in destructor-name lookup (llvm/llvm-project#59446's bug class),
/// after three ordinary errors.
pub(crate) const CRASH_CPP: &str = "\
namespace app {
namespace detail {
template <typename T> struct Holder;
}
void release(Holder<int> *h) { h->detail::Holder<int>::~Holder(); }
}
";

const OK1_CPP: &str = "int add(int a, int b) { return a + b; }\n";
const OK2_CPP: &str = "\
#include <vector>
int sum(const std::vector<int> &v) {
  int s = 0;
  for (int x : v) s += x;
  return s;
}
";

/// `icepick ARGS` in `cwd` with the store in `store`.
pub(crate) fn icepick_in(store: &Path, cwd: &Path, args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .current_dir(cwd)
        .env("ICEPICK_STORE", store)
        .output()
        .unwrap()
}

fn json_of(o: &Output) -> serde_json::Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not one JSON object ({e}): {}\nstderr: {}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        )
    })
}

pub(crate) fn list(store: &Path) -> serde_json::Value {
    let o = icepick_in(store, store.parent().unwrap(), &["list", "--json"]);
    expect_success(&o);
    json_of(&o)
}

fn show(store: &Path, bucket: &str) -> serde_json::Value {
    let o = icepick_in(store, store.parent().unwrap(), &["show", bucket, "--json"]);
    expect_success(&o);
    json_of(&o)
}

/// A CMake project: two ordinary sources and one that crashes clang++-16.
fn project(root: &Path) -> PathBuf {
    let src = root.join("proj");
    std::fs::create_dir_all(src.join("src")).unwrap();
    std::fs::write(
        src.join("CMakeLists.txt"),
        "cmake_minimum_required(VERSION 3.16)\nproject(demo CXX)\n\
         add_library(demo STATIC src/ok1.cpp src/crash.cpp src/ok2.cpp)\n",
    )
    .unwrap();
    std::fs::write(src.join("src/ok1.cpp"), OK1_CPP).unwrap();
    std::fs::write(src.join("src/ok2.cpp"), OK2_CPP).unwrap();
    std::fs::write(src.join("src/crash.cpp"), CRASH_CPP).unwrap();
    src
}

fn run_ok(cmd: &mut Command) -> Output {
    let o = cmd.output().unwrap();
    assert!(
        o.status.success(),
        "{cmd:?}: {}\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    o
}

fn configure(src: &Path, build: &Path, generator: &str, launcher: bool) {
    let mut c = Command::new("cmake");
    c.arg("-S")
        .arg(src)
        .arg("-B")
        .arg(build)
        .arg("-G")
        .arg(generator)
        .arg("-DCMAKE_CXX_COMPILER=clang++-16");
    if launcher {
        c.arg(format!("-DCMAKE_CXX_COMPILER_LAUNCHER={BIN};wrap"));
    }
    run_ok(&mut c);
}

#[test]
fn wrap_in_a_cmake_ninja_build_changes_nothing_but_records_the_crash() {
    let tmp = tempfile::tempdir().unwrap();
    let store = tmp.path().join("store");
    let src = project(tmp.path());
    let plain = tmp.path().join("plain");
    let wrapped = tmp.path().join("wrapped");
    configure(&src, &plain, "Ninja", false);
    configure(&src, &wrapped, "Ninja", true);
    let ninja = |dir: &Path| {
        Command::new("ninja")
            .args(["-k", "0"])
            .current_dir(dir)
            .env("ICEPICK_STORE", &store)
            .output()
            .unwrap()
    };
    let p = ninja(&plain);
    let w = ninja(&wrapped);
    assert_eq!(p.status.code(), Some(1));
    assert_eq!(w.status.code(), Some(1), "the build still sees the failure");
    for obj in ["ok1.cpp.o", "ok2.cpp.o"] {
        let rel = Path::new("CMakeFiles/demo.dir/src").join(obj);
        let a = std::fs::read(plain.join(&rel)).unwrap();
        let b = std::fs::read(wrapped.join(&rel)).unwrap();
        assert!(a == b, "{obj} differs with the launcher");
    }
    assert!(!wrapped.join("CMakeFiles/demo.dir/src/crash.cpp.o").exists());

    // Ninja puts a command's stdout and stderr together in its own stdout.
    let log = String::from_utf8_lossy(&w.stdout);
    assert!(log.contains("PLEASE submit a bug report"), "{log}");
    assert!(log.contains("Stack dump:"), "{log}");
    let ours: Vec<&str> = log.lines().filter(|l| l.starts_with("icepick:")).collect();
    assert_eq!(ours.len(), 1, "{log}");
    let buckets = list(&store);
    let b = &buckets["buckets"];
    assert_eq!(b.as_array().unwrap().len(), 1, "{buckets:#}");
    assert_eq!(b[0]["count"], 1);
    assert_eq!(b[0]["status"], "new");
    assert!(b[0]["verdict"].is_null());
    let id = b[0]["id"].as_str().unwrap();
    assert_eq!(
        ours[0],
        format!(
            "icepick: crash captured as bucket {id} ({}); see: icepick show {id}",
            b[0]["title"].as_str().unwrap()
        )
    );
    // The only difference in the build output is that line (and the launcher in front of
    // the command ninja prints for the failed edge). Parallel edges finish in any order, so
    // compare the lines as sorted lists, without ninja's `[N/M] ` counters.
    let plain_log = String::from_utf8_lossy(&p.stdout);
    let launcher = format!("{BIN} wrap ");
    let normalise = |s: &str| -> Vec<String> {
        let mut v: Vec<String> = s
            .lines()
            .filter(|l| !l.starts_with("icepick:") && !l.contains("diagnostic msg: /"))
            .map(|l| l.replace(&launcher, ""))
            .map(|l| l.replace(&*wrapped.to_string_lossy(), "BUILD"))
            .map(|l| l.replace(&*plain.to_string_lossy(), "BUILD"))
            .map(|l| match l.split_once("] ") {
                Some((n, rest)) if n.starts_with('[') && n.contains('/') => rest.to_string(),
                _ => l,
            })
            // Frame addresses change with ASLR: keep the frame number and what follows.
            .map(|l| match l.trim_start().strip_prefix('#') {
                Some(f) => {
                    let mut w = f.splitn(3, ' ');
                    let (n, _addr, rest) = (w.next(), w.next(), w.next());
                    format!("#{} {}", n.unwrap_or(""), rest.unwrap_or(""))
                }
                None => l,
            })
            .collect();
        v.sort();
        v
    };
    assert_eq!(normalise(&plain_log), normalise(&log));

    // Scanning this build's log later does not count the crash twice.
    let log_file = tmp.path().join("wrapped.log");
    std::fs::write(&log_file, &w.stdout).unwrap();
    let o = icepick_in(
        &store,
        &wrapped,
        &["scan-log", "--json", log_file.to_str().unwrap()],
    );
    expect_success(&o);
    let scanned = json_of(&o);
    assert_eq!(
        scanned["crashes"][0]["capture"], "recorded-by-wrap",
        "{scanned:#}"
    );
    assert_eq!(scanned["crashes"][0]["bucket"], id);

    let shown = show(&store, id);
    let occ = shown["occurrences"].as_array().unwrap();
    assert_eq!(occ.len(), 1);
    assert_eq!(occ[0]["origin"], "wrap");
    assert!(occ[0]["source"]
        .as_str()
        .unwrap()
        .ends_with("src/crash.cpp"));
    assert_eq!(occ[0]["cwd"], wrapped.to_str().unwrap());
    assert!(occ[0]["compiler_version"]
        .as_str()
        .unwrap()
        .contains("clang version 16"));
    let case_dir = PathBuf::from(shown["case_dir"].as_str().unwrap());
    assert!(case_dir.starts_with(store.join("cases")), "{case_dir:?}");
    let case = read_case(&case_dir);
    assert_eq!(case["status"], "captured", "{case:#}");
    assert_eq!(case["signature"]["id"], id);
    assert!(shown["report"].as_str().unwrap().ends_with("report.md"));
}

#[test]
fn thirty_two_concurrent_crashes_make_one_bucket_and_one_capture() {
    let tmp = tempfile::tempdir().unwrap();
    let store = tmp.path().join("store");
    std::fs::write(tmp.path().join("crash.cpp"), CRASH_CPP).unwrap();
    let children: Vec<_> = (0..32)
        .map(|i| {
            Command::new(BIN)
                .args(["wrap", "clang++-16", "-c", "crash.cpp", "-o"])
                .arg(format!("crash-{i}.o"))
                .current_dir(tmp.path())
                .env("ICEPICK_STORE", &store)
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let mut captured_lines = 0;
    for c in children {
        let o = c.wait_with_output().unwrap();
        assert_eq!(
            o.status.code(),
            Some(1),
            "clang-16's driver exits 1 on a crash"
        );
        let err = String::from_utf8_lossy(&o.stderr);
        let ours: Vec<&str> = err.lines().filter(|l| l.starts_with("icepick:")).collect();
        assert_eq!(ours.len(), 1, "{err}");
        assert!(!ours[0].contains("could not record"), "{}", ours[0]);
        captured_lines += ours[0].contains("crash captured as bucket") as usize;
    }
    assert_eq!(captured_lines, 1, "only the first occurrence captures");
    let buckets = list(&store);
    let b = buckets["buckets"].as_array().unwrap();
    assert_eq!(b.len(), 1, "{buckets:#}");
    assert_eq!(b[0]["count"], 32);
    let shown = show(&store, b[0]["id"].as_str().unwrap());
    assert_eq!(shown["occurrences"].as_array().unwrap().len(), 32);
    let cases: Vec<_> = std::fs::read_dir(store.join("cases"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(cases.len(), 1, "{cases:?}");
}

#[test]
fn recorded_without_capture_then_triaged_pending() {
    let tmp = tempfile::tempdir().unwrap();
    let store = tmp.path().join("store");
    std::fs::write(tmp.path().join("crash.cpp"), CRASH_CPP).unwrap();
    for i in 0..3 {
        let o = Command::new(BIN)
            .args(["wrap", "clang++-16", "-c", "crash.cpp", "-o"])
            .arg(format!("c{i}.o"))
            .current_dir(tmp.path())
            .env("ICEPICK_STORE", &store)
            .env("ICEPICK_WRAP_CAPTURE", "0")
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(1));
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.lines()
                .any(|l| l.starts_with("icepick: crash recorded in bucket")),
            "{err}"
        );
    }
    let b = &list(&store)["buckets"][0];
    let id = b["id"].as_str().unwrap().to_string();
    assert_eq!(b["count"], 3);
    assert!(show(&store, &id)["case_dir"].is_null());

    let o = icepick_in(
        &store,
        tmp.path(),
        &["triage", "--pending", "--jobs", "2", "--json"],
    );
    expect_success(&o);
    let v = json_of(&o);
    assert_eq!(v["buckets"][0]["id"], id.as_str());
    assert_eq!(v["buckets"][0]["status"], "triaged", "{v:#}");
    let shown = show(&store, &id);
    assert_eq!(shown["bucket"]["status"], "triaged");
    let case_dir = PathBuf::from(shown["case_dir"].as_str().unwrap());
    let case = read_case(&case_dir);
    assert_eq!(case["reduction"]["verified"], true, "{case:#}");
    // The same stages as `triage -- <cmd>`: flags before the reduction, versions after.
    assert!(case["flags"].is_object(), "{case:#}");
    assert!(
        v["buckets"][0]["detail"]
            .as_str()
            .unwrap()
            .contains("versions"),
        "{v:#}"
    );
    assert!(
        case["reduction"]["bytes_after"].as_u64().unwrap()
            < case["reduction"]["bytes_before"].as_u64().unwrap()
    );
    // Nothing left to do.
    let again = icepick_in(&store, tmp.path(), &["triage", "--pending", "--json"]);
    assert_eq!(json_of(&again)["buckets"], serde_json::json!([]));
}

/// A backend crash recorded by the launcher and triaged later gets what `triage -- CMD` gives
/// it: the `ir` stage runs on the build's path too, so the report has an llc test.
#[test]
fn a_backend_crash_triaged_pending_gets_its_llc_test() {
    let tmp = tempfile::tempdir().unwrap();
    let store = tmp.path().join("store");
    let src = corpus("x86-avx512-no-evex512").join("masks.c");
    std::fs::copy(&src, tmp.path().join("masks.c")).unwrap();
    let o = Command::new(BIN)
        .args([
            "wrap",
            "/usr/lib/llvm-19/bin/clang",
            "-fno-crash-diagnostics",
        ])
        .args([
            "-c",
            "--target=x86_64-linux-gnu",
            "-O1",
            "masks.c",
            "-o",
            "masks.o",
        ])
        .current_dir(tmp.path())
        .env("ICEPICK_STORE", &store)
        .env("ICEPICK_WRAP_CAPTURE", "0")
        .output()
        .unwrap();
    assert_ne!(o.status.code(), Some(0));
    let id = list(&store)["buckets"][0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let o = icepick_in(
        &store,
        tmp.path(),
        &["triage", "--pending", "--jobs", "2", "--json"],
    );
    expect_success(&o);
    let shown = show(&store, &id);
    assert_eq!(shown["bucket"]["status"], "triaged", "{shown:#}");
    let case_dir = PathBuf::from(shown["case_dir"].as_str().unwrap());
    let case = read_case(&case_dir);
    let ir = &case["ir"];
    assert_eq!(ir["tool"], "llc", "{case:#}");
    assert_eq!(ir["verified"], true, "{ir:#}");
    let run_line = ir["run_line"].as_str().unwrap();
    assert!(run_line.contains("-mtriple=x86_64"), "{run_line}");
    let ll = std::fs::read_to_string(case_dir.join("reduced.ll")).unwrap();
    assert!(ll.starts_with("; RUN: llc "), "{ll}");
    let report = std::fs::read_to_string(case_dir.join("report.md")).unwrap();
    assert!(report.contains(run_line), "{report}");
}

/// `icepick wrap` and the `icepick-wrap` launcher binary, as a build runs them.
fn launchers() -> [(&'static str, &'static [&'static str]); 2] {
    [(BIN, &["wrap"]), (LAUNCHER, &[])]
}

#[test]
fn wrap_is_transparent_for_compiles_that_do_not_crash() {
    let tmp = tempfile::tempdir().unwrap();
    let store = tmp.path().join("store");
    let sources = [
        ("ok.c", "int f(int x) { return x * 2; }\n"),
        ("warn.c", "int f(void) { int unused; return 0; }\n"),
        ("err.c", "int f(void) { return undefined_name; }\n"),
    ];
    let sides = ["bare", "wrapped-0", "wrapped-1"];
    for side in sides {
        let d = tmp.path().join(side);
        std::fs::create_dir_all(&d).unwrap();
        for (name, text) in sources {
            std::fs::write(d.join(name), text).unwrap();
        }
    }
    let cases: Vec<Vec<&str>> = vec![
        vec!["clang-19", "-Wall", "-c", "ok.c", "-o", "ok.o"],
        vec!["clang-19", "-Wall", "-c", "warn.c", "-o", "warn.o"],
        vec!["clang-19", "-Wall", "-c", "err.c", "-o", "err.o"],
        // Output on stdout.
        vec!["clang-19", "-E", "ok.c"],
        vec!["clang-19", "--version"],
    ];
    for (i, (launcher, prefix)) in launchers().into_iter().enumerate() {
        let side = tmp.path().join(format!("wrapped-{i}"));
        for argv in &cases {
            let bare = Command::new(argv[0])
                .args(&argv[1..])
                .current_dir(tmp.path().join("bare"))
                .output()
                .unwrap();
            let wrapped = Command::new(launcher)
                .args(prefix)
                .args(argv)
                .current_dir(&side)
                .env("ICEPICK_STORE", &store)
                .output()
                .unwrap();
            assert_eq!(
                bare.status.code(),
                wrapped.status.code(),
                "{launcher} {argv:?}"
            );
            assert_eq!(bare.stdout, wrapped.stdout, "{launcher} {argv:?}");
            assert_eq!(
                String::from_utf8_lossy(&bare.stderr),
                String::from_utf8_lossy(&wrapped.stderr),
                "{launcher} {argv:?}"
            );
        }
        for obj in ["ok.o", "warn.o"] {
            assert_eq!(
                std::fs::read(tmp.path().join("bare").join(obj)).unwrap(),
                std::fs::read(side.join(obj)).unwrap(),
                "{launcher} {obj}"
            );
        }
        assert!(!side.join("err.o").exists());
        assert!(!store.exists(), "no crash: the store is never opened");

        // A compiler that is not there: the shell's answer.
        let o = Command::new(launcher)
            .args(prefix)
            .args(["no-such-compiler-icepick", "-c", "x.c"])
            .current_dir(tmp.path())
            .env("ICEPICK_STORE", &store)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(127), "{launcher}");
        assert_eq!(
            String::from_utf8_lossy(&o.stderr).lines().count(),
            1,
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
}

/// The launcher binary hands a crash to `icepick` (found beside it): the build still sees
/// the compiler's exit code and stderr, plus the one line naming the bucket, and the crash
/// is in the store with its case; a second crash of the same bug adds an occurrence.
#[test]
fn the_launcher_binary_records_crashes_like_icepick_wrap() {
    let tmp = tempfile::tempdir().unwrap();
    let store = tmp.path().join("store");
    std::fs::write(tmp.path().join("crash.cpp"), CRASH_CPP).unwrap();
    let bare = Command::new("clang++-16")
        .args(["-c", "crash.cpp", "-o", "bare.o"])
        .current_dir(tmp.path())
        .output()
        .unwrap();
    for i in 0..2 {
        let o = Command::new(LAUNCHER)
            .args(["clang++-16", "-c", "crash.cpp", "-o"])
            .arg(format!("c{i}.o"))
            .current_dir(tmp.path())
            .env("ICEPICK_STORE", &store)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), bare.status.code());
        let err = String::from_utf8_lossy(&o.stderr);
        let ours: Vec<&str> = err.lines().filter(|l| l.starts_with("icepick:")).collect();
        assert_eq!(ours.len(), 1, "{err}");
        let expected = if i == 0 {
            "crash captured as bucket"
        } else {
            "crash recorded in bucket"
        };
        assert!(ours[0].contains(expected), "{}", ours[0]);
        // Everything else is the compiler's own stderr (its first line names the crash).
        let first_bare = String::from_utf8_lossy(&bare.stderr)
            .lines()
            .next()
            .unwrap()
            .to_string();
        assert_eq!(err.lines().next().unwrap(), first_bare);
    }
    let b = &list(&store)["buckets"][0];
    assert_eq!(b["count"], 2, "{b:#}");
    let shown = show(&store, b["id"].as_str().unwrap());
    assert!(shown["case_dir"].is_string(), "{shown:#}");
    assert_eq!(shown["occurrences"][0]["origin"], "wrap");
}

/// Builds the crashing project with `generator`, the whole output into one log file.
fn build_log(root: &Path, generator: &str) -> PathBuf {
    let src = project(root);
    let build = root.join("build");
    configure(&src, &build, generator, false);
    let (tool, args): (&str, Vec<&str>) = if generator == "Ninja" {
        ("ninja", vec!["-C", "build", "-k", "0"])
    } else {
        ("make", vec!["-C", "build", "-k", "VERBOSE=1"])
    };
    let log = root.join("build.log");
    let file = std::fs::File::create(&log).unwrap();
    let status = Command::new(tool)
        .args(&args)
        .current_dir(root)
        .stdout(file.try_clone().unwrap())
        .stderr(file)
        .status()
        .unwrap();
    assert!(!status.success(), "the build fails on the crash");
    log
}

#[test]
fn scan_log_finds_the_crash_in_real_ninja_and_make_logs() {
    let tmp = tempfile::tempdir().unwrap();
    let store = tmp.path().join("store");
    let mut ids = Vec::new();
    for (i, generator) in ["Ninja", "Unix Makefiles"].iter().enumerate() {
        let root = tmp.path().join(format!("p{i}"));
        let log = build_log(&root, generator);
        let o = icepick_in(
            &store,
            tmp.path(),
            &["scan-log", "--json", log.to_str().unwrap()],
        );
        expect_success(&o);
        let v = json_of(&o);
        let crashes = v["crashes"].as_array().unwrap();
        assert_eq!(crashes.len(), 1, "{generator}: {v:#}");
        let c = &crashes[0];
        assert_eq!(
            c["cwd"],
            root.join("build").to_str().unwrap(),
            "{generator}"
        );
        assert!(
            c["command"][0].as_str().unwrap().ends_with("clang++-16"),
            "{c}"
        );
        let expected_capture = if i == 0 {
            "captured"
        } else {
            "already-captured"
        };
        assert_eq!(c["capture"], expected_capture, "{generator}: {c:#}");
        assert!(Path::new(c["case_dir"].as_str().unwrap())
            .join("case.json")
            .is_file());
        ids.push(c["bucket"].as_str().unwrap().to_string());
    }
    assert_eq!(ids[0], ids[1], "the same crash lands in the same bucket");
    let b = &list(&store)["buckets"];
    assert_eq!(b.as_array().unwrap().len(), 1);
    assert_eq!(b[0]["count"], 2);
    let occ = show(&store, &ids[0])["occurrences"].clone();
    assert!(occ
        .as_array()
        .unwrap()
        .iter()
        .all(|o| o["origin"] == "scan-log"));

    // A log without crashes.
    let clean = tmp.path().join("clean.log");
    std::fs::write(&clean, "[1/1] Building CXX object a.o\n").unwrap();
    let o = icepick_in(&store, tmp.path(), &["scan-log", clean.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(3));
}

#[test]
fn show_an_unknown_bucket_is_a_usage_error() {
    let tmp = tempfile::tempdir().unwrap();
    let store = tmp.path().join("store");
    let o = icepick_in(&store, tmp.path(), &["show", "0123456789ab"]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("no bucket `0123456789ab`"), "{err}");
    let o = icepick_in(&store, tmp.path(), &["list"]);
    assert_eq!(o.status.code(), Some(0));
    // A store that does not exist is not created by reading it.
    assert!(String::from_utf8_lossy(&o.stdout).starts_with("no crashes recorded (store"));
    assert!(!store.exists());
}

/// `icepick show A --diff B`: two real buckets (clang-16's destructor-lookup segfault and its
/// crash pragma's illegal instruction) compared as a unified diff of their signatures, frames
/// from the captured cases, and facts.
#[test]
fn show_diff_of_two_buckets_is_a_unified_diff_of_signatures_and_frames() {
    let tmp = tempfile::tempdir().unwrap();
    let store = tmp.path().join("store");
    std::fs::write(tmp.path().join("crash.cpp"), CRASH_CPP).unwrap();
    std::fs::write(
        tmp.path().join("pragma.cpp"),
        "#pragma clang __debug crash\nint x;\n",
    )
    .unwrap();
    for (src, obj) in [("crash.cpp", "a.o"), ("pragma.cpp", "b.o")] {
        let o = icepick_in(
            &store,
            tmp.path(),
            &["wrap", "clang++-16", "-c", src, "-o", obj],
        );
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains("icepick: crash captured as bucket"), "{err}");
    }
    let listed = list(&store);
    let id_of = |kind: &str| {
        listed["buckets"]
            .as_array()
            .unwrap()
            .iter()
            .find(|b| b["kind"] == kind)
            .unwrap_or_else(|| panic!("no {kind} bucket: {listed:#}"))["id"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let (segv, ill) = (id_of("SIGSEGV"), id_of("SIGILL"));
    let o = icepick_in(&store, tmp.path(), &["show", &segv[..6], "--diff", &ill]);
    expect_success(&o);
    let diff = String::from_utf8_lossy(&o.stdout).into_owned();
    let lines: Vec<&str> = diff.lines().collect();
    assert_eq!(lines[0], format!("--- bucket {segv}"), "{diff}");
    assert_eq!(lines[1], format!("+++ bucket {ill}"), "{diff}");
    assert!(lines[2].starts_with("@@ -1,"), "{diff}");
    assert!(lines.contains(&"-kind:      SIGSEGV"), "{diff}");
    assert!(lines.contains(&"+kind:      SIGILL"), "{diff}");
    // The frames come from the cases: the destructor lookup on one side, the pragma
    // handler on the other.
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("-frame:") && l.contains("clang::Sema::getDestructorName")),
        "{diff}"
    );
    assert!(
        lines.iter().any(|l| l.starts_with("+frame:")
            && l.contains("clang::Preprocessor::HandlePragmaDirective")),
        "{diff}"
    );
    // What both share is context, unmarked.
    assert!(lines.contains(&" status:    new"), "{diff}");
    assert!(
        lines.iter().any(|l| l.starts_with(" compiler:  ")),
        "{diff}"
    );

    let o = icepick_in(
        &store,
        tmp.path(),
        &["show", &ill, "--diff", &segv, "--json"],
    );
    expect_success(&o);
    let v = json_of(&o);
    assert_eq!(
        (v["a"].as_str(), v["b"].as_str()),
        (Some(&*ill), Some(&*segv))
    );
    assert!(v["diff"].as_str().unwrap().contains("+kind:      SIGSEGV"));

    let o = icepick_in(&store, tmp.path(), &["show", &segv, "--diff", &segv]);
    expect_success(&o);
    assert!(String::from_utf8_lossy(&o.stdout).contains("compare equal"));
    let o = icepick_in(&store, tmp.path(), &["show", &segv, "--diff", "ffffff"]);
    assert_eq!(o.status.code(), Some(2));
}

/// A store this user cannot write (another user's): `list`, `show` and `dashboard` read it as
/// it is, and leave it as it was. The store is made by this (root) user and read as `nobody`.
#[test]
fn a_store_of_another_user_is_read_as_it_is() {
    use std::os::unix::fs::PermissionsExt;
    // Under /tmp itself: `nobody` must reach it (a private TMPDIR is closed to it).
    let tmp = tempfile::Builder::new()
        .prefix("icepick-ro-")
        .tempdir_in("/tmp")
        .unwrap();
    std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let store = tmp.path().join("store");
    std::fs::write(tmp.path().join("crash.cpp"), CRASH_CPP).unwrap();
    let o = Command::new(BIN)
        .args(["wrap", "clang++-16", "-c", "crash.cpp", "-o", "a.o"])
        .current_dir(tmp.path())
        .env("ICEPICK_STORE", &store)
        .env("ICEPICK_WRAP_CAPTURE", "0")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    let id = list(&store)["buckets"][0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let before = walk(&store);
    let out = tmp.path().join("dash");
    std::fs::create_dir(&out).unwrap();
    std::fs::set_permissions(&out, std::fs::Permissions::from_mode(0o777)).unwrap();
    let dash = out.join("d");
    for args in [
        vec!["list"],
        vec!["list", "--json"],
        vec!["show", id.as_str()],
        vec!["dashboard", "--out", dash.to_str().unwrap()],
    ] {
        let o = Command::new("setpriv")
            .args(["--reuid=nobody", "--regid=nogroup", "--clear-groups", "--"])
            .arg(BIN)
            .args(&args)
            .current_dir(tmp.path())
            .env("ICEPICK_STORE", &store)
            .env("HOME", tmp.path())
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(0), "{args:?} as nobody: {text}");
        assert!(
            String::from_utf8_lossy(&o.stdout).contains(&id) || args[0] == "dashboard",
            "{args:?}"
        );
    }
    assert!(dash.join("index.html").is_file());
    assert_eq!(walk(&store), before, "the store was changed");
}

/// Runs corpus case `name`'s command, in a scratch copy of its folder, under
/// `wrap --no-capture` into `store`, and checks that it recorded a crash: (the copy's guard,
/// the copy, the wrap's output).
fn wrap_corpus_case(store: &Path, name: &str) -> (tempfile::TempDir, PathBuf, Output) {
    let (keep, case) = scratch_copy(&corpus(name));
    let argv = cmd_txt(&case);
    let mut args = vec!["wrap", "--no-capture", "--"];
    args.extend(argv.iter().map(String::as_str));
    let o = icepick_in(store, &case, &args);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("crash recorded in bucket"), "{name}: {err}");
    (keep, case, o)
}

/// Two silent crashes of different public issues (clang's in-process cc1 overflows its
/// stack and prints nothing) recorded by `wrap --no-capture`: each is rerun out of process
/// for its stack, so they land in two buckets named by their frames, not in one shared
/// "segmentation fault" bucket, and the build's own output is still not written.
#[test]
fn silent_crashes_of_different_issues_get_buckets_of_their_own_frames() {
    let d = tempfile::tempdir().unwrap();
    let store = d.path().join("store");
    for name in ["silent-gh111699", "fe-silent-gh132076"] {
        let (_keep, case, o) = wrap_corpus_case(&store, name);
        assert_ne!(o.status.code(), Some(0), "{name}: the compile crashed");
        assert!(
            !case.join("GH132076.o").exists(),
            "{name}: wrote the build's output"
        );
    }
    let buckets = list(&store);
    let buckets = buckets["buckets"].as_array().expect("a bucket list");
    assert_eq!(buckets.len(), 2, "{buckets:#?}");
    for b in buckets {
        let title = b["title"].as_str().unwrap();
        assert!(title.contains("stack overflow in "), "{title}");
    }
}

/// The same device crash compiled for one offload arch and for two: with two, the driver runs
/// each cc1 out of process and the crashing one stops in `report_fatal_error` without a
/// stack. `wrap` runs that job alone for its stack, so both land in one bucket, not in a
/// frameless one of their own.
#[test]
fn a_device_crash_without_a_stack_joins_the_bucket_of_its_frames() {
    let d = tempfile::tempdir().unwrap();
    let store = d.path().join("store");
    for name in ["amdgpu-si-flat", "amdgpu-si-flat-two-arch"] {
        wrap_corpus_case(&store, name);
    }
    let buckets = list(&store);
    let buckets = buckets["buckets"].as_array().expect("a bucket list");
    assert_eq!(buckets.len(), 1, "{buckets:#?}");
    assert_eq!(buckets[0]["count"], 2, "{buckets:#?}");
    // One compiler, one version line: the first command's crash printed none
    // (`-fno-crash-diagnostics`), so wrap asked the compiler.
    let versions = buckets[0]["compiler_versions"].as_array().unwrap();
    assert_eq!(versions.len(), 1, "{versions:?}");
    assert!(
        versions[0].as_str().unwrap().contains("clang version 19"),
        "{versions:?}"
    );
}
