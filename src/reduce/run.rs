//! The reduction proper, once the start is known to reproduce: a pass of the parallel
//! reducer, the N-run check of its result with the plain replay command, and, when that
//! result does not verify, the back-off to the smallest accepted ancestor that does and a
//! second, stricter pass from there (`chain.rs`).

use std::time::Duration;

use reducers::{CancelToken, Options, Outcome, Stats};

use super::chain::{self, Chain};
use super::stage::Stage;
use super::trace::{self, Trace};
use super::verify::Verdict;
use super::{Note, ReduceError, Reduction};
use crate::case::fileio;

/// A reduction under way: what every pass of it shares, and the record it keeps.
pub(super) struct Run<'r, 'a> {
    pub stage: &'r Stage<'a>,
    /// Flags the test command adds to the replay command (`oracle::test_flags`).
    pub flags: Vec<String>,
    /// Runs of the start and of the result that must all crash the same way.
    pub runs: u32,
    /// The per-test timeout.
    pub timeout: Duration,
    pub rec: Reduction,
    pub trace: Trace,
    pub note: &'r mut dyn FnMut(Note<'_>),
}

/// Where a reduction ended: its smallest result that is known to reproduce, and how.
pub(super) struct Settled {
    pub result: Vec<u8>,
    pub verdict: Verdict,
    /// The reducer stopped before it was done (Ctrl-C, the budget).
    pub stopped: bool,
    /// What the back-off did, in a sentence, when there was one.
    pub backed_off: Option<String>,
}

impl Run<'_, '_> {
    /// The time limit of the checks of one text, which run it several times.
    fn long(&self) -> Duration {
        self.timeout * 2
    }

    /// One run of the reducer from `start`, candidates confirmed by `confirm` runs: every
    /// improvement is added to `chain`, written atomically and recorded (counting on from
    /// the record's tests and cache hits).
    pub fn pass(
        &mut self,
        start: &[u8],
        flags: &[String],
        confirm: u32,
        opts: &Options,
        chain: &mut Chain,
    ) -> Result<reducers::Reduction, ReduceError> {
        let Run {
            stage,
            timeout,
            rec,
            trace,
            note,
            ..
        } = self;
        let (stage, timeout) = (*stage, *timeout);
        let base = (rec.tests, rec.cache_hits);
        // A spare worker is of use only to a test with checks after its first run.
        let opts = &Options {
            spare_workers: stage.has_checks(confirm),
            ..opts.clone()
        };
        let test = |text: &[u8], cancel: &CancelToken| {
            let (off, hint) = (|| cancel.is_cancelled(), || cancel.hint());
            let spare = || cancel.has_spare();
            if stage.interesting(text, flags, confirm, timeout, &off, &hint, &spare) {
                Outcome::Interesting
            } else {
                Outcome::Uninteresting
            }
        };
        let mut improved = |best: &[u8], stats: &Stats, at| -> Result<(), ReduceError> {
            if let Some(w) = stage.witness.as_ref().filter(|w| w.accepted(best)) {
                // Not a rejected candidate: it stays accepted either way.
                w.late(stage.witness_run(&w.argv, best, timeout, &|| false));
            }
            chain.push(best);
            fileio::write(stage.dir, &stage.output_name, best)?;
            rec.bytes_after = best.len();
            rec.tests = base.0 + stats.tests;
            rec.cache_hits = base.1 + stats.cache_hits;
            rec.resume_at = Some(at);
            Ok(stage.save(rec)?)
        };
        let driven = trace::drive(
            start,
            opts,
            &test,
            &stage.stop,
            0,
            trace,
            Some(&stage.phases),
            &mut **note,
            &mut improved,
        );
        let fault = stage.oracle.faults.take();
        let result = match (driven, fault) {
            (Ok(result), None) => result,
            (Ok(_), Some(cause)) | (Err(cause), _) => return Err(stage.stopped_by(rec, cause)),
        };
        rec.tests = base.0 + result.stats.tests;
        rec.cache_hits = base.1 + result.stats.cache_hits;
        Ok(result)
    }

    /// Checks the first pass's result `runs` times with the plain replay command (an invalid
    /// reduction keeps the test flags only if it needs them) and, when it does not verify,
    /// backs off. Also after a stop that is not Ctrl-C (the budget): backing off to a
    /// verified ancestor is what makes the kept result a reproducer.
    pub fn settle(
        &mut self,
        first: reducers::Reduction,
        chain: &Chain,
        opts: &Options,
    ) -> Result<Settled, ReduceError> {
        let mut s = Settled {
            result: first.output,
            verdict: Verdict::default(),
            stopped: first.stats.stopped,
            backed_off: None,
        };
        if crate::interrupt::is_interrupted() {
            return Ok(s);
        }
        (self.note)(Note::Verifying);
        s.verdict = self
            .stage
            .check(&s.result, &self.flags, self.runs, false, self.long())?;
        if !s.verdict.verified() {
            self.back_off(&mut s, chain, opts)?;
        }
        Ok(s)
    }

    /// The result did not verify: goes on from the smallest accepted candidate that does,
    /// with a stricter test (N runs per candidate and, when validity is kept, the plain
    /// command the final check uses: no `-w`, since a candidate can crash with `-w` and not
    /// without it). When not even the start verifies, the smallest stays, not verified.
    fn back_off(
        &mut self,
        s: &mut Settled,
        chain: &Chain,
        opts: &Options,
    ) -> Result<(), ReduceError> {
        let (runs, long) = (self.runs, self.long());
        let why = format!(
            "the smallest result ({} B) reproduced {} with the replay command",
            s.result.len(),
            s.verdict.describe()
        );
        let Some((fallback, verdict)) = self.verified_ancestor(chain, &s.result)? else {
            s.verdict = self
                .stage
                .check(&s.result, &self.flags, runs, false, long)?;
            return Ok(());
        };
        (self.note)(Note::BackedOff {
            bytes: fallback.len(),
            why: &why,
        });
        let strict_flags = if self.stage.oracle.keep_valid {
            Vec::new()
        } else {
            self.flags.clone()
        };
        self.rec.bytes_after = fallback.len();
        self.stage.save(&self.rec)?;
        self.rec.resume_at = None;
        let fresh = Options {
            resume: None,
            ..opts.clone()
        };
        let mut chain = Chain::new(&fallback, chain::DEFAULT_CAP);
        let confirm = self.stage.confirms(runs);
        let second = self.pass(&fallback, &strict_flags, confirm, &fresh, &mut chain)?;
        s.stopped = second.stats.stopped;
        let mut said = format!(
            "{why}; fell back to the smallest accepted candidate that reproduces {} ({} B)",
            verdict.describe(),
            fallback.len()
        );
        let further = second.output.len() < fallback.len();
        (s.result, s.verdict) = (fallback, verdict);
        if further && !crate::interrupt::is_interrupted() {
            let v = self
                .stage
                .check(&second.output, &self.flags, runs, false, long)?;
            if v.verified() {
                said.push_str(&format!(
                    " and reduced it further to {} B with {runs} runs per candidate{}",
                    second.output.len(),
                    if strict_flags.is_empty() {
                        " and no -w"
                    } else {
                        ""
                    }
                ));
                (s.result, s.verdict) = (second.output, v);
            }
        } else if further {
            // Interrupted: the strict pass's best stays (it reproduced N times).
            s.result = second.output;
            s.verdict = Verdict::default();
        }
        s.backed_off = Some(said);
        Ok(())
    }

    /// The smallest text of `chain` other than `smallest` that verifies, with its verdict.
    fn verified_ancestor(
        &self,
        chain: &Chain,
        smallest: &[u8],
    ) -> Result<Option<(Vec<u8>, Verdict)>, ReduceError> {
        let mut chosen = None;
        let mut fail = None;
        let fallback = chain::back_off(chain.texts(), &|t| t == smallest, &mut |t| match self
            .stage
            .check(t, &self.flags, self.runs, true, self.long())
        {
            Ok(v) if v.verified() => {
                chosen = Some(v);
                true
            }
            Ok(_) => false,
            Err(e) => {
                fail.get_or_insert(e);
                false
            }
        })
        .map(<[u8]>::to_vec);
        match fail {
            Some(e) => Err(e),
            None => Ok(fallback.zip(chosen)),
        }
    }
}
