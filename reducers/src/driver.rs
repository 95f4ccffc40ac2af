//! The parallel, deterministic reduction driver's entry point: [`reduce`] starts the worker
//! threads (`pool.rs`) and runs the loop of `engine.rs` on the caller's thread.
//!
//! Tests are slow (a second or more each) and mostly fail, so the driver speculates the way
//! C-Reduce does: it keeps `jobs` candidates in flight, generated on the assumption that the
//! earlier ones fail — across passes too: when a pass's plan runs out while its tests run,
//! the next pass's candidates are generated from the same text (`schedule.rs`) — and accepts
//! only the *lowest-index* interesting candidate once every candidate before it is known to
//! be uninteresting. Later tests are then cancelled, and generation resumes in the accepted
//! candidate's pass. It also speculates on success (`speculate.rs`): idle workers test what
//! a serial run would test next if a candidate (a front, or a known success behind one) is
//! accepted, recursively, in a tree of levels; when it is, those tests are already running.
//! The window and level rules are shared with the simulator (`window.rs`, `speculate.rs`,
//! `simulate.rs`), which predicts from a trace ([`Event::Tested`]) how a run scales. The
//! accepted sequence is exactly the one a serial run would accept, so the output is
//! byte-identical for any `jobs` and any timing. Outcomes are cached by a 128-bit content
//! hash, because fixpoint rounds and ddmin revisit texts. The test runs on worker threads; the
//! observer runs on the caller's thread.

use std::collections::{HashMap, HashSet};
use std::panic;
use std::sync::atomic::Ordering;
use std::sync::{mpsc, Mutex};
use std::time::Instant;

use crate::engine::Driver;
use crate::pool::{worker, Job, Msg};
use crate::speculate::Tree;
use crate::types::{CancelToken, Event, Options, Outcome, Reduction, Stats};

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
