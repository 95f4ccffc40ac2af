//! Faults of the machine during a reduction: a candidate that cannot be written (a full
//! disk), a compiler or witness that cannot be started (no memory, no descriptors, a missing
//! binary). Such a test says nothing about the candidate, so it must never be read as
//! "uninteresting": that would end a reduction early with a worse result that looks
//! verified, or report a crash that does not reproduce. The first fault is kept here and the
//! reduction is stopped; the stage then ends with it as its error (exit 1), the best result
//! so far kept in the case.

use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use super::ReduceError;

/// The first fault of a reduction, and the flag that stops its tests.
#[derive(Debug)]
pub(super) struct Faults {
    first: Mutex<Option<ReduceError>>,
    stop: Arc<AtomicBool>,
}

impl Faults {
    /// Faults that stop the reduction through `stop` (the reducer's stop flag).
    pub(super) fn new(stop: Arc<AtomicBool>) -> Self {
        Faults {
            first: Mutex::new(None),
            stop,
        }
    }

    /// Records `e` (only the first counts) and stops the reduction; the stage's error says
    /// it once the tests in flight have wound down.
    pub(super) fn record(&self, e: ReduceError) {
        log::debug!("fault: {e}");
        let mut first = self.first.lock().unwrap_or_else(|p| p.into_inner());
        first.get_or_insert(e);
        self.stop.store(true, Ordering::SeqCst);
    }

    /// The first fault, taken out (a second call gives `None`).
    pub(super) fn take(&self) -> Option<ReduceError> {
        self.first.lock().unwrap_or_else(|p| p.into_inner()).take()
    }

    /// `Err` with the first fault, when there was one.
    pub(super) fn check(&self) -> Result<(), ReduceError> {
        self.take().map_or(Ok(()), Err)
    }
}

/// Free space below which a reduction warns that its scratch or its case may fill up.
pub(super) const LOW_SPACE: u64 = 256 << 20;

/// Bytes free for an unprivileged writer on the file system that holds `path`.
pub(super) fn free_bytes(path: &Path) -> Option<u64> {
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).ok()?;
    // SAFETY: a zeroed statvfs is a valid out-parameter; `c` is NUL-terminated.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statvfs(c.as_ptr(), &mut st) } != 0 {
        return None;
    }
    Some(st.f_bavail as u64 * st.f_frsize as u64)
}

/// Warns once per reduction when the file system of its scratch directory or of its case
/// has less than [`LOW_SPACE`] left, before a write fails.
#[derive(Debug, Default)]
pub(super) struct SpaceWatch {
    warned: AtomicBool,
}

impl SpaceWatch {
    /// Looks at the free space where `paths` live, warning once when it is low.
    pub(super) fn look(&self, paths: &[&Path]) {
        if self.warned.load(Ordering::Relaxed) {
            return;
        }
        for p in paths {
            match free_bytes(p) {
                Some(free) if free < LOW_SPACE && !self.warned.swap(true, Ordering::Relaxed) => {
                    log::warn!(
                        "only {} MiB left on the file system of {}: the reduction stops, its best so far kept, if it fills up (TMPDIR names where icepick's scratch goes)",
                        free >> 20,
                        p.display()
                    );
                }
                _ => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_fault_stops_the_reduction_and_is_its_error() {
        let stop = Arc::new(AtomicBool::new(false));
        let f = Faults::new(stop.clone());
        assert!(f.check().is_ok());
        let enospc = std::io::Error::from_raw_os_error(libc::ENOSPC);
        f.record(ReduceError::Io("/scratch/c1.ii".into(), enospc));
        f.record(ReduceError::NothingToResume);
        assert!(stop.load(Ordering::SeqCst));
        let e = f.check().unwrap_err();
        assert!(e.to_string().contains("No space left on device"), "{e}");
        assert!(f.check().is_ok(), "taken once");
    }

    #[test]
    fn free_space_is_read_from_the_file_system() {
        let dir = tempfile::tempdir().unwrap();
        assert!(free_bytes(dir.path()).is_some_and(|b| b > 0));
        assert_eq!(free_bytes(&dir.path().join("missing")), None);
    }
}
