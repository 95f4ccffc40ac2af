//! `--executor distcc` (issue #14) end to end, on a loopback farm the test makes: every
//! daemon runs inside a network namespace and a PID namespace of its own (`unshare -n -p -f
//! --kill-child`), so no test traffic leaves the machine and every daemon dies with the
//! test, kill -9 included. Two distccd on 127.0.0.1 (two ports) as the unprivileged `nobody`.
//! A real corpus crash (fe-gh59446, clang-16) reduced on the farm must give the same bytes as
//! a local reduction; the daemons' logs must show they ran the tests; a daemon killed
//! mid-run costs retries, not a wrong result; a crash that needs the host stays local.

use std::path::Path;
use std::process::Command;

use crate::util::*;

/// A directory the daemons (as `nobody`) can write their logs to: under /tmp, not $TMPDIR
/// (scripts/test's TMPDIR is a private 0700 directory nobody cannot reach into).
fn log_dir() -> tempfile::TempDir {
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

/// Runs `script` (sh) in `dir` in fresh network and PID namespaces with loopback up and two
/// distccd listening on 127.0.0.1:`port` and `port+1` (logs `logs/distccdN.log`, N = 1, 2);
/// `$ICEPICK` is the binary, `$D1`/`$D2` the daemons' pids. Returns the script's output.
fn in_loopback_farm(dir: &Path, logs: &Path, port: u16, script: &str) -> std::process::Output {
    let setup = format!(
        "set -e\nip link set lo up\n\
         for n in 1 2; do\n\
           TMPDIR={logs} distccd --daemon --no-detach --allow 127.0.0.1 --listen 127.0.0.1 \
             --port $(( {port} + n - 1 )) --log-file {logs}/distccd$n.log --log-level info \
             --user nobody </dev/null >/dev/null 2>&1 &\n\
           eval D$n=$!\n\
         done\n\
         for i in $(seq 50); do\n\
           [ -s {logs}/distccd1.log ] && [ -s {logs}/distccd2.log ] && break; sleep 0.1\n\
         done\n\
         grep -q 'listening on' {logs}/distccd1.log && grep -q 'listening on' {logs}/distccd2.log \
           || {{ echo 'distccd did not start'; cat {logs}/*.log; exit 1; }}\n\
         export DISTCC_HOSTS='127.0.0.1:{port}/2 127.0.0.1:{p2}/2'\n\
         set +e\n{script}\n",
        logs = logs.display(),
        p2 = port + 1,
    );
    Command::new("unshare")
        .args(["-n", "-p", "-f", "--kill-child", "--", "sh", "-c", &setup])
        .env("ICEPICK", BIN)
        .env("LOGS", logs)
        .current_dir(dir)
        .output()
        .unwrap()
}

/// Compile jobs a distccd log says it finished.
fn jobs_in(log: &Path) -> usize {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .filter(|l| l.contains("job complete"))
        .count()
}

fn fe_case() -> (tempfile::TempDir, std::path::PathBuf) {
    let (tmp, dir) = scratch_copy(&corpus("fe-gh59446"));
    let case = capture_case(&dir, &cmd_txt(&dir));
    (tmp, case)
}

fn json_of(out: &std::process::Output, file: &Path) -> serde_json::Value {
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

#[test]
fn distcc_reduction_is_byte_identical_to_local_and_the_daemons_ran_the_tests() {
    let (_tmp, case) = fe_case();
    let farm_case = case.parent().unwrap().join("farmcase");
    crate::reduce::copy_dir(&case, &farm_case);
    let local = icepick(
        &case,
        &["reduce", "--jobs", "2", "--json", case.to_str().unwrap()],
    );
    expect_success(&local);
    let local: serde_json::Value = serde_json::from_slice(&local.stdout).unwrap();
    assert_eq!(local["farm"]["tests_remote"], 0, "{local:#}");

    let dir = case.parent().unwrap();
    let logs = log_dir();
    let logs = logs.path();
    let out = in_loopback_farm(
        dir,
        logs,
        3811,
        "$ICEPICK reduce --executor distcc --jobs 4 --json farmcase > farm.json; echo rc=$?",
    );
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        said.contains("rc=0"),
        "{said}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let farm = json_of(&out, &dir.join("farm.json"));
    assert_eq!(
        std::fs::read(case.join("reduced.ii")).unwrap(),
        std::fs::read(farm_case.join("reduced.ii")).unwrap(),
        "--executor distcc must give the bytes --executor local gives"
    );
    assert_eq!(farm["verified"], true, "{farm:#}");
    let f = &farm["farm"];
    assert_eq!(f["executor"], "distcc", "{f:#}");
    assert!(f["refused"].is_null(), "{f:#}");
    let remote = f["tests_remote"].as_u64().unwrap();
    assert!(remote > 20, "{f:#}");
    // Both daemons ran tests, and together at least what icepick counts as remote (plus
    // the identity probes).
    let (n1, n2) = (
        jobs_in(&logs.join("distccd1.log")),
        jobs_in(&logs.join("distccd2.log")),
    );
    assert!(n1 > 0 && n2 > 0, "daemon jobs: {n1}, {n2}");
    assert!(
        (n1 + n2) as u64 >= remote,
        "daemons {n1}+{n2} < {remote} remote tests"
    );
    // The case records where its tests ran.
    assert_eq!(
        read_case(&farm_case)["reduction"]["farm"]["executor"],
        "distcc"
    );
}

#[test]
fn a_distcc_daemon_killed_mid_run_costs_retries_not_a_wrong_result() {
    let (_tmp, case) = fe_case();
    let farm_case = case.parent().unwrap().join("farmcase");
    crate::reduce::copy_dir(&case, &farm_case);
    let local = icepick(
        &case,
        &["reduce", "--jobs", "2", "--json", case.to_str().unwrap()],
    );
    expect_success(&local);

    let dir = case.parent().unwrap();
    // Kill daemon 1 and every process its log names (its preforked children, which accept
    // the connections; all started by this test, killed by pid) once it has run 20 jobs.
    let logs = log_dir();
    let out = in_loopback_farm(
        dir,
        logs.path(),
        3821,
        "$ICEPICK reduce --executor distcc --jobs 4 --json farmcase > farm.json &\n\
         R=$!\n\
         for i in $(seq 3000); do\n\
           [ \"$(grep -c 'job complete' $LOGS/distccd1.log)\" -ge 20 ] && break; sleep 0.1\n\
         done\n\
         for p in $D1 $(sed -n 's/^distccd\\[\\([0-9]*\\)\\].*/\\1/p' $LOGS/distccd1.log | sort -u); do kill -9 $p 2>/dev/null; done; echo killed\n\
         wait $R; echo rc=$?",
    );
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        said.contains("killed") && said.contains("rc=0"),
        "{said}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let farm = json_of(&out, &dir.join("farm.json"));
    assert_eq!(
        std::fs::read(case.join("reduced.ii")).unwrap(),
        std::fs::read(farm_case.join("reduced.ii")).unwrap(),
        "a dead node must not change the result"
    );
    let f = &farm["farm"];
    assert!(f["retries"].as_u64().unwrap() > 0, "{f:#}");
    assert!(
        f["node_failures"]["127.0.0.1:3821"].as_u64().unwrap_or(0) > 0,
        "{f:#}"
    );
    assert!(f["tests_remote"].as_u64().unwrap() > 0, "{f:#}");
}

#[test]
fn a_crash_that_needs_the_host_is_refused_for_the_farm_and_stays_local() {
    // No real binary crashes only outside a farm on demand; the case's classification is
    // what says a crash needs its host, so the test writes that verdict (as `icepick
    // classify` does for a host-kernel crash) into a real case.
    let (_tmp, case) = fe_case();
    let mut c = read_case(&case);
    c["classification"] = serde_json::json!({
        "verdict": "host-kernel",
        "confidence": "high",
        "rule": 5,
        "reason": "written by the test: the crash needs this host's kernel",
        "decided_by": [],
        "evidence": []
    });
    std::fs::write(
        case.join("case.json"),
        serde_json::to_string_pretty(&c).unwrap(),
    )
    .unwrap();
    let dir = case.parent().unwrap();
    let logs = log_dir();
    let logs = logs.path();
    let out = in_loopback_farm(
        dir,
        logs,
        3831,
        "$ICEPICK reduce --executor distcc --jobs 2 --json case > farm.json; echo rc=$?",
    );
    let said = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("rc=0"), "{said}\n{stderr}");
    assert!(
        stderr.contains("not using the distcc farm")
            && stderr.contains("depends on this host (host-kernel)"),
        "{stderr}"
    );
    let farm = json_of(&out, &dir.join("farm.json"));
    let f = &farm["farm"];
    assert_eq!(f["executor"], "local", "{f:#}");
    assert_eq!(f["requested"], "distcc", "{f:#}");
    assert_eq!(f["tests_remote"], 0, "{f:#}");
    assert!(
        f["refused"].as_str().unwrap().contains("host-kernel"),
        "{f:#}"
    );
    assert_eq!(farm["verified"], true);
    // No test reached a daemon.
    assert_eq!(
        jobs_in(&logs.join("distccd1.log")) + jobs_in(&logs.join("distccd2.log")),
        0
    );
}
