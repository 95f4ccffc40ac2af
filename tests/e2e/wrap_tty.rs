//! `icepick wrap` / `icepick-wrap` on a terminal: the compiler's stderr goes through a pipe
//! inside icepick, yet its diagnostics keep their colours (as without icepick), and the
//! objects stay byte-identical. The terminal is a real pty, made by util-linux `script`.

use std::path::Path;
use std::process::{Command, Output, Stdio};

use crate::util::*;

const SOURCE: &str = "int main(void) { int unused; return 0; }\n";

fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// Runs `argv` in `dir` with its stdin, stdout and stderr on a fresh pty; returns what the
/// terminal showed.
fn on_a_pty(dir: &Path, store: &Path, argv: &[&str]) -> String {
    let line: Vec<String> = argv.iter().map(|a| quote(a)).collect();
    let o = Command::new("script")
        .args(["-qec", &line.join(" "), "/dev/null"])
        .current_dir(dir)
        .env("TERM", "xterm")
        .env("ICEPICK_STORE", store)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn piped(dir: &Path, store: &Path, argv: &[&str]) -> Output {
    Command::new(argv[0])
        .args(&argv[1..])
        .current_dir(dir)
        .env("TERM", "xterm")
        .env("ICEPICK_STORE", store)
        .output()
        .unwrap()
}

fn read(dir: &Path, name: &str) -> Vec<u8> {
    std::fs::read(dir.join(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

#[test]
fn wrap_on_a_pty_keeps_colour_and_objects_identical() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let store = dir.join("store");
    std::fs::write(dir.join("x.c"), SOURCE).unwrap();
    let flags = ["-Wall", "-O1", "-g", "-c", "x.c", "-o"];

    // The compiler on its own, no terminal: the reference object.
    let bare = piped(
        dir,
        &store,
        &[&["clang-19"][..], &flags, &["bare.o"]].concat(),
    );
    assert_eq!(bare.status.code(), Some(0));

    for (name, launcher) in [
        ("wrap.o", &[BIN, "wrap"][..]),
        ("launcher.o", &[LAUNCHER][..]),
    ] {
        let argv = [launcher, &["clang-19"], &flags, &[name]].concat();
        let shown = on_a_pty(dir, &store, &argv);
        assert!(shown.contains("unused variable"), "{shown:?}");
        assert!(
            shown.contains("\x1b["),
            "no colour through {launcher:?}: {shown:?}"
        );
        assert_eq!(read(dir, name), read(dir, "bare.o"), "{launcher:?}");
    }

    // The user's own choice stands.
    let argv = [
        &[BIN, "wrap", "clang-19", "-fno-color-diagnostics"][..],
        &flags,
        &["nc.o"],
    ]
    .concat();
    let shown = on_a_pty(dir, &store, &argv);
    assert!(
        shown.contains("unused variable") && !shown.contains("\x1b["),
        "{shown:?}"
    );

    // gcc takes its own spelling (the cross gcc scripts/setup installs), objects equal too.
    let gcc = "riscv64-linux-gnu-gcc";
    let bare = piped(dir, &store, &[&[gcc][..], &flags, &["gcc-bare.o"]].concat());
    assert_eq!(bare.status.code(), Some(0));
    let argv = [&[LAUNCHER, gcc][..], &flags, &["gcc.o"]].concat();
    let shown = on_a_pty(dir, &store, &argv);
    assert!(
        shown.contains("unused variable") && shown.contains("\x1b["),
        "{shown:?}"
    );
    assert_eq!(read(dir, "gcc.o"), read(dir, "gcc-bare.o"));

    // No terminal: nothing is added (today's behaviour), the object is the same.
    for launcher in [&[BIN, "wrap"][..], &[LAUNCHER][..]] {
        let o = piped(
            dir,
            &store,
            &[launcher, &["clang-19"], &flags, &["p.o"]].concat(),
        );
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(0), "{err}");
        assert!(
            err.contains("unused variable") && !err.contains('\x1b'),
            "{err:?}"
        );
        assert_eq!(read(dir, "p.o"), read(dir, "bare.o"));
    }
}

#[test]
fn wrap_on_a_pty_still_records_a_coloured_crash() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let store = dir.join("store");
    std::fs::write(
        dir.join("boom.c"),
        "int f(int x) {\n#pragma clang __debug crash\n  return x;\n}\n",
    )
    .unwrap();
    for launcher in [&[BIN, "wrap"][..], &[LAUNCHER][..]] {
        let argv = [
            launcher,
            &[
                "clang-19",
                "-fno-crash-diagnostics",
                "-c",
                "boom.c",
                "-o",
                "boom.o",
            ],
        ]
        .concat();
        let line: Vec<String> = argv.iter().map(|a| quote(a)).collect();
        let o = Command::new("script")
            .args(["-qec", &line.join(" "), "/dev/null"])
            .current_dir(dir)
            .env("TERM", "xterm")
            .env("ICEPICK_STORE", &store)
            .env("ICEPICK_WRAP_CAPTURE", "0")
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let shown = String::from_utf8_lossy(&o.stdout);
        assert_ne!(o.status.code(), Some(0), "{shown}");
        // The compiler's own lines are coloured, and icepick still read them as a crash.
        assert!(shown.contains("\x1b["), "{shown:?}");
        assert!(
            shown.contains("icepick: crash recorded in bucket"),
            "{launcher:?}: {shown}"
        );
    }
}
