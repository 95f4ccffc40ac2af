//! The triage budget: one wall-clock limit shared by the stages, and the shares each gets.
//!
//! A user's build cannot wait for a triage that takes as long as it likes, and a stage that
//! is cut early still has a best so far worth reporting (the flags ddmin's smallest crashing
//! command, the reduction's smallest verified input). So each stage gets a deadline inside
//! the budget, a reserve is kept for the stages that run on the reduced input (versions,
//! classify), and whatever the reduction does not use goes to those.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The default budget of `icepick triage`, capture included.
pub const DEFAULT: Duration = Duration::from_secs(300);

/// The least time worth starting a stage with: below it the stage is skipped.
pub const STAGE_MIN: Duration = Duration::from_secs(5);

/// A wall-clock budget that started at `started`; `total: None` is no limit.
#[derive(Debug, Clone, Copy)]
pub struct Budget {
    started: Instant,
    total: Option<Duration>,
}

impl Budget {
    pub fn new(started: Instant, total: Option<Duration>) -> Self {
        Budget { started, total }
    }

    /// No limit.
    pub fn unlimited() -> Self {
        Budget::new(Instant::now(), None)
    }

    pub fn total(&self) -> Option<Duration> {
        self.total
    }

    pub fn started(&self) -> Instant {
        self.started
    }

    /// When the whole triage must end.
    pub fn deadline(&self) -> Option<Instant> {
        self.total.map(|t| self.started + t)
    }

    /// Time left at `now`; `None`: no limit.
    pub fn left_at(&self, now: Instant) -> Option<Duration> {
        self.deadline().map(|d| d.saturating_duration_since(now))
    }

    pub fn left(&self) -> Option<Duration> {
        self.left_at(Instant::now())
    }

    /// Kept for the stages after the reduction (versions and classify run on the small
    /// reduced input, a few compiler runs each): 15 % of the budget, 20 s to 90 s.
    pub fn reserve(&self) -> Duration {
        self.total.map_or(Duration::ZERO, |t| {
            t.mul_f64(0.15)
                .clamp(Duration::from_secs(20), Duration::from_secs(90))
                .min(t / 2)
        })
    }

    /// The deadline of a stage that may use `share` (0–1) of what is left at `now` once the
    /// reserve is set aside; `None`: no limit.
    pub fn stage_deadline_at(&self, now: Instant, share: f64) -> Option<Instant> {
        let left = self.left_at(now)?;
        let usable = left.saturating_sub(self.reserve());
        Some(now + usable.mul_f64(share.clamp(0.0, 1.0)))
    }

    pub fn stage_deadline(&self, share: f64) -> Option<Instant> {
        self.stage_deadline_at(Instant::now(), share)
    }

    /// The deadline of the reduction: all that is left but the reserve.
    pub fn reduce_deadline(&self) -> Option<Instant> {
        // The reserve is at most half the budget: this is never before the start.
        self.deadline().map(|d| d - self.reserve())
    }

    /// Whether a stage can still start at `now`: at least [`STAGE_MIN`] left.
    pub fn can_start_at(&self, now: Instant) -> bool {
        self.left_at(now).map_or(true, |l| l >= STAGE_MIN)
    }
}

/// A stop flag for a stage that stops gracefully (the reduction): set when `outer` is set
/// (Ctrl-C) or when `deadline` passes, whichever comes first. Dropping it ends its thread.
pub struct Watchdog {
    flag: Arc<AtomicBool>,
    fired: Arc<AtomicBool>,
    done: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Watchdog {
    /// How often the deadline and `outer` are looked at: well inside Ctrl-C's one second.
    const TICK: Duration = Duration::from_millis(50);

    pub fn start(outer: Arc<AtomicBool>, deadline: Option<Instant>) -> Self {
        let flag = Arc::new(AtomicBool::new(false));
        let fired = Arc::new(AtomicBool::new(false));
        let done = Arc::new(AtomicBool::new(false));
        let (f, fi, d) = (flag.clone(), fired.clone(), done.clone());
        let thread = std::thread::Builder::new()
            .name("icepick-budget".into())
            .spawn(move || {
                while !d.load(Ordering::SeqCst) {
                    if outer.load(Ordering::SeqCst) {
                        f.store(true, Ordering::SeqCst);
                        return;
                    }
                    if deadline.is_some_and(|dl| Instant::now() >= dl) {
                        fi.store(true, Ordering::SeqCst);
                        f.store(true, Ordering::SeqCst);
                        return;
                    }
                    std::thread::sleep(Self::TICK);
                }
            })
            .ok();
        Watchdog {
            flag,
            fired,
            done,
            thread,
        }
    }

    /// The flag to hand the stage as its stop flag.
    pub fn flag(&self) -> Arc<AtomicBool> {
        self.flag.clone()
    }

    /// Whether the deadline (not `outer`) set the flag.
    pub fn fired(&self) -> bool {
        self.fired.load(Ordering::SeqCst)
    }
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        self.done.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unlimited_budget_gives_no_deadlines() {
        let b = Budget::unlimited();
        assert!(b.deadline().is_none());
        assert!(b.stage_deadline(0.5).is_none());
        assert!(b.reduce_deadline().is_none());
        assert_eq!(b.reserve(), Duration::ZERO);
        assert!(b.can_start_at(Instant::now() + Duration::from_secs(1_000_000)));
    }

    #[test]
    fn stage_shares_come_out_of_what_is_left_after_the_reserve() {
        let t0 = Instant::now();
        let b = Budget::new(t0, Some(Duration::from_secs(300)));
        assert_eq!(b.reserve(), Duration::from_secs(45));
        // 100 s in: 200 s left, 155 s usable, 30 % of it.
        let now = t0 + Duration::from_secs(100);
        let d = b.stage_deadline_at(now, 0.3).unwrap();
        assert_eq!(d - now, Duration::from_secs_f64(155.0 * 0.3));
        assert_eq!(b.reduce_deadline().unwrap(), t0 + Duration::from_secs(255));
        // Past the reserve, a stage gets nothing, and past the end none may start.
        let late = t0 + Duration::from_secs(280);
        assert_eq!(b.stage_deadline_at(late, 1.0).unwrap(), late);
        assert!(b.can_start_at(late));
        assert!(!b.can_start_at(t0 + Duration::from_secs(296)));
    }

    #[test]
    fn the_reserve_is_clamped_and_never_more_than_half() {
        let b = |s| Budget::new(Instant::now(), Some(Duration::from_secs(s))).reserve();
        assert_eq!(b(60), Duration::from_secs(20));
        assert_eq!(b(30), Duration::from_secs(15));
        assert_eq!(b(3600), Duration::from_secs(90));
    }

    #[test]
    fn the_watchdog_fires_at_the_deadline_and_not_for_ctrl_c() {
        let outer = Arc::new(AtomicBool::new(false));
        let w = Watchdog::start(outer.clone(), Some(Instant::now()));
        let t = Instant::now();
        while !w.flag().load(Ordering::SeqCst) && t.elapsed() < Duration::from_secs(10) {
            std::thread::sleep(Duration::from_millis(5));
        }
        assert!(w.flag().load(Ordering::SeqCst));
        assert!(w.fired());

        let w = Watchdog::start(outer.clone(), None);
        outer.store(true, Ordering::SeqCst);
        let t = Instant::now();
        while !w.flag().load(Ordering::SeqCst) && t.elapsed() < Duration::from_secs(10) {
            std::thread::sleep(Duration::from_millis(5));
        }
        assert!(w.flag().load(Ordering::SeqCst));
        assert!(!w.fired());
    }

    #[test]
    fn a_watchdog_dropped_before_its_deadline_never_sets_the_flag() {
        let outer = Arc::new(AtomicBool::new(false));
        let w = Watchdog::start(outer, Some(Instant::now() + Duration::from_secs(3600)));
        let flag = w.flag();
        drop(w);
        assert!(!flag.load(Ordering::SeqCst));
    }
}
