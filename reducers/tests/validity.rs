//! The validity-keeping first cut (`closure`) against a real compiler: a 1.9 MB libstdc++
//! translation unit that compiles without errors must stay error-free under every accepted
//! candidate. The oracle runs clang-16 `-fsyntax-only` (it needs no crash: the question here is
//! only which big cuts keep the code valid) and requires the root statement to survive, so it is
//! the same shape as the reduce stage's crash-on-valid oracle ("same crash AND zero errors").
//!
//! It runs only with the `system-tests` feature (it needs clang-16).
//!
//! The input is `tests/data/big_gh59446.ii.gz` with its crash-on-invalid statement (the
//! last namespace) replaced by a valid function using `std::map`, `std::vector` and the file's
//! own `app::Record`/`app::mean`.
//!
//! Set `MEASURE=1` to also run the default pipeline's whole first phase (a minute or more of
//! clang runs on megabyte inputs); the numbers are printed.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use reducers::passes::{default_pipeline, pipeline, CPass, Hints};
use reducers::{reduce, CancelToken, Event, Options, Outcome, Pipeline};

const ROOT: &str = "return m[1].size() + app::mean(m[2]);";

fn clang() -> PathBuf {
    let p = PathBuf::from("/usr/lib/llvm-16/bin/clang");
    if p.exists() {
        p
    } else {
        PathBuf::from("clang-16")
    }
}

fn valid_input() -> Vec<u8> {
    let gz = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/big_gh59446.ii.gz");
    let file = std::fs::File::open(&gz).unwrap_or_else(|e| panic!("{}: {e}", gz.display()));
    let mut text = String::new();
    flate2::read::GzDecoder::new(file)
        .read_to_string(&mut text)
        .unwrap_or_else(|e| panic!("{}: {e}", gz.display()));
    let at = text
        .find("namespace GH59446 {")
        .expect("the crash namespace");
    // Line 36 of B/big_gh59446.cpp, as in the original; the root statement is line 38.
    format!(
        "{}namespace GH59446 {{\n  int f(std::map<int, std::vector<app::Record>> &m) {{\n    {ROOT}\n  }}\n}}\n",
        &text[..at]
    )
    .into_bytes()
}

static SEQ: AtomicU64 = AtomicU64::new(0);

/// Zero errors from clang-16 `-fsyntax-only`, and the root statement is still there.
fn valid(text: &[u8], _: &CancelToken) -> Outcome {
    if !text.windows(ROOT.len()).any(|w| w == ROOT.as_bytes()) {
        return Outcome::Uninteresting;
    }
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("validity");
    std::fs::create_dir_all(&dir).expect("scratch dir");
    let path = dir.join(format!(
        "c{}-{}.ii",
        std::process::id(),
        SEQ.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::write(&path, text).expect("write candidate");
    let out = Command::new(clang())
        .args(["-fsyntax-only", "-x", "c++-cpp-output"])
        .arg(&path)
        .output()
        .expect("run clang-16");
    let _ = std::fs::remove_file(&path);
    let errors = String::from_utf8_lossy(&out.stderr).contains("error:");
    if out.status.success() && !errors {
        Outcome::Interesting
    } else {
        Outcome::Uninteresting
    }
}

fn hints() -> Hints {
    Hints {
        location: Some(("B/big_gh59446.cpp".into(), 38)),
        function: Some("GH59446::f".into()),
        ..Hints::default()
    }
}

/// Runs the pipeline; prints `pass: tests -> bytes` at every improvement and a summary.
fn run(label: &str, input: &[u8], pipeline: Pipeline, max_rounds: Option<usize>) -> (Vec<u8>, u64) {
    let opts = Options {
        jobs: 2,
        max_rounds,
        ..Options::new(pipeline)
    };
    let t0 = Instant::now();
    let mut tests = 0;
    let r = reduce(input, &opts, &valid, &mut |e| match e {
        Event::Progress(s) => tests = s.tests,
        Event::Tested(_) => {}
        Event::Improved { best, pass, .. } => {
            eprintln!("[{label}] {pass}: {tests} tests -> {} bytes", best.len())
        }
    });
    eprintln!(
        "[{label}] {} -> {} bytes in {} tests, {:.1} s",
        input.len(),
        r.output.len(),
        r.stats.tests,
        t0.elapsed().as_secs_f64()
    );
    (r.output, r.stats.tests)
}

#[test]
fn closure_cuts_a_valid_libstdcxx_tu_and_keeps_it_valid() {
    let input = valid_input();
    assert_eq!(valid(&input, &CancelToken::new()), Outcome::Interesting);
    let first = pipeline(&[CPass::CrashCut, CPass::Closure], &[], &[], hints());
    let (out, tests) = run("closure", &input, first, Some(0));
    assert_eq!(valid(&out, &CancelToken::new()), Outcome::Interesting);
    // One accepted candidate takes away at least a third of the 1.9 MB, still error-free
    // (provenance's "drop every header" is invalid; the closure cut is not).
    assert!(out.len() * 3 < input.len() * 2, "{} bytes", out.len());
    assert!(tests <= 6, "{tests} tests");

    if std::env::var_os("MEASURE").is_some() {
        // With MEASURE set, the whole first phase on the same input, for its size and time:
        // without the closure cut it removes next to nothing of a valid big TU.
        run(
            "default, first phase",
            &input,
            default_pipeline(hints()),
            Some(0),
        );
    }
}
