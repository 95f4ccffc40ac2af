//! A parallel, deterministic reduction engine and reduction passes over C, C++ and HIP text
//! (preprocessed or raw), driven by an interestingness test the caller supplies. No process or
//! file I/O happens here: the caller's test closure does all of that.
//!
//! # Using it
//!
//! ```
//! use reducers::passes::{default_pipeline, Hints};
//! use reducers::{reduce, CancelToken, Event, Options, Outcome};
//!
//! let input = b"int unused;\nint keep() { return 42; }\nint other;\n";
//! // Interesting iff the text still defines `keep`.
//! let test = |text: &[u8], _cancel: &CancelToken| {
//!     let s = String::from_utf8_lossy(text);
//!     if s.contains("keep()") && s.contains('{') { Outcome::Interesting } else { Outcome::Uninteresting }
//! };
//! let opts = Options { jobs: 2, ..Options::new(default_pipeline(Hints::default())) };
//! let r = reduce(input, &opts, &test, &mut |e| {
//!     if let Event::Improved { best, .. } = e { /* write `best` atomically */ let _ = best; }
//! });
//! assert!(r.output.len() < input.len());
//! ```
//!
//! # Modules
//!
//! - The vocabulary ([`Outcome`], [`CancelToken`], [`Options`], [`Event`], [`Reduction`]) and
//!   the entry point [`reduce`].
//! - [`Pass`] and [`Pipeline`]: what the driver knows of a pass. A pass returns a
//!   [`plan::Plan`], a lazy schedule of candidates (edits and cursors, [`plan`]).
//! - [`passes`]: the built-in C/C++ passes ([`passes::CPass`]), the [`passes::Hints`] that guide
//!   some of them, and the orders they were tuned in ([`passes::default_pipeline`],
//!   [`passes::raw_pipeline`]).
//! - [`simulate`]: predicts from one run's trace how a reduction scales to any number of
//!   workers, under the driver's own scheduling rules.
//!
//! # Design assumptions
//!
//! - A test costs about a second (a compiler run), so the driver may spend O(n) per candidate
//!   (lex, apply, hash) but nothing quadratic; [`Stats::gen_time`] measures it.
//! - The output must not depend on `jobs` or timing: candidates are generated speculatively
//!   assuming failure (into the next passes too) and, in a tree of levels above, assuming a
//!   candidate is accepted (success speculation: `speculate.rs`), and accepted strictly in
//!   generation order at level 0 (see `driver.rs`, `engine.rs`). So the serial sequence of
//!   tests is the same for any `jobs`, and [`simulate`] predicts from one run's trace how it
//!   scales to any number of workers, with the same window and level code.
//! - Accepted tests are the expensive ones (for a compiler crash: the compiler runs to the
//!   crash, then checks confirm it) and each is derived from the one before: under failure speculation alone
//!   they run one after the other, which bounded the speedup near 2x. Success speculation
//!   overlaps them; the wasted tests it costs are spent on workers that would be idle. A
//!   running test may [hint](CancelToken::hint) that it will likely be interesting (the
//!   first run showed the bug: rejects in the confirming checks are rare) so that the next
//!   text's tests start before its confirming runs end; acceptance still waits for them.
//! - A level's generator is rebuilt from its base text (one O(n) plan per level, as on an
//!   acceptance), never cloned: cursors are plain values, so a plan from the same text
//!   yields the same candidates.
//! - The cheapest big wins come from what we know: line-marker provenance, the bug's
//!   location and function ([`passes::Hints`]). Blind passes (C-Reduce-style ddmin over
//!   declarations, nested statements, lines, balanced regions and tokens) finish the job, then
//!   renaming, literal simplification and the readable layout make it a test case.
//! - The test may require every candidate to stay *valid* (a crash-on-valid case must not turn
//!   into a crash-on-invalid one). Cuts that delete declarations the rest uses are then
//!   rejected, so the next big cut is the use-def closure of the crash site (`closure`, also
//!   provenance's second candidate), which keeps every declaration the kept code names and
//!   deletes the rest in one candidate.
//! - Input is arbitrary bytes: nothing assumes UTF-8, and no pass panics. Lines end where a
//!   compiler ends them: at `\n`, `\r\n` or a lone `\r` (`newline.rs`).
//!
//! # Passes and their order
//!
//! [`passes::default_pipeline`]: `first` = main-only, crash-cut, provenance, closure, prune,
//! function-focus, main-chunks, main-operands, closure, prune, hollow (once); `main` = markers,
//! directives, closure, hollow, top-level, prune, chunks-1..4, chunks-6, chunks-8, lines,
//! balanced, namespaces, aliases, bases, specializations, template-params, closure, tokens
//! (repeated until a round removes nothing); `last` = rename, literals, normalise
//! (once).
//!
//! Every candidate is strictly shorter than the current text, except `normalise`'s layout
//! ([`Pass::only_whitespace`]): it changes only whitespace and may be longer (never longer than
//! the input), because the laid-out file is what a maintainer pastes into a regression test —
//! one declaration or statement per line, two-space indentation, `{` at the end of its line,
//! tight templates, calls and unary operators, spaced binary operators, a final newline. A
//! layout alone never triggers another round.

#![deny(missing_docs)]

mod driver;
mod engine;
mod lex;
mod markers;
mod newline;
mod pass;
pub mod passes;
pub mod plan;
mod pool;
mod schedule;
pub mod simulate;
mod speculate;
mod types;
mod window;

pub use driver::reduce;
pub use pass::{Pass, Pipeline};
pub use types::{
    content_hash, CancelToken, Event, Options, Outcome, Reduction, Resume, Stats, TestRecord,
    Tested,
};

/// The README's examples, compiled and run as doctests.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
