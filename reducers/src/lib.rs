//! Pure reduction passes over preprocessed C, C++ and HIP text, and the parallel driver that
//! applies them against an interestingness test supplied by the caller. No process or file I/O
//! happens here: the caller's test closure does all of that.
//!
//! # Using it
//!
//! ```
//! use icepick_reducers::{reduce, CancelToken, Event, Options, Outcome};
//!
//! let input = b"int unused;\nint keep() { return 42; }\nint other;\n";
//! // Interesting iff the text still defines `keep`.
//! let test = |text: &[u8], _cancel: &CancelToken| {
//!     let s = String::from_utf8_lossy(text);
//!     if s.contains("keep()") && s.contains('{') { Outcome::Interesting } else { Outcome::Uninteresting }
//! };
//! let opts = Options { jobs: 2, ..Options::default() };
//! let r = reduce(input, &opts, &test, &mut |e| {
//!     if let Event::Improved { best, .. } = e { /* write `best` atomically */ let _ = best; }
//! });
//! assert!(r.output.len() < input.len());
//! ```
//!
//! # Design assumptions
//!
//! - A test costs about a second (a clang run), so the driver may spend O(n) per candidate
//!   (lex, apply, hash) but nothing quadratic; [`Stats::gen_time`] measures it.
//! - The output must not depend on `jobs` or timing: candidates are generated speculatively
//!   assuming failure and accepted strictly in generation order (see `driver.rs`).
//! - The cheapest big wins come from what we know: line-marker provenance, the crash's parser
//!   location and crashing function ([`Hints`]). Blind passes (C-Reduce-style ddmin over
//!   declarations, nested statements, lines, balanced regions and tokens) finish the job, then
//!   renaming, literal simplification and pretty-printing make it readable.
//! - Input is arbitrary bytes: nothing assumes UTF-8, and no pass panics.
//!
//! # Passes and their order
//!
//! [`Pipeline::default`]: `first` = crash-cut, provenance, function-focus (once); `main` =
//! markers, top-level, chunks-1..4, chunks-6, chunks-8, lines, balanced, tokens (repeated until
//! a round removes nothing); `last` = rename, literals, normalise (then `main` again if `last`
//! improved anything).

mod driver;
mod lex;
mod markers;
mod passes;
mod plan;

pub use driver::{content_hash, reduce, CancelToken, Event, Options, Outcome, Reduction, Stats};
pub use passes::{Hints, Pass, Pipeline};
