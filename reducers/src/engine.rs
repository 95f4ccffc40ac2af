//! The driver's loop on the caller's thread: generates candidates into the levels of
//! speculation (`speculate.rs`: failure speculation in each level's window, success
//! speculation across levels), hands them to the workers (`driver.rs`), takes their results
//! in, and accepts at level 0 in generation order.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::Ordering;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::pass::{Pass, Pipeline};
use crate::plan::{self, Cursor, START};
use crate::pool::{Done, Job, Msg};
use crate::schedule::Schedule;
use crate::speculate::{Kind, Pick, Tree};
use crate::types::{content_hash, CancelToken, Event, Options, Outcome, Stats, TestRecord, Tested};
use crate::window::{Slot, State};

/// What the driver keeps with a candidate in a window.
pub(crate) struct Cand {
    /// Kept while running or if interesting; dropped once known uninteresting.
    bytes: Option<Arc<[u8]>>,
    on_success: Cursor,
    /// Where generation resumes when it is accepted.
    ctx: Ctx,
    /// Its edit's [`plan::edit_key`].
    edit: u64,
}

/// The pass a candidate came from, and where in the pipeline that pass ran.
#[derive(Clone)]
struct Ctx {
    pass: Arc<dyn Pass>,
    sched: Schedule,
    pass_run: u64,
}

/// The pass whose candidates a level is generating.
pub(crate) struct Gen {
    ctx: Ctx,
    plan: Box<dyn plan::Plan>,
    /// The text it derives candidates from.
    base: Arc<[u8]>,
    /// The next step of `plan` (`None`: exhausted).
    cursor: Option<Cursor>,
    /// A candidate of this pass run was accepted.
    improved: bool,
    /// The pipeline is over: nothing more to generate.
    last: bool,
    /// The number of the next pass run it starts.
    next_run: u64,
    /// The accepted (or assumed accepted) candidate `base` is, `None` for the input.
    parent: Option<u64>,
}

impl Gen {
    /// The generator of the pass at `sched` on `base`, or `None` when the pipeline is over.
    fn open(
        pipeline: &Pipeline,
        base: Arc<[u8]>,
        sched: Schedule,
        pass_run: u64,
        parent: Option<u64>,
    ) -> Option<Gen> {
        let pass = sched.pass(pipeline)?.clone();
        let plan = pass.plan(&base);
        Some(Gen {
            ctx: Ctx {
                pass,
                sched,
                pass_run,
            },
            plan,
            base,
            cursor: Some(START),
            improved: false,
            last: false,
            next_run: pass_run + 1,
            parent,
        })
    }

    /// What a serial run generates once candidate `id` (`cand`, with its `bytes`) is
    /// accepted: its pass, improved, resumed from its `on_success` cursor on its text.
    fn resume(id: u64, cand: &Cand, bytes: Arc<[u8]>) -> Gen {
        let ctx = cand.ctx.clone();
        let next_run = ctx.pass_run + 1;
        Gen {
            plan: ctx.pass.plan(&bytes),
            ctx,
            base: bytes,
            cursor: Some(cand.on_success),
            improved: true,
            last: false,
            next_run,
            parent: Some(id),
        }
    }
}

/// What a test on a worker was, for its [`TestRecord`].
pub(crate) struct Flight {
    pass: &'static str,
    pass_run: u64,
    base: u64,
    parent: Option<u64>,
    bytes: usize,
    hash: u128,
    edit: u64,
}

/// How often a waiting driver looks at the stop flag.
const POLL: Duration = Duration::from_millis(20);

pub(crate) struct Driver<'a, 'e> {
    pub opts: &'a Options,
    pub best: Vec<u8>,
    pub cache: HashMap<u128, Outcome>,
    pub tree: Tree<CancelToken, Cand, Gen>,
    /// Tests handed to workers whose `Done` has not arrived.
    pub flight: HashMap<u64, Flight>,
    pub started: Instant,
    /// Jobs handed to workers whose `Done` has not arrived (stale ones included), and the
    /// spare workers lent to them.
    pub busy: usize,
    /// The tests lent a spare worker (counted in `busy` until their `Done`).
    pub lent: HashSet<u64>,
    pub next_id: u64,
    pub stats: Stats,
    pub job_tx: mpsc::Sender<Job>,
    pub done_rx: mpsc::Receiver<Msg>,
    pub panic: Option<Box<dyn std::any::Any + Send>>,
    pub on_event: &'e mut dyn FnMut(Event),
}

fn kind_of(c: &Cand) -> Kind<'static> {
    Kind {
        pass: c.ctx.pass.name(),
        edit: Some(c.edit),
    }
}

fn open_pass(g: &Gen) -> Option<&'static str> {
    (!g.last).then(|| g.ctx.pass.name())
}

/// Cancels a dropped slot's test, if it runs.
fn cancel(slot: Slot<CancelToken, Cand>) {
    if let State::Running(token) = slot.state {
        token.cancel();
    }
}

impl Driver<'_, '_> {
    /// Seconds since [`crate::reduce`] was called: the clock of the slots' test times.
    fn now(&self) -> f64 {
        self.started.elapsed().as_secs_f64()
    }

    fn stopping(&self) -> bool {
        self.panic.is_some() || self.opts.stop.load(Ordering::Relaxed)
    }

    /// Runs the pipeline. Candidates are generated in one sequence across passes: when a
    /// pass's plan is exhausted while its tests are still running, the next pass's candidates
    /// are generated from the same text, on the same assumption that everything before them
    /// fails (and its plan is what a serial run would make, if they do). An accepted
    /// candidate rewinds generation to its own pass (improved), from the accepted text —
    /// unless a level of success speculation already did that, and then it carries on.
    pub fn run(&mut self) {
        if self.best.is_empty() {
            return;
        }
        let pipeline = &self.opts.pipeline;
        let resumed = self
            .opts
            .resume
            .as_ref()
            .and_then(|r| Some((Schedule::from_resume(pipeline, r)?, r.cursor)));
        let sched = resumed.map_or_else(
            || Schedule::start(pipeline, self.opts.max_rounds),
            |(s, _)| s,
        );
        let t0 = Instant::now();
        let mut gen = Gen::open(pipeline, Arc::from(self.best.as_slice()), sched, 0, None);
        if let (Some(g), Some((_, cursor))) = (gen.as_mut(), resumed) {
            // As if the earlier run's last accepted candidate had just been accepted here.
            g.cursor = Some(cursor);
            g.improved = true;
        }
        self.stats.gen_time += t0.elapsed();
        let Some(gen) = gen else { return };
        self.tree.restart(gen);
        self.progress();
        loop {
            if self.stopping() {
                self.cancel_all();
                return;
            }
            // Accept before generating more: a test that just ended may be the accepted one,
            // and candidates generated now would be thrown away at once.
            let mut accepted = self.tree.accept(kind_of, &mut cancel);
            if accepted.is_none() {
                self.fill();
                accepted = self.tree.accept(kind_of, &mut cancel);
            }
            if let Some((slot, promoted)) = accepted {
                let bytes = slot
                    .payload
                    .bytes
                    .clone()
                    .unwrap_or_else(|| Arc::from(&b""[..]));
                self.best = bytes.to_vec();
                self.stats.improvements += 1;
                self.stats.bytes_now = self.best.len();
                (self.on_event)(Event::Improved {
                    best: &self.best,
                    pass: slot.payload.ctx.pass.name(),
                    resume: slot.payload.ctx.sched.resume_at(slot.payload.on_success),
                });
                if !promoted {
                    let t0 = Instant::now();
                    let gen = Gen::resume(slot.id, &slot.payload, bytes);
                    self.stats.gen_time += t0.elapsed();
                    self.tree.restart(gen);
                }
                self.progress();
                continue;
            }
            let Some(l0) = self.tree.levels.first() else {
                return;
            };
            if l0.window.is_empty() && l0.gen.last {
                return;
            }
            if self
                .tree
                .pick(self.busy, self.now(), open_pass, kind_of)
                .is_some()
            {
                // Known results (cache hits) left the window: generate more before waiting.
                continue;
            }
            self.wait();
        }
    }

    /// Reports level 0's pass.
    fn progress(&mut self) {
        if let Some(l0) = self.tree.levels.first() {
            self.stats.pass = l0.gen.ctx.pass.name();
            self.stats.rounds = l0.gen.ctx.sched.rounds;
        }
        (self.on_event)(Event::Progress(&self.stats));
    }

    /// Generates candidates until `jobs` tests are in flight or no level may take one.
    fn fill(&mut self) {
        let t0 = Instant::now();
        loop {
            self.tree.settle(kind_of, &mut cancel);
            match self.tree.pick(self.busy, self.now(), open_pass, kind_of) {
                None => break,
                Some(Pick::Branch { level, on }) => {
                    let Some(base) = self.tree.slot(level, on) else {
                        break;
                    };
                    let Some(bytes) = base.payload.bytes.clone() else {
                        break;
                    };
                    let gen = Gen::resume(on, &base.payload, bytes);
                    self.tree.branch(level, on, gen);
                }
                Some(Pick::Level(k)) => self.step(k),
                Some(Pick::Lend(id)) => {
                    let Some(token) = self.tree.lend(id) else {
                        break;
                    };
                    token.lend();
                    self.busy += 1;
                    self.stats.lent += 1;
                    self.lent.insert(id);
                }
            }
        }
        self.stats.gen_time += t0.elapsed();
    }

    /// One step of level `k`'s generator: a candidate tested, answered from the cache or
    /// skipped, or the next pass opened.
    fn step(&mut self, k: usize) {
        let level = &mut self.tree.levels[k];
        let gen = &mut level.gen;
        let Some(at) = gen.cursor else {
            self.open_next_pass(k);
            return;
        };
        let pass = gen.ctx.pass.clone();
        let Some(step) = gen.plan.step(&gen.base, at) else {
            gen.cursor = None;
            return;
        };
        gen.cursor = Some(step.next);
        self.stats.candidates += 1;
        let cand = plan::apply(&gen.base, &step.edits);
        // A layout may be longer than the current text, never longer than the input.
        let unwanted = if pass.only_whitespace() {
            cand.len() > self.stats.bytes_before || *cand == *gen.base
        } else {
            cand.len() >= gen.base.len()
        };
        if cand.is_empty() || unwanted {
            return;
        }
        let hash = content_hash(&cand);
        let edit = plan::edit_key(pass.name(), &gen.base, &step.edits);
        let id = self.next_id;
        self.next_id += 1;
        let flight = Flight {
            pass: pass.name(),
            pass_run: gen.ctx.pass_run,
            base: self.stats.improvements + level.depth,
            parent: gen.parent,
            bytes: cand.len(),
            hash,
            edit,
        };
        let ctx = gen.ctx.clone();
        if let Some(&outcome) = self.cache.get(&hash) {
            self.stats.cache_hits += 1;
            let at = self.started.elapsed();
            let rec = flight.record(id, Tested::Cached(outcome), (at, at), None);
            (self.on_event)(Event::Tested(&rec));
            let bytes = (outcome == Outcome::Interesting).then(|| Arc::from(cand));
            let cand = Cand {
                bytes,
                on_success: step.on_success,
                ctx,
                edit,
            };
            let at = at.as_secs_f64();
            self.tree
                .push(k, id, State::Finished(outcome), cand, at, kind_of);
            return;
        }
        let bytes: Arc<[u8]> = Arc::from(cand);
        let token = CancelToken::new();
        let job = Job {
            id,
            hash,
            bytes: bytes.clone(),
            token: token.clone(),
        };
        if self.job_tx.send(job).is_err() {
            gen.cursor = None;
            gen.last = true;
            return;
        }
        self.busy += 1;
        self.stats.tests += 1;
        self.flight.insert(id, flight);
        let cand = Cand {
            bytes: Some(bytes),
            on_success: step.on_success,
            ctx,
            edit,
        };
        let at = self.now();
        self.tree
            .push(k, id, State::Running(token), cand, at, kind_of);
    }

    /// Level `k`'s pass is over: its generator opens the schedule's next pass on its text, or
    /// is the last one.
    fn open_next_pass(&mut self, k: usize) {
        let gen = &mut self.tree.levels[k].gen;
        let pipeline = &self.opts.pipeline;
        let next = gen
            .ctx
            .sched
            .next(pipeline, self.opts.max_rounds, gen.improved);
        let base = gen.base.clone();
        match Gen::open(pipeline, base, next, gen.next_run, gen.parent) {
            Some(g) => *gen = g,
            None => gen.last = true,
        }
        if k == 0 {
            self.progress();
        }
    }

    /// Waits for one test result or hint (or a poll interval, to notice the stop flag).
    fn wait(&mut self) {
        let msg = match self.done_rx.recv_timeout(POLL) {
            Ok(msg) => msg,
            Err(RecvTimeoutError::Timeout) => return,
            Err(RecvTimeoutError::Disconnected) => {
                // Cannot happen while workers live; make sure we do not spin.
                self.opts.stop.store(true, Ordering::Relaxed);
                return;
            }
        };
        self.take(msg);
    }

    /// Takes in a worker's message: a hint marks its slot (`speculate.rs` opens a level on
    /// it), a result is recorded.
    pub fn take(&mut self, msg: Msg) {
        match msg {
            Msg::Hint { id } => {
                self.stats.hints += 1;
                self.tree.hint(id);
            }
            Msg::Done(done) => self.take_done(done),
        }
    }

    /// Takes in one test's result.
    fn take_done(&mut self, done: Done) {
        self.busy -= 1;
        if self.lent.remove(&done.id) {
            self.busy -= 1;
        }
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
            let at = done.end.as_secs_f64();
            if let Some(slot) = self.tree.finish(done.id, outcome, at, kind_of) {
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

    /// Cancels every test in every level and forgets the levels.
    pub fn cancel_all(&mut self) {
        self.tree.cut_all(&mut cancel);
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
            parent: self.parent,
            bytes: self.bytes,
            hash: self.hash,
            edit: self.edit,
            result,
            start,
            end,
            worker,
        }
    }
}
