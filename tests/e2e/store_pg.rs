//! A fleet's crash store in PostgreSQL, and triage workers with leases on both backends.
//!
//! The PostgreSQL tests start Debian's PostgreSQL 15 themselves: `initdb` into a temporary
//! directory and `postgres` listening on a Unix socket there only (no TCP), run as `nobody`
//! (the server refuses root), with a password (scram-sha-256) so that the tests can check it
//! never shows. One server serves every test of the run (a `OnceLock`); each test has a
//! database of its own. A watchdog shell kills the server when the test process is gone,
//! however it ended (`kill -9` included) and removes its directory.
//!
//! "Machines" are real: each wrap runs in a UTS namespace of its own (`unshare --uts` +
//! `hostname`), so the host name recorded is that machine's own, and each machine has a cache
//! directory of its own (`ICEPICK_CACHE`: spool and local case copies).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::OnceLock;

use crate::store::CRASH_CPP;
use crate::util::*;

const PG_BIN: &str = "/usr/lib/postgresql/15/bin";
/// The database password: no output of icepick may contain it.
const PASSWORD: &str = "Sw0rdf1sh-e2e-Zq7";

struct PgServer {
    /// The directory holding the socket (and the data directory).
    dir: PathBuf,
    /// The watchdog shell (never waited for: it outlives the tests on purpose).
    _watchdog: Child,
}

/// Runs `program args` as `nobody`.
fn as_nobody(program: &str) -> Command {
    let mut c = Command::new("setpriv");
    c.args([
        "--reuid=nobody",
        "--regid=nogroup",
        "--clear-groups",
        "--",
        program,
    ]);
    c
}

fn server() -> &'static PgServer {
    static SERVER: OnceLock<PgServer> = OnceLock::new();
    SERVER.get_or_init(|| {
        // Under /tmp itself, not $TMPDIR: the server runs as `nobody`, which must be able to
        // reach its directory, and a private TMPDIR (scripts/test makes one, mode 0700) is
        // closed to it. The watchdog removes the directory when the tests are gone.
        let dir = tempfile::Builder::new()
            .prefix("icepick-pg-")
            .tempdir_in("/tmp")
            .unwrap()
            .keep();
        let chown = |p: &Path| {
            let o = Command::new("chown")
                .args(["-R", "nobody:nogroup"])
                .arg(p)
                .output()
                .unwrap();
            expect_success(&o);
        };
        std::fs::write(dir.join("pw"), PASSWORD).unwrap();
        chown(&dir);
        let o = as_nobody(&format!("{PG_BIN}/initdb"))
            .arg("-D")
            .arg(dir.join("data"))
            .args([
                "-U",
                "fleet",
                "--auth=scram-sha-256",
                "-E",
                "UTF8",
                "--no-sync",
            ])
            .arg(format!("--pwfile={}", dir.join("pw").display()))
            .output()
            .unwrap();
        expect_success(&o);
        std::fs::remove_file(dir.join("pw")).unwrap();
        // The watchdog: starts the server, waits for this test process to be gone, kills
        // the server and removes the directory.
        let script = r#"
            "$3" "$4/postgres" -D "$2/data" -k "$2" -h '' -c fsync=off -c max_connections=200 \
                >"$2/server.log" 2>&1 &
            pg=$!
            while kill -0 "$1" 2>/dev/null; do sleep 0.5; done
            kill -9 "$pg"; wait "$pg"; rm -rf "$2"
        "#;
        let wrapper = dir.join("as-nobody");
        write_executable(
            &wrapper,
            "#!/bin/sh\nexec setpriv --reuid=nobody --regid=nogroup --clear-groups -- \"$@\"\n",
        );
        let watchdog = {
            use std::os::unix::process::CommandExt;
            Command::new("sh")
                .args(["-c", script, "watchdog"])
                .arg(std::process::id().to_string())
                .arg(&dir)
                .arg(&wrapper)
                .arg(PG_BIN)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .process_group(0)
                .spawn()
                .unwrap()
        };
        // Ready when it accepts a connection.
        for _ in 0..600 {
            if connect(&dir, "postgres").is_ok() {
                return PgServer {
                    dir,
                    _watchdog: watchdog,
                };
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        panic!(
            "PostgreSQL did not start: {}",
            std::fs::read_to_string(dir.join("server.log")).unwrap_or_default()
        );
    })
}

fn connect(dir: &Path, db: &str) -> Result<postgres::Client, postgres::Error> {
    postgres::Config::new()
        .host_path(dir)
        .user("fleet")
        .password(PASSWORD)
        .dbname(db)
        .connect(postgres::NoTls)
}

/// An administrator's connection to the server, and `name`'s database dropped if it exists.
fn no_database(name: &str) -> postgres::Client {
    let mut c = connect(&server().dir, "postgres").unwrap();
    c.batch_execute(&format!("DROP DATABASE IF EXISTS {name}"))
        .unwrap();
    c
}

/// A fresh database for one test; its URL.
pub(crate) fn database(name: &str) -> String {
    no_database(name)
        .batch_execute(&format!("CREATE DATABASE {name}"))
        .unwrap();
    url(name)
}

fn url(db: &str) -> String {
    format!(
        "postgresql://fleet:{PASSWORD}@localhost/{db}?host={}",
        server().dir.display()
    )
}

/// `icepick ARGS` in `cwd` on "machine" `cache` (its own cache directory) with the store
/// `store` (a URL or a directory).
pub(crate) fn icepick_at(store: &str, cache: &Path, cwd: &Path, args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .current_dir(cwd)
        .env("ICEPICK_STORE", store)
        .env("ICEPICK_CACHE", cache)
        .output()
        .unwrap()
}

pub(crate) fn json_of(o: &Output) -> serde_json::Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not one JSON object ({e}): {}\nstderr: {}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        )
    })
}

/// Everything a command printed, for the password check.
fn printed(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

#[track_caller]
fn no_password(text: &str) {
    assert!(
        !text.contains(PASSWORD),
        "the password was printed:\n{text}"
    );
}

/// A crashing compile through `icepick wrap` on machine `host` (a UTS namespace of its own).
fn wrap_on(host: &str, store: &str, cache: &Path, cwd: &Path, object: &str) -> Child {
    Command::new("unshare")
        .args([
            "--uts",
            "sh",
            "-c",
            "hostname \"$1\" && shift && exec \"$@\"",
            "sh",
        ])
        .arg(host)
        .args([BIN, "wrap", "clang++-16", "-c", "crash.cpp", "-o", object])
        .current_dir(cwd)
        .env("ICEPICK_STORE", store)
        .env("ICEPICK_CACHE", cache)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// The end of a [`wrap_on`]: the compiler's exit code (clang-16's driver exits 1 on a
/// crash) comes back unchanged, and icepick printed exactly one line, without the password.
/// That line.
#[track_caller]
fn wrapped(c: Child) -> String {
    let o = c.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "the compiler's exit code: {err}");
    no_password(&err);
    let ours: Vec<&str> = err.lines().filter(|l| l.starts_with("icepick:")).collect();
    assert_eq!(ours.len(), 1, "{err}");
    ours[0].to_string()
}

#[test]
fn pg_thirty_two_crashes_from_four_machines_make_one_bucket() {
    let store = database("four_machines");
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("crash.cpp"), CRASH_CPP).unwrap();
    let machines = ["builder-a", "builder-b", "builder-c", "builder-d"];
    let children: Vec<Child> = (0..32)
        .map(|i| {
            let host = machines[i % 4];
            wrap_on(
                host,
                &store,
                &tmp.path().join(format!("cache-{host}")),
                tmp.path(),
                &format!("c{i}.o"),
            )
        })
        .collect();
    let mut captured = 0;
    for c in children {
        let ours = wrapped(c);
        for bad in ["could not", "serializ", "deadlock"] {
            assert!(!ours.contains(bad), "{ours}");
        }
        captured += ours.contains("crash captured as bucket") as usize;
    }
    assert_eq!(captured, 1, "one capture for the fleet");

    // Any machine sees the whole picture; --store works like ICEPICK_STORE.
    let elsewhere = tmp.path().join("cache-laptop");
    let o = Command::new(BIN)
        .args(["list", "--json", "--store", &store])
        .env_remove("ICEPICK_STORE")
        .env("ICEPICK_CACHE", &elsewhere)
        .output()
        .unwrap();
    expect_success(&o);
    no_password(&printed(&o));
    let v = json_of(&o);
    assert!(v["store"].as_str().unwrap().contains("fleet:***@"), "{v:#}");
    let b = v["buckets"].as_array().unwrap();
    assert_eq!(b.len(), 1, "{v:#}");
    assert_eq!(b[0]["count"], 32);
    assert_eq!(b[0]["hosts"], serde_json::json!(machines));
    assert!(b[0]["archived"].as_bool().unwrap(), "{v:#}");
    let versions = b[0]["compiler_versions"].as_array().unwrap();
    assert_eq!(versions.len(), 1);
    assert!(versions[0].as_str().unwrap().contains("clang version 16"));
    let id = b[0]["id"].as_str().unwrap().to_string();

    // The case, captured on one builder, materialises on another machine.
    let fetched = tmp.path().join("fetched");
    let o = icepick_at(
        &store,
        &elsewhere,
        tmp.path(),
        &["show", &id, "--json", "--fetch", fetched.to_str().unwrap()],
    );
    expect_success(&o);
    no_password(&printed(&o));
    let shown = json_of(&o);
    assert_eq!(shown["occurrences"].as_array().unwrap().len(), 32);
    let case = read_case(&fetched);
    assert_eq!(case["status"], "captured", "{case:#}");
    let repro = run_repro(&fetched);
    assert!(
        !repro.status.success(),
        "the fetched case reproduces the crash"
    );

    // The human list and the dashboard say how many machines and which compilers.
    let o = icepick_at(&store, &elsewhere, tmp.path(), &["list"]);
    expect_success(&o);
    let text = String::from_utf8_lossy(&o.stdout);
    let row = text.lines().find(|l| l.starts_with(&id)).unwrap();
    assert_eq!(row.split_whitespace().nth(2), Some("4"), "{text}");
    assert!(
        text.contains("compilers: Debian clang version 16"),
        "{text}"
    );
    let out = tmp.path().join("dashboard");
    let o = icepick_at(
        &store,
        &elsewhere,
        tmp.path(),
        &["dashboard", "--out", out.to_str().unwrap()],
    );
    expect_success(&o);
    no_password(&printed(&o));
    let index = std::fs::read_to_string(out.join("index.html")).unwrap();
    no_password(&index);
    assert!(index.contains("<td class=\"machines\">4</td>"), "{index}");
    assert!(index.contains("fleet:***@"), "the store is named, redacted");
}

#[test]
fn pg_unreachable_store_spools_without_changing_the_build_and_flush_sends() {
    // The database does not exist yet: the store cannot be reached.
    let name = "down_then_up";
    let mut admin = no_database(name);
    let store = url(name);
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("crash.cpp"), CRASH_CPP).unwrap();
    let cache = tmp.path().join("cache");
    let ours = wrapped(wrap_on("builder-z", &store, &cache, tmp.path(), "a.o"));
    assert!(ours.contains("cannot be reached"), "{ours}");
    assert!(ours.contains("store flush"), "{ours}");
    // The same for a compile that does not crash: untouched, nothing printed.
    std::fs::write(tmp.path().join("ok.cpp"), "int f() { return 1; }\n").unwrap();
    let o = icepick_at(
        &store,
        &cache,
        tmp.path(),
        &["wrap", "clang++-16", "-c", "ok.cpp", "-o", "ok.o"],
    );
    expect_success(&o);
    assert!(o.stderr.is_empty());

    let o = icepick_at(&store, &cache, tmp.path(), &["store", "status", "--json"]);
    no_password(&printed(&o));
    assert_eq!(o.status.code(), Some(1), "{}", printed(&o));
    assert_eq!(json_of(&o)["spooled"], 1);
    let o = icepick_at(&store, &cache, tmp.path(), &["store", "flush"]);
    assert_ne!(o.status.code(), Some(0), "still down");
    no_password(&printed(&o));

    // Up again: flush sends it, once.
    admin
        .batch_execute(&format!("CREATE DATABASE {name}"))
        .unwrap();
    let o = icepick_at(&store, &cache, tmp.path(), &["store", "flush", "--json"]);
    expect_success(&o);
    no_password(&printed(&o));
    assert_eq!(json_of(&o)["sent"], 1);
    let o = icepick_at(&store, &cache, tmp.path(), &["store", "flush", "--json"]);
    assert_eq!(json_of(&o)["sent"], 0);
    let o = icepick_at(&store, &cache, tmp.path(), &["list", "--json"]);
    let v = json_of(&o);
    assert_eq!(v["buckets"][0]["count"], 1, "{v:#}");
    assert_eq!(v["buckets"][0]["hosts"], serde_json::json!(["builder-z"]));

    // A wrong password is refused, and not printed either.
    let bad = store.replace(PASSWORD, "not-the-Password-42");
    let o = icepick_at(&bad, &cache, tmp.path(), &["list"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        !printed(&o).contains("not-the-Password-42"),
        "{}",
        printed(&o)
    );
}

/// Records one crash (captured) in `store` and returns the bucket id.
fn one_crash(store: &str, cache: &Path, dir: &Path) -> String {
    std::fs::write(dir.join("crash.cpp"), CRASH_CPP).unwrap();
    let ours = wrapped(wrap_on("builder-a", store, cache, dir, "a.o"));
    assert!(ours.contains("icepick: crash captured as bucket"), "{ours}");
    let o = icepick_at(store, cache, dir, &["list", "--json"]);
    json_of(&o)["buckets"][0]["id"]
        .as_str()
        .unwrap()
        .to_string()
}

fn worker(store: &str, cache: &Path, cwd: &Path, lease: &str) -> Command {
    let mut c = Command::new(BIN);
    c.args([
        "triage",
        "--pending",
        "--worker",
        "--once",
        "--jobs",
        "1",
        "--json",
        "--lease",
        lease,
    ])
    .current_dir(cwd)
    .env("ICEPICK_STORE", store)
    .env("ICEPICK_CACHE", cache)
    .stdout(Stdio::piped())
    .stderr(Stdio::piped());
    c
}

/// Two workers on one pending bucket: it is triaged once.
fn two_workers_triage_a_bucket_once(store: &str, tmp: &Path) {
    let id = one_crash(store, &tmp.join("cache-a"), tmp);
    let workers: Vec<Child> = ["w1", "w2"]
        .iter()
        .map(|w| {
            worker(store, &tmp.join(format!("cache-{w}")), tmp, "60")
                .spawn()
                .unwrap()
        })
        .collect();
    let mut rows = Vec::new();
    for w in workers {
        let o = w.wait_with_output().unwrap();
        expect_success(&o);
        no_password(&printed(&o));
        rows.extend(json_of(&o)["buckets"].as_array().unwrap().clone());
    }
    assert_eq!(rows.len(), 1, "one worker took it: {rows:#?}");
    assert_eq!(rows[0]["id"], id.as_str());
    assert_eq!(rows[0]["status"], "triaged", "{rows:#?}");
    let o = icepick_at(store, &tmp.join("cache-b"), tmp, &["show", &id, "--json"]);
    let v = json_of(&o);
    assert_eq!(v["bucket"]["status"], "triaged");
    assert!(v["bucket"]["lease_owner"].is_null(), "{v:#}");
    // The triaged case (reduced, with its report) is what any machine fetches.
    let fetched = tmp.join("fetched");
    let o = icepick_at(
        store,
        &tmp.join("cache-c"),
        tmp,
        &["show", &id, "--fetch", fetched.to_str().unwrap()],
    );
    expect_success(&o);
    let case = read_case(&fetched);
    assert_eq!(case["reduction"]["verified"], true, "{case:#}");
    assert!(fetched.join("report.md").is_file());
    // The dashboard of the store (the case on this machine, or in the database) shows the
    // case's reduction picture on the bucket page, as Chromium loads it, and the bucket's
    // sparkline on the index.
    let out = tmp.join("dashboard");
    let o = icepick_at(
        store,
        &tmp.join("cache-d"),
        tmp,
        &["dashboard", "--out", out.to_str().unwrap()],
    );
    expect_success(&o);
    let svg = std::fs::read(fetched.join("reduction.svg")).expect("the case drew its reduction");
    let page = crate::dashboard::dump_dom(&out.join(format!("buckets/{id}.html")));
    crate::dashboard::check_reduction_image(&page, &svg, tmp, "reduction");
    let index = crate::dashboard::dump_dom(&out.join("index.html"));
    let counts = [(id.clone(), 1)].into_iter().collect();
    crate::dashboard::check_sparklines(&index, &counts, tmp);
}

/// Three crashes of three different kinds, recorded (and captured) through `icepick wrap`
/// with clang++-16 on "machine" builder-a: three pending buckets. Their ids.
fn three_pending_buckets(store: &str, cache: &Path, dir: &Path) -> Vec<String> {
    let sources = [
        ("crash.cpp", CRASH_CPP),
        ("pragma-crash.cpp", "#pragma clang __debug crash\nint x;\n"),
        (
            "pragma-fatal.cpp",
            "#pragma clang __debug llvm_fatal_error\nint x;\n",
        ),
    ];
    for (name, text) in sources {
        std::fs::write(dir.join(name), text).unwrap();
        let object = format!("{name}.o");
        let o = icepick_at(
            store,
            cache,
            dir,
            &["wrap", "clang++-16", "-c", name, "-o", &object],
        );
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains("icepick: crash captured as bucket"), "{err}");
    }
    let o = icepick_at(store, cache, dir, &["list", "--json"]);
    let v = json_of(&o);
    let ids: Vec<String> = v["buckets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(ids.len(), 3, "three bugs, three buckets: {v:#}");
    ids
}

/// Three workers on three pending buckets, one of them killed with `kill -9` (with the
/// compilers it runs) mid-triage: its bucket is finished by another worker once its lease
/// expires, every bucket is triaged exactly once, and nothing is lost.
fn three_workers_on_three_buckets_one_killed(store: &str, tmp: &Path) {
    use std::os::unix::process::CommandExt;
    let ids = three_pending_buckets(store, &tmp.join("cache-a"), tmp);
    // The doomed worker's lease is short, so that its bucket is free soon after the kill;
    // the others' is long enough that no heartbeat on a loaded machine misses it.
    let mut doomed = worker(store, &tmp.join("cache-doomed"), tmp, "3")
        .process_group(0)
        .spawn()
        .unwrap();
    let survivors: Vec<Child> = ["w1", "w2"]
        .iter()
        .map(|w| {
            worker(store, &tmp.join(format!("cache-{w}")), tmp, "60")
                .spawn()
                .unwrap()
        })
        .collect();
    // Wait until the doomed worker holds a bucket (it is then triaging it), then kill its
    // "machine": the worker and every compiler it runs.
    let marker = format!(":{}:", doomed.id());
    let (held_bucket, held_by) = loop {
        let o = icepick_at(store, &tmp.join("cache-b"), tmp, &["list", "--json"]);
        let v = json_of(&o);
        let found = v["buckets"].as_array().unwrap().iter().find_map(|b| {
            let owner = b["lease_owner"].as_str()?;
            owner
                .contains(&marker)
                .then(|| (b["id"].as_str().unwrap().to_string(), owner.to_string()))
        });
        if let Some(f) = found {
            break f;
        }
        assert!(
            doomed.try_wait().unwrap().is_none(),
            "the doomed worker ended before it took a bucket"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    };
    // SAFETY: kill of our own child's process group.
    unsafe { libc::kill(-(doomed.id() as i32), libc::SIGKILL) };
    let _ = doomed.wait();

    // The survivors (`--once`) keep going until no bucket is left `new`: the dead worker's
    // included, once its lease has run out.
    let mut rows = Vec::new();
    for w in survivors {
        let o = w.wait_with_output().unwrap();
        expect_success(&o);
        no_password(&printed(&o));
        rows.extend(json_of(&o)["buckets"].as_array().unwrap().clone());
    }
    for id in &ids {
        let mine: Vec<_> = rows.iter().filter(|r| r["id"] == id.as_str()).collect();
        assert_eq!(mine.len(), 1, "bucket {id} triaged exactly once: {rows:#?}");
        assert_eq!(mine[0]["status"], "triaged", "{rows:#?}");
    }
    assert_eq!(rows.len(), 3, "no bucket lost or done twice: {rows:#?}");
    let rescued = rows
        .iter()
        .find(|r| r["id"] == held_bucket.as_str())
        .unwrap();
    assert_ne!(rescued["worker"].as_str().unwrap(), held_by);

    // Nothing lost: every bucket triaged, free, its one occurrence kept, its case
    // (reduced, with the report) fetchable from any machine.
    let o = icepick_at(store, &tmp.join("cache-b"), tmp, &["list", "--json"]);
    let v = json_of(&o);
    for b in v["buckets"].as_array().unwrap() {
        assert_eq!(b["status"], "triaged", "{v:#}");
        assert!(b["lease_owner"].is_null(), "{v:#}");
        assert_eq!(b["count"], 1, "{v:#}");
    }
    let fetched = tmp.join("fetched-rescued");
    let o = icepick_at(
        store,
        &tmp.join("cache-c"),
        tmp,
        &["show", &held_bucket, "--fetch", fetched.to_str().unwrap()],
    );
    expect_success(&o);
    assert_eq!(read_case(&fetched)["reduction"]["verified"], true);
    assert!(fetched.join("report.md").is_file());
}

#[test]
fn pg_two_workers_on_one_pending_bucket_triage_it_once() {
    let store = database("two_workers");
    let tmp = tempfile::tempdir().unwrap();
    two_workers_triage_a_bucket_once(&store, tmp.path());
}

#[test]
fn pg_three_workers_on_three_buckets_one_killed_each_triaged_once() {
    let store = database("three_workers");
    let tmp = tempfile::tempdir().unwrap();
    three_workers_on_three_buckets_one_killed(&store, tmp.path());
}

#[test]
fn sqlite_two_workers_on_one_pending_bucket_triage_it_once() {
    let tmp = tempfile::tempdir().unwrap();
    let store = tmp.path().join("store");
    two_workers_triage_a_bucket_once(store.to_str().unwrap(), tmp.path());
}

#[test]
fn sqlite_three_workers_on_three_buckets_one_killed_each_triaged_once() {
    let tmp = tempfile::tempdir().unwrap();
    let store = tmp.path().join("store");
    three_workers_on_three_buckets_one_killed(store.to_str().unwrap(), tmp.path());
}

#[test]
fn pg_show_fetch_of_a_hostile_archive_writes_nothing_outside_the_directory() {
    let store = database("hostile_archive");
    let tmp = tempfile::tempdir().unwrap();
    let id = one_crash(&store, &tmp.path().join("cache"), tmp.path());
    // Someone with write access to the database plants an archive that climbs out.
    let mut c = connect(&server().dir, "hostile_archive").unwrap();
    let evil = {
        use std::io::Write;
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(b"ICEPICK-CASE 1\n").unwrap();
        for (path, data) in [("case.json", &b"{}"[..]), ("../escaped", b"pwned")] {
            gz.write_all(&(path.len() as u32).to_be_bytes()).unwrap();
            gz.write_all(path.as_bytes()).unwrap();
            gz.write_all(&0o644u32.to_be_bytes()).unwrap();
            gz.write_all(&(data.len() as u64).to_be_bytes()).unwrap();
            gz.write_all(data).unwrap();
        }
        gz.write_all(&0u32.to_be_bytes()).unwrap();
        gz.finish().unwrap()
    };
    c.execute(
        "UPDATE case_archives SET archive = $1 WHERE bucket = $2",
        &[&evil, &id],
    )
    .unwrap();
    let into = tmp.path().join("into");
    let o = icepick_at(
        &store,
        &tmp.path().join("cache2"),
        tmp.path(),
        &["show", &id, "--fetch", into.to_str().unwrap()],
    );
    assert_eq!(o.status.code(), Some(1), "{}", printed(&o));
    assert!(
        printed(&o).contains("not a plain relative path"),
        "{}",
        printed(&o)
    );
    assert!(!tmp.path().join("escaped").exists());
    no_password(&printed(&o));
}

/// A password with `/`, `?` and `#` (the driver takes the user info up to the first `@`, so
/// such a URL connects): no output, no dashboard page and no spool file holds it, and a spool
/// file is its user's only.
#[test]
fn pg_password_with_url_delimiters_is_never_printed() {
    const HOSTILE_PW: &str = "S3cr/et?P#w-Xq9";
    let name = "pw_delims";
    let plain = database(name);
    let mut admin = connect(&server().dir, "postgres").unwrap();
    admin
        .batch_execute(&format!(
            "DROP ROLE IF EXISTS pwdelims; CREATE ROLE pwdelims LOGIN PASSWORD '{HOSTILE_PW}'; \
             ALTER DATABASE {name} OWNER TO pwdelims"
        ))
        .unwrap();
    let _ = plain;
    let store = format!(
        "postgresql://pwdelims:{HOSTILE_PW}@localhost/{name}?host={}",
        server().dir.display()
    );
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("crash.cpp"), CRASH_CPP).unwrap();
    let cache = tmp.path().join("cache");
    let check = |text: &str| {
        for part in [HOSTILE_PW, "S3cr", "et?P#w"] {
            assert!(!text.contains(part), "the password was printed:\n{text}");
        }
    };
    let line = wrapped(wrap_on("builder-p", &store, &cache, tmp.path(), "a.o"));
    check(&line);
    assert!(line.contains("bucket"), "{line}");
    let out = tmp.path().join("dash");
    for args in [
        &["store", "status"][..],
        &["store", "status", "--json"],
        &["list"],
        &["list", "--json"],
        &["dashboard", "--out", out.to_str().unwrap()],
    ] {
        let o = icepick_at(&store, &cache, tmp.path(), args);
        check(&printed(&o));
        assert_eq!(o.status.code(), Some(0), "{args:?}: {}", printed(&o));
    }
    for e in std::fs::read_dir(&out).unwrap() {
        let p = e.unwrap().path();
        if p.is_file() {
            check(&std::fs::read_to_string(&p).unwrap());
        }
    }
    // The same password on a database that is not there: errors and the spool hold none of it.
    let down = store.replace(name, "pw_delims_missing");
    let o = icepick_at(&down, &cache, tmp.path(), &["list", "--json"]);
    assert_ne!(o.status.code(), Some(0));
    check(&printed(&o));
    let line = wrapped(wrap_on("builder-p", &down, &cache, tmp.path(), "b.o"));
    check(&line);
    assert!(line.contains("cannot be reached"), "{line}");
    let mut spooled = 0;
    for d in std::fs::read_dir(cache.join("spool")).unwrap() {
        for f in std::fs::read_dir(d.unwrap().path()).unwrap() {
            use std::os::unix::fs::PermissionsExt;
            let p = f.unwrap().path();
            let mode = std::fs::metadata(&p).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o600, "{}", p.display());
            check(&std::fs::read_to_string(&p).unwrap());
            spooled += 1;
        }
    }
    assert_eq!(spooled, 1);
}
