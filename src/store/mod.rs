//! The crash store: every crash a build hit, grouped into buckets by signature, with the case
//! directory of one representative per bucket.
//!
//! Two homes, one schema and one set of semantics ([`db`] hides the difference):
//!
//! - **SQLite** (the zero-setup default): `store.sqlite` (WAL mode) plus case directories
//!   under `cases/`, in the directory `$ICEPICK_STORE`, else `$XDG_DATA_HOME/icepick`, else
//!   `~/.local/share/icepick`. A `-j64` build can crash dozens of compiles at the same moment,
//!   each an `icepick wrap` process of its own: every write is one short `BEGIN IMMEDIATE`
//!   transaction, SQLite's busy timeout queues the writers, and opening retries while another
//!   process is creating the database, so no occurrence is lost.
//! - **PostgreSQL** (a fleet): `ICEPICK_STORE=postgresql://…` (or `--store URL`). Every
//!   builder's launcher and every triage worker use one database; cases travel inside it,
//!   compressed ([`archive`]); local copies live in the user's cache directory. Writes are
//!   short read-committed transactions that lock one bucket row.
//!
//! The slow part, capturing a case, runs outside any transaction: the first occurrence of a
//! bucket *claims* the capture inside the recording transaction and later ones are only
//! counted (see [`Store::record`]). A store that cannot be reached from `wrap` spools the
//! occurrence ([`spool`]); triage workers take buckets under a lease ([`lease`]).
//!
//! Schema ([`db::MIGRATIONS`], version [`SCHEMA_VERSION`]; a newer store is refused):
//!
//! ```sql
//! buckets(id PK = signature id, coarse_id, title, kind, first_seen, last_seen, count,
//!         status 'new'|'triaged'|'failed', status_detail, verdict, case_dir,
//!         capture_claimed_at, capture_attempts, capture_error, lease_owner, lease_until)
//! occurrences(id PK, bucket -> buckets.id, time, host, username, cwd, command (JSON array),
//!             source, compiler, compiler_version, exit_code, origin 'wrap'|'scan-log',
//!             case_dir)
//! case_archives(bucket PK -> buckets.id, archive (gzip), updated)
//! ```
//!
//! Times are UTC RFC 3339 strings with milliseconds, so they sort as text.

pub mod archive;
mod cases;
pub(crate) mod db;
pub mod lease;
pub mod location;
mod model;
mod reads;
mod record;
pub mod spool;
mod sqlite;
mod time;

use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::time::Duration;

pub use db::SCHEMA_VERSION;
use db::{vals, Conn, DbError, Row, Tx};
pub use location::{cache_dir, Location};
pub use model::{Bucket, BucketKey, NewOccurrence, Occurrence, Recorded, Status};
pub use record::{
    analyse, compiler_version_in, occurrence_of, title, Analysed, CaptureMode, Observed, Recording,
};
pub use time::{now_utc, parse_utc, utc_string};

/// Name of the database file inside a store directory.
pub const DB_FILE: &str = "store.sqlite";

/// A capture claim older than this is considered abandoned (the process that took it was
/// killed with the build) and may be taken again.
const STALE_CLAIM: Duration = Duration::from_secs(30 * 60);

/// Captures attempted per bucket by builds before giving up (a flaky crash may not come back
/// on a rerun; later occurrences try again, but not forever: the build is waiting).
const MAX_CAPTURE_ATTEMPTS: i64 = 3;

/// Problems with the store. Every message names the store by its redacted location.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("crash store {store}: {message}")]
    Db { store: String, message: String },
    #[error("crash store {store} cannot be reached: {message}")]
    Unreachable { store: String, message: String },
    #[error("crash store {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("crash store {store} has schema version {found}, newer than this icepick understands ({SCHEMA_VERSION}); upgrade icepick")]
    TooNew { store: String, found: i64 },
    #[error("no crash store location: set ICEPICK_STORE (or XDG_DATA_HOME or HOME)")]
    NoLocation,
    #[error("crash store {store}: case of bucket {bucket}: {source}")]
    Archive {
        store: String,
        bucket: String,
        #[source]
        source: archive::ArchiveError,
    },
}

/// An open crash store.
#[derive(Debug)]
pub struct Store {
    loc: Location,
    /// The local directory: the SQLite store's own, or the cache for a PostgreSQL store.
    root: PathBuf,
    conn: RefCell<Conn>,
}

/// The store directory from the environment (for a directory store): `$ICEPICK_STORE`, else
/// `$XDG_DATA_HOME/icepick`, else `$HOME/.local/share/icepick`.
pub fn default_root() -> Result<PathBuf, StoreError> {
    match default_location()? {
        Location::Dir(p) => Ok(p),
        Location::Postgres(_) => Ok(cache_dir()),
    }
}

/// The store named by the environment: `$ICEPICK_STORE` (a directory or a
/// `postgresql://` URL; `--store` sets it), else `$XDG_DATA_HOME/icepick`, else
/// `$HOME/.local/share/icepick`.
pub fn default_location() -> Result<Location, StoreError> {
    let var = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
    if let Some(p) = var("ICEPICK_STORE") {
        return Ok(Location::parse(&p));
    }
    if let Some(p) = var("XDG_DATA_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
    {
        return Ok(Location::Dir(p.join("icepick")));
    }
    var("HOME")
        .map(|h| Location::Dir(PathBuf::from(h).join(".local/share/icepick")))
        .ok_or(StoreError::NoLocation)
}

impl Store {
    /// Opens (creating if needed) the directory store in `root`.
    pub fn open(root: &Path) -> Result<Store, StoreError> {
        Store::open_at(&Location::Dir(root.to_owned()))
    }

    /// Opens (creating the schema if needed) the store at `loc`.
    pub fn open_at(loc: &Location) -> Result<Store, StoreError> {
        let mut store = Store::connect(loc, true)?;
        store.migrate()?;
        Ok(store)
    }

    fn connect(loc: &Location, create: bool) -> Result<Store, StoreError> {
        let fail = |message: String| StoreError::Db {
            store: loc.to_string(),
            message,
        };
        match loc {
            Location::Dir(root) => {
                if create {
                    std::fs::create_dir_all(root.join("cases")).map_err(|source| {
                        StoreError::Io {
                            path: root.to_owned(),
                            source,
                        }
                    })?;
                }
                let conn =
                    sqlite::open(&root.join(DB_FILE), create).map_err(|e| fail(e.to_string()))?;
                Ok(Store {
                    loc: loc.clone(),
                    root: root.clone(),
                    conn: RefCell::new(Conn::Sqlite(conn)),
                })
            }
            Location::Postgres(url) => {
                let unreachable = |message: String| StoreError::Unreachable {
                    store: loc.to_string(),
                    message: loc.scrub(&message),
                };
                let config = url.config().map_err(unreachable)?;
                let client = config
                    .connect(postgres::NoTls)
                    .map_err(|e| unreachable(DbError::from(e).to_string()))?;
                Ok(Store {
                    loc: loc.clone(),
                    root: cache_dir(),
                    conn: RefCell::new(Conn::Postgres(Box::new(client))),
                })
            }
        }
    }

    /// Opens the store at `loc` for reading, if there is one: `None` when it holds no
    /// store yet. Nothing is created (no directory, no database, no table): `list`, `show`
    /// and `dashboard` on a store that does not exist leave everything as it was. A SQLite
    /// database another process is still creating (schema version 0) reads as empty.
    pub fn open_existing_at(loc: &Location) -> Result<Option<Store>, StoreError> {
        if let Location::Dir(root) = loc {
            if !root.join(DB_FILE).is_file() {
                return Ok(None);
            }
        }
        let store = Store::connect(loc, false)?;
        let version = {
            let mut c = store.conn.borrow_mut();
            match &mut *c {
                Conn::Sqlite(s) => sqlite::retry_busy(|| {
                    s.query_row("PRAGMA user_version", [], |r| r.get::<_, i64>(0))
                })
                .map_err(DbError::from),
                Conn::Postgres(_) => db::version(&mut c),
            }
            .map_err(|e| store.err(e))?
        };
        if version > SCHEMA_VERSION {
            return Err(StoreError::TooNew {
                store: loc.to_string(),
                found: version,
            });
        }
        if version == SCHEMA_VERSION {
            return Ok(Some(store));
        }
        match loc {
            // A fleet's database without icepick's tables is no store yet.
            Location::Postgres(_) if version == 0 => Ok(None),
            // An older fleet database: bring it up to date (every client does).
            Location::Postgres(_) => {
                let mut store = store;
                store.migrate()?;
                Ok(Some(store))
            }
            // The tables, empty, in a private in-memory database: the queries see no rows.
            Location::Dir(_) => {
                let mut empty = Conn::Sqlite(
                    rusqlite::Connection::open_in_memory().map_err(|e| store.err(e.into()))?,
                );
                db::migrate(&mut empty).map_err(|e| store.err(e))?.ok();
                Ok(Some(Store {
                    conn: RefCell::new(empty),
                    ..store
                }))
            }
        }
    }

    /// [`Store::open_existing_at`] of a directory store.
    pub fn open_existing(root: &Path) -> Result<Option<Store>, StoreError> {
        Store::open_existing_at(&Location::Dir(root.to_owned()))
    }

    /// [`Store::open_existing_at`] of the store named by the environment; the location is
    /// returned either way.
    pub fn open_existing_default() -> Result<(Location, Option<Store>), StoreError> {
        let loc = default_location()?;
        let store = Store::open_existing_at(&loc)?;
        Ok((loc, store))
    }

    /// Opens the store named by the environment ([`default_location`]).
    pub fn open_default() -> Result<Store, StoreError> {
        Store::open_at(&default_location()?)
    }

    pub(crate) fn err(&self, e: DbError) -> StoreError {
        StoreError::Db {
            store: self.loc.to_string(),
            message: self.loc.scrub(&e.to_string()),
        }
    }

    fn migrate(&mut self) -> Result<(), StoreError> {
        // Up to date (every open but the first): no write lock, no advisory lock.
        let current = match self.conn.get_mut() {
            Conn::Sqlite(c) => sqlite::retry_busy(|| {
                c.query_row("PRAGMA user_version", [], |r| r.get::<_, i64>(0))
            })
            .map_err(DbError::from),
            c => db::version(c),
        };
        if current.map_err(|e| self.err(e))? == SCHEMA_VERSION {
            return Ok(());
        }
        let r = db::migrate(self.conn.get_mut());
        match r.map_err(|e| self.err(e))? {
            Ok(()) => Ok(()),
            Err(found) => Err(StoreError::TooNew {
                store: self.loc.to_string(),
                found,
            }),
        }
    }

    /// Runs `f` in one write transaction.
    pub(crate) fn write<T>(
        &mut self,
        f: impl FnMut(&mut Tx<'_>) -> Result<T, DbError>,
    ) -> Result<T, StoreError> {
        let r = self.conn.get_mut().tx(f);
        r.map_err(|e| self.err(e))
    }

    /// Runs a read.
    pub(crate) fn read(&self, sql: &str, args: &[db::Val]) -> Result<Vec<Row>, StoreError> {
        let r = self.conn.borrow_mut().query(sql, args);
        r.map_err(|e| self.err(e))
    }

    /// Where the store is (prints redacted).
    pub fn location(&self) -> &Location {
        &self.loc
    }

    /// Whether the store is a PostgreSQL database.
    pub fn is_postgres(&self) -> bool {
        matches!(self.loc, Location::Postgres(_))
    }

    /// The local directory: a directory store's own, or the cache that holds the local
    /// copies of a PostgreSQL store's cases.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Where case directories captured on this machine go.
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
        let command = serde_json::to_string(&occ.command).expect("strings serialise");
        let stale = utc_string(
            std::time::SystemTime::now()
                .checked_sub(STALE_CLAIM)
                .unwrap_or(std::time::UNIX_EPOCH),
        );
        self.write(|tx| {
            tx.exec(
                "INSERT INTO buckets (id, coarse_id, title, kind, first_seen, last_seen, count)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?5, 0)
                 ON CONFLICT(id) DO NOTHING",
                vals![&key.id, &key.coarse_id, &key.title, &key.kind, &occ.time],
            )?;
            tx.exec(
                "UPDATE buckets SET count = count + 1,
                     first_seen = CASE WHEN first_seen < ?2 THEN first_seen ELSE ?2 END,
                     last_seen = CASE WHEN last_seen > ?2 THEN last_seen ELSE ?2 END
                 WHERE id = ?1",
                vals![&key.id, &occ.time],
            )?;
            let row = tx.query_opt(
                "INSERT INTO occurrences (bucket, time, host, username, cwd, command, source,
                     compiler, compiler_version, exit_code, origin)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)
                 RETURNING id",
                vals![
                    &key.id,
                    &occ.time,
                    &occ.host,
                    occ.user.as_deref(),
                    &occ.cwd,
                    command.as_str(),
                    occ.source.as_deref(),
                    &occ.compiler,
                    occ.compiler_version.as_deref(),
                    occ.exit_code,
                    &occ.origin
                ],
            )?;
            let occurrence = row.map(|r| r.int(0)).unwrap_or_default();
            let b = tx
                .query_opt(
                    "SELECT count, case_dir, capture_claimed_at, capture_attempts
                     FROM buckets WHERE id = ?1",
                    vals![&key.id],
                )?
                .ok_or_else(|| DbError::Other("the bucket vanished".into()))?;
            let (count, case_dir, claimed_at, attempts) =
                (b.int(0), b.opt_text(1), b.opt_text(2), b.int(3));
            let capture = want_capture
                && case_dir.is_none()
                && attempts < MAX_CAPTURE_ATTEMPTS
                && claimed_at.as_ref().map_or(true, |t| *t < stale);
            if capture {
                // The claim's age is measured in real time, whatever the occurrence's time.
                tx.exec(
                    "UPDATE buckets SET capture_claimed_at = ?2,
                         capture_attempts = capture_attempts + 1
                     WHERE id = ?1",
                    vals![&key.id, now_utc()],
                )?;
            }
            Ok(Recorded {
                occurrence,
                count,
                capture,
                case_dir,
            })
        })
    }

    /// Records why a capture failed and releases the claim.
    pub fn capture_failed(&mut self, bucket: &str, reason: &str) -> Result<(), StoreError> {
        let reason = crate::exec::one_line(reason, crate::exec::ONE_LINE_MAX);
        self.write(|tx| {
            tx.exec(
                "UPDATE buckets SET capture_claimed_at = NULL, capture_error = ?2 WHERE id = ?1",
                vals![bucket, &reason],
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
        let detail = detail.map(|d| crate::exec::one_line(d, crate::exec::ONE_LINE_MAX));
        self.write(|tx| {
            tx.exec(
                "UPDATE buckets SET status = ?2, status_detail = ?3 WHERE id = ?1",
                vals![bucket, status.as_str(), detail.as_deref()],
            )
            .map(|_| ())
        })
    }

    /// Records the classification verdict of a bucket.
    pub fn set_verdict(&mut self, bucket: &str, verdict: &str) -> Result<(), StoreError> {
        self.write(|tx| {
            tx.exec(
                "UPDATE buckets SET verdict = ?2 WHERE id = ?1",
                vals![bucket, verdict],
            )
            .map(|_| ())
        })
    }
}

#[cfg(test)]
mod tests;

#[cfg(test)]
#[cfg_attr(not(feature = "system-tests"), allow(dead_code))]
mod pg_test;
