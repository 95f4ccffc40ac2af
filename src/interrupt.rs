//! Ctrl-C and SIGTERM: one process-wide "interrupted" flag, and the rule for what happens then.
//!
//! `signal-hook` catches the signals (its handler only writes to a self-pipe, which is
//! async-signal-safe) and wakes one thread, which records the signal and decides what happens;
//! nothing polls for it. Everything else reads the flag:
//! - [`crate::exec`]'s run loop looks at it every 20 ms and kills the running child's process
//!   group (SIGTERM, 200 ms grace, SIGKILL); no new child starts once it is set.
//! - A stage that can stop cleanly (reduce, which keeps its best-so-far) holds a [`Graceful`]
//!   guard: its children report [`crate::exec::Status::Cancelled`], [`stop_flag`] stops the
//!   reducer, and the stage returns its "stopped" result; `main` then exits with
//!   [`exit_code`].
//! - Everywhere else the stage must not see results made up by the interrupt (a killed
//!   compiler is no "timeout"): the exec call waits, and the signal thread ends the process at
//!   once ([`finish`]): kills the children, removes the scratch directory, and exits. The case
//!   is left as it was (its files are only ever replaced atomically).
//! - A second signal, or a graceful stage still busy one second after the first (a one-shot
//!   timer thread started by the first), ends the process the same way: Ctrl-C always takes
//!   effect within a second. A graceful stage cut short so (a reduction busy planning its next
//!   candidates) leaves word of it through an [`at_forced_exit`] hook, run just before the
//!   process ends: the reduction's record then says `stopped`, not `running`.
//!
//! Exit status: 130 after SIGINT, 143 after SIGTERM (128 + the signal, the shell convention).

use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU32, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Once, OnceLock};
use std::time::Duration;

use signal_hook::consts::{SIGINT, SIGTERM};
use signal_hook::iterator::Signals;

/// The first signal received (0: none).
static SIGNAL: AtomicI32 = AtomicI32::new(0);
/// Signals received so far.
static COUNT: AtomicU32 = AtomicU32::new(0);
/// Live [`Graceful`] guards.
static GRACEFUL: AtomicUsize = AtomicUsize::new(0);
static INSTALLED: AtomicBool = AtomicBool::new(false);
static EXITING: AtomicBool = AtomicBool::new(false);
static STOP: OnceLock<Arc<AtomicBool>> = OnceLock::new();

/// How long a graceful stage may take to wind down after the first signal.
pub const GRACE: Duration = Duration::from_millis(1000);

/// Installs the SIGINT/SIGTERM handling (once; later calls do nothing). Without it, nothing
/// here ever fires (library use, unit tests).
pub fn install() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let signals = match Signals::new([SIGINT, SIGTERM]) {
            Ok(s) => s,
            Err(e) => {
                log::warn!("cannot catch SIGINT/SIGTERM ({e}); Ctrl-C kills icepick at once");
                return;
            }
        };
        INSTALLED.store(true, Ordering::SeqCst);
        let _ = std::thread::Builder::new()
            .name("icepick-signals".into())
            .spawn(move || on_signals(signals));
    });
}

/// The signal thread: sleeps until a signal arrives, then applies the rule of the module doc.
fn on_signals(mut signals: Signals) {
    for sig in signals.forever() {
        let _ = SIGNAL.compare_exchange(0, sig, Ordering::SeqCst, Ordering::SeqCst);
        let count = COUNT.fetch_add(1, Ordering::SeqCst) + 1;
        stop_flag().store(true, Ordering::SeqCst);
        let first = signal().unwrap_or(sig);
        if GRACEFUL.load(Ordering::SeqCst) == 0 || count > 1 {
            finish(first);
        }
        if count == 1 {
            // A graceful stage gets GRACE to stop by itself, then the process ends anyway.
            let _ = std::thread::Builder::new()
                .name("icepick-grace".into())
                .spawn(move || {
                    std::thread::sleep(GRACE);
                    finish(first);
                });
        }
    }
}

/// The signal that interrupted icepick, if any.
pub fn signal() -> Option<i32> {
    match SIGNAL.load(Ordering::SeqCst) {
        0 => None,
        s => Some(s),
    }
}

/// True once SIGINT or SIGTERM arrived.
pub fn is_interrupted() -> bool {
    signal().is_some()
}

/// Set when icepick is interrupted: the stop flag of a reduction.
pub fn stop_flag() -> Arc<AtomicBool> {
    STOP.get_or_init(|| Arc::new(AtomicBool::new(false)))
        .clone()
}

/// While alive, an interrupt lets the running stage stop by itself (for up to [`GRACE`]).
#[must_use = "the stage is graceful only while the guard lives"]
pub struct Graceful(());

/// Marks the current stage as one that stops cleanly on [`stop_flag`].
pub fn graceful() -> Graceful {
    GRACEFUL.fetch_add(1, Ordering::SeqCst);
    Graceful(())
}

impl Drop for Graceful {
    fn drop(&mut self) {
        GRACEFUL.fetch_sub(1, Ordering::SeqCst);
    }
}

/// True when an interrupt ends the process right away (the handlers are installed and no
/// graceful stage runs): exec then holds back a killed child's result.
pub fn exits_on_signal() -> bool {
    INSTALLED.load(Ordering::SeqCst) && GRACEFUL.load(Ordering::SeqCst) == 0
}

/// What runs when the process is ended by a signal before a graceful stage could stop.
type Hook = Box<dyn Fn() + Send + Sync>;

/// The hooks of [`at_forced_exit`], by id.
fn hooks() -> &'static Mutex<Vec<(u64, Hook)>> {
    static HOOKS: OnceLock<Mutex<Vec<(u64, Hook)>>> = OnceLock::new();
    HOOKS.get_or_init(Default::default)
}

/// Keeps an [`at_forced_exit`] hook registered; dropping it unregisters the hook.
#[must_use = "the hook is registered only while the guard lives"]
pub struct ForcedExitHook(u64);

impl Drop for ForcedExitHook {
    fn drop(&mut self) {
        let mut h = hooks().lock().unwrap_or_else(|e| e.into_inner());
        h.retain(|(id, _)| *id != self.0);
    }
}

/// Registers `hook` to run if the process is ended by a signal ([`finish`]) while the guard
/// lives: a graceful stage uses it to record that it was stopped when it could not get there
/// by itself within [`GRACE`].
pub fn at_forced_exit(hook: impl Fn() + Send + Sync + 'static) -> ForcedExitHook {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let id = u64::from(NEXT.fetch_add(1, Ordering::SeqCst));
    let mut h = hooks().lock().unwrap_or_else(|e| e.into_inner());
    h.push((id, Box::new(hook)));
    ForcedExitHook(id)
}

/// Runs (and forgets) every registered [`at_forced_exit`] hook.
fn run_forced_exit_hooks() {
    run_forced_exit_hooks_where(|_| true);
}

/// Runs (and forgets) the registered hooks whose id `pick` chooses.
fn run_forced_exit_hooks_where(pick: impl Fn(u64) -> bool) {
    let taken: Vec<(u64, Hook)> = {
        let mut h = hooks().lock().unwrap_or_else(|e| e.into_inner());
        let (run, keep) = std::mem::take(&mut *h)
            .into_iter()
            .partition(|(id, _)| pick(*id));
        *h = keep;
        run
    };
    for (_, hook) in taken {
        hook();
    }
}

/// The exit status after signal `sig`: 128 + `sig` (130 for SIGINT, 143 for SIGTERM).
pub fn exit_code(sig: i32) -> u8 {
    u8::try_from(128 + sig).unwrap_or(u8::MAX)
}

/// The signal's name, for messages.
pub fn name(sig: i32) -> &'static str {
    match sig {
        libc::SIGINT => "SIGINT",
        libc::SIGTERM => "SIGTERM",
        _ => "a signal",
    }
}

/// Ends the process after signal `sig`: kills every running child, removes the scratch
/// directory ([`crate::exec::shutdown`]), and exits with [`exit_code`]. When another thread
/// is already at it, waits for it.
pub fn finish(sig: i32) -> ! {
    if EXITING.swap(true, Ordering::SeqCst) {
        loop {
            std::thread::park();
        }
    }
    run_forced_exit_hooks();
    crate::exec::shutdown();
    eprintln!("icepick: interrupted by {}", name(sig));
    std::process::exit(i32::from(exit_code(sig)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_codes_follow_the_shell_convention_and_are_in_the_help() {
        assert_eq!(exit_code(libc::SIGINT), 130);
        assert_eq!(exit_code(libc::SIGTERM), 143);
        assert!(crate::error::EXIT_CODES_HELP.contains("130"));
        assert!(crate::error::EXIT_CODES_HELP.contains("143"));
    }

    #[test]
    fn forced_exit_hooks_run_once_while_registered() {
        use std::sync::atomic::AtomicUsize;
        let ran = Arc::new(AtomicUsize::new(0));
        let r = ran.clone();
        let kept = at_forced_exit(move || {
            r.fetch_add(1, Ordering::SeqCst);
        });
        let r = ran.clone();
        let dropped = at_forced_exit(move || {
            r.fetch_add(100, Ordering::SeqCst);
        });
        let ours = [kept.0, dropped.0];
        drop(dropped);
        // Only this test's hooks: other tests of the process may have theirs.
        run_forced_exit_hooks_where(|id| ours.contains(&id));
        run_forced_exit_hooks_where(|id| ours.contains(&id));
        assert_eq!(ran.load(Ordering::SeqCst), 1);
        drop(kept);
    }
}
