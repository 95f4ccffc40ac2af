//! A case directory as one compressed value, so that a case captured on builder A travels in
//! the store's database to the triage worker on machine B and to `icepick show --fetch DIR`
//! anywhere (docs/store.md says why the database and not a shared directory).
//!
//! The format is ours and small: gzip of `ICEPICK-CASE 1\n` then, per regular file,
//! `u32 path length, path (relative, '/'-separated, UTF-8), u32 mode, u64 size, bytes`
//! (big-endian), ended by a zero path length. Symbolic links and special files are not
//! packed. An archive read from a database is hostile input: [`unpack`] writes only regular
//! files, only below the target directory (no absolute path, no `..`, no empty or `.`
//! component), into a directory it creates itself (so no symbolic link it did not make lies
//! on the way), never over an existing file, and within a size budget.

use std::io::{Read, Write};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Component, Path, PathBuf};

const MAGIC: &[u8] = b"ICEPICK-CASE 1\n";

/// Uncompressed bytes an archive may unpack to.
const MAX_TOTAL: u64 = 2 << 30;
/// Files an archive may hold.
const MAX_FILES: usize = 100_000;
/// Longest path inside an archive.
const MAX_PATH: u32 = 4096;

/// Problems packing or unpacking a case.
#[derive(Debug, thiserror::Error)]
pub enum ArchiveError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("the case archive is damaged or not a case archive ({0})")]
    Format(String),
    #[error("the case archive names {0:?}, which is not a plain relative path inside the case")]
    UnsafePath(String),
    #[error("{0} exists and is not an empty directory")]
    NotEmpty(PathBuf),
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> ArchiveError + '_ {
    move |source| ArchiveError::Io {
        path: path.to_owned(),
        source,
    }
}

/// Packs the regular files under `dir`.
pub fn pack(dir: &Path) -> Result<Vec<u8>, ArchiveError> {
    let mut files = Vec::new();
    collect(dir, Path::new(""), &mut files)?;
    files.sort();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    let w = |gz: &mut flate2::write::GzEncoder<Vec<u8>>, b: &[u8]| gz.write_all(b).map_err(io(dir));
    w(&mut gz, MAGIC)?;
    for rel in files {
        let path = dir.join(&rel);
        let meta = std::fs::symlink_metadata(&path).map_err(io(&path))?;
        let data = std::fs::read(&path).map_err(io(&path))?;
        let name = rel.to_string_lossy();
        w(&mut gz, &(name.len() as u32).to_be_bytes())?;
        w(&mut gz, name.as_bytes())?;
        w(&mut gz, &(meta.permissions().mode() & 0o777).to_be_bytes())?;
        w(&mut gz, &(data.len() as u64).to_be_bytes())?;
        w(&mut gz, &data)?;
    }
    w(&mut gz, &0u32.to_be_bytes())?;
    gz.finish().map_err(io(dir))
}

fn collect(root: &Path, rel: &Path, out: &mut Vec<PathBuf>) -> Result<(), ArchiveError> {
    let dir = root.join(rel);
    for e in std::fs::read_dir(&dir).map_err(io(&dir))? {
        let e = e.map_err(io(&dir))?;
        let t = e.file_type().map_err(io(&dir))?;
        let r = rel.join(e.file_name());
        if e.file_name().to_str().is_none() {
            continue;
        }
        if t.is_dir() {
            collect(root, &r, out)?;
        } else if t.is_file() {
            out.push(r);
        }
    }
    Ok(())
}

/// One entry of an archive: its header; its `size` bytes come next in the reader (an entry
/// is streamed, never held whole: a small archive may unpack to gigabytes).
struct Entry {
    path: String,
    mode: u32,
    size: u64,
}

/// Reads entries one at a time, checking the budget.
struct Reader<R: Read> {
    r: R,
    total: u64,
    files: usize,
}

impl<R: Read> Reader<R> {
    fn bytes<const N: usize>(&mut self) -> Result<[u8; N], ArchiveError> {
        let mut b = [0u8; N];
        self.r
            .read_exact(&mut b)
            .map_err(|e| ArchiveError::Format(e.to_string()))?;
        Ok(b)
    }

    fn next(&mut self) -> Result<Option<Entry>, ArchiveError> {
        let len = u32::from_be_bytes(self.bytes()?);
        if len == 0 {
            return Ok(None);
        }
        if len > MAX_PATH {
            return Err(ArchiveError::Format(format!("a path of {len} bytes")));
        }
        let mut name = vec![0u8; len as usize];
        self.r
            .read_exact(&mut name)
            .map_err(|e| ArchiveError::Format(e.to_string()))?;
        let path = String::from_utf8(name)
            .map_err(|_| ArchiveError::Format("a path that is not UTF-8".into()))?;
        let mode = u32::from_be_bytes(self.bytes()?);
        let size = u64::from_be_bytes(self.bytes()?);
        self.files += 1;
        self.total = self.total.saturating_add(size);
        if self.files > MAX_FILES || self.total > MAX_TOTAL {
            return Err(ArchiveError::Format("larger than any case".into()));
        }
        Ok(Some(Entry { path, mode, size }))
    }

    /// Copies the current entry's bytes to `to` (a failed write is `written`'s error; a
    /// failed or short read, a damaged archive).
    fn copy_data(
        &mut self,
        e: &Entry,
        to: &mut dyn Write,
        written: &dyn Fn(std::io::Error) -> ArchiveError,
    ) -> Result<(), ArchiveError> {
        let mut left = e.size;
        let mut buf = vec![0u8; 64 << 10];
        while left > 0 {
            let want = buf.len().min(usize::try_from(left).unwrap_or(usize::MAX));
            let n = match self.r.read(&mut buf[..want]) {
                Ok(0) => return Err(ArchiveError::Format("truncated".into())),
                Ok(n) => n,
                Err(err) if err.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(err) => return Err(ArchiveError::Format(err.to_string())),
            };
            to.write_all(&buf[..n]).map_err(written)?;
            left -= n as u64;
        }
        Ok(())
    }
}

fn reader(archive: &[u8]) -> Result<Reader<flate2::read::GzDecoder<&[u8]>>, ArchiveError> {
    let mut r = Reader {
        r: flate2::read::GzDecoder::new(archive),
        total: 0,
        files: 0,
    };
    let magic: [u8; 15] = r.bytes()?;
    if magic != MAGIC {
        return Err(ArchiveError::Format("no case archive header".into()));
    }
    Ok(r)
}

/// `path` as a safe relative path: normal components only.
fn safe_relative(path: &str) -> Result<PathBuf, ArchiveError> {
    let p = Path::new(path);
    let ok = !path.is_empty()
        && !path.contains('\0')
        && !path.contains('\\')
        && path
            .split('/')
            .all(|c| !c.is_empty() && c != "." && c != "..")
        && p.components().all(|c| matches!(c, Component::Normal(_)));
    if ok {
        Ok(p.to_owned())
    } else {
        Err(ArchiveError::UnsafePath(path.to_string()))
    }
}

/// Unpacks `archive` into `dir`, which must not exist or be an empty directory. On error,
/// what was written stays inside `dir`.
pub fn unpack(archive: &[u8], dir: &Path) -> Result<usize, ArchiveError> {
    match std::fs::symlink_metadata(dir) {
        Ok(m) if m.is_dir() => {
            if std::fs::read_dir(dir).map_err(io(dir))?.next().is_some() {
                return Err(ArchiveError::NotEmpty(dir.to_owned()));
            }
        }
        Ok(_) => return Err(ArchiveError::NotEmpty(dir.to_owned())),
        Err(_) => std::fs::create_dir_all(dir).map_err(io(dir))?,
    }
    let mut r = reader(archive)?;
    let mut n = 0;
    while let Some(e) = r.next()? {
        let rel = safe_relative(&e.path)?;
        let target = dir.join(&rel);
        // Parents: created here, as directories (an existing non-directory stops us: it
        // was created by an earlier entry as a file, and create_dir refuses it).
        let mut at = dir.to_path_buf();
        if let Some(parent) = rel.parent() {
            for c in parent.components() {
                at.push(c);
                match std::fs::symlink_metadata(&at) {
                    Ok(m) if m.is_dir() => {}
                    Ok(_) => return Err(ArchiveError::UnsafePath(e.path.clone())),
                    Err(_) => std::fs::create_dir(&at).map_err(io(&at))?,
                }
            }
        }
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .custom_flags(libc::O_NOFOLLOW)
            .mode(0o600)
            .open(&target)
            .map_err(io(&target))?;
        r.copy_data(&e, &mut f, &|source| ArchiveError::Io {
            path: target.clone(),
            source,
        })?;
        let mode = if e.mode & 0o111 != 0 { 0o755 } else { 0o644 };
        f.set_permissions(std::fs::Permissions::from_mode(mode))
            .map_err(io(&target))?;
        n += 1;
    }
    Ok(n)
}

/// The bytes of one file of the archive (`report.md`), if it holds it.
pub fn read_file(archive: &[u8], name: &str) -> Result<Option<Vec<u8>>, ArchiveError> {
    let mut r = reader(archive)?;
    while let Some(e) = r.next()? {
        let mut data = Vec::new();
        let mut sink = std::io::sink();
        let to: &mut dyn Write = if e.path == name { &mut data } else { &mut sink };
        r.copy_data(&e, to, &|err| ArchiveError::Format(err.to_string()))?;
        if e.path == name {
            return Ok(Some(data));
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(entries: &[(&str, &[u8])]) -> Vec<u8> {
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(MAGIC).unwrap();
        for (p, d) in entries {
            gz.write_all(&(p.len() as u32).to_be_bytes()).unwrap();
            gz.write_all(p.as_bytes()).unwrap();
            gz.write_all(&0o644u32.to_be_bytes()).unwrap();
            gz.write_all(&(d.len() as u64).to_be_bytes()).unwrap();
            gz.write_all(d).unwrap();
        }
        gz.write_all(&0u32.to_be_bytes()).unwrap();
        gz.finish().unwrap()
    }

    #[test]
    fn round_trip() {
        let t = tempfile::tempdir().unwrap();
        let src = t.path().join("case");
        std::fs::create_dir_all(src.join("logs")).unwrap();
        std::fs::write(src.join("case.json"), b"{}").unwrap();
        std::fs::write(src.join("logs/a b.txt"), b"log").unwrap();
        std::fs::write(src.join("repro.sh"), b"#!/bin/sh\n").unwrap();
        std::fs::set_permissions(src.join("repro.sh"), std::fs::Permissions::from_mode(0o755))
            .unwrap();
        std::os::unix::fs::symlink("/etc/passwd", src.join("link")).unwrap();
        let a = pack(&src).unwrap();
        let out = t.path().join("out");
        assert_eq!(unpack(&a, &out).unwrap(), 3);
        assert_eq!(std::fs::read(out.join("logs/a b.txt")).unwrap(), b"log");
        assert!(!out.join("link").exists());
        let mode = std::fs::metadata(out.join("repro.sh"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o755);
        assert_eq!(read_file(&a, "case.json").unwrap().unwrap(), b"{}");
        // Not over an existing case.
        assert!(matches!(unpack(&a, &out), Err(ArchiveError::NotEmpty(_))));
    }

    #[test]
    fn hostile_paths_are_refused_and_nothing_lands_outside() {
        let t = tempfile::tempdir().unwrap();
        for bad in [
            "../escape",
            "/tmp/abs",
            "a/../../x",
            "a//b",
            "./a",
            "a\\..\\b",
        ] {
            let out = t.path().join(format!("o{}", bad.len()));
            let _ = std::fs::remove_dir_all(&out);
            let r = unpack(&raw(&[("ok", b"1"), (bad, b"evil")]), &out);
            assert!(r.is_err(), "{bad:?}");
        }
        assert!(!t.path().join("escape").exists());
        assert!(!Path::new("/tmp/abs").exists());
        // A file, then the same name used as a directory.
        let out = t.path().join("dirfile");
        assert!(unpack(&raw(&[("a", b"1"), ("a/b", b"2")]), &out).is_err());
        // Duplicate names do not overwrite.
        let out = t.path().join("dup");
        assert!(unpack(&raw(&[("a", b"1"), ("a", b"2")]), &out).is_err());
        assert_eq!(std::fs::read(out.join("a")).unwrap(), b"1");
        assert!(unpack(b"not gzip", &t.path().join("junk")).is_err());
    }

    #[test]
    fn entries_larger_than_one_buffer_are_streamed_whole_and_a_short_one_is_damage() {
        let t = tempfile::tempdir().unwrap();
        // 3 MiB + 1: several copy buffers, the last one partial.
        let big: Vec<u8> = (0..(3u32 << 20) + 1).map(|i| (i % 251) as u8).collect();
        let out = t.path().join("big");
        assert_eq!(
            unpack(&raw(&[("big.ii", &big), ("b", b"2")]), &out).unwrap(),
            2
        );
        assert_eq!(std::fs::read(out.join("big.ii")).unwrap(), big);
        assert_eq!(std::fs::read(out.join("b")).unwrap(), b"2");
        let a = raw(&[("skipped", &big), ("wanted", b"w")]);
        assert_eq!(read_file(&a, "wanted").unwrap().unwrap(), b"w");
        // An entry that claims more bytes than the archive holds.
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(MAGIC).unwrap();
        gz.write_all(&1u32.to_be_bytes()).unwrap();
        gz.write_all(b"x").unwrap();
        gz.write_all(&0o644u32.to_be_bytes()).unwrap();
        gz.write_all(&1000u64.to_be_bytes()).unwrap();
        gz.write_all(b"only this").unwrap();
        let short = gz.finish().unwrap();
        let r = unpack(&short, &t.path().join("short"));
        assert!(
            matches!(r, Err(ArchiveError::Format(ref m)) if m.contains("truncated")),
            "{r:?}"
        );
    }
}
