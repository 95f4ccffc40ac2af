//! The parallel, deterministic reduction driver.
//!
//! Tests are slow (1–2 s of clang each) and mostly fail, so the driver speculates the way
//! C-Reduce does: it keeps `jobs` candidates of the current pass in flight, all generated on
//! the assumption that the earlier ones fail, and accepts only the *lowest-index* interesting
//! candidate once every candidate before it is known to be uninteresting. Later tests are then
//! cancelled. The accepted sequence is therefore exactly the one a serial run would accept, so
//! the output is byte-identical for any `jobs` and any timing. Outcomes are cached by a 128-bit
//! content hash, because fixpoint rounds and ddmin revisit texts. The test runs on worker
//! threads; the observer runs on the caller's thread.

use std::collections::{HashMap, VecDeque};
use std::hash::{DefaultHasher, Hash, Hasher};
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::passes::{Hints, Pass, Pipeline};
use crate::plan::{self, Cursor, START};

/// The verdict of one interestingness test.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Outcome {
    /// The candidate still shows the bug.
    Interesting,
    /// It does not (or the test timed out, or the compiler failed differently).
    Uninteresting,
}

/// Set by the driver when the result of a running test is no longer needed (a candidate before
/// it was accepted, or the run is stopping). The test should poll it and, when set, kill its
/// process group and return; whatever it returns is then ignored.
#[derive(Clone, Debug, Default)]
pub struct CancelToken(Arc<AtomicBool>);

impl CancelToken {
    /// A fresh, unset token.
    pub fn new() -> Self {
        Self::default()
    }
    /// True once the test's result is no longer wanted.
    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
    /// Sets the token (the driver does this; public for callers' own tests).
    pub fn cancel(&self) {
        self.0.store(true, Ordering::Relaxed);
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
}

impl Default for Options {
    fn default() -> Self {
        Options {
            jobs: std::thread::available_parallelism().map_or(1, |n| n.get()),
            hints: Hints::default(),
            stop: Arc::new(AtomicBool::new(false)),
            max_rounds: None,
            pipeline: Pipeline::default(),
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

/// What the observer sees.
#[derive(Debug)]
pub enum Event<'a> {
    /// A smaller interesting text was accepted (sizes strictly decrease, except that the
    /// `normalise` pass may lay the text out on more bytes: same tokens, only whitespace).
    Improved { best: &'a [u8], pass: &'a str },
    /// Counters changed (a test finished, a pass started).
    Progress(&'a Stats),
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
    let (job_tx, job_rx) = mpsc::channel::<Job>();
    let job_rx = Mutex::new(job_rx);
    let (done_tx, done_rx) = mpsc::channel::<Done>();
    std::thread::scope(|scope| {
        for _ in 0..jobs {
            let done_tx = done_tx.clone();
            let job_rx = &job_rx;
            scope.spawn(move || worker(job_rx, &done_tx, test));
        }
        drop(done_tx);
        let mut d = Driver {
            opts,
            jobs,
            best: input.to_vec(),
            cache: HashMap::new(),
            window: VecDeque::new(),
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

struct Job {
    id: u64,
    hash: u128,
    bytes: Arc<[u8]>,
    token: CancelToken,
}

struct Done {
    id: u64,
    hash: u128,
    cancelled: bool,
    result: std::thread::Result<Outcome>,
}

fn worker<T>(jobs: &Mutex<mpsc::Receiver<Job>>, done: &mpsc::Sender<Done>, test: &T)
where
    T: Fn(&[u8], &CancelToken) -> Outcome + Sync,
{
    loop {
        let job = jobs.lock().unwrap_or_else(|e| e.into_inner()).recv();
        let Ok(job) = job else { return };
        let result = if job.token.is_cancelled() {
            Ok(Outcome::Uninteresting)
        } else {
            panic::catch_unwind(AssertUnwindSafe(|| test(&job.bytes, &job.token)))
        };
        let msg = Done {
            id: job.id,
            hash: job.hash,
            cancelled: job.token.is_cancelled(),
            result,
        };
        if done.send(msg).is_err() {
            return;
        }
    }
}

enum State {
    Running(CancelToken),
    Finished(Outcome),
}

/// A candidate in the speculation window, in generation order.
struct Slot {
    id: u64,
    state: State,
    /// Kept while running or if interesting; dropped once known uninteresting.
    bytes: Option<Arc<[u8]>>,
    on_success: Cursor,
}

/// How often a waiting driver looks at the stop flag.
const POLL: Duration = Duration::from_millis(20);

struct Driver<'a, 'e> {
    opts: &'a Options,
    jobs: usize,
    best: Vec<u8>,
    cache: HashMap<u128, Outcome>,
    window: VecDeque<Slot>,
    /// Jobs handed to workers whose `Done` has not arrived (stale ones included).
    busy: usize,
    next_id: u64,
    stats: Stats,
    job_tx: mpsc::Sender<Job>,
    done_rx: mpsc::Receiver<Done>,
    panic: Option<Box<dyn std::any::Any + Send>>,
    on_event: &'e mut dyn FnMut(Event),
}

impl Driver<'_, '_> {
    fn stopping(&self) -> bool {
        self.panic.is_some() || self.opts.stop.load(Ordering::Relaxed)
    }

    fn run(&mut self) {
        if self.best.is_empty() {
            return;
        }
        let pipeline = &self.opts.pipeline;
        for &pass in &pipeline.first {
            self.run_pass(pass);
        }
        loop {
            loop {
                if self.stopping()
                    || self
                        .opts
                        .max_rounds
                        .is_some_and(|m| self.stats.rounds >= m as u64)
                {
                    return;
                }
                self.stats.rounds += 1;
                let mut improved = false;
                for &pass in &pipeline.main {
                    improved |= self.run_pass(pass) && !pass.only_whitespace();
                }
                if !improved {
                    break;
                }
            }
            let mut improved = false;
            for &pass in &pipeline.last {
                // A new layout alone is no reason for another round: only whitespace changed
                // (and a round could undo it, then the layout redo it, forever).
                improved |= self.run_pass(pass) && !pass.only_whitespace();
            }
            if !improved || pipeline.main.is_empty() {
                return;
            }
        }
    }

    /// Runs one pass over the current best until its schedule is exhausted; true if it
    /// improved anything.
    fn run_pass(&mut self, pass: Pass) -> bool {
        if self.stopping() {
            return false;
        }
        self.stats.pass = pass.name();
        (self.on_event)(Event::Progress(&self.stats));
        let t0 = Instant::now();
        let mut plan = pass.plan(&self.best, &self.opts.hints);
        self.stats.gen_time += t0.elapsed();
        let mut cursor = Some(START);
        let mut improved = false;
        loop {
            if self.stopping() {
                self.cancel_all();
                return improved;
            }
            self.fill(pass, &*plan, &mut cursor);
            if let Some(slot) = self.take_accepted() {
                self.cancel_all();
                self.best = slot.bytes.map(|b| b.to_vec()).unwrap_or_default();
                self.stats.improvements += 1;
                self.stats.bytes_now = self.best.len();
                (self.on_event)(Event::Improved {
                    best: &self.best,
                    pass: pass.name(),
                });
                let t0 = Instant::now();
                plan = pass.plan(&self.best, &self.opts.hints);
                self.stats.gen_time += t0.elapsed();
                cursor = Some(slot.on_success);
                improved = true;
                continue;
            }
            if self.window.is_empty() && cursor.is_none() {
                return improved;
            }
            self.wait();
        }
    }

    /// Generates candidates of `pass` until `jobs` tests are in flight, the window is full, or
    /// the plan is exhausted (`cursor` becomes `None`).
    fn fill(&mut self, pass: Pass, plan: &dyn plan::Plan, cursor: &mut Option<Cursor>) {
        let t0 = Instant::now();
        while self.busy < self.jobs && self.window.len() < 4 * self.jobs {
            let Some(at) = *cursor else { break };
            let Some(step) = plan.step(&self.best, at) else {
                *cursor = None;
                break;
            };
            *cursor = Some(step.next);
            self.stats.candidates += 1;
            let cand = plan::apply(&self.best, &step.edits);
            // A layout may be longer than the current text, never longer than the input.
            let unwanted = if pass.only_whitespace() {
                cand.len() > self.stats.bytes_before || cand == self.best
            } else {
                cand.len() >= self.best.len()
            };
            if cand.is_empty() || unwanted {
                continue;
            }
            let hash = content_hash(&cand);
            let id = self.next_id;
            self.next_id += 1;
            if let Some(&outcome) = self.cache.get(&hash) {
                self.stats.cache_hits += 1;
                let bytes = (outcome == Outcome::Interesting).then(|| Arc::from(cand));
                self.window.push_back(Slot {
                    id,
                    state: State::Finished(outcome),
                    bytes,
                    on_success: step.on_success,
                });
                if outcome == Outcome::Interesting {
                    break;
                }
                continue;
            }
            let bytes: Arc<[u8]> = Arc::from(cand);
            let token = CancelToken::new();
            if self
                .job_tx
                .send(Job {
                    id,
                    hash,
                    bytes: bytes.clone(),
                    token: token.clone(),
                })
                .is_err()
            {
                *cursor = None;
                break;
            }
            self.busy += 1;
            self.stats.tests += 1;
            self.window.push_back(Slot {
                id,
                state: State::Running(token),
                bytes: Some(bytes),
                on_success: step.on_success,
            });
        }
        self.stats.gen_time += t0.elapsed();
    }

    /// Pops known-uninteresting candidates off the front; returns the front one if it is
    /// interesting (all before it having failed).
    fn take_accepted(&mut self) -> Option<Slot> {
        while let Some(front) = self.window.front() {
            match front.state {
                State::Running(_) => return None,
                State::Finished(Outcome::Uninteresting) => {
                    self.window.pop_front();
                }
                State::Finished(Outcome::Interesting) => return self.window.pop_front(),
            }
        }
        None
    }

    /// Waits for one test result (or a poll interval, to notice the stop flag).
    fn wait(&mut self) {
        let done = match self.done_rx.recv_timeout(POLL) {
            Ok(done) => done,
            Err(RecvTimeoutError::Timeout) => return,
            Err(RecvTimeoutError::Disconnected) => {
                // Cannot happen while workers live; make sure we do not spin.
                self.opts.stop.store(true, Ordering::Relaxed);
                return;
            }
        };
        self.busy -= 1;
        let outcome = match done.result {
            Ok(o) => o,
            Err(p) => {
                self.panic.get_or_insert(p);
                return;
            }
        };
        if done.cancelled {
            self.stats.cancelled += 1;
        } else {
            self.cache.insert(done.hash, outcome);
        }
        if let Some(slot) = self.window.iter_mut().find(|s| s.id == done.id) {
            if !done.cancelled {
                slot.state = State::Finished(outcome);
                if outcome == Outcome::Uninteresting {
                    slot.bytes = None;
                }
            }
        }
        (self.on_event)(Event::Progress(&self.stats));
    }

    /// Cancels every test in the window and forgets the window.
    fn cancel_all(&mut self) {
        for slot in self.window.drain(..) {
            if let State::Running(token) = slot.state {
                token.cancel();
            }
        }
    }
}
