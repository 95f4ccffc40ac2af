//! A crash as a family, not a point. Some compilers crash on every run but not the same way
//! on every run (a use of freed memory faults wherever the freed block is touched next; a
//! recursion overflows at whatever depth the stack ends), and some crash only in some runs.
//! "The same crash" is then a rule over signatures, decided by the reruns: the most specific
//! rule that covers every crash the reruns saw (one signature; the coarse signature; the
//! fault and its innermost named frame; the fault and the compiler stage it happened in;
//! else any of the signatures seen). With the rule go the variants seen and how often the
//! compile crashed as the family does, its rate. Later stages test candidates against the
//! family, give a candidate as many runs as the rate says a miss needs to mean something, and
//! state the rate of the result.
//!
//! Pure: the runs are made elsewhere (capture), and this module only counts and judges.

use serde::{Deserialize, Serialize};

use super::{phase_as_printed, Crash, Signature};

/// Which crashes count as the case's own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FamilyRule {
    /// One signature: every crash seen had it.
    Signature,
    /// Kind, message, pass and innermost named frame (the coarse signature).
    Coarse,
    /// The same fault (a stack overflow is a segmentation fault) in the same innermost named
    /// frame, whatever the callers.
    TopFrame,
    /// The same fault in the same compiler stage: the pass that ran, else clang's innermost
    /// pretty-stack action with its names (`parsing function body 'f'`).
    Stage,
    /// Any of the signatures seen.
    Observed,
}

impl FamilyRule {
    /// The rule in words, for reports and messages.
    pub fn words(self) -> &'static str {
        match self {
            FamilyRule::Signature => "the same signature",
            FamilyRule::Coarse => "the same coarse signature (kind, message, pass, top frame)",
            FamilyRule::TopFrame => "the same fault in the same top frame",
            FamilyRule::Stage => "the same fault in the same compiler stage",
            FamilyRule::Observed => "any of the signatures seen",
        }
    }
}

/// One signature the reruns saw, and how often.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Variant {
    pub id: String,
    pub coarse_id: String,
    /// The kind as hashed (`SIGSEGV`, `stack_overflow` …).
    pub kind: String,
    /// The innermost hashed frame (empty when none).
    pub top_frame: String,
    /// The stage the [`FamilyRule::Stage`] rule compares (empty when the crash names none).
    pub stage: String,
    /// Runs that crashed with this signature.
    pub count: u32,
}

/// The crashes the reruns saw, the rule that says which crashes belong, and the rate.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CrashFamily {
    pub rule: FamilyRule,
    /// Variants, the most frequent first.
    pub variants: Vec<Variant>,
    /// Runs made, the first (the one that showed the crash) included.
    pub runs: u32,
    /// Runs that crashed as the family does.
    pub crashed: u32,
}

/// The chance a candidate may be wrongly called "not this crash" after all its tries
/// ([`CrashFamily::tries`]).
const MISS_RISK: f64 = 0.05;
/// The most runs one candidate gets.
pub const MAX_TRIES: u32 = 8;
/// Runs that measure a family whose first reruns disagreed, and that check a result of such a
/// family: enough to tell 1 in 10 from never.
pub const FAMILY_RUNS: u32 = 10;

/// What one crash is, as a family sees it.
pub struct Seen<'a> {
    pub signature: &'a Signature,
    pub stage: String,
}

impl<'a> Seen<'a> {
    pub fn new(crash: &Crash, signature: &'a Signature) -> Self {
        Seen {
            signature,
            stage: stage_of(crash, signature),
        }
    }
}

/// The stage a crash happened in: a pass by its name (the module it ran on is a file name,
/// which a reduction renames), else clang's innermost pretty-stack action as printed, its
/// source location dropped.
fn stage_of(crash: &Crash, signature: &Signature) -> String {
    match phase_as_printed(crash) {
        Some(p) if p.starts_with("Running pass") => signature.phase.clone(),
        Some(p) => p,
        None => signature.phase.clone(),
    }
}

/// Faults that are one fault: a stack overflow is a segmentation fault the frames explain,
/// and a use of freed memory shows as either.
fn fault_class(kind: &str) -> &str {
    match kind {
        "SIGSEGV" | "stack_overflow" | "SIGBUS" => "memory",
        k => k,
    }
}

impl CrashFamily {
    /// The family of one crash seen `runs` times out of `runs`: what a deterministic crash
    /// is, and what a case written before families existed means.
    pub fn single(seen: &Seen<'_>, runs: u32) -> Self {
        CrashFamily {
            rule: FamilyRule::Signature,
            variants: vec![variant(seen, runs)],
            runs,
            crashed: runs,
        }
    }

    /// The family of the crashes `seen` in `runs` runs (the runs that did not crash count
    /// against the rate only); `None` when nothing crashed. The rule is the most specific
    /// one that covers every crash seen.
    pub fn observe(seen: &[Seen<'_>], runs: u32) -> Option<Self> {
        let first = seen.first()?;
        let mut variants: Vec<Variant> = Vec::new();
        for s in seen {
            match variants.iter_mut().find(|v| v.id == s.signature.id) {
                Some(v) => v.count += 1,
                None => variants.push(variant(s, 1)),
            }
        }
        // Most frequent first; ties keep the order seen, so the first crash leads.
        variants.sort_by_key(|v| std::cmp::Reverse(v.count));
        let all = |same: &dyn Fn(&Variant) -> bool| variants.iter().all(same);
        let v0 = variant(first, 0);
        let rule = if all(&|v| v.id == v0.id) {
            FamilyRule::Signature
        } else if all(&|v| v.coarse_id == v0.coarse_id) {
            FamilyRule::Coarse
        } else if !v0.top_frame.is_empty()
            && all(&|v| same_fault(v, &v0) && v.top_frame == v0.top_frame)
        {
            FamilyRule::TopFrame
        } else if !v0.stage.is_empty() && all(&|v| same_fault(v, &v0) && v.stage == v0.stage) {
            FamilyRule::Stage
        } else {
            FamilyRule::Observed
        };
        Some(CrashFamily {
            rule,
            variants,
            runs: runs.max(seen.len() as u32),
            crashed: seen.len() as u32,
        })
    }

    /// The family with `seen` standing for every crash it counted: when a better view of the
    /// same runs (the crashing job run alone, with its stack) replaces the crash. A family of
    /// several signatures keeps them, `seen` added.
    pub fn seen_as(&self, seen: &Seen<'_>) -> Self {
        let mut f = self.clone();
        if self.is_one_signature() {
            f.variants = vec![variant(seen, self.crashed)];
        } else if !f.contains(seen) {
            f.variants.push(variant(seen, 0));
            f.rule = FamilyRule::Observed;
        }
        f
    }

    /// Whether a crash belongs to the family.
    pub fn contains(&self, seen: &Seen<'_>) -> bool {
        let s = seen.signature;
        let Some(lead) = self.variants.first() else {
            return false;
        };
        if self.variants.iter().any(|v| v.id == s.id) {
            return true;
        }
        let fault = fault_class(&s.kind) == fault_class(&lead.kind);
        match self.rule {
            FamilyRule::Signature | FamilyRule::Observed => false,
            FamilyRule::Coarse => s.coarse_id == lead.coarse_id,
            FamilyRule::TopFrame => fault && s.frames.first().is_some_and(|f| *f == lead.top_frame),
            FamilyRule::Stage => fault && !seen.stage.is_empty() && seen.stage == lead.stage,
        }
    }

    /// What the rule compares, when it is not a signature: the top frame or the stage.
    pub fn key(&self) -> Option<&str> {
        let lead = self.variants.first()?;
        match self.rule {
            FamilyRule::TopFrame => Some(&lead.top_frame),
            FamilyRule::Stage => Some(&lead.stage),
            _ => None,
        }
    }

    /// Whether every crash of the family has one signature (it may still come in some runs
    /// only: [`CrashFamily::is_deterministic`]).
    pub fn is_one_signature(&self) -> bool {
        self.rule == FamilyRule::Signature
    }

    /// Crashes on every run with one signature: what every check may take for granted.
    pub fn is_deterministic(&self) -> bool {
        self.is_one_signature() && self.crashed == self.runs
    }

    /// The share of runs that crashed as the family does.
    pub fn rate(&self) -> f64 {
        if self.runs == 0 {
            return 0.0;
        }
        f64::from(self.crashed) / f64::from(self.runs)
    }

    /// How many runs a candidate gets before "it did not crash as the family does" is
    /// believed: the fewest after which a compile crashing at the family's rate would have
    /// shown it with probability 1 − [`MISS_RISK`], at most [`MAX_TRIES`].
    pub fn tries(&self) -> u32 {
        let p = self.rate();
        if p >= 1.0 {
            return 1;
        }
        if p <= 0.0 {
            return MAX_TRIES;
        }
        let n = (MISS_RISK.ln() / (1.0 - p).ln()).ceil();
        (n as u32).clamp(1, MAX_TRIES)
    }

    /// Runs a result gets in its final check: the configured count for a deterministic
    /// crash, [`FAMILY_RUNS`] for any other, so its rate can be stated.
    pub fn check_runs(&self, configured: u32) -> u32 {
        if self.is_deterministic() {
            configured
        } else {
            configured.max(FAMILY_RUNS)
        }
    }

    /// How many of `runs` runs must crash as the family does for a text to keep it: every
    /// run for a deterministic crash; otherwise at least half the family's rate, and at
    /// least one.
    pub fn needed(&self, runs: u32) -> u32 {
        if self.is_deterministic() {
            return runs;
        }
        let half_rate = (self.rate() * f64::from(runs) / 2.0).ceil() as u32;
        half_rate.clamp(1, runs.max(1))
    }

    /// Whether `crashed` of `runs` keeps the family ([`CrashFamily::needed`]).
    pub fn keeps_rate(&self, crashed: u32, runs: u32) -> bool {
        runs > 0 && crashed >= self.needed(runs)
    }

    /// `crashes 7 of 10 runs; 3 signatures, same fault in the same compiler stage`: for
    /// messages and reports.
    pub fn describe(&self) -> String {
        let mut s = format!("crashes {} of {} runs", self.crashed, self.runs);
        if !self.is_one_signature() {
            s.push_str(&format!(
                "; {} signatures, {}",
                self.variants.len(),
                self.rule.words()
            ));
        }
        s
    }
}

fn same_fault(a: &Variant, b: &Variant) -> bool {
    fault_class(&a.kind) == fault_class(&b.kind)
}

fn variant(seen: &Seen<'_>, count: u32) -> Variant {
    let s = seen.signature;
    Variant {
        id: s.id.clone(),
        coarse_id: s.coarse_id.clone(),
        kind: s.kind.clone(),
        top_frame: s.frames.first().cloned().unwrap_or_default(),
        stage: seen.stage.clone(),
        count,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sig(id: &str, coarse: &str, kind: &str, top: &str) -> Signature {
        Signature {
            id: id.into(),
            coarse_id: coarse.into(),
            text: String::new(),
            kind: kind.into(),
            message: String::new(),
            phase: String::new(),
            frames: if top.is_empty() {
                vec![]
            } else {
                vec![top.into(), "caller".into()]
            },
            unnamed_frames: 0,
            weak: false,
        }
    }

    fn seen<'a>(s: &'a Signature, stage: &str) -> Seen<'a> {
        Seen {
            signature: s,
            stage: stage.into(),
        }
    }

    #[test]
    fn one_signature_in_every_run_is_deterministic() {
        let a = sig("a", "ca", "SIGSEGV", "f");
        let f = CrashFamily::observe(&[seen(&a, ""), seen(&a, ""), seen(&a, "")], 3).unwrap();
        assert_eq!(f.rule, FamilyRule::Signature);
        assert!(f.is_deterministic());
        assert_eq!(f.tries(), 1);
        assert_eq!(f.check_runs(3), 3);
        assert!(f.keeps_rate(3, 3) && !f.keeps_rate(2, 3));
        assert_eq!(f.describe(), "crashes 3 of 3 runs");
    }

    #[test]
    fn the_most_specific_rule_that_covers_every_crash_is_chosen() {
        let a = sig("a", "c", "SIGSEGV", "f");
        let b = sig("b", "c", "SIGSEGV", "f");
        let f = CrashFamily::observe(&[seen(&a, "s"), seen(&b, "s")], 2).unwrap();
        assert_eq!(f.rule, FamilyRule::Coarse);
        // Another message, same frame.
        let c = sig("c", "c2", "stack_overflow", "f");
        let f = CrashFamily::observe(&[seen(&a, "s"), seen(&c, "s")], 2).unwrap();
        assert_eq!(f.rule, FamilyRule::TopFrame);
        // Other frames, one stage: a null dereference in some runs, a recursion in others.
        let d = sig("d", "c3", "stack_overflow", "g");
        let f =
            CrashFamily::observe(&[seen(&a, "parsing 'f'"), seen(&d, "parsing 'f'")], 2).unwrap();
        assert_eq!(f.rule, FamilyRule::Stage);
        // An assertion and a segfault in one stage share no fault: only what was seen.
        let e = sig("e", "c4", "assert", "g");
        let f = CrashFamily::observe(&[seen(&a, "p"), seen(&e, "p")], 2).unwrap();
        assert_eq!(f.rule, FamilyRule::Observed);
    }

    #[test]
    fn membership_follows_the_rule() {
        let a = sig("a", "c", "SIGSEGV", "f");
        let d = sig("d", "c3", "stack_overflow", "g");
        let f =
            CrashFamily::observe(&[seen(&a, "parsing 'f'"), seen(&d, "parsing 'f'")], 2).unwrap();
        let new_variant = sig("n", "cn", "SIGSEGV", "h");
        assert!(f.contains(&seen(&new_variant, "parsing 'f'")));
        assert!(!f.contains(&seen(&new_variant, "parsing 'g'")));
        let abort = sig("x", "cx", "SIGABRT", "h");
        assert!(!f.contains(&seen(&abort, "parsing 'f'")));
        // A crash naming no stage is never in a stage family, unless it was seen.
        assert!(!f.contains(&seen(&new_variant, "")));
        assert!(f.contains(&seen(&a, "")));
        let one = CrashFamily::single(&seen(&a, ""), 3);
        assert!(one.contains(&seen(&a, "")));
        assert!(!one.contains(&seen(&sig("b", "c", "SIGSEGV", "f"), "")));
    }

    #[test]
    fn variants_are_counted_most_frequent_first() {
        let a = sig("a", "c", "SIGSEGV", "f");
        let b = sig("b", "c", "SIGSEGV", "f");
        let f = CrashFamily::observe(&[seen(&a, ""), seen(&b, ""), seen(&b, "")], 10).unwrap();
        assert_eq!(f.variants[0].id, "b");
        assert_eq!(f.variants[0].count, 2);
        assert_eq!((f.crashed, f.runs), (3, 10));
        assert!(CrashFamily::observe(&[], 10).is_none());
    }

    #[test]
    fn tries_grow_as_the_rate_falls() {
        let a = sig("a", "c", "SIGSEGV", "f");
        let at = |crashed: usize, runs| {
            let s: Vec<Seen> = (0..crashed).map(|_| seen(&a, "")).collect();
            CrashFamily::observe(&s, runs).unwrap()
        };
        assert_eq!(at(10, 10).tries(), 1);
        assert_eq!(at(9, 10).tries(), 2); // 0.1² = 1 %
        assert_eq!(at(7, 10).tries(), 3); // 0.3³ = 2.7 %
        assert_eq!(at(5, 10).tries(), 5); // 0.5⁵ = 3.1 %
        assert_eq!(at(1, 10).tries(), MAX_TRIES);
        // A flaky family is checked on FAMILY_RUNS and keeps half its rate.
        let f = at(6, 10);
        assert!(!f.is_deterministic());
        assert_eq!(f.check_runs(3), FAMILY_RUNS);
        assert!(f.keeps_rate(3, 10) && !f.keeps_rate(2, 10));
        assert!(at(1, 10).keeps_rate(1, 10) && !at(1, 10).keeps_rate(0, 10));
        assert_eq!(f.describe(), "crashes 6 of 10 runs");
    }
}
