//! The parallel, deterministic reduction driver.
//!
//! Tests are slow (1–2 s of clang each) and mostly fail, so the driver speculates the way
//! C-Reduce does: it keeps `jobs` candidates in flight, all generated on the assumption that
//! the earlier ones fail — across passes too: when a pass's plan runs out while its tests run,
//! the next pass's candidates are generated from the same text (`schedule.rs`) — and accepts
//! only the *lowest-index* interesting candidate once every candidate before it is known to
//! be uninteresting. Later tests are then cancelled, and generation resumes in the accepted
//! candidate's pass. The window rules are shared with the simulator (`window.rs`,
//! `simulate.rs`), which predicts from a trace ([`Event::Tested`]) how a run scales. The accepted sequence is therefore exactly the one a serial run would accept, so
//! the output is byte-identical for any `jobs` and any timing. Outcomes are cached by a 128-bit
//! content hash, because fixpoint rounds and ddmin revisit texts. The test runs on worker
//! threads; the observer runs on the caller's thread.

use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::passes::{Hints, Pass, Pipeline};
use crate::plan::{self, Cursor, START};
use crate::schedule::Schedule;
use crate::window::{Filling, State, Window};

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
    /// Improvements accepted before it was generated: the text it was derived from.
    pub base: u64,
    /// Its size.
    pub bytes: usize,
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
    let (done_tx, done_rx) = mpsc::channel::<Done>();
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
            window: Window::new(jobs),
            flight: HashMap::new(),
            started,
            pass_run: 0,
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
            let Ok(done) = d.done_rx.recv() else { break };
            d.take(done);
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
    worker: usize,
    start: Duration,
    end: Duration,
}

fn worker<T>(
    index: usize,
    started: Instant,
    jobs: &Mutex<mpsc::Receiver<Job>>,
    done: &mpsc::Sender<Done>,
    test: &T,
) where
    T: Fn(&[u8], &CancelToken) -> Outcome + Sync,
{
    loop {
        let job = jobs.lock().unwrap_or_else(|e| e.into_inner()).recv();
        let Ok(job) = job else { return };
        let start = started.elapsed();
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
            worker: index,
            start,
            end: started.elapsed(),
        };
        if done.send(msg).is_err() {
            return;
        }
    }
}

/// What the driver keeps with a candidate in the window.
struct Cand {
    /// Kept while running or if interesting; dropped once known uninteresting.
    bytes: Option<Arc<[u8]>>,
    on_success: Cursor,
    /// Where generation resumes when it is accepted.
    ctx: Ctx,
}

/// The pass a candidate came from, and where in the pipeline that pass ran.
#[derive(Clone, Copy)]
struct Ctx {
    pass: Pass,
    sched: Schedule,
    pass_run: u64,
}

/// The pass whose candidates are being generated.
struct Gen {
    ctx: Ctx,
    plan: Box<dyn plan::Plan>,
    /// The next step of `plan` (`None`: exhausted).
    cursor: Option<Cursor>,
    /// A candidate of this pass run was accepted.
    improved: bool,
    /// The pipeline is over: nothing more to generate.
    last: bool,
}

/// What a test on a worker was, for its [`TestRecord`].
struct Flight {
    pass: &'static str,
    pass_run: u64,
    base: u64,
    bytes: usize,
}

/// How often a waiting driver looks at the stop flag.
const POLL: Duration = Duration::from_millis(20);

struct Driver<'a, 'e> {
    opts: &'a Options,
    best: Vec<u8>,
    cache: HashMap<u128, Outcome>,
    window: Window<CancelToken, Cand>,
    /// Tests handed to workers whose `Done` has not arrived.
    flight: HashMap<u64, Flight>,
    started: Instant,
    /// Starts of `run_pass` so far.
    pass_run: u64,
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

    /// Runs the pipeline. Candidates are generated in one sequence across passes: when a
    /// pass's plan is exhausted while its tests are still running, the next pass's candidates
    /// are generated from the same text, on the same assumption that everything before them
    /// fails (and its plan is what a serial run would make, if they do). An accepted
    /// candidate rewinds generation to its own pass (improved), from the accepted text.
    fn run(&mut self) {
        if self.best.is_empty() {
            return;
        }
        let sched = Schedule::start(&self.opts.pipeline, self.opts.max_rounds);
        let Some(mut gen) = self.open(sched) else {
            return;
        };
        loop {
            if self.stopping() {
                self.cancel_all();
                return;
            }
            // Accept before generating more: a test that just ended may be the accepted one,
            // and candidates generated now would be thrown away at once.
            let mut accepted = self.take_accepted();
            if accepted.is_none() {
                self.fill(&mut gen);
                accepted = self.take_accepted();
            }
            if let Some(slot) = accepted {
                self.cancel_all();
                self.best = slot.payload.bytes.map(|b| b.to_vec()).unwrap_or_default();
                self.stats.improvements += 1;
                self.stats.bytes_now = self.best.len();
                let ctx = slot.payload.ctx;
                (self.on_event)(Event::Improved {
                    best: &self.best,
                    pass: ctx.pass.name(),
                });
                let t0 = Instant::now();
                let plan = ctx.pass.plan(&self.best, &self.opts.hints);
                self.stats.gen_time += t0.elapsed();
                self.stats.pass = ctx.pass.name();
                self.stats.rounds = ctx.sched.rounds;
                self.pass_run = ctx.pass_run + 1;
                gen = Gen {
                    ctx,
                    plan,
                    cursor: Some(slot.payload.on_success),
                    improved: true,
                    last: false,
                };
                continue;
            }
            if self.window.is_empty() && gen.last {
                return;
            }
            if !gen.last && self.window.has_room(self.busy) {
                // Known results (cache hits) left the window: generate more before waiting.
                continue;
            }
            self.wait();
        }
    }

    /// The generator of the pass at `sched` on the current best, or `None` when the pipeline
    /// is over.
    fn open(&mut self, sched: Schedule) -> Option<Gen> {
        let pass = sched.pass(&self.opts.pipeline)?;
        self.stats.pass = pass.name();
        self.stats.rounds = sched.rounds;
        let pass_run = self.pass_run;
        self.pass_run += 1;
        (self.on_event)(Event::Progress(&self.stats));
        let t0 = Instant::now();
        let plan = pass.plan(&self.best, &self.opts.hints);
        self.stats.gen_time += t0.elapsed();
        Some(Gen {
            ctx: Ctx {
                pass,
                sched,
                pass_run,
            },
            plan,
            cursor: Some(START),
            improved: false,
            last: false,
        })
    }

    /// Generates candidates until `jobs` tests are in flight, the window is full, or the
    /// pipeline is over (`gen.last`), going on into the next passes as plans run out.
    fn fill(&mut self, gen: &mut Gen) {
        let t0 = Instant::now();
        while self.window.has_room(self.busy) {
            let Some(at) = gen.cursor else {
                if gen.last {
                    break;
                }
                let next =
                    gen.ctx
                        .sched
                        .next(&self.opts.pipeline, self.opts.max_rounds, gen.improved);
                match self.open(next) {
                    Some(g) => *gen = g,
                    None => gen.last = true,
                }
                continue;
            };
            let pass = gen.ctx.pass;
            let Some(step) = gen.plan.step(&self.best, at) else {
                gen.cursor = None;
                continue;
            };
            gen.cursor = Some(step.next);
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
            let flight = Flight {
                pass: pass.name(),
                pass_run: gen.ctx.pass_run,
                base: self.stats.improvements,
                bytes: cand.len(),
            };
            if let Some(&outcome) = self.cache.get(&hash) {
                self.stats.cache_hits += 1;
                let at = self.started.elapsed();
                (self.on_event)(Event::Tested(&flight.record(
                    id,
                    Tested::Cached(outcome),
                    (at, at),
                    None,
                )));
                let bytes = (outcome == Outcome::Interesting).then(|| Arc::from(cand));
                let cand = Cand {
                    bytes,
                    on_success: step.on_success,
                    ctx: gen.ctx,
                };
                if self.window.push(id, State::Finished(outcome), cand) == Filling::Stop {
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
                gen.cursor = None;
                gen.last = true;
                break;
            }
            self.busy += 1;
            self.stats.tests += 1;
            self.flight.insert(id, flight);
            let cand = Cand {
                bytes: Some(bytes),
                on_success: step.on_success,
                ctx: gen.ctx,
            };
            self.window.push(id, State::Running(token), cand);
        }
        self.stats.gen_time += t0.elapsed();
    }

    /// The front candidate when it is interesting and all before it failed.
    fn take_accepted(&mut self) -> Option<crate::window::Slot<CancelToken, Cand>> {
        self.window.take_accepted()
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
        self.take(done);
    }

    /// Takes in one test's result.
    fn take(&mut self, done: Done) {
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
            if let Some(slot) = self.window.finish(done.id, outcome) {
                if outcome == Outcome::Uninteresting {
                    slot.payload.bytes = None;
                }
            }
        }
        if let Some(f) = self.flight.remove(&done.id) {
            let result = match (done.cancelled, outcome) {
                (true, _) => Tested::Cancelled,
                (false, Outcome::Interesting) => Tested::Interesting,
                (false, Outcome::Uninteresting) => Tested::Uninteresting,
            };
            let rec = f.record(done.id, result, (done.start, done.end), Some(done.worker));
            (self.on_event)(Event::Tested(&rec));
        }
        (self.on_event)(Event::Progress(&self.stats));
    }

    /// Cancels every test in the window and forgets the window.
    fn cancel_all(&mut self) {
        for slot in self.window.drain() {
            if let State::Running(token) = slot.state {
                token.cancel();
            }
        }
    }
}

impl Flight {
    fn record(
        &self,
        seq: u64,
        result: Tested,
        (start, end): (Duration, Duration),
        worker: Option<usize>,
    ) -> TestRecord {
        TestRecord {
            seq,
            pass: self.pass,
            pass_run: self.pass_run,
            base: self.base,
            bytes: self.bytes,
            result,
            start,
            end,
            worker,
        }
    }
}
