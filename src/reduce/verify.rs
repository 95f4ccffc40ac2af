//! The N-run check of a reduced file with the case's plain replay command: a result counts
//! as verified only when every run gives the case's signature (and, when validity is kept,
//! zero source errors without `-w`). A run is a fresh process each time, with ASLR on, so a
//! crash that depends on memory layout shows up as k of n. The runner is passed in, so the
//! counting is pure and unit-tested.

use super::oracle::Judged;

/// What the check saw.
#[derive(Debug, Clone, PartialEq, Default)]
pub(super) struct Verdict {
    /// Runs made.
    pub runs: u32,
    /// Runs that crashed the same way (and validly, when validity is kept).
    pub same: u32,
    /// Runs of them that must crash so for the text to keep the case's crash (all of them
    /// for a deterministic crash; fewer for a crash that comes in some runs only).
    pub needed: u32,
    /// Source errors clang printed in the first run that gave the signature (0 if none did).
    pub errors: u32,
    /// The first source error of that run, for messages.
    pub first_error: Option<String>,
    /// Flags the result needs on top of the plain replay command (invalid results only).
    pub extra: Vec<String>,
}

impl Verdict {
    /// N of N for a deterministic crash, else at least [`Verdict::needed`].
    pub fn verified(&self) -> bool {
        self.runs > 0 && self.same >= self.needed.max(1)
    }

    /// `3 of 3`, `2 of 3 (the others with 4 source errors)`: for messages.
    pub fn describe(&self) -> String {
        let mut s = format!("{} of {}", self.same, self.runs);
        if self.errors > 0 && self.same < self.runs {
            s.push_str(&format!(
                " (with {} source error{} before the crash{})",
                self.errors,
                if self.errors == 1 { "" } else { "s" },
                self.first_error
                    .as_deref()
                    .map(|e| format!(": {e}"))
                    .unwrap_or_default()
            ));
        }
        s
    }
}

/// How to check.
pub(super) struct Check<'a> {
    /// The replay command on the file to check.
    pub plain: &'a [String],
    /// The same with the test flags; tried when the plain command does not crash the same
    /// way and validity is not kept (e.g. `-ferror-limit=0` is needed).
    pub with_flags: Option<(&'a [String], &'a [String])>,
    /// Validity is kept: a run with source errors does not count.
    pub keep_valid: bool,
    pub runs: u32,
    /// Runs that must count for the text to verify ([`crate::crash::CrashFamily::needed`]).
    pub needed: u32,
    /// Stop once the text can no longer verify (back-off candidates: only the verdict
    /// matters).
    pub stop_early: bool,
}

/// Runs `check.runs` checks with `run` (argv -> what the crash was, `None` when none).
pub(super) fn verify(
    check: &Check<'_>,
    run: &mut dyn FnMut(&[String]) -> Option<Judged>,
) -> Verdict {
    let counts =
        |j: &Option<Judged>| matches!(j, Some(j) if j.same && (!check.keep_valid || j.errors == 0));
    let mut v = Verdict {
        needed: check.needed,
        ..Verdict::default()
    };
    let mut argv = check.plain;
    let mut seen_signature = false;
    let mut note = |v: &mut Verdict, j: &Option<Judged>| {
        if let Some(j) = j.as_ref().filter(|j| j.same && !seen_signature) {
            seen_signature = true;
            v.errors = j.errors;
            v.first_error = j.first_error.clone();
        }
    };
    for k in 0..check.runs {
        v.runs += 1;
        let mut j = run(argv);
        if k == 0 && !counts(&j) && !check.keep_valid {
            if let Some((flagged, flags)) = check.with_flags {
                let jf = run(flagged);
                if counts(&jf) {
                    // The plain command once more before the flags are taken as needed: a
                    // crash that missed one run by chance needs no flags, and the result's
                    // replay command should not carry them for nothing.
                    let again = run(check.plain);
                    if counts(&again) {
                        j = again;
                    } else {
                        argv = flagged;
                        v.extra = flags.to_vec();
                        j = jf;
                    }
                }
            }
        }
        note(&mut v, &j);
        if counts(&j) {
            v.same += 1;
        } else if check.stop_early && v.same + (check.runs - v.runs) < check.needed {
            break;
        }
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    fn crash(same: bool, errors: u32) -> Option<Judged> {
        Some(Judged {
            same,
            errors,
            first_error: (errors > 0).then(|| "f.ii:1:1: error: x".to_string()),
        })
    }

    fn argv(s: &str) -> Vec<String> {
        vec![s.to_string()]
    }

    /// A 3-run check; `flagged` gives the command with the test flags and those flags.
    fn three<'a>(
        plain: &'a [String],
        flagged: Option<(&'a [String], &'a [String])>,
        keep_valid: bool,
        stop_early: bool,
    ) -> Check<'a> {
        Check {
            plain,
            with_flags: flagged,
            keep_valid,
            runs: 3,
            needed: 3,
            stop_early,
        }
    }

    #[test]
    fn three_of_three_is_verified_and_two_of_three_is_not() {
        let plain = argv("plain");
        let check = three(&plain, None, true, false);
        let v = verify(&check, &mut |_| crash(true, 0));
        assert!(v.verified());
        assert_eq!((v.same, v.runs), (3, 3));
        let mut outcomes = vec![crash(true, 0), None, crash(true, 0)].into_iter();
        let v = verify(&check, &mut |_| outcomes.next().unwrap());
        assert!(!v.verified());
        assert_eq!(v.describe(), "2 of 3");
    }

    #[test]
    fn with_validity_kept_errors_make_a_run_not_count() {
        let plain = argv("plain");
        let flagged = argv("flagged");
        let flags = argv("-ferror-limit=0");
        let check = three(&plain, Some((&flagged, &flags)), true, false);
        let mut argvs = Vec::new();
        let v = verify(&check, &mut |a| {
            argvs.push(a[0].clone());
            crash(true, 2)
        });
        assert_eq!((v.same, v.runs, v.errors), (0, 3, 2));
        assert!(v.describe().starts_with("0 of 3 (with 2 source errors"));
        // Kept validity never falls back to the test flags.
        assert!(argvs.iter().all(|a| a == "plain"), "{argvs:?}");
    }

    #[test]
    fn an_invalid_result_may_need_the_test_flags() {
        let plain = argv("plain");
        let flagged = argv("flagged");
        let flags = argv("-ferror-limit=0");
        let check = three(&plain, Some((&flagged, &flags)), false, false);
        let v = verify(&check, &mut |a| {
            if a[0] == "flagged" {
                crash(true, 25)
            } else {
                None
            }
        });
        assert!(v.verified(), "{v:?}");
        assert_eq!(v.extra, ["-ferror-limit=0"]);
        assert_eq!(v.errors, 25);
    }

    #[test]
    fn a_crash_of_some_runs_verifies_at_its_needed_count() {
        let plain = argv("plain");
        let check = Check {
            needed: 4,
            runs: 10,
            ..three(&plain, None, false, true)
        };
        // Misses early are fine while the needed count can still be reached.
        let mut k = 0;
        let v = verify(&check, &mut |_| {
            k += 1;
            crash(k % 2 == 0, 0)
        });
        assert_eq!((v.same, v.runs), (5, 10));
        assert!(v.verified());
        // Stops as soon as four can no longer be reached: after 7 misses.
        let v = verify(&check, &mut |_| None);
        assert_eq!((v.same, v.runs), (0, 7));
        assert!(!v.verified());
    }

    #[test]
    fn a_plain_run_that_missed_by_chance_needs_no_flags() {
        let plain = argv("plain");
        let flagged = argv("flagged");
        let flags = argv("-ferror-limit=0");
        let check = three(&plain, Some((&flagged, &flags)), false, false);
        let mut plain_runs = 0;
        let v = verify(&check, &mut |a| {
            if a[0] == "flagged" {
                return crash(true, 0);
            }
            plain_runs += 1;
            // The first plain run misses; every later one crashes.
            if plain_runs > 1 {
                crash(true, 0)
            } else {
                None
            }
        });
        assert!(v.verified(), "{v:?}");
        assert!(v.extra.is_empty(), "{v:?}");
        assert_eq!((v.same, v.runs), (3, 3));
    }

    #[test]
    fn stop_early_ends_at_the_first_miss() {
        let plain = argv("plain");
        let check = three(&plain, None, false, true);
        let mut outcomes = vec![crash(true, 0), crash(false, 0), crash(true, 0)].into_iter();
        let v = verify(&check, &mut |_| outcomes.next().unwrap());
        assert_eq!((v.same, v.runs), (1, 2));
    }
}
