//! Capture of a crash of one of LLVM's own tools (`llc`, `opt`): a build's `-emit-llvm`
//! pipeline, a fuzzer, or a test suite runs them on IR, and they crash like clang does.
//!
//! Their input is already portable (`.ll` or `.bc`), so there is nothing to preprocess and no
//! job to find: the input is copied into the case, the replay is the same command on that
//! copy with its output sent to `/dev/null` (run here with it in scratch), and it must crash
//! with the same signature in the case directory. None of clang's driver flags is added (`llc` rejects
//! `-fno-crash-diagnostics`, and writes no reproducer files to keep out of the way).

use std::path::Path;
use std::time::Instant;

use super::{
    bug_info, compiler_version, finish, first_line, CaptureError, Outcome, Parts, Run, Runner,
};
use crate::case::link::LinkInfo;
use crate::case::{JobInfo, NewCaseDir, Preprocessing};
use crate::command::{CompilerCommand, Sink};
use crate::crash::{Crash, Signature};

/// What the caller already found out: the command as replayed, where its program is, and
/// the first run's crash.
pub(super) struct Found<'a> {
    pub command: CompilerCommand,
    pub found: &'a Path,
    pub resolved: &'a Path,
    pub crash: Crash,
    pub signature: Signature,
    pub stderr: Vec<u8>,
    pub started: Instant,
    /// A link's LTO crash that this command reproduces ([`super::link`]).
    pub link: Option<LinkFound>,
}

/// What a link's capture adds to the case: its section, the link's stderr, and files (the
/// needed inputs' sources) by their names in the case.
pub(super) struct LinkFound {
    pub info: LinkInfo,
    pub stderr: Vec<u8>,
    pub files: Vec<(String, Vec<u8>)>,
}

/// Captures the crash of an `llc`/`opt` command whose first run crashed.
pub(super) fn capture_tool(
    req: &super::Request,
    runner: &mut Runner,
    f: Found<'_>,
    progress: &mut dyn FnMut(&str),
) -> Result<Outcome, CaptureError> {
    let version = compiler_version(runner, &f.command)?;
    // Reruns write into scratch: the build's own output file is the build's.
    let (reruns, reproducibility, mut family) = super::rerun(
        runner,
        &f.command,
        req.reruns,
        (&f.crash, &f.signature),
        progress,
    )?;

    let input = f
        .command
        .inputs()
        .first()
        .map(|i| req.cwd.join(i))
        .ok_or(CaptureError::NoInput)?;
    let bytes =
        std::fs::read(&input).map_err(|e| CaptureError::UnreadableInput(input.clone(), e))?;
    let input_name = format!("input.{}", ir_extension(&bytes));

    let case_dir = NewCaseDir::start(super::case_parent(req))?;
    let _unfinished = crate::exec::remove_at_exit(case_dir.path());
    case_dir.write("original.stderr", &f.stderr)?;
    for (i, r) in reruns.iter().enumerate() {
        case_dir.write(&format!("logs/rerun-{}.stderr", i + 1), &r.output.stderr)?;
    }
    case_dir.write(&input_name, &bytes)?;
    let link = match f.link {
        Some(l) => {
            case_dir.write("logs/link.stderr", &l.stderr)?;
            for (name, bytes) in &l.files {
                case_dir.write(name, bytes)?;
            }
            Some(l.info)
        }
        None => None,
    };

    let replay = replay_on(&f.command, &input_name);
    progress("replaying on the case's copy of the IR");
    let r = runner.run_in_family(&replay, Some(case_dir.path()), &family)?;
    case_dir.write("logs/replay-given.stderr", &r.output.stderr)?;
    let (status, detail) = replay_status(&r, &f.signature, &family);
    let (mut crash, mut signature) = (f.crash, f.signature);
    if link.is_some() && status == "reproduced" {
        // The link's IR command ran on a scratch file: the crash as the case's copy gives it
        // names no scratch path.
        if let (Some(c), Some(s)) = (r.crash, r.signature) {
            family = family.seen_as(&crate::crash::family::Seen::new(&c, &s));
            (crash, signature) = (c, s);
            case_dir.write("original.stderr", &r.output.stderr)?;
        }
    }
    let mut bug = bug_info::with_diagnostics(&String::from_utf8_lossy(&f.stderr));
    bug.triple = triple_of(&f.command, &bytes);
    finish(
        req,
        case_dir,
        Parts {
            // A link's IR command ran on a save-temps file in scratch: the case's own copy
            // is its input from now on.
            command: if link.is_some() {
                replay.argv()
            } else {
                f.command.argv()
            },
            found: f.found,
            resolved: f.resolved,
            version,
            crash,
            signature,
            job: JobInfo {
                kind: "single".into(),
                offload_arch: None,
                listed: Vec::new(),
            },
            input_name,
            replay: replay.argv(),
            preprocessing: Preprocessing {
                mode: "given".into(),
                command: Vec::new(),
                status: status.into(),
                detail,
            },
            reproducibility,
            family,
            runs: runner.runs,
            started: f.started,
            added_flags: Vec::new(),
            bug,
            link,
        },
    )
}

/// The preprocessing status of the replay on the case's copy: `reproduced`, or `lost` and why.
fn replay_status(
    r: &Run,
    signature: &Signature,
    family: &crate::crash::CrashFamily,
) -> (&'static str, Option<String>) {
    match &r.signature {
        _ if super::in_family(family, r) => ("reproduced", None),
        Some(s) => (
            "lost",
            Some(format!(
                "the copied IR crashes differently (signature {} instead of {})",
                s.id, signature.id
            )),
        ),
        None => (
            "lost",
            Some(format!(
                "the copied IR does not crash ({})",
                first_line(&r.output)
            )),
        ),
    }
}

/// `bc` for LLVM bitcode (its magic, or the wrapper's), else `ll`.
fn ir_extension(bytes: &[u8]) -> &'static str {
    if bytes.starts_with(b"BC\xC0\xDE") || bytes.starts_with(&[0xDE, 0xC0, 0x17, 0x0B]) {
        "bc"
    } else {
        "ll"
    }
}

/// The command on `input_name` (in the case directory), writing nothing: `-o /dev/null`.
fn replay_on(command: &CompilerCommand, input_name: &str) -> CompilerCommand {
    let mut c = command.without_build_outputs(&Sink::Nowhere);
    if let Some(&i) = c.input_indices().first() {
        c.args[i] = input_name.to_string();
    }
    c
}

/// The target: `-mtriple`, else the IR's `target triple` line.
fn triple_of(command: &CompilerCommand, ir: &[u8]) -> Option<String> {
    if let Some(t) = command.option_value("-mtriple") {
        return Some(t);
    }
    let text = std::str::from_utf8(ir.get(..ir.len().min(1 << 16))?).ok()?;
    text.lines()
        .find_map(|l| l.strip_prefix("target triple = \""))
        .and_then(|rest| rest.split('"').next())
        .map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cmd(line: &str) -> CompilerCommand {
        CompilerCommand::from_argv(&shlex::split(line).unwrap()).unwrap()
    }

    #[test]
    fn the_replay_runs_on_the_copy_and_writes_nothing() {
        let c = cmd("/usr/lib/llvm-19/bin/llc -O2 -mattr=+v build/x.ll -o build/x.s");
        assert_eq!(
            replay_on(&c, "input.ll").argv(),
            [
                "/usr/lib/llvm-19/bin/llc",
                "-O2",
                "-mattr=+v",
                "-o",
                "/dev/null",
                "input.ll"
            ]
        );
        let c = cmd("opt-19 -passes=safe-stack x.ll -disable-output");
        let r = replay_on(&c, "input.ll").argv();
        assert!(r.contains(&"input.ll".to_string()), "{r:?}");
        assert!(!r.contains(&"x.ll".to_string()), "{r:?}");
    }

    #[test]
    fn the_triple_comes_from_the_command_else_the_ir() {
        let ir = b"; ModuleID = 'x'\ntarget triple = \"riscv32-unknown-linux-gnu\"\n";
        assert_eq!(
            triple_of(&cmd("llc x.ll"), ir).as_deref(),
            Some("riscv32-unknown-linux-gnu")
        );
        assert_eq!(
            triple_of(&cmd("llc -mtriple=x86_64 x.ll"), ir).as_deref(),
            Some("x86_64")
        );
        assert_eq!(
            triple_of(&cmd("llc x.ll"), b"define void @f() {\n}\n"),
            None
        );
    }

    #[test]
    fn bitcode_is_told_from_text_by_its_magic() {
        assert_eq!(ir_extension(b"BC\xC0\xDE\x35\x14"), "bc");
        assert_eq!(ir_extension(&[0xDE, 0xC0, 0x17, 0x0B, 0, 0]), "bc");
        assert_eq!(ir_extension(b"; ModuleID"), "ll");
    }
}
