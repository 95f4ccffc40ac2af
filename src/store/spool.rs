//! Occurrences that could not reach their store wait here: a build never fails or waits
//! long because the fleet's database is down. `icepick wrap` writes the occurrence as one
//! JSON file under the user's cache directory (`spool/<store hash>/`), and sends the spooled
//! ones after its next successful recording; `icepick store flush` sends them on demand.
//! Each file is taken by renaming it before it is sent, so two flushes never send one twice.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::{cache_dir, BucketKey, Location, NewOccurrence, Store, StoreError};

/// One spooled occurrence.
#[derive(Debug, Serialize, Deserialize)]
struct Spooled {
    /// The store, redacted (for people reading the spool).
    store: String,
    key: BucketKey,
    occurrence: NewOccurrence,
}

/// The spool of the store at `loc` (per store: a flush sends to the store it was meant for).
pub fn dir(loc: &Location) -> PathBuf {
    let name = match loc {
        Location::Dir(p) => p.to_string_lossy().into_owned(),
        Location::Postgres(_) => loc.to_string(),
    };
    let hash = sha1_smol::Sha1::from(name.as_bytes()).hexdigest();
    cache_dir().join("spool").join(&hash[..16])
}

/// Writes one occurrence to the spool of `loc`; the file written.
pub fn spool(loc: &Location, key: &BucketKey, occ: &NewOccurrence) -> std::io::Result<PathBuf> {
    use std::io::Write as _;
    use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
    let d = dir(loc);
    // An occurrence holds a build's command line, directory and crash text: this user's only.
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(&d)?;
    let body = serde_json::to_vec(&Spooled {
        store: loc.to_string(),
        key: key.clone(),
        occurrence: occ.clone(),
    })?;
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let name = format!(
        "{}-{}-{nanos:08x}.json",
        occ.time.replace(':', ""),
        std::process::id()
    );
    let tmp = d.join(format!(".{name}.tmp"));
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&tmp)?;
    f.write_all(&body)?;
    drop(f);
    let path = d.join(name);
    std::fs::rename(&tmp, &path)?;
    Ok(path)
}

/// What a flush did.
#[derive(Debug, Default, Clone, PartialEq, Eq, Serialize)]
pub struct Flushed {
    pub sent: usize,
    /// Files left in the spool (the store failed meanwhile), or unreadable ones set aside.
    pub left: usize,
}

/// Sends every spooled occurrence of `store` (recorded without capture: the build that hit
/// it is gone; `icepick triage --pending` captures later where it can).
pub fn flush(store: &mut Store) -> Result<Flushed, StoreError> {
    let d = dir(store.location());
    let mut names: Vec<PathBuf> = match std::fs::read_dir(&d) {
        Ok(rd) => rd
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .collect(),
        Err(_) => return Ok(Flushed::default()),
    };
    names.sort();
    let mut out = Flushed::default();
    for path in names {
        let taken = path.with_extension(format!("sending-{}", std::process::id()));
        if std::fs::rename(&path, &taken).is_err() {
            continue; // another flush took it
        }
        let parsed = std::fs::read(&taken)
            .ok()
            .and_then(|b| serde_json::from_slice::<Spooled>(&b).ok());
        let Some(s) = parsed else {
            let _ = std::fs::rename(&taken, path.with_extension("bad"));
            out.left += 1;
            continue;
        };
        match store.record(&s.key, &s.occurrence, false) {
            Ok(_) => {
                let _ = std::fs::remove_file(&taken);
                out.sent += 1;
            }
            Err(e) => {
                let _ = std::fs::rename(&taken, &path);
                out.left += count(&d);
                return if out.sent == 0 { Err(e) } else { Ok(out) };
            }
        }
    }
    Ok(out)
}

/// Occurrences waiting in the spool of `loc`.
pub fn pending(loc: &Location) -> usize {
    count(&dir(loc))
}

fn count(d: &Path) -> usize {
    std::fs::read_dir(d).map_or(0, |rd| {
        rd.filter_map(Result::ok)
            .filter(|e| e.path().extension().is_some_and(|x| x == "json"))
            .count()
    })
}
