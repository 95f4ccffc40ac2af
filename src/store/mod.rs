//! The crash store: every crash a build hit, grouped into buckets by signature, with the case
//! directory of one representative per bucket.
//!
//! One SQLite database (`store.sqlite`, WAL mode) plus case directories under `cases/`, in
//! `$ICEPICK_STORE`, else `$XDG_DATA_HOME/icepick`, else `~/.local/share/icepick`. A `-j64`
//! build can crash dozens of compiles at the same moment, each an `icepick wrap` process of
//! its own: every write is one short `BEGIN IMMEDIATE` transaction, SQLite's busy timeout
//! queues the writers, and opening retries while another process is creating the database,
//! so no occurrence is lost. The slow part, capturing a case, runs outside any transaction:
//! the first occurrence of a bucket *claims* the capture inside the recording transaction
//! and later ones are only counted (see [`Store::record`]).
//!
//! Schema (`PRAGMA user_version` = [`SCHEMA_VERSION`]; a newer store is refused):
//!
//! ```sql
//! buckets(id PK = signature id, coarse_id, title, kind, first_seen, last_seen, count,
//!         status 'new'|'triaged'|'failed', status_detail, verdict, case_dir,
//!         capture_claimed_at, capture_attempts, capture_error)
//! occurrences(id PK, bucket -> buckets.id, time, host, cwd, command (JSON array), source,
//!             compiler, compiler_version, exit_code, origin 'wrap'|'scan-log', case_dir)
//! ```
//!
//! Times are UTC RFC 3339 strings with milliseconds, so they sort as text.

mod record;
mod time;

use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{params, Connection, OptionalExtension, TransactionBehavior};
use serde::Serialize;

pub use record::{analyse, compiler_version_in, title, Analysed, CaptureMode, Observed, Recording};
pub use time::{now_utc, utc_string};

/// The schema this build writes and reads.
pub const SCHEMA_VERSION: i64 = 1;

/// Name of the database file inside the store directory.
pub const DB_FILE: &str = "store.sqlite";

/// A capture claim older than this is considered abandoned (the process that took it was
/// killed with the build) and may be taken again.
const STALE_CLAIM: Duration = Duration::from_secs(30 * 60);

/// Captures attempted per bucket by builds before giving up (a flaky crash may not come back
/// on a rerun; later occurrences try again, but not forever: the build is waiting).
const MAX_CAPTURE_ATTEMPTS: i64 = 3;

/// How long a writer waits for the lock before giving up.
const BUSY_TIMEOUT: Duration = Duration::from_secs(120);

/// Problems with the store.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("crash store {path}: {source}")]
    Sqlite {
        path: PathBuf,
        #[source]
        source: rusqlite::Error,
    },
    #[error("crash store {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("crash store {path} has schema version {found}, newer than this icepick understands ({SCHEMA_VERSION}); upgrade icepick")]
    TooNew { path: PathBuf, found: i64 },
    #[error("no crash store location: set ICEPICK_STORE (or XDG_DATA_HOME or HOME)")]
    NoLocation,
}

/// Triage state of a bucket.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Not triaged yet.
    New,
    /// Its representative was reduced (and, as stages land, classified and reported).
    Triaged,
    /// Triage failed; `status_detail` says why.
    Failed,
}

impl Status {
    fn as_str(self) -> &'static str {
        match self {
            Status::New => "new",
            Status::Triaged => "triaged",
            Status::Failed => "failed",
        }
    }

    fn parse(s: &str) -> Status {
        match s {
            "triaged" => Status::Triaged,
            "failed" => Status::Failed,
            _ => Status::New,
        }
    }
}

/// One bucket: all occurrences of one signature.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Bucket {
    pub id: String,
    pub coarse_id: String,
    pub title: String,
    pub kind: String,
    pub count: i64,
    pub first_seen: String,
    pub last_seen: String,
    pub status: Status,
    pub status_detail: Option<String>,
    /// The classification verdict (filled by the classify stage; `None` until then).
    pub verdict: Option<String>,
    /// The representative case directory, once one was captured.
    pub case_dir: Option<String>,
    /// Why the last capture attempt failed, if it did.
    pub capture_error: Option<String>,
}

/// One crashed compile.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Occurrence {
    pub id: i64,
    pub bucket: String,
    pub time: String,
    pub host: String,
    pub cwd: String,
    pub command: Vec<String>,
    pub source: Option<String>,
    pub compiler: String,
    pub compiler_version: Option<String>,
    pub exit_code: Option<i32>,
    /// `wrap` or `scan-log`.
    pub origin: String,
    /// The case captured from this occurrence, if any.
    pub case_dir: Option<String>,
}

/// What identifies a bucket (from the crash's signature).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BucketKey {
    pub id: String,
    pub coarse_id: String,
    pub title: String,
    pub kind: String,
}

/// An occurrence to record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewOccurrence {
    pub time: String,
    pub host: String,
    pub cwd: String,
    pub command: Vec<String>,
    pub source: Option<String>,
    pub compiler: String,
    pub compiler_version: Option<String>,
    pub exit_code: Option<i32>,
    pub origin: String,
}

/// The result of [`Store::record`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recorded {
    /// Row id of the new occurrence.
    pub occurrence: i64,
    /// Occurrences of the bucket, this one included.
    pub count: i64,
    /// This occurrence holds the bucket's capture claim: capture now, then
    /// [`Store::attach_case`] or [`Store::capture_failed`].
    pub capture: bool,
    /// The bucket's representative case, if it already has one.
    pub case_dir: Option<String>,
}

/// An open crash store.
#[derive(Debug)]
pub struct Store {
    root: PathBuf,
    db: PathBuf,
    conn: Connection,
}

/// The store directory from the environment: `$ICEPICK_STORE`, else `$XDG_DATA_HOME/icepick`,
/// else `$HOME/.local/share/icepick`.
pub fn default_root() -> Result<PathBuf, StoreError> {
    let var = |k: &str| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    if let Some(p) = var("ICEPICK_STORE") {
        return Ok(p);
    }
    if let Some(p) = var("XDG_DATA_HOME").filter(|p| p.is_absolute()) {
        return Ok(p.join("icepick"));
    }
    var("HOME")
        .map(|h| h.join(".local/share/icepick"))
        .ok_or(StoreError::NoLocation)
}

const CREATE: &str = "
CREATE TABLE IF NOT EXISTS buckets (
    id                 TEXT PRIMARY KEY,
    coarse_id          TEXT NOT NULL,
    title              TEXT NOT NULL,
    kind               TEXT NOT NULL,
    first_seen         TEXT NOT NULL,
    last_seen          TEXT NOT NULL,
    count              INTEGER NOT NULL DEFAULT 0,
    status             TEXT NOT NULL DEFAULT 'new' CHECK (status IN ('new', 'triaged', 'failed')),
    status_detail      TEXT,
    verdict            TEXT,
    case_dir           TEXT,
    capture_claimed_at TEXT,
    capture_attempts   INTEGER NOT NULL DEFAULT 0,
    capture_error      TEXT
);
CREATE TABLE IF NOT EXISTS occurrences (
    id               INTEGER PRIMARY KEY AUTOINCREMENT,
    bucket           TEXT NOT NULL REFERENCES buckets(id),
    time             TEXT NOT NULL,
    host             TEXT NOT NULL,
    cwd              TEXT NOT NULL,
    command          TEXT NOT NULL,
    source           TEXT,
    compiler         TEXT NOT NULL,
    compiler_version TEXT,
    exit_code        INTEGER,
    origin           TEXT NOT NULL,
    case_dir         TEXT
);
CREATE INDEX IF NOT EXISTS occurrences_by_bucket ON occurrences(bucket, time);
";

impl Store {
    /// Opens (creating if needed) the store in `root`.
    pub fn open(root: &Path) -> Result<Store, StoreError> {
        std::fs::create_dir_all(root.join("cases")).map_err(|source| StoreError::Io {
            path: root.to_owned(),
            source,
        })?;
        let db = root.join(DB_FILE);
        let sql = |source| StoreError::Sqlite {
            path: db.clone(),
            source,
        };
        let conn = Connection::open(&db).map_err(sql)?;
        conn.busy_timeout(BUSY_TIMEOUT).map_err(sql)?;
        // Switching to WAL takes an exclusive lock; while dozens of processes open a new store
        // at once some see SQLITE_BUSY here without the busy handler, so retry.
        retry_busy(|| {
            conn.query_row("PRAGMA journal_mode = WAL", [], |r| r.get::<_, String>(0))
                .map(|_| ())
        })
        .map_err(sql)?;
        conn.execute_batch("PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON;")
            .map_err(sql)?;
        let mut store = Store {
            root: root.to_owned(),
            db: db.clone(),
            conn,
        };
        store.migrate()?;
        Ok(store)
    }

    /// Opens the store in `root` for reading, if there is one: `None` when `root` holds no
    /// database. Nothing is created (no directory, no database): `list`, `show` and
    /// `dashboard` on a store that does not exist leave the file system as it was. A
    /// database another process is still creating (schema version 0) reads as empty.
    pub fn open_existing(root: &Path) -> Result<Option<Store>, StoreError> {
        use rusqlite::OpenFlags;
        let db = root.join(DB_FILE);
        if !db.is_file() {
            return Ok(None);
        }
        let sql = |source| StoreError::Sqlite {
            path: db.clone(),
            source,
        };
        // Read-write without create, so the WAL's shared memory works as for any reader; a
        // store this user may not write (a colleague's, a read-only mount) is read as is.
        let flags = OpenFlags::SQLITE_OPEN_NO_MUTEX | OpenFlags::SQLITE_OPEN_URI;
        let conn = Connection::open_with_flags(&db, flags | OpenFlags::SQLITE_OPEN_READ_WRITE)
            .or_else(|_| Connection::open_with_flags(&db, flags | OpenFlags::SQLITE_OPEN_READ_ONLY))
            .map_err(sql)?;
        conn.busy_timeout(BUSY_TIMEOUT).map_err(sql)?;
        let version: i64 =
            retry_busy(|| conn.query_row("PRAGMA user_version", [], |r| r.get(0))).map_err(sql)?;
        if version > SCHEMA_VERSION {
            return Err(StoreError::TooNew {
                path: db.clone(),
                found: version,
            });
        }
        let conn = if version < SCHEMA_VERSION {
            // The tables, empty, in a private in-memory database: the queries see no rows.
            let empty = Connection::open_in_memory().map_err(sql)?;
            empty.execute_batch(CREATE).map_err(sql)?;
            empty
        } else {
            conn
        };
        Ok(Some(Store {
            root: root.to_owned(),
            db,
            conn,
        }))
    }

    /// [`Store::open_existing`] of the store named by the environment; the path is returned
    /// either way.
    pub fn open_existing_default() -> Result<(PathBuf, Option<Store>), StoreError> {
        let root = default_root()?;
        let store = Store::open_existing(&root)?;
        Ok((root, store))
    }

    /// Opens the store named by the environment ([`default_root`]).
    pub fn open_default() -> Result<Store, StoreError> {
        Store::open(&default_root()?)
    }

    fn err(&self, source: rusqlite::Error) -> StoreError {
        StoreError::Sqlite {
            path: self.db.clone(),
            source,
        }
    }

    fn migrate(&mut self) -> Result<(), StoreError> {
        let version: i64 =
            retry_busy(|| self.conn.query_row("PRAGMA user_version", [], |r| r.get(0)))
                .map_err(|e| self.err(e))?;
        if version > SCHEMA_VERSION {
            return Err(StoreError::TooNew {
                path: self.db.clone(),
                found: version,
            });
        }
        if version == SCHEMA_VERSION {
            return Ok(());
        }
        let db = self.db.clone();
        let sql = |source| StoreError::Sqlite {
            path: db.clone(),
            source,
        };
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(sql)?;
        // Another process may have created it while we waited for the lock.
        let version: i64 = tx
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .map_err(sql)?;
        if version < SCHEMA_VERSION {
            // Version 0 is an empty database; later versions add their steps here.
            tx.execute_batch(CREATE).map_err(sql)?;
            tx.execute_batch(&format!("PRAGMA user_version = {SCHEMA_VERSION}"))
                .map_err(sql)?;
        }
        tx.commit().map_err(sql)
    }

    /// The store directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Where case directories go.
    pub fn cases_dir(&self) -> PathBuf {
        self.root.join("cases")
    }

    /// Records one occurrence in its bucket (created on first sight) in one transaction.
    /// With `want_capture`, the occurrence claims the bucket's capture when the bucket has no
    /// case yet, nobody else holds a fresh claim, and fewer than
    /// [`MAX_CAPTURE_ATTEMPTS`] captures failed: so a burst of identical crashes captures
    /// once.
    pub fn record(
        &mut self,
        key: &BucketKey,
        occ: &NewOccurrence,
        want_capture: bool,
    ) -> Result<Recorded, StoreError> {
        let db = self.db.clone();
        let sql = |source| StoreError::Sqlite {
            path: db.clone(),
            source,
        };
        let command = serde_json::to_string(&occ.command).expect("strings serialise");
        let stale = utc_string(
            std::time::SystemTime::now()
                .checked_sub(STALE_CLAIM)
                .unwrap_or(std::time::UNIX_EPOCH),
        );
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(sql)?;
        tx.execute(
            "INSERT INTO buckets (id, coarse_id, title, kind, first_seen, last_seen, count)
             VALUES (?1, ?2, ?3, ?4, ?5, ?5, 0)
             ON CONFLICT(id) DO NOTHING",
            params![key.id, key.coarse_id, key.title, key.kind, occ.time],
        )
        .map_err(sql)?;
        tx.execute(
            "UPDATE buckets SET count = count + 1,
                 first_seen = min(first_seen, ?2), last_seen = max(last_seen, ?2)
             WHERE id = ?1",
            params![key.id, occ.time],
        )
        .map_err(sql)?;
        tx.execute(
            "INSERT INTO occurrences (bucket, time, host, cwd, command, source, compiler,
                 compiler_version, exit_code, origin)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
            params![
                key.id,
                occ.time,
                occ.host,
                occ.cwd,
                command,
                occ.source,
                occ.compiler,
                occ.compiler_version,
                occ.exit_code,
                occ.origin
            ],
        )
        .map_err(sql)?;
        let occurrence = tx.last_insert_rowid();
        let (count, case_dir, claimed_at, attempts): (i64, Option<String>, Option<String>, i64) =
            tx.query_row(
                "SELECT count, case_dir, capture_claimed_at, capture_attempts
                 FROM buckets WHERE id = ?1",
                params![key.id],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
            )
            .map_err(sql)?;
        let capture = want_capture
            && case_dir.is_none()
            && attempts < MAX_CAPTURE_ATTEMPTS
            && claimed_at.map_or(true, |t| t < stale);
        if capture {
            tx.execute(
                "UPDATE buckets SET capture_claimed_at = ?2, capture_attempts = capture_attempts + 1
                 WHERE id = ?1",
                // The claim's age is measured in real time, whatever the occurrence's time.
                params![key.id, now_utc()],
            )
            .map_err(sql)?;
        }
        tx.commit().map_err(sql)?;
        Ok(Recorded {
            occurrence,
            count,
            capture,
            case_dir,
        })
    }

    /// Sets the bucket's representative case (if it has none) and the occurrence's case, and
    /// releases the capture claim.
    pub fn attach_case(
        &mut self,
        bucket: &str,
        occurrence: Option<i64>,
        case_dir: &Path,
    ) -> Result<(), StoreError> {
        let dir = case_dir.to_string_lossy().into_owned();
        self.write(|tx| {
            tx.execute(
                "UPDATE buckets SET case_dir = coalesce(case_dir, ?2), capture_claimed_at = NULL,
                     capture_error = NULL
                 WHERE id = ?1",
                params![bucket, dir],
            )?;
            if let Some(o) = occurrence {
                tx.execute(
                    "UPDATE occurrences SET case_dir = ?2 WHERE id = ?1",
                    params![o, dir],
                )?;
            }
            Ok(())
        })
    }

    /// Records why a capture failed and releases the claim.
    pub fn capture_failed(&mut self, bucket: &str, reason: &str) -> Result<(), StoreError> {
        self.write(|tx| {
            tx.execute(
                "UPDATE buckets SET capture_claimed_at = NULL, capture_error = ?2 WHERE id = ?1",
                params![
                    bucket,
                    crate::exec::one_line(reason, crate::exec::ONE_LINE_MAX)
                ],
            )
            .map(|_| ())
        })
    }

    /// Sets a bucket's triage status (and its one-line detail).
    pub fn set_status(
        &mut self,
        bucket: &str,
        status: Status,
        detail: Option<&str>,
    ) -> Result<(), StoreError> {
        self.write(|tx| {
            tx.execute(
                "UPDATE buckets SET status = ?2, status_detail = ?3 WHERE id = ?1",
                params![
                    bucket,
                    status.as_str(),
                    detail.map(|d| crate::exec::one_line(d, crate::exec::ONE_LINE_MAX))
                ],
            )
            .map(|_| ())
        })
    }

    /// Records the classification verdict of a bucket.
    pub fn set_verdict(&mut self, bucket: &str, verdict: &str) -> Result<(), StoreError> {
        self.write(|tx| {
            tx.execute(
                "UPDATE buckets SET verdict = ?2 WHERE id = ?1",
                params![bucket, verdict],
            )
            .map(|_| ())
        })
    }

    fn write(
        &mut self,
        f: impl FnOnce(&rusqlite::Transaction<'_>) -> rusqlite::Result<()>,
    ) -> Result<(), StoreError> {
        let db = self.db.clone();
        let sql = |source| StoreError::Sqlite {
            path: db.clone(),
            source,
        };
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(sql)?;
        f(&tx).map_err(sql)?;
        tx.commit().map_err(sql)
    }

    /// Every bucket, most recently seen first.
    pub fn buckets(&self) -> Result<Vec<Bucket>, StoreError> {
        self.query_buckets("1 = 1 ORDER BY last_seen DESC, id", params![])
    }

    /// Buckets still to triage (`new`), oldest first.
    pub fn pending(&self) -> Result<Vec<Bucket>, StoreError> {
        self.query_buckets("status = 'new' ORDER BY first_seen, id", params![])
    }

    /// The bucket with this id, or the only one whose id starts with it.
    pub fn bucket(&self, id: &str) -> Result<Option<Bucket>, StoreError> {
        if let Some(b) = self
            .query_buckets("id = ?1", params![id])?
            .into_iter()
            .next()
        {
            return Ok(Some(b));
        }
        if id.is_empty() || !id.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Ok(None);
        }
        let mut found = self.query_buckets("id LIKE ?1 || '%'", params![id])?;
        Ok(if found.len() == 1 { found.pop() } else { None })
    }

    fn query_buckets(
        &self,
        filter: &str,
        args: &[&dyn rusqlite::ToSql],
    ) -> Result<Vec<Bucket>, StoreError> {
        let q = format!(
            "SELECT id, coarse_id, title, kind, count, first_seen, last_seen, status,
                 status_detail, verdict, case_dir, capture_error
             FROM buckets WHERE {filter}"
        );
        let run = || -> rusqlite::Result<Vec<Bucket>> {
            let mut stmt = self.conn.prepare(&q)?;
            let rows = stmt.query_map(args, |r| {
                Ok(Bucket {
                    id: r.get(0)?,
                    coarse_id: r.get(1)?,
                    title: r.get(2)?,
                    kind: r.get(3)?,
                    count: r.get(4)?,
                    first_seen: r.get(5)?,
                    last_seen: r.get(6)?,
                    status: Status::parse(&r.get::<_, String>(7)?),
                    status_detail: r.get(8)?,
                    verdict: r.get(9)?,
                    case_dir: r.get(10)?,
                    capture_error: r.get(11)?,
                })
            })?;
            rows.collect()
        };
        run().map_err(|e| self.err(e))
    }

    /// The occurrences of a bucket, oldest first.
    pub fn occurrences(&self, bucket: &str) -> Result<Vec<Occurrence>, StoreError> {
        let run = || -> rusqlite::Result<Vec<Occurrence>> {
            let mut stmt = self.conn.prepare(
                "SELECT id, bucket, time, host, cwd, command, source, compiler,
                     compiler_version, exit_code, origin, case_dir
                 FROM occurrences WHERE bucket = ?1 ORDER BY time, id",
            )?;
            let rows = stmt.query_map(params![bucket], |r| {
                let command: String = r.get(5)?;
                Ok(Occurrence {
                    id: r.get(0)?,
                    bucket: r.get(1)?,
                    time: r.get(2)?,
                    host: r.get(3)?,
                    cwd: r.get(4)?,
                    command: serde_json::from_str(&command).unwrap_or_default(),
                    source: r.get(6)?,
                    compiler: r.get(7)?,
                    compiler_version: r.get(8)?,
                    exit_code: r.get(9)?,
                    origin: r.get(10)?,
                    case_dir: r.get(11)?,
                })
            })?;
            rows.collect()
        };
        run().map_err(|e| self.err(e))
    }

    /// Whether a bucket with this id exists (exact id).
    pub fn has_bucket(&self, id: &str) -> Result<bool, StoreError> {
        self.conn
            .query_row("SELECT 1 FROM buckets WHERE id = ?1", params![id], |_| {
                Ok(())
            })
            .optional()
            .map(|r| r.is_some())
            .map_err(|e| self.err(e))
    }
}

/// Retries `f` while SQLite says the database is busy or locked, for up to the busy timeout:
/// for the statements the busy handler does not cover (changing the journal mode while
/// another process creates the database). `BEGIN IMMEDIATE` waits in the busy handler.
fn retry_busy<T>(mut f: impl FnMut() -> rusqlite::Result<T>) -> rusqlite::Result<T> {
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

#[cfg(test)]
mod tests;
