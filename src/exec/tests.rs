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
    assert_eq!(out.stderr.len(), 1 << 20);
    assert_eq!(out.stderr_dropped, 10_000_000 - (1 << 20));
    assert_eq!(out.stdout.len() as u64 + out.stdout_dropped, 10_000_000);
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
