//! The catalogue of passes, their names, and the default order in which the driver runs them.
//!
//! A pass is a value of [`Pass`]; it turns the current text into a lazy candidate schedule
//! (see `plan.rs`). Keeping the set closed (an enum, not a trait) lets callers pick, reorder or
//! drop passes (e.g. no renaming for a more readable report) without any plugin machinery.

mod closure;
mod directives;
mod finish;
mod guided;
mod layout;
mod structure;

use crate::plan::{self, Plan, START};

/// What the crash told us, used by the guided passes. All optional.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Hints {
    /// Frontend crash: `(file as printed, line)` from `file:line:col: current parser token …`
    /// or `… parsing function body 'X'` in clang's stack dump. Lines are the ones seen through
    /// the line markers, exactly as clang prints them.
    pub parser_location: Option<(String, u32)>,
    /// The column of `parser_location` (1-based, in bytes), when clang printed one.
    pub parser_column: Option<u32>,
    /// Backend crash: the function from `… on function '@f'` (mangled or not), or the `X` of
    /// `parsing function body 'X'`.
    pub crash_function: Option<String>,
}

/// One reduction pass.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Pass {
    /// Keep only the main file's lines: [`Pass::Provenance`]'s first candidate on its own, one
    /// test before [`Pass::CrashCut`] (see [`Pipeline::default`]).
    MainOnly,
    /// Cut the text after the crash's parser location (needs [`Hints::parser_location`]).
    CrashCut,
    /// Keep the use-def closure of the crash site (see `closure.rs`): one big cut that keeps
    /// every declaration the kept code names, so it stays valid; then coarser fallbacks.
    Closure,
    /// Keep only the main file's text (line markers), else the closure's cut, then ddmin over
    /// includes and declarations.
    Provenance,
    /// Empty every function body except the crashing one (needs [`Hints::crash_function`]).
    FunctionFocus,
    /// Drop line markers and blank lines.
    Markers,
    /// ddmin over the statements/declarations at this brace depth (0 = top level).
    Chunks(u8),
    /// ddmin over physical lines.
    Lines,
    /// Delete, empty or unwrap balanced `()` `[]` `{}` `<>` regions; bodies become `;`/`{}`.
    Balanced,
    /// ddmin over tokens, up to 8 at a time.
    Tokens,
    /// Raw C/C++: delete a conditional group or keep one arm, delete or empty a `#define`,
    /// delete other directive lines (`#include`, `#pragma`, …; never line markers).
    Directives,
    /// Raw C/C++: ddmin over the tokens inside directive lines (macro bodies, `#if` conditions).
    DirectiveTokens,
    /// The whole text with the least whitespace: one line, except that directives keep lines
    /// of their own (see `directives.rs`).
    OneLine,
    /// Rename identifiers to the shortest unused names.
    Rename,
    /// [`Pass::Rename`], `__names` too (for a user's script, which decides).
    RenameAll,
    /// Numbers become `0`, strings `""`.
    Literals,
    /// Lay the text out readably (one statement per line, 2-space indentation; see
    /// `layout.rs`), changing only whitespace. Unlike every other pass its candidate may be
    /// longer than the current text (never than the driver's input); then whitespace squeezed.
    Normalise,
}

const CHUNK_NAMES: [&str; 11] = [
    "top-level",
    "chunks-1",
    "chunks-2",
    "chunks-3",
    "chunks-4",
    "chunks-5",
    "chunks-6",
    "chunks-7",
    "chunks-8",
    "chunks-9",
    "chunks-10+",
];

impl Pass {
    /// A short, stable name for progress output.
    pub fn name(&self) -> &'static str {
        match self {
            Pass::MainOnly => "main-only",
            Pass::CrashCut => "crash-cut",
            Pass::Closure => "closure",
            Pass::Provenance => "provenance",
            Pass::FunctionFocus => "function-focus",
            Pass::Markers => "markers",
            Pass::Chunks(d) => CHUNK_NAMES[usize::from(*d).min(CHUNK_NAMES.len() - 1)],
            Pass::Lines => "lines",
            Pass::Balanced => "balanced",
            Pass::Tokens => "tokens",
            Pass::Directives => "directives",
            Pass::DirectiveTokens => "directive-tokens",
            Pass::OneLine => "one-line",
            Pass::Rename => "rename",
            Pass::RenameAll => "rename-all",
            Pass::Literals => "literals",
            Pass::Normalise => "normalise",
        }
    }

    /// True if the pass changes only whitespace, so its candidates need not be shorter.
    pub fn only_whitespace(&self) -> bool {
        matches!(self, Pass::Normalise)
    }

    pub(crate) fn plan(&self, text: &[u8], hints: &Hints) -> Box<dyn Plan> {
        if crate::lex::too_big(text) {
            return Box::new(plan::Empty);
        }
        match self {
            Pass::MainOnly => guided::main_only(text),
            Pass::CrashCut => guided::crash_cut(text, hints),
            Pass::Closure => closure::closure(text, hints),
            Pass::Provenance => guided::provenance(text, hints),
            Pass::FunctionFocus => guided::function_focus(text, hints),
            Pass::Markers => guided::markers(text),
            Pass::Chunks(d) => structure::chunks(text, u32::from(*d)),
            Pass::Lines => structure::lines(text),
            Pass::Balanced => structure::balanced(text),
            Pass::Tokens => structure::tokens(text),
            Pass::Directives => directives::directives_pass(text),
            Pass::DirectiveTokens => directives::directive_tokens(text),
            Pass::OneLine => directives::one_line(text),
            Pass::Rename => finish::rename(text),
            Pass::RenameAll => finish::rename_all(text),
            Pass::Literals => finish::literals(text),
            Pass::Normalise => layout::normalise(text),
        }
    }

    /// The candidates this pass would offer for `text` if every one of them were rejected, in
    /// order, each strictly shorter than `text` (for [`Pass::only_whitespace`] passes: each
    /// different from `text`, with the same tokens). For inspection and tests; the driver uses the
    /// same schedule, resuming after each accepted candidate.
    pub fn candidates<'t>(
        &self,
        text: &'t [u8],
        hints: &Hints,
    ) -> impl Iterator<Item = Vec<u8>> + 't {
        let plan = self.plan(text, hints);
        let mut at = Some(START);
        std::iter::from_fn(move || {
            let step = plan.step(text, at?)?;
            at = Some(step.next);
            Some(plan::apply(text, &step.edits))
        })
    }

    /// Every built-in pass: the default pipeline's in order, then those only
    /// [`Pipeline::raw`] runs (useful for tests).
    pub fn all() -> Vec<Pass> {
        let mut all = Vec::new();
        for p in [Pipeline::default(), Pipeline::raw()] {
            for pass in p.first.into_iter().chain(p.main).chain(p.last) {
                if !all.contains(&pass) {
                    all.push(pass);
                }
            }
        }
        all
    }
}

/// Which passes run, in three phases: `first` once at the start, `main` repeated until a round
/// removes nothing, then `last`; if `last` improved anything, `main` and `last` run again.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pipeline {
    pub first: Vec<Pass>,
    pub main: Vec<Pass>,
    pub last: Vec<Pass>,
}

impl Default for Pipeline {
    fn default() -> Self {
        use Pass::*;
        Pipeline {
            // Main-only first: when the headers are not needed it is one quick
            // test to a few KB, and crash-cut's candidates, which differ from the input by the
            // few bytes after a crash near the end of the file, then run on that instead of
            // taking a full compile of the input each. When they are needed it is one failed
            // test, which with two or more jobs runs beside crash-cut's. Crash-cut still comes
            // before provenance and closure, whose cuts it can enable (a crash-on-valid whose
            // headers only the code after the crash uses).
            first: vec![MainOnly, CrashCut, Provenance, Closure, FunctionFocus],
            main: vec![
                Markers,
                // Offers nothing on preprocessed text unless it has a `#pragma`.
                Directives,
                Chunks(0),
                Chunks(1),
                Chunks(2),
                Chunks(3),
                Chunks(4),
                Chunks(6),
                Chunks(8),
                Lines,
                Balanced,
                Tokens,
            ],
            last: vec![Rename, Literals, Normalise],
        }
    }
}

impl Pipeline {
    /// For a user's interestingness script (`reduce --test`), raw C/C++ or preprocessed: the
    /// default passes (the guided ones offer little without crash hints, but provenance still
    /// cuts a preprocessed file to its main file), directives reduced like code, and the
    /// C-Vise end state (the least whitespace, one line apart from directives) instead of the
    /// readable layout.
    pub fn raw() -> Self {
        use Pass::*;
        let mut p = Pipeline::default();
        p.main.push(DirectiveTokens);
        p.last = vec![RenameAll, Literals, OneLine];
        p
    }
}
