//! The parallel, deterministic reduction driver: its public types, the worker threads, and
//! [`reduce`], which runs the loop of `engine.rs` on the caller's thread.
//!
//! Tests are slow (1–2 s of clang each) and mostly fail, so the driver speculates the way
//! C-Reduce does: it keeps `jobs` candidates in flight, generated on the assumption that the
//! earlier ones fail — across passes too: when a pass's plan runs out while its tests run,
//! the next pass's candidates are generated from the same text (`schedule.rs`) — and accepts
//! only the *lowest-index* interesting candidate once every candidate before it is known to
//! be uninteresting. Later tests are then cancelled, and generation resumes in the accepted
//! candidate's pass. It also speculates on success (`speculate.rs`): idle workers test what
//! a serial run would test next if a candidate (a front, or a known success behind one) is
//! accepted, recursively, in a tree of levels; when it is, those tests are already running. The window and level rules are shared with the simulator
//! (`window.rs`, `speculate.rs`, `simulate.rs`), which predicts from a trace
//! ([`Event::Tested`]) how a run scales. The accepted sequence is exactly the one a serial run
//! would accept, so the output is byte-identical for any `jobs` and any timing. Outcomes are
//! cached by a 128-bit content hash, because fixpoint rounds and ddmin revisit texts. The test
//! runs on worker threads; the observer runs on the caller's thread.

use std::collections::{HashMap, HashSet};
use std::hash::{DefaultHasher, Hash, Hasher};
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

use crate::engine::Driver;
use crate::passes::{Hints, Pipeline};
use crate::speculate::Tree;

/// The verdict of one interestingness test.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Outcome {
    /// The candidate still shows the bug.
    Interesting,
    /// It does not (or the test timed out, or the compiler failed differently).
    Uninteresting,
}

/// Set by the driver when the result of a running test is no longer needed (a candidate before
/// it was accepted, or the run is stopping). The test should poll it and, when set, kill its
/// process group and return; whatever it returns is then ignored.
///
/// The token the test gets also carries the test's way to talk back: [`CancelToken::hint`].
#[derive(Clone, Default)]
pub struct CancelToken {
    flag: Arc<AtomicBool>,
    /// Tells the driver that the running test is likely interesting (set by the worker).
    hint: Option<Arc<dyn Fn() + Send + Sync>>,
    /// Set by the driver when it lends the running test a spare worker.
    spare: Arc<AtomicBool>,
}

impl std::fmt::Debug for CancelToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CancelToken")
            .field("cancelled", &self.is_cancelled())
            .field("hint", &self.hint.is_some())
            .field("spare", &self.has_spare())
            .finish()
    }
}

impl CancelToken {
    /// A fresh, unset token.
    pub fn new() -> Self {
        Self::default()
    }
    /// True once the test's result is no longer wanted.
    pub fn is_cancelled(&self) -> bool {
        self.flag.load(Ordering::Relaxed)
    }
    /// Sets the token (the driver does this; public for callers' own tests).
    pub fn cancel(&self) {
        self.flag.store(true, Ordering::Relaxed);
    }
    /// Tells the driver, while the test still runs, that it will likely say
    /// [`Outcome::Interesting`]: the cheap part of its check passed (the first compiler run
    /// crashed the right way) and only confirming runs remain. The driver then opens a level
    /// of success speculation on it at once (`speculate.rs`). Scheduling only: acceptance
    /// still waits for the outcome, so a wrong hint costs wasted tests, never a different
    /// result. Calling it again, or on a token the driver did not hand out, does nothing.
    pub fn hint(&self) {
        if let Some(h) = &self.hint {
            h();
        }
    }
    /// True once the driver has lent the running test a spare worker
    /// ([`Options::spare_workers`]): the test may run the rest of its check (icepick's:
    /// a confirming run and the witness) beside its first part instead of after it. An accepted
    /// test then takes about one compiler run instead of two, which is what the last accepted
    /// test of a reduction costs when nothing else can overlap it. The worker is the test's
    /// until it returns.
    pub fn has_spare(&self) -> bool {
        self.spare.load(Ordering::Relaxed)
    }
    /// Lends the running test a spare worker (the driver does this).
    pub(crate) fn lend(&self) {
        self.spare.store(true, Ordering::Relaxed);
    }
    /// The same token, with `hint` telling the driver.
    fn with_hint(&self, hint: Arc<dyn Fn() + Send + Sync>) -> Self {
        CancelToken {
            flag: self.flag.clone(),
            hint: Some(hint),
            spare: self.spare.clone(),
        }
    }
}

/// How to reduce.
#[derive(Clone, Debug)]
pub struct Options {
    /// Tests in flight at once (at least 1).
    pub jobs: usize,
    /// What the crash told us; enables the guided passes.
    pub hints: Hints,
    /// Set it (e.g. from a Ctrl-C handler) to make [`reduce`] cancel running tests and return
    /// the best text so far.
    pub stop: Arc<AtomicBool>,
    /// At most this many rounds of the main phase (`None`: until a fixpoint).
    pub max_rounds: Option<usize>,
    /// Which passes run, in which order.
    pub pipeline: Pipeline,
    /// Speculate on success too: idle workers test what a serial run would test next if
    /// a candidate is accepted (`speculate.rs`). The output is the same either way.
    pub success_speculation: bool,
    /// The test makes use of a spare worker ([`CancelToken::has_spare`]): the driver may lend
    /// one to a running test when that is the best use of it (`speculate.rs`). Off by
    /// default: a test that ignores the loan would leave the worker idle.
    pub spare_workers: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            jobs: std::thread::available_parallelism().map_or(1, |n| n.get()),
            hints: Hints::default(),
            stop: Arc::new(AtomicBool::new(false)),
            max_rounds: None,
            pipeline: Pipeline::default(),
            success_speculation: true,
            spare_workers: false,
        }
    }
}

/// Counters, reported with every [`Event::Progress`] and in the final [`Reduction`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Tests started (each one ran the caller's closure).
    pub tests: u64,
    /// Candidates answered from the cache instead of a test.
    pub cache_hits: u64,
    /// Tests whose result was discarded because they were cancelled.
    pub cancelled: u64,
    /// Hints from running tests that they are likely interesting ([`CancelToken::hint`]).
    pub hints: u64,
    /// Spare workers lent to running tests ([`CancelToken::has_spare`]).
    pub lent: u64,
    /// Candidates generated (tested, cached, or skipped as empty).
    pub candidates: u64,
    /// Accepted candidates.
    pub improvements: u64,
    /// Main-phase rounds started.
    pub rounds: u64,
    /// Size of the input.
    pub bytes_before: usize,
    /// Size of the best text so far.
    pub bytes_now: usize,
    /// The pass currently running.
    pub pass: &'static str,
    /// Time the driver's thread spent generating, applying and hashing candidates.
    pub gen_time: Duration,
    /// True if the stop flag ended the run before a fixpoint.
    pub stopped: bool,
}

/// What became of one candidate that got an id (was tested or answered from the cache).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tested {
    Interesting,
    Uninteresting,
    /// Answered from the cache, no test ran.
    Cached(Outcome),
    /// Its result was no longer wanted (a candidate before it was accepted, or the run
    /// stopped); the test was cancelled.
    Cancelled,
}

/// One candidate's test, as [`Event::Tested`] reports it when its result is in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TestRecord {
    /// Generation order (= acceptance order): ids grow as candidates are generated.
    pub seq: u64,
    pub pass: &'static str,
    /// Which run of a pass it belongs to (counts every start of a pass, from 0): the driver
    /// finishes one run before it starts the next.
    pub pass_run: u64,
    /// Improvements accepted before it was generated: the text it was derived from (for a
    /// candidate of success speculation, counting the ones it assumes).
    pub base: u64,
    /// The candidate whose text it was derived from, accepted or (success speculation)
    /// assumed to be; `None` for the input. The serial path follows these links.
    pub parent: Option<u64>,
    /// Its size.
    pub bytes: usize,
    /// Its [`content_hash`] (what the caller's test may key its own notes by).
    pub hash: u128,
    /// What its edit does, wherever in the text (the pass, the bytes removed and put in,
    /// with a little context): the same deletion retried on a later text has the same key.
    /// The driver rates a retried edit that failed before by how often such retries were
    /// accepted; a trace keeps the key so that `simulate` can do the same.
    pub edit: u64,
    pub result: Tested,
    /// When its test started and ended, since [`reduce`] was called (equal for a cache hit).
    pub start: Duration,
    pub end: Duration,
    /// The worker thread that ran it (`None` for a cache hit).
    pub worker: Option<usize>,
}

/// What the observer sees.
#[derive(Debug)]
pub enum Event<'a> {
    /// A smaller interesting text was accepted (sizes strictly decrease, except that the
    /// `normalise` pass may lay the text out on more bytes: same tokens, only whitespace).
    Improved { best: &'a [u8], pass: &'a str },
    /// Counters changed (a test finished, a pass started).
    Progress(&'a Stats),
    /// A test finished (or was cancelled), or a candidate was answered from the cache.
    Tested(&'a TestRecord),
}

/// The result of [`reduce`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reduction {
    /// The smallest interesting text found (the input itself if nothing smaller was).
    pub output: Vec<u8>,
    pub stats: Stats,
}

/// A 128-bit content hash: std's SipHash twice with different keys.
pub fn content_hash(bytes: &[u8]) -> u128 {
    let half = |seed: u64| {
        let mut h = DefaultHasher::new();
        seed.hash(&mut h);
        bytes.hash(&mut h);
        h.finish()
    };
    (u128::from(half(0x9e37_79b9_7f4a_7c15)) << 64) | u128::from(half(0xc2b2_ae3d_27d4_eb4f))
}

/// Reduces `input` while `test` keeps saying [`Outcome::Interesting`].
///
/// The input is assumed interesting (the caller checks that once, e.g. to time a baseline); it
/// is not tested again. The empty text is never tested. Returns when the pipeline reaches a
/// fixpoint, `max_rounds` is hit, or `opts.stop` is set (then promptly, provided the test
/// honours its [`CancelToken`]). If the test panics, running tests are cancelled and the panic
/// is resumed on the caller's thread.
pub fn reduce<T>(
    input: &[u8],
    opts: &Options,
    test: &T,
    on_event: &mut dyn FnMut(Event),
) -> Reduction
where
    T: Fn(&[u8], &CancelToken) -> Outcome + Sync,
{
    let jobs = opts.jobs.max(1);
    let started = Instant::now();
    let (job_tx, job_rx) = mpsc::channel::<Job>();
    let job_rx = Mutex::new(job_rx);
    let (done_tx, done_rx) = mpsc::channel::<Msg>();
    std::thread::scope(|scope| {
        for index in 0..jobs {
            let done_tx = done_tx.clone();
            let job_rx = &job_rx;
            scope.spawn(move || worker(index, started, job_rx, &done_tx, test));
        }
        drop(done_tx);
        let mut d = Driver {
            opts,
            best: input.to_vec(),
            cache: HashMap::new(),
            tree: Tree::empty(jobs, opts.success_speculation).lending(opts.spare_workers),
            lent: HashSet::new(),
            flight: HashMap::new(),
            started,
            busy: 0,
            next_id: 0,
            stats: Stats {
                bytes_before: input.len(),
                bytes_now: input.len(),
                ..Stats::default()
            },
            job_tx,
            done_rx,
            panic: None,
            on_event,
        };
        d.run();
        d.cancel_all();
        // Every test started gets its record: wait for the cancelled ones to come back.
        while d.busy > 0 {
            let Ok(msg) = d.done_rx.recv() else { break };
            d.take(msg);
        }
        let Driver {
            best,
            mut stats,
            panic,
            job_tx,
            ..
        } = d;
        drop(job_tx);
        if let Some(p) = panic {
            panic::resume_unwind(p);
        }
        stats.stopped = opts.stop.load(Ordering::Relaxed);
        Reduction {
            output: best,
            stats,
        }
    })
}

pub(crate) struct Job {
    pub id: u64,
    pub hash: u128,
    pub bytes: Arc<[u8]>,
    pub token: CancelToken,
}

/// What a worker tells the driver.
pub(crate) enum Msg {
    /// A test ended.
    Done(Done),
    /// Test `id` said it is likely interesting.
    Hint { id: u64 },
}

pub(crate) struct Done {
    pub id: u64,
    pub hash: u128,
    pub cancelled: bool,
    pub result: std::thread::Result<Outcome>,
    pub worker: usize,
    pub start: Duration,
    pub end: Duration,
}

fn worker<T>(
    index: usize,
    started: Instant,
    jobs: &Mutex<mpsc::Receiver<Job>>,
    done: &mpsc::Sender<Msg>,
    test: &T,
) where
    T: Fn(&[u8], &CancelToken) -> Outcome + Sync,
{
    loop {
        let job = jobs.lock().unwrap_or_else(|e| e.into_inner()).recv();
        let Ok(job) = job else { return };
        let start = started.elapsed();
        let hint = {
            let (tx, id, once) = (done.clone(), job.id, AtomicBool::new(false));
            move || {
                if !once.swap(true, Ordering::Relaxed) {
                    let _ = tx.send(Msg::Hint { id });
                }
            }
        };
        let token = job.token.with_hint(Arc::new(hint));
        let result = if token.is_cancelled() {
            Ok(Outcome::Uninteresting)
        } else {
            panic::catch_unwind(AssertUnwindSafe(|| test(&job.bytes, &token)))
        };
        let msg = Msg::Done(Done {
            id: job.id,
            hash: job.hash,
            cancelled: job.token.is_cancelled(),
            result,
            worker: index,
            start,
            end: started.elapsed(),
        });
        if done.send(msg).is_err() {
            return;
        }
    }
}
