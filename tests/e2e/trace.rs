//! `icepick reduce --trace` and `icepick simulate` end to end with real clang: one trace line
//! per test (the case keeps it too), the simulation of it, and the reduction drawn as
//! `reduction.svg` in the case.

use std::collections::HashSet;
use std::path::Path;

use crate::util::*;

fn lines(path: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// `icepick reduce --json --jobs 2 --trace TRACE ARGS…` in `cwd`: its JSON and the trace's
/// lines, after checking what every trace has: a line for each test the driver started
/// (cancelled ones too), as many as the reduction counts, and at least one acceptance.
fn reduce_with_trace(
    cwd: &Path,
    trace: &Path,
    args: &[&str],
) -> (serde_json::Value, Vec<serde_json::Value>) {
    let mut argv = vec![
        "reduce",
        "--json",
        "--jobs",
        "2",
        "--trace",
        trace.to_str().unwrap(),
    ];
    argv.extend_from_slice(args);
    let o = icepick(cwd, &argv);
    expect_success(&o);
    let r: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let recs = lines(trace);
    let tested = recs.iter().filter(|l| !l["worker"].is_null()).count() as u64;
    assert_eq!(tested, r["tests"].as_u64().unwrap(), "{r:#}");
    assert!(recs.iter().any(|l| l["outcome"] == "interesting"));
    (r, recs)
}

#[test]
fn reduce_trace_has_a_line_per_test_and_simulate_replays_it() {
    let (_tmp, dir) = scratch_copy(&corpus("fe-gh59446"));
    let case = capture_case(&dir, &cmd_txt(&dir));
    let trace = dir.join("trace.jsonl");
    let (r, recs) = reduce_with_trace(&dir, &trace, &[case.to_str().unwrap()]);
    let cached = recs.iter().filter(|l| l["outcome"] == "cached").count() as u64;
    assert_eq!(cached, r["cache_hits"].as_u64().unwrap());
    let mut seqs = HashSet::new();
    for l in &recs {
        assert!(seqs.insert(l["seq"].as_u64().unwrap()), "seq twice: {l}");
        let outcome = l["outcome"].as_str().unwrap();
        assert!(
            [
                "interesting",
                "uninteresting",
                "cached",
                "cancelled",
                "timeout"
            ]
            .contains(&outcome),
            "{l}"
        );
        assert!(
            l["start"].as_f64().unwrap() <= l["end"].as_f64().unwrap(),
            "{l}"
        );
        assert!(l["bytes"].as_u64().unwrap() > 0);
        assert!(!l["pass"].as_str().unwrap().is_empty());
    }
    // The case keeps the same trace and names it.
    let c = read_case(&case);
    assert_eq!(c["reduction"]["trace"], "logs/reduce-trace.jsonl");
    assert_eq!(
        std::fs::read(case.join("logs/reduce-trace.jsonl")).unwrap(),
        std::fs::read(&trace).unwrap()
    );
    // The report draws it, and links it.
    let svg = std::fs::read_to_string(case.join("reduction.svg")).unwrap();
    assert!(
        svg.starts_with("<svg") && svg.contains("best so far"),
        "{svg:.200}"
    );
    let md = std::fs::read_to_string(case.join("report.md")).unwrap();
    assert!(md.contains("(reduction.svg)"), "{md}");

    // The simulation: one row per worker count, one worker is the baseline, more is never
    // slower than one.
    let curve = dir.join("curve.svg");
    let o = icepick(
        &dir,
        &[
            "simulate",
            trace.to_str().unwrap(),
            "--workers",
            "1,2,8,64",
            "--latency",
            "5",
            "--json",
            "--svg",
            curve.to_str().unwrap(),
        ],
    );
    expect_success(&o);
    let s: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let rows = s["rows"].as_array().unwrap();
    let workers: Vec<u64> = rows
        .iter()
        .map(|r| r["workers"].as_u64().unwrap())
        .collect();
    assert_eq!(workers, [1, 2, 8, 64]);
    assert_eq!(rows[0]["speedup"], 1.0);
    assert_eq!(rows[0]["wasted_tests"], 0);
    for r in rows {
        assert!(r["wall_s"].as_f64().unwrap() <= rows[0]["wall_s"].as_f64().unwrap() + 0.01);
        assert!(r["speedup"].as_f64().unwrap() >= 0.99, "{r}");
    }
    assert!(std::fs::read_to_string(&curve).unwrap().starts_with("<svg"));
    // The table form names its columns.
    let o = icepick(&dir, &["simulate", trace.to_str().unwrap()]);
    expect_success(&o);
    let table = String::from_utf8_lossy(&o.stdout);
    assert!(
        table.contains("speedup") && table.contains("wasted tests"),
        "{table}"
    );
}

#[test]
fn simulate_of_a_file_that_is_no_trace_is_bad_input() {
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("x.jsonl");
    std::fs::write(&f, "hello\n").unwrap();
    let o = icepick(d.path(), &["simulate", f.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("line 1 is not a trace record"), "{err}");
    let o = icepick(
        d.path(),
        &["simulate", d.path().join("none").to_str().unwrap()],
    );
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn reduce_test_script_writes_the_trace_too() {
    let d = tempfile::tempdir().unwrap();
    let file = d.path().join("x.c");
    let text: String = (0..40).map(|i| format!("int v{i};\n")).collect::<String>() + "int keep;\n";
    std::fs::write(&file, &text).unwrap();
    let script = d.path().join("t.sh");
    write_executable(&script, "#!/bin/sh\ngrep -q keep x.c\n");
    let trace = d.path().join("t.jsonl");
    reduce_with_trace(
        d.path(),
        &trace,
        &["--test", script.to_str().unwrap(), file.to_str().unwrap()],
    );
}
