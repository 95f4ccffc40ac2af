//! The loopback farms of tests/e2e/farm.rs: distcc or icecream daemons inside a network and
//! PID namespace of their own (`unshare -n -p -f --kill-child`), so no test traffic leaves
//! the machine and every daemon dies with the test, kill -9 included. Needs root (the
//! namespaces; icecream's daemons chroot into the compiler tarball).

use std::path::Path;
use std::process::{Command, Output};

use crate::util::*;

/// A directory the daemons (distccd as `nobody`, iceccd as `icecc`) can write their logs to:
/// under /tmp, not $TMPDIR (scripts/test's TMPDIR is a private 0700 directory they cannot
/// reach into).
pub fn log_dir() -> tempfile::TempDir {
    let d = tempfile::Builder::new()
        .prefix("icepick-farm-")
        .tempdir_in("/tmp")
        .unwrap();
    Command::new("chmod")
        .arg("777")
        .arg(d.path())
        .status()
        .unwrap();
    d
}

/// Runs `setup` then `script` (sh) in `dir` in fresh network and PID namespaces with
/// loopback up; `$ICEPICK` is the binary, `$LOGS` the log directory.
fn in_namespace(dir: &Path, logs: &Path, setup: &str, script: &str) -> Output {
    let all = format!("set -e\nip link set lo up\n{setup}\nset +e\n{script}\n");
    Command::new("unshare")
        .args(["-n", "-p", "-f", "--kill-child", "--", "sh", "-c", &all])
        .env("ICEPICK", BIN)
        .env("LOGS", logs)
        .current_dir(dir)
        .output()
        .unwrap()
}

/// Runs `script` with two distccd listening on 127.0.0.1:`port` and `port+1` (logs
/// `$LOGS/distccdN.log`, N = 1, 2; pids `$D1`, `$D2`) and `DISTCC_HOSTS` naming them.
/// The setup waits (up to 20 s) for both logs to say `listening on`: a daemon writes its
/// PATH line first, so a log that is merely non-empty does not mean it listens yet.
pub fn in_distcc_farm(dir: &Path, logs: &Path, port: u16, script: &str) -> Output {
    let setup = format!(
        "for n in 1 2; do\n\
           TMPDIR={logs} distccd --daemon --no-detach --allow 127.0.0.1 --listen 127.0.0.1 \
             --port $(( {port} + n - 1 )) --log-file {logs}/distccd$n.log --log-level info \
             --user nobody </dev/null >/dev/null 2>&1 &\n\
           eval D$n=$!\n\
         done\n\
         for i in $(seq 200); do\n\
           grep -qs 'listening on' {logs}/distccd1.log && grep -qs 'listening on' {logs}/distccd2.log \
             && break; sleep 0.1\n\
         done\n\
         grep -q 'listening on' {logs}/distccd1.log && grep -q 'listening on' {logs}/distccd2.log \
           || {{ echo 'distccd did not start'; cat {logs}/*.log; exit 1; }}\n\
         export DISTCC_HOSTS='127.0.0.1:{port}/2 127.0.0.1:{p2}/2'",
        logs = logs.display(),
        p2 = port + 1,
    );
    in_namespace(dir, logs, &setup, script)
}

/// Compile jobs a distccd log says it finished.
pub fn distcc_jobs_in(log: &Path) -> usize {
    count_in(log, "job complete")
}

/// Runs `script` on an icecream farm: a scheduler on 127.0.0.1:8765, this machine's daemon
/// (`local`: `--no-remote -m 0`, so that the scheduler gives every job to a node) and two
/// nodes `node1`, `node2` on ports 10246 and 10247 with 2 slots each (logs
/// `$LOGS/{scheduler,local,node1,node2}.log`; pids `$S`, `$L`, `$N1`, `$N2`). The client is
/// pointed at the local daemon (`ICECC_TEST_SOCKET`) and told that 127.0.0.1 is not itself
/// (`ICECC_TEST_REMOTEBUILD=1`: every node of a loopback farm is 127.0.0.1, which icecc
/// otherwise takes for this machine and compiles locally).
pub fn in_icecream_farm(dir: &Path, logs: &Path, script: &str) -> Output {
    let setup = format!(
        "icecc-scheduler -n icepicktest -p 8765 -l {logs}/scheduler.log -vvv </dev/null >/dev/null 2>&1 &\n\
         S=$!\n\
         for n in local node1 node2; do\n\
           mkdir -p {logs}/env-$n; chown icecc:icecc {logs}/env-$n\n\
           case $n in\n\
             local) extra='--no-remote -m 0' ;;\n\
             node1) extra='-p 10246 -m 2' ;;\n\
             node2) extra='-p 10247 -m 2' ;;\n\
           esac\n\
           ICECC_TEST_SOCKET={logs}/socket-$n ICECC_TESTS=1 iceccd -n icepicktest -s 127.0.0.1:8765 \
             -b {logs}/env-$n -l {logs}/$n.log -vvv -N $n $extra </dev/null >/dev/null 2>&1 &\n\
           case $n in local) L=$! ;; node1) N1=$! ;; node2) N2=$! ;; esac\n\
         done\n\
         for i in $(seq 300); do\n\
           [ \"$(grep -c 'login ' {logs}/scheduler.log 2>/dev/null)\" -ge 3 ] && break; sleep 0.1\n\
         done\n\
         [ \"$(grep -c 'login ' {logs}/scheduler.log)\" -ge 3 ] \
           || {{ echo 'the icecream daemons did not log in'; tail -n 20 {logs}/*.log; exit 1; }}\n\
         export ICECC_TEST_SOCKET={logs}/socket-local ICECC_TEST_REMOTEBUILD=1",
        logs = logs.display(),
    );
    in_namespace(dir, logs, &setup, script)
}

/// Compiles an iceccd log says it ran for a client (`remote compile for file`).
pub fn icecc_jobs_in(log: &Path) -> usize {
    count_in(log, "remote compile for file")
}

fn count_in(log: &Path, what: &str) -> usize {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .filter(|l| l.contains(what))
        .count()
}

/// A fresh capture of the corpus case fe-gh59446 (clang-16, a frontend crash).
pub fn fe_case() -> (tempfile::TempDir, std::path::PathBuf) {
    let (tmp, dir) = scratch_copy(&corpus("fe-gh59446"));
    let case = capture_case(&dir, &cmd_txt(&dir));
    (tmp, case)
}

/// The JSON `file` holds, or a panic that shows what the farm run said.
pub fn json_of(out: &Output, file: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(file).unwrap_or_default();
    serde_json::from_str(&text).unwrap_or_else(|e| {
        panic!(
            "{} is not JSON ({e}): {text}\nstdout: {}\nstderr: {}",
            file.display(),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

/// Panics with the farm run's output unless its stdout says every word of `words`.
pub fn expect_said(out: &Output, words: &[&str], logs: &Path) {
    let said = String::from_utf8_lossy(&out.stdout);
    if words.iter().all(|w| said.contains(w)) {
        return;
    }
    let tails: String = std::fs::read_dir(logs)
        .map(|d| {
            d.filter_map(Result::ok)
                .filter(|e| e.path().extension().is_some_and(|x| x == "log"))
                .map(|e| {
                    let t = std::fs::read_to_string(e.path()).unwrap_or_default();
                    let tail: Vec<&str> = t.lines().rev().take(15).collect();
                    format!(
                        "== {}\n{}\n",
                        e.path().display(),
                        tail.into_iter().rev().collect::<Vec<_>>().join("\n")
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    panic!(
        "expected {words:?} in:\n{said}\nstderr: {}\n{tails}",
        String::from_utf8_lossy(&out.stderr)
    );
}
