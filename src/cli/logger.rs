//! `-v`/`--verbose` and `-q`/`--quiet`: how much icepick says on stderr besides the result.
//!
//! One logger (the `log` facade) for the whole process. Stages report what they do through
//! their progress callbacks, which the CLI turns into `log::info!` lines; [`crate::exec`] logs
//! every command it runs at `debug` (argv quoted for a shell, exit status, time). Levels:
//! - default: info ("icepick: reproducing …"), warnings and errors;
//! - `-q`: errors only; the progress display is off too ([`quiet`]), so stdout's result line is
//!   all there is;
//! - `-v`: also every compiler and tool command, with how it ended and how long it took;
//! - `-vv`: also each command as it starts (to see what a slow step is waiting for).
//!
//! A line printed while a progress bar is drawn goes above the bar
//! ([`super::progress::print_above`]) instead of through it.

use std::sync::atomic::{AtomicBool, Ordering};

use log::{Level, LevelFilter, Metadata, Record};

static QUIET: AtomicBool = AtomicBool::new(false);

struct Stderr;

impl log::Log for Stderr {
    fn enabled(&self, m: &Metadata<'_>) -> bool {
        m.level() <= log::max_level()
    }

    fn log(&self, r: &Record<'_>) {
        if !self.enabled(r.metadata()) {
            return;
        }
        let line = match r.level() {
            Level::Error => format!("icepick: error: {}", r.args()),
            Level::Warn => format!("icepick: warning: {}", r.args()),
            Level::Info => format!("icepick: {}", r.args()),
            Level::Debug | Level::Trace => format!("icepick: [{}] {}", short_target(r), r.args()),
        };
        super::progress::print_above(&line);
    }

    fn flush(&self) {}
}

/// `icepick::exec` → `exec`: which part of icepick says it.
fn short_target<'a>(r: &'a Record<'_>) -> &'a str {
    let t = r.target();
    let t = t.strip_prefix("icepick::").unwrap_or(t);
    t.split("::").next().unwrap_or(t)
}

/// Sets the level from the global options (`-v` may be repeated). Called once, before any
/// stage runs.
pub(crate) fn init(verbose: u8, quiet: bool) {
    QUIET.store(quiet, Ordering::SeqCst);
    let level = if quiet {
        LevelFilter::Error
    } else {
        match verbose {
            0 => LevelFilter::Info,
            1 => LevelFilter::Debug,
            _ => LevelFilter::Trace,
        }
    };
    static LOGGER: Stderr = Stderr;
    if log::set_logger(&LOGGER).is_ok() {
        log::set_max_level(level);
    }
}

/// True under `-q`: print the result and errors, nothing else (no progress either).
pub(crate) fn quiet() -> bool {
    QUIET.load(Ordering::SeqCst)
}
