//! The store's behaviour, one suite run against both backends: every test below is a
//! function of a [`Backend`], instantiated for SQLite (`store::tests::sqlite::…`) and for a
//! real PostgreSQL 15 started by the tests (`store::tests::postgres::…`, see [`pg_test`]).

#![cfg_attr(not(feature = "system-tests"), allow(dead_code))]

use super::*;
use crate::store::pg_test;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Backend {
    Sqlite,
    Postgres,
}

/// A store location that nothing has opened yet (SQLite: a directory that does not exist;
/// PostgreSQL: an empty database), and a scratch directory.
struct Fixture {
    tmp: tempfile::TempDir,
    loc: Location,
    backend: Backend,
}

impl Fixture {
    fn new(backend: Backend) -> Fixture {
        let tmp = tempfile::tempdir().unwrap();
        let loc = match backend {
            Backend::Sqlite => Location::Dir(tmp.path().join("store")),
            Backend::Postgres => pg_test::database(),
        };
        Fixture { tmp, loc, backend }
    }

    fn open(&self) -> Store {
        Store::open_at(&self.loc).unwrap()
    }

    fn path(&self) -> &Path {
        self.tmp.path()
    }

    /// Runs SQL behind the store's back (planting an older or newer schema).
    fn raw(&self, sqlite: &str, postgres: &str) {
        match &self.loc {
            Location::Dir(root) => {
                std::fs::create_dir_all(root).unwrap();
                let c = rusqlite::Connection::open(root.join(DB_FILE)).unwrap();
                c.execute_batch(sqlite).unwrap();
            }
            Location::Postgres(_) => pg_test::client(&self.loc).batch_execute(postgres).unwrap(),
        }
    }

    /// The schema version the database records.
    fn version(&self) -> i64 {
        let s = self.open();
        let q = match self.backend {
            Backend::Sqlite => "PRAGMA user_version",
            Backend::Postgres => "SELECT max(version) FROM icepick_schema",
        };
        s.read(q, db::vals![]).unwrap()[0].int(0)
    }

    /// Whether the database has the table `name`.
    fn has_table(&self, name: &str) -> bool {
        match &self.loc {
            Location::Dir(root) => {
                let Ok(c) = rusqlite::Connection::open_with_flags(
                    root.join(DB_FILE),
                    rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
                ) else {
                    return false;
                };
                c.query_row(
                    "SELECT count(*) FROM sqlite_master WHERE name = ?1",
                    [name],
                    |r| r.get::<_, i64>(0),
                )
                .unwrap()
                    == 1
            }
            Location::Postgres(_) => pg_test::client(&self.loc)
                .query_one("SELECT to_regclass($1) IS NOT NULL", &[&name])
                .unwrap()
                .get(0),
        }
    }
}

/// Instantiates each named test for both backends.
macro_rules! both_backends {
    ($($name:ident),* $(,)?) => {
        mod sqlite {
            $(#[test] fn $name() { super::$name(super::Backend::Sqlite) })*
        }
        // A real PostgreSQL server: the system tier only.
        #[cfg(feature = "system-tests")]
        mod postgres {
            $(#[test] fn $name() { super::$name(super::Backend::Postgres) })*
        }
    };
}

both_backends!(
    first_occurrence_claims_the_capture_and_later_ones_only_count,
    failed_captures_are_retried_a_few_times_then_not,
    without_capture_nothing_is_claimed,
    status_pending_and_prefix_lookup,
    concurrent_writers_lose_nothing,
    a_newer_schema_is_refused,
    open_existing_creates_nothing_and_reads_what_is_there,
    a_bucket_is_leased_to_one_worker_and_an_expired_lease_is_taken_over,
    a_heartbeat_stops_renewing_at_its_deadline,
    a_version_1_store_is_migrated_and_keeps_its_rows,
    buckets_say_which_machines_and_compilers_hit_them,
    a_case_is_archived_and_fetched_elsewhere,
    a_fleet_store_never_uses_another_machines_case_dir,
    values_are_bound_not_spliced,
    buckets_of_one_coarse_signature_are_related,
);

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

fn first_occurrence_claims_the_capture_and_later_ones_only_count(b: Backend) {
    let f = Fixture::new(b);
    let mut s = f.open();
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
    let case = f.path().join("cases/x");
    std::fs::create_dir_all(&case).unwrap();
    std::fs::write(case.join("case.json"), "{}").unwrap();
    s.attach_case("aaa", Some(a.occurrence), &case).unwrap();
    let c = s
        .record(&key("aaa"), &occ("2026-01-01T00:00:03.000Z"), true)
        .unwrap();
    assert!(!c.capture);
    assert_eq!(c.case_dir.as_deref(), case.to_str());

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

fn failed_captures_are_retried_a_few_times_then_not(b: Backend) {
    let f = Fixture::new(b);
    let mut s = f.open();
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

fn without_capture_nothing_is_claimed(b: Backend) {
    let f = Fixture::new(b);
    let mut s = f.open();
    assert!(
        !s.record(&key("c"), &occ(&now_utc()), false)
            .unwrap()
            .capture
    );
    assert!(s.record(&key("c"), &occ(&now_utc()), true).unwrap().capture);
}

fn status_pending_and_prefix_lookup(b: Backend) {
    let f = Fixture::new(b);
    let mut s = f.open();
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

fn concurrent_writers_lose_nothing(b: Backend) {
    let f = Fixture::new(b);
    let threads = 16;
    let each = 10;
    let claims: usize = std::thread::scope(|sc| {
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                let loc = f.loc.clone();
                sc.spawn(move || {
                    // Every thread opens (and races to create) the store itself, as separate
                    // `icepick wrap` processes do.
                    let mut s = Store::open_at(&loc).unwrap();
                    (0..each)
                        .filter(|_| s.record(&key("d"), &occ(&now_utc()), true).unwrap().capture)
                        .count()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).sum()
    });
    assert_eq!(claims, 1, "one capture per bucket");
    let s = f.open();
    assert_eq!(s.bucket("d").unwrap().unwrap().count, threads * each);
    assert_eq!(s.occurrences("d").unwrap().len() as i64, threads * each);
    assert_eq!(f.version(), SCHEMA_VERSION, "migrated once, to the end");
}

fn a_newer_schema_is_refused(b: Backend) {
    let f = Fixture::new(b);
    drop(f.open());
    f.raw(
        "PRAGMA user_version = 99",
        "INSERT INTO icepick_schema (version) VALUES (99)",
    );
    match Store::open_at(&f.loc) {
        Err(StoreError::TooNew { found: 99, .. }) => {}
        other => panic!("{other:?}"),
    }
    match Store::open_existing_at(&f.loc) {
        Err(StoreError::TooNew { found: 99, .. }) => {}
        other => panic!("{other:?}"),
    }
}

#[test]
fn the_sqlite_store_is_in_wal_mode() {
    let tmp = tempfile::tempdir().unwrap();
    let s = Store::open(tmp.path()).unwrap();
    let mode = s.read("PRAGMA journal_mode", db::vals![]).unwrap()[0].text(0);
    assert_eq!(mode, "wal");
    assert!(tmp.path().join("cases").is_dir());
}

fn open_existing_creates_nothing_and_reads_what_is_there(b: Backend) {
    let f = Fixture::new(b);
    assert!(Store::open_existing_at(&f.loc).unwrap().is_none());
    assert!(!f.has_table("buckets"), "nothing created");
    if let Location::Dir(root) = &f.loc {
        assert!(!root.exists(), "not even the directory");
    }
    let mut s = f.open();
    s.record(&key("a1"), &occ("2026-05-01T00:00:00.000Z"), false)
        .unwrap();
    drop(s);
    let s = Store::open_existing_at(&f.loc).unwrap().unwrap();
    assert_eq!(s.buckets().unwrap().len(), 1);
}

fn a_bucket_is_leased_to_one_worker_and_an_expired_lease_is_taken_over(b: Backend) {
    let f = Fixture::new(b);
    let mut s = f.open();
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

fn a_heartbeat_stops_renewing_at_its_deadline(b: Backend) {
    let f = Fixture::new(b);
    let mut s = f.open();
    s.record(&key("h1"), &occ("2026-01-01T00:00:00.000Z"), false)
        .unwrap();
    let ttl = Duration::from_millis(1500);
    assert!(s.claim("w1", ttl).unwrap().is_some());
    let until = std::time::Instant::now() + Duration::from_millis(2000);
    let beat = super::lease::Heartbeat::start(&f.loc, "h1", "w1", ttl, Some(until));
    // Renewed past the first lease's end while the deadline has not come.
    std::thread::sleep(Duration::from_millis(1800));
    assert!(s.claim("w2", ttl).unwrap().is_none(), "still renewed");
    // Past the deadline and a whole lease: no longer renewed, another worker takes it.
    let mut taken = None;
    for _ in 0..100 {
        std::thread::sleep(Duration::from_millis(100));
        taken = s.claim("w2", ttl).unwrap();
        if taken.is_some() {
            break;
        }
    }
    assert_eq!(taken.map(|b| b.id).as_deref(), Some("h1"));
    drop(beat);
}

fn a_version_1_store_is_migrated_and_keeps_its_rows(b: Backend) {
    let f = Fixture::new(b);
    let rows = "
         INSERT INTO buckets (id, coarse_id, title, kind, first_seen, last_seen, count)
             VALUES ('old', 'c', 't', 'k', '2025-01-01T00:00:00.000Z', '2025-01-01T00:00:00.000Z', 1);
         INSERT INTO occurrences (bucket, time, host, cwd, command, compiler, origin)
             VALUES ('old', '2025-01-01T00:00:00.000Z', 'h', '/w', '[\"cc\"]', 'cc', 'wrap');";
    f.raw(
        &format!(
            "{}{rows} PRAGMA user_version = 1;",
            db::MIGRATIONS[0].sqlite
        ),
        &format!(
            "{}{rows} CREATE TABLE icepick_schema (version BIGINT NOT NULL);
             INSERT INTO icepick_schema (version) VALUES (1);",
            db::MIGRATIONS[0].postgres
        ),
    );
    let existing = Store::open_existing_at(&f.loc).unwrap().unwrap();
    match b {
        // Read-only opening of an older file reads it as empty, and changes nothing.
        Backend::Sqlite => assert!(existing.buckets().unwrap().is_empty()),
        // A fleet's database is brought up to date by whichever client meets it first.
        Backend::Postgres => assert_eq!(existing.buckets().unwrap().len(), 1),
    }
    drop(existing);
    let s = f.open();
    let bucket = s.bucket("old").unwrap().unwrap();
    assert_eq!(
        (bucket.count, bucket.hosts.clone()),
        (1, vec!["h".to_string()])
    );
    assert_eq!(s.occurrences("old").unwrap()[0].user, None);
    assert_eq!(f.version(), SCHEMA_VERSION);
}

fn buckets_say_which_machines_and_compilers_hit_them(b: Backend) {
    let f = Fixture::new(b);
    let mut s = f.open();
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

fn a_case_is_archived_and_fetched_elsewhere(b: Backend) {
    let f = Fixture::new(b);
    let mut s = f.open();
    s.record(&key("f"), &occ(&now_utc()), true).unwrap();
    let case = f.path().join("case");
    std::fs::create_dir_all(&case).unwrap();
    std::fs::write(case.join("case.json"), "{}").unwrap();
    std::fs::write(case.join("report.md"), "# report").unwrap();
    s.attach_case("f", None, &case).unwrap();
    s.store_case("f", &case).unwrap();
    std::fs::remove_dir_all(&case).unwrap();
    let bucket = s.bucket("f").unwrap().unwrap();
    assert!(bucket.archived);
    assert_eq!(
        s.report_text(&bucket, f.path()).as_deref(),
        Some("# report")
    );
    let out = f.path().join("fetched");
    assert!(s.fetch_case(&bucket, &out).unwrap());
    assert_eq!(
        std::fs::read_to_string(out.join("case.json")).unwrap(),
        "{}"
    );
}

fn a_fleet_store_never_uses_another_machines_case_dir(b: Backend) {
    let f = Fixture::new(b);
    let mut s = f.open();
    assert!(s.record(&key("g"), &occ(&now_utc()), true).unwrap().capture);
    // A case directory that exists on this machine but is not in the database.
    let here = f.path().join("local-case");
    std::fs::create_dir_all(&here).unwrap();
    std::fs::write(here.join("case.json"), "{}").unwrap();
    std::fs::write(here.join("report.md"), "# local").unwrap();
    let dir = here.to_string_lossy().into_owned();
    s.write(|tx| {
        tx.exec(
            "UPDATE buckets SET case_dir = ?2 WHERE id = ?1",
            db::vals!["g", dir.as_str()],
        )
    })
    .unwrap();
    let bucket = s.bucket("g").unwrap().unwrap();
    assert!(!bucket.archived);
    let out = f.path().join("out");
    let fetched = s.fetch_case(&bucket, &out).unwrap();
    let report = s.report_text(&bucket, f.path());
    match b {
        // One machine: the case directory is this machine's.
        Backend::Sqlite => {
            assert!(fetched);
            assert_eq!(report.as_deref(), Some("# local"));
        }
        // A fleet: a row's path is another machine's; only the archive counts.
        Backend::Postgres => {
            assert!(!fetched);
            assert!(!out.exists());
        }
    }
}

fn values_are_bound_not_spliced(b: Backend) {
    let f = Fixture::new(b);
    let mut s = f.open();
    let hostile = "x'); DROP TABLE buckets; --";
    let k = BucketKey {
        title: hostile.into(),
        ..key("h1")
    };
    let o = NewOccurrence {
        host: hostile.into(),
        command: vec![hostile.into(), "?1".into(), "$1".into()],
        ..occ(&now_utc())
    };
    s.record(&k, &o, false).unwrap();
    let bucket = s.bucket("h1").unwrap().unwrap();
    assert_eq!(bucket.title, hostile);
    assert_eq!(bucket.hosts, [hostile]);
    assert_eq!(s.occurrences("h1").unwrap()[0].command, o.command);
    assert!(f.has_table("buckets"));
    assert!(s.bucket("h%").unwrap().is_none(), "no LIKE patterns");
}

fn buckets_of_one_coarse_signature_are_related(b: Backend) {
    let f = Fixture::new(b);
    let mut s = f.open();
    let near = |id: &str| BucketKey {
        coarse_id: "shared".into(),
        ..key(id)
    };
    for k in [near("n1"), near("n2"), key("lone")] {
        s.record(&k, &occ("2026-01-01T00:00:01.000Z"), false)
            .unwrap();
    }
    let related = |id: &str| s.bucket(id).unwrap().unwrap().related;
    assert_eq!(related("n1"), ["n2"]);
    assert_eq!(related("n2"), ["n1"]);
    assert!(related("lone").is_empty());
    let listed = s.buckets().unwrap();
    let n1 = listed.iter().find(|b| b.id == "n1").unwrap();
    assert_eq!(n1.related, ["n2"]);
}
