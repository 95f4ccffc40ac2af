//! The driver against scripted, pure interestingness tests: fixed-order acceptance (same output
//! for any `jobs`), the cache, cancellation, the stop flag, the observer, and the guarantee that
//! the empty text is never tested. No test sleeps; the blocking ones spin on their cancel token.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use reducers::passes::{default_pipeline, pipeline, CPass, Hints};
use reducers::{reduce, CancelToken, Event, Options, Outcome};

const SAMPLE: &str = r#"# 1 "m.cpp"
# 1 "/usr/include/h.h" 1 3
namespace std { template <class T> struct vector { T *p; int size() const { return 0; } }; }
# 2 "m.cpp" 2
int helper(int a, int b) { return a * b + 17; }
struct Widget { int x; double y[4]; void poke(int k) { x += k; } };
static const char *name = "a long string literal";
int main() {
  Widget w;
  for (int i = 0; i < 10; i++) { w.poke(helper(i, 2)); }
  KEEP_A(w.x);
  if (w.x > 3) { KEEP_B(); }
  return 0;
}
"#;

fn balanced(t: &[u8]) -> bool {
    let mut depth = 0i64;
    for &b in t {
        depth += match b {
            b'{' => 1,
            b'}' => -1,
            _ => 0,
        };
        if depth < 0 {
            return false;
        }
    }
    depth == 0
}

fn contains(t: &[u8], s: &str) -> bool {
    t.windows(s.len()).any(|w| w == s.as_bytes())
}

/// Interesting iff both markers survive and braces balance.
fn oracle(t: &[u8], _: &CancelToken) -> Outcome {
    assert!(!t.is_empty(), "the empty text was tested");
    if contains(t, "KEEP_A") && contains(t, "KEEP_B") && balanced(t) {
        Outcome::Interesting
    } else {
        Outcome::Uninteresting
    }
}

fn opts(jobs: usize) -> Options {
    Options {
        jobs,
        ..Options::new(default_pipeline(Hints::default()))
    }
}

#[test]
fn same_output_for_any_jobs_and_observed_sizes_decrease() {
    let mut outputs = Vec::new();
    for jobs in [1, 2, 4, 7] {
        let mut sizes = vec![SAMPLE.len()];
        let r = reduce(SAMPLE.as_bytes(), &opts(jobs), &oracle, &mut |e| {
            if let Event::Improved { best, pass, .. } = e {
                assert!(!pass.is_empty());
                assert_eq!(oracle(best, &CancelToken::new()), Outcome::Interesting);
                sizes.push(best.len());
            }
        });
        assert!(sizes.windows(2).all(|w| w[1] < w[0]), "sizes {sizes:?}");
        assert_eq!(*sizes.last().unwrap(), r.output.len());
        assert_eq!(r.stats.bytes_now, r.output.len());
        assert_eq!(r.stats.bytes_before, SAMPLE.len());
        assert!(!r.stats.stopped);
        outputs.push(r.output);
    }
    assert!(outputs.windows(2).all(|w| w[0] == w[1]));
    let out = String::from_utf8(outputs.pop().unwrap()).unwrap();
    assert!(out.len() < 40, "{out:?}");
}

#[test]
fn cache_answers_repeated_candidates() {
    // Nothing but the input is interesting; the second `lines` pass sees the same text and
    // the same candidates as the first, so every one of them is a cache hit.
    let calls = AtomicU64::new(0);
    let test = |_: &[u8], _: &CancelToken| {
        calls.fetch_add(1, Ordering::Relaxed);
        Outcome::Uninteresting
    };
    let o = Options {
        jobs: 1,
        ..Options::new(pipeline(
            &[],
            &[CPass::Lines, CPass::Lines],
            &[],
            Hints::default(),
        ))
    };
    let r = reduce(SAMPLE.as_bytes(), &o, &test, &mut |_| {});
    assert_eq!(r.output, SAMPLE.as_bytes());
    assert!(r.stats.tests > 10);
    assert_eq!(r.stats.tests, calls.load(Ordering::Relaxed));
    assert_eq!(r.stats.cache_hits, r.stats.tests);
}

/// Spins until cancelled or a generous deadline passes; true if cancelled.
fn wait_for_cancel(c: &CancelToken) -> bool {
    let deadline = Instant::now() + Duration::from_secs(20);
    while Instant::now() < deadline {
        if c.is_cancelled() {
            return true;
        }
        std::thread::yield_now();
    }
    false
}

#[test]
fn later_tests_are_cancelled_when_an_earlier_candidate_wins() {
    // Lines pass, back half first: candidate 0 (drop the back half) is interesting at once;
    // the speculative ones after it that still contain the back half block until cancelled.
    let text: String = (0..16)
        .map(|i| {
            if i < 4 {
                format!("keep {i}\n")
            } else {
                format!("junk {i}\n")
            }
        })
        .collect();
    let released = AtomicU64::new(0);
    let blocked = AtomicU64::new(0);
    let test = |t: &[u8], c: &CancelToken| {
        let first_window = contains(t, "junk 15");
        if !first_window && contains(t, "keep 0") && contains(t, "keep 3") {
            // Answer only once a speculative test is running, so there is one to cancel.
            let deadline = Instant::now() + Duration::from_secs(20);
            while blocked.load(Ordering::SeqCst) == 0 && Instant::now() < deadline {
                std::thread::yield_now();
            }
            Outcome::Interesting
        } else if first_window {
            blocked.fetch_add(1, Ordering::SeqCst);
            if wait_for_cancel(c) {
                released.fetch_add(1, Ordering::Relaxed);
            }
            Outcome::Interesting // ignored: the result of a cancelled test is discarded
        } else {
            Outcome::Uninteresting
        }
    };
    let o = Options {
        jobs: 4,
        max_rounds: Some(1),
        ..Options::new(pipeline(&[], &[CPass::Lines], &[], Hints::default()))
    };
    let t0 = Instant::now();
    let r = reduce(text.as_bytes(), &o, &test, &mut |_| {});
    assert!(t0.elapsed() < Duration::from_secs(15));
    assert!(released.load(Ordering::Relaxed) > 0);
    assert!(r.stats.cancelled > 0);
    assert_eq!(r.output, b"keep 0\nkeep 3\n");
}

#[test]
fn stop_flag_returns_best_so_far_promptly() {
    let stop = Arc::new(AtomicBool::new(false));
    let calls = AtomicU64::new(0);
    let test = |t: &[u8], c: &CancelToken| {
        let n = calls.fetch_add(1, Ordering::Relaxed);
        if n < 3 {
            return oracle(t, c);
        }
        // Ctrl-C arrives while tests are running.
        stop.store(true, Ordering::Relaxed);
        wait_for_cancel(c);
        Outcome::Uninteresting
    };
    let o = Options {
        jobs: 2,
        stop: stop.clone(),
        ..Options::new(default_pipeline(Hints::default()))
    };
    let best = Mutex::new(SAMPLE.as_bytes().to_vec());
    let t0 = Instant::now();
    let r = reduce(SAMPLE.as_bytes(), &o, &test, &mut |e| {
        if let Event::Improved { best: b, .. } = e {
            *best.lock().unwrap() = b.to_vec();
        }
    });
    assert!(t0.elapsed() < Duration::from_secs(10));
    assert!(r.stats.stopped);
    assert_eq!(r.output, *best.lock().unwrap());
    assert_eq!(oracle(&r.output, &CancelToken::new()), Outcome::Interesting);
    assert!(calls.load(Ordering::Relaxed) <= 3 + 2);
}

#[test]
fn empty_input_is_returned_untested() {
    let r = reduce(
        b"",
        &opts(2),
        &|_: &[u8], _: &CancelToken| -> Outcome { panic!("tested") },
        &mut |_| {},
    );
    assert!(r.output.is_empty());
    assert_eq!(r.stats.tests, 0);
}

#[test]
fn everything_interesting_never_tests_the_empty_text() {
    let test = |t: &[u8], _: &CancelToken| {
        assert!(!t.is_empty());
        Outcome::Interesting
    };
    let r = reduce(SAMPLE.as_bytes(), &opts(3), &test, &mut |_| {});
    // What is left is a token or two, or the line marker the code was under (passes leave
    // markers before code to the markers pass, which cannot empty the text).
    let out = String::from_utf8_lossy(&r.output);
    assert!(
        !r.output.is_empty() && (r.output.len() <= 2 || out == "# 1 \"m.cpp\"\n"),
        "{out:?}"
    );
}

#[test]
fn progress_reports_pass_names_and_counts() {
    let mut passes = Vec::new();
    let mut last_tests = 0;
    let r = reduce(SAMPLE.as_bytes(), &opts(2), &oracle, &mut |e| {
        if let Event::Progress(s) = e {
            assert!(s.tests >= last_tests);
            last_tests = s.tests;
            if passes.last() != Some(&s.pass) {
                passes.push(s.pass);
            }
        }
    });
    assert_eq!(passes.first(), Some(&"main-only"));
    assert!(passes.contains(&"provenance") && passes.contains(&"normalise"));
    assert_eq!(r.stats.tests, last_tests);
    assert!(r.stats.candidates >= r.stats.tests + r.stats.cache_hits);
}

#[test]
#[should_panic(expected = "boom")]
fn a_panicking_test_is_resumed_on_the_callers_thread() {
    reduce(
        SAMPLE.as_bytes(),
        &opts(2),
        &|_: &[u8], _: &CancelToken| -> Outcome { panic!("boom") },
        &mut |_| {},
    );
}

/// The readable layout is the one candidate that may be longer than the current text: it is
/// accepted when the test passes and it is not longer than the input, and a layout alone does
/// not start another round.
#[test]
fn layout_may_grow_the_text_but_never_beyond_the_input() {
    let test = |t: &[u8], _: &CancelToken| {
        if contains(t, "return 1;") {
            Outcome::Interesting
        } else {
            Outcome::Uninteresting
        }
    };
    let opts = Options {
        jobs: 2,
        ..Options::new(pipeline(
            &[],
            &[CPass::Markers],
            &[CPass::Normalise],
            Hints::default(),
        ))
    };
    let laid_out = "int f() {\n  return 1;\n}\n";
    let input = "int f(){return 1;}\n\n\n\n\n\n\n\n\n\n";
    let mut sizes = Vec::new();
    let r = reduce(input.as_bytes(), &opts, &test, &mut |e| {
        if let Event::Improved { best, pass, .. } = e {
            sizes.push((pass.to_string(), best.len()));
        }
    });
    assert_eq!(String::from_utf8_lossy(&r.output), laid_out);
    assert_eq!(
        sizes,
        [("markers".to_string(), 19), ("normalise".to_string(), 24)]
    );
    // Round 1 removes the blank lines, round 2 finds nothing; the layout starts no round 3.
    assert_eq!(r.stats.rounds, 2, "a layout alone started another round");
    // Without the blank lines the input itself is shorter than its layout: left as it is.
    let tight = "int f(){return 1;}\n";
    let r = reduce(tight.as_bytes(), &opts, &test, &mut |_| {});
    assert_eq!(r.output, tight.as_bytes());
}

#[test]
fn every_hint_reaches_the_driver_and_a_plain_token_ignores_it() {
    CancelToken::new().hint();
    for jobs in [1, 2, 4] {
        let sent = AtomicU64::new(0);
        let test = |t: &[u8], c: &CancelToken| {
            let o = oracle(t, c);
            if o == Outcome::Interesting {
                sent.fetch_add(1, Ordering::SeqCst);
                c.hint();
                c.hint();
            }
            o
        };
        let r = reduce(SAMPLE.as_bytes(), &opts(jobs), &test, &mut |_| {});
        let serial = reduce(SAMPLE.as_bytes(), &opts(1), &oracle, &mut |_| {});
        assert_eq!(r.output, serial.output, "jobs {jobs}");
        assert!(r.stats.improvements > 0);
        // Once per test, however often it calls.
        assert_eq!(r.stats.hints, sent.load(Ordering::SeqCst), "jobs {jobs}");
        assert!(r.stats.hints > 0, "jobs {jobs}");
    }
}

/// With 8 workers and a short input, workers often have nothing better to do than run a
/// running test's checks beside its first run (with 2, a new candidate nearly always wins).
#[test]
fn spare_workers_are_lent_to_running_tests_and_keep_the_serial_output() {
    let serial = reduce(SAMPLE.as_bytes(), &opts(1), &oracle, &mut |_| {});
    let seen = AtomicU64::new(0);
    let test = |t: &[u8], c: &CancelToken| {
        // A first run, then the checks: beside it once a spare worker is lent.
        for _ in 0..10 {
            std::thread::sleep(Duration::from_millis(1));
        }
        if c.has_spare() {
            seen.fetch_add(1, Ordering::SeqCst);
        } else if oracle(t, c) == Outcome::Interesting {
            c.hint();
            std::thread::sleep(Duration::from_millis(10));
        }
        oracle(t, c)
    };
    let o = Options {
        spare_workers: true,
        ..opts(8)
    };
    let r = reduce(SAMPLE.as_bytes(), &o, &test, &mut |_| {});
    assert_eq!(r.output, serial.output);
    assert!(r.stats.lent > 0, "no spare worker was lent: {:?}", r.stats);
    // A loan reaches the test unless it came after the test's last look.
    let seen = seen.load(Ordering::SeqCst);
    assert!(
        seen > 0 && seen <= r.stats.lent,
        "{seen} of {}",
        r.stats.lent
    );
    let plain = reduce(SAMPLE.as_bytes(), &opts(8), &test, &mut |_| {});
    assert_eq!(plain.output, serial.output);
    assert_eq!(
        plain.stats.lent, 0,
        "a test that did not ask for spare workers got one"
    );
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 24, ..Default::default() })]
    /// The driver speculates across passes (a pass's successors are generated while its tests
    /// run); whatever the text, the markers the test wants and the timing, the output is the
    /// serial one for any `jobs`.
    #[test]
    fn output_is_the_serial_one_for_any_jobs_with_cross_pass_speculation(
        words in proptest::collection::vec("[a-e]{1,3}|[{}();,]", 4..60),
        want in proptest::collection::vec("[a-e]", 1..3),
        jobs in 2usize..9,
        slow in 0u8..4,
    ) {
        let text = words.join(" ");
        let oracle = |t: &[u8], _: &CancelToken| {
            // Uneven test times shuffle the order in which results come in.
            if t.len() % 4 == slow as usize {
                std::thread::sleep(Duration::from_micros(300));
            }
            let s = String::from_utf8_lossy(t);
            if want.iter().all(|w| s.contains(w.as_str())) && balanced(t) {
                Outcome::Interesting
            } else {
                Outcome::Uninteresting
            }
        };
        let serial = reduce(text.as_bytes(), &opts(1), &oracle, &mut |_| {});
        let parallel = reduce(text.as_bytes(), &opts(jobs), &oracle, &mut |_| {});
        proptest::prop_assert_eq!(serial.output, parallel.output);
        proptest::prop_assert_eq!(serial.stats.improvements, parallel.stats.improvements);
        proptest::prop_assert_eq!(serial.stats.rounds, parallel.stats.rounds);
    }
}

/// Which tests of [`speculation_keeps_the_serial_output`] are slow.
#[derive(Clone, Copy, Debug)]
enum Slow {
    /// The interesting ones (as with clang: a crash runs it further), and some others.
    Successes,
    /// The failures: a known success then sits behind a running front, and the speculation
    /// tree opens levels on it all the time.
    Failures,
    /// The interesting ones and some others, and each of them hints that it is likely
    /// interesting before it sleeps ([`CancelToken::hint`]): levels open on running slots
    /// behind the front, some on wrong hints.
    Hinted,
}

/// Reduces `text` (a test wanting every word of `want`, balanced) with jobs 1 and then with
/// each of `runs` (jobs, success speculation): the accepted sequence, the output and the
/// rounds must be the serial ones.
fn speculation_keeps_the_serial_output(
    text: &str,
    want: &[String],
    slow: Slow,
    one_in_three: u8,
    runs: &[(usize, bool)],
) -> Result<(), proptest::test_runner::TestCaseError> {
    let oracle = |t: &[u8], token: &CancelToken| {
        let s = String::from_utf8_lossy(t);
        let yes = want.iter().all(|w| s.contains(w.as_str())) && balanced(t);
        let other = t.len() % 3 == one_in_three as usize;
        let sleep = match slow {
            Slow::Successes => yes || other,
            Slow::Failures => !yes && !other,
            Slow::Hinted => {
                if yes || other {
                    token.hint();
                }
                yes || other
            }
        };
        // A test lent a spare worker runs its checks side by side: it is quicker.
        if sleep && !token.has_spare() {
            std::thread::sleep(Duration::from_micros(500));
        }
        if yes {
            Outcome::Interesting
        } else {
            Outcome::Uninteresting
        }
    };
    let run = |jobs: usize, success: bool| {
        let o = Options {
            jobs,
            success_speculation: success,
            spare_workers: jobs % 2 == 0,
            ..Options::new(default_pipeline(Hints::default()))
        };
        let mut accepted = Vec::new();
        let r = reduce(text.as_bytes(), &o, &oracle, &mut |e| {
            if let Event::Improved { best, .. } = e {
                accepted.push(best.to_vec());
            }
        });
        (r.output, accepted, r.stats.rounds)
    };
    let serial = run(1, true);
    for &(jobs, success) in runs {
        let other = run(jobs, success);
        proptest::prop_assert_eq!(&serial, &other, "jobs {} success {}", jobs, success);
    }
    Ok(())
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 16, ..Default::default() })]

    /// Success speculation (idle workers test what follows a candidate if it is accepted)
    /// keeps the serial result, with it and without it, on random texts and tests whose costs
    /// vary by text.
    #[test]
    fn success_speculation_gives_the_serial_output_for_jobs_1_2_8(
        words in proptest::collection::vec("[a-e]{1,3}|[{}();,]", 4..80),
        want in proptest::collection::vec("[a-e]", 1..3),
        slow in 0u8..3,
    ) {
        speculation_keeps_the_serial_output(
            &words.join(" "), &want, Slow::Successes, slow, &[(2, true), (8, true), (8, false)],
        )?;
    }

    /// The speculation tree opens levels on known successes *behind* a running front: here
    /// failures are the slow tests and successes the quick ones. The accepted sequence and
    /// the output stay the serial ones for jobs 2, 3 and 8.
    #[test]
    fn a_tree_of_levels_on_successes_behind_the_front_gives_the_serial_output(
        words in proptest::collection::vec("[a-e]{1,3}|[{}();,]", 4..80),
        want in proptest::collection::vec("[a-e]", 1..3),
        slow in 0u8..3,
    ) {
        speculation_keeps_the_serial_output(
            &words.join(" "), &want, Slow::Failures, slow, &[(2, true), (3, true), (8, true)],
        )?;
    }

    /// Tests that hint they are likely interesting (rightly, and wrongly for some failures)
    /// get levels opened on them while they run: the accepted sequence and the output stay
    /// the serial ones for jobs 2, 3 and 8.
    #[test]
    fn hints_from_running_tests_keep_the_serial_output(
        words in proptest::collection::vec("[a-e]{1,3}|[{}();,]", 4..80),
        want in proptest::collection::vec("[a-e]", 1..3),
        slow in 0u8..3,
    ) {
        speculation_keeps_the_serial_output(
            &words.join(" "), &want, Slow::Hinted, slow, &[(2, true), (3, true), (8, true)],
        )?;
    }
}

#[test]
fn a_run_resumed_from_its_last_improvement_ends_where_an_unbroken_run_ends() {
    let whole = reduce(SAMPLE.as_bytes(), &opts(1), &oracle, &mut |_| {});
    let tests_whole = whole.stats.tests + whole.stats.cache_hits;
    // Stop after the 3rd improvement, keeping that text and where the run stood.
    for stop_after in [1u64, 3, 5] {
        let o = opts(1);
        let (mut kept, mut at, mut seen) = (None, None, 0u64);
        let stop = o.stop.clone();
        let first = reduce(SAMPLE.as_bytes(), &o, &oracle, &mut |e| {
            if let Event::Improved { best, resume, .. } = e {
                seen += 1;
                if seen <= stop_after {
                    kept = Some(best.to_vec());
                    at = Some(resume);
                }
                if seen == stop_after {
                    stop.store(true, Ordering::SeqCst);
                }
            }
        });
        assert!(first.stats.stopped);
        let resumed = Options {
            resume: at,
            ..opts(1)
        };
        let text = kept.expect("an improvement");
        let second = reduce(&text, &resumed, &oracle, &mut |_| {});
        assert_eq!(second.output, whole.output, "stopped after {stop_after}");
        // One job, so the run is serial: continuing answers exactly the candidates the
        // unbroken run answered after that point, nothing before it again (by a test or, for
        // a text the unbroken run had seen, from its cache).
        let answered = |s: &reducers::Stats| s.tests + s.cache_hits;
        assert_eq!(
            answered(&first.stats) + answered(&second.stats),
            tests_whole,
            "stopped after {stop_after}"
        );
    }
    // A position the pipeline does not have: the run starts over and still ends the same.
    let bogus = Options {
        resume: Some(reducers::Resume {
            phase: 1,
            pass: 999,
            rounds: 1,
            round_improved: false,
            cursor: [0, 0, 0],
        }),
        ..opts(1)
    };
    assert_eq!(
        reduce(SAMPLE.as_bytes(), &bogus, &oracle, &mut |_| {}).output,
        whole.output
    );
}
