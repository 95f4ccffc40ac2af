//! A second opinion on validity. "No error before the crash" cannot see what follows the
//! crash point: on llvm-project#200682 a candidate `int main() { f<int>() }` crashes clang
//! with zero errors printed, yet it is missing a `;` and names a member that does not exist.
//! A compiler that does not crash sees the whole file: when the case is a clang C/C++ crash
//! and GCC (`gcc`/`g++ -fsyntax-only`, with the case's `-std=`) accepts the start, it must
//! accept every candidate too.
//!
//! clang-preprocessed libstdc++ calls clang-only builtins (`__make_integer_seq`,
//! `__builtin_operator_new`) where GCC's branch of the same header uses its own; the witness
//! declares them for GCC ([`prelude`]), so GCC accepts such a start as it accepts the source.
//! When GCC still rejects the start, its errors on the start become a baseline: a candidate
//! may only keep some of them, never add one (an error is its file as printed, through the
//! line markers, and its message; one the start had in a header may move into the candidate
//! itself, as cutting the header's line marker does). The first accepted candidate GCC takes
//! without any error makes the witness strict for the rest of the reduction. On
//! clang-preprocessed libstdc++ this is what keeps the crashing code whole while the headers
//! go: a strict witness would never engage there (`docs/design/valid-reduction.md`).

use std::collections::{BTreeSet, HashSet};
use std::hash::{Hash, Hasher};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use crate::command::{CompilerCommand, Lang};
use crate::exec::{self, Cmd, Status};

/// The witness command for a case's replay command: the program and its arguments before
/// the input file; `None` when there is none for this kind of case.
pub(super) fn witness_for(replay: &CompilerCommand) -> Option<Vec<String>> {
    if replay.is_gcc() {
        return None;
    }
    let (program, x) = match replay.language() {
        Lang::C => ("gcc", "c"),
        Lang::CPre => ("gcc", "cpp-output"),
        Lang::Cxx => ("g++", "c++"),
        Lang::CxxPre => ("g++", "c++-cpp-output"),
        _ => return None,
    };
    let mut argv = vec![
        program.to_string(),
        "-fsyntax-only".into(),
        "-w".into(),
        "-fno-diagnostics-show-caret".into(),
        "-fdiagnostics-color=never".into(),
    ];
    argv.extend(
        replay
            .argv()
            .into_iter()
            .filter(|a| a.starts_with("-std=") || a.starts_with("--std=")),
    );
    argv.extend(["-x".into(), x.into()]);
    Some(argv)
}

/// Declarations GCC needs for a clang builtin that clang-preprocessed libstdc++ calls where
/// GCC's branch of the same header uses another: `(the builtin, its declaration)`.
const CLANG_BUILTINS: [(&str, &str); 3] = [
    (
        "__make_integer_seq",
        "template <template <class _Tp, _Tp...> class _Seq, class _Tp, _Tp _Num> \
         using __make_integer_seq = _Seq<_Tp, __integer_pack(_Num)...>;",
    ),
    (
        "__builtin_operator_new",
        "template <class... _Args> inline void *__builtin_operator_new(_Args... __args) \
         { return ::operator new(__args...); }",
    ),
    (
        "__builtin_operator_delete",
        "template <class... _Args> inline void __builtin_operator_delete(_Args... __args) \
         { ::operator delete(__args...); }",
    ),
];

/// What goes before `text` in the witness's file: for `g++`, one line per clang builtin in
/// [`CLANG_BUILTINS`] that `text` names (nothing for one that names none, so a C++98 text
/// never sees an alias template).
pub(super) fn prelude(argv: &[String], text: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    if argv.first().map(String::as_str) != Some("g++") {
        return out;
    }
    for (name, decl) in CLANG_BUILTINS {
        if memchr::memmem::find(text, name.as_bytes()).is_some() {
            out.extend_from_slice(decl.as_bytes());
            out.push(b'\n');
        }
    }
    out
}

/// Accepted candidates up to this size are offered to a witness that has no baseline (it
/// gave up on the start, or timed out): the first it accepts makes it strict.
pub(super) const LATE_MAX: usize = 64 << 10;

/// The witness of one reduction and where it stands.
#[derive(Debug)]
pub(super) struct Witness {
    /// The command, without the file name.
    pub argv: Vec<String>,
    /// Its run on the start when that failed but read the whole file: the errors a candidate
    /// may keep until the witness is strict.
    baseline: Option<Run>,
    /// Every candidate must pass it with no error at all.
    strict: AtomicBool,
    /// Candidates that passed with no error while not strict (hashes): when one of them is
    /// accepted, the witness turns strict.
    clean: Mutex<HashSet<u64>>,
    pub runs: AtomicU64,
    /// Candidates clang accepted and the witness did not.
    pub rejects: AtomicU64,
}

fn hash(text: &[u8]) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    text.hash(&mut h);
    h.finish()
}

impl Witness {
    /// The witness `argv` after its run on the start (`None`: it did not end by itself).
    pub fn new(argv: Vec<String>, start: Option<Run>) -> Self {
        let strict = matches!(&start, Some(r) if r.ok);
        Witness {
            argv,
            baseline: start.filter(|r| !r.ok && !r.partial),
            strict: AtomicBool::new(strict),
            clean: Mutex::new(HashSet::new()),
            runs: AtomicU64::new(1),
            rejects: AtomicU64::new(0),
        }
    }

    pub fn strict(&self) -> bool {
        self.strict.load(Ordering::SeqCst)
    }

    /// GCC's errors on the start, when it rejected it and they form the baseline.
    pub fn start_errors(&self) -> usize {
        self.baseline.as_ref().map_or(0, |b| b.errors.len())
    }

    /// True when candidates are to be judged at all (strict, or against a baseline).
    pub fn engaged(&self) -> bool {
        self.strict() || self.baseline.is_some()
    }

    /// Judges `text` by its witness run `run` (`None`: it did not end); counts a reject
    /// unless `cancelled`.
    pub fn passes(&self, text: &[u8], run: Option<Run>, cancelled: bool) -> bool {
        self.runs.fetch_add(1, Ordering::Relaxed);
        let ok = match (&run, &self.baseline) {
            (Some(r), _) if self.strict() => r.ok,
            (Some(r), Some(b)) => {
                if r.ok {
                    self.clean.lock().expect("not poisoned").insert(hash(text));
                }
                r.within(b)
            }
            (Some(_), None) => true,
            (None, _) => false,
        };
        if !ok && !cancelled {
            self.rejects.fetch_add(1, Ordering::Relaxed);
        }
        ok
    }

    /// Counts a reject that [`Witness::passes`] was told not to count (its run was beside a
    /// first compiler run that had not yet said yes), once that run said yes.
    pub fn count_reject(&self) {
        self.rejects.fetch_add(1, Ordering::Relaxed);
    }

    /// Called with each newly accepted candidate: turns strict when it passed with no error.
    /// True when the candidate should be offered to the witness now (no baseline, not strict,
    /// small enough); then [`Witness::late`] with its run.
    pub fn accepted(&self, best: &[u8]) -> bool {
        if self.strict() {
            return false;
        }
        if self
            .clean
            .lock()
            .expect("not poisoned")
            .contains(&hash(best))
        {
            self.strict.store(true, Ordering::SeqCst);
            return false;
        }
        self.baseline.is_none() && best.len() <= LATE_MAX
    }

    /// The run of an accepted candidate offered by [`Witness::accepted`].
    pub fn late(&self, run: Option<Run>) {
        self.runs.fetch_add(1, Ordering::Relaxed);
        if matches!(run, Some(r) if r.ok) {
            self.strict.store(true, Ordering::SeqCst);
        }
    }
}

/// One witness run that ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Run {
    /// It exited 0.
    pub ok: bool,
    /// Its errors, keyed by [`errors`].
    pub errors: BTreeSet<String>,
    /// It gave up part-way (a fatal error, "confused by earlier errors", an internal compiler
    /// error, an output cut by the cap): errors after that point were never looked for.
    pub partial: bool,
}

impl Run {
    /// True when this run shows nothing the baseline `start` did not: no error outside it,
    /// and it read the whole file. A clean run is always within.
    ///
    /// A line marker only names the file an error is reported in: once a cut removes the
    /// marker, the baseline's error in `…/bits/utility.h` is reported in the candidate itself
    /// (`-`). So an error in the candidate is within when the start had the same message in
    /// any file; an error in a named file must match that file too.
    pub fn within(&self, start: &Run) -> bool {
        let moved_here = |e: &String| {
            e.strip_prefix("-\t")
                .is_some_and(|msg| start.errors.iter().any(|s| message(s) == msg))
        };
        self.ok
            || (!self.partial
                && self
                    .errors
                    .iter()
                    .all(|e| start.errors.contains(e) || moved_here(e)))
    }
}

/// The message of an error key (`file\tmessage`, see [`errors`]).
fn message(key: &str) -> &str {
    key.split_once('\t').map_or(key, |(_, m)| m)
}

/// Runs the witness on `file` (in `dir`, its TMPDIR `tmpdir`); `None` when it did not end by
/// itself (timed out, cancelled), `Err` when it could not start.
pub(super) fn run(
    witness: &[String],
    dir: &Path,
    file: &str,
    tmpdir: &Path,
    timeout: Duration,
    cancel: &(dyn Fn() -> bool + Sync),
) -> Result<Option<Run>, exec::ExecError> {
    let cmd = Cmd::new(&witness[0])
        .args(&witness[1..])
        .args([file])
        .cwd(dir)
        .env("TMPDIR", tmpdir)
        .timeout(timeout)
        .output_cap(8 << 20);
    let out = exec::run_cancellable(&cmd, cancel)?;
    let code = match out.status {
        Status::Exited(c) => c,
        _ => return Ok(None),
    };
    let stderr = String::from_utf8_lossy(&out.stderr);
    let (errors, gave_up) = errors(&stderr, file);
    Ok(Some(Run {
        ok: code == 0,
        partial: gave_up || out.stderr_dropped > 0 || (code != 0 && errors.is_empty()),
        errors,
    }))
}

/// The errors GCC printed, each as `file\tmessage` (the file as printed, the candidate's own
/// name as `-`, since every candidate has another), and whether GCC said it gave up.
pub(super) fn errors(stderr: &str, file: &str) -> (BTreeSet<String>, bool) {
    let mut keys = BTreeSet::new();
    let mut gave_up = false;
    for line in stderr.lines() {
        if line.contains("confused by earlier errors")
            || line.contains("compilation terminated")
            || line.contains("internal compiler error")
        {
            gave_up = true;
        }
        let (at, msg) = if let Some(i) = line.find(": fatal error: ") {
            gave_up = true;
            (&line[..i], &line[i + ": fatal error: ".len()..])
        } else if let Some(i) = line.find(": error: ") {
            (&line[..i], &line[i + ": error: ".len()..])
        } else {
            continue;
        };
        // `path:line:col` (or `path:line`, or `cc1plus`): the path, without the position.
        let mut path = at;
        for _ in 0..2 {
            match path.rsplit_once(':') {
                Some((p, n)) if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => path = p,
                _ => break,
            }
        }
        let path = if path == file || Path::new(path).file_name() == Path::new(file).file_name() {
            "-"
        } else {
            path
        };
        keys.insert(format!("{path}\t{msg}"));
    }
    (keys, gave_up)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cmd(args: &[&str]) -> CompilerCommand {
        CompilerCommand::from_argv(&args.iter().map(|s| s.to_string()).collect::<Vec<_>>()).unwrap()
    }

    #[test]
    fn a_clang_cxx_case_gets_gxx_with_its_standard() {
        let w = witness_for(&cmd(&[
            "/usr/lib/llvm-19/bin/clang",
            "-std=c++20",
            "-O2",
            "-c",
            "-x",
            "c++-cpp-output",
            "input.ii",
        ]))
        .unwrap();
        assert_eq!(
            w,
            [
                "g++",
                "-fsyntax-only",
                "-w",
                "-fno-diagnostics-show-caret",
                "-fdiagnostics-color=never",
                "-std=c++20",
                "-x",
                "c++-cpp-output"
            ]
        );
    }

    #[test]
    fn gcc_cases_and_other_languages_get_none() {
        assert!(witness_for(&cmd(&["gcc", "-c", "f.c"])).is_none());
        assert!(witness_for(&cmd(&["clang", "-c", "k.hip"])).is_none());
        let c = witness_for(&cmd(&["clang", "-c", "f.i"])).unwrap();
        assert_eq!(c[0], "gcc");
    }

    #[test]
    fn gxx_gets_a_declaration_for_each_clang_builtin_the_text_names() {
        let gxx = vec!["g++".to_string(), "-fsyntax-only".into()];
        let text = b"p = __builtin_operator_new(n); using s = __make_integer_seq<S, int, 3>;";
        let p = String::from_utf8(prelude(&gxx, text)).unwrap();
        assert_eq!(p.lines().count(), 2);
        assert!(p.contains("using __make_integer_seq ="));
        assert!(p.contains("void *__builtin_operator_new("));
        assert!(prelude(&gxx, b"int main() {}").is_empty());
        assert!(prelude(&["gcc".to_string()], text).is_empty());
    }

    #[test]
    fn errors_are_keyed_by_file_and_message_and_the_candidate_is_dash() {
        let out = "In file included from big.cpp:1:
/usr/include/c++/12/bits/utility.h:151:22: error: '__make_integer_seq' does not name a type
/usr/include/c++/12/bits/utility.h: In function 'int f()':
/usr/include/c++/12/bits/utility.h:160:1: note: declared here
/tmp/w/w17.ii:9:3: error: expected ';' before '}' token
cc1plus: error: unrecognized command-line option '-fbogus'
";
        let (keys, gave_up) = errors(out, "/tmp/w/w17.ii");
        assert!(!gave_up);
        assert_eq!(
            keys.into_iter().collect::<Vec<_>>(),
            [
                "-\texpected ';' before '}' token",
                "/usr/include/c++/12/bits/utility.h\t'__make_integer_seq' does not name a type",
                "cc1plus\tunrecognized command-line option '-fbogus'",
            ]
        );
        let (_, gave_up) = errors("a.h:3:1: confused by earlier errors, bailing out\n", "x.ii");
        assert!(gave_up);
        let (_, gave_up) = errors("x.ii:1:10: fatal error: y.h: No such file\n", "x.ii");
        assert!(gave_up);
    }

    #[test]
    fn a_run_is_within_the_start_when_it_adds_no_error_and_read_everything() {
        let key = |s: &str| s.to_string();
        let start = Run {
            ok: false,
            errors: [key("h\tA"), key("h\tB")].into(),
            partial: false,
        };
        let fewer = Run {
            ok: false,
            errors: [key("h\tB")].into(),
            partial: false,
        };
        let new = Run {
            ok: false,
            errors: [key("h\tB"), key("-\tC")].into(),
            partial: false,
        };
        let gave_up = Run {
            partial: true,
            ..fewer.clone()
        };
        let clean = Run {
            ok: true,
            errors: BTreeSet::new(),
            partial: false,
        };
        // The marker that put `B` in `h` was cut: `B` is now reported in the candidate.
        let moved = Run {
            ok: false,
            errors: [key("-\tB")].into(),
            partial: false,
        };
        // But an error the start had in the candidate may not move into a header.
        let into_header = Run {
            ok: false,
            errors: [key("g\tB")].into(),
            partial: false,
        };
        assert!(fewer.within(&start));
        assert!(moved.within(&start));
        assert!(!into_header.within(&start));
        assert!(!new.within(&start));
        assert!(!gave_up.within(&start));
        assert!(clean.within(&start));
    }

    fn run(ok: bool, errors: &[&str]) -> Option<Run> {
        Some(Run {
            ok,
            errors: errors.iter().map(|s| s.to_string()).collect(),
            partial: false,
        })
    }

    #[test]
    fn a_witness_that_rejects_the_start_keeps_its_errors_until_a_clean_candidate_is_accepted() {
        let w = Witness::new(vec!["g++".into()], run(false, &["h\tA", "h\tB"]));
        assert!(w.engaged() && !w.strict());
        assert_eq!(w.start_errors(), 2);
        assert!(w.passes(b"fewer", run(false, &["h\tA"]), false));
        assert!(!w.passes(b"new", run(false, &["h\tA", "-\tC"]), false));
        assert!(!w.passes(b"timeout", None, false));
        assert!(w.passes(b"clean", run(true, &[]), false));
        // Accepting a candidate with errors changes nothing; accepting the clean one is strict.
        assert!(!w.accepted(b"fewer"));
        assert!(!w.strict());
        assert!(!w.accepted(b"clean"));
        assert!(w.strict());
        assert!(!w.passes(b"fewer", run(false, &["h\tA"]), false));
        assert_eq!(w.rejects.load(Ordering::Relaxed), 3);
    }

    #[test]
    fn a_witness_that_gave_up_on_the_start_waits_for_a_small_accepted_candidate() {
        let gave_up = Some(Run {
            ok: false,
            errors: BTreeSet::new(),
            partial: true,
        });
        let w = Witness::new(vec!["g++".into()], gave_up);
        assert!(!w.engaged());
        assert!(!w.accepted(&vec![b' '; LATE_MAX + 1]));
        assert!(w.accepted(b"small"));
        w.late(run(false, &["-\tA"]));
        assert!(!w.strict());
        w.late(run(true, &[]));
        assert!(w.strict() && w.engaged());
        let ok = Witness::new(vec!["g++".into()], run(true, &[]));
        assert!(ok.strict());
    }
}
