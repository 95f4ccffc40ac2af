//! One writer per case directory.
//!
//! Every command that writes a case (`reduce`, `flags`, `ir`, `versions`, `classify`, the
//! triage pipeline) holds an advisory lock on the case's [`LOCK_FILE`] for as long as it
//! runs: a second writer started beside it exits at once with [`CaseError::Busy`] (exit 2),
//! which names the holder, instead of each writing its own stale copy of `case.json` over the
//! other's. Readers (`show`, `report`, the dashboard) take no lock and never wait: every write
//! is a rename of a complete file, so a reader sees one version or the next.
//!
//! The lock is `flock(2)` on a file inside the case, so it is released by the kernel however
//! its holder ends (`kill -9` included), and it moves with the directory when a case is
//! renamed. Nothing is written into the file (a command that was stopped leaves its case
//! byte for byte as it was): who holds it is read from the kernel's `/proc/locks`. Within one process it is re-entrant, keyed by the directory's device and inode:
//! the pipeline holds it and calls the stages, which take it again. The lock file is opened
//! like every case file: not through a link, and only when it is a regular file.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::os::fd::AsRawFd;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use super::CaseError;

/// The lock file's name in a case directory.
pub const LOCK_FILE: &str = ".icepick.lock";

/// The longest holder command line a second writer's message shows.
const HOLDER_CAP: usize = 300;

/// A case directory, as the kernel names it.
type DirKey = (u64, u64);

/// The locks this process holds: the open lock file and how many guards share it.
fn held() -> &'static Mutex<HashMap<DirKey, (File, usize)>> {
    static HELD: OnceLock<Mutex<HashMap<DirKey, (File, usize)>>> = OnceLock::new();
    HELD.get_or_init(Default::default)
}

/// The write lock of one case directory, released when the last guard of this process for
/// that directory is dropped.
#[derive(Debug)]
pub struct CaseLock {
    key: DirKey,
}

impl Drop for CaseLock {
    fn drop(&mut self) {
        let mut held = held().lock().unwrap_or_else(|e| e.into_inner());
        if let Some(entry) = held.get_mut(&self.key) {
            entry.1 -= 1;
            if entry.1 == 0 {
                // Closing the file releases the flock.
                held.remove(&self.key);
            }
        }
    }
}

/// Takes the write lock of case directory `dir`. Fails with [`CaseError::Busy`], naming the
/// holder, when another process holds it, never waiting.
pub fn lock(dir: &Path) -> Result<CaseLock, CaseError> {
    let io_err = |error| CaseError::Io {
        path: dir.to_owned(),
        error,
    };
    let meta = std::fs::metadata(dir).map_err(io_err)?;
    if !meta.is_dir() {
        return Err(CaseError::NotADirectory {
            path: dir.to_owned(),
        });
    }
    let key = (meta.dev(), meta.ino());
    let mut held = held().lock().unwrap_or_else(|e| e.into_inner());
    if let Some(entry) = held.get_mut(&key) {
        entry.1 += 1;
        return Ok(CaseLock { key });
    }
    let file = open_lock_file(dir)?;
    // SAFETY: flock on a descriptor this function owns.
    if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
        let error = std::io::Error::last_os_error();
        if error.raw_os_error() == Some(libc::EWOULDBLOCK) {
            return Err(CaseError::Busy {
                path: dir.to_owned(),
                holder: holder_of(&file),
            });
        }
        return Err(CaseError::Io {
            path: dir.join(LOCK_FILE),
            error,
        });
    }
    held.insert(key, (file, 1));
    Ok(CaseLock { key })
}

/// Opens (creating it) the lock file of `dir`: not through a link, without blocking on a
/// FIFO, and only when it is a regular file.
fn open_lock_file(dir: &Path) -> Result<File, CaseError> {
    let path: PathBuf = dir.join(LOCK_FILE);
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o644)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(&path)
        .map_err(|error| match error.raw_os_error() {
            Some(libc::ELOOP) => CaseError::UnsafeFile {
                path: path.clone(),
                why: "is a symbolic link".into(),
            },
            _ => CaseError::Io {
                path: path.clone(),
                error,
            },
        })?;
    let meta = file.metadata().map_err(|error| CaseError::Io {
        path: path.clone(),
        error,
    })?;
    if !meta.is_file() {
        return Err(CaseError::UnsafeFile {
            path,
            why: "is not a regular file".into(),
        });
    }
    Ok(file)
}

/// Who holds the flock on `file`, from `/proc/locks` (the holder's pid and command line),
/// or "another process" when the kernel does not say. The command line is another
/// process's text: capped, control characters dropped.
fn holder_of(file: &File) -> String {
    let found = file.metadata().ok().and_then(|m| {
        let locks = std::fs::read_to_string("/proc/locks").ok()?;
        let pid = flock_holder(&locks, m.dev(), m.ino())?;
        let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        let words: Vec<String> = cmdline
            .split(|b| *b == 0)
            .filter(|w| !w.is_empty())
            .map(|w| String::from_utf8_lossy(w).into_owned())
            .collect();
        let shown: String = words
            .join(" ")
            .chars()
            .filter(|c| !c.is_control())
            .take(HOLDER_CAP)
            .collect();
        Some(match shown.is_empty() {
            true => format!("process {pid}"),
            false => format!("process {pid} ({shown})"),
        })
    });
    found.unwrap_or_else(|| "another process".into())
}

/// The pid holding a `FLOCK` on the file `dev`/`ino`, in the text of `/proc/locks`
/// (`1: FLOCK  ADVISORY  WRITE 16676 fe:00:10012501 0 EOF`: major and minor in hex).
fn flock_holder(locks: &str, dev: u64, ino: u64) -> Option<u32> {
    let want = format!("{:02x}:{:02x}:{ino}", libc::major(dev), libc::minor(dev));
    locks.lines().find_map(|line| {
        let f: Vec<&str> = line.split_whitespace().collect();
        (f.get(1) == Some(&"FLOCK") && f.get(5) == Some(&want.as_str()))
            .then(|| f.get(4)?.parse().ok())
            .flatten()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Takes `dir`'s lock through a descriptor of its own, as another process would.
    fn foreign_lock(dir: &Path) -> File {
        let f = open_lock_file(dir).unwrap();
        assert_eq!(
            unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) },
            0
        );
        f
    }

    #[test]
    fn a_second_writer_is_told_who_holds_the_case() {
        let dir = tempfile::tempdir().unwrap();
        let other = foreign_lock(dir.path());
        let err = lock(dir.path()).unwrap_err();
        let CaseError::Busy { holder, .. } = &err else {
            panic!("{err:?}")
        };
        // This test process holds it (through another descriptor): its pid and command.
        assert!(
            holder.starts_with(&format!("process {} (", std::process::id())),
            "{holder}"
        );
        assert!(err.is_bad_input(), "a busy case is exit 2");
        drop(other);
        drop(lock(dir.path()).unwrap());
        assert_eq!(
            std::fs::read(dir.path().join(LOCK_FILE)).unwrap(),
            b"",
            "nothing is written into the lock file"
        );
    }

    #[test]
    fn the_holder_is_read_from_proc_locks() {
        let locks = "1: FLOCK  ADVISORY  WRITE 16554 fe:00:5317687 0 EOF\n\
                     2: POSIX  ADVISORY  WRITE 77 08:01:42 0 EOF\n\
                     3: FLOCK  ADVISORY  WRITE 16676 08:01:42 0 EOF\n";
        let dev = libc::makedev(8, 1);
        assert_eq!(flock_holder(locks, dev, 42), Some(16676));
        assert_eq!(flock_holder(locks, dev, 43), None);
        assert_eq!(
            flock_holder(locks, libc::makedev(0xfe, 0), 5317687),
            Some(16554)
        );
    }

    #[test]
    fn the_lock_is_reentrant_in_one_process_and_released_by_the_last_guard() {
        let dir = tempfile::tempdir().unwrap();
        let outer = lock(dir.path()).unwrap();
        let inner = lock(dir.path()).unwrap();
        drop(inner);
        // Still held by `outer`: a foreign descriptor cannot take it.
        let f = open_lock_file(dir.path()).unwrap();
        assert_ne!(
            unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) },
            0
        );
        drop(outer);
        assert_eq!(
            unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) },
            0
        );
    }

    #[test]
    fn a_lock_file_that_is_a_link_or_a_fifo_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("elsewhere");
        std::fs::write(&target, "x").unwrap();
        std::os::unix::fs::symlink(&target, dir.path().join(LOCK_FILE)).unwrap();
        assert!(matches!(
            lock(dir.path()),
            Err(CaseError::UnsafeFile { .. })
        ));
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "x");

        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join(LOCK_FILE);
        let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
        assert!(matches!(
            lock(dir.path()),
            Err(CaseError::UnsafeFile { .. })
        ));
    }
}
