//! Processes, signals, output caps and temporary files: nothing
//! icepick starts outlives it, Ctrl-C/SIGTERM act at once in every stage, a crash at the end
//! of huge output is still a crash, and no temporary file is left behind.
//!
//! Hanging children are real `sleep`s with a unique argument (`60.<pid><n>`), found by
//! scanning /proc/*/cmdline.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::util::{expect_success, read_case, walk, BIN};

/// A unique `sleep` argument for this test process and `n`.
fn marker(secs: u32, n: u32) -> String {
    format!("{secs}.{}{n}", std::process::id())
}

fn is_zombie(pid: &str) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).map_or(true, |s| {
        s.rsplit(')')
            .next()
            .unwrap_or("")
            .trim_start()
            .starts_with('Z')
    })
}

/// Live processes with `arg` as one of their arguments.
fn with_arg(arg: &str) -> Vec<String> {
    let mut found = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let pid = e.file_name().to_string_lossy().into_owned();
        if !pid.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        let Ok(cmdline) = std::fs::read(e.path().join("cmdline")) else {
            continue;
        };
        if cmdline.split(|&b| b == 0).any(|a| a == arg.as_bytes()) && !is_zombie(&pid) {
            found.push(pid);
        }
    }
    found
}

#[track_caller]
fn wait_for_process(arg: &str, child: &mut Child) {
    let deadline = Instant::now() + Duration::from_secs(180);
    while with_arg(arg).is_empty() {
        if let Some(st) = child.try_wait().unwrap() {
            panic!("icepick ended ({st}) before starting `sleep {arg}`");
        }
        assert!(Instant::now() < deadline, "`sleep {arg}` never started");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Polls up to 5 s until no process has `arg` and `tmp` is empty.
#[track_caller]
fn assert_nothing_left(arg: &str, tmp: &Path) {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let left = with_arg(arg);
        let litter: Vec<_> = std::fs::read_dir(tmp)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        if left.is_empty() && litter.is_empty() {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "left behind: processes {left:?} (sleep {arg}), temp files {litter:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Starts `icepick ARGS` in `cwd` with TMPDIR set to `tmp`.
fn start(cwd: &Path, tmp: &Path, args: &[&str]) -> Child {
    Command::new(BIN)
        .args(args)
        .current_dir(cwd)
        .env("TMPDIR", tmp)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn write_script(path: &Path, body: &str) {
    crate::util::write_executable(path, &format!("#!/bin/sh\n{body}\n"));
}

/// Sends `sig`, waits; returns (exit code, seconds from signal to exit, stderr).
fn interrupt(mut child: Child, sig: i32) -> (Option<i32>, f64, String) {
    let t = Instant::now();
    // SAFETY: kill(2) on our own child.
    unsafe {
        libc::kill(child.id() as i32, sig);
    }
    let mut err = String::new();
    use std::io::Read;
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    let st = child.wait().unwrap();
    (st.code(), t.elapsed().as_secs_f64(), err)
}

/// Every file of a directory tree with its bytes.
fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    walk(dir)
        .into_iter()
        .filter(|p| !dir.join(p).is_dir())
        .map(|p| {
            let bytes = std::fs::read(dir.join(&p)).unwrap();
            (p, bytes)
        })
        .collect()
}

#[test]
fn kill_9_during_reduce_test_leaves_no_process() {
    let dir = tempfile::tempdir().unwrap();
    let tmp = dir.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let arg = marker(1000, 1);
    std::fs::write(dir.path().join("file.c"), "int main(void) { return 0; }\n").unwrap();
    // The script's own child hangs: PDEATHSIG of the script alone would not reach it.
    write_script(
        &dir.path().join("hang.sh"),
        &format!("ICEPICK_E2E_HANG=1 sleep {arg}; exit 0"),
    );
    let mut child = start(
        dir.path(),
        &tmp,
        &["reduce", "--test", "./hang.sh", "file.c"],
    );
    wait_for_process(&arg, &mut child);
    child.kill().unwrap(); // SIGKILL: no icepick code runs any more
    child.wait().unwrap();
    assert_nothing_left(&arg, &tmp);
    assert_eq!(
        std::fs::read_to_string(dir.path().join("file.c")).unwrap(),
        "int main(void) { return 0; }\n"
    );
}

/// A case whose compiler is a wrapper that hangs 60 s while `dir/slow` exists.
fn slow_case(dir: &Path, arg: &str) -> std::path::PathBuf {
    std::fs::write(
        dir.join("crash.c"),
        "int f(void) { return 1; }\n#pragma clang __debug crash\n",
    )
    .unwrap();
    let slow = dir.join("slow");
    write_script(
        &dir.join("clang-slow"),
        &format!(
            "if [ -e '{}' ]; then sleep {arg}; fi\nexec clang-19 \"$@\"",
            slow.display()
        ),
    );
    let case = dir.join("case");
    let o = Command::new(BIN)
        .args(["capture", "--out", case.to_str().unwrap(), "--"])
        .args(["./clang-slow", "-c", "crash.c"])
        .current_dir(dir)
        .output()
        .unwrap();
    expect_success(&o);
    std::fs::write(&slow, "").unwrap();
    case
}

#[test]
fn sigint_during_a_60s_first_test_exits_promptly() {
    let dir = tempfile::tempdir().unwrap();
    let tmp = dir.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();

    // reduce --test: the script's first (verification) run hangs.
    let arg = marker(60, 2);
    std::fs::write(dir.path().join("file.c"), "int main(void) { return 0; }\n").unwrap();
    write_script(&dir.path().join("hang.sh"), &format!("sleep {arg}; exit 0"));
    let mut child = start(
        dir.path(),
        &tmp,
        &["reduce", "--test", "./hang.sh", "file.c"],
    );
    wait_for_process(&arg, &mut child);
    let (code, secs, err) = interrupt(child, libc::SIGINT);
    assert_eq!(code, Some(130), "{err}");
    // Functional, not a speed check: it did not wait for the 60 s sleep.
    assert!(secs < 20.0, "took {secs} s");
    assert!(err.contains("interrupted by SIGINT"), "{err}");
    assert!(!err.contains("does not reproduce"), "{err}");
    assert_nothing_left(&arg, &tmp);
    assert_eq!(
        std::fs::read_to_string(dir.path().join("file.c")).unwrap(),
        "int main(void) { return 0; }\n"
    );

    // The case stages, on a case whose compiler hangs on its first run.
    let arg = marker(60, 3);
    let case = slow_case(dir.path(), &arg);
    let case_s = case.to_str().unwrap();
    let before = snapshot(&case);
    let runs: [(&[&str], i32, i32); 4] = [
        (&["reduce", case_s], libc::SIGINT, 130),
        (&["flags", case_s], libc::SIGINT, 130),
        (
            &["versions", "--compiler", "./clang-slow", case_s],
            libc::SIGTERM,
            143,
        ),
        (&["classify", case_s], libc::SIGINT, 130),
    ];
    for (args, sig, want) in runs {
        let mut child = start(dir.path(), &tmp, args);
        wait_for_process(&arg, &mut child);
        let (code, secs, err) = interrupt(child, sig);
        assert_eq!(code, Some(want), "{args:?}: {err}");
        assert!(secs < 20.0, "{args:?} took {secs} s");
        assert_nothing_left(&arg, &tmp);
        // The case is as it was: nothing recorded from the killed run.
        assert!(snapshot(&case) == before, "{args:?} changed the case");
    }
}

#[test]
fn crash_after_12mb_of_warnings_is_still_a_crash() {
    let dir = tempfile::tempdir().unwrap();
    // Each line gives a warning and a note, ~260 bytes of stderr: 50k lines are > 12 MB.
    let mut src = String::from("void f(int x) {\n");
    for i in 0..50_000 {
        src.push_str(&format!("  x == {i};\n"));
    }
    src.push_str("}\n#pragma clang __debug crash\n");
    std::fs::write(dir.path().join("warn.c"), src).unwrap();
    let o = Command::new("clang-19")
        .args(["-fno-crash-diagnostics", "-c", "warn.c", "-o", "/dev/null"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(o.stderr.len() > 12_000_000, "only {} bytes", o.stderr.len());
    let case = dir.path().join("case");
    let o = Command::new(BIN)
        .args(["capture", "--json", "--out", case.to_str().unwrap(), "--"])
        .args(["clang-19", "-fno-crash-diagnostics", "-c", "warn.c"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    let c = read_case(&case);
    assert_eq!(c["status"], "captured", "{c:#}");
    assert_eq!(
        c["crash"]["kind"], "illegal_instruction",
        "{:#}",
        c["crash"]
    );
    let sig = c["signature"]["text"].as_str().unwrap();
    assert!(sig.contains("HandlePragmaDirective"), "{sig}");
    // The kept stderr has head and tail around the marker, and is bounded.
    let kept = std::fs::read(case.join("original.stderr")).unwrap();
    assert!(kept.len() < 9 << 20, "{} bytes kept", kept.len());
    let text = String::from_utf8_lossy(&kept);
    assert!(text.starts_with("warn.c:2:5: warning"), "{}", &text[..80]);
    assert!(text.contains("bytes of output dropped here]"));
    assert!(text.contains("PLEASE submit a bug report"));
}

#[test]
fn no_temp_litter_after_capture() {
    let dir = tempfile::tempdir().unwrap();
    let tmp = dir.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    std::fs::write(
        dir.path().join("crash.c"),
        "int f(void) { return 1; }\n#pragma clang __debug crash\n",
    )
    .unwrap();
    // clang writes its reproducer pair and LLVM's symbolizer its input/output files into
    // TMPDIR: icepick's children get a private one, removed when icepick exits.
    let case = dir.path().join("case");
    let o = Command::new(BIN)
        .args(["capture", "--out", case.to_str().unwrap(), "--"])
        .args(["clang-19", "-c", "crash.c"])
        .current_dir(dir.path())
        .env("TMPDIR", &tmp)
        .output()
        .unwrap();
    expect_success(&o);
    assert_nothing_left("no-such-process-argument", &tmp);
    let o = Command::new(BIN)
        .args(["flags", case.to_str().unwrap()])
        .env("TMPDIR", &tmp)
        .output()
        .unwrap();
    expect_success(&o);
    assert_nothing_left("no-such-process-argument", &tmp);
}

#[test]
fn ctrl_c_during_capture_leaves_no_half_case() {
    let dir = tempfile::tempdir().unwrap();
    let tmp = dir.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let arg = marker(60, 4);
    std::fs::write(
        dir.path().join("crash.c"),
        "int f(void) { return 1; }\n#pragma clang __debug crash\n",
    )
    .unwrap();
    // The compiler hangs when asked to preprocess: the case is being assembled by then.
    write_script(
        &dir.path().join("clang-slow"),
        &format!(
            "case \" $* \" in *' -E '*) sleep {arg};; esac\nexec clang-19 -fno-crash-diagnostics \"$@\""
        ),
    );
    let out = dir.path().join("cases").join("case");
    let mut child = start(
        dir.path(),
        &tmp,
        &[
            "capture",
            "--out",
            out.to_str().unwrap(),
            "--",
            "./clang-slow",
            "-c",
            "crash.c",
        ],
    );
    wait_for_process(&arg, &mut child);
    let (code, secs, err) = interrupt(child, libc::SIGINT);
    assert_eq!(code, Some(130), "{err}");
    assert!(secs < 20.0, "took {secs} s");
    assert_nothing_left(&arg, &tmp);
    let left: Vec<_> = std::fs::read_dir(dir.path().join("cases"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

/// The same after 12 MB of GCC-style warnings from a compiler that exits 70 (no signal) with
/// LLVM's `fatal error: error in backend`: the message at the end is found, not lost in the
/// dropped middle of the output, and the run is a crash, not "no crash".
#[test]
fn backend_error_after_12mb_of_gcc_style_warnings_is_a_crash() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("f.c"), "int f(void) { return 0; }\n").unwrap();
    let cc = dir.path().join("gcc-like");
    crate::util::write_executable(&cc, "#!/bin/sh\n\
         case \"$*\" in *--version*) echo 'gcc-like (GCC) 13.2.0'; exit 0;; *' -E '*|*' -E') exec clang-19 \"$@\";; esac\n\
         i=0; yes 'f.c:2:5: warning: comparison result unused [-Wunused-value]\n    2 |   x == 1;\n      |   ~~^~~~' | head -c 13000000 >&2\n\
         echo 'fatal error: error in backend: Cannot select: 0x55d0 t5: i32 = foo t2' >&2\n\
         exit 70\n",);
    let case = dir.path().join("case");
    let o = Command::new(BIN)
        .args([
            "capture",
            "--reruns",
            "1",
            "--out",
            case.to_str().unwrap(),
            "--",
        ])
        .arg(&cc)
        .args(["-c", "f.c"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_ne!(o.status.code(), Some(3), "called no crash: {err}");
    let c = read_case(&case);
    assert!(
        c["crash"]["message"]
            .as_str()
            .unwrap_or("")
            .contains("Cannot select"),
        "{:#}",
        c["crash"]
    );
}

#[test]
fn a_second_writer_of_a_case_exits_2_and_names_the_first() {
    let dir = tempfile::tempdir().unwrap();
    let tmp = dir.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let arg = marker(60, 7);
    let case = slow_case(dir.path(), &arg);
    let case_s = case.to_str().unwrap();
    let before = snapshot(&case);
    // The first writer hangs in its first compiler run, holding the case.
    let mut first = start(dir.path(), &tmp, &["reduce", case_s]);
    wait_for_process(&arg, &mut first);
    for args in [
        &["reduce", case_s][..],
        &["flags", case_s],
        &["classify", case_s],
        &["versions", "--compiler", "clang-19", case_s],
        &["ir", case_s],
    ] {
        let o = Command::new(BIN)
            .args(args)
            .current_dir(dir.path())
            .env("TMPDIR", &tmp)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains("is being written by process"),
            "{args:?}: {err}"
        );
        assert!(err.contains("reduce"), "names the holder's command: {err}");
    }
    // Readers do not wait for it.
    let o = Command::new(BIN)
        .args(["report", case_s])
        .current_dir(dir.path())
        .output()
        .unwrap();
    expect_success(&o);
    let (code, _, err) = interrupt(first, libc::SIGINT);
    assert_eq!(code, Some(130), "{err}");
    assert!(
        snapshot(&case) == before,
        "the refused writers changed the case"
    );
    // Once the holder is gone, the next writer takes the case.
    std::fs::remove_file(dir.path().join("slow")).unwrap();
    let o = Command::new(BIN)
        .args(["flags", case_s])
        .current_dir(dir.path())
        .env("TMPDIR", &tmp)
        .output()
        .unwrap();
    expect_success(&o);
    assert!(read_case(&case)["flags"].is_object());
}

/// A case of 30 functions the crash does not need and the crash, captured with a wrapper
/// compiler `name` that, once armed (after capture), runs `action` (shell) from its
/// `after`-th run on before it runs clang-19. Returns the case and the source.
fn case_with_a_turning_compiler(
    d: &Path,
    name: &str,
    after: u32,
    action: &str,
) -> (PathBuf, String) {
    let mut src: String = (0..30)
        .map(|i| format!("int f{i}(int x) {{ return x * {i} + {i}; }}\n"))
        .collect();
    src.push_str("#pragma clang __debug crash\n");
    std::fs::write(d.join("crash.c"), &src).unwrap();
    write_script(
        &d.join(name),
        &format!(
            "n=$(cat '{count}' 2>/dev/null || echo 0); echo $((n + 1)) > '{count}'\n\
             if [ \"$n\" -ge {after} ] && [ -e '{armed}' ]; then {action}; fi\n\
             exec clang-19 \"$@\"",
            count = d.join("count").display(),
            armed = d.join("armed").display(),
        ),
    );
    let case = d.join("case");
    let o = Command::new(BIN)
        .args(["capture", "--out", case.to_str().unwrap(), "--"])
        .args([&format!("./{name}"), "-c", "crash.c"])
        .current_dir(d)
        .output()
        .unwrap();
    expect_success(&o);
    // Counted from the reduction's first run on.
    std::fs::write(d.join("armed"), "").unwrap();
    std::fs::remove_file(d.join("count")).unwrap();
    (case, src)
}

#[test]
fn a_disk_that_fills_during_reduce_is_an_error_and_the_best_so_far_is_kept() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // The compiler fills the scratch file system from its 12th run on (a build beside the
    // reduction, say): later candidates cannot be written.
    let mnt = d.join("mnt");
    std::fs::create_dir(&mnt).unwrap();
    let fill = format!(
        "dd if=/dev/zero of='{}/filler' bs=64k count=1000 2>/dev/null",
        mnt.display()
    );
    let (case, src) = case_with_a_turning_compiler(d, "clang-filling", 12, &fill);
    // icepick's scratch (TMPDIR) on a 4 MiB tmpfs of a mount namespace of its own.
    let script = format!(
        "mount -t tmpfs -o size=4m tmpfs '{mnt}' && mkdir '{mnt}/tmp' && \
         TMPDIR='{mnt}/tmp' exec '{BIN}' reduce --jobs 2 '{case}'",
        mnt = mnt.display(),
        case = case.display(),
    );
    let o = Command::new("unshare")
        .args(["-m", "sh", "-c", &script])
        .current_dir(d)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("No space left on device"), "{err}");
    assert!(err.contains("best so far"), "{err}");
    let red = &read_case(&case)["reduction"];
    assert_eq!(red["status"], "stopped", "{red}");
    assert!(
        red["fault"]
            .as_str()
            .unwrap()
            .contains("No space left on device"),
        "{red}"
    );
    assert_eq!(red["verified"], false, "{red}");
    // The best so far is in the case, and it still has the crash.
    let best = std::fs::read(case.join(red["output"].as_str().unwrap())).unwrap();
    assert!(best.len() <= src.len());
    assert!(String::from_utf8_lossy(&best).contains("#pragma clang __debug crash"));
}

#[test]
fn a_compiler_that_cannot_be_started_any_more_stops_reduce_with_exit_1() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // A toolchain that goes away mid-reduction (upgraded, unmounted): from its 10th run on,
    // the wrapper removes itself, so the next start fails with ENOENT.
    let (case, _) = case_with_a_turning_compiler(d, "clang-going", 10, "rm -f \"$0\"");
    let o = Command::new(BIN)
        .args(["reduce", "--jobs", "2", case.to_str().unwrap()])
        .current_dir(d)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!d.join("clang-going").exists(), "the wrapper went away");
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("cannot run"), "names the failed start: {err}");
    assert!(!err.contains("does not reproduce"), "{err}");
    let red = &read_case(&case)["reduction"];
    assert_eq!(red["status"], "stopped", "{red}");
    assert!(
        red["fault"].as_str().unwrap().contains("cannot run"),
        "{red}"
    );
}
