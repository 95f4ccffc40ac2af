//! Where "run the compiler on a candidate" happens: here, or on an icecream or distcc farm.
//!
//! Why this exists: a reduction or a flag bisection is thousands of independent compiles of
//! one preprocessed file, exactly the job build farms run. The stages (reduce's oracle, the
//! flags runner) hand an [`Executor`] the compiler argv, a working directory and a time
//! limit and get back the same [`Output`] a local run gives (crash or not, stderr, status,
//! time); the executor decides where it runs, retries node failures elsewhere, and counts
//! what it did ([`FarmSummary`], saved with the stage's section of case.json).
//!
//! Correctness first: a test the farm could not answer (distcc exits 100–127, a dead node, a
//! node that timed out) is never "uninteresting": it is retried on another node, and when
//! the retries are used up it runs here ([`FarmSummary::fallbacks`]). So a farm changes how
//! fast a reduction goes, never its result (the driver accepts candidates in a fixed order).
//!
//! Backends ([`Backend`]): `local` (no backend), [`distcc`], [`icecream`]. Each builds
//! `exec::Cmd`s and calls `exec::run_cancellable` (only `src/exec` spawns). A REAPI backend
//! (Buildbarn, BuildBuddy, NativeLink) would be one more [`Backend`]: its `attempt` uploads
//! the candidate and the compiler's input root, executes, and maps the ActionResult to an
//! [`Attempt`] (docs/farm.md).

pub mod distcc;
pub mod icecream;
#[cfg(test)]
mod tests;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use crate::exec::{self, Cmd, ExecError, Output, Status};

/// Which executor runs the tests (`--executor`, `ICEPICK_EXECUTOR`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Kind {
    /// This machine (the default).
    #[default]
    Local,
    /// An icecream farm (`icecc`, the local iceccd and its scheduler).
    Icecream,
    /// A distcc farm (`distcc`, hosts from `DISTCC_HOSTS` or `--distcc-hosts`).
    Distcc,
}

impl Kind {
    /// The name used on the command line and in case.json.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Local => "local",
            Kind::Icecream => "icecream",
            Kind::Distcc => "distcc",
        }
    }
}

/// What the user asked for.
#[derive(Debug, Clone, Default)]
pub struct Choice {
    pub kind: Kind,
    /// distcc's host list (`DISTCC_HOSTS` syntax); `None`: the environment's `DISTCC_HOSTS`.
    pub distcc_hosts: Option<String>,
}

/// Where one attempt ran.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Place {
    /// On this machine (the farm client decided to compile locally).
    Local,
    /// On a farm node.
    Remote(String),
}

/// One attempt of one test on the farm.
#[derive(Debug)]
pub enum Attempt {
    /// The compiler ran (wherever it ran) and this is what it left.
    Ran(Output, Place),
    /// The farm failed, not the compiler: retry. `host` is the node that failed, if known.
    Infra { host: Option<String>, why: String },
    /// A node failed and the farm client then ran the compiler here on its own (icecc's
    /// local build after a remote error): the output is the compiler's, the node's failure
    /// is counted.
    RanHereAfter { out: Output, failed: String },
}

/// A way to run a compiler on a farm.
pub trait Backend: Send + Sync {
    /// One attempt of `job`; `attempt` counts from 0 (a backend may pick another node).
    fn attempt(
        &self,
        job: &Job<'_>,
        attempt: u32,
        cancel: &(dyn Fn() -> bool + Sync),
    ) -> Result<Attempt, ExecError>;
    /// Nodes it may use, for messages.
    fn nodes(&self) -> usize;
}

/// One compiler run: the argv of the local run, where, and how long at most.
#[derive(Debug, Clone, Copy)]
pub struct Job<'a> {
    pub argv: &'a [String],
    pub cwd: &'a Path,
    pub timeout: Duration,
    /// Let the compiler run `llvm-symbolizer` on its own stack dump. Off for tests: icepick
    /// names the frames from the ELF files itself (`crash::symbolize`, the same names on a
    /// Debian build), and the symbolizer is most of a crashing test's time (about two thirds
    /// of a crashing clang-16 run). On only where a compiler
    /// built with debug info names inlined frames the ELF tables cannot: the stages turn it
    /// on when the start does not reproduce without it.
    pub symbolize: bool,
    /// The compiler's TMPDIR (TMP, TEMP), when the job has one of its own: a reduction gives
    /// each test a directory it empties after the test, so that what a compiler leaves there
    /// (a crash's reproducer files) never piles up over thousands of tests.
    pub tmpdir: Option<&'a Path>,
}

/// `cmd` (a compiler run, or a farm client's, whose local fallbacks run the compiler here)
/// with the compiler's own llvm-symbolizer off unless `symbolize` ([`Job::symbolize`]); the
/// IR stage's `llc`/`opt` runs use it too.
pub fn compiler_env(cmd: Cmd, symbolize: bool) -> Cmd {
    if symbolize {
        cmd
    } else {
        cmd.env("LLVM_DISABLE_SYMBOLIZATION", "1")
    }
}

impl Job<'_> {
    /// The local run of this job.
    pub fn local_cmd(&self) -> Cmd {
        self.environment(
            Cmd::new(&self.argv[0])
                .args(&self.argv[1..])
                .cwd(self.cwd)
                .timeout(self.timeout)
                .output_cap(1 << 20),
        )
    }

    /// `cmd` with this job's compiler environment ([`compiler_env`]).
    pub fn environment(&self, cmd: Cmd) -> Cmd {
        let cmd = compiler_env(cmd, self.symbolize);
        match self.tmpdir {
            Some(dir) => ["TMPDIR", "TMP", "TEMP"]
                .into_iter()
                .fold(cmd, |cmd, k| cmd.env(k, dir)),
            None => cmd,
        }
    }
}

pub use crate::case::farm::FarmSummary;

impl FarmSummary {
    /// One line for the human summary: `distcc: 120 tests remote on 2 nodes, 3 local, …`.
    pub fn line(&self) -> String {
        if let Some(why) = &self.refused {
            return format!("{} refused ({why}); all tests ran locally", self.requested);
        }
        format!(
            "{}: {} tests remote on {} node(s), {} local ({} by the farm client), {} retries, {} fallbacks, {} cancelled",
            self.executor,
            self.tests_remote,
            self.per_node.len(),
            self.tests_local,
            self.client_local,
            self.retries,
            self.fallbacks,
            self.cancelled
        )
    }
}

/// Why an executor cannot be set up (the stage then refuses the farm and stays local).
#[derive(Debug, thiserror::Error)]
pub enum ExecutorError {
    #[error("{0}")]
    Setup(String),
    #[error(transparent)]
    Exec(#[from] ExecError),
}

/// What the farm executor of this process is doing now, for the progress line (the stages'
/// periodic counters do not know the executor): tests in flight, where the finished ones
/// ran, node failures. `None` when no farm executor is in use.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Live {
    pub kind: &'static str,
    pub in_flight: u64,
    pub remote: u64,
    pub local: u64,
    pub node_failures: u64,
}

static LIVE_KIND: Mutex<Option<&'static str>> = Mutex::new(None);
static LIVE_IN_FLIGHT: AtomicU64 = AtomicU64::new(0);
static LIVE_REMOTE: AtomicU64 = AtomicU64::new(0);
static LIVE_LOCAL: AtomicU64 = AtomicU64::new(0);
static LIVE_FAILURES: AtomicU64 = AtomicU64::new(0);

/// The farm executor's counters now, if one is in use.
pub fn live() -> Option<Live> {
    let kind = (*LIVE_KIND.lock().unwrap_or_else(|e| e.into_inner()))?;
    Some(Live {
        kind,
        in_flight: LIVE_IN_FLIGHT.load(Ordering::Relaxed),
        remote: LIVE_REMOTE.load(Ordering::Relaxed),
        local: LIVE_LOCAL.load(Ordering::Relaxed),
        node_failures: LIVE_FAILURES.load(Ordering::Relaxed),
    })
}

impl Live {
    /// `distcc: 4 in flight, 120 remote, 3 local, 1 node failure`.
    pub fn line(&self) -> String {
        format!(
            "{}: {} in flight, {} remote, {} local, {} node failure{}",
            self.kind,
            self.in_flight,
            self.remote,
            self.local,
            self.node_failures,
            if self.node_failures == 1 { "" } else { "s" }
        )
    }
}

/// Marks the start (`Some`) or the end (`None`) of a farm executor's life for [`live`].
fn set_live(kind: Option<&'static str>) {
    *LIVE_KIND.lock().unwrap_or_else(|e| e.into_inner()) = kind;
    for c in [&LIVE_IN_FLIGHT, &LIVE_REMOTE, &LIVE_LOCAL, &LIVE_FAILURES] {
        c.store(0, Ordering::Relaxed);
    }
}

/// Decrements the in-flight count when a farm test ends, however it ends.
struct InFlight;

impl InFlight {
    fn start() -> Self {
        LIVE_IN_FLIGHT.fetch_add(1, Ordering::Relaxed);
        InFlight
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        LIVE_IN_FLIGHT.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Attempts of one test on the farm before icepick runs it here.
const MAX_ATTEMPTS: u32 = 4;

/// Runs compiler jobs here or on a farm, and counts.
pub struct Executor {
    kind: Kind,
    backend: Option<Box<dyn Backend>>,
    remote: AtomicU64,
    local: AtomicU64,
    client_local: AtomicU64,
    retries: AtomicU64,
    fallbacks: AtomicU64,
    cancelled: AtomicU64,
    per_node: Mutex<BTreeMap<String, u64>>,
    node_failures: Mutex<BTreeMap<String, u64>>,
    dropped: Vec<String>,
}

impl Drop for Executor {
    fn drop(&mut self) {
        if self.backend.is_some() {
            set_live(None);
        }
    }
}

impl std::fmt::Debug for Executor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Executor({})", self.kind.name())
    }
}

impl Executor {
    /// Runs everything on this machine.
    pub fn local() -> Self {
        Self::with_backend(Kind::Local, None, Vec::new())
    }

    fn with_backend(kind: Kind, backend: Option<Box<dyn Backend>>, dropped: Vec<String>) -> Self {
        if backend.is_some() {
            set_live(Some(kind.name()));
        }
        Executor {
            kind,
            backend,
            remote: AtomicU64::new(0),
            local: AtomicU64::new(0),
            client_local: AtomicU64::new(0),
            retries: AtomicU64::new(0),
            fallbacks: AtomicU64::new(0),
            cancelled: AtomicU64::new(0),
            per_node: Mutex::new(BTreeMap::new()),
            node_failures: Mutex::new(BTreeMap::new()),
            dropped,
        }
    }

    /// Sets up the chosen executor for runs of `compiler` (the case's, argv[0] of every
    /// job): distcc checks each host's compiler identity, icecream packs the compiler once.
    pub fn new(choice: &Choice, compiler: &str) -> Result<Self, ExecutorError> {
        match choice.kind {
            Kind::Local => Ok(Self::local()),
            Kind::Distcc => {
                let (b, dropped) = distcc::Distcc::new(choice.distcc_hosts.as_deref(), compiler)?;
                Ok(Self::with_backend(Kind::Distcc, Some(Box::new(b)), dropped))
            }
            Kind::Icecream => {
                let b = icecream::Icecream::new(compiler)?;
                Ok(Self::with_backend(
                    Kind::Icecream,
                    Some(Box::new(b)),
                    Vec::new(),
                ))
            }
        }
    }

    /// The backend in use.
    pub fn kind(&self) -> Kind {
        self.kind
    }

    /// True for a farm executor.
    pub fn is_farm(&self) -> bool {
        self.backend.is_some()
    }

    /// Runs `job` and returns what the compiler left, wherever it ran. A farm failure is
    /// retried (another node where the backend can choose) and, when the retries are used
    /// up, run here: the answer is always the compiler's.
    pub fn run(
        &self,
        job: &Job<'_>,
        cancel: &(dyn Fn() -> bool + Sync),
    ) -> Result<Output, ExecError> {
        let Some(backend) = &self.backend else {
            self.local.fetch_add(1, Ordering::Relaxed);
            return exec::run_cancellable(&job.local_cmd(), cancel);
        };
        let _in_flight = InFlight::start();
        let mut timeouts = 0;
        for attempt in 0..MAX_ATTEMPTS {
            if cancel() {
                break;
            }
            match backend.attempt(job, attempt, cancel)? {
                Attempt::Ran(out, _) if out.status == Status::Cancelled || cancel() => {
                    // Not needed any more: where it got to is unknown (the scheduler may
                    // have named a node that never received it), so it counts nowhere.
                    self.cancelled.fetch_add(1, Ordering::Relaxed);
                    return Ok(out);
                }
                Attempt::Ran(out, place) => {
                    // A node that timed out may be a slow, busy or dead node, or the
                    // candidate hangs the compiler: one more node, then this machine decides
                    // (a farm's queueing must not turn a test into "timed out").
                    if out.status == Status::TimedOut {
                        self.failed(match &place {
                            Place::Remote(h) => Some(h.clone()),
                            Place::Local => None,
                        });
                        timeouts += 1;
                        if timeouts < 2 {
                            continue;
                        }
                        break;
                    }
                    self.count(&place);
                    return Ok(out);
                }
                Attempt::Infra { host, .. } => self.failed(host),
                Attempt::RanHereAfter { out, failed } => {
                    LIVE_FAILURES.fetch_add(1, Ordering::Relaxed);
                    *self
                        .node_failures
                        .lock()
                        .expect("not poisoned")
                        .entry(failed)
                        .or_default() += 1;
                    self.count(&Place::Local);
                    return Ok(out);
                }
            }
        }
        if cancel() {
            return exec::run_cancellable(&job.local_cmd(), cancel);
        }
        self.fallbacks.fetch_add(1, Ordering::Relaxed);
        self.local.fetch_add(1, Ordering::Relaxed);
        LIVE_LOCAL.fetch_add(1, Ordering::Relaxed);
        exec::run_cancellable(&job.local_cmd(), cancel)
    }

    fn failed(&self, host: Option<String>) {
        self.retries.fetch_add(1, Ordering::Relaxed);
        LIVE_FAILURES.fetch_add(1, Ordering::Relaxed);
        let mut m = self.node_failures.lock().expect("not poisoned");
        *m.entry(host.unwrap_or_else(|| "?".into())).or_default() += 1;
    }

    fn count(&self, place: &Place) {
        match place {
            Place::Local => {
                LIVE_LOCAL.fetch_add(1, Ordering::Relaxed);
                self.local.fetch_add(1, Ordering::Relaxed);
                self.client_local.fetch_add(1, Ordering::Relaxed);
            }
            Place::Remote(h) => {
                LIVE_REMOTE.fetch_add(1, Ordering::Relaxed);
                self.remote.fetch_add(1, Ordering::Relaxed);
                let mut m = self.per_node.lock().expect("not poisoned");
                *m.entry(h.clone()).or_default() += 1;
            }
        }
    }

    /// Runs `jobs` with at most `parallel` in flight; results in the order of `jobs`.
    pub fn run_all(&self, jobs: &[Job<'_>], parallel: usize) -> Vec<Result<Output, ExecError>> {
        if self.backend.is_none() {
            let cmds: Vec<Cmd> = jobs.iter().map(Job::local_cmd).collect();
            self.local.fetch_add(cmds.len() as u64, Ordering::Relaxed);
            return exec::run_all(&cmds, parallel);
        }
        let next = AtomicU64::new(0);
        let results: Vec<Mutex<Option<Result<Output, ExecError>>>> =
            jobs.iter().map(|_| Mutex::new(None)).collect();
        std::thread::scope(|s| {
            for _ in 0..parallel.clamp(1, jobs.len().max(1)) {
                s.spawn(|| loop {
                    let i = next.fetch_add(1, Ordering::Relaxed) as usize;
                    let Some(job) = jobs.get(i) else { break };
                    let r = self.run(job, &crate::interrupt::is_interrupted);
                    *results[i].lock().expect("not poisoned") = Some(r);
                });
            }
        });
        results
            .into_iter()
            .map(|m| {
                m.into_inner()
                    .expect("not poisoned")
                    .expect("every job ran")
            })
            .collect()
    }

    /// What was done so far.
    pub fn summary(&self) -> FarmSummary {
        FarmSummary {
            executor: self.kind.name().into(),
            requested: self.kind.name().into(),
            refused: None,
            tests_remote: self.remote.load(Ordering::Relaxed),
            tests_local: self.local.load(Ordering::Relaxed),
            retries: self.retries.load(Ordering::Relaxed),
            client_local: self.client_local.load(Ordering::Relaxed),
            fallbacks: self.fallbacks.load(Ordering::Relaxed),
            cancelled: self.cancelled.load(Ordering::Relaxed),
            per_node: self.per_node.lock().expect("not poisoned").clone(),
            node_failures: self.node_failures.lock().expect("not poisoned").clone(),
            nodes_dropped: self.dropped.clone(),
        }
    }
}

/// Verdicts of `icepick classify` under which the crash depends on the machine it ran on,
/// so a farm node would not see it.
pub const HOST_VERDICTS: &[&str] = &["host-rvv", "host-kernel"];

/// Why a case's tests must stay on this machine, if they must: a host-dependent verdict, an
/// emulator in front of the compiler, a cc1 command line (farms distribute driver compiles).
pub fn must_stay_local(verdict: Option<&str>, emulated: bool, cc1: bool) -> Option<String> {
    if let Some(v) = verdict.filter(|v| HOST_VERDICTS.contains(v)) {
        return Some(format!(
            "the classification says the crash depends on this host ({v}), so it would not travel"
        ));
    }
    if emulated {
        return Some("the case runs its compiler under an emulator".into());
    }
    if cc1 {
        return Some("the test command is a `-cc1` line, which farms do not distribute".into());
    }
    None
}

/// The farm form of a local test argv (after argv[0]): an object file in `obj` instead of
/// `-o /dev/null` or no output, `-c` instead of `-fsyntax-only` (farms distribute only real
/// compiles to an object file), and `-fno-crash-diagnostics` so that nodes write no
/// reproducers.
pub fn farm_args(args: &[String], obj: &Path) -> Vec<String> {
    let mut out = Vec::with_capacity(args.len() + 4);
    let mut it = args.iter();
    let mut has_c = false;
    while let Some(a) = it.next() {
        match a.as_str() {
            "-o" => {
                it.next();
            }
            "-fsyntax-only" | "-S" | "-E" => {}
            s if s.starts_with("-o") && s.len() > 2 => {}
            "-c" => {
                has_c = true;
                out.push(a.clone());
            }
            _ => out.push(a.clone()),
        }
    }
    if !has_c {
        out.insert(0, "-c".into());
    }
    if !out.iter().any(|a| a == "-fno-crash-diagnostics") {
        out.insert(0, "-fno-crash-diagnostics".into());
    }
    out.push("-o".into());
    out.push(obj.to_string_lossy().into_owned());
    out
}

/// A fresh path in icepick's scratch directory for one farm attempt's files.
pub(crate) fn scratch_file(prefix: &str, ext: &str) -> PathBuf {
    static N: AtomicU64 = AtomicU64::new(0);
    let dir = exec::scratch_dir().join("farm");
    let _ = std::fs::create_dir_all(&dir);
    dir.join(format!(
        "{prefix}{}.{ext}",
        N.fetch_add(1, Ordering::Relaxed)
    ))
}

/// The executable `argv0` names: itself when it has a slash, else looked up on `PATH`.
pub(crate) fn resolve(argv0: &str) -> Option<PathBuf> {
    if argv0.contains('/') {
        return std::fs::canonicalize(argv0).ok();
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(argv0))
        .find(|p| p.is_file())
        .and_then(|p| std::fs::canonicalize(p).ok())
}
