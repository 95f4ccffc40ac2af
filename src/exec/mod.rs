//! The only module that spawns processes, and the one that makes sure none outlives icepick.
//!
//! Every child runs in its own process group with a null stdin; stdout and stderr are drained
//! concurrently (no pipe deadlock) and capped keeping head *and* tail ([`capped`]: a crash
//! report comes last); a timeout, a cancellation or an interrupt ([`crate::interrupt`]) sends
//! SIGTERM to the whole group, waits a short grace period, then SIGKILLs the group; and once
//! the child has exited, whatever it left behind in its group is killed too.
//! A crash, a timeout or a cancellation is a [`Status`] value: `Err` means the process could not
//! be started at all.
//!
//! Nothing outlives icepick, however it ends (design; docs/processes.md says more):
//! - **The guardian** ([`session`]). The first spawn forks a tiny helper holding the read end
//!   of a pipe (the write end is close-on-exec, so only icepick holds it). icepick writes each
//!   child's process group to it when the child starts and again when the group is gone. When
//!   icepick dies for any reason, `kill -9` included, the kernel closes the write end; the
//!   guardian reads EOF, SIGKILLs every group still recorded, and removes the scratch
//!   directory. It runs in its own session and ignores SIGINT/SIGTERM/SIGHUP, so the signal
//!   that stops icepick does not take it first. It does not use PR_SET_PDEATHSIG: on Linux the
//!   "parent" is the thread that forked, and EOF says exactly "icepick is gone".
//! - **PR_SET_PDEATHSIG(SIGKILL) in each child**, as a second line: it covers the instant
//!   between fork and the record reaching the guardian, and a guardian killed together with
//!   icepick. It is safe here because the thread that spawns a child always waits for it (the
//!   caller's thread, or a runtime worker thread, which lives as long as the process).
//! - **A private scratch directory** (`$TMPDIR/icepick-<pid>-<random>/`, [`scratch_dir`]) whose
//!   `tmp/` is every child's TMPDIR/TMP/TEMP, so compilers, symbolizers and test scripts leave
//!   their temporary files there; it lives until icepick exits (files a compiler names in its
//!   output stay valid) and is removed by [`shutdown`] on every exit path that runs code, by the
//!   guardian otherwise, and, if the guardian was killed too, by the next icepick (stale
//!   `icepick-<pid>-*` directories of dead pids are swept).
//! - A process that leaves its process group (`setsid`) escapes all of this except the
//!   guardian-less PDEATHSIG of its own parent; compilers and test scripts do not do that.

use std::ffi::{OsStr, OsString};
use std::io;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use tokio::io::{AsyncRead, AsyncReadExt};

mod capped;
mod passthrough;
mod session;

pub use capped::{marker, one_line, ONE_LINE_MAX};
pub use passthrough::{become_program, passthrough, run_fed};
pub use session::{
    fresh_scratch, remove_at_exit, scratch_dir, shutdown, RemoveAtExit, SCRATCH_PREFIX,
};

/// Held shared by every spawn, exclusively while a file that a child may run is written
/// ([`write_runnable`]). A fork copies every open descriptor into the child until it execs;
/// were a file that another thread is writing among them, running that file in the meantime
/// would fail with ETXTBSY ("text file busy"), and a reduction test would read as
/// uninteresting. `spawn` returns once the child has exec'd (its copies closed), so nothing
/// spawned holds a runnable file open for writing once the writer is done.
static SPAWN_LOCK: std::sync::RwLock<()> = std::sync::RwLock::new(());

/// The shared side of [`SPAWN_LOCK`], held across one spawn.
fn spawning() -> std::sync::RwLockReadGuard<'static, ()> {
    SPAWN_LOCK.read().unwrap_or_else(|e| e.into_inner())
}

/// Writes `bytes` to `path` with permissions `mode`, while no child is being spawned: for
/// files that a child may run (a `reduce --test` script's executable inputs).
pub fn write_runnable(path: &Path, bytes: &[u8], mode: u32) -> io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let _no_spawn = SPAWN_LOCK.write().unwrap_or_else(|e| e.into_inner());
    std::fs::write(path, bytes)?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
}

/// Default cap on each of stdout and stderr (half kept from the start, half from the end).
pub const DEFAULT_OUTPUT_CAP: usize = 8 << 20;

/// What to run.
#[derive(Debug, Clone)]
pub struct Cmd {
    pub program: OsString,
    pub args: Vec<OsString>,
    pub cwd: Option<PathBuf>,
    /// Variables to set (`Some`) or remove (`None`) on top of the inherited environment.
    pub env: Vec<(OsString, Option<OsString>)>,
    pub timeout: Duration,
    /// Bytes kept of each of stdout and stderr: the first half and the last half, with a
    /// [`marker`] line between them when the middle was dropped (drained and counted).
    pub output_cap: usize,
    /// Grace period between SIGTERM and SIGKILL.
    pub grace: Duration,
    /// `RLIMIT_STACK` (soft and hard) set in the child before exec; `u64::MAX` is unlimited
    /// (`ulimit -s unlimited`). `None` leaves the inherited limit alone.
    pub stack_limit: Option<u64>,
    /// Turn the RISC-V vector extension off for the child and everything it starts
    /// (`prctl(PR_RISCV_V_SET_CONTROL, next=OFF|INHERIT)` before exec). Applied only on riscv64
    /// hosts; when the kernel refuses (EINVAL: no such control) the spawn fails with that error.
    pub riscv_vector_off: bool,
}

impl Cmd {
    /// A command with a 5-minute timeout and the default output cap.
    pub fn new(program: impl AsRef<OsStr>) -> Self {
        Self {
            program: program.as_ref().to_owned(),
            args: Vec::new(),
            cwd: None,
            env: Vec::new(),
            timeout: Duration::from_secs(300),
            output_cap: DEFAULT_OUTPUT_CAP,
            grace: Duration::from_millis(300),
            stack_limit: None,
            riscv_vector_off: false,
        }
    }

    pub fn args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.args
            .extend(args.into_iter().map(|a| a.as_ref().to_owned()));
        self
    }

    pub fn cwd(mut self, dir: impl AsRef<Path>) -> Self {
        self.cwd = Some(dir.as_ref().to_owned());
        self
    }

    pub fn env(mut self, key: impl AsRef<OsStr>, value: impl AsRef<OsStr>) -> Self {
        self.env
            .push((key.as_ref().to_owned(), Some(value.as_ref().to_owned())));
        self
    }

    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    pub fn output_cap(mut self, cap: usize) -> Self {
        self.output_cap = cap;
        self
    }
}

/// How a process ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Exited(i32),
    Signaled(i32),
    /// Killed by us after the timeout.
    TimedOut,
    /// Killed by us (or never started) because the caller cancelled it or icepick was
    /// interrupted (SIGINT/SIGTERM, [`crate::interrupt`]).
    Cancelled,
}

impl Status {
    /// The exit status as the crash parser takes it (a timeout or a cancel: neither).
    pub fn exit_info(self) -> crate::crash::ExitInfo {
        let (code, signal) = match self {
            Status::Exited(c) => (Some(c), None),
            Status::Signaled(s) => (None, Some(s)),
            Status::TimedOut | Status::Cancelled => (None, None),
        };
        crate::crash::ExitInfo { code, signal }
    }
}

impl From<std::process::ExitStatus> for Status {
    fn from(status: std::process::ExitStatus) -> Status {
        use std::os::unix::process::ExitStatusExt;
        match (status.code(), status.signal()) {
            (Some(c), _) => Status::Exited(c),
            (None, Some(s)) => Status::Signaled(s),
            // Neither (stopped, continued): not a process that ended.
            (None, None) => Status::Cancelled,
        }
    }
}

/// What a finished process left.
#[derive(Debug, Clone)]
pub struct Output {
    pub status: Status,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    /// Bytes of stdout/stderr that were dropped from the middle by the cap.
    pub stdout_dropped: u64,
    pub stderr_dropped: u64,
    pub elapsed: Duration,
}

impl Output {
    /// Stderr as text (lossy).
    pub fn stderr_text(&self) -> String {
        String::from_utf8_lossy(&self.stderr).into_owned()
    }

    /// True for a normal exit with code 0.
    pub fn success(&self) -> bool {
        self.status == Status::Exited(0)
    }
}

/// Why a process could not be run.
#[derive(Debug, thiserror::Error)]
pub enum ExecError {
    #[error("cannot run `{program}`: {source}")]
    Spawn {
        program: String,
        #[source]
        source: io::Error,
    },
    #[error("waiting for `{program}` failed: {source}")]
    Wait {
        program: String,
        #[source]
        source: io::Error,
    },
}

fn runtime() -> &'static tokio::runtime::Runtime {
    static RT: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RT.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("icepick-exec")
            .enable_all()
            .build()
            .expect("the tokio runtime starts")
    })
}

/// Runs `cmd` to completion from synchronous code (any thread).
pub fn run(cmd: &Cmd) -> Result<Output, ExecError> {
    runtime().block_on(run_async(cmd, &|| false))
}

/// Runs `cmd`, polling `cancelled` every few milliseconds; when it returns true the process
/// group is killed and the status is [`Status::Cancelled`].
pub fn run_cancellable(
    cmd: &Cmd,
    cancelled: &(dyn Fn() -> bool + Sync),
) -> Result<Output, ExecError> {
    runtime().block_on(run_async(cmd, cancelled))
}

/// Runs several commands concurrently (at most `jobs` at once); results in input order.
pub fn run_all(cmds: &[Cmd], jobs: usize) -> Vec<Result<Output, ExecError>> {
    runtime().block_on(async {
        let sem = std::sync::Arc::new(tokio::sync::Semaphore::new(jobs.max(1)));
        let mut handles = Vec::with_capacity(cmds.len());
        for cmd in cmds {
            let cmd = cmd.clone();
            let sem = sem.clone();
            handles.push(tokio::spawn(async move {
                let _permit = sem.acquire_owned().await.expect("semaphore open");
                run_async(&cmd, &|| false).await
            }));
        }
        let mut out = Vec::with_capacity(handles.len());
        for h in handles {
            out.push(h.await.expect("exec task does not panic"));
        }
        out
    })
}

/// An output for a process that was never started because icepick is being interrupted.
fn not_started() -> Output {
    Output {
        status: Status::Cancelled,
        stdout: Vec::new(),
        stderr: Vec::new(),
        stdout_dropped: 0,
        stderr_dropped: 0,
        elapsed: Duration::ZERO,
    }
}

/// Grace period when icepick itself is interrupted: short, icepick must exit within a second.
const INTERRUPT_GRACE: Duration = Duration::from_millis(200);

/// After an interrupt: when the process is about to exit ([`crate::interrupt`] decides), wait
/// here for that instead of handing the stage a result made up by the interrupt, so that a
/// stage never records it. Otherwise (reduce stops gracefully) return and let it see
/// [`Status::Cancelled`].
async fn settle_interrupt() {
    if crate::interrupt::exits_on_signal() {
        std::future::pending::<()>().await;
    }
}

/// Kills a tracked process group when dropped (however `run_async` ends) and forgets it.
struct Tracked(Option<i32>);

impl Drop for Tracked {
    fn drop(&mut self) {
        if let Some(pgid) = self.0 {
            kill_group(pgid, libc::SIGKILL);
            session::untrack(pgid);
        }
    }
}

/// Runs `cmd` to its end, its timeout, an interrupt or `cancelled()`: spawned in a process
/// group of its own (killed whole however this ends), output drained concurrently and capped.
async fn run_async(cmd: &Cmd, cancelled: &(dyn Fn() -> bool + Sync)) -> Result<Output, ExecError> {
    if crate::interrupt::is_interrupted() {
        settle_interrupt().await;
        return Ok(not_started());
    }
    let program_name = cmd.program.to_string_lossy().into_owned();
    log::trace!("running {}", shell_line(cmd));
    let start = Instant::now();
    let spawned = {
        let _no_writer = spawning();
        command_of(cmd).spawn()
    };
    let mut child = spawned.map_err(|source| {
        log::debug!("{}: cannot start: {source}", shell_line(cmd));
        ExecError::Spawn {
            program: program_name.clone(),
            source,
        }
    })?;
    let pgid = child.id().map(|p| p as i32);
    if let Some(p) = pgid {
        session::track(p);
    }
    let tracked = Tracked(pgid);
    let stdout = child.stdout.take().expect("stdout is piped");
    let stderr = child.stderr.take().expect("stderr is piped");
    let cap = cmd.output_cap;
    let out_task = tokio::spawn(read_capped(stdout, cap));
    let err_task = tokio::spawn(read_capped(stderr, cap));
    let ended = wait_or_stop(&mut child, pgid, cmd, cancelled).await;
    // The leader is gone; kill anything it left in its group so that the pipes close and
    // nothing keeps running.
    drop(tracked);
    let (status, killed_as, interrupted) = ended.map_err(|source| ExecError::Wait {
        program: program_name,
        source,
    })?;
    if interrupted {
        settle_interrupt().await;
    }
    let elapsed = start.elapsed();
    let (stdout, stdout_dropped) = join_reader(out_task).await;
    let (stderr, stderr_dropped) = join_reader(err_task).await;
    let status = killed_as.unwrap_or_else(|| status_of(status));
    log::debug!(
        "{}: {} after {:.2} s",
        shell_line(cmd),
        status_words(status),
        elapsed.as_secs_f64()
    );
    Ok(Output {
        status,
        stdout,
        stderr,
        stdout_dropped,
        stderr_dropped,
        elapsed,
    })
}

/// The command to spawn for `cmd`: no stdin, piped output, a process group of its own, the
/// pre-exec limits, a private TMPDIR, then the caller's environment (which wins).
fn command_of(cmd: &Cmd) -> tokio::process::Command {
    let mut command = tokio::process::Command::new(&cmd.program);
    command
        .args(&cmd.args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    if let Some(dir) = &cmd.cwd {
        command.current_dir(dir);
    }
    apply_pre_exec(&mut command, cmd);
    // A private TMPDIR (which starts the session and its guardian); the caller's own
    // variables come after and win.
    if let Some(tmp) = session::child_tmp() {
        for k in ["TMPDIR", "TMP", "TEMP"] {
            command.env(k, tmp);
        }
    }
    for (k, v) in &cmd.env {
        match v {
            Some(v) => command.env(k, v),
            None => command.env_remove(k),
        };
    }
    command
}

/// Waits for `child` to end, or stops its group at the deadline, an interrupt or
/// `cancelled()` (polled every 20 ms): its exit status, the status it was killed as (if it
/// was), and whether an interrupt ended it.
async fn wait_or_stop(
    child: &mut tokio::process::Child,
    pgid: Option<i32>,
    cmd: &Cmd,
    cancelled: &(dyn Fn() -> bool + Sync),
) -> std::io::Result<(std::process::ExitStatus, Option<Status>, bool)> {
    let deadline = tokio::time::sleep(cmd.timeout);
    tokio::pin!(deadline);
    let mut poll = tokio::time::interval(Duration::from_millis(20));
    loop {
        tokio::select! {
            res = child.wait() => {
                let st = res?;
                // Killed by the interrupt's shutdown (or ended while it runs): a result made up
                // by the interrupt, held back like the one the poll below would have seen.
                if crate::interrupt::is_interrupted() {
                    return Ok((st, Some(Status::Cancelled), true));
                }
                return Ok((st, None, false));
            }
            _ = &mut deadline => {
                return Ok((terminate(child, pgid, cmd.grace).await, Some(Status::TimedOut), false));
            }
            _ = poll.tick() => {
                if crate::interrupt::is_interrupted() {
                    let grace = cmd.grace.min(INTERRUPT_GRACE);
                    return Ok((terminate(child, pgid, grace).await, Some(Status::Cancelled), true));
                }
                if cancelled() {
                    return Ok((terminate(child, pgid, cmd.grace).await, Some(Status::Cancelled), false));
                }
            }
        }
    }
}

/// `cmd` as a line to paste into a shell (`-v`, the CLI's logger): `cd DIR && VAR=value
/// program args…`, every word quoted for the shell.
pub fn shell_line(cmd: &Cmd) -> String {
    use crate::command::shell_quote;
    let mut words: Vec<String> = Vec::new();
    if let Some(dir) = &cmd.cwd {
        words.push(crate::command::shell_cd(&dir.to_string_lossy()));
        words.push("&&".into());
    }
    if !cmd.env.is_empty() {
        words.push("env".into());
        let removed = cmd.env.iter().filter(|(_, v)| v.is_none());
        let set = cmd.env.iter().filter_map(|(k, v)| Some((k, v.as_ref()?)));
        for (k, _) in removed {
            words.push(format!("-u {}", shell_quote(&k.to_string_lossy())));
        }
        for (k, v) in set {
            words.push(shell_quote(&format!(
                "{}={}",
                k.to_string_lossy(),
                v.to_string_lossy()
            )));
        }
    }
    words.push(shell_quote(&cmd.program.to_string_lossy()));
    words.extend(cmd.args.iter().map(|a| shell_quote(&a.to_string_lossy())));
    words.join(" ")
}

/// How a process ended, for a log line: "exit 0", "killed by signal 11 (SIGSEGV)", "timed out".
pub fn status_words(status: Status) -> String {
    match status {
        Status::Exited(c) => format!("exit {c}"),
        Status::Signaled(s) => format!("killed by signal {s} ({})", signal_name(s)),
        Status::TimedOut => "timed out (killed)".to_string(),
        Status::Cancelled => "cancelled (killed)".to_string(),
    }
}

fn signal_name(s: i32) -> &'static str {
    match s {
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGABRT => "SIGABRT",
        libc::SIGILL => "SIGILL",
        libc::SIGBUS => "SIGBUS",
        libc::SIGFPE => "SIGFPE",
        libc::SIGKILL => "SIGKILL",
        libc::SIGTERM => "SIGTERM",
        libc::SIGINT => "SIGINT",
        libc::SIGTRAP => "SIGTRAP",
        _ => "signal",
    }
}

/// Installs the child-side setup: PR_SET_PDEATHSIG (see the module doc), and what
/// [`Cmd::stack_limit`] and [`Cmd::riscv_vector_off`] ask for.
fn apply_pre_exec(command: &mut tokio::process::Command, cmd: &Cmd) {
    let stack = cmd.stack_limit;
    let vector_off = cfg!(target_arch = "riscv64") && cmd.riscv_vector_off;
    // SAFETY: getpid(2) cannot fail.
    let parent = unsafe { libc::getpid() };
    // SAFETY: the closure runs between fork and exec and only calls prctl(2), getppid(2),
    // setrlimit(2) and getrlimit(2), which are async-signal-safe; it allocates nothing and
    // takes no locks.
    unsafe {
        command.pre_exec(move || {
            if libc::prctl(
                libc::PR_SET_PDEATHSIG,
                libc::SIGKILL as libc::c_ulong,
                0,
                0,
                0,
            ) != 0
            {
                return Err(io::Error::last_os_error());
            }
            // icepick died between fork and prctl: do not start at all.
            if libc::getppid() != parent {
                return Err(io::Error::from_raw_os_error(libc::ESRCH));
            }
            if let Some(limit) = stack {
                let lim = if limit == u64::MAX {
                    libc::RLIM_INFINITY
                } else {
                    limit as libc::rlim_t
                };
                let r = libc::rlimit {
                    rlim_cur: lim,
                    rlim_max: lim,
                };
                if libc::setrlimit(libc::RLIMIT_STACK, &r) != 0 {
                    // Raising the hard limit needs privilege: try the soft limit alone.
                    let mut cur = libc::rlimit {
                        rlim_cur: 0,
                        rlim_max: 0,
                    };
                    libc::getrlimit(libc::RLIMIT_STACK, &mut cur);
                    cur.rlim_cur = lim.min(cur.rlim_max);
                    if libc::setrlimit(libc::RLIMIT_STACK, &cur) != 0 {
                        return Err(io::Error::last_os_error());
                    }
                }
            }
            let _ = vector_off;
            #[cfg(target_arch = "riscv64")]
            if vector_off {
                // PR_RISCV_V_SET_CONTROL; next-exec OFF (1 << 2) | INHERIT (1 << 4).
                if libc::prctl(69, 0x14 as libc::c_ulong, 0, 0, 0) != 0 {
                    return Err(io::Error::last_os_error());
                }
            }
            Ok(())
        });
    }
}

fn status_of(st: std::process::ExitStatus) -> Status {
    use std::os::unix::process::ExitStatusExt;
    match (st.code(), st.signal()) {
        (Some(c), _) => Status::Exited(c),
        (None, Some(s)) => Status::Signaled(s),
        (None, None) => Status::Exited(-1),
    }
}

/// SIGTERM the group, wait up to `grace`, then SIGKILL it; returns the leader's status.
async fn terminate(
    child: &mut tokio::process::Child,
    pgid: Option<i32>,
    grace: Duration,
) -> std::process::ExitStatus {
    if let Some(pgid) = pgid {
        kill_group(pgid, libc::SIGTERM);
    }
    match tokio::time::timeout(grace, child.wait()).await {
        Ok(Ok(st)) => st,
        _ => {
            if let Some(pgid) = pgid {
                kill_group(pgid, libc::SIGKILL);
            }
            let _ = child.start_kill();
            child
                .wait()
                .await
                .unwrap_or_else(|_| std::os::unix::process::ExitStatusExt::from_raw(9))
        }
    }
}

fn kill_group(pgid: i32, sig: i32) {
    if pgid > 0 {
        // SAFETY: kill(2) with a negative pid signals a process group; it has no memory effects.
        unsafe {
            libc::kill(-pgid, sig);
        }
    }
}

async fn join_reader(task: tokio::task::JoinHandle<(Vec<u8>, u64)>) -> (Vec<u8>, u64) {
    // A process that escaped the group (setsid) may keep the pipe open; don't wait forever.
    match tokio::time::timeout(Duration::from_secs(2), task).await {
        Ok(Ok(v)) => v,
        Ok(Err(_)) => (Vec::new(), 0),
        Err(_) => (Vec::new(), 0),
    }
}

async fn read_capped(mut r: impl AsyncRead + Unpin, cap: usize) -> (Vec<u8>, u64) {
    let mut kept = capped::HeadTail::new(cap);
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        match r.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => kept.push(&buf[..n]),
        }
    }
    kept.finish()
}

/// Finds `program` as the shell would: a name with a slash is a path (relative to `cwd`),
/// anything else is searched in `PATH`. Returns the path found, not resolved through links
/// (clang's behaviour depends on the name it was called by).
pub fn which(program: &str, cwd: &Path) -> Option<PathBuf> {
    if program.contains('/') {
        let p = cwd.join(program);
        return is_executable(&p).then_some(p);
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|p| is_executable(p))
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p)
        .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        .unwrap_or(false)
}

#[cfg(test)]
mod tests;
