//! `icepick ir`: a backend crash becomes the minimal IR and the one `llc`/`opt` command an
//! LLVM maintainer turns into a regression test.
//!
//! Why this exists: for a crash in a pass (middle-end `opt` passes, or codegen: ISel,
//! register allocation, AsmPrinter, "Cannot select"), upstream wants a few lines of IR and
//! one tool line, not C++. The stage gets the IR from the case's crashing job with the same
//! clang ([`emit`]: optimised IR and `llc` for codegen crashes, `-disable-llvm-passes` IR and
//! `opt` with the pipeline clang itself runs for middle-end crashes), names the pass
//! ([`pipeline`]: ddmin over the `opt` pipeline, cross-checked by `-opt-bisect-limit` in
//! [`bisect`]; the pretty stack for `llc`), reduces the IR
//! with `llvm-reduce` of the same LLVM whose interestingness test is icepick's own signature
//! oracle (`icepick ir-oracle`, [`oracle_main`]), then cuts what llvm-reduce leaves: the
//! target features (moved to `-mattr` and ddmin'd with the flags stage's [`crate::flags::ddmin`]),
//! the datalayout, and the tool's flags ([`reduce`]).
//!
//! "The same crash" across tools: the outer frames and, for `opt`, the pipeline text in the
//! pretty stack differ between clang and `llc`/`opt`, so the full signature id cannot match.
//! The check is the coarse identity without what the tool changes: kind, normalised message,
//! the innermost named frame (recursion frames for a stack overflow), and for `llc` the
//! legacy pass name too ([`crash_key`]).
//!
//! This module writes the case's `ir` section and `reduced.ll`; it does not render the
//! report (the CLI asks for that).

mod bisect;
mod cuts;
mod depth;
mod edits;
mod emit;
mod judge;
mod llvm_reduce;
mod metadata;
mod minimal;
mod nest;
mod numbered;
mod pipeline;
mod reduce;
mod start;
mod toolcmd;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::case::{Case, CaseError};
use crate::crash::{Crash, Signature, Symbolizer};

pub use emit::Tool;

/// The file the reduced IR is written to, inside the case.
pub const OUTPUT: &str = "reduced.ll";

pub use crate::case::ir::IrSection;

/// Why `icepick ir` could not give a reproducer. A crash before IR exists and a tool that does
/// not reproduce are answers, and say so in one line.
#[derive(Debug, thiserror::Error)]
pub enum IrError {
    #[error(transparent)]
    Case(#[from] CaseError),
    /// The crash is in the frontend: there is no IR to reduce.
    #[error("no IR: the crash is in {0}, before any IR exists")]
    Frontend(String),
    /// A tool of the compiler's LLVM is missing.
    #[error("no `{tool}` next to {compiler} (or `{tool}-{major}` on PATH): install the LLVM tools of that version")]
    NoTool {
        tool: String,
        compiler: String,
        major: String,
    },
    /// clang could not write the IR.
    #[error("clang could not emit the IR: {0}")]
    Emit(String),
    /// The tool on the IR does not crash the case's way.
    #[error("{tool} does not reproduce the crash: {why}")]
    NotReproduced { tool: String, why: String },
    #[error("{0}")]
    Io(String),
}

/// Only a bad case is the caller's fault at the command line: a frontend crash or a tool that
/// does not reproduce is `icepick ir`'s answer, which its command reports itself.
impl crate::error::ExitCoded for IrError {
    fn exit_code(&self) -> u8 {
        match self {
            IrError::Case(e) => crate::error::ExitCoded::exit_code(e),
            _ => crate::error::FAILED,
        }
    }
}

impl IrError {
    /// Exit 2: the case is not one this stage can work on.
    pub fn is_bad_input(&self) -> bool {
        match self {
            IrError::Case(e) => e.is_bad_input(),
            IrError::Frontend(_) => true,
            _ => false,
        }
    }
}

/// `map_err` for file I/O on `path`: the error names the path.
fn io(path: &Path) -> impl FnOnce(std::io::Error) -> IrError + '_ {
    move |e| IrError::Io(format!("{}: {e}", path.display()))
}

/// How to run the stage.
#[derive(Debug, Clone)]
pub struct Options {
    pub jobs: usize,
    /// Limit on one tool run.
    pub timeout: Duration,
    /// Limit on the llvm-reduce run.
    pub reduce_timeout: Duration,
    /// Final runs that must all crash the same way.
    pub verify_runs: u32,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            jobs: std::thread::available_parallelism().map_or(2, |n| n.get()),
            timeout: Duration::from_secs(120),
            reduce_timeout: Duration::from_secs(180),
            verify_runs: 3,
        }
    }
}

/// Where in clang the crash happened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Where {
    /// Before IR exists (parser, Sema, IR generation): the phase in words.
    Frontend(String),
    /// In the optimisation pipeline (new pass manager): `opt`.
    MiddleEnd,
    /// In codegen (legacy pass manager: ISel, RA, AsmPrinter): `llc`.
    Codegen,
}

/// Decides from the crash's pretty stack and message where it happened: the innermost
/// `Running pass '…'` (codegen's legacy pass manager quotes with `'`) or `Code generation`
/// entry means codegen, `Running pass "…"` or `Optimizer` the middle end; else the frontend.
pub fn where_of(crash: &Crash, signature: &Signature) -> Where {
    let mut at = None;
    for e in &crash.pretty_stack {
        let t = e.text.trim();
        if t.starts_with("Running pass '") || t == "Code generation" {
            at = Some(Where::Codegen);
        } else if t.starts_with("Running pass \"") || t == "Optimizer" {
            at = Some(Where::MiddleEnd);
        }
    }
    if let Some(w) = at {
        return w;
    }
    if signature.message.starts_with("Cannot select") {
        return Where::Codegen;
    }
    Where::Frontend(frontend_phase(crash, signature))
}

/// The frontend phase in words, for "no IR: the crash is in …".
fn frontend_phase(crash: &Crash, signature: &Signature) -> String {
    let top = signature.frames.first().map(String::as_str).unwrap_or("");
    let stack_says = |w: &str| {
        crash
            .pretty_stack
            .iter()
            .any(|e| e.text.to_ascii_lowercase().contains(w))
    };
    let with_frame = |what: &str| {
        if top.is_empty() {
            what.to_owned()
        } else {
            format!("{what} ({top})")
        }
    };
    if top.starts_with("clang::CodeGen::") || stack_says("llvm ir generation") {
        with_frame("IR generation")
    } else if top.starts_with("clang::Preprocessor") || top.starts_with("clang::Lexer") {
        with_frame("the preprocessor")
    } else if top.starts_with("clang::Sema")
        || top.starts_with("clang::Parser")
        || stack_says("parser")
    {
        with_frame("the parser")
    } else {
        with_frame("the frontend")
    }
}

/// The identity compared across clang and the tool (module doc).
pub fn crash_key(sig: &Signature, tool: Tool) -> String {
    let phase = match tool {
        Tool::Llc => sig.phase.as_str(),
        Tool::Opt => "",
    };
    format!(
        "{}|{}|{}|{}",
        sig.kind,
        sig.message,
        phase,
        sig.frames.first().map(String::as_str).unwrap_or("")
    )
}

/// What the `ir-oracle` subcommand is told (written as JSON next to the llvm-reduce run).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct OracleSpec {
    /// The tool's argv; the argument `{}` is replaced by the candidate file.
    pub argv: Vec<String>,
    pub key: String,
    pub tool: Tool,
    #[serde(default)]
    pub library_dirs: Vec<PathBuf>,
    pub timeout_secs: u64,
    /// For a stack overflow: run first with this stack (bytes); only a same crash there is
    /// run again with the inherited stack, which decides.
    #[serde(default)]
    pub stack_prefilter: Option<u64>,
    /// The tool symbolizes its own stack dumps (see `Judge::symbolize`).
    #[serde(default)]
    pub symbolize: bool,
    /// A stack overflow reduced shallow: every run gets this stack (bytes) and decides there.
    #[serde(default)]
    pub stack: Option<u64>,
}

/// `icepick ir-oracle SPEC FILE`: llvm-reduce's interestingness test. True when the tool
/// crashes on FILE with the spec's key.
pub fn oracle_main(spec: &Path, file: &Path) -> bool {
    reduce::count_oracle_run(spec);
    let Ok(text) = std::fs::read(spec) else {
        return false;
    };
    let Ok(spec) = serde_json::from_slice::<OracleSpec>(&text) else {
        return false;
    };
    let argv: Vec<String> = spec
        .argv
        .iter()
        .map(|a| {
            if a == "{}" {
                file.display().to_string()
            } else {
                a.clone()
            }
        })
        .collect();
    let sym = Symbolizer::new(spec.library_dirs.clone());
    let timeout = Duration::from_secs(spec.timeout_secs.max(1));
    let same = |stack| {
        emit::run_tool(&argv, None, timeout, stack, &sym, spec.symbolize)
            .is_some_and(|s| crash_key(&s, spec.tool) == spec.key)
    };
    match (spec.stack, spec.stack_prefilter) {
        (Some(stack), _) => same(Some(stack)),
        (None, Some(stack)) => same(Some(stack)) && same(None),
        (None, None) => same(None),
    }
}

/// One-line summary of a section.
pub fn summary(s: &IrSection) -> String {
    format!(
        "{} lines, {} B ({} B of IR before) in {} tests, {:.1} s, {}",
        s.lines,
        s.bytes,
        s.start_bytes,
        s.tests,
        s.seconds,
        if s.verified {
            format!("verified {} of {}", s.same, s.runs)
        } else {
            format!("NOT verified ({} of {})", s.same, s.runs)
        }
    )
}

/// Runs the stage on the case in `dir`: writes `reduced.ll` and the `ir` section.
pub fn ir_for_case(
    dir: &Path,
    opts: &Options,
    progress: &mut dyn FnMut(&str),
) -> Result<IrSection, IrError> {
    let started = Instant::now();
    let (mut case, _lock) = Case::load_for_writing(dir)?;
    // An llc/opt case is its own tool; a clang case's tool follows where the crash is.
    let tool = match case.llvm_tool() {
        Some("opt") => Tool::Opt,
        Some(_) => Tool::Llc,
        None => match where_of(&case.crash, &case.signature) {
            Where::Frontend(phase) => return Err(IrError::Frontend(phase)),
            Where::MiddleEnd => Tool::Opt,
            Where::Codegen => Tool::Llc,
        },
    };
    let mut section = reduce::run(dir, &case, tool, opts, progress)?;
    section.seconds = started.elapsed().as_secs_f64();
    case.ir = Some(serde_json::to_value(&section).expect("the section serialises"));
    case.save(dir)?;
    Ok(section)
}

#[cfg(test)]
mod tests;
