//! Process-runner behaviour on real shells: signals, hangs with grandchildren, floods of output.

use super::*;

fn sh(script: &str) -> Cmd {
    Cmd::new("/bin/sh").args(["-c", script])
}

fn alive(pid: i32) -> bool {
    // SAFETY: signal 0 only checks for existence.
    unsafe { libc::kill(pid, 0) == 0 }
}

#[test]
fn exit_code_and_output_are_captured() {
    let out = run(&sh("echo out; echo err >&2; exit 3")).unwrap();
    assert_eq!(out.status, Status::Exited(3));
    assert_eq!(out.stdout, b"out\n");
    assert_eq!(out.stderr, b"err\n");
}

#[test]
fn death_by_signal_is_a_status() {
    let out = run(&sh("kill -SEGV $$")).unwrap();
    assert_eq!(out.status, Status::Signaled(libc::SIGSEGV));
}

#[test]
fn missing_program_is_an_error_naming_it() {
    let err = run(&Cmd::new("/nonexistent/clang-99")).unwrap_err();
    assert!(err.to_string().contains("/nonexistent/clang-99"), "{err}");
}

#[test]
fn timeout_kills_the_whole_group_including_grandchildren() {
    let dir = tempfile::tempdir().unwrap();
    let pidfile = dir.path().join("pid");
    // The grandchild ignores SIGTERM and writes its pid, then sleeps forever.
    let script = format!(
        "sh -c 'trap \"\" TERM; echo $$ > {}; while :; do sleep 1; done' & wait",
        pidfile.display()
    );
    let out = run(&sh(&script).timeout(Duration::from_millis(500))).unwrap();
    assert_eq!(out.status, Status::TimedOut);
    let pid: i32 = std::fs::read_to_string(&pidfile)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    // Reaping by init may take a moment after SIGKILL; poll briefly rather than sleep blindly.
    let mut gone = false;
    for _ in 0..100 {
        if !alive(pid) || is_zombie(pid) {
            gone = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(gone, "grandchild {pid} survived the timeout");
}

fn is_zombie(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|s| {
            s.rsplit(')')
                .next()
                .unwrap_or("")
                .trim_start()
                .starts_with('Z')
        })
        .unwrap_or(true)
}

#[test]
fn stragglers_are_killed_when_the_leader_exits() {
    let dir = tempfile::tempdir().unwrap();
    let pidfile = dir.path().join("pid");
    let script = format!(
        "sh -c 'echo $$ > {}; exec sleep 1000' >/dev/null 2>&1 & sleep 0.2; exit 0",
        pidfile.display()
    );
    let out = run(&sh(&script)).unwrap();
    assert_eq!(out.status, Status::Exited(0));
    let pid: i32 = std::fs::read_to_string(&pidfile)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let mut gone = false;
    for _ in 0..100 {
        if !alive(pid) || is_zombie(pid) {
            gone = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(gone, "background process {pid} outlived its group leader");
}

#[test]
fn huge_output_is_drained_and_capped() {
    // 10 MB on stderr and stdout at once: a runner that reads one pipe after the other deadlocks.
    let cmd =
        sh("head -c 10000000 /dev/zero >&2 & head -c 10000000 /dev/zero; wait").output_cap(1 << 20);
    let out = run(&cmd).unwrap();
    assert_eq!(out.status, Status::Exited(0));
    let m = marker(10_000_000 - (1 << 20));
    assert_eq!(out.stderr_dropped, 10_000_000 - (1 << 20));
    // Zeros have no line to align to: exactly half the cap on each side of the marker.
    assert_eq!(out.stderr.len(), (1 << 20) + 1 + m.len());
    assert_eq!(out.stdout_dropped, out.stderr_dropped);
}

#[test]
fn output_cap_keeps_head_and_tail_with_a_marker_between() {
    // A crash report after 3 MB of warnings: the cap keeps the first and the last lines.
    let script =
        "echo FIRST-LINE >&2; i=0; yes 'warning: noise noise noise' | head -c 3000000 >&2; \
                  echo 'PLEASE submit a bug report' >&2; echo 'LAST-LINE' >&2";
    let out = run(&sh(script).output_cap(64 << 10)).unwrap();
    let text = String::from_utf8_lossy(&out.stderr);
    assert!(text.starts_with("FIRST-LINE\n"), "{}", &text[..40]);
    assert!(text.ends_with("PLEASE submit a bug report\nLAST-LINE\n"));
    assert!(out.stderr_dropped > 2_900_000);
    // The marker is a line of its own, and the tail starts at a line start.
    let m = marker(out.stderr_dropped);
    let at = text.find(&m).expect("marker line");
    assert_eq!(&text[at - 1..at], "\n");
    assert!(text[at + m.len()..].starts_with("warning: noise"));
    assert!(out.stderr.len() <= (64 << 10) + m.len() + 1);
}

#[test]
fn output_under_the_cap_is_kept_whole() {
    let mut h = capped::HeadTail::new(10);
    h.push(b"abcdef");
    h.push(b"ghij");
    assert_eq!(h.finish(), (b"abcdefghij".to_vec(), 0));
    let mut h = capped::HeadTail::new(10);
    for c in b"abcdefghijklmnopqrstuvwxyz" {
        h.push(&[*c]);
    }
    let (kept, dropped) = h.finish();
    assert_eq!(dropped, 16);
    assert_eq!(
        kept,
        [&b"abcde\n"[..], marker(16).as_bytes(), b"vwxyz"].concat()
    );
}

#[test]
fn one_line_joins_lines_and_cuts_at_a_char_boundary() {
    assert_eq!(one_line("  a\n\n  b\tc  ", 100), "a b c");
    assert_eq!(one_line("error: x\x1b[0m", 100), "error: x[0m");
    let long = "é".repeat(500);
    let cut = one_line(&long, ONE_LINE_MAX);
    assert!(cut.len() <= ONE_LINE_MAX, "{}", cut.len());
    assert!(cut.ends_with('…'));
    assert_eq!(one_line("abc", 3), "abc");
    assert_eq!(one_line("abcd", 3), "…");
}

#[test]
fn children_get_the_private_tmpdir() {
    let out = run(&sh("echo \"$TMPDIR|$TMP|$TEMP\"; touch \"$TMPDIR/x\"")).unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let tmp = text.trim().split('|').next().unwrap().to_string();
    assert_eq!(text.trim(), format!("{tmp}|{tmp}|{tmp}"));
    assert_eq!(Path::new(&tmp), scratch_dir().join("tmp"));
    assert!(Path::new(&tmp).join("x").exists());
    assert!(scratch_dir()
        .file_name()
        .unwrap()
        .to_string_lossy()
        .starts_with(&format!("{SCRATCH_PREFIX}{}-", std::process::id())));
    // The caller's own TMPDIR wins.
    let out = run(&sh("echo $TMPDIR").env("TMPDIR", "/elsewhere")).unwrap();
    assert_eq!(out.stdout, b"/elsewhere\n");
}

#[test]
fn stale_scratch_names_parse_their_owner() {
    assert_eq!(session::stale_owner(b"icepick-123-abc"), Some(123));
    assert_eq!(session::stale_owner(b"icepick-test-abc"), None);
    assert_eq!(session::stale_owner(b"icepick-123-"), None);
    assert_eq!(session::stale_owner(b"other-123-abc"), None);
}

/// Marker for the guardian test's victim process, unique per test run.
fn guardian_marker() -> String {
    format!("1000.{}7", std::process::id())
}

fn processes_with_arg(arg: &str) -> Vec<i32> {
    let mut found = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let Ok(cmdline) = std::fs::read(e.path().join("cmdline")) else {
            continue;
        };
        if cmdline.split(|&b| b == 0).any(|a| a == arg.as_bytes()) && !is_zombie(pid) {
            found.push(pid);
        }
    }
    found
}

/// The victim half of `guardian_kills_the_groups_when_icepick_is_killed`: does nothing unless
/// run by it (as a separate process of this test binary, with the variable set).
#[test]
fn guardian_victim() {
    let Ok(marker) = std::env::var("ICEPICK_GUARDIAN_VICTIM") else {
        return;
    };
    // A script whose own child does the sleeping: PDEATHSIG alone would not reach it.
    let _ = run(&sh(&format!("sleep {marker}; true")).timeout(Duration::from_secs(900)));
}

#[test]
fn guardian_kills_the_groups_when_icepick_is_killed() {
    let marker = guardian_marker();
    let tmp = tempfile::tempdir().unwrap();
    let mut victim = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "exec::tests::guardian_victim",
            "--test-threads=1",
        ])
        .env("ICEPICK_GUARDIAN_VICTIM", &marker)
        .env("TMPDIR", tmp.path())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while processes_with_arg(&marker).is_empty() {
        assert!(
            Instant::now() < deadline,
            "the victim's sleep never started"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    // Its scratch directory exists while it runs.
    assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 1);
    victim.kill().unwrap(); // SIGKILL: no code of the victim runs any more
    victim.wait().unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let left = processes_with_arg(&marker);
        let litter = std::fs::read_dir(tmp.path()).unwrap().count();
        if left.is_empty() && litter == 0 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "after kill -9: processes {left:?} and {litter} scratch entries left"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn stale_scratch_of_a_dead_process_is_swept() {
    let base = tempfile::tempdir().unwrap();
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let dead = child.id();
    child.wait().unwrap();
    let stale = base.path().join(format!("icepick-{dead}-abc"));
    let live = base
        .path()
        .join(format!("icepick-{}-abc", std::process::id()));
    let other = base.path().join("icepick-notes");
    for d in [&stale, &live, &other] {
        std::fs::create_dir_all(d.join("tmp")).unwrap();
    }
    // An old dead one with an unheld lock file goes too.
    let unlocked = base.path().join(format!("icepick-{dead}-unlocked"));
    std::fs::create_dir_all(&unlocked).unwrap();
    drop(session::hold_lock(&unlocked).unwrap());
    // Made by an icepick of another PID namespace: its pid means nothing here, its lock does.
    let foreign = base.path().join(format!("icepick-{dead}-foreign"));
    std::fs::create_dir_all(&foreign).unwrap();
    let held = session::hold_lock(&foreign).unwrap();
    // The no-lock-file grace (a minute) must not save `stale`: age it.
    for d in [&stale, &unlocked] {
        let old = std::time::SystemTime::now() - Duration::from_secs(3600);
        std::fs::File::open(d).unwrap().set_modified(old).unwrap();
    }
    session::sweep_stale(base.path());
    assert!(!stale.exists() && !unlocked.exists());
    assert!(live.exists() && other.exists());
    assert!(foreign.exists(), "a directory whose lock is held was swept");
    drop(held);
}

#[test]
fn scratch_of_an_icepick_in_another_pid_namespace_is_not_swept() {
    // Defect: a farm test ran icepick under `unshare -p` with the suite's TMPDIR; there every
    // other icepick's pid looked dead and their live scratch directories were removed
    // ("reduction failed: … icepick-26189-…: No such file or directory").
    let base = tempfile::tempdir().unwrap();
    let foreign = base.path().join("icepick-999999-abc");
    std::fs::create_dir_all(foreign.join("tmp")).unwrap();
    let held = session::hold_lock(&foreign).unwrap();
    session::sweep_stale(base.path());
    assert!(foreign.exists());
    drop(held);
    let old = std::time::SystemTime::now() - Duration::from_secs(3600);
    std::fs::File::open(&foreign)
        .unwrap()
        .set_modified(old)
        .unwrap();
    session::sweep_stale(base.path());
    assert!(
        !foreign.exists(),
        "once its lock is free the directory is stale"
    );
}

#[test]
fn cancellation_kills_the_process() {
    let start = Instant::now();
    let out = run_cancellable(&sh("sleep 100"), &|| {
        start.elapsed() > Duration::from_millis(100)
    })
    .unwrap();
    assert_eq!(out.status, Status::Cancelled);
}

#[test]
fn run_all_keeps_input_order() {
    let cmds: Vec<Cmd> = (0..6).map(|i| sh(&format!("exit {i}"))).collect();
    let outs = run_all(&cmds, 3);
    let codes: Vec<Status> = outs.into_iter().map(|o| o.unwrap().status).collect();
    assert_eq!(codes, (0..6).map(Status::Exited).collect::<Vec<_>>());
}

#[test]
fn which_finds_programs_on_path_and_relative_paths() {
    assert!(which("sh", Path::new("/")).is_some());
    assert!(which("definitely-not-a-program-xyz", Path::new("/")).is_none());
    assert_eq!(
        which("bin/sh", Path::new("/")),
        Some(PathBuf::from("/bin/sh"))
    );
}

#[test]
fn a_runnable_file_written_while_other_threads_spawn_runs_every_time() {
    use std::sync::atomic::{AtomicBool, Ordering};
    let dir = tempfile::tempdir().unwrap();
    let stop = AtomicBool::new(false);
    let failed = std::thread::scope(|s| {
        // Other threads spawning all the time, as a reduction's workers do.
        for _ in 0..3 {
            s.spawn(|| {
                while !stop.load(Ordering::Relaxed) {
                    let _ = run(&Cmd::new("true"));
                }
            });
        }
        let failed = (0..500).find_map(|k| {
            let script = dir.path().join(format!("t{k}.sh"));
            write_runnable(&script, b"#!/bin/sh\nexit 0\n", 0o755).unwrap();
            match run(&Cmd::new(&script)) {
                Ok(out) if out.success() => None,
                Ok(out) => Some(format!("run {k}: {:?}", out.status)),
                Err(e) => Some(format!("run {k}: {e}")),
            }
        });
        stop.store(true, Ordering::Relaxed);
        failed
    });
    assert_eq!(failed, None);
}
