//! The experiments of the classify stage, each turned into [`Evidence`]. Processes run only
//! through [`crate::exec`]; crashes are parsed, symbolized and compared by signature the way
//! capture does it.

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::emulation::{
    emulation, evidence_crashes, faulting_instruction, static_scan, with_target,
};
use super::outcome as o;
use super::{Evidence, Options};
use crate::case::Case;
use crate::crash::{self, Crash, CrashKind, Signature, Symbolizer};
use crate::exec::{self, Cmd, ExecError, Output, Status};

pub(super) const TIMEOUT: Duration = Duration::from_secs(300);

/// The command to replay: the verified reduction's when there is one, else the case's.
pub fn replay_command(case: &Case) -> Vec<String> {
    case.reduction
        .as_ref()
        .filter(|r| r.get("verified").and_then(|v| v.as_bool()) == Some(true))
        .and_then(|r| r.get("replay_command")?.as_array().cloned())
        .map(|a| {
            a.iter()
                .filter_map(|x| x.as_str().map(String::from))
                .collect::<Vec<_>>()
        })
        .filter(|a| !a.is_empty())
        .unwrap_or_else(|| case.replay_command.clone())
}

/// True when the case was captured on a RISC-V host: its compiler is a RISC-V ELF file, or
/// its frames name RISC-V library directories.
pub fn captured_on_riscv(case: &Case) -> bool {
    // Only the ELF header of a regular file: the path comes from case.json (`/dev/zero`, a
    // FIFO or a huge file must not be read whole).
    let compiler_is_riscv = crate::elf::is_riscv_file(Path::new(&case.compiler.resolved_path));
    compiler_is_riscv
        || case
            .crash
            .frames
            .iter()
            .filter_map(|f| f.module.as_deref())
            .any(|m| m.contains("riscv64"))
}

/// How a run compares with the case: outcome, signature id and coarse id of its crash.
pub fn compare(case_sig: &Signature, out: &Result<Output, ExecError>, sym: &Symbolizer) -> Seen {
    let o = match out {
        Err(e) => {
            return Seen {
                outcome: o::NOT_RUN,
                crash: None,
                note: e.to_string(),
            }
        }
        Ok(o) => o,
    };
    if o.status == Status::TimedOut {
        return Seen {
            outcome: o::TIMEOUT,
            crash: None,
            note: "timed out".into(),
        };
    }
    let Some(mut cr) = crash::parse(&o.stderr_text(), crate::capture::exit_info(o.status)) else {
        return Seen {
            outcome: o::NO_CRASH,
            crash: None,
            note: match o.status {
                Status::Exited(0) => "compiled (exit 0), no crash".into(),
                Status::Exited(n) => format!("exit {n}, no crash"),
                Status::Signaled(n) => format!("signal {n} without a crash report"),
                _ => "cancelled".into(),
            },
        };
    };
    sym.symbolize(&mut cr);
    let sig = crash::signature(&cr);
    let outcome = if sig.id == case_sig.id {
        o::SAME_CRASH
    } else if sig.coarse_id == case_sig.coarse_id
        || (!sig.message.is_empty()
            && sig.kind == case_sig.kind
            && sig.message == case_sig.message
            && sig.phase == case_sig.phase)
    {
        o::SAME_CRASH_COARSE
    } else {
        o::OTHER_CRASH
    };
    let quoted = |label: &str, s: &str| {
        if s.is_empty() {
            String::new()
        } else {
            format!("{label}`{s}`")
        }
    };
    let note = format!(
        "{}{}{}, top frames {}",
        sig.kind,
        quoted(" ", &sig.message),
        // Clang's own words (`('{}')`), not the signature's normalised `('X')`.
        quoted(" in ", &crash::phase_as_printed(&cr).unwrap_or_default()),
        sig.frames.join(" > ")
    );
    Seen {
        outcome,
        crash: Some((cr, sig)),
        note,
    }
}

/// One run compared with the case.
#[derive(Debug)]
pub struct Seen {
    pub outcome: &'static str,
    pub crash: Option<(Crash, Signature)>,
    pub note: String,
}

impl Seen {
    pub(super) fn evidence(
        &self,
        id: &str,
        experiment: &str,
        on: &str,
        detail: String,
    ) -> Evidence {
        Evidence {
            id: id.into(),
            experiment: experiment.into(),
            ran: self.outcome != o::NOT_RUN,
            host_or_emulator: on.into(),
            outcome: self.outcome.into(),
            signature: self.crash.as_ref().map(|(_, s)| s.id.clone()),
            coarse_signature: self.crash.as_ref().map(|(_, s)| s.coarse_id.clone()),
            frames: self
                .crash
                .as_ref()
                .map(|(c, _)| crash::named_frames(c, crate::case::classification::FRAMES_KEPT))
                .unwrap_or_default(),
            detail,
        }
    }
}

pub(super) fn not_run(id: &str, experiment: &str, on: &str, why: impl Into<String>) -> Evidence {
    Evidence {
        id: id.into(),
        experiment: experiment.into(),
        ran: false,
        host_or_emulator: on.into(),
        outcome: o::NOT_RUN.into(),
        signature: None,
        coarse_signature: None,
        frames: Vec::new(),
        detail: why.into(),
    }
}

pub(super) fn this_host() -> String {
    format!("host {}", std::env::consts::ARCH)
}

/// Runs every experiment that can run here.
pub fn run_all(dir: &Path, case: &Case, opts: &Options) -> Vec<Evidence> {
    let replay = replay_command(case);
    let host_argv = case.host_argv(&replay);
    let host = if case.emulator.is_empty() {
        this_host()
    } else {
        case.emulator.join(" ")
    };
    let mut evidence = Vec::new();
    let program = exec::which(&host_argv[0], dir).unwrap_or_else(|| PathBuf::from(&host_argv[0]));
    let sym = Symbolizer::new(if case.emulator.is_empty() {
        crate::capture::library_dirs(
            &std::fs::canonicalize(&program).unwrap_or_else(|_| program.clone()),
        )
    } else {
        case.library_dirs()
    });
    let replay_cmd = Cmd::new(&program)
        .args(&host_argv[1..])
        .cwd(dir)
        .timeout(TIMEOUT)
        .output_cap(1 << 20);

    // The capturing host is this one, or the emulator the case was captured under.
    let captured_here = captured_on_riscv(case) == cfg!(target_arch = "riscv64");
    let mut timeouts = 0;
    if captured_here || !case.emulator.is_empty() {
        let (e1, first, t) = determinism(case, &replay_cmd, opts.runs.max(1), &host, &sym);
        timeouts = t;
        evidence.push(e1);
        if captured_here {
            evidence.push(first.evidence(
                "baseline",
                "replay on the capturing host's compiler",
                &host,
                format!(
                    "`{}`: {}",
                    crate::command::shell_join(&host_argv),
                    first.note
                ),
            ));
        }
    } else {
        evidence.push(not_run(
            "E1",
            "determinism: serial and parallel replays on the capturing host",
            &host,
            "the case comes from another host: run `icepick classify` there for E1 and E4",
        ));
    }
    if !captured_here {
        evidence.push(cross_host(dir, case, &replay));
    }

    // E5: emulation; E3: the emulated compiler's vector code.
    evidence.extend(emulation(dir, case, &replay, opts));
    evidence.push(static_scan(case, opts));

    // E2: the faulting instruction of a RISC-V crash.
    evidence.push(faulting_instruction(
        dir,
        case,
        opts,
        &evidence_crashes(dir, case, &replay, opts),
    ));

    // E4: V off on a RISC-V host.
    evidence.push(vector_off(case, &replay_cmd, &sym));

    // E7: resources.
    evidence.push(resources(case, timeouts, &replay_cmd, &sym));

    // H: what the capturing host is.
    evidence.push(super::host_facts::evidence(
        case.host.as_ref(),
        &case.emulator,
    ));
    evidence
}

/// E1: `n` replays one after another, then `n` at once (parallel load). Returns the evidence,
/// the first serial run (the baseline) and how many runs timed out.
fn determinism(
    case: &Case,
    replay: &Cmd,
    n: u32,
    host: &str,
    sym: &Symbolizer,
) -> (Evidence, Seen, usize) {
    let n = n as usize;
    let mut serial: Vec<Seen> = (0..n)
        .map(|_| compare(&case.signature, &exec::run(replay), sym))
        .collect();
    let parallel: Vec<Seen> = exec::run_all(&vec![replay.clone(); n], n)
        .iter()
        .map(|r| compare(&case.signature, r, sym))
        .collect();
    let same = |v: &[Seen]| v.iter().filter(|s| s.outcome == o::SAME_CRASH).count();
    let (same_serial, same_parallel) = (same(&serial), same(&parallel));
    let all: Vec<&Seen> = serial.iter().chain(&parallel).collect();
    let timeouts = all.iter().filter(|s| s.outcome == o::TIMEOUT).count();
    let mut sigs: Vec<&str> = all
        .iter()
        .filter_map(|s| s.crash.as_ref().map(|(_, g)| g.id.as_str()))
        .collect();
    sigs.sort();
    sigs.dedup();
    let same_all = same_serial + same_parallel;
    let outcome = if timeouts > 0 {
        o::TIMEOUT
    } else if same_all == 2 * n {
        o::DETERMINISTIC
    } else if sigs.len() > 1 || (sigs.len() == 1 && same_all == 0) {
        o::VARYING
    } else if same_all > 0 {
        o::INTERMITTENT
    } else {
        o::NO_CRASH
    };
    let e = Evidence {
        id: "E1".into(),
        experiment: format!("determinism: {n} replays one after another, then {n} at once"),
        ran: all.iter().any(|s| s.outcome != o::NOT_RUN),
        host_or_emulator: host.into(),
        outcome: outcome.into(),
        signature: (sigs.len() == 1).then(|| sigs[0].to_string()),
        coarse_signature: None,
        frames: Vec::new(),
        detail: format!(
            "serial: {same_serial} of {n}, parallel: {same_parallel} of {n} runs crashed with signature {}; {} distinct signature(s); {timeouts} timeout(s)",
            case.signature.id,
            sigs.len()
        ),
    };
    (e, serial.swap_remove(0), timeouts)
}

/// The target triple of the host a case was captured on, for replaying it elsewhere.
fn capturing_triple(case: &Case) -> &'static str {
    if captured_on_riscv(case) {
        "riscv64-linux-gnu"
    } else {
        "x86_64-linux-gnu"
    }
}

/// This host's clang of the case's major version, named like the case's (`clang++` or
/// `clang`), or `None`.
pub fn native_compiler(case: &Case, dir: &Path) -> Option<PathBuf> {
    if !case.compiler.version.contains("clang") {
        return None;
    }
    let major = crate::versions::major_of(&case.compiler.version)?;
    let cxx = Path::new(&case.compiler.path)
        .file_name()
        .is_some_and(|n| n.to_string_lossy().contains("++"));
    let name = if cxx { "clang++" } else { "clang" };
    let in_llvm_dir = PathBuf::from(format!("/usr/lib/llvm-{major}/bin/{name}"));
    if in_llvm_dir.is_file() {
        return Some(in_llvm_dir);
    }
    exec::which(&format!("{name}-{major}"), dir)
}

/// E6: the case on this host's compiler of the same version, for the capturing host's target.
fn cross_host(dir: &Path, case: &Case, replay: &[String]) -> Evidence {
    let what = "cross-host replay: the case on this host's compiler of the same version";
    let host = this_host();
    let Some(native) = native_compiler(case, dir) else {
        return not_run(
            "E6",
            what,
            &host,
            format!(
                "no clang of the case's version (`{}`) on this host: install it (e.g. clang-N) to compare builds",
                case.compiler.version
            ),
        );
    };
    let args = with_target(&replay[1..], capturing_triple(case));
    let cmd = Cmd::new(&native)
        .args(&args)
        .cwd(dir)
        .timeout(TIMEOUT)
        .output_cap(1 << 20);
    let native_sym = Symbolizer::new(crate::capture::library_dirs(
        &std::fs::canonicalize(&native).unwrap_or_else(|_| native.clone()),
    ));
    let seen = compare(&case.signature, &exec::run(&cmd), &native_sym);
    let note = format!(
        "`{} {}`: {}",
        native.display(),
        crate::command::shell_join(&args),
        seen.note
    );
    seen.evidence("E6", what, &host, note)
}

fn vector_off(case: &Case, replay: &Cmd, sym: &Symbolizer) -> Evidence {
    let experiment = "V off: prctl(PR_RISCV_V_SET_CONTROL, next=OFF|INHERIT) before exec";
    if !cfg!(target_arch = "riscv64") {
        return not_run("E4", experiment, &this_host(), "not a RISC-V host");
    }
    let mut cmd = replay.clone();
    cmd.riscv_vector_off = true;
    let out = exec::run(&cmd);
    if let Err(ExecError::Spawn { source, .. }) = &out {
        if source.raw_os_error() == Some(libc::EINVAL) {
            return not_run(
                "E4",
                experiment,
                &this_host(),
                "the kernel has no PR_RISCV_V_SET_CONTROL (EINVAL): kernel < 6.5 or no V support",
            );
        }
    }
    let seen = compare(&case.signature, &out, sym);
    let note = seen.note.clone();
    seen.evidence("E4", experiment, &this_host(), note)
}

fn resources(case: &Case, timeouts: usize, replay: &Cmd, sym: &Symbolizer) -> Evidence {
    let experiment = "resources: OOM kill, timeout, stack overflow";
    let host = this_host();
    let mut e = not_run("E7", experiment, &host, "");
    e.ran = true;
    match case.crash.kind {
        CrashKind::Killed | CrashKind::Timeout => {
            e.outcome = o::RESOURCE_KILLED.into();
            e.detail = format!(
                "the case's crash is a {}",
                crate::crash::kind_words(case.crash.kind)
            );
        }
        _ if timeouts > 0 => {
            e.outcome = o::RESOURCE_KILLED.into();
            e.detail = format!("{timeouts} E1 rerun(s) timed out");
        }
        CrashKind::StackOverflow => {
            let mut cmd = replay.clone();
            cmd.stack_limit = Some(u64::MAX);
            let seen = compare(&case.signature, &exec::run(&cmd), sym);
            e.outcome = if seen.outcome == o::NO_CRASH {
                o::FIXED_BY_STACK
            } else {
                o::NOT_FIXED_BY_STACK
            }
            .into();
            e.signature = seen.crash.as_ref().map(|(_, s)| s.id.clone());
            e.detail = format!(
                "rerun with an unlimited stack (RLIMIT_STACK): {}",
                seen.note
            );
        }
        k => {
            e.outcome = o::NO_RESOURCE_SIGN.into();
            e.detail = format!(
                "the crash is a {}: not a kill, timeout or stack overflow",
                crate::crash::kind_words(k)
            );
        }
    }
    e
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_e7_rerun_gets_an_unlimited_stack_and_other_runs_keep_theirs() {
        let sh = |limit| {
            let mut c = Cmd::new("sh").args(["-c", "ulimit -s"]);
            c.stack_limit = limit;
            String::from_utf8(exec::run(&c).unwrap().stdout).unwrap()
        };
        let mut hard = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: getrlimit writes only into `hard`.
        unsafe { libc::getrlimit(libc::RLIMIT_STACK, &mut hard) };
        if hard.rlim_max == libc::RLIM_INFINITY {
            assert_eq!(sh(Some(u64::MAX)).trim(), "unlimited");
        }
        assert_eq!(sh(Some(16 << 20)).trim(), "16384");
        let inherited = sh(None);
        assert!(!inherited.trim().is_empty());
    }
}
