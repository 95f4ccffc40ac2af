//! The process runner's per-icepick-process session: the private scratch directory and the
//! guardian process. Together they make sure that nothing icepick starts outlives it, and
//! that it leaves no temporary files behind, whichever way it ends (see the design in the
//! [`crate::exec`] module doc and docs/processes.md).
//!
//! Started lazily by the first spawn (or the first [`scratch_dir`] call); ended by
//! [`shutdown`], which `icepick`'s `main` calls on every exit path that runs code, and, when
//! no code runs any more (`kill -9`), by the guardian noticing that its pipe closed.

use std::ffi::CString;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, OnceLock};

/// Prefix of the scratch directories in the temp directory: `icepick-<pid>-<random>`.
pub const SCRATCH_PREFIX: &str = "icepick-";

struct Session {
    /// `$TMPDIR/icepick-<pid>-<random>/`: icepick's own scratch.
    dir: PathBuf,
    /// `dir/tmp`: the TMPDIR of every child.
    tmp: PathBuf,
    guardian: Mutex<Option<Guardian>>,
    /// `dir/.lock`, held (flock) for the life of the process and its guardian: the sign that
    /// the directory is in use, also for an icepick in another PID namespace, to which our pid
    /// means nothing (a farm test runs icepick under `unshare -p` with the same TMPDIR).
    _lock: Option<std::fs::File>,
}

/// The guardian's pid and the write end of the pipe it reads.
struct Guardian {
    pid: libc::pid_t,
    fd: libc::c_int,
}

static SESSION: OnceLock<Option<Session>> = OnceLock::new();
/// Process groups of children running now: [`shutdown`] kills them.
static GROUPS: Mutex<Vec<i32>> = Mutex::new(Vec::new());
static SHUT_DOWN: AtomicBool = AtomicBool::new(false);
/// Directories [`shutdown`] removes (see [`remove_at_exit`]).
static AT_EXIT: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// Removes the directory `path` (recursively) if icepick exits while the returned guard is
/// alive: for scratch that must live elsewhere than [`scratch_dir`] (a case being assembled
/// beside its destination). Dropping the guard forgets it and removes nothing.
#[must_use = "the directory is removed at exit only while the guard lives"]
pub struct RemoveAtExit(PathBuf);

/// See [`RemoveAtExit`].
pub fn remove_at_exit(path: &Path) -> RemoveAtExit {
    lock(&AT_EXIT).push(path.to_path_buf());
    RemoveAtExit(path.to_path_buf())
}

impl Drop for RemoveAtExit {
    fn drop(&mut self) {
        let mut v = lock(&AT_EXIT);
        if let Some(i) = v.iter().position(|p| *p == self.0) {
            v.swap_remove(i);
        }
    }
}

fn lock<T>(m: &'static Mutex<T>) -> std::sync::MutexGuard<'static, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

fn session() -> Option<&'static Session> {
    SESSION.get_or_init(|| Session::start().ok()).as_ref()
}

impl Session {
    fn start() -> io::Result<Session> {
        let base = std::env::temp_dir();
        sweep_stale(&base);
        let dir = tempfile::Builder::new()
            .prefix(&format!("{SCRATCH_PREFIX}{}-", std::process::id()))
            .permissions(std::os::unix::fs::PermissionsExt::from_mode(0o700))
            .tempdir_in(&base)?
            .keep();
        let tmp = dir.join("tmp");
        if let Err(e) = std::fs::create_dir(&tmp) {
            let _ = std::fs::remove_dir_all(&dir);
            return Err(e);
        }
        let lock = hold_lock(&dir);
        let guardian = spawn_guardian(&dir);
        Ok(Session {
            dir,
            tmp,
            guardian: Mutex::new(guardian),
            _lock: lock,
        })
    }
}

/// icepick's private scratch directory, `$TMPDIR/icepick-<pid>-<random>/` (mode 0700), made
/// on first use and removed when icepick exits (also after `kill -9`, by the guardian).
/// Put per-run scratch (test directories, symbolizer files) inside it. Children get its
/// `tmp/` subdirectory as TMPDIR, so files a compiler names in its output stay valid until
/// icepick exits. Falls back to the system temp directory when it cannot be made.
pub fn scratch_dir() -> PathBuf {
    match session() {
        Some(s) => s.dir.clone(),
        None => std::env::temp_dir(),
    }
}

/// A fresh, empty directory inside [`scratch_dir`] for one run's files (a rerun's output and
/// what it writes beside it), removed when the guard drops (and with the scratch directory
/// at exit in any case).
pub fn fresh_scratch(prefix: &str) -> io::Result<tempfile::TempDir> {
    tempfile::Builder::new()
        .prefix(prefix)
        .tempdir_in(scratch_dir())
}

/// The TMPDIR given to children (`None` when the session could not be made).
pub(crate) fn child_tmp() -> Option<&'static Path> {
    session().map(|s| s.tmp.as_path())
}

/// Records a child's process group (here and with the guardian) until [`untrack`].
pub(crate) fn track(pgid: i32) {
    if pgid <= 0 {
        return;
    }
    lock_groups().push(pgid);
    tell_guardian(pgid);
}

/// Forgets a process group whose members are all dead.
pub(crate) fn untrack(pgid: i32) {
    if pgid <= 0 {
        return;
    }
    {
        let mut g = lock_groups();
        if let Some(i) = g.iter().position(|&p| p == pgid) {
            g.swap_remove(i);
        }
    }
    tell_guardian(-pgid);
}

fn lock_groups() -> std::sync::MutexGuard<'static, Vec<i32>> {
    lock(&GROUPS)
}

fn tell_guardian(record: i32) {
    let Some(s) = SESSION.get().and_then(|s| s.as_ref()) else {
        return;
    };
    let g = s.guardian.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(g) = g.as_ref() {
        let bytes = record.to_ne_bytes();
        loop {
            // SAFETY: writes 4 bytes from a live buffer to our pipe; a write of at most
            // PIPE_BUF bytes is atomic, so records from several threads never interleave.
            let n = unsafe { libc::write(g.fd, bytes.as_ptr().cast(), bytes.len()) };
            if n >= 0 || io::Error::last_os_error().kind() != io::ErrorKind::Interrupted {
                break;
            }
        }
    }
}

/// Ends the session: SIGKILLs every running child's process group, removes the scratch
/// directory, and lets the guardian go (closing its pipe) and reaps it. Idempotent; call it
/// just before the process exits. Later spawns still work but are unguarded.
pub fn shutdown() {
    if SHUT_DOWN.swap(true, Ordering::SeqCst) {
        return;
    }
    for pgid in std::mem::take(&mut *lock_groups()) {
        // SAFETY: kill(2) on a process group we started.
        unsafe {
            libc::kill(-pgid, libc::SIGKILL);
        }
    }
    for dir in std::mem::take(&mut *lock(&AT_EXIT)) {
        let _ = std::fs::remove_dir_all(dir);
    }
    let Some(s) = SESSION.get().and_then(|s| s.as_ref()) else {
        return;
    };
    let _ = std::fs::remove_dir_all(&s.dir);
    let guardian = s.guardian.lock().unwrap_or_else(|e| e.into_inner()).take();
    if let Some(g) = guardian {
        // SAFETY: closes our own pipe end and waits for our own child.
        unsafe {
            libc::close(g.fd);
            while libc::waitpid(g.pid, std::ptr::null_mut(), 0) < 0
                && io::Error::last_os_error().kind() == io::ErrorKind::Interrupted
            {}
        }
    }
}

/// The name of the lock file in a scratch directory.
pub(crate) const LOCK_FILE: &str = ".lock";

/// Creates and locks `dir/.lock`; the lock lasts while the returned file (or a forked copy of
/// its descriptor, the guardian's) is open.
pub(crate) fn hold_lock(dir: &Path) -> Option<std::fs::File> {
    use std::os::fd::AsRawFd;
    let f = std::fs::File::create(dir.join(LOCK_FILE)).ok()?;
    // SAFETY: flock(2) on a descriptor we own.
    let r = unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
    (r == 0).then_some(f)
}

/// True when `dir/.lock` is held by some live process (any PID namespace), or when the
/// directory has no lock file yet and is younger than a minute (made, not yet locked).
fn in_use(dir: &Path, meta: &std::fs::Metadata) -> bool {
    use std::os::fd::AsRawFd;
    match std::fs::File::open(dir.join(LOCK_FILE)) {
        // SAFETY: flock(2) on a descriptor we own; the lock goes with it when it is closed.
        Ok(f) => unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) != 0 },
        Err(_) => meta
            .modified()
            .ok()
            .and_then(|m| m.elapsed().ok())
            .map_or(true, |age| age < std::time::Duration::from_secs(60)),
    }
}

/// Removes scratch directories `icepick-<pid>-*` in `base` that belong to this user, whose
/// process is gone and whose lock nobody holds (left by an icepick killed before anything
/// could clean up, and whose guardian was killed too). The lock matters when the pid does
/// not: an icepick in another PID namespace sharing this TMPDIR.
pub(crate) fn sweep_stale(base: &Path) {
    let Ok(entries) = std::fs::read_dir(base) else {
        return;
    };
    // SAFETY: getuid(2) cannot fail.
    let uid = unsafe { libc::getuid() };
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(pid) = stale_owner(name.as_bytes()) else {
            continue;
        };
        let Ok(meta) = e.path().symlink_metadata() else {
            continue;
        };
        if !meta.is_dir() || meta.uid() != uid || process_exists(pid) || in_use(&e.path(), &meta) {
            continue;
        }
        let _ = std::fs::remove_dir_all(e.path());
    }
}

/// The pid in a scratch directory's name `icepick-<pid>-<random>`.
pub(crate) fn stale_owner(name: &[u8]) -> Option<libc::pid_t> {
    let rest = name.strip_prefix(SCRATCH_PREFIX.as_bytes())?;
    let dash = rest.iter().position(|&b| b == b'-')?;
    let pid: libc::pid_t = std::str::from_utf8(&rest[..dash]).ok()?.parse().ok()?;
    (pid > 0 && rest.len() > dash + 1).then_some(pid)
}

fn process_exists(pid: libc::pid_t) -> bool {
    // SAFETY: signal 0 only checks for existence.
    let r = unsafe { libc::kill(pid, 0) };
    r == 0 || io::Error::last_os_error().raw_os_error() != Some(libc::ESRCH)
}

/// Forks the guardian (see the module doc). `None` when it cannot be started: the children
/// still die with their spawning thread (PDEATHSIG), only the group-wide cleanup is lost.
fn spawn_guardian(dir: &Path) -> Option<Guardian> {
    // Everything the child needs is prepared here: after fork, a multi-threaded process may
    // only call async-signal-safe functions (no allocation, no locks).
    let dir_c = CString::new(dir.as_os_str().as_bytes()).ok()?;
    let rm: &std::ffi::CStr = c"/bin/rm";
    let argv: [*const libc::c_char; 5] = [
        c"rm".as_ptr(),
        c"-rf".as_ptr(),
        c"--".as_ptr(),
        dir_c.as_ptr(),
        std::ptr::null(),
    ];
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: pipe2 fills the two-element array. O_CLOEXEC: no child inherits an end (a
    // child holding the write end would keep the guardian from ever seeing EOF).
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return None;
    }
    let [r, w] = fds;
    // SAFETY: the child runs only `guardian_main`, which uses async-signal-safe calls on
    // data prepared above, and never returns.
    match unsafe { libc::fork() } {
        -1 => {
            // SAFETY: our own descriptors.
            unsafe {
                libc::close(r);
                libc::close(w);
            }
            None
        }
        0 => unsafe { guardian_main(r, rm.as_ptr(), &argv, dir_c.as_ptr()) },
        pid => {
            // SAFETY: the read end is the guardian's.
            unsafe {
                libc::close(r);
            }
            Some(Guardian { pid, fd: w })
        }
    }
}

/// Most process groups the guardian tracks at once (far more than tests run in parallel).
const MAX_GROUPS: usize = 1024;

/// The guardian: reads `+pgid`/`-pgid` records (native-endian i32) until EOF, which comes
/// when every write end is closed, i.e. when icepick has exited for whatever reason; then
/// SIGKILLs every group still recorded and replaces itself by `rm -rf -- DIR`.
///
/// # Safety
/// Only to be called in the child right after `fork`; every pointer must be valid.
unsafe fn guardian_main(
    r: libc::c_int,
    rm: *const libc::c_char,
    argv: &[*const libc::c_char; 5],
    dir: *const libc::c_char,
) -> ! {
    // SAFETY (whole body): async-signal-safe system calls only, on our own descriptors and
    // on stack buffers; no allocation, no panicking index.
    unsafe {
        // Its own session: Ctrl-C, a terminal hang-up or a kill of icepick's process group
        // does not reach it; it ends when icepick has ended.
        libc::setsid();
        for sig in [
            libc::SIGINT,
            libc::SIGTERM,
            libc::SIGHUP,
            libc::SIGQUIT,
            libc::SIGPIPE,
        ] {
            libc::signal(sig, libc::SIG_IGN);
        }
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::pthread_sigmask(libc::SIG_SETMASK, &set, std::ptr::null_mut());
        libc::prctl(
            libc::PR_SET_NAME,
            c"icepick-guard".as_ptr() as libc::c_ulong,
            0,
            0,
            0,
        );
        // Hold no other descriptor: a copy of a child's stdout pipe would keep its reader
        // waiting for EOF, a copy of icepick's stdout would keep a caller's pipe open.
        let null = libc::open(c"/dev/null".as_ptr(), libc::O_RDWR);
        if null >= 0 {
            libc::dup2(null, 0);
            libc::dup2(null, 1);
            libc::dup2(null, 2);
        }
        close_from(3, r);

        let mut groups = [0i32; MAX_GROUPS];
        let mut n = 0usize;
        let mut buf = [0u8; 1024];
        let mut have = 0usize;
        loop {
            let k = libc::read(r, buf.as_mut_ptr().add(have).cast(), buf.len() - have);
            if k == 0 {
                break;
            }
            if k < 0 {
                if *libc::__errno_location() == libc::EINTR {
                    continue;
                }
                break;
            }
            have += k as usize;
            let mut i = 0;
            while have - i >= 4 {
                let rec = i32::from_ne_bytes([buf[i], buf[i + 1], buf[i + 2], buf[i + 3]]);
                i += 4;
                if rec > 0 {
                    if n < MAX_GROUPS {
                        groups[n] = rec;
                        n += 1;
                    }
                } else if let Some(j) = groups[..n].iter().position(|&g| g == -rec) {
                    n -= 1;
                    groups[j] = groups[n];
                }
            }
            let mut j = 0;
            while i + j < have {
                buf[j] = buf[i + j];
                j += 1;
            }
            have = j;
        }
        for &g in &groups[..n] {
            libc::kill(-g, libc::SIGKILL);
        }
        if libc::access(dir, libc::F_OK) == 0 {
            libc::close(r);
            libc::execv(rm, argv.as_ptr());
        }
        libc::_exit(0)
    }
}

/// Closes every descriptor from `low` up, except `keep`.
///
/// # Safety
/// Async-signal-safe; closes descriptors other code may think it owns: only for the guardian.
unsafe fn close_from(low: libc::c_int, keep: libc::c_int) {
    // SAFETY: close_range(2) and close(2) on descriptor numbers.
    unsafe {
        let ok = if keep > low {
            libc::syscall(
                libc::SYS_close_range,
                low as libc::c_uint,
                (keep - 1) as libc::c_uint,
                0,
            ) == 0
        } else {
            true
        };
        if ok
            && libc::syscall(
                libc::SYS_close_range,
                (keep.max(low - 1) + 1) as libc::c_uint,
                libc::c_uint::MAX,
                0,
            ) == 0
        {
            return;
        }
        let mut lim: libc::rlimit = std::mem::zeroed();
        let max = if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) == 0 {
            lim.rlim_cur.min(65536) as libc::c_int
        } else {
            4096
        };
        for fd in low..max {
            if fd != keep {
                libc::close(fd);
            }
        }
    }
}
