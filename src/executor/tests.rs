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
