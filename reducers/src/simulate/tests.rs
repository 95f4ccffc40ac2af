//! The replays on small hand-made traces: what each rule of the driver's policy buys.
use super::*;

fn step(seq: u64, run: u64, base: u64, interesting: bool, cost: Option<f64>) -> Step {
    Step {
        seq,
        pass: "lines".into(),
        pass_run: run,
        base,
        parent: None,
        outcome: if interesting {
            Outcome::Interesting
        } else {
            Outcome::Uninteresting
        },
        cost,
        phases: None,
        edit: None,
    }
}

#[test]
fn one_worker_takes_the_sum_of_the_tests() {
    let path = vec![
        step(0, 0, 0, false, Some(1.0)),
        step(1, 0, 0, true, Some(2.0)),
        step(2, 0, 1, false, None),
        step(3, 1, 1, false, Some(0.5)),
    ];
    let p = simulate(&path, 1, 0.0);
    assert_eq!(p.wall_s, 3.5);
    assert_eq!((p.tests, p.wasted_tests), (3, 0));
    assert_eq!(simulate(&path, 1, 0.25).wall_s, 4.25);
}

#[test]
fn failures_run_side_by_side_and_work_after_a_success_is_wasted() {
    // Eight failures of 1 s, then a success, then (from the new text) four failures.
    let mut path: Vec<Step> = (0..8).map(|i| step(i, 0, 0, false, Some(1.0))).collect();
    path.push(step(8, 0, 0, true, Some(1.0)));
    path.extend((9..13).map(|i| step(i, 0, 1, false, Some(1.0))));
    let no_success = Policy {
        success: false,
        ..Policy::default()
    };
    let p = simulate_policy(&path, 4, 0.0, &no_success);
    // Batches: 0-3, 4-7, 8 with stand-ins 9-11 (wasted), then 9-12.
    assert_eq!(p.wall_s, 4.0);
    assert_eq!(p.wasted_tests, 3);
    assert_eq!(simulate(&path, 1, 0.0).wall_s, 13.0);
}

#[test]
fn the_next_pass_run_starts_while_the_last_tests_run() {
    let path = vec![
        step(0, 0, 0, false, Some(3.0)),
        step(1, 1, 0, false, Some(1.0)),
        step(2, 1, 0, false, Some(1.0)),
    ];
    assert_eq!(simulate(&path, 8, 0.0).wall_s, 3.0);
    assert_eq!(simulate_with(&path, 8, 0.0, true).wall_s, 4.0);
}

#[test]
fn cache_hits_that_fill_the_window_do_not_end_the_replay() {
    let mut path = vec![step(0, 0, 0, false, Some(1.0))];
    path.extend((1..11).map(|i| step(i, 0, 0, false, None)));
    path.push(step(11, 1, 0, false, Some(2.0)));
    for pass_barrier in [false, true] {
        let p = simulate_with(&path, 1, 0.0, pass_barrier);
        assert_eq!((p.wall_s, p.tests), (3.0, 2), "barrier {pass_barrier}");
    }
}

#[test]
fn without_success_speculation_the_levels_replay_is_the_window_replay() {
    // Pseudo-random paths: the level code with one level must follow the window rules.
    let mut x: u64 = 0x2545_f491_4f6c_dd1d;
    let mut rnd = move |n: u64| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x % n
    };
    for _ in 0..50 {
        let (mut base, mut run) = (0, 0);
        let mut path = Vec::new();
        for seq in 0..(20 + rnd(60)) {
            let interesting = rnd(6) == 0;
            let cost = (rnd(5) > 0).then(|| 0.5 + rnd(20) as f64 / 4.0);
            path.push(step(seq, run, base, interesting, cost));
            base += u64::from(interesting);
            run += u64::from(rnd(8) == 0);
        }
        let no_success = Policy {
            success: false,
            spare: false,
            ..Policy::default()
        };
        for w in [1, 2, 3, 8] {
            let a = window_replay(&path, w, 0.0, &no_success);
            let b = levels_replay(&path, w, 0.0, &no_success);
            assert_eq!(a, b, "workers {w}, path {path:?}");
            // Success speculation never loses a serial test, and with one worker it is
            // the serial run.
            let c = simulate(&path, w, 0.0);
            assert!(c.wall_s <= a.wall_s + 1e-9 || w > 1, "{c:?} {a:?}");
            if w == 1 {
                assert_eq!(c, a);
            }
        }
    }
}

#[test]
fn success_speculation_runs_a_chain_of_accepted_tests_side_by_side() {
    // Five accepted candidates in a row, each derived from the one before: failure
    // speculation runs them one after the other; success speculation all at once.
    let path: Vec<Step> = (0..5).map(|i| step(i, 0, i, true, Some(2.0))).collect();
    let old = simulate_with(&path, 64, 0.0, true);
    assert_eq!(old.wall_s, 10.0);
    // With 64 workers every level fits (a few stand-ins of failure speculation each).
    assert_eq!(simulate(&path, 64, 0.0).wall_s, 2.0);
    // With 8, the levels share them: still faster than one at a time.
    assert!(simulate(&path, 8, 0.0).wall_s < 10.0);
}

#[test]
fn a_known_success_behind_a_slow_front_gets_its_level_at_once() {
    // The front fails after 4 s; the candidate behind it is accepted after 1 s, and three
    // more accepted candidates follow from it. A chain of levels opens only on a front,
    // so the three would wait for the slow failure (done at 5 s); the tree opens a level
    // on the known success behind it at 1 s, and they are done before the front is.
    let mut path = vec![
        step(0, 0, 0, false, Some(4.0)),
        step(1, 0, 0, true, Some(1.0)),
    ];
    path.extend((2..5).map(|i| step(i, 0, i - 1, true, Some(1.0))));
    let p = simulate(&path, 16, 0.0);
    assert_eq!(p.wall_s, 4.0, "{p:?}");
    assert_eq!(simulate(&path, 1, 0.0).wall_s, 8.0);
}

#[test]
fn a_hinted_success_behind_a_slow_front_gets_its_level_before_it_ends() {
    // Three texts, each a slow failure (2 s) then the accepted candidate (1 s), which
    // hints after 0.25 s (its first compiler run crashed the right way). Without hints a
    // level opens on each accepted candidate when it ends (known success): the texts
    // start at 0, 1 and 2 s, and the last slow failure ends at 4 s. With them, at 0,
    // 0.25 and 0.5 s: done at 2.5 s. (With enough workers: with 16, the off-path levels,
    // charged the 2 s mean failure, hold every worker when the first hint comes.)
    let mut path = Vec::new();
    for k in 0..3 {
        path.push(step(2 * k, 0, k, false, Some(2.0)));
        let mut a = step(2 * k + 1, 0, k, true, Some(1.0));
        a.phases = Some(Phases {
            first: 0.25,
            second: None,
            third: Some(0.75),
            rejected: None,
        });
        path.push(a);
    }
    let no_spare = Policy {
        spare: false,
        ..Policy::default()
    };
    let no_hints = Policy {
        hints: false,
        ..no_spare
    };
    assert_eq!(simulate(&path, 1, 0.0).wall_s, 9.0);
    let without = simulate_policy(&path, 64, 0.0, &no_hints);
    assert_eq!(without.wall_s, 4.0, "{without:?}");
    let with = simulate_policy(&path, 64, 0.0, &no_spare);
    assert_eq!(with.wall_s, 2.5, "{with:?}");
    // A failure rejected in its first run does not hint.
    let mut s = step(0, 0, 0, false, Some(1.0));
    s.phases = Some(Phases {
        first: 1.0,
        second: None,
        third: None,
        rejected: Some(Phase::First),
    });
    assert_eq!(s.hint_after(), None);
}

#[test]
fn off_path_speculation_is_charged_the_passs_mean_failed_test() {
    // The front fails after 4 s; while it runs, one idle worker speculates on its
    // success (wasted, 1 s: the mean failure) and the other tests the next candidate.
    let path = vec![
        step(0, 0, 0, false, Some(4.0)),
        step(1, 0, 0, false, Some(1.0)),
        step(2, 0, 0, false, Some(1.0)),
    ];
    let no_spare = Policy {
        spare: false,
        ..Policy::default()
    };
    let p = simulate_policy(&path, 2, 0.0, &no_spare);
    assert_eq!(p.wall_s, 4.0);
    assert!(p.wasted_tests > 0, "{p:?}");
}

#[test]
fn a_spare_worker_runs_the_checks_beside_the_first_run() {
    // One accepted test: a first compiler run of 1 s, then 1 s of checks. One worker
    // runs them one after the other; a second one, with nothing else to test, is lent
    // to it and runs the checks beside the first run.
    let mut a = step(0, 0, 0, true, Some(2.0));
    a.phases = Some(Phases {
        first: 1.0,
        second: Some(0.5),
        third: Some(1.0),
        rejected: None,
    });
    let path = vec![a];
    assert_eq!(simulate(&path, 1, 0.0).wall_s, 2.0);
    assert_eq!(simulate(&path, 2, 0.0).wall_s, 1.0);
    let no_spare = Policy {
        spare: false,
        ..Policy::default()
    };
    assert_eq!(simulate_policy(&path, 2, 0.0, &no_spare).wall_s, 2.0);
    // With a dispatch latency, the checks too are shipped to the spare worker.
    assert_eq!(simulate(&path, 2, 0.5).wall_s, 1.5);
    // A failure rejected in its first run gains nothing from a loan.
    let mut f = step(0, 0, 0, false, Some(1.0));
    f.phases = Some(Phases {
        first: 1.0,
        second: None,
        third: None,
        rejected: Some(Phase::First),
    });
    assert_eq!(simulate(&[f], 2, 0.0).wall_s, 1.0);
}

#[test]
fn sequential_acceptance_adds_the_second_check_to_the_third() {
    let mut s = step(0, 0, 0, true, Some(3.5));
    s.phases = Some(Phases {
        first: 1.0,
        second: Some(1.0),
        third: Some(2.0),
        rejected: None,
    });
    assert_eq!(s.cost_under(true), Some(3.5));
    assert_eq!(s.cost_under(false), Some(4.5));
    let p = s.phases.as_mut().unwrap();
    p.rejected = Some(Phase::Second);
    assert_eq!(s.cost_under(false), Some(3.5));
    s.phases.as_mut().unwrap().rejected = Some(Phase::Third);
    assert_eq!(s.cost_under(false), Some(4.5));
}

#[test]
fn the_serial_path_follows_parent_links_past_speculation() {
    // 0 accepted; 1 (parent 0) speculated on success of 0 and accepted; 2 and 3 derive
    // from 4 (a failure: thrown away); 5 derives from 1.
    let mut t = vec![
        step(0, 0, 0, true, Some(1.0)),
        step(1, 0, 1, true, Some(1.0)),
        step(2, 0, 1, false, Some(1.0)),
        step(3, 0, 1, true, Some(1.0)),
        step(4, 0, 0, false, Some(1.0)),
        step(5, 0, 2, false, Some(1.0)),
    ];
    for (s, parent) in t
        .iter_mut()
        .zip([None, Some(0), Some(4), Some(4), None, Some(1)])
    {
        s.parent = parent;
    }
    let seqs: Vec<u64> = serial_path(&t).iter().map(|s| s.seq).collect();
    assert_eq!(seqs, [0, 1, 5]);
}

#[test]
fn the_serial_path_drops_wasted_and_cancelled_candidates() {
    let trace = vec![
        step(0, 0, 0, false, Some(1.0)),
        step(2, 0, 0, true, Some(1.0)),
        step(1, 0, 0, true, Some(1.0)),
        step(3, 0, 0, false, Some(1.0)),
        step(4, 0, 1, false, Some(1.0)),
    ];
    let seqs: Vec<u64> = serial_path(&trace).iter().map(|s| s.seq).collect();
    assert_eq!(seqs, [0, 1, 4]);
}
