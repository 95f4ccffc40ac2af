//! Triage workers on any number of machines share the pending buckets through leases: a
//! worker takes one `new` bucket whose lease is free or expired, renews the lease while it
//! works (a heartbeat on a connection of its own), and writes the verdict back only while it
//! still holds the lease. A worker killed with `kill -9` stops renewing; once its lease
//! expires another worker takes the bucket, so nothing is lost, and a bucket is finished
//! once.
//!
//! PostgreSQL: the taking `SELECT … FOR UPDATE SKIP LOCKED` lets concurrent workers pass
//! over a row another is taking, and read committed re-checks the lease on the locked row.
//! SQLite: the same statements in one `BEGIN IMMEDIATE` transaction, which serialises the
//! takers. Lease times are UTC text from the workers' clocks: keep the fleet's clocks in
//! sync (NTP) within a small part of the lease.

use std::sync::mpsc;
use std::time::{Duration, Instant, SystemTime};

use super::db::vals;
use super::{utc_string, Bucket, Location, Status, Store, StoreError};

/// The default lease: long enough that a heartbeat every third of it survives a busy
/// machine, short enough that a dead worker's bucket is not stuck for long.
pub const DEFAULT_LEASE: Duration = Duration::from_secs(120);

/// A name for this worker, unique across the fleet: host, process, start time.
pub fn worker_id() -> String {
    let nanos = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    format!(
        "{}:{}:{nanos:x}",
        super::record::hostname(),
        std::process::id()
    )
}

fn until(ttl: Duration) -> String {
    utc_string(SystemTime::now() + ttl)
}

impl Store {
    /// Takes the oldest `new` bucket whose lease is free or expired, for `owner`, until
    /// `ttl` from now. `None` when there is none to take now.
    pub fn claim(&mut self, owner: &str, ttl: Duration) -> Result<Option<Bucket>, StoreError> {
        let now = super::now_utc();
        let lease_until = until(ttl);
        let id = self.write(|tx| {
            let lock = if tx.is_postgres() {
                " FOR UPDATE SKIP LOCKED"
            } else {
                ""
            };
            let q = format!(
                "SELECT id FROM buckets
                 WHERE status = 'new' AND (lease_until IS NULL OR lease_until < ?1)
                 ORDER BY first_seen, id LIMIT 1{lock}"
            );
            let Some(row) = tx.query_opt(&q, vals![now.as_str()])? else {
                return Ok(None);
            };
            let id = row.text(0);
            tx.exec(
                "UPDATE buckets SET lease_owner = ?2, lease_until = ?3 WHERE id = ?1",
                vals![&id, owner, lease_until.as_str()],
            )?;
            Ok(Some(id))
        })?;
        match id {
            Some(id) => self.bucket(&id),
            None => Ok(None),
        }
    }

    /// Extends `owner`'s lease on `bucket`; `false` when it no longer holds it.
    pub fn renew(&mut self, bucket: &str, owner: &str, ttl: Duration) -> Result<bool, StoreError> {
        let lease_until = until(ttl);
        self.write(|tx| {
            tx.exec(
                "UPDATE buckets SET lease_until = ?3
                 WHERE id = ?1 AND lease_owner = ?2 AND status = 'new'",
                vals![bucket, owner, lease_until.as_str()],
            )
            .map(|n| n == 1)
        })
    }

    /// Gives the lease back without a verdict (an interrupted worker): the bucket stays
    /// `new` and the next worker takes it at once.
    pub fn release(&mut self, bucket: &str, owner: &str) -> Result<(), StoreError> {
        self.write(|tx| {
            tx.exec(
                "UPDATE buckets SET lease_owner = NULL, lease_until = NULL
                 WHERE id = ?1 AND lease_owner = ?2",
                vals![bucket, owner],
            )
            .map(|_| ())
        })
    }

    /// Writes the verdict of `owner`'s triage and frees the lease, if `owner` still holds
    /// it; `false` (nothing written) when it lost the lease to another worker.
    pub fn finish(
        &mut self,
        bucket: &str,
        owner: &str,
        status: Status,
        detail: &str,
    ) -> Result<bool, StoreError> {
        let detail = crate::exec::one_line(detail, crate::exec::ONE_LINE_MAX);
        self.write(|tx| {
            tx.exec(
                "UPDATE buckets SET status = ?3, status_detail = ?4,
                     lease_owner = NULL, lease_until = NULL
                 WHERE id = ?1 AND lease_owner = ?2 AND status = 'new'",
                vals![bucket, owner, status.as_str(), detail.as_str()],
            )
            .map(|n| n == 1)
        })
    }

    /// Buckets still `new` (taken or not).
    pub fn pending_count(&self) -> Result<i64, StoreError> {
        let rows = self.read("SELECT count(*) FROM buckets WHERE status = 'new'", vals![])?;
        Ok(rows.first().map_or(0, |r| r.int(0)))
    }
}

/// Renews a lease every third of its length from a thread with its own connection, until
/// dropped or until its deadline: a worker whose triage runs past its budget (a stage that
/// hangs) stops renewing, so its lease runs out and another worker can take the bucket.
#[derive(Debug)]
pub struct Heartbeat {
    stop: Option<mpsc::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Heartbeat {
    /// Starts renewing `owner`'s lease on `bucket` in the store at `loc`, until `until`
    /// (`None`: as long as the heartbeat lives).
    pub fn start(
        loc: &Location,
        bucket: &str,
        owner: &str,
        ttl: Duration,
        until: Option<Instant>,
    ) -> Heartbeat {
        let (tx, rx) = mpsc::channel::<()>();
        let (loc, bucket, owner) = (loc.clone(), bucket.to_string(), owner.to_string());
        let thread = std::thread::spawn(move || {
            let Ok(mut store) = Store::open_at(&loc) else {
                return;
            };
            let every = (ttl / 3).max(Duration::from_millis(100));
            while let Err(mpsc::RecvTimeoutError::Timeout) = rx.recv_timeout(every) {
                if until.is_some_and(|u| Instant::now() >= u) {
                    log::warn!(
                        "bucket {bucket}: the triage ran past its budget; its lease is no longer renewed, so another worker may take the bucket"
                    );
                    return;
                }
                if !matches!(store.renew(&bucket, &owner, ttl), Ok(true)) {
                    return;
                }
            }
        });
        Heartbeat {
            stop: Some(tx),
            thread: Some(thread),
        }
    }
}

impl Drop for Heartbeat {
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
