//! The library's public vocabulary: what a test says ([`Outcome`]), how the driver talks to a
//! running test ([`CancelToken`]), how to run a reduction ([`Options`]) and what it reports
//! ([`Event`], [`Stats`], [`TestRecord`], [`Reduction`]). Kept apart from the worker pool
//! (`pool.rs`) and the driver's loop (`engine.rs`) so that every internal module can name these
//! types without importing the machinery that uses them.

use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crate::pass::Pipeline;

/// The verdict of one interestingness test.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Outcome {
    /// The candidate still shows the bug.
    Interesting,
    /// It does not (or the test timed out, or the program failed in another way).
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
    /// [`Outcome::Interesting`]: the cheap part of its check passed (the first run showed the
    /// bug) and only confirming runs remain. The driver then opens a level
    /// of success speculation on it at once (`speculate.rs`). Scheduling only: acceptance
    /// still waits for the outcome, so a wrong hint costs wasted tests, never a different
    /// result. Calling it again, or on a token the driver did not hand out, does nothing.
    pub fn hint(&self) {
        if let Some(h) = &self.hint {
            h();
        }
    }
    /// True once the driver has lent the running test a spare worker
    /// ([`Options::spare_workers`]): the test may run the rest of its check (say, the
    /// confirming runs of a flaky bug) beside its first part instead of after it. An accepted
    /// test then takes about one run instead of two, which is what the last accepted
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
    pub(crate) fn with_hint(&self, hint: Arc<dyn Fn() + Send + Sync>) -> Self {
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
    /// Set it (e.g. from a Ctrl-C handler) to make [`crate::reduce`] cancel running tests and return
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
    /// Continue an earlier run from where it stood when it accepted its last text (that
    /// text is the input): the [`Resume`] of its last [`Event::Improved`]. `None`, or a
    /// position that is not in `pipeline`: start at the beginning.
    pub resume: Option<Resume>,
}

/// Where a serial run goes on after accepting a text: which pass (its phase and index in the
/// pipeline, with the phase's counters) and where in that pass's plan of the accepted text.
/// Saved with the text, it lets a later run continue instead of starting over
/// ([`Options::resume`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Resume {
    /// 0: `first`, 1: `main`, 2: `last`.
    pub phase: u8,
    /// The pass's index in its phase.
    pub pass: usize,
    /// Main-phase rounds started.
    pub rounds: u64,
    /// A pass of the current round improved the text beyond its layout.
    pub round_improved: bool,
    /// The pass's plan cursor to go on from.
    pub cursor: [u64; 3],
}

impl Options {
    /// Runs `pipeline` with one test per available core, speculation on success, no spare
    /// workers, no round limit and a fresh stop flag.
    pub fn new(pipeline: Pipeline) -> Self {
        Options {
            jobs: std::thread::available_parallelism().map_or(1, |n| n.get()),
            stop: Arc::new(AtomicBool::new(false)),
            max_rounds: None,
            pipeline,
            success_speculation: true,
            spare_workers: false,
            resume: None,
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
    /// The test ran and said [`Outcome::Interesting`].
    Interesting,
    /// The test ran and said [`Outcome::Uninteresting`].
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
    /// The name of the pass that made it ([`crate::Pass::name`]).
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
    /// What became of it.
    pub result: Tested,
    /// When its test started, since [`crate::reduce`] was called (equal to `end` for a cache
    /// hit).
    pub start: Duration,
    /// When its test ended, since [`crate::reduce`] was called.
    pub end: Duration,
    /// The worker thread that ran it (`None` for a cache hit).
    pub worker: Option<usize>,
}

/// What the observer sees.
#[derive(Debug)]
pub enum Event<'a> {
    /// A smaller interesting text was accepted (sizes strictly decrease, except that the
    /// `normalise` pass may lay the text out on more bytes: same tokens, only whitespace).
    Improved {
        /// The accepted text.
        best: &'a [u8],
        /// The name of the pass that made it.
        pass: &'a str,
        /// Where the run goes on from this text (see [`Options::resume`]).
        resume: Resume,
    },
    /// Counters changed (a test finished, a pass started).
    Progress(&'a Stats),
    /// A test finished (or was cancelled), or a candidate was answered from the cache.
    Tested(&'a TestRecord),
}

/// The result of [`crate::reduce`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reduction {
    /// The smallest interesting text found (the input itself if nothing smaller was).
    pub output: Vec<u8>,
    /// The counters at the end.
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
