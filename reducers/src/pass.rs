//! What the driver knows of a pass: a name, whether it only changes whitespace, and a
//! [`Plan`] of candidates for a text. The driver (`engine.rs`) and the pipeline's order
//! (`schedule.rs`) see passes only through this trait, so a caller can add passes for another
//! language, or wrap the C/C++ ones (the `passes` module), without touching the driver.

use std::fmt;
use std::sync::Arc;

use crate::plan::Plan;

/// One reduction pass: turns a text into a lazy schedule of smaller candidates.
///
/// The driver builds a plan for the current text whenever the pass starts and again after every
/// accepted candidate (resuming at the accepted candidate's [`Step::on_success`] cursor), so a
/// plan must depend on the text alone: the same text must give the same candidates. Every
/// candidate must be strictly shorter than the text, except for a pass whose
/// [`only_whitespace`](Pass::only_whitespace) is true (its candidates are kept when they differ
/// from the text and are no longer than the driver's input).
///
/// [`Step::on_success`]: crate::plan::Step::on_success
pub trait Pass: Send + Sync + fmt::Debug {
    /// A short, stable name for progress output, traces and the driver's statistics (which
    /// rate passes by name).
    fn name(&self) -> &'static str;

    /// True if the pass changes only whitespace, so its candidates need not be shorter. A
    /// round in which only such a pass improved the text is not a reason for another round.
    fn only_whitespace(&self) -> bool {
        false
    }

    /// The candidates for `text`, in the order the driver should try them.
    fn plan(&self, text: &[u8]) -> Box<dyn Plan>;
}

/// Which passes run, in three phases: `first` once at the start, `main` repeated until a round
/// removes nothing, then `last`; if `last` improved anything, `main` and `last` run again.
#[derive(Clone, Debug, Default)]
pub struct Pipeline {
    /// Run once, at the start.
    pub first: Vec<Arc<dyn Pass>>,
    /// Run in rounds until a round improves nothing.
    pub main: Vec<Arc<dyn Pass>>,
    /// Run after the rounds; another round follows when one of them improved the text.
    pub last: Vec<Arc<dyn Pass>>,
}

impl Pipeline {
    /// The names of the passes of each phase, `[first, main, last]` (to compare pipelines and
    /// to show them).
    pub fn names(&self) -> [Vec<&'static str>; 3] {
        let names = |v: &[Arc<dyn Pass>]| v.iter().map(|p| p.name()).collect();
        [names(&self.first), names(&self.main), names(&self.last)]
    }
}
