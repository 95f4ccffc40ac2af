//! Reading the store: buckets (with who hit them) and their occurrences. The rows become
//! values through the one mapping in [`super::model`].

use super::db::{self, vals};
use super::model::{BUCKET_COLUMNS, OCCURRENCE_COLUMNS};
use super::{Bucket, Occurrence, Store, StoreError};

impl Store {
    /// Every bucket, most recently seen first.
    pub fn buckets(&self) -> Result<Vec<Bucket>, StoreError> {
        self.query_buckets("1 = 1 ORDER BY last_seen DESC, id", vals![])
    }

    /// Buckets still to triage (`new`), oldest first.
    pub fn pending(&self) -> Result<Vec<Bucket>, StoreError> {
        self.query_buckets("status = 'new' ORDER BY first_seen, id", vals![])
    }

    /// The bucket with this id, or the only one whose id starts with it.
    pub fn bucket(&self, id: &str) -> Result<Option<Bucket>, StoreError> {
        if let Some(b) = self.query_buckets("id = ?1", vals![id])?.into_iter().next() {
            return Ok(Some(b));
        }
        if id.is_empty() || !id.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Ok(None);
        }
        let mut found = self.query_buckets("id LIKE CAST(?1 AS TEXT) || '%'", vals![id])?;
        Ok(if found.len() == 1 { found.pop() } else { None })
    }

    fn query_buckets(&self, filter: &str, args: &[db::Val]) -> Result<Vec<Bucket>, StoreError> {
        let q = format!("SELECT {BUCKET_COLUMNS} FROM buckets WHERE {filter}");
        let mut buckets: Vec<Bucket> = self.read(&q, args)?.iter().map(Bucket::from_row).collect();
        if buckets.is_empty() {
            return Ok(buckets);
        }
        // Who hit each bucket: one grouped query for all of them.
        let spread = self.read(
            "SELECT bucket, host, coalesce(compiler_version, compiler)
             FROM occurrences GROUP BY bucket, host, coalesce(compiler_version, compiler)",
            vals![],
        )?;
        let by_id: std::collections::HashMap<String, usize> = buckets
            .iter()
            .enumerate()
            .map(|(i, b)| (b.id.clone(), i))
            .collect();
        for r in &spread {
            if let Some(&i) = by_id.get(&r.text(0)) {
                let b = &mut buckets[i];
                b.hosts.push(r.text(1));
                b.compiler_versions.push(r.text(2));
            }
        }
        for b in &mut buckets {
            b.hosts.sort();
            b.hosts.dedup();
            b.compiler_versions.sort();
            b.compiler_versions.dedup();
        }
        let keys = self.read("SELECT id, coarse_id FROM buckets", vals![])?;
        link_related(
            &mut buckets,
            keys.iter().map(|r| (r.text(0), r.text(1))).collect(),
        );
        Ok(buckets)
    }

    /// The occurrences of a bucket, oldest first.
    pub fn occurrences(&self, bucket: &str) -> Result<Vec<Occurrence>, StoreError> {
        let q = format!(
            "SELECT {OCCURRENCE_COLUMNS} FROM occurrences WHERE bucket = ?1 ORDER BY time, id"
        );
        let rows = self.read(&q, vals![bucket])?;
        Ok(rows.iter().map(Occurrence::from_row).collect())
    }

    /// Whether a bucket with this id exists (exact id).
    pub fn has_bucket(&self, id: &str) -> Result<bool, StoreError> {
        Ok(!self
            .read("SELECT 1 FROM buckets WHERE id = ?1", vals![id])?
            .is_empty())
    }
}

/// Fills each bucket's `related`: the other buckets of `all` (id, coarse id) with its coarse
/// id.
fn link_related(buckets: &mut [Bucket], all: Vec<(String, String)>) {
    let mut by_coarse: std::collections::HashMap<String, Vec<String>> = Default::default();
    for (id, coarse) in all {
        by_coarse.entry(coarse).or_default().push(id);
    }
    for b in buckets {
        let mut related: Vec<String> = by_coarse
            .get(&b.coarse_id)
            .into_iter()
            .flatten()
            .filter(|id| **id != b.id)
            .cloned()
            .collect();
        related.sort();
        b.related = related;
    }
}
