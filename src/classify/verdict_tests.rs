//! The decision table's tests: a case per row (every row reached), the document's table is
//! the code's, and the details: confidence, the deciding evidence, the next step.

use super::*;

fn ev(id: &str, outcome: &str) -> Evidence {
    Evidence {
        id: id.into(),
        experiment: String::new(),
        ran: true,
        host_or_emulator: String::new(),
        outcome: outcome.into(),
        signature: None,
        coarse_signature: None,
        frames: Vec::new(),
        detail: String::new(),
    }
}

fn ev_d(id: &str, outcome: &str, detail: &str) -> Evidence {
    Evidence {
        detail: detail.into(),
        ..ev(id, outcome)
    }
}

#[test]
fn rule_names_follow_the_table() {
    assert_eq!(rule_name(3), "3");
    assert_eq!(rule_name(10), "10");
    assert_eq!(rule_name(31), "3b");
    assert_eq!(rule_name(42), "4c");
    assert_eq!(rule_name(51), "5b");
}

/// The decision table of docs/classify.md, a row per line: long because the table is, and one
/// list is what is compared with the document.
#[test]
fn every_row_of_the_decision_table() {
    use o::*;
    // (name, evidence, verdict, subcase, rule)
    type Row = (
        &'static str,
        Vec<Evidence>,
        &'static str,
        Option<&'static str>,
        u32,
    );
    let rows: Vec<Row> = vec![
        (
            "1 oom",
            vec![ev("E1", DETERMINISTIC), ev("E7", RESOURCE_KILLED)],
            "resource",
            Some("oom-or-timeout"),
            1,
        ),
        (
            "1 timeout",
            vec![ev("E1", TIMEOUT)],
            "resource",
            Some("oom-or-timeout"),
            1,
        ),
        (
            "2 stack",
            vec![ev("E1", DETERMINISTIC), ev("E7", FIXED_BY_STACK)],
            "resource",
            Some("stack"),
            2,
        ),
        (
            "3 host-independent",
            vec![
                ev("E1", DETERMINISTIC),
                ev("E5-v-off", SAME_CRASH),
                ev("E5-v128", SAME_CRASH_COARSE),
                ev("E5-v256", SAME_CRASH),
                ev("E6", SAME_CRASH),
            ],
            "compiler-bug",
            None,
            3,
        ),
        (
            "3 with baseline",
            vec![
                ev("E1", DETERMINISTIC),
                ev("E5-v-off", SAME_CRASH_COARSE),
                ev("E5-v128", SAME_CRASH_COARSE),
                ev("baseline", SAME_CRASH),
            ],
            "compiler-bug",
            None,
            3,
        ),
        (
            "4 riscv build",
            vec![
                ev("E1", DETERMINISTIC),
                ev("E5-v-off", SAME_CRASH),
                ev("E5-v256", SAME_CRASH),
                ev("E6", NO_CRASH),
            ],
            "compiler-bug-riscv-build",
            None,
            4,
        ),
        (
            "3b x86 capture, no emulation",
            vec![ev("E1", DETERMINISTIC), ev("baseline", SAME_CRASH)],
            "compiler-bug",
            None,
            31,
        ),
        (
            "4b x86 build only",
            vec![
                ev("E1", DETERMINISTIC),
                ev("baseline", SAME_CRASH),
                ev("E5-v-off", NO_CRASH),
                ev("E5-v128", NO_CRASH),
            ],
            "compiler-bug",
            Some("this-host-build-only"),
            41,
        ),
        (
            "5 trap",
            vec![ev("E1", DETERMINISTIC), ev("E2", TRAP)],
            "compiler-bug",
            Some("assertion-trap"),
            5,
        ),
        (
            "4c riscv build, no other build",
            vec![
                ev("E1", DETERMINISTIC),
                ev("E5-v-off", SAME_CRASH),
                ev("E5-v128", SAME_CRASH),
            ],
            "compiler-bug",
            Some("riscv64-build-untested-elsewhere"),
            42,
        ),
        (
            "5b XTheadVector code on an RVV 1.0 unit",
            vec![
                ev("E1", DETERMINISTIC),
                ev_d(
                    "E2",
                    VECTOR,
                    "0x12050087 vector instruction (XTheadVector-only): th.vlb.v",
                ),
                ev("E5-v-off", NO_CRASH),
                ev("E5-v128", SAME_CRASH),
                ev("E5-v256", SAME_CRASH),
            ],
            "host-rvv",
            Some("dialect-mismatch"),
            51,
        ),
        (
            "6 RVV 1.0 code, V off on the host removes it, no emulation",
            vec![
                ev("E1", DETERMINISTIC),
                ev_d(
                    "E2",
                    VECTOR,
                    "0x0c047657 vector instruction (RVV-1.0-only): vsetvli ta,ma",
                ),
                ev("E4", NO_CRASH),
            ],
            "host-rvv",
            Some("dialect-mismatch"),
            6,
        ),
        (
            "9 ambiguous vector fault, crashes only with V on",
            vec![
                ev("E1", DETERMINISTIC),
                ev_d(
                    "E2",
                    VECTOR,
                    "0x000072d7 vector instruction (dialect-ambiguous)",
                ),
                ev("E5-v-off", NO_CRASH),
                ev("E5-v128", SAME_CRASH),
            ],
            "host-rvv",
            Some("rvv-path-or-qemu"),
            9,
        ),
        (
            "6a dialect",
            vec![
                ev("E1", DETERMINISTIC),
                ev_d(
                    "E2",
                    VECTOR,
                    "0x12050087 vector instruction (XTheadVector-only)",
                ),
                ev("E5-v-off", NO_CRASH),
                ev("E5-v128", NO_CRASH),
                ev("E6", NO_CRASH),
            ],
            "host-rvv",
            Some("dialect-mismatch"),
            6,
        ),
        (
            "6b V off removes it",
            vec![ev("E1", DETERMINISTIC), ev("E4", NO_CRASH)],
            "host-rvv",
            Some("kernel-vector-context"),
            6,
        ),
        (
            "6b on a RISC-V host that is not a T-Head 0.7.1 core",
            vec![
                ev("E1", DETERMINISTIC),
                ev("E4", NO_CRASH),
                ev("E3", "rvv1"),
                ev("H", HOST_V),
            ],
            "host-rvv",
            Some("kernel-vector-context"),
            6,
        ),
        (
            "6a V off removes it; RVV 1.0 code in the compiler; a T-Head core claiming V",
            vec![
                ev("E1", DETERMINISTIC),
                ev("E4", NO_CRASH),
                ev("E3", "rvv1"),
                ev("H", HOST_THEAD_CLAIMS_V),
            ],
            "host-rvv",
            Some("dialect-mismatch"),
            6,
        ),
        (
            "6a an ambiguous vector instruction faulted on a T-Head core claiming V",
            vec![
                ev("E1", DETERMINISTIC),
                ev_d(
                    "E2",
                    VECTOR,
                    "0x0d05f057 vector instruction (dialect-ambiguous)",
                ),
                ev("H", HOST_THEAD_CLAIMS_V),
            ],
            "host-rvv",
            Some("dialect-mismatch"),
            6,
        ),
        (
            "5b V off clean, V on crashes under emulation, T-Head core claiming V",
            vec![
                ev("E1", DETERMINISTIC),
                ev_d(
                    "E2",
                    VECTOR,
                    "0x0d05f057 vector instruction (dialect-ambiguous)",
                ),
                ev("E4", NO_CRASH),
                ev("E5-v128", SAME_CRASH),
                ev("H", HOST_THEAD_CLAIMS_V),
            ],
            "host-rvv",
            Some("dialect-mismatch"),
            51,
        ),
        (
            "7 kernel",
            vec![
                ev("E1", DETERMINISTIC),
                ev("E4", SAME_CRASH),
                ev("E5-v-off", NO_CRASH),
                ev("E5-v128", NO_CRASH),
                ev("E6", NO_CRASH),
            ],
            "host-kernel",
            None,
            7,
        ),
        (
            "8 varying",
            vec![
                ev("E1", VARYING),
                ev("E5-v-off", NO_CRASH),
                ev("E5-v128", NO_CRASH),
                ev("E6", NO_CRASH),
            ],
            "nondeterministic",
            None,
            8,
        ),
        (
            "8 intermittent",
            vec![ev("E1", INTERMITTENT)],
            "nondeterministic",
            None,
            8,
        ),
        (
            "9 only with V on",
            vec![
                ev("E1", NO_CRASH),
                ev("E5-v-off", NO_CRASH),
                ev("E5-v128", OTHER_CRASH),
                ev("E5-v256", SAME_CRASH),
                ev("E6", NO_CRASH),
            ],
            "host-rvv",
            Some("rvv-path-or-qemu"),
            9,
        ),
        (
            "10 nothing",
            vec![ev("E1", NO_CRASH), ev("E6", NO_CRASH)],
            "insufficient-evidence",
            None,
            10,
        ),
    ];
    let mut reached = std::collections::BTreeSet::new();
    for (name, evidence, verdict, subcase, rule) in rows {
        let d = decide(&evidence);
        assert_eq!(
            (d.verdict, d.subcase, d.rule),
            (verdict, subcase, rule),
            "row {name}: {d:?}"
        );
        // The row that decided is the one whose check matched first.
        let first = TABLE
            .iter()
            .find_map(|r| (r.check)(&Facts::of(&evidence)).map(|_| r.name));
        assert_eq!(first, Some(rule_name(d.rule).as_str()), "row {name}");
        reached.insert(rule_name(d.rule));
    }
    let table: std::collections::BTreeSet<String> =
        TABLE.iter().map(|r| r.name.to_string()).collect();
    assert_eq!(
        reached, table,
        "every row of TABLE is reached by a case above"
    );
}

/// The first column of the "Decision table" in docs/classify.md, in order.
fn documented_rows() -> Vec<String> {
    let doc = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/classify.md"),
    )
    .expect("docs/classify.md");
    let section = doc
        .split("\n## Decision table\n")
        .nth(1)
        .expect("a Decision table section");
    let section = section.split("\n## ").next().unwrap_or(section);
    section
        .lines()
        .filter(|l| l.starts_with("| "))
        .filter_map(|l| l.split('|').nth(1).map(|c| c.trim().to_string()))
        .filter(|c| c != "row" && !c.starts_with("---"))
        .collect()
}

#[test]
fn the_documented_table_is_the_code_table() {
    let code: Vec<&str> = TABLE.iter().map(|r| r.name).collect();
    let doc = documented_rows();
    assert!(doc.len() > 5, "the table was not found: {doc:?}");
    assert_eq!(
        doc, code,
        "docs/classify.md's decision table and verdict::TABLE list the same rows in the same order"
    );
}

#[test]
fn each_row_stores_the_rule_number_its_name_says() {
    // A row's decision carries `rule`, printed back by rule_name as the row's name: the
    // cases of every_row_of_the_decision_table reach each row, and this checks the
    // encoding itself for the lettered ones.
    for r in TABLE {
        let n: u32 = r
            .name
            .trim_end_matches(char::is_alphabetic)
            .parse()
            .unwrap();
        let rule = match r.name.chars().last() {
            Some(c) if c.is_ascii_alphabetic() => n * 10 + u32::from(c as u8 - b'a'),
            _ => n,
        };
        assert_eq!(rule_name(rule), r.name);
    }
}

#[test]
fn a_t_head_host_claiming_v_is_named_among_the_deciding_evidence() {
    use o::*;
    let d = decide(&[
        ev("E1", DETERMINISTIC),
        ev("E4", NO_CRASH),
        ev("E3", "rvv1"),
        ev("H", HOST_THEAD_CLAIMS_V),
    ]);
    assert_eq!(d.decided_by, vec!["H", "E3", "E4"]);
    assert!(d.reason.contains("T-Head"), "{}", d.reason);
    // A decisive encoding decides alone: the host fact is not named.
    let d = decide(&[
        ev("E1", DETERMINISTIC),
        ev_d("E2", VECTOR, "0x12050087 vector instruction (RVV-1.0-only)"),
        ev("H", HOST_THEAD_CLAIMS_V),
    ]);
    assert_eq!(d.subcase, Some("dialect-mismatch"));
    assert_eq!(d.decided_by, vec!["E2"]);
    // Without the host fact the same experiments do not name a dialect.
    let d = decide(&[
        ev("E1", DETERMINISTIC),
        ev("E4", NO_CRASH),
        ev("E3", "rvv1"),
    ]);
    assert_eq!(d.subcase, Some("kernel-vector-context"));
    assert_eq!(d.decided_by, vec!["E4"]);
}

#[test]
fn exact_matches_give_high_confidence_and_coarse_ones_medium() {
    use o::*;
    let exact = [
        ev("E5-v-off", SAME_CRASH),
        ev("E5-v128", SAME_CRASH),
        ev("E6", SAME_CRASH),
    ];
    assert_eq!(decide(&exact).confidence, "high");
    let coarse = [
        ev("E5-v-off", SAME_CRASH_COARSE),
        ev("E5-v128", SAME_CRASH),
        ev("E6", SAME_CRASH),
    ];
    assert_eq!(decide(&coarse).confidence, "medium");
    assert_eq!(
        decide(&coarse).decided_by,
        vec!["E5-v-off", "E5-v128", "E6"]
    );
}

#[test]
fn evidence_that_did_not_run_is_ignored_and_missing_e5_is_the_next_step() {
    let mut e = ev("E5-v-off", o::SAME_CRASH);
    e.ran = false;
    let d = decide(&[e, ev("E1", o::NO_CRASH)]);
    assert_eq!(d.verdict, "insufficient-evidence");
    assert_eq!(d.next_step.as_deref(), Some(RUN_E5));
}

#[test]
fn evidence_round_trips_through_json() {
    let text = r#"{"id":"E5-v128","experiment":"emulation","ran":true,
        "host_or_emulator":"qemu-riscv64 -cpu rv64,v=true,vlen=128","outcome":"same-crash",
        "signature":"3c6c661882c2","detail":"x"}"#;
    let e: Evidence = serde_json::from_str(text).unwrap();
    assert_eq!(e.outcome, o::SAME_CRASH);
    assert_eq!(e.coarse_signature, None);
    let back: Evidence = serde_json::from_value(serde_json::to_value(&e).unwrap()).unwrap();
    assert_eq!(back, e);
}
