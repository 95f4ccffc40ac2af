//! Opening a SQLite store file: WAL, busy timeout, retries while another process
//! creates it.

use std::path::Path;
use std::time::Duration;

use rusqlite::{Connection, OpenFlags};

use super::db::BUSY_TIMEOUT;

/// Opens `db`; with `create`, creating it and switching it to WAL.
pub fn open(db: &Path, create: bool) -> rusqlite::Result<Connection> {
    let conn = if create {
        Connection::open(db)?
    } else {
        // Read-write without create, so the WAL's shared memory works as for any reader.
        // A store this user may not write (a colleague's, a read-only mount) is read as
        // it is: SQLite would open it "read-write" anyway and fail at the first read that
        // needs the WAL index, so it is opened read-only, and when even that cannot set up
        // the WAL index (no -shm and no right to make one), as an immutable file.
        let flags = OpenFlags::SQLITE_OPEN_NO_MUTEX | OpenFlags::SQLITE_OPEN_URI;
        if may_write(db) {
            Connection::open_with_flags(db, flags | OpenFlags::SQLITE_OPEN_READ_WRITE)?
        } else {
            let ro = flags | OpenFlags::SQLITE_OPEN_READ_ONLY;
            match Connection::open_with_flags(db, ro) {
                Ok(c)
                    if c.query_row("PRAGMA user_version", [], |r| r.get::<_, i64>(0))
                        .is_ok() =>
                {
                    c
                }
                _ => Connection::open_with_flags(immutable_uri(db), ro)?,
            }
        }
    };
    conn.busy_timeout(BUSY_TIMEOUT)?;
    if create {
        // Switching to WAL takes an exclusive lock; while dozens of processes open a
        // new store at once some see SQLITE_BUSY here without the busy handler, so
        // retry.
        retry_busy(|| {
            conn.query_row("PRAGMA journal_mode = WAL", [], |r| r.get::<_, String>(0))
                .map(|_| ())
        })?;
        conn.execute_batch("PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON;")?;
    }
    Ok(conn)
}

/// Whether this user may write `db` and make files beside it (the WAL and its index).
fn may_write(db: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let ok = |p: &Path| {
        std::ffi::CString::new(p.as_os_str().as_bytes())
            // SAFETY: a valid NUL-terminated path; access reads nothing of ours.
            .is_ok_and(|c| unsafe { libc::access(c.as_ptr(), libc::W_OK) } == 0)
    };
    let dir = db
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    ok(db) && ok(dir)
}

/// `file:PATH?immutable=1`: SQLite reads the file without locks or WAL index (it cannot
/// make one), as a snapshot.
fn immutable_uri(db: &Path) -> String {
    use std::os::unix::ffi::OsStrExt;
    let abs = std::path::absolute(db).unwrap_or_else(|_| db.to_owned());
    let mut uri = String::from("file:");
    for &b in abs.as_os_str().as_bytes() {
        if b.is_ascii_alphanumeric() || b"/-._~".contains(&b) {
            uri.push(b as char);
        } else {
            uri.push_str(&format!("%{b:02X}"));
        }
    }
    uri.push_str("?immutable=1");
    uri
}

/// Retries `f` while SQLite says the database is busy or locked, for up to the busy
/// timeout: for the statements the busy handler does not cover (changing the journal
/// mode while another process creates the database). `BEGIN IMMEDIATE` waits in the
/// busy handler.
pub fn retry_busy<T>(mut f: impl FnMut() -> rusqlite::Result<T>) -> rusqlite::Result<T> {
    let start = std::time::Instant::now();
    let mut wait = Duration::from_millis(2);
    loop {
        match f() {
            Err(rusqlite::Error::SqliteFailure(e, _))
                if matches!(
                    e.code,
                    rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked
                ) && start.elapsed() < BUSY_TIMEOUT =>
            {
                std::thread::sleep(wait);
                wait = (wait * 2).min(Duration::from_millis(100));
            }
            r => return r,
        }
    }
}
