//! One SQL interface over the two databases a store can live in: SQLite (a file, the
//! zero-setup default) and PostgreSQL (one database for a fleet). The store's queries are
//! written once, with `?N` parameters (turned into `$N` for PostgreSQL), and every value goes
//! in as a bound parameter: no value is ever spliced into SQL text. Values and rows are the
//! small dynamic [`Val`], so the store's code does not care which client answered.
//!
//! The schema's history is one list, [`MIGRATIONS`], each step with its SQLite and its
//! PostgreSQL text. SQLite keeps the version in `PRAGMA user_version`; PostgreSQL in the table
//! `icepick_schema`, and migrating there holds a transaction-scoped advisory lock, so that
//! forty launchers that meet an empty database at once create it once.

use std::time::Duration;

use postgres::types::{to_sql_checked, IsNull, ToSql, Type};

/// A value bound to a parameter or read from a column.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Val {
    Null,
    Int(i64),
    Text(String),
    Blob(Vec<u8>),
}

impl From<&str> for Val {
    fn from(s: &str) -> Val {
        Val::Text(s.to_string())
    }
}
impl From<&String> for Val {
    fn from(s: &String) -> Val {
        Val::Text(s.clone())
    }
}
impl From<String> for Val {
    fn from(s: String) -> Val {
        Val::Text(s)
    }
}
impl From<i64> for Val {
    fn from(n: i64) -> Val {
        Val::Int(n)
    }
}
impl From<Vec<u8>> for Val {
    fn from(b: Vec<u8>) -> Val {
        Val::Blob(b)
    }
}
impl<T: Into<Val>> From<Option<T>> for Val {
    fn from(o: Option<T>) -> Val {
        o.map_or(Val::Null, Into::into)
    }
}
impl From<Option<i32>> for Val {
    fn from(o: Option<i32>) -> Val {
        o.map_or(Val::Null, |n| Val::Int(n.into()))
    }
}

/// Builds a `&[Val]` parameter list.
macro_rules! vals {
    ($($x:expr),* $(,)?) => { &[$($crate::store::db::Val::from($x)),*][..] };
}
pub(crate) use vals;

/// One result row.
#[derive(Debug, Clone)]
pub(crate) struct Row(pub Vec<Val>);

impl Row {
    pub fn text(&self, i: usize) -> String {
        self.opt_text(i).unwrap_or_default()
    }
    pub fn opt_text(&self, i: usize) -> Option<String> {
        match self.0.get(i) {
            Some(Val::Text(s)) => Some(s.clone()),
            Some(Val::Int(n)) => Some(n.to_string()),
            Some(Val::Blob(b)) => Some(String::from_utf8_lossy(b).into_owned()),
            _ => None,
        }
    }
    pub fn int(&self, i: usize) -> i64 {
        self.opt_int(i).unwrap_or(0)
    }
    pub fn opt_int(&self, i: usize) -> Option<i64> {
        match self.0.get(i) {
            Some(Val::Int(n)) => Some(*n),
            Some(Val::Text(s)) => s.parse().ok(),
            _ => None,
        }
    }
    pub fn blob(&self, i: usize) -> Option<Vec<u8>> {
        match self.0.get(i) {
            Some(Val::Blob(b)) => Some(b.clone()),
            Some(Val::Text(s)) => Some(s.clone().into_bytes()),
            _ => None,
        }
    }
}

/// An error of either client. The PostgreSQL client's messages name the server's error,
/// never the connection string; the store adds its own (redacted) name for the store.
#[derive(Debug, thiserror::Error)]
pub enum DbError {
    #[error("{0}")]
    Sqlite(#[from] rusqlite::Error),
    #[error("{}", pg_message(.0))]
    Postgres(#[from] postgres::Error),
    #[error("{0}")]
    Other(String),
}

/// The PostgreSQL error with the server's message and detail, on one line.
fn pg_message(e: &postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => format!("{}: {}", db.severity(), db.message()),
        None => e.to_string(),
    }
}

impl DbError {
    /// A PostgreSQL error that a retry of the whole transaction may cure (serialization
    /// failure, deadlock): the store retries those instead of surfacing them to a build.
    fn retryable(&self) -> bool {
        use postgres::error::SqlState;
        match self {
            DbError::Postgres(e) => e.code().is_some_and(|c| {
                *c == SqlState::T_R_SERIALIZATION_FAILURE
                    || *c == SqlState::T_R_DEADLOCK_DETECTED
                    || *c == SqlState::UNIQUE_VIOLATION
            }),
            _ => false,
        }
    }
}

impl ToSql for Val {
    fn to_sql(
        &self,
        ty: &Type,
        out: &mut postgres::types::private::BytesMut,
    ) -> Result<IsNull, Box<dyn std::error::Error + Sync + Send>> {
        match self {
            Val::Null => Ok(IsNull::Yes),
            Val::Int(n) => match *ty {
                Type::INT2 => i16::try_from(*n)?.to_sql(ty, out),
                Type::INT4 => i32::try_from(*n)?.to_sql(ty, out),
                Type::INT8 => n.to_sql(ty, out),
                Type::BOOL => (*n != 0).to_sql(ty, out),
                _ => n.to_string().as_str().to_sql(ty, out),
            },
            Val::Text(s) => s.as_str().to_sql(ty, out),
            Val::Blob(b) => b.as_slice().to_sql(ty, out),
        }
    }

    fn accepts(_: &Type) -> bool {
        true
    }

    to_sql_checked!();
}

/// An open connection.
pub(crate) enum Conn {
    Sqlite(rusqlite::Connection),
    Postgres(Box<postgres::Client>),
}

impl std::fmt::Debug for Conn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Conn::Sqlite(_) => "Conn::Sqlite",
            Conn::Postgres(_) => "Conn::Postgres",
        })
    }
}

/// A transaction in progress (SQLite: `BEGIN IMMEDIATE`, the writers queue on the file
/// lock; PostgreSQL: read committed, rows locked as the statements touch them).
pub(crate) enum Tx<'a> {
    Sqlite(&'a rusqlite::Connection),
    Postgres(postgres::Transaction<'a>),
}

/// `?N` → `$N` for PostgreSQL. The store's SQL has no `?` inside string literals.
fn dialect(sql: &str, pg: bool) -> std::borrow::Cow<'_, str> {
    if pg && sql.contains('?') {
        sql.replace('?', "$").into()
    } else {
        sql.into()
    }
}

fn pg_params(args: &[Val]) -> Vec<&(dyn ToSql + Sync)> {
    args.iter().map(|v| v as &(dyn ToSql + Sync)).collect()
}

fn sqlite_params(args: &[Val]) -> Vec<rusqlite::types::Value> {
    use rusqlite::types::Value;
    args.iter()
        .map(|v| match v {
            Val::Null => Value::Null,
            Val::Int(n) => Value::Integer(*n),
            Val::Text(s) => Value::Text(s.clone()),
            Val::Blob(b) => Value::Blob(b.clone()),
        })
        .collect()
}

fn sqlite_rows(conn: &rusqlite::Connection, sql: &str, args: &[Val]) -> rusqlite::Result<Vec<Row>> {
    use rusqlite::types::ValueRef;
    let mut stmt = conn.prepare_cached(sql)?;
    let n = stmt.column_count();
    let mut rows = stmt.query(rusqlite::params_from_iter(sqlite_params(args)))?;
    let mut out = Vec::new();
    while let Some(r) = rows.next()? {
        let mut row = Vec::with_capacity(n);
        for i in 0..n {
            row.push(match r.get_ref(i)? {
                ValueRef::Null => Val::Null,
                ValueRef::Integer(n) => Val::Int(n),
                ValueRef::Real(f) => Val::Int(f as i64),
                ValueRef::Text(t) => Val::Text(String::from_utf8_lossy(t).into_owned()),
                ValueRef::Blob(b) => Val::Blob(b.to_vec()),
            });
        }
        out.push(Row(row));
    }
    Ok(out)
}

fn pg_row(r: &postgres::Row) -> Result<Row, postgres::Error> {
    let mut row = Vec::with_capacity(r.len());
    for (i, c) in r.columns().iter().enumerate() {
        row.push(match *c.type_() {
            Type::INT8 => r.try_get::<_, Option<i64>>(i)?.map_or(Val::Null, Val::Int),
            Type::INT4 => r
                .try_get::<_, Option<i32>>(i)?
                .map_or(Val::Null, |n| Val::Int(n.into())),
            Type::INT2 => r
                .try_get::<_, Option<i16>>(i)?
                .map_or(Val::Null, |n| Val::Int(n.into())),
            Type::BOOL => r
                .try_get::<_, Option<bool>>(i)?
                .map_or(Val::Null, |b| Val::Int(b.into())),
            Type::BYTEA => r
                .try_get::<_, Option<Vec<u8>>>(i)?
                .map_or(Val::Null, Val::Blob),
            _ => r
                .try_get::<_, Option<String>>(i)?
                .map_or(Val::Null, Val::Text),
        });
    }
    Ok(Row(row))
}

impl Tx<'_> {
    pub fn is_postgres(&self) -> bool {
        matches!(self, Tx::Postgres(_))
    }

    /// Runs one statement; the number of rows it changed.
    pub fn exec(&mut self, sql: &str, args: &[Val]) -> Result<u64, DbError> {
        match self {
            Tx::Sqlite(c) => {
                let mut stmt = c.prepare_cached(sql)?;
                Ok(stmt.execute(rusqlite::params_from_iter(sqlite_params(args)))? as u64)
            }
            Tx::Postgres(t) => Ok(t.execute(dialect(sql, true).as_ref(), &pg_params(args))?),
        }
    }

    /// Runs one query.
    pub fn query(&mut self, sql: &str, args: &[Val]) -> Result<Vec<Row>, DbError> {
        match self {
            Tx::Sqlite(c) => Ok(sqlite_rows(c, sql, args)?),
            Tx::Postgres(t) => pg_rows(t, sql, args),
        }
    }

    /// The first row of a query, if any.
    pub fn query_opt(&mut self, sql: &str, args: &[Val]) -> Result<Option<Row>, DbError> {
        Ok(self.query(sql, args)?.into_iter().next())
    }
}

/// Runs one query on a PostgreSQL client or transaction and maps its rows.
fn pg_rows(
    c: &mut impl postgres::GenericClient,
    sql: &str,
    args: &[Val],
) -> Result<Vec<Row>, DbError> {
    c.query(dialect(sql, true).as_ref(), &pg_params(args))?
        .iter()
        .map(|r| pg_row(r).map_err(DbError::from))
        .collect()
}

/// How long a SQLite writer waits for the lock before giving up.
pub(crate) const BUSY_TIMEOUT: Duration = Duration::from_secs(120);

impl Conn {
    /// Runs `f` in one transaction, committed when it returns `Ok`. On PostgreSQL a
    /// serialization failure or deadlock reruns the whole transaction (a few times).
    pub fn tx<T>(
        &mut self,
        mut f: impl FnMut(&mut Tx<'_>) -> Result<T, DbError>,
    ) -> Result<T, DbError> {
        match self {
            Conn::Sqlite(c) => {
                let t = c.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
                let v = f(&mut Tx::Sqlite(&t))?;
                t.commit()?;
                Ok(v)
            }
            Conn::Postgres(c) => {
                let mut attempt = 0;
                loop {
                    attempt += 1;
                    let mut run = |c: &mut postgres::Client| -> Result<T, DbError> {
                        let mut t = Tx::Postgres(c.transaction()?);
                        let v = f(&mut t)?;
                        if let Tx::Postgres(t) = t {
                            t.commit()?;
                        }
                        Ok(v)
                    };
                    match run(c) {
                        Err(e) if e.retryable() && attempt < 8 => {
                            std::thread::sleep(Duration::from_millis(5 << attempt));
                        }
                        r => return r,
                    }
                }
            }
        }
    }

    /// A read outside any explicit transaction.
    pub fn query(&mut self, sql: &str, args: &[Val]) -> Result<Vec<Row>, DbError> {
        match self {
            Conn::Sqlite(c) => Ok(sqlite_rows(c, sql, args)?),
            Conn::Postgres(c) => pg_rows(c.as_mut(), sql, args),
        }
    }
}

/// One step of the schema's history.
pub(crate) struct Migration {
    pub version: i64,
    pub sqlite: &'static str,
    pub postgres: &'static str,
}

/// The schema, step by step; the last version is the one this build writes.
pub(crate) const MIGRATIONS: &[Migration] = &[
    Migration {
        version: 1,
        sqlite: "
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
",
        postgres: "
CREATE TABLE IF NOT EXISTS buckets (
    id                 TEXT PRIMARY KEY,
    coarse_id          TEXT NOT NULL,
    title              TEXT NOT NULL,
    kind               TEXT NOT NULL,
    first_seen         TEXT NOT NULL,
    last_seen          TEXT NOT NULL,
    count              BIGINT NOT NULL DEFAULT 0,
    status             TEXT NOT NULL DEFAULT 'new' CHECK (status IN ('new', 'triaged', 'failed')),
    status_detail      TEXT,
    verdict            TEXT,
    case_dir           TEXT,
    capture_claimed_at TEXT,
    capture_attempts   BIGINT NOT NULL DEFAULT 0,
    capture_error      TEXT
);
CREATE TABLE IF NOT EXISTS occurrences (
    id               BIGSERIAL PRIMARY KEY,
    bucket           TEXT NOT NULL REFERENCES buckets(id),
    time             TEXT NOT NULL,
    host             TEXT NOT NULL,
    cwd              TEXT NOT NULL,
    command          TEXT NOT NULL,
    source           TEXT,
    compiler         TEXT NOT NULL,
    compiler_version TEXT,
    exit_code        BIGINT,
    origin           TEXT NOT NULL,
    case_dir         TEXT
);
CREATE INDEX IF NOT EXISTS occurrences_by_bucket ON occurrences(bucket, time);
",
    },
    Migration {
        version: 2,
        // Who hit it (a fleet's occurrences come from many users and hosts), triage leases,
        // and the case directories themselves, so that a case travels with the store.
        sqlite: "
ALTER TABLE occurrences ADD COLUMN username TEXT;
ALTER TABLE buckets ADD COLUMN lease_owner TEXT;
ALTER TABLE buckets ADD COLUMN lease_until TEXT;
CREATE TABLE IF NOT EXISTS case_archives (
    bucket  TEXT PRIMARY KEY REFERENCES buckets(id),
    archive BLOB NOT NULL,
    updated TEXT NOT NULL
);
",
        postgres: "
ALTER TABLE occurrences ADD COLUMN IF NOT EXISTS username TEXT;
ALTER TABLE buckets ADD COLUMN IF NOT EXISTS lease_owner TEXT;
ALTER TABLE buckets ADD COLUMN IF NOT EXISTS lease_until TEXT;
CREATE TABLE IF NOT EXISTS case_archives (
    bucket  TEXT PRIMARY KEY REFERENCES buckets(id),
    archive BYTEA NOT NULL,
    updated TEXT NOT NULL
);
",
    },
];

/// The schema version this build writes and reads.
pub const SCHEMA_VERSION: i64 = MIGRATIONS[MIGRATIONS.len() - 1].version;

/// The advisory lock key migrations hold on PostgreSQL (any constant; "icepick" in ASCII).
const MIGRATION_LOCK: i64 = 0x0069_6365_7069_636b;

/// The schema version of the database: 0 when it has none yet.
pub(crate) fn version(conn: &mut Conn) -> Result<i64, DbError> {
    match conn {
        Conn::Sqlite(c) => Ok(c.query_row("PRAGMA user_version", [], |r| r.get(0))?),
        Conn::Postgres(_) => {
            let exists = conn.query("SELECT to_regclass('icepick_schema') IS NOT NULL", &[])?;
            if exists.first().map(|r| r.int(0)) != Some(1) {
                return Ok(0);
            }
            let rows = conn.query("SELECT max(version) FROM icepick_schema", &[])?;
            Ok(rows.first().and_then(|r| r.opt_int(0)).unwrap_or(0))
        }
    }
}

/// Brings the database up to [`SCHEMA_VERSION`]; returns the version found when it is newer
/// than that (the caller refuses it).
pub(crate) fn migrate(conn: &mut Conn) -> Result<Result<(), i64>, DbError> {
    conn.tx(|tx| {
        let found = match tx {
            Tx::Sqlite(c) => c.query_row("PRAGMA user_version", [], |r| r.get::<_, i64>(0))?,
            Tx::Postgres(t) => {
                t.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])?;
                t.batch_execute(
                    "CREATE TABLE IF NOT EXISTS icepick_schema (version BIGINT NOT NULL)",
                )?;
                let r = t.query_one("SELECT coalesce(max(version), 0) FROM icepick_schema", &[])?;
                r.get::<_, i64>(0)
            }
        };
        if found > SCHEMA_VERSION {
            return Ok(Err(found));
        }
        for m in MIGRATIONS.iter().filter(|m| m.version > found) {
            match tx {
                Tx::Sqlite(c) => {
                    c.execute_batch(m.sqlite)?;
                    // A constant of this build, not input.
                    c.execute_batch(&format!("PRAGMA user_version = {}", m.version))?;
                }
                Tx::Postgres(t) => {
                    t.batch_execute(m.postgres)?;
                    t.execute(
                        "INSERT INTO icepick_schema (version) VALUES ($1)",
                        &[&m.version],
                    )?;
                }
            }
        }
        Ok(Ok(()))
    })
}
