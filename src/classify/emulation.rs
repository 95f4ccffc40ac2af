//! Experiments that need a riscv64 compiler binary: E5 (the compiler under `qemu-riscv64`
//! with V off and on), E2 (decode the instruction a RISC-V crash faulted on) and E3 (a static
//! scan of the compiler and its shared libraries for vector code). They run on any host.
//!
//! The riscv64 compiler is, in this order: `--compiler`; the case's own compiler when the case
//! was captured under an emulator (`icepick capture --emulator`) and that file is here, with
//! the emulator's `-L` as the sysroot; the clang in `--sysroot` (or `ICEPICK_RISCV64_SYSROOT`).

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::experiments::{compare, not_run, this_host, TIMEOUT};
use super::outcome as o;
use super::{kernel_log, Evidence, Options, SYSROOT_CLANG};
use crate::case::Case;
use crate::crash::{self, Crash, CrashKind, Symbolizer};
use crate::exec::{self, Cmd};

/// The `-cpu` settings of E5 and their evidence ids.
pub const E5_CPUS: [(&str, &str); 3] = [
    ("E5-v-off", "rv64,v=false"),
    ("E5-v128", "rv64,v=true,vlen=128"),
    ("E5-v256", "rv64,v=true,vlen=256"),
];

/// The riscv64 compiler E5, E2 and E3 use, and the sysroot its libraries come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Riscv64Compiler {
    pub root: Option<PathBuf>,
    pub compiler: PathBuf,
}

/// Which riscv64 compiler to use (module doc), or `None` when there is none.
pub fn riscv64_compiler(case: &Case, opts: &Options) -> Option<Riscv64Compiler> {
    if let Some(c) = &opts.compiler {
        return Some(Riscv64Compiler {
            root: opts.sysroot.clone(),
            compiler: c.clone(),
        });
    }
    let own = Path::new(&case.compiler.resolved_path);
    if !case.emulator.is_empty() && is_riscv_elf(own) {
        return Some(Riscv64Compiler {
            root: crate::case::emulator_root(&case.emulator).or_else(|| opts.sysroot.clone()),
            compiler: own.to_path_buf(),
        });
    }
    opts.sysroot.as_ref().map(|root| Riscv64Compiler {
        root: Some(root.clone()),
        compiler: root.join(SYSROOT_CLANG),
    })
}

fn is_riscv_elf(path: &Path) -> bool {
    crate::elf::is_riscv_file(path)
}

/// Library directories of a riscv64 sysroot, for symbolizing frames of emulated runs.
pub fn sysroot_lib_dirs(root: Option<&Path>, compiler: &Path) -> Vec<PathBuf> {
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
        if let Some(root) = root {
            dirs.push(root.join(d));
        }
    }
    dirs
}

/// Adds `--target=TRIPLE` when the command names no target (the emulated compiler's default
/// target differs from the case's host).
pub fn with_target(args: &[String], triple: &str) -> Vec<String> {
    let named = args
        .iter()
        .any(|a| a.starts_with("--target=") || a == "-target" || a == "--target");
    let mut v = args.to_vec();
    if !named {
        v.insert(0, format!("--target={triple}"));
    }
    v
}

fn qemu_cmd(dir: &Path, opts: &Options, rc: &Riscv64Compiler, cpu: &str, args: &[String]) -> Cmd {
    let mut c = Cmd::new(&opts.emulator);
    if let Some(root) = &rc.root {
        c = c.args(["-L".as_ref(), root.as_os_str()]);
    }
    c.args(["-cpu", cpu])
        .args([&rc.compiler])
        .args(args)
        .cwd(dir)
        .timeout(TIMEOUT)
        .output_cap(1 << 20)
}

/// The arguments of the case's replay for the riscv64 compiler: a case from another host gets
/// that host's target named, so the emulated compiler compiles the same thing.
fn emulated_args(case: &Case, replay: &[String]) -> Vec<String> {
    if super::experiments::captured_on_riscv(case) {
        replay[1..].to_vec()
    } else {
        with_target(
            &replay[1..],
            &format!("{}-linux-gnu", std::env::consts::ARCH),
        )
    }
}

/// What E5 is, in its evidence.
pub const E5_EXPERIMENT: &str = "emulation: a riscv64 compiler under qemu-user";

/// What E2 is, in its evidence.
pub const E2_EXPERIMENT: &str = "faulting instruction: decode module+offset of the faulting frame";

/// E5: the replay under the emulator with V off, and on at VLEN 128 and 256.
pub fn emulation(dir: &Path, case: &Case, replay: &[String], opts: &Options) -> Vec<Evidence> {
    let experiment = E5_EXPERIMENT;
    let Some(rc) = riscv64_compiler(case, opts) else {
        return E5_CPUS
            .iter()
            .map(|(id, cpu)| {
                not_run(
                    id,
                    experiment,
                    &format!("qemu-riscv64 -cpu {cpu}"),
                    "no riscv64 compiler: pass --sysroot DIR (or set ICEPICK_RISCV64_SYSROOT) or --compiler PATH",
                )
            })
            .collect();
    };
    let args = emulated_args(case, replay);
    let mut cmds: Vec<Cmd> = E5_CPUS
        .iter()
        .map(|(_, cpu)| qemu_cmd(dir, opts, &rc, cpu, &args))
        .collect();
    cmds.push(
        qemu_cmd(dir, opts, &rc, "rv64", &["--version".to_string()])
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
    let versions_note = if version == case.compiler.version {
        format!("the case's compiler version `{version}`")
    } else if crate::versions::major_of(&version).is_some()
        && crate::versions::major_of(&version) == crate::versions::major_of(&case.compiler.version)
    {
        format!("emulated `{version}`, case `{}`", case.compiler.version)
    } else {
        format!(
            "versions differ (emulated `{version}`, case `{}`): the comparison is weak",
            case.compiler.version
        )
    };
    let sym = Symbolizer::new(sysroot_lib_dirs(rc.root.as_deref(), &rc.compiler));
    E5_CPUS
        .iter()
        .zip(&outs)
        .map(|((id, cpu), out)| {
            let seen = compare(case, out, &sym);
            let on = match &rc.root {
                Some(root) => format!(
                    "{} -L {} -cpu {cpu}",
                    opts.emulator.display(),
                    root.display()
                ),
                None => format!("{} -cpu {cpu}", opts.emulator.display()),
            };
            seen.evidence(
                id,
                experiment,
                &on,
                format!("{}: {}; {versions_note}", rc.compiler.display(), seen.note),
            )
        })
        .collect()
}

/// The crashes E2 may decode: the case's own (when it came from a RISC-V host) and those of
/// emulated runs that died of a signal. Reruns one emulated run (V on) to get them, only when
/// the case's crash is a signal death.
pub fn evidence_crashes(
    dir: &Path,
    case: &Case,
    replay: &[String],
    opts: &Options,
) -> Vec<(Crash, Option<PathBuf>)> {
    let mut v = Vec::new();
    let rc = riscv64_compiler(case, opts);
    let on_riscv = super::experiments::captured_on_riscv(case);
    if on_riscv {
        let root = rc.as_ref().and_then(|r| r.root.clone());
        v.push((case.crash.clone(), root));
    }
    if case.crash.signal.is_some() && !on_riscv {
        if let Some(rc) = rc {
            let args = emulated_args(case, replay);
            let out = exec::run(&qemu_cmd(dir, opts, &rc, E5_CPUS[1].1, &args));
            if let Ok(out) = out {
                if let Some(mut cr) = crash::parse(&out.stderr_text(), out.status.exit_info()) {
                    Symbolizer::new(sysroot_lib_dirs(rc.root.as_deref(), &rc.compiler))
                        .symbolize(&mut cr);
                    v.push((cr, rc.root));
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

pub fn faulting_instruction(
    dir: &Path,
    case: &Case,
    opts: &Options,
    crashes: &[(Crash, Option<PathBuf>)],
) -> Evidence {
    let experiment = E2_EXPERIMENT;
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
                "the crash is a {}, not a signal at an instruction: nothing to decode",
                crate::crash::kind_words(case.crash.kind)
            ),
        );
        e.outcome = o::NOT_APPLICABLE.into();
        return e;
    }
    let mut log_note = String::new();
    for source in [from_core(dir, case, opts), from_kernel_log(dir, case, opts)] {
        match source {
            Ok(Some(e)) => return e,
            Ok(None) => {}
            Err(why) => log_note += &format!("; {why}"),
        }
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
            let Some(bytes) = read_riscv_elf(&path) else {
                continue;
            };
            let Some(insn) = crate::elf::vaddr_to_offset(&bytes, offset)
                .and_then(|off| crate::elf::decode_at(&bytes, off as usize))
            else {
                continue;
            };
            let detail = format!(
                "#{} {}+0x{offset:x} ({}): {}{log_note}",
                f.index,
                module,
                f.symbol.as_deref().unwrap_or("?"),
                insn.describe()
            );
            return decoded(experiment, &host, &insn, detail);
        }
    }
    not_run(
        "E2",
        experiment,
        &host,
        format!("no frame with module+offset of a readable RISC-V ELF (the case is not from a RISC-V host and no emulated run died of a signal){log_note}"),
    )
}

/// The kernel log saved in the case ([`super::KERNEL_LOG`]): `Ok(None)` when there is none,
/// `Err` (a note for the evidence) when it is not a file inside the case or cannot be read.
fn read_kernel_log(dir: &Path) -> Result<Option<String>, String> {
    // A case from elsewhere may hold a `kernel.log` symlink leading out of it: not read.
    match Case::file(dir, super::KERNEL_LOG, super::KERNEL_LOG) {
        Ok(Some(_)) => {}
        Ok(None) => return Ok(None),
        Err(_) => {
            return Err(format!(
                "{} in the case is not a file inside it (a symlink out of the case?); not read",
                super::KERNEL_LOG
            ))
        }
    }
    match crate::case::fileio::read(dir, super::KERNEL_LOG, crate::case::fileio::cap::LOG) {
        Ok(Some(b)) => Ok(Some(String::from_utf8_lossy(&b).into_owned())),
        Ok(None) => Ok(None),
        Err(e) => Err(format!("{e}; not read")),
    }
}

/// The compiler's report among the kernel log's `faults`: of the case's signal when the case
/// has one, the latest of them. Another process's report says nothing about this crash: no
/// fallback to it.
fn compilers_fault<'f>(
    faults: &'f [kernel_log::KernelFault],
    case: &Case,
) -> Result<&'f kernel_log::KernelFault, String> {
    let names = compiler_task_names(case);
    let mine: Vec<&kernel_log::KernelFault> =
        faults.iter().filter(|f| names.contains(&f.comm)).collect();
    mine.iter()
        .rev()
        .find(|f| Some(f.signal) == case.crash.signal)
        .or(mine.last())
        .copied()
        .ok_or_else(|| {
            let others: std::collections::BTreeSet<&str> =
                faults.iter().map(|f| f.comm.as_str()).collect();
            format!(
                "the kernel log has no report from the compiler ({}), only from: {}",
                names.join(", "),
                others.into_iter().collect::<Vec<_>>().join(", ")
            )
        })
}

/// E2 from the kernel log saved in the case ([`super::KERNEL_LOG`]): `Ok(None)` when there is
/// none, `Err` (a note for the evidence) when it cannot be decoded.
fn from_kernel_log(dir: &Path, case: &Case, opts: &Options) -> Result<Option<Evidence>, String> {
    let Some(text) = read_kernel_log(dir)? else {
        return Ok(None);
    };
    let faults = kernel_log::parse(&text);
    let fault = compilers_fault(&faults, case)?;
    let whose = match case.crash.signal {
        Some(sig) if sig != fault.signal => format!(
            " (signal {} in the log, {sig} in the case: maybe another crash)",
            fault.signal
        ),
        _ => String::new(),
    };
    let evidence = |insn: &crate::elf::Instruction, detail: String| {
        let detail = format!("kernel log: `{}`{whose}: {detail}", fault.line);
        Some(decoded(
            "faulting instruction: decode the pc of the host kernel's report",
            "kernel log of the crashing host",
            insn,
            detail,
        ))
    };
    if let Some(insn) = fault.trapped_instruction() {
        let detail = format!("the trapped instruction (badaddr): {}", insn.describe());
        return Ok(evidence(&insn, detail));
    }
    let (Some(m), Some(pc)) = (&fault.mapping, fault.pc()) else {
        return Err("the kernel log's report names no pc and mapped file".into());
    };
    let Some((path, bytes)) = compiler_file_named(case, opts, &m.name) else {
        return Err(format!(
            "the kernel log's pc is in {}, which is not among the compiler's RISC-V files here (pass --sysroot DIR or --compiler PATH for the crashing host's compiler)",
            m.name
        ));
    };
    match fault.instruction_in(&bytes) {
        Some((off, insn)) => {
            let detail = format!(
                "pc 0x{pc:x} = {}+0x{off:x} (file offset): {}",
                path.display(),
                insn.describe()
            );
            Ok(evidence(&insn, detail))
        }
        None => Err(format!(
            "the kernel log's pc 0x{pc:x} does not fall in an executable segment of {}",
            path.display()
        )),
    }
}

/// The compiler's RISC-V file whose base name is `name` (the kernel prints no directory):
/// the compiler itself, or a library in its directories ([`sysroot_lib_dirs`]). Reads only
/// that file, not the whole closure.
fn compiler_file_named(case: &Case, opts: &Options, name: &str) -> Option<(PathBuf, Vec<u8>)> {
    let (compiler, root) = match riscv64_compiler(case, opts) {
        Some(rc) => (rc.compiler, rc.root),
        None => (PathBuf::from(&case.compiler.resolved_path), None),
    };
    // The kernel names the file a symlink points to.
    let compiler =
        crate::elf::closure::canonicalize(&crate::elf::HostFs, root.as_deref(), &compiler);
    let itself = (compiler.file_name()? == name).then(|| compiler.clone());
    itself
        .into_iter()
        .chain(
            sysroot_lib_dirs(root.as_deref(), &compiler)
                .into_iter()
                .map(|d| d.join(name)),
        )
        .find_map(|p| read_riscv_elf(&p).map(|bytes| (p, bytes)))
}

/// E2 from `--core FILE` (or the core an earlier run named, [`super::CORE_PATH`]): `Ok(None)`
/// when there is none, `Err` (a note) when it cannot be decoded.
fn from_core(dir: &Path, case: &Case, opts: &Options) -> Result<Option<Evidence>, String> {
    let saved = crate::case::fileio::read(dir, super::CORE_PATH, crate::case::fileio::cap::LOG)
        .ok()
        .flatten()
        .map(|p| PathBuf::from(String::from_utf8_lossy(&p).trim_end()));
    let Some(path) = opts.core.clone().or(saved) else {
        return Ok(None);
    };
    let path = &path;
    let data = super::map_core(path).map_err(|e| e.to_string())?;
    let fault =
        super::core_file::read(&data).map_err(|e| format!("core file {}: {e}", path.display()))?;
    let signal = fault
        .signal
        .map(|s| format!("signal {s}, "))
        .unwrap_or_default();
    let evidence = |insn: &crate::elf::Instruction, whence: String| {
        let detail = format!(
            "core `{}`: {signal}pc 0x{:x}, {whence}: {}",
            path.display(),
            fault.pc,
            insn.describe()
        );
        Some(decoded(
            "faulting instruction: decode the pc of the core file",
            "core file of the crashed compiler",
            insn,
            detail,
        ))
    };
    if let Some(insn) = &fault.in_memory {
        return Ok(evidence(insn, "read from the core's memory".into()));
    }
    let Some((file, offset)) = &fault.mapped else {
        return Err(format!(
            "core file {}: the pc 0x{:x} is neither in the core's memory nor in a mapped file it names",
            path.display(),
            fault.pc
        ));
    };
    // The file as the crashed host had it: at its path, under the sysroot, or the compiler
    // closure's file of that name.
    // Under the sysroot first: this host may have a file of the same path built for itself,
    // which is skipped (only RISC-V files are decoded).
    let root = riscv64_compiler(case, opts).and_then(|rc| rc.root);
    let candidates = [
        root.map(|r| r.join(file.trim_start_matches('/'))),
        Some(PathBuf::from(file)),
    ];
    for p in candidates.into_iter().flatten() {
        let Some(bytes) = read_riscv_elf(&p) else {
            continue;
        };
        let Ok(at) = usize::try_from(*offset) else {
            continue;
        };
        if let Some(insn) = crate::elf::decode_at(&bytes, at) {
            return Ok(evidence(
                &insn,
                format!("{}+0x{offset:x} (file offset)", p.display()),
            ));
        }
    }
    Err(format!(
        "core file {}: the pc is in {file}, which is not here as a RISC-V file (pass --sysroot DIR holding the crashed host's files)",
        path.display()
    ))
}

/// The task names (`comm`, at most 15 bytes) the compiler's processes have: the base names of
/// the command's program and of the file it resolved to.
fn compiler_task_names(case: &Case) -> Vec<String> {
    let mut names: Vec<String> = [
        case.command.first().map(String::as_str),
        Some(case.compiler.resolved_path.as_str()),
    ]
    .into_iter()
    .flatten()
    .filter_map(|p| Path::new(p).file_name())
    .map(|n| n.to_string_lossy().chars().take(15).collect())
    .collect();
    names.dedup();
    names
}

/// The file's bytes when it is a RISC-V ELF file (E2 decodes nothing else: a file of the
/// same path on this host may be its own build).
fn read_riscv_elf(path: &Path) -> Option<Vec<u8>> {
    // Paths come from the case's frames: look at the header before reading the whole file.
    if !crate::elf::is_riscv_file(path) {
        return None;
    }
    let bytes = std::fs::read(path).ok()?;
    (crate::elf::header(&bytes).ok()?.e_machine == crate::elf::EM_RISCV).then_some(bytes)
}

/// E2 that ran and decoded `insn`.
fn decoded(experiment: &str, on: &str, insn: &crate::elf::Instruction, detail: String) -> Evidence {
    Evidence {
        id: "E2".into(),
        experiment: experiment.into(),
        ran: true,
        host_or_emulator: on.into(),
        outcome: outcome_of(insn).into(),
        signature: None,
        coarse_signature: None,
        frames: Vec::new(),
        detail,
    }
}

fn outcome_of(insn: &crate::elf::Instruction) -> &'static str {
    match insn.what {
        crate::elf::Decoded::Vector(_) => o::VECTOR,
        crate::elf::Decoded::Trap(_) => o::TRAP,
        crate::elf::Decoded::Other => o::OTHER,
    }
}

/// E3: the riscv64 compiler and its shared libraries scanned for vector code (what
/// `icepick inspect` does). Vector code in the closure is what a host's V support (or its
/// dialect) can break; none at all points away from the vector unit.
pub fn static_scan(case: &Case, opts: &Options) -> Evidence {
    let experiment =
        "static scan: vector instructions in the riscv64 compiler and its shared libraries";
    let Some(rc) = riscv64_compiler(case, opts).filter(|rc| is_riscv_elf(&rc.compiler)) else {
        return not_run(
            "E3",
            experiment,
            &this_host(),
            "no riscv64 compiler binary to scan: pass --sysroot DIR or --compiler PATH",
        );
    };
    let closure = crate::elf::resolve(
        &crate::elf::HostFs,
        std::slice::from_ref(&rc.compiler),
        rc.root.as_deref(),
    );
    let bytes: Vec<&[u8]> = closure.files.iter().map(|f| f.bytes.as_slice()).collect();
    let scans = crate::elf::scan_all(&bytes);
    let mut totals = crate::elf::Counts::default();
    let mut with_code: Vec<(String, crate::elf::Counts)> = Vec::new();
    for (f, s) in closure.files.iter().zip(&scans) {
        if let Ok(s) = s {
            totals.add(&s.counts);
            if s.counts.vector_instructions > 0 {
                let name = f.path.file_name().map_or_else(
                    || f.path.display().to_string(),
                    |n| n.to_string_lossy().into_owned(),
                );
                with_code.push((name, s.counts));
            }
        }
    }
    with_code.sort_by_key(|w| std::cmp::Reverse(w.1.vector_instructions));
    let verdict = crate::elf::Verdict::of(&totals);
    let listed: Vec<String> = with_code
        .iter()
        .take(6)
        .map(|(n, c)| {
            format!(
                "{n} ({}, {} RVV-1.0-only, {} XTheadVector-only)",
                c.vector_instructions, c.rvv1_only, c.xthead_only
            )
        })
        .collect();
    let detail = format!(
        "{} file(s) scanned, {} missing; {} vector instruction(s): {} RVV-1.0-only, {} XTheadVector-only, {} vector CSR access(es){}{}",
        closure.files.len(),
        closure.missing.len(),
        totals.vector_instructions,
        totals.rvv1_only,
        totals.xthead_only,
        totals.vector_csr,
        if listed.is_empty() { "" } else { "; in " },
        listed.join(", ")
    );
    Evidence {
        id: "E3".into(),
        experiment: experiment.into(),
        ran: true,
        host_or_emulator: format!("static, {}", rc.compiler.display()),
        outcome: verdict.as_str().into(),
        signature: None,
        coarse_signature: None,
        frames: Vec::new(),
        detail,
    }
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
