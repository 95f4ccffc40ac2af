//! Unit tests of the pure parts: argv rewriting, host lists, log reading.

use std::path::Path;

use super::*;

fn v(a: &[&str]) -> Vec<String> {
    a.iter().map(|s| s.to_string()).collect()
}

#[test]
fn farm_args_turn_a_dev_null_test_into_an_object_compile() {
    let args = v(&[
        "-fno-crash-diagnostics",
        "-c",
        "-o",
        "/dev/null",
        "-x",
        "c++-cpp-output",
        "-w",
        "/s/c1.ii",
    ]);
    assert_eq!(
        farm_args(&args, Path::new("/s/x.o")),
        v(&[
            "-fno-crash-diagnostics",
            "-c",
            "-x",
            "c++-cpp-output",
            "-w",
            "/s/c1.ii",
            "-o",
            "/s/x.o"
        ])
    );
    let syntax = v(&["-fsyntax-only", "-std=c++17", "f.ii"]);
    assert_eq!(
        farm_args(&syntax, Path::new("x.o")),
        v(&[
            "-fno-crash-diagnostics",
            "-c",
            "-std=c++17",
            "f.ii",
            "-o",
            "x.o"
        ])
    );
}

#[test]
fn icecc_args_drop_an_x_language_the_extension_says() {
    let args = v(&[
        "-c",
        "-o",
        "/dev/null",
        "-x",
        "c++-cpp-output",
        "-w",
        "/s/c1.ii",
    ]);
    assert_eq!(
        icecream::icecc_args(&args, Path::new("x.o")),
        v(&[
            "-fno-crash-diagnostics",
            "-c",
            "-w",
            "/s/c1.ii",
            "-o",
            "x.o"
        ])
    );
    // A .hipi input keeps its -x (icecc then compiles locally, which is counted).
    let hip = v(&["-c", "-x", "hip-cpp-output", "/s/c1.hipi"]);
    assert!(icecream::icecc_args(&hip, Path::new("x.o")).contains(&"hip-cpp-output".to_string()));
}

#[test]
fn distcc_host_lists_keep_remote_hosts_only() {
    assert_eq!(
        distcc::parse_hosts("--randomize localhost/2 127.0.0.1:3700/4,lzo node2 +zeroconf"),
        v(&["127.0.0.1:3700/4,lzo", "node2"])
    );
}

#[test]
fn distcc_logs_say_where_the_compiler_ran() {
    let remote = "distcc[10] exec on 127.0.0.1:3700: clang-16 -c x.ii\n\
        distcc[10] ERROR: compile input.ii on 127.0.0.1:3700 failed with exit code 139\n\
        distcc[10] (dcc_build_somewhere) ERROR: failed to distribute and fallbacks are disabled\n";
    assert_eq!(
        distcc::ran_on(remote),
        Some(Place::Remote("127.0.0.1:3700".into()))
    );
    let ok = "distcc[19] compile /tmp/v.ii on 127.0.0.1:3700/2 completed ok\n";
    assert_eq!(
        distcc::ran_on(ok),
        Some(Place::Remote("127.0.0.1:3700".into()))
    );
    // A compile error: no exit code in the line.
    let failed = "distcc[11] ERROR: compile /tmp/p.ii on 127.0.0.1:3701/2,lzo failed\n";
    assert_eq!(
        distcc::ran_on(failed),
        Some(Place::Remote("127.0.0.1:3701".into()))
    );
    let local = "distcc[25] compile /tmp/v.ii on localhost completed ok\n";
    assert_eq!(distcc::ran_on(local), Some(Place::Local));
    // distcc itself died (a refused connection on Debian's 3.4) or gave up: not the compiler.
    let infra = "distcc[9] (dcc_r_result_header) ERROR: server provided no answer.\n";
    assert_eq!(distcc::ran_on(infra), None);
    assert_eq!(distcc::ran_on(""), None);
}

#[test]
fn icecc_logs_say_where_the_compiler_ran() {
    let local = "ICECC[1075] unsupported -x option: c++-cpp-output; running locally\n\
        ICECC[1075] <building_local>\nICECC[1075] </building_local: 696ms>\n";
    assert_eq!(icecream::ran_on(local), Some(Place::Local));
    assert_eq!(icecream::ran_on(""), None);
    // Real logs (ICECC_DEBUG=debug) from the loopback farm of tests/e2e/farm_util.rs.
    let remote = "ICECC[81] asking for host to use\n\
        ICECC[81] Have to use host 127.0.0.1:10246 - Job ID: 2 - env: x86_64 - has env: true - match j: 0\n\
        ICECC[81] <wait for cs>\nICECC[81] </wait for cs: 77ms>\nICECC[81] Compiled on 127.0.0.1\n";
    assert_eq!(
        icecream::ran_on(remote),
        Some(Place::Remote("127.0.0.1:10246".into()))
    );
    // The scheduler picked this machine's daemon: icecc compiles here.
    let myself = "ICECC[72] asking for host to use\n\
        ICECC[72] building myself, but telling localhost\n\
        ICECC[72] invoking: /usr/lib/llvm-16/bin/clang -c -target x86_64-pc-linux-gnu t.cpp -o t.o\n";
    assert_eq!(icecream::ran_on(myself), Some(Place::Local));
    // The node failed before the compile: an infrastructure failure on that node.
    let dead = "ICECC[11] Have to use host 127.0.0.1:10245 - Job ID: 1 - env:  - has env: true\n\
        ICECC[11] flush_writebuf() failed(Error: Broken pipe)\n\
        ICECC[11] got exception Error 12 - failed to send file to remote (127.0.0.1)\n";
    assert_eq!(icecream::ran_on(dead), None);
    assert_eq!(icecream::node_of(dead).as_deref(), Some("127.0.0.1:10245"));
}

#[test]
fn host_dependent_crashes_stay_local() {
    assert!(must_stay_local(Some("host-rvv"), false, false)
        .unwrap()
        .contains("host-rvv"));
    assert!(must_stay_local(Some("host-kernel"), false, false).is_some());
    assert!(must_stay_local(Some("compiler-bug"), false, false).is_none());
    assert!(must_stay_local(None, true, false).is_some());
    assert!(must_stay_local(None, false, true).is_some());
}

/// A crash compiled on an icecream node of the loopback farm (tests/e2e/farm_util.rs): its
/// real stderr, kept in tests/fixtures/farm. The node's chroot has no llvm-symbolizer, so the
/// dump is unsymbolized (only `.dynsym` names) and names `-` as the input; its signature must
/// be the one a local, symbolized run of the same file gives.
#[test]
#[cfg(feature = "system-tests")]
fn a_remote_unsymbolized_dump_has_the_local_signature() {
    use crate::crash::{parse, signature, ExitInfo, Symbolizer};
    use crate::exec::{self, Cmd};
    const CLANG16: &str = "/usr/lib/llvm-16/bin/clang";
    const SYMBOLIZER: &str = "/usr/lib/llvm-19/bin/llvm-symbolizer";
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let text =
        std::fs::read_to_string(root.join("tests/fixtures/farm/icecc-remote-fe-gh59446.stderr"))
            .unwrap();
    assert!(text.contains("Program arguments: /usr/bin/clang -x c++ "));
    assert!(text.contains(" - -o icecc-"));
    assert!(text.contains("Stack dump without symbol names"));
    let exit = ExitInfo {
        code: Some(139),
        signal: None,
    };
    let mut remote = parse(&text, exit).expect("the remote dump parses as a crash");
    assert!(
        remote.frames.iter().any(|f| f.symbol.is_none()),
        "{:#?}",
        remote.frames
    );
    let symbolizer = Symbolizer::new(crate::case::library_dirs(Path::new(CLANG16)));
    symbolizer.symbolize(&mut remote);

    // The same file compiled here, through llvm-symbolizer.
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        root.join("corpus/fe-gh59446/GH59446.cpp"),
        dir.path().join("GH59446.cpp"),
    )
    .unwrap();
    let out = exec::run(
        &Cmd::new(CLANG16)
            .args([
                "-fno-crash-diagnostics",
                "-c",
                "GH59446.cpp",
                "-o",
                "/dev/null",
            ])
            .cwd(dir.path())
            .env("LLVM_SYMBOLIZER_PATH", SYMBOLIZER),
    )
    .unwrap();
    let local_text = out.stderr_text();
    assert!(!local_text.contains("Stack dump without symbol names"));
    let mut local = parse(&local_text, out.status.exit_info()).expect("the local run crashes");
    symbolizer.symbolize(&mut local);
    let (r, l) = (signature(&remote), signature(&local));
    assert_eq!(r.id, l.id, "remote {}\nlocal  {}", r.text, l.text);
    assert!(r.text.contains("getDestructorName"), "{}", r.text);
    assert!(!r.text.contains("GH59446.cpp") && !r.text.contains(" - "));
}

/// Tests run without the compiler's own llvm-symbolizer (icepick names frames from the ELF
/// files; the test above shows the signature is the same), unless the stage asks for it.
#[test]
fn test_runs_turn_the_compilers_symbolizer_off_unless_asked() {
    let argv = v(&[
        "sh",
        "-c",
        "printf %s \"${LLVM_DISABLE_SYMBOLIZATION-unset}\"",
    ]);
    let seen = |symbolize| {
        let job = Job {
            argv: &argv,
            cwd: Path::new("/"),
            timeout: Duration::from_secs(30),
            symbolize,
            tmpdir: None,
        };
        let out = Executor::local().run(&job, &|| false).unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    assert_eq!(seen(false), "1");
    let inherited = std::env::var("LLVM_DISABLE_SYMBOLIZATION").unwrap_or("unset".into());
    assert_eq!(seen(true), inherited);
}

#[test]
fn the_live_line_says_what_the_farm_is_doing() {
    let l = Live {
        kind: "icecream",
        in_flight: 4,
        remote: 120,
        local: 3,
        node_failures: 1,
    };
    assert_eq!(
        l.line(),
        "icecream: 4 in flight, 120 remote, 3 local, 1 node failure"
    );
}

/// A farm that answers every attempt with one fixed outcome, to check the counting.
struct Answers(Status);

impl Backend for Answers {
    fn attempt(
        &self,
        _job: &Job<'_>,
        _attempt: u32,
        _cancel: &(dyn Fn() -> bool + Sync),
    ) -> Result<Attempt, ExecError> {
        let out = Output {
            status: self.0,
            stdout: Vec::new(),
            stderr: Vec::new(),
            stdout_dropped: 0,
            stderr_dropped: 0,
            elapsed: Duration::ZERO,
        };
        Ok(Attempt::Ran(out, Place::Remote("10.0.0.7:10245".into())))
    }

    fn nodes(&self) -> usize {
        1
    }
}

#[test]
fn cancelled_farm_tests_count_on_no_node() {
    let argv = v(&["clang", "-c", "x.c"]);
    let job = Job {
        argv: &argv,
        cwd: Path::new("/"),
        timeout: Duration::from_secs(1),
        symbolize: false,
        tmpdir: None,
    };
    // A test the stage cancelled: the client's log may name a node that never got it.
    let exe = Executor::with_backend(
        Kind::Icecream,
        Some(Box::new(Answers(Status::Cancelled))),
        Vec::new(),
    );
    let out = exe.run(&job, &|| false).unwrap();
    assert_eq!(out.status, Status::Cancelled);
    let s = exe.summary();
    assert_eq!((s.cancelled, s.tests_remote), (1, 0), "{s:?}");
    assert!(s.per_node.is_empty(), "{s:?}");
    // One that finished on the node counts there.
    let exe = Executor::with_backend(
        Kind::Icecream,
        Some(Box::new(Answers(Status::Signaled(11)))),
        Vec::new(),
    );
    exe.run(&job, &|| false).unwrap();
    let s = exe.summary();
    assert_eq!((s.cancelled, s.tests_remote), (0, 1), "{s:?}");
    assert_eq!(s.per_node["10.0.0.7:10245"], 1, "{s:?}");
}
