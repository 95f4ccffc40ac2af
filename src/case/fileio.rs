//! The one way a stage reads or writes a file inside a case directory.
//!
//! A case may come from someone else, so any name in it may be a symbolic link (to
//! `/etc/passwd`, to a directory elsewhere), a hard link to a file outside, a FIFO or a
//! device. Every path is therefore walked from a descriptor of the case directory with
//! `openat(O_NOFOLLOW)`, one component at a time: a link anywhere below the case directory is
//! refused, and so is anything but a directory on the way and a regular file at the end. Reads
//! open without blocking (a FIFO never stalls them) and stop at a size cap set by the caller.
//! Writes never open an existing file: they go to a fresh temporary file in the same directory,
//! which is renamed over the name, so whatever the name was (a link, a hard link to another
//! file) is replaced, never written through.
//!
//! The case directory itself is the path the user gave and is followed like any argument.

use std::ffi::CString;
use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use super::CaseError;

/// Size caps for what is read from a case: past them the file is refused, not read.
pub mod cap {
    /// `case.json`: the largest real ones hold a few MB of crash text.
    pub const CASE_JSON: u64 = 64 << 20;
    /// A rendered `report.md`.
    pub const REPORT: u64 = 64 << 20;
    /// The preprocessed input and its reductions.
    pub const INPUT: u64 = 1 << 30;
    /// Logs, traces and other text read for the report.
    pub const LOG: u64 = 256 << 20;
}

/// Why a case file is refused.
fn refuse(dir: &Path, rel: &str, why: impl Into<String>) -> CaseError {
    CaseError::UnsafeFile {
        path: dir.join(rel),
        why: why.into(),
    }
}

fn cstr(s: &[u8]) -> io::Result<CString> {
    CString::new(s).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))
}

fn open_at(at: RawFd, name: &[u8], flags: libc::c_int, mode: libc::mode_t) -> io::Result<OwnedFd> {
    let c = cstr(name)?;
    // SAFETY: `c` is a valid NUL-terminated string; the returned descriptor is owned here.
    let fd = unsafe {
        libc::openat(
            at,
            c.as_ptr(),
            flags | libc::O_CLOEXEC,
            mode as libc::c_uint,
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `fd` was just returned by openat and nothing else owns it.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

fn fstat(fd: RawFd) -> io::Result<libc::stat> {
    // SAFETY: zeroed `stat` is a valid out-parameter for fstat.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    if unsafe { libc::fstat(fd, &mut st) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(st)
}

/// `lstat` of `name` in directory `at`; `None` when nothing has that name.
fn lstat_at(at: RawFd, name: &[u8]) -> io::Result<Option<libc::stat>> {
    let c = cstr(name)?;
    // SAFETY: as in `fstat`.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    if unsafe { libc::fstatat(at, c.as_ptr(), &mut st, libc::AT_SYMLINK_NOFOLLOW) } != 0 {
        let e = io::Error::last_os_error();
        return if e.kind() == io::ErrorKind::NotFound {
            Ok(None)
        } else {
            Err(e)
        };
    }
    Ok(Some(st))
}

fn kind_name(mode: libc::mode_t) -> &'static str {
    match mode & libc::S_IFMT {
        libc::S_IFLNK => "a symbolic link",
        libc::S_IFDIR => "a directory",
        libc::S_IFIFO => "a FIFO",
        libc::S_IFCHR => "a character device",
        libc::S_IFBLK => "a block device",
        libc::S_IFSOCK => "a socket",
        _ => "not a regular file",
    }
}

/// The components of a case-relative name: no absolute path, no `..`, no `.`, no empties.
fn components<'a>(dir: &Path, rel: &'a str) -> Result<Vec<&'a [u8]>, CaseError> {
    let parts: Vec<&[u8]> = rel.as_bytes().split(|b| *b == b'/').collect();
    if rel.is_empty()
        || parts
            .iter()
            .any(|p| p.is_empty() || *p == b"." || *p == b"..")
        || rel.contains('\0')
    {
        return Err(refuse(dir, rel, "is not a plain name inside the case"));
    }
    Ok(parts)
}

/// Opens the case directory and walks to the directory that holds `rel`'s last component,
/// refusing links and non-directories on the way; with `create`, missing directories are made.
fn parent_of(dir: &Path, rel: &str, create: bool) -> Result<(OwnedFd, Vec<u8>), CaseError> {
    let parts = components(dir, rel)?;
    let io_err = |error: io::Error| CaseError::Io {
        path: dir.to_owned(),
        error,
    };
    let root = open_at(
        libc::AT_FDCWD,
        dir.as_os_str().as_bytes(),
        libc::O_RDONLY | libc::O_DIRECTORY,
        0,
    )
    .map_err(io_err)?;
    let (last, between) = parts.split_last().expect("split gives one part at least");
    let mut at = root;
    let mut walked = String::new();
    for part in between {
        if !walked.is_empty() {
            walked.push('/');
        }
        walked.push_str(&String::from_utf8_lossy(part));
        let flags = libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW;
        let next = match open_at(at.as_raw_fd(), part, flags, 0) {
            Ok(fd) => fd,
            Err(e) if create && e.kind() == io::ErrorKind::NotFound => {
                let c = cstr(part).map_err(io_err)?;
                // SAFETY: valid descriptor and NUL-terminated name.
                if unsafe { libc::mkdirat(at.as_raw_fd(), c.as_ptr(), 0o755) } != 0 {
                    let e = io::Error::last_os_error();
                    if e.kind() != io::ErrorKind::AlreadyExists {
                        return Err(CaseError::Io {
                            path: dir.join(&walked),
                            error: e,
                        });
                    }
                }
                open_at(at.as_raw_fd(), part, flags, 0)
                    .map_err(|e| not_dir(dir, &walked, at.as_raw_fd(), part, e))?
            }
            Err(e) => return Err(not_dir(dir, &walked, at.as_raw_fd(), part, e)),
        };
        at = next;
    }
    Ok((at, last.to_vec()))
}

/// The error for a directory component that would not open: a link or a file is refused
/// (exit 2), anything else is an I/O error.
fn not_dir(dir: &Path, walked: &str, at: RawFd, part: &[u8], e: io::Error) -> CaseError {
    match lstat_at(at, part) {
        Ok(Some(st)) if st.st_mode & libc::S_IFMT != libc::S_IFDIR => refuse(
            dir,
            walked,
            format!("is {}, not a directory", kind_name(st.st_mode)),
        ),
        _ => CaseError::Io {
            path: dir.join(walked),
            error: e,
        },
    }
}

/// Opens `rel` inside case directory `dir` for reading: a regular file reached without links,
/// at most `cap` bytes long. `Ok(None)` when it does not exist.
pub fn open(dir: &Path, rel: &str, cap: u64) -> Result<Option<(File, u64)>, CaseError> {
    let (at, last) = match parent_of(dir, rel, false) {
        Ok(p) => p,
        Err(CaseError::Io { error, .. }) if error.kind() == io::ErrorKind::NotFound => {
            return Ok(None)
        }
        Err(e) => return Err(e),
    };
    // O_NONBLOCK: opening a FIFO must not wait for a writer; it is refused just below.
    let flags = libc::O_RDONLY | libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY;
    let fd = match open_at(at.as_raw_fd(), &last, flags, 0) {
        Ok(fd) => fd,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => {
            return Err(match lstat_at(at.as_raw_fd(), &last) {
                Ok(Some(st)) if st.st_mode & libc::S_IFMT != libc::S_IFREG => {
                    refuse(dir, rel, format!("is {}", kind_name(st.st_mode)))
                }
                _ => CaseError::Unreadable {
                    path: dir.join(rel),
                    error: e,
                },
            })
        }
    };
    let st = fstat(fd.as_raw_fd()).map_err(|error| CaseError::Unreadable {
        path: dir.join(rel),
        error,
    })?;
    if st.st_mode & libc::S_IFMT != libc::S_IFREG {
        return Err(refuse(dir, rel, format!("is {}", kind_name(st.st_mode))));
    }
    let size = st.st_size.max(0) as u64;
    if size > cap {
        return Err(too_large(dir, rel, cap));
    }
    Ok(Some((File::from(fd), size)))
}

fn too_large(dir: &Path, rel: &str, cap: u64) -> CaseError {
    refuse(dir, rel, format!("is larger than {} MiB", cap >> 20))
}

/// Reads `rel` inside case directory `dir` (see [`open`]); `Ok(None)` when it does not exist.
pub fn read(dir: &Path, rel: &str, cap: u64) -> Result<Option<Vec<u8>>, CaseError> {
    let Some((f, size)) = open(dir, rel, cap)? else {
        return Ok(None);
    };
    let mut out = Vec::with_capacity(size as usize);
    // A file that grows after the size check still stops at the cap.
    f.take(cap + 1)
        .read_to_end(&mut out)
        .map_err(|error| CaseError::Unreadable {
            path: dir.join(rel),
            error,
        })?;
    if out.len() as u64 > cap {
        return Err(too_large(dir, rel, cap));
    }
    Ok(Some(out))
}

/// [`read`], with a missing file an error.
pub fn read_existing(dir: &Path, rel: &str, cap: u64) -> Result<Vec<u8>, CaseError> {
    read(dir, rel, cap)?.ok_or_else(|| CaseError::Io {
        path: dir.join(rel),
        error: io::Error::from(io::ErrorKind::NotFound),
    })
}

static TEMP_SEQ: AtomicU64 = AtomicU64::new(0);

/// A fresh file beside `last` in `at`, created exclusively (never an existing one).
fn fresh(at: RawFd, dir: &Path, rel: &str) -> Result<(OwnedFd, Vec<u8>), CaseError> {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    for _ in 0..100 {
        let name = format!(
            ".icepick-{}-{}-{nanos:x}.tmp",
            std::process::id(),
            TEMP_SEQ.fetch_add(1, Ordering::Relaxed)
        );
        let flags = libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW;
        match open_at(at, name.as_bytes(), flags, 0o644) {
            Ok(fd) => return Ok((fd, name.into_bytes())),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(error) => {
                return Err(CaseError::Io {
                    path: dir.join(rel),
                    error,
                })
            }
        }
    }
    Err(CaseError::Io {
        path: dir.join(rel),
        error: io::Error::from(io::ErrorKind::AlreadyExists),
    })
}

/// Refuses to replace `last` in `at` when it is there and is not a regular file: a link or a
/// FIFO planted under a case's name is a mistake or an attack, and either way worth a stop.
fn check_target(at: RawFd, last: &[u8], dir: &Path, rel: &str) -> Result<(), CaseError> {
    match lstat_at(at, last) {
        Ok(Some(st)) if st.st_mode & libc::S_IFMT != libc::S_IFREG => {
            Err(refuse(dir, rel, format!("is {}", kind_name(st.st_mode))))
        }
        Ok(_) => Ok(()),
        Err(error) => Err(CaseError::Io {
            path: dir.join(rel),
            error,
        }),
    }
}

fn rename_at(at: RawFd, from: &[u8], to: &[u8]) -> io::Result<()> {
    let (f, t) = (cstr(from)?, cstr(to)?);
    // SAFETY: valid descriptor and NUL-terminated names.
    if unsafe { libc::renameat(at, f.as_ptr(), at, t.as_ptr()) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

fn unlink_at(at: RawFd, name: &[u8]) {
    if let Ok(c) = cstr(name) {
        // SAFETY: valid descriptor and NUL-terminated name.
        unsafe { libc::unlinkat(at, c.as_ptr(), 0) };
    }
}

/// Writes `bytes` as `rel` inside case directory `dir`, so that a reader (or a crash at any
/// moment) sees the old file or the new one, never a mix, and nothing outside the case is
/// touched: temp file in the same directory, fsync, rename. Missing directories are made.
pub fn write(dir: &Path, rel: &str, bytes: &[u8]) -> Result<(), CaseError> {
    write_mode(dir, rel, bytes, 0o644)
}

/// [`write`] with the file's mode (`0o755` for a script).
pub fn write_mode(dir: &Path, rel: &str, bytes: &[u8], mode: u32) -> Result<(), CaseError> {
    use std::os::unix::fs::PermissionsExt;
    let (at, last) = parent_of(dir, rel, true)?;
    check_target(at.as_raw_fd(), &last, dir, rel)?;
    let (fd, tmp) = fresh(at.as_raw_fd(), dir, rel)?;
    let mut f = File::from(fd);
    let done = f
        .set_permissions(std::fs::Permissions::from_mode(mode))
        .and_then(|()| f.write_all(bytes))
        .and_then(|()| f.sync_all())
        .and_then(|()| rename_at(at.as_raw_fd(), &tmp, &last));
    if let Err(error) = done {
        unlink_at(at.as_raw_fd(), &tmp);
        return Err(CaseError::Io {
            path: dir.join(rel),
            error,
        });
    }
    Ok(())
}

/// A new, empty `rel` inside case directory `dir`, open for writing as it grows (a trace): a
/// fresh file renamed over the name at once, so what was there is replaced, never written
/// through.
pub fn create(dir: &Path, rel: &str) -> Result<File, CaseError> {
    let (at, last) = parent_of(dir, rel, true)?;
    check_target(at.as_raw_fd(), &last, dir, rel)?;
    let (fd, tmp) = fresh(at.as_raw_fd(), dir, rel)?;
    if let Err(error) = rename_at(at.as_raw_fd(), &tmp, &last) {
        unlink_at(at.as_raw_fd(), &tmp);
        return Err(CaseError::Io {
            path: dir.join(rel),
            error,
        });
    }
    Ok(File::from(fd))
}

/// Splits an absolute or relative `path` known to lie in case directory `dir` into the
/// case-relative name [`read`] and [`write`] take; `None` when it is not below `dir`.
pub fn relative(dir: &Path, path: &Path) -> Option<String> {
    let rel: PathBuf = path.strip_prefix(dir).ok()?.into();
    let s = rel.to_str()?.to_owned();
    (!s.is_empty()).then_some(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    #[test]
    fn write_through_a_link_is_refused_and_the_target_is_untouched() {
        let case = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let target = outside.path().join("precious");
        std::fs::write(&target, "keep").unwrap();
        std::fs::create_dir(case.path().join("logs")).unwrap();
        symlink(&target, case.path().join("logs/trace")).unwrap();
        let e = write(case.path(), "logs/trace", b"x").unwrap_err();
        assert!(e.to_string().contains("symbolic link"), "{e}");
        assert!(create(case.path(), "logs/trace").is_err());
        assert_eq!(std::fs::read(&target).unwrap(), b"keep");
    }

    #[test]
    fn a_linked_directory_is_refused() {
        let case = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        symlink(outside.path(), case.path().join("logs")).unwrap();
        let e = write(case.path(), "logs/a", b"x").unwrap_err();
        assert!(e.to_string().contains("not a directory"), "{e}");
        assert!(read(case.path(), "logs/a", 10).is_err());
        assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 0);
    }

    #[test]
    fn a_hard_link_is_replaced_not_written_through() {
        let case = tempfile::tempdir().unwrap();
        let other = case.path().join("other");
        std::fs::write(&other, "keep").unwrap();
        std::fs::hard_link(&other, case.path().join("report.md")).unwrap();
        write(case.path(), "report.md", b"new").unwrap();
        create(case.path(), "report.md").unwrap();
        assert_eq!(std::fs::read(&other).unwrap(), b"keep");
        assert_eq!(std::fs::read(case.path().join("report.md")).unwrap(), b"");
    }

    #[test]
    fn reads_refuse_devices_fifos_links_and_big_files() {
        let case = tempfile::tempdir().unwrap();
        symlink("/dev/zero", case.path().join("zero")).unwrap();
        assert!(read(case.path(), "zero", 10).is_err());
        let fifo = CString::new(case.path().join("fifo").as_os_str().as_bytes()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
        let e = read(case.path(), "fifo", 10).unwrap_err();
        assert!(e.to_string().contains("FIFO"), "{e}");
        std::fs::write(case.path().join("big"), [0u8; 11]).unwrap();
        assert!(read(case.path(), "big", 10).is_err());
        assert_eq!(read(case.path(), "big", 11).unwrap().unwrap().len(), 11);
        assert!(read(case.path(), "missing", 10).unwrap().is_none());
        assert!(read(case.path(), "../x", 10).is_err());
    }

    #[test]
    fn write_makes_directories_and_leaves_no_temp_file() {
        let case = tempfile::tempdir().unwrap();
        write(case.path(), "a/b/c.txt", b"hi").unwrap();
        write(case.path(), "a/b/c.txt", b"ho").unwrap();
        assert_eq!(read(case.path(), "a/b/c.txt", 10).unwrap().unwrap(), b"ho");
        assert_eq!(
            std::fs::read_dir(case.path().join("a/b")).unwrap().count(),
            1
        );
    }
}
