//! Progress on stderr for the commands that take a while (reduce, flags, versions, classify,
//! triage): what people expect from cargo or ripgrep. `inspect` has none: it scans clang-19's
//! whole riscv64 closure (libLLVM included) in under a second.
//!
//! - On a terminal: an `indicatif` bar (reduce: bytes now of start, tests, cache hits, pass,
//!   elapsed) or a spinner with the current step, redrawn in place and cleared before the
//!   command prints its result.
//! - Not on a terminal (a log file, CI): plain `icepick: …` lines, a reduce status line every
//!   10 s.
//! - With `--json` or `-q`: nothing.
//!
//! Log lines ([`super::logger`]) printed while a bar is drawn go above it ([`print_above`]).

use std::io::IsTerminal;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::reduce::Note;

/// The bar or spinner on screen, if any: log lines are printed above it.
static ACTIVE: Mutex<Option<ProgressBar>> = Mutex::new(None);

/// How often the spinner turns and the elapsed time advances.
const TICK: Duration = Duration::from_millis(120);
/// A status line this often when stderr is not a terminal.
const LINE_EVERY: Duration = Duration::from_secs(10);

/// Prints `line` on stderr, above the progress bar when one is drawn.
pub(crate) fn print_above(line: &str) {
    let line = super::term::visible(line);
    let active = ACTIVE.lock().ok().and_then(|a| a.clone());
    match active {
        Some(bar) if !bar.is_finished() => bar.suspend(|| eprintln!("{line}")),
        _ => eprintln!("{line}"),
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Off,
    Bar,
    Lines,
}

fn mode(off: bool) -> Mode {
    if off || super::logger::quiet() {
        Mode::Off
    } else if std::io::stderr().is_terminal() {
        Mode::Bar
    } else {
        Mode::Lines
    }
}

fn show(bar: ProgressBar) -> ProgressBar {
    bar.enable_steady_tick(TICK);
    if let Ok(mut a) = ACTIVE.lock() {
        *a = Some(bar.clone());
    }
    bar
}

fn clear(bar: Option<ProgressBar>) {
    if let Some(bar) = bar {
        bar.finish_and_clear();
        if let Ok(mut a) = ACTIVE.lock() {
            *a = None;
        }
    }
}

pub(crate) fn human_bytes(n: usize) -> String {
    if n >= 1 << 20 {
        format!("{:.1} MB", n as f64 / (1 << 20) as f64)
    } else if n >= 1 << 10 {
        format!("{:.1} KB", n as f64 / (1 << 10) as f64)
    } else {
        format!("{n} B")
    }
}

/// The reduce stage's progress: a bar of bytes removed on a terminal, a line every 10 s
/// otherwise.
pub(crate) struct Progress {
    mode: Mode,
    started: Instant,
    last: Option<Instant>,
    before: usize,
    now: usize,
    bar: Option<ProgressBar>,
}

impl Progress {
    /// A progress display; `off` (`--json`) shows nothing, nor does `-q`.
    pub(crate) fn new(off: bool) -> Self {
        Progress {
            mode: mode(off),
            started: Instant::now(),
            last: None,
            before: 0,
            now: 0,
            bar: None,
        }
    }

    /// Shows one note of the reduction: a line, or the bar moved.
    pub(crate) fn note(&mut self, n: Note<'_>) {
        // A refused farm is said even with --json or -q (on stderr): the user asked for it.
        if let Note::Farm(f) = &n {
            if let Some(why) = &f.refused {
                print_above(&format!(
                    "icepick: not using the {} farm: {why}; testing locally",
                    f.requested
                ));
                return;
            }
        }
        if self.mode == Mode::Off {
            return;
        }
        match n {
            Note::Started { bytes, timeout } => self.started(bytes, timeout),
            Note::Improved { bytes, .. } => {
                self.now = bytes;
                if let Some(bar) = &self.bar {
                    bar.set_position(self.before.saturating_sub(bytes) as u64);
                }
            }
            Note::Progress(s) => self.progress(s),
            Note::Verifying => {
                clear(self.bar.take());
                log::info!("verifying the result");
            }
            Note::BackedOff { bytes, why } => {
                self.now = bytes;
                log::info!(
                    "{why}; falling back to {} and reducing from there with a stricter test",
                    human_bytes(bytes)
                );
            }
            Note::Farm(f) => log::info!("testing on the {} farm (the crash travels)", f.executor),
        }
    }

    /// A reduction of `bytes` started: a line, and a new bar on a terminal.
    fn started(&mut self, bytes: usize, timeout: Duration) {
        self.before = bytes;
        self.now = bytes;
        self.started = Instant::now();
        log::info!(
            "reducing {} (per-test timeout {:.1} s)",
            human_bytes(bytes),
            timeout.as_secs_f64()
        );
        if self.mode == Mode::Bar {
            clear(self.bar.take());
            let bar = ProgressBar::with_draw_target(
                Some(bytes.max(1) as u64),
                ProgressDrawTarget::stderr(),
            );
            bar.set_style(
                ProgressStyle::with_template(
                    "{spinner:.green} [{bar:20.cyan/blue}] {wide_msg} {elapsed}",
                )
                .unwrap_or_else(|_| ProgressStyle::default_bar())
                .progress_chars("=> "),
            );
            bar.set_message(format!("{} of {}", human_bytes(bytes), human_bytes(bytes)));
            self.bar = Some(show(bar));
        }
    }

    /// The counters so far: the bar's message, or a line at most every [`LINE_EVERY`].
    fn progress(&mut self, s: &reducers::Stats) {
        let secs = self.started.elapsed().as_secs_f64();
        let removed = 100.0 * (1.0 - self.now as f64 / self.before.max(1) as f64);
        match &self.bar {
            // Short enough for an 80-column terminal; what does not fit is cut.
            Some(bar) => {
                bar.set_position(self.before.saturating_sub(self.now) as u64);
                let farm = crate::executor::live()
                    .map(|l| format!(" | {} in flight, {} remote", l.in_flight, l.remote))
                    .unwrap_or_default();
                bar.set_message(format!(
                    "{} of {} | {} tests, {} cached{farm} | {}",
                    human_bytes(self.now),
                    human_bytes(self.before),
                    s.tests,
                    s.cache_hits,
                    s.pass,
                ));
            }
            None => {
                if self.last.is_some_and(|l| l.elapsed() < LINE_EVERY) {
                    return;
                }
                self.last = Some(Instant::now());
                let farm = crate::executor::live()
                    .map(|l| format!(" | {}", l.line()))
                    .unwrap_or_default();
                log::info!(
                    "{} ({removed:.1}% removed) | pass {} | {} tests, {:.1}/s, {} cached{farm} | {secs:.0} s",
                    human_bytes(self.now),
                    s.pass,
                    s.tests,
                    s.tests as f64 / secs.max(0.001),
                    s.cache_hits,
                );
            }
        }
    }

    /// Clears the bar: the result goes on a clean line.
    pub(crate) fn finish(&mut self) {
        clear(self.bar.take());
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.finish();
    }
}

/// A step without a measurable size (flags, versions, classify, triage's stages): a spinner with
/// the current step and the elapsed time on a terminal; each step as a line otherwise.
pub(crate) struct Spinner {
    mode: Mode,
    bar: Option<ProgressBar>,
}

impl Spinner {
    /// Starts the spinner with `what` ("running the case on 4 compilers"); `off` (`--json`)
    /// shows nothing, nor does `-q`.
    pub(crate) fn start(what: &str, off: bool) -> Self {
        let mode = mode(off);
        let bar = (mode == Mode::Bar).then(|| {
            let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
            bar.set_style(
                ProgressStyle::with_template("{spinner:.green} {wide_msg} {elapsed}")
                    .unwrap_or_else(|_| ProgressStyle::default_spinner()),
            );
            bar.set_message(what.to_string());
            show(bar)
        });
        if mode == Mode::Lines {
            log::info!("{what}");
        }
        Spinner { mode, bar }
    }

    /// A step: printed as a line (above the spinner on a terminal) and shown as the
    /// spinner's message.
    pub(crate) fn step(&self, msg: &str) {
        if self.mode == Mode::Off {
            return;
        }
        log::info!("{msg}");
        if let Some(bar) = &self.bar {
            bar.set_message(msg.to_string());
        }
    }

    /// Clears the spinner.
    pub(crate) fn finish(&mut self) {
        clear(self.bar.take());
    }
}

impl Drop for Spinner {
    fn drop(&mut self) {
        self.finish();
    }
}
