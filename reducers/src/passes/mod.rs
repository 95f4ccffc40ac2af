//! The C, C++ and HIP passes (preprocessed or raw text), their names, and the default orders
//! in which the driver runs them.
//!
//! A pass is a value of [`CPass`]; with the [`Hints`] of a run it becomes a [`crate::Pass`]
//! ([`CPass::with`]), and [`default_pipeline`] and [`raw_pipeline`] give the orders this crate
//! was tuned with. The enum lets callers pick, reorder or drop the built-in passes (e.g. no
//! renaming for a more readable report) and mix them with passes of their own.

mod closure;
mod directives;
mod finish;
mod guided;
mod layout;
mod operands;
mod params;
mod specialize;
mod structure;
mod unwrap;

use std::sync::Arc;

use crate::pass::{Pass, Pipeline};
use crate::plan::{self, Plan, START};

/// Where the bug shows, for the guided passes: what a compiler's diagnostics or crash dump say
/// about the input. All optional; without them the guided passes offer little or nothing.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Hints {
    /// The source location the bug shows at: `(file, line)` with the file named as the line
    /// markers name it and the line counted through the markers (as a compiler reports
    /// locations in preprocessed text). [`CPass::CrashCut`] cuts the text after it.
    pub location: Option<(String, u32)>,
    /// The column of `location` (1-based, in bytes), when known.
    pub column: Option<u32>,
    /// The function the bug shows in (mangled or not). [`CPass::FunctionFocus`] empties every
    /// other function's body.
    pub function: Option<String>,
    /// Where the templates being instantiated when the bug shows are defined, `(file, line)`
    /// each, named and counted as `location` is. [`CPass::Closure`] keeps their declarations.
    pub sites: Vec<(String, u32)>,
    /// The unqualified name of the outermost template being instantiated when the bug shows.
    /// Non-template code instantiates it (often only at the end of the file, where no location
    /// says who); [`CPass::Closure`] keeps, of the main file's functions that name it, the
    /// statements that do.
    pub instantiated: Option<String>,
    /// The [`text_id`] of the text the locations were taken from. A text without line
    /// markers is located by its raw line numbers only when it is that text: once a pass has
    /// cut it, line 75 is some other line. `None`: always.
    pub located_in: Option<u64>,
}

/// An identity of `text` for [`Hints::located_in`].
pub fn text_id(text: &[u8]) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    text.hash(&mut h);
    h.finish()
}

/// One built-in C/C++ reduction pass.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum CPass {
    /// Keep only the main file's lines: [`CPass::Provenance`]'s first candidate on its own, one
    /// test before [`CPass::CrashCut`] (see [`default_pipeline`]).
    MainOnly,
    /// Cut the text after the bug's location (needs [`Hints::location`]).
    CrashCut,
    /// Keep the use-def closure of the bug's site (see `closure.rs`): one big cut that keeps
    /// every declaration the kept code names, so it stays valid; then coarser fallbacks.
    Closure,
    /// ddmin over the main file's statements and members at brace depths 1-6 (needs line
    /// markers): the user's code first, before the passes that walk the headers.
    MainChunks,
    /// Each main-file statement that uses a header cut down to one of its operands
    /// (`std::cout << v;` to `v;`), while the headers are still there (see `operands.rs`).
    MainOperands,
    /// Ask the compiler about the closure's over-approximation (see `closure/prune.rs`): for
    /// each name that pulls in the most, delete what the closure keeps only through it.
    Prune,
    /// Ask the compiler which kept classes can be declarations (see `closure/hollow.rs`): for
    /// each heaviest class definition, write it as a declaration and delete what only its
    /// body reached.
    Hollow,
    /// Keep only the main file's text (line markers), else the closure's cut, then ddmin over
    /// includes and declarations.
    Provenance,
    /// Empty every function body except the bug's one (needs [`Hints::function`]).
    FunctionFocus,
    /// Drop line markers and blank lines (all at once, or every header's text, or each marker
    /// that places nothing: one right before another of its file).
    Markers,
    /// ddmin over the statements/declarations at this brace depth (0 = top level).
    Chunks(u8),
    /// Unwrap each namespace: its braces, its `N::` qualifiers and `using namespace N;` go
    /// (see `unwrap.rs`).
    Namespaces,
    /// Inline each type alias, typedef and variable template into its uses and delete it.
    Aliases,
    /// Write a class used only as one class's base into that class and delete it.
    Bases,
    /// A class template declared without a body and specialized once with one: the
    /// specialization becomes the primary definition (libstdc++'s `enable_if` pattern).
    Specializations,
    /// A class or alias template's parameter instantiated with the one argument every use
    /// passes, or dropped when the template never mentions it, from the head and every use at
    /// once (see `params.rs`).
    TemplateParams,
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
    /// [`CPass::Rename`], `__names` too (for a user's script, which decides).
    RenameAll,
    /// Numbers become `0`, strings `""`, type parameters' `typename` `class`; a string of a
    /// concatenation (`"a" "b"`) is deleted.
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

impl CPass {
    /// A short, stable name for progress output.
    pub fn name(&self) -> &'static str {
        match self {
            CPass::MainOnly => "main-only",
            CPass::CrashCut => "crash-cut",
            CPass::Closure => "closure",
            CPass::Prune => "prune",
            CPass::Hollow => "hollow",
            CPass::MainChunks => "main-chunks",
            CPass::MainOperands => "main-operands",
            CPass::Provenance => "provenance",
            CPass::FunctionFocus => "function-focus",
            CPass::Markers => "markers",
            CPass::Chunks(d) => CHUNK_NAMES[usize::from(*d).min(CHUNK_NAMES.len() - 1)],
            CPass::Namespaces => "namespaces",
            CPass::Aliases => "aliases",
            CPass::Bases => "bases",
            CPass::Specializations => "specializations",
            CPass::TemplateParams => "template-params",
            CPass::Lines => "lines",
            CPass::Balanced => "balanced",
            CPass::Tokens => "tokens",
            CPass::Directives => "directives",
            CPass::DirectiveTokens => "directive-tokens",
            CPass::OneLine => "one-line",
            CPass::Rename => "rename",
            CPass::RenameAll => "rename-all",
            CPass::Literals => "literals",
            CPass::Normalise => "normalise",
        }
    }

    /// True if the pass changes only whitespace, so its candidates need not be shorter.
    pub fn only_whitespace(&self) -> bool {
        matches!(self, CPass::Normalise)
    }

    /// This pass with `hints`, as the driver runs it.
    pub fn with(self, hints: &Arc<Hints>) -> Arc<dyn Pass> {
        Arc::new(Hinted {
            pass: self,
            hints: hints.clone(),
        })
    }

    fn plan(&self, text: &[u8], hints: &Hints) -> Box<dyn Plan> {
        if crate::lex::too_big(text) {
            return Box::new(plan::Empty);
        }
        match self {
            CPass::MainOnly => guided::main_only(text),
            CPass::CrashCut => guided::crash_cut(text, hints),
            CPass::Closure => closure::closure(text, hints),
            CPass::Prune => closure::prune(text, hints),
            CPass::Hollow => closure::hollow(text, hints),
            CPass::MainChunks => guided::main_chunks(text),
            CPass::MainOperands => operands::main_operands(text),
            CPass::Provenance => guided::provenance(text, hints),
            CPass::FunctionFocus => guided::function_focus(text, hints),
            CPass::Markers => guided::markers(text),
            CPass::Chunks(d) => structure::chunks(text, u32::from(*d)),
            CPass::Namespaces => unwrap::namespaces(text),
            CPass::Aliases => unwrap::aliases(text),
            CPass::Bases => unwrap::bases(text),
            CPass::Specializations => specialize::specializations(text),
            CPass::TemplateParams => params::template_params(text),
            CPass::Lines => structure::lines(text),
            CPass::Balanced => structure::balanced(text),
            CPass::Tokens => structure::tokens(text),
            CPass::Directives => directives::directives_pass(text),
            CPass::DirectiveTokens => directives::directive_tokens(text),
            CPass::OneLine => directives::one_line(text),
            CPass::Rename => finish::rename(text),
            CPass::RenameAll => finish::rename_all(text),
            CPass::Literals => finish::literals(text),
            CPass::Normalise => layout::normalise(text),
        }
    }

    /// The candidates this pass would offer for `text` if every one of them were rejected, in
    /// order, each strictly shorter than `text` (for [`CPass::only_whitespace`] passes: each
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
    /// [`raw_pipeline`] runs (useful for tests).
    pub fn all() -> Vec<CPass> {
        let mut all = Vec::new();
        for phases in [default_passes(), raw_passes()] {
            for pass in phases.into_iter().flatten() {
                if !all.contains(&pass) {
                    all.push(pass);
                }
            }
        }
        all
    }
}

/// `pass`'s candidates for `text` without hints, as strings: what the passes' tests compare.
#[cfg(test)]
fn candidate_strings(pass: CPass, text: &str) -> Vec<String> {
    pass.candidates(text.as_bytes(), &Hints::default())
        .map(|c| String::from_utf8(c).unwrap())
        .collect()
}

/// A [`CPass`] with the hints of its run: what the driver sees.
#[derive(Debug)]
struct Hinted {
    pass: CPass,
    hints: Arc<Hints>,
}

impl Pass for Hinted {
    fn name(&self) -> &'static str {
        self.pass.name()
    }
    fn only_whitespace(&self) -> bool {
        self.pass.only_whitespace()
    }
    fn plan(&self, text: &[u8]) -> Box<dyn Plan> {
        self.pass.plan(text, &self.hints)
    }
}

/// A [`Pipeline`] of built-in passes, `first`, `main` and `last`, all with `hints`.
pub fn pipeline(first: &[CPass], main: &[CPass], last: &[CPass], hints: Hints) -> Pipeline {
    let hints = Arc::new(hints);
    let with = |v: &[CPass]| v.iter().map(|p| p.with(&hints)).collect();
    Pipeline {
        first: with(first),
        main: with(main),
        last: with(last),
    }
}

/// The default order's passes: `[first, main, last]`.
fn default_passes() -> [Vec<CPass>; 3] {
    use CPass::*;
    [
        // Main-only first: when the headers are not needed it is one quick
        // test to a few KB, and crash-cut's candidates, which differ from the input by the
        // few bytes after a crash near the end of the file, then run on that instead of
        // taking a full compile of the input each. When they are needed it is one failed
        // test, which with two or more jobs runs beside crash-cut's. Crash-cut still comes
        // before provenance and closure, whose cuts it can enable (a crash-on-valid whose
        // headers only the code after the crash uses).
        vec![
            MainOnly,
            CrashCut,
            Provenance,
            Closure,
            Prune,
            FunctionFocus,
            // The user's code first, then what it no longer uses (a `std::string` member
            // gone can leave all of <string> unused).
            MainChunks,
            // What main-chunks could not delete, cut to the operand the crash needs, so the
            // closure can drop the header the rest of the statement used.
            MainOperands,
            Closure,
            Prune,
            Hollow,
        ],
        vec![
            Markers,
            // Offers nothing on preprocessed text unless it has a `#pragma`.
            Directives,
            // Cheap when they find nothing (one plan, a few tests), and each success saves
            // the top-level ddmin many: what the last round removed may leave whole headers
            // unused.
            Closure,
            Hollow,
            Chunks(0),
            Prune,
            Chunks(1),
            Chunks(2),
            // Members gone from the kept classes leave what only they named unreachable.
            Closure,
            Chunks(3),
            Chunks(4),
            Chunks(6),
            Chunks(8),
            Lines,
            Balanced,
            // What no deletion can shorten: a chain of aliases each used by the next, the
            // braces and qualifiers of a namespace. Only on small texts (see `unwrap.rs`), and
            // after the deletions of lines and regions, which in a crash-on-invalid remove
            // what an inlined alias would copy into its uses.
            Namespaces,
            Aliases,
            Bases,
            Specializations,
            TemplateParams,
            // What lines, balanced and the unwrapping left unused, cut before the token pass
            // spends a test per token on it.
            Closure,
            Tokens,
        ],
        vec![Rename, Literals, Normalise],
    ]
}

/// The raw order's passes: `[first, main, last]`.
fn raw_passes() -> [Vec<CPass>; 3] {
    use CPass::*;
    let [first, mut main, _] = default_passes();
    main.push(DirectiveTokens);
    [first, main, vec![RenameAll, Literals, OneLine]]
}

/// The order for preprocessed C/C++ with a bug's [`Hints`]: `first` = main-only, crash-cut,
/// provenance, closure, prune, function-focus, main-chunks, main-operands, closure, prune,
/// hollow (once);
/// `main` = markers, directives, closure, hollow, top-level, prune, chunks-1, chunks-2, closure,
/// chunks-3, chunks-4, chunks-6, chunks-8, lines, balanced, namespaces, aliases, bases,
/// specializations, template-params, closure, tokens (repeated until a round removes
/// nothing); `last` = rename, literals, normalise (the readable layout), once.
pub fn default_pipeline(hints: Hints) -> Pipeline {
    let [first, main, last] = default_passes();
    pipeline(&first, &main, &last, hints)
}

/// For an interestingness script on raw C/C++ or preprocessed text: the default passes (the
/// guided ones offer little without hints, but provenance still cuts a preprocessed file to
/// its main file), directives reduced like code, and the C-Vise end state (the least
/// whitespace, one line apart from directives) instead of the readable layout.
pub fn raw_pipeline(hints: Hints) -> Pipeline {
    let [first, main, last] = raw_passes();
    pipeline(&first, &main, &last, hints)
}
