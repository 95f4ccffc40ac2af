//! A second opinion on validity. "No error before the crash" cannot see what follows the
//! crash point: on llvm-project#200682 a candidate `int main() { f<int>() }` crashes clang
//! with zero errors printed, yet it is missing a `;` and names a member that does not exist.
//! A compiler that does not crash sees the whole file: when the case is a clang C/C++ crash
//! and GCC (`gcc`/`g++ -fsyntax-only`, with the case's `-std=`) accepts the start, it must
//! accept every candidate too. When GCC rejects the start (a GCC limitation, clang-only
//! builtins in preprocessed headers, another target), it is not used and the reduction says
//! so.

use std::path::Path;
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
    let mut argv = vec![program.to_string(), "-fsyntax-only".into(), "-w".into()];
    argv.extend(
        replay
            .argv()
            .into_iter()
            .filter(|a| a.starts_with("-std=") || a.starts_with("--std=")),
    );
    argv.extend(["-x".into(), x.into()]);
    Some(argv)
}

/// Runs the witness on `file` (in `dir`): true when it exits 0.
pub(super) fn accepts(
    witness: &[String],
    dir: &Path,
    file: &str,
    timeout: Duration,
    cancel: &(dyn Fn() -> bool + Sync),
) -> bool {
    let cmd = Cmd::new(&witness[0])
        .args(&witness[1..])
        .args([file])
        .cwd(dir)
        .timeout(timeout)
        .output_cap(64 << 10);
    matches!(
        exec::run_cancellable(&cmd, cancel),
        Ok(exec::Output {
            status: Status::Exited(0),
            ..
        })
    )
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
}
