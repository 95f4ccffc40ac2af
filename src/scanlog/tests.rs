//! The samples are real logs: a CMake project (two ordinary sources and one that crashes
//! clang++-16 in destructor-name lookup) built with `ninja -k 0`, `make -k VERBOSE=1`, and
//! plain `make -k`.

use super::*;

const NINJA: &str = include_str!("samples/ninja-k0.log");
const MAKE_VERBOSE: &str = include_str!("samples/make-verbose.log");
const MAKE_QUIET: &str = include_str!("samples/make-quiet.log");

const CRASH_CMD: &str = "/usr/bin/clang++-16 -MD -MT CMakeFiles/demo.dir/src/crash.cpp.o -MF CMakeFiles/demo.dir/src/crash.cpp.o.d -o CMakeFiles/demo.dir/src/crash.cpp.o -c /tmp/proj/src/crash.cpp";

fn words(s: &str) -> Vec<String> {
    s.split_whitespace().map(String::from).collect()
}

#[test]
fn ninja_failed_command_and_its_crash() {
    let found = crashed_compiles(NINJA);
    assert_eq!(found.len(), 1, "{found:#?}");
    let f = &found[0];
    assert_eq!(f.command, words(CRASH_CMD));
    assert_eq!(f.cwd.as_deref(), Some("bn"));
    assert_eq!(f.line, 5);
    assert!(f.output.contains("PLEASE submit a bug report"));
    assert!(
        !f.output.contains("ok2.cpp"),
        "the segment ends at the next tool line"
    );
}

#[test]
fn make_verbose_echoed_command_in_the_entered_directory() {
    let found = crashed_compiles(MAKE_VERBOSE);
    assert_eq!(found.len(), 1, "{found:#?}");
    assert_eq!(found[0].command, words(CRASH_CMD));
    assert_eq!(found[0].cwd.as_deref(), Some("/tmp/proj/bm"));
}

#[test]
fn quiet_make_takes_the_command_from_program_arguments() {
    let found = crashed_compiles(MAKE_QUIET);
    assert_eq!(found.len(), 1, "{found:#?}");
    assert_eq!(found[0].command, words(CRASH_CMD));
    assert_eq!(
        found[0].cwd, None,
        "plain make in the build dir says no directory"
    );
}

#[test]
fn no_crash_no_finding() {
    let ok = "[1/2] Building CXX object a.o\n[2/2] Linking CXX static library libdemo.a\n";
    assert!(crashed_compiles(ok).is_empty());
    let err = "FAILED: a.o\n/usr/bin/clang++-16 -c a.cpp -o a.o\na.cpp:1:1: error: unknown type name 'x'\n1 error generated.\nninja: build stopped: subcommand failed.\n";
    assert!(crashed_compiles(err).is_empty());
}

#[test]
fn interleaved_parallel_output_goes_to_the_command_the_crash_names() {
    // `make -j2`: the crashing compile is echoed, then another compile, then the crash text.
    let start = MAKE_VERBOSE
        .find("/usr/bin/clang++-16    -MD -MT CMakeFiles/demo.dir/src/crash.cpp.o")
        .unwrap();
    let crash_end = MAKE_VERBOSE.find("make[2]: ***").unwrap();
    let block = &MAKE_VERBOSE[start..crash_end];
    let (crash_cmd, crash_text) = block.split_once('\n').unwrap();
    let other = "/usr/bin/clang++-16    -MD -MT CMakeFiles/demo.dir/src/ok2.cpp.o -MF CMakeFiles/demo.dir/src/ok2.cpp.o.d -o CMakeFiles/demo.dir/src/ok2.cpp.o -c /tmp/proj/src/ok2.cpp";
    let log = format!("make[2]: Entering directory '/b'\n{crash_cmd}\n{other}\n{crash_text}");
    let found = crashed_compiles(&log);
    assert_eq!(found.len(), 1, "{found:#?}");
    assert_eq!(found[0].command, words(CRASH_CMD));
    assert_eq!(found[0].line, 2);
    assert_eq!(found[0].cwd.as_deref(), Some("/b"));
}

#[test]
fn commands_behind_launchers_and_cd() {
    let (argv, cwd) = parse_command(
        "cd /w/build && /opt/icepick wrap /usr/bin/clang++-16 -DX='a b' -c ../x.cpp -o x.o",
    )
    .unwrap();
    assert_eq!(
        argv,
        [
            "/usr/bin/clang++-16",
            "-DX=a b",
            "-c",
            "../x.cpp",
            "-o",
            "x.o"
        ]
    );
    assert_eq!(cwd.as_deref(), Some("/w/build"));
    let (argv, _) = parse_command("ccache clang-19 -c a.c").unwrap();
    assert_eq!(argv[0], "clang-19");
    let (argv, _) = parse_command(strip_status("[3/8] /usr/bin/gcc-12 -c a.c")).unwrap();
    assert_eq!(argv[0], "/usr/bin/gcc-12");
    assert!(parse_command("x86_64-linux-gnu-g++-12 -c a.cc").is_some());
    for not in [
        "clang: error: clang frontend command failed with exit code 139",
        "0.\tProgram arguments: clang -c a.c",
        "/usr/bin/cmake -E cmake_progress_start",
        "cd /x && /usr/bin/cmake -E cmake_depends",
        "ninja: build stopped: subcommand failed.",
    ] {
        assert!(parse_command(not).is_none(), "{not}");
    }
}

#[test]
fn crashes_that_icepick_wrap_recorded_are_marked() {
    assert_eq!(crashed_compiles(NINJA)[0].recorded_by_wrap, None);
    let end = NINJA.find("[3/4]").unwrap();
    let log = format!(
        "{}icepick: crash captured as bucket 49724a2ef4a4 (clang crash: x); see: icepick show 49724a2ef4a4\n{}",
        &NINJA[..end],
        &NINJA[end..]
    );
    let found = crashed_compiles(&log);
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].recorded_by_wrap.as_deref(), Some("49724a2ef4a4"));
}
