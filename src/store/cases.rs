//! A bucket's case directory in the store: attached when captured, kept in the database on a
//! fleet's store (compressed, [`super::archive`]) so that any machine can use it, fetched
//! into a directory as hostile input, and its report read from wherever it is.

use std::path::Path;

use super::db::{vals, DbError, Tx};
use super::{archive, now_utc, Bucket, Store, StoreError};

impl Store {
    /// Sets the bucket's representative case (if it has none) and the occurrence's case, and
    /// releases the capture claim. On a PostgreSQL store the case directory goes into the
    /// database too, so that other machines can use it.
    pub fn attach_case(
        &mut self,
        bucket: &str,
        occurrence: Option<i64>,
        case_dir: &Path,
    ) -> Result<(), StoreError> {
        let dir = case_dir.to_string_lossy().into_owned();
        let packed = if self.is_postgres() {
            Some(self.pack(bucket, case_dir)?)
        } else {
            None
        };
        self.write(|tx| {
            tx.exec(
                "UPDATE buckets SET case_dir = coalesce(case_dir, ?2), capture_claimed_at = NULL,
                     capture_error = NULL
                 WHERE id = ?1",
                vals![bucket, &dir],
            )?;
            if let Some(o) = occurrence {
                tx.exec(
                    "UPDATE occurrences SET case_dir = ?2 WHERE id = ?1",
                    vals![o, &dir],
                )?;
            }
            if let Some(a) = &packed {
                put_archive(tx, bucket, a)?;
            }
            Ok(())
        })
    }

    fn pack(&self, bucket: &str, dir: &Path) -> Result<Vec<u8>, StoreError> {
        archive::pack(dir).map_err(|source| StoreError::Archive {
            store: self.loc.to_string(),
            bucket: bucket.to_string(),
            source,
        })
    }

    /// Stores the case directory `dir` as the bucket's case in the database (after triage
    /// changed it: the reduced input, the report).
    pub fn store_case(&mut self, bucket: &str, dir: &Path) -> Result<(), StoreError> {
        let packed = self.pack(bucket, dir)?;
        self.write(|tx| put_archive(tx, bucket, &packed))
    }

    /// The bucket's case as stored in the database, if it is.
    pub fn case_archive(&self, bucket: &str) -> Result<Option<Vec<u8>>, StoreError> {
        let rows = self.read(
            "SELECT archive FROM case_archives WHERE bucket = ?1",
            vals![bucket],
        )?;
        Ok(rows.first().and_then(|r| r.blob(0)))
    }

    /// Materialises the bucket's case in `dir` (which must not exist or be empty): from the
    /// database when it holds the case, else from the case directory on this machine.
    /// Writes nothing outside `dir`, whatever the archive says. `Ok(false)`: no case.
    pub fn fetch_case(&self, b: &Bucket, dir: &Path) -> Result<bool, StoreError> {
        let bytes = match self.case_archive(&b.id)? {
            Some(a) => a,
            // A fleet's `case_dir` is another machine's path: only the archive counts.
            None if self.is_postgres() => return Ok(false),
            None => match b.case_dir.as_deref().map(Path::new).filter(|d| d.is_dir()) {
                Some(local) => self.pack(&b.id, local)?,
                None => return Ok(false),
            },
        };
        archive::unpack(&bytes, dir).map_err(|source| StoreError::Archive {
            store: self.loc.to_string(),
            bucket: b.id.clone(),
            source,
        })?;
        Ok(true)
    }

    /// The text of the bucket's `report.md`: from the database when it holds the case (a
    /// fleet's store: the case directory is another machine's), else from the case directory
    /// on this machine.
    pub fn report_text(&self, b: &Bucket, cwd: &Path) -> Option<String> {
        self.case_text(b, "report.md", cwd)
    }

    /// The text of the file `name` (a plain name: `case.json`, `report.md`) of the bucket's
    /// case, from wherever the case is (see [`Store::report_text`]).
    pub fn case_text(&self, b: &Bucket, name: &str, cwd: &Path) -> Option<String> {
        if b.archived {
            let a = self.case_archive(&b.id).ok()??;
            let bytes = archive::read_file(&a, name).ok()??;
            return Some(String::from_utf8_lossy(&bytes).into_owned());
        }
        if let Some(d) = &b.case_dir {
            // The case directory is someone's: a report.md that is a FIFO, /dev/zero or a link
            // is not read, and nothing past the cap.
            let cap = crate::case::fileio::cap::CASE_JSON.max(crate::case::fileio::cap::REPORT);
            if let Ok(Some(bytes)) = crate::case::fileio::read(&cwd.join(d), name, cap) {
                return Some(String::from_utf8_lossy(&bytes).into_owned());
            }
        }
        None
    }
}

/// Stores (or replaces) a bucket's case archive.
fn put_archive(tx: &mut Tx<'_>, bucket: &str, archive: &[u8]) -> Result<(), DbError> {
    tx.exec(
        "INSERT INTO case_archives (bucket, archive, updated) VALUES (?1, ?2, ?3)
         ON CONFLICT(bucket) DO UPDATE SET archive = excluded.archive, updated = excluded.updated",
        vals![bucket, archive.to_vec(), now_utc()],
    )
    .map(|_| ())
}
