//! The acceptance path of one candidate: the first compiler run, then — only when it crashed
//! the right way — the witness (a syntax-only run, `witness.rs`) and the confirming runs *at
//! the same time*. An accepted candidate is the expensive test of a reduction (clang runs to
//! the crash instead of stopping at the first error, and then twice more work follows), and
//! accepted tests form a chain that no amount of failure speculation shortens, so the two
//! checks run side by side; when one rejects, the other is killed (its cancel closure sees
//! the reject) and not counted as a reject. Once the first run crashed the right way, the
//! test hints so to the reducer's driver (`CancelToken::hint`), which starts speculating on
//! the candidate's acceptance while the checks run.
//!
//! Each test's phase times are kept by content hash (`PhaseLog`) for the trace (`trace.rs`),
//! so that `icepick simulate` can model both this and the earlier sequential acceptance.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::Stage;

/// Seconds spent in each phase of one test's acceptance path.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Phases {
    /// The first compiler run.
    pub first: f64,
    /// The witness run (`None`: none ran).
    pub witness: Option<f64>,
    /// The confirming runs, together (`None`: none ran).
    pub confirm: Option<f64>,
    /// Which phase said no: `first`, `witness` or `confirm` (`None`: accepted, or cancelled).
    pub rejected: Option<&'static str>,
    /// A spare worker ran the checks beside the first run (the test's time is then less
    /// than the sum of its phases).
    pub spare: bool,
}

/// How often a test in its first compiler run looks whether the driver lent it a spare
/// worker (the first run's end is seen at once).
const SPARE_POLL: Duration = Duration::from_millis(5);

/// Phases of the tests whose record is not written yet, by the candidate's content hash.
pub type PhaseLog = Mutex<HashMap<u128, Phases>>;

impl Stage<'_> {
    /// Whether a candidate that crashed the right way once is checked further: by
    /// confirming runs (`runs` > 1) or by the witness.
    pub(super) fn has_checks(&self, runs: u32) -> bool {
        runs > 1 || self.witness.as_ref().is_some_and(|w| w.engaged())
    }

    /// True when `text` crashes the same way `runs` times in a row, and passes the witness
    /// (run beside the confirming runs). Records the phases in `self.phases`. Calls `hint`
    /// when the first run crashed the right way (and the checks have not said no yet): the
    /// reducer's driver may then speculate on this candidate's acceptance at once (confirm
    /// rejects are rare). Once `spare` says the driver lent the test a spare worker
    /// (`CancelToken::has_spare`) while the first run still runs, the checks start at once
    /// beside it; they are killed if the first run says no, and what they rejected counts
    /// only once the first run has said yes.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn interesting(
        &self,
        text: &[u8],
        flags: &[String],
        runs: u32,
        timeout: Duration,
        cancel: &(dyn Fn() -> bool + Sync),
        hint: &(dyn Fn() + Sync),
        spare: &(dyn Fn() -> bool + Sync),
    ) -> bool {
        if self.require_complete && !super::complete::is_complete(text) {
            return false;
        }
        let (first_ok, first, early) =
            self.first_run(text, flags, runs, timeout, cancel, hint, spare);
        let mut phases = Phases {
            first,
            ..Phases::default()
        };
        let ok = match early {
            Some((ok, checks)) => {
                phases.spare = true;
                phases.witness = checks.witness;
                phases.confirm = checks.confirm;
                if first_ok && !cancel() {
                    phases.rejected = checks.rejected;
                    self.count_reject(checks.rejected);
                }
                first_ok && ok
            }
            None => {
                first_ok
                    && self.confirm_and_witness(
                        text,
                        flags,
                        runs,
                        timeout,
                        cancel,
                        true,
                        &mut phases,
                    )
            }
        };
        if !first_ok && !cancel() {
            phases.rejected = Some("first");
        }
        let key = reducers::content_hash(text);
        self.phases
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(key, phases);
        ok
    }

    /// The first run of a candidate, with the checks started beside it once `spare` lends a
    /// worker (see [`Stage::interesting`]): whether the first run crashed the right way, its
    /// seconds, and what the early checks said (`None` when they did not start early).
    #[allow(clippy::too_many_arguments)]
    fn first_run(
        &self,
        text: &[u8],
        flags: &[String],
        runs: u32,
        timeout: Duration,
        cancel: &(dyn Fn() -> bool + Sync),
        hint: &(dyn Fn() + Sync),
        spare: &(dyn Fn() -> bool + Sync),
    ) -> (bool, f64, Option<(bool, Phases)>) {
        let has_checks = self.has_checks(runs);
        let t0 = Instant::now();
        let said_no = AtomicBool::new(false);
        let off = || cancel() || said_no.load(Ordering::SeqCst);
        std::thread::scope(|s| {
            let (tx, rx) = mpsc::channel();
            let first_run = s.spawn(move || {
                let ok = self.crashes_within_tries(text, flags, timeout, cancel);
                let _ = tx.send(ok);
            });
            let mut early = None;
            let first_ok = loop {
                if early.is_none() && has_checks && spare() {
                    self.spare_checks.fetch_add(1, Ordering::Relaxed);
                    let off = &off;
                    early = Some(s.spawn(move || {
                        let mut phases = Phases::default();
                        let ok = self.confirm_and_witness(
                            text,
                            flags,
                            runs,
                            timeout,
                            off,
                            false,
                            &mut phases,
                        );
                        (ok, phases)
                    }));
                }
                match rx.recv_timeout(SPARE_POLL) {
                    Ok(ok) => break ok,
                    Err(RecvTimeoutError::Timeout) => {}
                    Err(RecvTimeoutError::Disconnected) => {
                        // The first run's thread panicked: stop the checks, pass it on.
                        said_no.store(true, Ordering::SeqCst);
                        if let Err(p) = first_run.join() {
                            std::panic::resume_unwind(p);
                        }
                        break false;
                    }
                }
            };
            let first = t0.elapsed().as_secs_f64();
            if !first_ok {
                said_no.store(true, Ordering::SeqCst);
            } else if !early.as_ref().is_some_and(|h| h.is_finished()) {
                hint();
            }
            let early = early.map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)));
            (first_ok, first, early)
        })
    }

    /// Counts a reject by the checks (`confirm` or `witness`), as `confirm_and_witness` does
    /// when it counts.
    fn count_reject(&self, rejected: Option<&str>) {
        match rejected {
            Some("confirm") => {
                self.confirm_rejects.fetch_add(1, Ordering::Relaxed);
            }
            Some("witness") => {
                if let Some(w) = &self.witness {
                    w.count_reject();
                }
            }
            _ => {}
        }
    }

    /// The witness and the `runs - 1` confirming runs, side by side: the first to reject
    /// cancels the other. Rejects are counted when `count` (else the caller counts them:
    /// checks that run beside the first run count only once it said yes).
    #[allow(clippy::too_many_arguments)]
    fn confirm_and_witness(
        &self,
        text: &[u8],
        flags: &[String],
        runs: u32,
        timeout: Duration,
        cancel: &(dyn Fn() -> bool + Sync),
        count: bool,
        phases: &mut Phases,
    ) -> bool {
        if !self.has_checks(runs) {
            return true;
        }
        let witness = self.witness.as_ref().filter(|w| w.engaged());
        let failed = AtomicBool::new(false);
        let off = || cancel() || failed.load(Ordering::SeqCst);
        std::thread::scope(|s| {
            let side = witness.map(|w| {
                let off = &off;
                let failed = &failed;
                s.spawn(move || {
                    let t = Instant::now();
                    let run = self.witness_run(&w.argv, text, timeout, off);
                    // Counted as a reject only when nothing cancelled it first.
                    let ok = w.passes(text, run, off() || !count);
                    if !ok {
                        failed.store(true, Ordering::SeqCst);
                    }
                    (ok, t.elapsed().as_secs_f64())
                })
            });
            let t = Instant::now();
            let mut confirmed = true;
            let mut ran = false;
            for _ in 1..runs {
                if off() {
                    confirmed = false;
                    break;
                }
                ran = true;
                self.confirm_runs.fetch_add(1, Ordering::Relaxed);
                let run = self.run_candidate(text, flags, timeout, &off);
                if !self.oracle.accepts(&run) {
                    if !off() {
                        if count {
                            self.confirm_rejects.fetch_add(1, Ordering::Relaxed);
                        }
                        phases.rejected = Some("confirm");
                    }
                    failed.store(true, Ordering::SeqCst);
                    confirmed = false;
                    break;
                }
            }
            if ran {
                phases.confirm = Some(t.elapsed().as_secs_f64());
            }
            let witnessed = match side {
                None => true,
                Some(h) => {
                    let (ok, secs) = h.join().unwrap_or((false, 0.0));
                    phases.witness = Some(secs);
                    if !ok && phases.rejected.is_none() && !cancel() {
                        phases.rejected = Some("witness");
                    }
                    ok
                }
            };
            confirmed && witnessed
        })
    }
}
