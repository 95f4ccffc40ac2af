use super::*;

fn key(id: &str) -> BucketKey {
    BucketKey {
        id: id.into(),
        coarse_id: format!("c{id}"),
        title: format!("clang crash: segmentation fault in f{id}"),
        kind: "SIGSEGV".into(),
    }
}

fn occ(time: &str) -> NewOccurrence {
    NewOccurrence {
        time: time.into(),
        host: "h".into(),
        user: Some("u".into()),
        cwd: "/w".into(),
        command: vec!["clang".into(), "-c".into(), "a b.c".into()],
        source: Some("a b.c".into()),
        compiler: "/usr/bin/clang".into(),
        compiler_version: Some("Debian clang version 16.0.6".into()),
        exit_code: Some(1),
        origin: "wrap".into(),
    }
}

#[test]
fn first_occurrence_claims_the_capture_and_later_ones_only_count() {
    let tmp = tempfile::tempdir().unwrap();
    let mut s = Store::open(tmp.path()).unwrap();
    let a = s
        .record(&key("aaa"), &occ("2026-01-01T00:00:02.000Z"), true)
        .unwrap();
    assert!(a.capture);
    assert_eq!(a.count, 1);
    // The claim is held: a concurrent second occurrence does not capture.
    let b = s
        .record(&key("aaa"), &occ("2026-01-01T00:00:01.000Z"), true)
        .unwrap();
    assert!(!b.capture);
    assert_eq!(b.count, 2);
    s.attach_case("aaa", Some(a.occurrence), Path::new("/store/cases/x"))
        .unwrap();
    let c = s
        .record(&key("aaa"), &occ("2026-01-01T00:00:03.000Z"), true)
        .unwrap();
    assert!(!c.capture);
    assert_eq!(c.case_dir.as_deref(), Some("/store/cases/x"));

    let bucket = s.bucket("aaa").unwrap().unwrap();
    assert_eq!(bucket.count, 3);
    // first/last seen follow the occurrence times, not the order of recording.
    assert_eq!(bucket.first_seen, "2026-01-01T00:00:01.000Z");
    assert_eq!(bucket.last_seen, "2026-01-01T00:00:03.000Z");
    assert_eq!(bucket.status, Status::New);
    let occs = s.occurrences("aaa").unwrap();
    assert_eq!(occs.len(), 3);
    assert_eq!(occs[0].command, ["clang", "-c", "a b.c"]);
    assert_eq!(
        occs.iter().filter(|o| o.case_dir.is_some()).count(),
        1,
        "{occs:?}"
    );
}

#[test]
fn failed_captures_are_retried_a_few_times_then_not() {
    let tmp = tempfile::tempdir().unwrap();
    let mut s = Store::open(tmp.path()).unwrap();
    for _ in 0..MAX_CAPTURE_ATTEMPTS {
        let r = s.record(&key("b"), &occ(&now_utc()), true).unwrap();
        assert!(r.capture);
        s.capture_failed("b", "did not crash again").unwrap();
    }
    let r = s.record(&key("b"), &occ(&now_utc()), true).unwrap();
    assert!(!r.capture);
    assert_eq!(
        s.bucket("b").unwrap().unwrap().capture_error.as_deref(),
        Some("did not crash again")
    );
}

#[test]
fn without_capture_nothing_is_claimed() {
    let tmp = tempfile::tempdir().unwrap();
    let mut s = Store::open(tmp.path()).unwrap();
    assert!(
        !s.record(&key("c"), &occ(&now_utc()), false)
            .unwrap()
            .capture
    );
    assert!(s.record(&key("c"), &occ(&now_utc()), true).unwrap().capture);
}

#[test]
fn status_pending_and_prefix_lookup() {
    let tmp = tempfile::tempdir().unwrap();
    let mut s = Store::open(tmp.path()).unwrap();
    s.record(&key("abc123"), &occ("2026-01-01T00:00:00.000Z"), false)
        .unwrap();
    s.record(&key("abd456"), &occ("2026-01-02T00:00:00.000Z"), false)
        .unwrap();
    assert_eq!(s.pending().unwrap().len(), 2);
    s.set_status("abc123", Status::Failed, Some("reduction failed"))
        .unwrap();
    let pending: Vec<String> = s.pending().unwrap().into_iter().map(|b| b.id).collect();
    assert_eq!(pending, ["abd456"]);
    assert_eq!(s.bucket("abc").unwrap().unwrap().id, "abc123");
    assert!(s.bucket("ab").unwrap().is_none(), "ambiguous prefix");
    assert!(s.bucket("zz").unwrap().is_none());
    assert!(s.bucket("%").unwrap().is_none(), "no LIKE patterns");
    let listed: Vec<String> = s.buckets().unwrap().into_iter().map(|b| b.id).collect();
    assert_eq!(listed, ["abd456", "abc123"], "most recent first");
    assert!(s.has_bucket("abc123").unwrap());
}

#[test]
fn concurrent_writers_lose_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("new-store");
    let threads = 16;
    let each = 10;
    let claims: usize = std::thread::scope(|sc| {
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                let root = root.clone();
                sc.spawn(move || {
                    // Every thread opens (and races to create) the store itself, as separate
                    // `icepick wrap` processes do.
                    let mut s = Store::open(&root).unwrap();
                    (0..each)
                        .filter(|_| s.record(&key("d"), &occ(&now_utc()), true).unwrap().capture)
                        .count()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).sum()
    });
    assert_eq!(claims, 1, "one capture per bucket");
    let s = Store::open(&root).unwrap();
    assert_eq!(s.bucket("d").unwrap().unwrap().count, threads * each);
    assert_eq!(s.occurrences("d").unwrap().len() as i64, threads * each);
}

#[test]
fn a_newer_schema_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    drop(Store::open(tmp.path()).unwrap());
    let conn = rusqlite::Connection::open(tmp.path().join(DB_FILE)).unwrap();
    conn.execute_batch("PRAGMA user_version = 99").unwrap();
    drop(conn);
    match Store::open(tmp.path()) {
        Err(StoreError::TooNew { found: 99, .. }) => {}
        other => panic!("{other:?}"),
    }
}

#[test]
fn the_store_is_in_wal_mode() {
    let tmp = tempfile::tempdir().unwrap();
    let s = Store::open(tmp.path()).unwrap();
    let mode = s.read("PRAGMA journal_mode", db::vals![]).unwrap()[0].text(0);
    assert_eq!(mode, "wal");
    assert!(tmp.path().join("cases").is_dir());
}

#[test]
fn open_existing_creates_nothing_and_reads_what_is_there() {
    let tmp = tempfile::tempdir().unwrap();
    let missing = tmp.path().join("no/such/store");
    assert!(Store::open_existing(&missing).unwrap().is_none());
    assert!(!tmp.path().join("no").exists());
    let root = tmp.path().join("store");
    let mut s = Store::open(&root).unwrap();
    s.record(&key("a1"), &occ("2026-05-01T00:00:00.000Z"), false)
        .unwrap();
    drop(s);
    let s = Store::open_existing(&root).unwrap().unwrap();
    assert_eq!(s.buckets().unwrap().len(), 1);
}

#[test]
fn a_bucket_is_leased_to_one_worker_and_an_expired_lease_is_taken_over() {
    let tmp = tempfile::tempdir().unwrap();
    let mut s = Store::open(tmp.path()).unwrap();
    s.record(&key("e1"), &occ("2026-01-01T00:00:00.000Z"), false)
        .unwrap();
    let long = Duration::from_secs(600);
    let b = s.claim("w1", long).unwrap().unwrap();
    assert_eq!(b.id, "e1");
    assert_eq!(b.lease_owner.as_deref(), Some("w1"));
    assert!(s.claim("w2", long).unwrap().is_none(), "held by w1");
    assert!(!s.finish("e1", "w2", Status::Triaged, "x").unwrap());
    assert!(s.renew("e1", "w1", long).unwrap());
    assert!(s.finish("e1", "w1", Status::Triaged, "done").unwrap());
    assert!(s.claim("w2", long).unwrap().is_none(), "triaged once");
    assert_eq!(s.bucket("e1").unwrap().unwrap().status, Status::Triaged);
    assert_eq!(s.pending_count().unwrap(), 0);

    // A worker that died: its lease runs out and another takes the bucket; the dead one's
    // late verdict is not written.
    s.record(&key("e2"), &occ("2026-01-01T00:00:00.000Z"), false)
        .unwrap();
    assert!(s.claim("dead", Duration::ZERO).unwrap().is_some());
    std::thread::sleep(Duration::from_millis(5));
    let b = s.claim("w3", long).unwrap().unwrap();
    assert_eq!(b.id, "e2");
    assert!(!s.renew("e2", "dead", long).unwrap());
    assert!(!s.finish("e2", "dead", Status::Failed, "late").unwrap());
    s.release("e2", "w3").unwrap();
    assert_eq!(
        s.claim("w4", long).unwrap().unwrap().id,
        "e2",
        "released: free at once"
    );
}

#[test]
fn a_version_1_store_is_migrated_and_keeps_its_rows() {
    let tmp = tempfile::tempdir().unwrap();
    let conn = rusqlite::Connection::open(tmp.path().join(DB_FILE)).unwrap();
    conn.execute_batch(db::MIGRATIONS[0].sqlite).unwrap();
    conn.execute_batch(
        "INSERT INTO buckets (id, coarse_id, title, kind, first_seen, last_seen, count)
             VALUES ('old', 'c', 't', 'k', '2025-01-01T00:00:00.000Z', '2025-01-01T00:00:00.000Z', 1);
         INSERT INTO occurrences (bucket, time, host, cwd, command, compiler, origin)
             VALUES ('old', '2025-01-01T00:00:00.000Z', 'h', '/w', '[\"cc\"]', 'cc', 'wrap');
         PRAGMA user_version = 1;",
    )
    .unwrap();
    drop(conn);
    // Read-only opening of an older store reads it as empty, and changes nothing.
    assert!(Store::open_existing(tmp.path())
        .unwrap()
        .unwrap()
        .buckets()
        .unwrap()
        .is_empty());
    let s = Store::open(tmp.path()).unwrap();
    let b = s.bucket("old").unwrap().unwrap();
    assert_eq!((b.count, b.hosts.clone()), (1, vec!["h".to_string()]));
    assert_eq!(s.occurrences("old").unwrap()[0].user, None);
    assert_eq!(
        s.read("PRAGMA user_version", db::vals![]).unwrap()[0].int(0),
        SCHEMA_VERSION
    );
}

#[test]
fn buckets_say_which_machines_and_compilers_hit_them() {
    let tmp = tempfile::tempdir().unwrap();
    let mut s = Store::open(tmp.path()).unwrap();
    for (host, version) in [("a", "clang 16"), ("b", "clang 16"), ("b", "clang 19")] {
        let o = NewOccurrence {
            host: host.into(),
            compiler_version: Some(version.into()),
            ..occ(&now_utc())
        };
        s.record(&key("m"), &o, false).unwrap();
    }
    let b = s.bucket("m").unwrap().unwrap();
    assert_eq!(b.hosts, ["a", "b"]);
    assert_eq!(b.compiler_versions, ["clang 16", "clang 19"]);
}

#[test]
fn a_case_is_archived_and_fetched_elsewhere() {
    let tmp = tempfile::tempdir().unwrap();
    let mut s = Store::open(&tmp.path().join("store")).unwrap();
    s.record(&key("f"), &occ(&now_utc()), true).unwrap();
    let case = tmp.path().join("case");
    std::fs::create_dir_all(&case).unwrap();
    std::fs::write(case.join("case.json"), "{}").unwrap();
    std::fs::write(case.join("report.md"), "# report").unwrap();
    s.attach_case("f", None, &case).unwrap();
    s.store_case("f", &case).unwrap();
    std::fs::remove_dir_all(&case).unwrap();
    let b = s.bucket("f").unwrap().unwrap();
    assert!(b.archived);
    assert_eq!(s.report_text(&b, tmp.path()).as_deref(), Some("# report"));
    let out = tmp.path().join("fetched");
    assert!(s.fetch_case(&b, &out).unwrap());
    assert_eq!(
        std::fs::read_to_string(out.join("case.json")).unwrap(),
        "{}"
    );
}
