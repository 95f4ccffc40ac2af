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
        // Read-write without create, so the WAL's shared memory works as for any
        // reader; a store this user may not write (a colleague's, a read-only mount)
        // is read as is.
        let flags = OpenFlags::SQLITE_OPEN_NO_MUTEX | OpenFlags::SQLITE_OPEN_URI;
        Connection::open_with_flags(db, flags | OpenFlags::SQLITE_OPEN_READ_WRITE).or_else(
            |_| Connection::open_with_flags(db, flags | OpenFlags::SQLITE_OPEN_READ_ONLY),
        )?
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
