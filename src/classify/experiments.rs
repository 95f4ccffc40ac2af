//! The experiments of the classify stage, each turned into [`Evidence`]. Processes run only
//! through [`crate::exec`]; crashes are parsed, symbolized and compared by signature the way
//! capture does it.

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::outcome as o;
use super::{Evidence, Options, SYSROOT_CLANG};
use crate::case::Case;
use crate::crash::{self, Crash, CrashKind, Signature, Symbolizer};
use crate::exec::{self, Cmd, ExecError, Output, Status};

const TIMEOUT: Duration = Duration::from_secs(300);

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
    let compiler_is_riscv = std::fs::read(&case.compiler.resolved_path)
        .ok()
        .and_then(|b| crate::elf::header(&b).ok())
        .is_some_and(|h| h.e_machine == crate::elf::EM_RISCV);
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
            note: format!("{:?}, no crash", o.status),
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
    let note = format!(
        "{} `{}` in `{}`, top frames {}",
        sig.kind,
        sig.message,
        sig.phase,
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
    fn evidence(&self, id: &str, experiment: &str, on: &str, detail: String) -> Evidence {
        Evidence {
            id: id.into(),
            experiment: experiment.into(),
            ran: self.outcome != o::NOT_RUN,
            host_or_emulator: on.into(),
            outcome: self.outcome.into(),
            signature: self.crash.as_ref().map(|(_, s)| s.id.clone()),
            coarse_signature: self.crash.as_ref().map(|(_, s)| s.coarse_id.clone()),
            detail,
        }
    }
}

fn not_run(id: &str, experiment: &str, on: &str, why: impl Into<String>) -> Evidence {
    Evidence {
        id: id.into(),
        experiment: experiment.into(),
        ran: false,
        host_or_emulator: on.into(),
        outcome: o::NOT_RUN.into(),
        signature: None,
        coarse_signature: None,
        detail: why.into(),
    }
}

fn this_host() -> String {
    format!("host {}", std::env::consts::ARCH)
}

/// Runs every experiment that can run here.
pub fn run_all(dir: &Path, case: &Case, opts: &Options) -> Vec<Evidence> {
    let replay = replay_command(case);
    let host = this_host();
    let mut evidence = Vec::new();
    let program = exec::which(&replay[0], dir).unwrap_or_else(|| PathBuf::from(&replay[0]));
    let resolved = std::fs::canonicalize(&program).unwrap_or_else(|_| program.clone());
    let sym = Symbolizer::new(crate::capture::library_dirs(&resolved));
    let replay_cmd = Cmd::new(&program)
        .args(&replay[1..])
        .cwd(dir)
        .timeout(TIMEOUT)
        .output_cap(1 << 20);

    // E1: determinism, N reruns at once (parallel load).
    let n = opts.runs.max(1);
    let outs = exec::run_all(&vec![replay_cmd.clone(); n as usize], n as usize);
    let seen: Vec<Seen> = outs
        .iter()
        .map(|r| compare(&case.signature, r, &sym))
        .collect();
    let same = seen.iter().filter(|s| s.outcome == o::SAME_CRASH).count();
    let timeouts = seen.iter().filter(|s| s.outcome == o::TIMEOUT).count();
    let mut sigs: Vec<&str> = seen
        .iter()
        .filter_map(|s| s.crash.as_ref().map(|(_, g)| g.id.as_str()))
        .collect();
    sigs.sort();
    sigs.dedup();
    let e1_outcome = if timeouts > 0 {
        o::TIMEOUT
    } else if same == n as usize {
        o::DETERMINISTIC
    } else if sigs.len() > 1 || (sigs.len() == 1 && same == 0) {
        o::VARYING
    } else if same > 0 {
        o::INTERMITTENT
    } else {
        o::NO_CRASH
    };
    evidence.push(Evidence {
        id: "E1".into(),
        experiment: format!("determinism: {n} replays at once"),
        ran: seen.iter().any(|s| s.outcome != o::NOT_RUN),
        host_or_emulator: host.clone(),
        outcome: e1_outcome.into(),
        signature: (sigs.len() == 1).then(|| sigs[0].to_string()),
        coarse_signature: None,
        detail: format!(
            "{same} of {n} runs crashed with signature {}; {} distinct signature(s); {timeouts} timeout(s)",
            case.signature.id,
            sigs.len()
        ),
    });

    // E6 or baseline: this host's compiler on the case.
    let cross = captured_on_riscv(case) != cfg!(target_arch = "riscv64");
    let (id, what) = if cross {
        ("E6", "cross-host replay: the case on this host's compiler")
    } else {
        ("baseline", "replay on the capturing host's compiler")
    };
    let first = &seen[0];
    evidence.push(first.evidence(
        id,
        what,
        &host,
        format!("`{}`: {}", replay.join(" "), first.note),
    ));

    // E5: emulation.
    evidence.extend(emulation(dir, case, &replay, opts));

    // E2: the faulting instruction of a RISC-V crash.
    evidence.push(faulting_instruction(
        case,
        &evidence_crashes(dir, case, &replay, opts),
    ));

    // E4: V off on a RISC-V host.
    evidence.push(vector_off(case, &replay_cmd, &sym));

    // E7: resources.
    evidence.push(resources(case, timeouts, &replay_cmd, &sym));
    evidence
}

/// The `-cpu` settings of E5 and their evidence ids.
pub const E5_CPUS: [(&str, &str); 3] = [
    ("E5-v-off", "rv64,v=false"),
    ("E5-v128", "rv64,v=true,vlen=128"),
    ("E5-v256", "rv64,v=true,vlen=256"),
];

fn e5_compiler(opts: &Options) -> Option<(PathBuf, PathBuf)> {
    let root = opts.sysroot.clone()?;
    let compiler = opts
        .compiler
        .clone()
        .unwrap_or_else(|| root.join(SYSROOT_CLANG));
    Some((root, compiler))
}

/// Library directories of a riscv64 sysroot, for symbolizing frames of emulated runs.
pub fn sysroot_lib_dirs(root: &Path, compiler: &Path) -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    if let Some(bin) = compiler.parent() {
        dirs.push(bin.join("../lib"));
        dirs.push(bin.to_path_buf());
    }
    for d in [
        "usr/lib/riscv64-linux-gnu",
        "lib/riscv64-linux-gnu",
        "usr/lib/llvm-19/lib",
    ] {
        dirs.push(root.join(d));
    }
    dirs
}

/// Adds `--target=TRIPLE` when the command names no target (the emulated compiler's default
/// target differs from the case's host).
fn with_target(args: &[String], triple: &str) -> Vec<String> {
    let named = args
        .iter()
        .any(|a| a.starts_with("--target=") || a == "-target" || a == "--target");
    let mut v = args.to_vec();
    if !named {
        v.insert(0, format!("--target={triple}"));
    }
    v
}

fn qemu_cmd(
    dir: &Path,
    opts: &Options,
    root: &Path,
    cpu: &str,
    compiler: &Path,
    args: &[String],
) -> Cmd {
    Cmd::new(&opts.emulator)
        .args([
            "-L".as_ref(),
            root.as_os_str(),
            "-cpu".as_ref(),
            cpu.as_ref(),
        ])
        .args([compiler])
        .args(args)
        .cwd(dir)
        .timeout(TIMEOUT)
        .output_cap(1 << 20)
}

fn emulation(dir: &Path, case: &Case, replay: &[String], opts: &Options) -> Vec<Evidence> {
    let experiment = "emulation: a riscv64 clang under qemu-user";
    let Some((root, compiler)) = e5_compiler(opts) else {
        return E5_CPUS
            .iter()
            .map(|(id, cpu)| {
                not_run(
                    id,
                    experiment,
                    &format!("qemu-riscv64 -cpu {cpu}"),
                    "no riscv64 sysroot: pass --sysroot DIR or set ICEPICK_RISCV64_SYSROOT",
                )
            })
            .collect();
    };
    let args = if captured_on_riscv(case) {
        replay[1..].to_vec()
    } else {
        with_target(&replay[1..], "x86_64-linux-gnu")
    };
    let mut cmds: Vec<Cmd> = E5_CPUS
        .iter()
        .map(|(_, cpu)| qemu_cmd(dir, opts, &root, cpu, &compiler, &args))
        .collect();
    cmds.push(
        qemu_cmd(
            dir,
            opts,
            &root,
            "rv64",
            &compiler,
            &["--version".to_string()],
        )
        .timeout(Duration::from_secs(60)),
    );
    let outs = exec::run_all(&cmds, cmds.len());
    let version = outs[3]
        .as_ref()
        .ok()
        .and_then(|o| {
            String::from_utf8_lossy(&o.stdout)
                .lines()
                .next()
                .map(|l| l.trim().to_string())
        })
        .unwrap_or_default();
    let ours = crate::versions::major_of(&version);
    let theirs = crate::versions::major_of(&case.compiler.version);
    let versions_note = if ours.is_some() && ours == theirs {
        format!("emulated `{version}`, case `{}`", case.compiler.version)
    } else {
        format!(
            "versions differ (emulated `{version}`, case `{}`): the comparison is weak",
            case.compiler.version
        )
    };
    let sym = Symbolizer::new(sysroot_lib_dirs(&root, &compiler));
    E5_CPUS
        .iter()
        .zip(&outs)
        .map(|((id, cpu), out)| {
            let seen = compare(&case.signature, out, &sym);
            let on = format!(
                "{} -L {} -cpu {cpu}",
                opts.emulator.display(),
                root.display()
            );
            seen.evidence(
                id,
                experiment,
                &on,
                format!("{}: {}; {versions_note}", compiler.display(), seen.note),
            )
        })
        .collect()
}

/// The crashes E2 may decode: the case's own (when it came from a RISC-V host) and those of
/// emulated runs that died of a signal. Reruns one emulated run (V on) to get them, only when
/// the case's crash is a signal death.
fn evidence_crashes(
    dir: &Path,
    case: &Case,
    replay: &[String],
    opts: &Options,
) -> Vec<(Crash, Option<PathBuf>)> {
    let mut v = Vec::new();
    if captured_on_riscv(case) {
        v.push((case.crash.clone(), opts.sysroot.clone()));
    }
    if case.crash.signal.is_some() && !captured_on_riscv(case) {
        if let Some((root, compiler)) = e5_compiler(opts) {
            let args = with_target(&replay[1..], "x86_64-linux-gnu");
            let out = exec::run(&qemu_cmd(dir, opts, &root, E5_CPUS[1].1, &compiler, &args));
            if let Ok(out) = out {
                if let Some(mut cr) =
                    crash::parse(&out.stderr_text(), crate::capture::exit_info(out.status))
                {
                    Symbolizer::new(sysroot_lib_dirs(&root, &compiler)).symbolize(&mut cr);
                    v.push((cr, Some(root)));
                }
            }
        }
    }
    v
}

fn is_handler_frame(f: &crash::Frame) -> bool {
    let s = f.symbol.as_deref().unwrap_or("");
    let m = f.module.as_deref().unwrap_or("");
    [
        "SignalHandler",
        "PrintStackTrace",
        "RunSignalHandlers",
        "__restore_rt",
        "rt_sigreturn",
    ]
    .iter()
    .any(|p| s.contains(p))
        || m.contains("vdso")
}

/// The frame that faulted: the one after the signal handler's frames (or the innermost).
pub fn faulting_frame(cr: &Crash) -> Option<&crash::Frame> {
    let start = cr
        .frames
        .iter()
        .rposition(is_handler_frame)
        .map_or(0, |i| i + 1);
    cr.frames[start.min(cr.frames.len())..]
        .iter()
        .find(|f| f.module.is_some() && f.offset.is_some())
}

fn faulting_instruction(case: &Case, crashes: &[(Crash, Option<PathBuf>)]) -> Evidence {
    let experiment = "faulting instruction: decode module+offset of the faulting frame";
    let host = this_host();
    if !matches!(
        case.crash.kind,
        CrashKind::Segfault
            | CrashKind::IllegalInstruction
            | CrashKind::BusError
            | CrashKind::Trap
            | CrashKind::StackOverflow
            | CrashKind::OtherSignal
    ) {
        let mut e = not_run(
            "E2",
            experiment,
            &host,
            format!(
                "the crash is {:?}, not a signal at an instruction: nothing to decode",
                case.crash.kind
            ),
        );
        e.outcome = o::NOT_APPLICABLE.into();
        return e;
    }
    for (cr, root) in crashes {
        let Some(f) = faulting_frame(cr) else {
            continue;
        };
        let module = f.module.as_deref().unwrap_or("");
        let offset = f.offset.unwrap_or(0);
        let candidates = [
            Some(PathBuf::from(module)),
            root.as_ref()
                .map(|r| r.join(module.trim_start_matches('/'))),
        ];
        for path in candidates.into_iter().flatten() {
            let Ok(bytes) = std::fs::read(&path) else {
                continue;
            };
            let Ok(h) = crate::elf::header(&bytes) else {
                continue;
            };
            if h.e_machine != crate::elf::EM_RISCV {
                continue;
            }
            let Some(insn) = crate::elf::vaddr_to_offset(&bytes, offset)
                .and_then(|off| crate::elf::decode_at(&bytes, off as usize))
            else {
                continue;
            };
            let outcome = match insn.what {
                crate::elf::Decoded::Vector(_) => o::VECTOR,
                crate::elf::Decoded::Trap(_) => o::TRAP,
                crate::elf::Decoded::Other => o::OTHER,
            };
            return Evidence {
                id: "E2".into(),
                experiment: experiment.into(),
                ran: true,
                host_or_emulator: host,
                outcome: outcome.into(),
                signature: None,
                coarse_signature: None,
                detail: format!(
                    "#{} {}+0x{offset:x} ({}): {}",
                    f.index,
                    module,
                    f.symbol.as_deref().unwrap_or("?"),
                    insn.describe()
                ),
            };
        }
    }
    not_run(
        "E2",
        experiment,
        &host,
        "no frame with module+offset of a readable RISC-V ELF (the case is not from a RISC-V host and no emulated run died of a signal)",
    )
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
            e.detail = format!("the case's crash is {:?}", case.crash.kind);
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
            e.detail = format!("the crash is {k:?}: not a kill, timeout or stack overflow");
        }
    }
    e
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(i: u32, sym: Option<&str>, module: &str, off: u64) -> crash::Frame {
        crash::Frame {
            index: i,
            symbol: sym.map(String::from),
            module: Some(module.into()),
            offset: Some(off),
            ..Default::default()
        }
    }

    #[test]
    fn the_faulting_frame_follows_the_signal_handler() {
        let cr = Crash {
            family: crash::Family::Clang,
            kind: CrashKind::IllegalInstruction,
            signal: Some(4),
            message: None,
            tool: None,
            in_process: None,
            cc1_exit_code: None,
            program_arguments: None,
            pretty_stack: vec![],
            frames: vec![
                frame(
                    0,
                    Some("llvm::sys::PrintStackTrace(llvm::raw_ostream&, int)"),
                    "libLLVM.so",
                    1,
                ),
                frame(1, Some("SignalHandler(int)"), "libLLVM.so", 2),
                frame(2, None, "linux-vdso.so.1", 3),
                frame(3, None, "libz.so.1", 0x40),
                frame(4, Some("main"), "clang", 5),
            ],
            gcc_pass: None,
            reproducer_files: vec![],
            source_errors: 0,
        };
        assert_eq!(faulting_frame(&cr).map(|f| f.index), Some(3));
    }

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

    #[test]
    fn a_target_is_added_only_when_none_is_named() {
        let a = vec!["-c".to_string(), "--target=riscv64-linux-gnu".into()];
        assert_eq!(with_target(&a, "x86_64-linux-gnu"), a);
        let b = vec!["-c".to_string()];
        assert_eq!(
            with_target(&b, "x86_64-linux-gnu"),
            vec!["--target=x86_64-linux-gnu".to_string(), "-c".into()]
        );
    }
}
