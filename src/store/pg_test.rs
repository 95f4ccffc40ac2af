//! A PostgreSQL server for the store's unit tests, so that one suite runs against both
//! backends (`tests.rs`).
//!
//! Debian's PostgreSQL 15 (`/usr/lib/postgresql/15/bin`, installed by `scripts/setup`) is
//! started once per test process (a `OnceLock`): `initdb` into a directory under `/tmp`, the
//! server listening on a Unix socket there only (no TCP), run as `nobody` because the server
//! refuses root. Each test gets a database of its own ([`database`]).
//!
//! Nothing outlives the test process: the server runs through [`crate::exec`] on a thread
//! that waits for it all the process's life, so exec's guardian kills its process group when
//! the process is gone, `kill -9` included (PR_SET_PDEATHSIG cannot be the only line here:
//! `setpriv` changes the credentials, which clears it). On a normal exit an `atexit` hook
//! kills it and removes its directory; a directory left by a killed run (its pid is gone) is
//! removed by the next run. The directory is under `/tmp` rather than `$TMPDIR`: `nobody`
//! must reach it, and `scripts/test`'s TMPDIR is private (0700).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Mutex, OnceLock};
use std::time::Duration;

use super::Location;
use crate::exec::{self, Cmd};

const PG_BIN: &str = "/usr/lib/postgresql/15/bin";
/// Prefix of the server directories under `/tmp`: `icepick-pgunit-<pid>-<random>`.
const PREFIX: &str = "icepick-pgunit-";
/// The database superuser the tests connect as (trust authentication on the private socket).
const USER: &str = "icepick";

struct Server {
    /// Holds the socket and `data/`.
    dir: PathBuf,
}

/// The server's directory, for the `atexit` hook.
static DIR: Mutex<Option<PathBuf>> = Mutex::new(None);

/// `program args…` as `nobody`.
fn as_nobody(program: &str) -> Cmd {
    Cmd::new("setpriv").args([
        "--reuid=nobody",
        "--regid=nogroup",
        "--clear-groups",
        "--",
        program,
    ])
}

#[track_caller]
fn ok(cmd: &Cmd) {
    let o = exec::run(cmd).unwrap_or_else(|e| panic!("{:?}: {e}", cmd.program));
    assert!(
        o.success(),
        "{:?} {:?}: {:?}\n{}",
        cmd.program,
        cmd.args,
        o.status,
        o.stderr_text()
    );
}

/// Removes server directories of test processes that are gone (killed before `atexit`).
fn sweep_stale() {
    let Ok(entries) = std::fs::read_dir("/tmp") else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(pid) = name
            .strip_prefix(PREFIX)
            .and_then(|r| r.split('-').next())
            .and_then(|p| p.parse::<libc::pid_t>().ok())
        else {
            continue;
        };
        // SAFETY: signal 0 only checks whether the process exists.
        let gone = unsafe { libc::kill(pid, 0) } != 0
            && std::io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH);
        if gone {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
}

extern "C" fn at_exit() {
    let dir = DIR.lock().unwrap_or_else(|e| e.into_inner()).take();
    let Some(dir) = dir else { return };
    // The postmaster's pid is the first line of postmaster.pid; its backends follow it.
    if let Some(pid) = std::fs::read_to_string(dir.join("data/postmaster.pid"))
        .ok()
        .and_then(|t| t.lines().next().and_then(|l| l.trim().parse::<i32>().ok()))
    {
        // SAFETY: kill(2) of the server this process started.
        unsafe { libc::kill(pid, libc::SIGKILL) };
    }
    let _ = std::fs::remove_dir_all(&dir);
}

fn connect(dir: &Path, db: &str) -> Result<postgres::Client, postgres::Error> {
    postgres::Config::new()
        .host_path(dir)
        .user(USER)
        .dbname(db)
        .connect(postgres::NoTls)
}

fn server() -> &'static Server {
    static SERVER: OnceLock<Server> = OnceLock::new();
    SERVER.get_or_init(|| {
        sweep_stale();
        let dir = tempfile::Builder::new()
            .prefix(&format!("{PREFIX}{}-", std::process::id()))
            .tempdir_in("/tmp")
            .expect("a directory under /tmp")
            .keep();
        *DIR.lock().unwrap() = Some(dir.clone());
        // SAFETY: registers a plain extern "C" function.
        unsafe { libc::atexit(at_exit) };
        let (d, data) = (
            dir.to_string_lossy().into_owned(),
            dir.join("data").to_string_lossy().into_owned(),
        );
        ok(&Cmd::new("chown").args(["nobody:nogroup", &d]));
        ok(&as_nobody(&format!("{PG_BIN}/initdb"))
            .args([
                "-D",
                &data,
                "-U",
                USER,
                "--auth=trust",
                "-E",
                "UTF8",
                "--no-sync",
            ])
            .timeout(Duration::from_secs(300)));
        let postgres = as_nobody(&format!("{PG_BIN}/postgres"))
            .args(["-D", &data, "-k", &d, "-h", ""])
            .args(["-c", "fsync=off", "-c", "max_connections=200"])
            // As long as the test process lives.
            .timeout(Duration::from_secs(7 * 24 * 3600))
            .output_cap(1 << 16);
        let (done_tx, done) = mpsc::channel();
        std::thread::Builder::new()
            .name("postgres".into())
            .spawn(move || {
                let _ = done_tx.send(exec::run(&postgres));
            })
            .expect("a thread");
        for _ in 0..600 {
            if connect(&dir, "postgres").is_ok() {
                return Server { dir };
            }
            if let Ok(r) = done.try_recv() {
                panic!(
                    "PostgreSQL ended: {:?}",
                    r.map(|o| (o.status, o.stderr_text()))
                );
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        panic!("PostgreSQL did not accept connections within 60 s");
    })
}

/// A fresh, empty database for one test: its location (a `postgresql://` URL).
pub(crate) fn database() -> Location {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let s = server();
    let name = format!("t{}", NEXT.fetch_add(1, Ordering::SeqCst));
    let mut c = connect(&s.dir, "postgres").expect("the server accepts connections");
    // A name of this process's own making, not input.
    c.batch_execute(&format!("CREATE DATABASE {name}"))
        .expect("a database");
    Location::parse(
        format!(
            "postgresql://{USER}@localhost/{name}?host={}",
            s.dir.display()
        )
        .as_ref(),
    )
}

/// A client of a test's database, for what the store does not do itself (planting an older
/// schema, checking rows).
pub(crate) fn client(loc: &Location) -> postgres::Client {
    let Location::Postgres(url) = loc else {
        panic!("not a PostgreSQL location: {loc}")
    };
    url.config().unwrap().connect(postgres::NoTls).unwrap()
}
