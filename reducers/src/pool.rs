//! The worker threads: each takes a candidate ([`Job`]), runs the caller's test on it with a
//! [`CancelToken`] that can talk back (a hint that the test is likely interesting), catches a
//! panic, and sends the result ([`Msg`]) to the driver's loop (`engine.rs`).

use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

use crate::types::{CancelToken, Outcome};

/// A candidate handed to a worker.
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

/// A test's result as the worker reports it.
pub(crate) struct Done {
    pub id: u64,
    pub hash: u128,
    pub cancelled: bool,
    pub result: std::thread::Result<Outcome>,
    pub worker: usize,
    pub start: Duration,
    pub end: Duration,
}

/// One worker thread's loop: runs jobs until the job channel closes.
pub(crate) fn worker<T>(
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
