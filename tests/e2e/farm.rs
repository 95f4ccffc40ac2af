//! `--executor distcc|icecream` end to end, on loopback farms the tests make
//! (farm_util.rs): every daemon runs inside a network namespace and a PID namespace of its
//! own, so no test traffic leaves the machine and every daemon dies with the test. distcc:
//! two distccd on 127.0.0.1 as `nobody`; icecream: a scheduler, this machine's iceccd with
//! no slots and two nodes. A real corpus crash (fe-gh59446, clang-16) reduced on the farm must
//! give the same bytes as a local reduction; the daemons' logs must show they ran the tests;
//! a daemon killed mid-run costs retries, not a wrong result; a crash that needs the host
//! stays local; `flags` on the farm gives the local answer.

#[path = "farm_util.rs"]
mod farm_util;

use farm_util::*;

use crate::util::*;

#[test]
fn distcc_reduction_is_byte_identical_to_local_and_the_daemons_ran_the_tests() {
    let (_tmp, case, farm_case, local) = ran_locally("reduce");
    assert_eq!(local["farm"]["tests_remote"], 0, "{local:#}");
    let dir = case.parent().unwrap();
    let logs = log_dir();
    let logs = logs.path();
    let out = in_distcc_farm(
        dir,
        logs,
        3811,
        "$ICEPICK reduce --executor distcc --jobs 4 --json farmcase > farm.json; echo rc=$?",
    );
    expect_said(&out, &["rc=0"], logs);
    let farm = json_of(&out, &dir.join("farm.json"));
    let f = same_result_as_local(&farm, &case, &farm_case, "distcc");
    let remote = f["tests_remote"].as_u64().unwrap();
    // Both daemons ran tests, and together at least what icepick counts as remote (plus
    // the identity probes).
    let (n1, n2) = (
        distcc_jobs_in(&logs.join("distccd1.log")),
        distcc_jobs_in(&logs.join("distccd2.log")),
    );
    assert!(n1 > 0 && n2 > 0, "daemon jobs: {n1}, {n2}");
    assert!(
        (n1 + n2) as u64 >= remote,
        "daemons {n1}+{n2} < {remote} remote tests"
    );
}

#[test]
fn a_distcc_daemon_killed_mid_run_costs_retries_not_a_wrong_result() {
    let (_tmp, case, farm_case, _) = ran_locally("reduce");
    let dir = case.parent().unwrap();
    // Kill daemon 1 and every process its log names (its preforked children, which accept
    // the connections; all started by this test, killed by pid) once it has run 20 jobs.
    let logs = log_dir();
    let out = in_distcc_farm(
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
    expect_said(&out, &["killed", "rc=0"], logs.path());
    let farm = json_of(&out, &dir.join("farm.json"));
    let f = dead_node_changed_nothing(&farm, &case, &farm_case);
    assert!(f["retries"].as_u64().unwrap() > 0, "{f:#}");
    assert!(
        f["node_failures"]["127.0.0.1:3821"].as_u64().unwrap_or(0) > 0,
        "{f:#}"
    );
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
    let out = in_distcc_farm(
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
        distcc_jobs_in(&logs.join("distccd1.log")) + distcc_jobs_in(&logs.join("distccd2.log")),
        0
    );
}

/// A fresh fe-gh59446 capture, a copy of it (`farmcase`, beside it) for the farm run, and
/// what `icepick STAGE --jobs 2 --json` said on the first, run locally.
fn ran_locally(
    stage: &str,
) -> (
    tempfile::TempDir,
    std::path::PathBuf,
    std::path::PathBuf,
    serde_json::Value,
) {
    let (tmp, case) = fe_case();
    let farm_case = case.parent().unwrap().join("farmcase");
    crate::reduce::copy_dir(&case, &farm_case);
    let local = icepick(
        &case,
        &[stage, "--jobs", "2", "--json", case.to_str().unwrap()],
    );
    expect_success(&local);
    let local = serde_json::from_slice(&local.stdout).unwrap();
    (tmp, case, farm_case, local)
}

#[test]
fn icecream_reduction_is_byte_identical_to_local_and_the_nodes_ran_the_tests() {
    let (_tmp, case, farm_case, _) = ran_locally("reduce");
    let dir = case.parent().unwrap();
    let logs = log_dir();
    let logs = logs.path();
    let out = in_icecream_farm(
        dir,
        logs,
        "$ICEPICK reduce --executor icecream --jobs 4 --json farmcase > farm.json; echo rc=$?",
    );
    expect_said(&out, &["rc=0"], logs);
    let farm = json_of(&out, &dir.join("farm.json"));
    let f = same_result_as_local(&farm, &case, &farm_case, "icecream");
    // The scheduler gave every test to a node (this machine's daemon has no slots), and the
    // client's logs named them.
    assert_eq!(f["client_local"], 0, "{f:#}");
    // Tests are counted on the node the client's log names (`icecream` when it names none);
    // tests the reducer cancelled in flight count on no node, since the node the scheduler
    // named may never have received them.
    let per_node = f["per_node"].as_object().unwrap();
    assert!(
        per_node
            .keys()
            .all(|k| k == "127.0.0.1:10246" || k == "127.0.0.1:10247" || k == "icecream"),
        "{f:#}"
    );
    let named: u64 = ["127.0.0.1:10246", "127.0.0.1:10247"]
        .iter()
        .map(|k| f["per_node"][k].as_u64().unwrap_or(0))
        .sum();
    assert!(named > 20, "{f:#}");
    // The nodes' own logs: together they compiled at least what icepick counts as remote.
    let (n1, n2) = (
        icecc_jobs_in(&logs.join("node1.log")),
        icecc_jobs_in(&logs.join("node2.log")),
    );
    assert!(
        (n1 + n2) as u64 >= named,
        "node jobs {n1}+{n2} < {named} tests counted on them"
    );
    assert_eq!(icecc_jobs_in(&logs.join("local.log")), 0);
}

#[test]
fn an_icecream_node_killed_mid_run_costs_retries_not_a_wrong_result() {
    let (_tmp, case, farm_case, _) = ran_locally("reduce");
    let dir = case.parent().unwrap();
    let logs = log_dir();
    let logs = logs.path();
    // Once a node has compiled 10 tests, freeze it (its daemon and the compiles it forked:
    // every pid its log names, all started by this test) for 2 s, then kill it. The freeze
    // makes the death land mid-compile: tests are 0.05-0.1 s, so a bare kill often found
    // the node idle, and icecream's scheduler then routed around it without a single failure;
    // frozen, the node still takes the tests the scheduler sends and answers none. Which node
    // is up to the scheduler: on a 2-core CI machine it once gave all 219 tests to node2, so
    // the victim is whichever node reaches 10 first.
    let out = in_icecream_farm(
        dir,
        logs,
        "$ICEPICK reduce --executor icecream --jobs 4 --json farmcase > farm.json &\n\
         R=$!\n\
         V=\n\
         for i in $(seq 3000); do\n\
           for n in node1 node2; do\n\
             [ \"$(grep -c 'remote compile for file' $LOGS/$n.log)\" -ge 10 ] && { V=$n; break; }\n\
           done\n\
           [ -n \"$V\" ] && break; kill -0 $R 2>/dev/null || break; sleep 0.1\n\
         done\n\
         case $V in node1) P=$N1; O=node2 ;; node2) P=$N2; O=node1 ;; *) echo 'no node compiled 10 tests'; P=; O=node1 ;; esac\n\
         [ -n \"$V\" ] && P=\"$P $(sed -n 's/^\\[\\([0-9]*\\)\\].*/\\1/p' $LOGS/$V.log | sort -u)\"\n\
         for p in $P; do kill -STOP $p 2>/dev/null; done; sleep 2\n\
         for p in $P; do kill -9 $p 2>/dev/null; done; echo killed=$V\n\
         echo \"other_at_kill=$(grep -c 'remote compile for file' $LOGS/$O.log)\"\n\
         wait $R; echo rc=$?",
    );
    expect_said(&out, &["killed=node", "rc=0"], logs);
    let said = String::from_utf8_lossy(&out.stdout);
    let (victim, port, other) = if said.contains("killed=node1") {
        ("node1", "127.0.0.1:10246", "node2")
    } else {
        ("node2", "127.0.0.1:10247", "node1")
    };
    let farm = json_of(&out, &dir.join("farm.json"));
    let f = dead_node_changed_nothing(&farm, &case, &farm_case);
    // The tests the victim had in flight failed there: icepick retried them, or icecc
    // compiled them here after the node failed; either way counted against the node.
    assert!(
        f["node_failures"][port].as_u64().unwrap_or(0) > 0 || f["retries"].as_u64().unwrap() > 0,
        "{victim} killed: {f:#}"
    );
    // The other node took over: it compiled more after the kill than before.
    let at_kill: usize = said
        .split("other_at_kill=")
        .nth(1)
        .and_then(|t| t.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no other_at_kill in {said}"));
    let at_end = icecc_jobs_in(&logs.join(format!("{other}.log")));
    assert!(
        at_end > at_kill,
        "{victim} killed; {other} compiled {at_kill} before and {at_end} in all: {f:#}"
    );
}

#[test]
fn flags_on_a_distcc_farm_give_the_local_answer_with_the_tests_remote() {
    let (_tmp, case, farm_case, local) = ran_locally("flags");
    let dir = case.parent().unwrap();
    let logs = log_dir();
    let logs = logs.path();
    let out = in_distcc_farm(
        dir,
        logs,
        3841,
        "$ICEPICK flags --executor distcc --jobs 4 --json farmcase > farm.json; echo rc=$?",
    );
    expect_said(&out, &["rc=0"], logs);
    let farm = json_of(&out, &dir.join("farm.json"));
    assert_eq!(
        farm["minimal_command"], local["minimal_command"],
        "{farm:#}"
    );
    assert_eq!(farm["dimensions"], local["dimensions"], "{farm:#}");
    assert_eq!(farm["removed"], local["removed"], "{farm:#}");
    let f = &farm["farm"];
    assert_eq!(f["executor"], "distcc", "{f:#}");
    let remote = f["tests_remote"].as_u64().unwrap();
    assert!(remote > 5, "{f:#}");
    let daemons =
        distcc_jobs_in(&logs.join("distccd1.log")) + distcc_jobs_in(&logs.join("distccd2.log"));
    assert!(daemons as u64 >= remote, "daemons {daemons} < {remote}");
    assert_eq!(read_case(&farm_case)["flags"]["farm"]["executor"], "distcc");
    // Locally: no farm section.
    assert!(local["farm"].is_null(), "{local:#}");
}

/// The farm's reduction (`farm`, its `--json`) is byte-identical to the local one, verified,
/// run by `executor` (not refused, and so recorded in the case) with more than 20 tests
/// remote; returns its farm summary.
fn same_result_as_local<'a>(
    farm: &'a serde_json::Value,
    case: &std::path::Path,
    farm_case: &std::path::Path,
    executor: &str,
) -> &'a serde_json::Value {
    assert_eq!(
        std::fs::read(case.join("reduced.ii")).unwrap(),
        std::fs::read(farm_case.join("reduced.ii")).unwrap(),
        "--executor {executor} must give the bytes --executor local gives"
    );
    assert_eq!(farm["verified"], true, "{farm:#}");
    let f = &farm["farm"];
    assert_eq!(f["executor"], executor, "{f:#}");
    assert!(f["refused"].is_null(), "{f:#}");
    assert!(f["tests_remote"].as_u64().unwrap() > 20, "{f:#}");
    // The case records where its tests ran.
    assert_eq!(
        read_case(farm_case)["reduction"]["farm"]["executor"],
        executor
    );
    f
}

/// A reduction during which a node was killed (`farm`, its `--json`) still gives the local
/// bytes, verified, with tests remote; returns its farm summary.
fn dead_node_changed_nothing<'a>(
    farm: &'a serde_json::Value,
    case: &std::path::Path,
    farm_case: &std::path::Path,
) -> &'a serde_json::Value {
    assert_eq!(
        std::fs::read(case.join("reduced.ii")).unwrap(),
        std::fs::read(farm_case.join("reduced.ii")).unwrap(),
        "a dead node must not change the result"
    );
    assert_eq!(farm["verified"], true, "{farm:#}");
    let f = &farm["farm"];
    assert!(f["tests_remote"].as_u64().unwrap() > 0, "{f:#}");
    f
}
