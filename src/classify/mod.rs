//! The classify stage: is a crash the compiler's fault, or the RISC-V host's
//! (its vector unit, its kernel), or the machine's (memory, time)? Decided by experiment,
//! with every experiment recorded as [`Evidence`] in `case.json`'s `classification` section.
//!
//! Experiments ([`experiments`], [`emulation`]), named as in `docs/classify.md`:
//! E1 determinism (serial and parallel reruns on the capturing host, or under the emulator the
//! case was captured under), E5 emulation (a riscv64 compiler under `qemu-riscv64` with V off
//! and on), E3 a static scan of that compiler's closure for vector code, E6 cross-host replay
//! (the case on this host's clang of the same version when the case came from another host;
//! otherwise the replay is the `baseline`), E2 the faulting instruction of a RISC-V crash (from
//! a core file, [`core_file`], the host's kernel log, [`kernel_log`], or the stack dump's
//! module+offset), E4
//! V off through `prctl` on a RISC-V host, E7 resources, and H the capturing host's facts
//! ([`host_facts`]). The verdict
//! ([`verdict::decide`]) is a pure function over the evidence implementing the decision table
//! of `docs/classify.md`, first matching row wins.

pub mod core_file;
pub mod emulation;
pub mod experiments;
pub mod host_facts;
pub mod kernel_log;
pub mod verdict;

use std::path::{Path, PathBuf};

use crate::case::{Case, CaseError};

pub use verdict::{decide, rule_name, Decision};

/// Environment variable naming the riscv64 clang sysroot when `--sysroot` is not given.
pub const SYSROOT_ENV: &str = "ICEPICK_RISCV64_SYSROOT";

/// The compiler inside a sysroot that E5 runs by default.
pub const SYSROOT_CLANG: &str = "usr/lib/llvm-19/bin/clang";

pub use crate::case::classification::{outcome, parse_section, Classification, Evidence};

/// What `icepick classify` was asked to do.
#[derive(Debug, Clone)]
pub struct Options {
    /// E1 reruns.
    pub runs: u32,
    /// The user-mode emulator for E5.
    pub emulator: PathBuf,
    /// Root of a riscv64 system with a clang in it (E5); `None`: E5 is not run.
    pub sysroot: Option<PathBuf>,
    /// The riscv64 compiler for E5 (default `SYSROOT/usr/lib/llvm-19/bin/clang`).
    pub compiler: Option<PathBuf>,
    /// A kernel log of the host where the compiler crashed, for E2; saved into the case as
    /// [`KERNEL_LOG`].
    pub kernel_log: Option<PathBuf>,
    /// A core file of the crashed compiler, for E2.
    pub core: Option<PathBuf>,
    /// The end of the triage budget: an experiment that would start after it is not run, and
    /// E1's reruns stop at it (its evidence says so; see `experiments::run_all`).
    pub deadline: Option<std::time::Instant>,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            runs: 5,
            emulator: PathBuf::from("qemu-riscv64"),
            // An empty value counts as unset (`VAR= icepick …`, or a script whose lookup failed).
            sysroot: std::env::var_os(SYSROOT_ENV)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from),
            compiler: None,
            kernel_log: None,
            core: None,
            deadline: None,
        }
    }
}

/// Why classification could not run.
#[derive(Debug, thiserror::Error)]
pub enum ClassifyError {
    #[error(transparent)]
    Case(#[from] CaseError),
    #[error("riscv64 compiler {0} not found; fetch a sysroot with scripts/fetch-riscv64-clang (--sysroot DIR) or name the compiler with --compiler")]
    NoRiscv64Compiler(PathBuf),
    #[error("kernel log {path}: {why}")]
    KernelLog { path: PathBuf, why: String },
    #[error("core file {path}: {why}")]
    Core { path: PathBuf, why: String },
}

impl crate::error::ExitCoded for ClassifyError {
    fn exit_code(&self) -> u8 {
        match self {
            ClassifyError::Case(e) => crate::error::ExitCoded::exit_code(e),
            ClassifyError::NoRiscv64Compiler(_)
            | ClassifyError::KernelLog { .. }
            | ClassifyError::Core { .. } => crate::error::USAGE,
        }
    }
}

/// Maps a core file (cores of a compiler are large: mapped, not read).
pub(crate) fn map_core(path: &Path) -> Result<memmap2::Mmap, ClassifyError> {
    let err = |why: String| ClassifyError::Core {
        path: path.to_path_buf(),
        why,
    };
    let f = open_core(path).map_err(|e| err(format!("cannot open it: {e}")))?;
    // SAFETY: a read-only mapping of a core file nobody writes while classify reads it; a
    // core changed underneath would at worst decode a wrong instruction.
    unsafe { memmap2::Mmap::map(&f) }.map_err(|e| err(format!("cannot map it: {e}")))
}

/// Opens a core file for reading: without blocking (a FIFO named as the core, by a user or
/// by a case from someone else, would wait for a writer forever) and only when it is a
/// regular file (a device or a FIFO is no core).
fn open_core(path: &Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)?;
    if !f.metadata()?.is_file() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "not a regular file",
        ));
    }
    Ok(f)
}

/// The case file holding the kernel log given to `classify --kernel-log` (E2 reads it).
pub const KERNEL_LOG: &str = "kernel.log";

/// The case file naming (absolute path, one line) the core given to `classify --core`: cores
/// are too large to copy, so later runs read it where it is.
pub const CORE_PATH: &str = "core-path.txt";

/// Checks the kernel log has an "unhandled signal" report and saves it into the case.
fn save_kernel_log(dir: &Path, log: &Path) -> Result<(), ClassifyError> {
    let err = |why: String| ClassifyError::KernelLog {
        path: log.to_path_buf(),
        why,
    };
    let bytes = std::fs::read(log).map_err(|e| err(format!("cannot read it: {e}")))?;
    if kernel_log::parse(&String::from_utf8_lossy(&bytes)).is_empty() {
        return Err(err(
            "no \"unhandled signal\" report in it; pass the kernel log (`dmesg` or `journalctl -k`) of the host where the compiler crashed, with the lines after the report (the registers)".into(),
        ));
    }
    crate::case::fileio::write(dir, KERNEL_LOG, &bytes)
        .map_err(|e| err(format!("cannot save it into the case: {e}")))
}

/// Runs the experiments on the case in `dir`, decides, and saves the section into
/// `case.json`; the caller re-renders `report.md`.
pub fn classify(dir: &Path, opts: &Options) -> Result<Classification, ClassifyError> {
    let (mut case, _lock) = Case::load_for_writing(dir)?;
    if let Some(log) = &opts.kernel_log {
        save_kernel_log(dir, log)?;
    }
    if let Some(core) = &opts.core {
        core_file::read(&map_core(core)?).map_err(|e| ClassifyError::Core {
            path: core.clone(),
            why: e.to_string(),
        })?;
        let absolute = std::path::absolute(core).unwrap_or_else(|_| core.clone());
        let line = format!("{}\n", absolute.display());
        crate::case::fileio::write(dir, CORE_PATH, line.as_bytes())?;
    }
    // A case with no RISC-V host, target or emulator: the riscv64 compiler under qemu (E5)
    // and its static scan (E3) say nothing about it, so they are not run (nor reported).
    let without_riscv;
    let opts = if crate::case::involves_riscv(&case) {
        opts
    } else {
        without_riscv = Options {
            sysroot: None,
            compiler: None,
            ..opts.clone()
        };
        &without_riscv
    };
    if let Some(rc) = emulation::riscv64_compiler(&case, opts) {
        if !rc.compiler.is_file() {
            return Err(ClassifyError::NoRiscv64Compiler(rc.compiler));
        }
    }
    let evidence = experiments::run_all(dir, &case, opts);
    let d = decide(&evidence);
    let c = Classification {
        verdict: d.verdict.to_string(),
        subcase: d.subcase.map(String::from),
        confidence: d.confidence.to_string(),
        rule: d.rule,
        reason: d.reason,
        decided_by: d.decided_by,
        next_step: next_step_for(d.next_step, crate::case::involves_riscv(&case)),
        evidence,
    };
    case.classification = Some(serde_json::to_value(&c).expect("serialisable"));
    case.save(dir)?;
    Ok(c)
}

/// The decision table's next step, unless it is a RISC-V experiment (emulation under qemu,
/// a RISC-V host) for a case with no RISC-V host, target or emulator: there it leads nowhere.
fn next_step_for(next: Option<String>, riscv: bool) -> Option<String> {
    let about_riscv = |n: &str| ["riscv", "RISC-V", "qemu"].iter().any(|w| n.contains(w));
    next.filter(|n| riscv || !about_riscv(n))
}

#[cfg(test)]
mod next_step_tests {
    use super::*;

    #[test]
    fn riscv_steps_only_for_riscv_cases() {
        let e5 = Some(verdict::RUN_E5.to_string());
        assert_eq!(next_step_for(e5.clone(), false), None);
        assert_eq!(next_step_for(e5.clone(), true), e5);
        let other = Some("rerun with a debug build".to_string());
        assert_eq!(next_step_for(other.clone(), false), other);
    }
}

#[cfg(test)]
mod core_tests {
    use super::*;

    /// Runs `f` on a thread and gives its result, or `None` when it has not returned within
    /// a generous limit: the defect this guards against is a call that never returns.
    fn within<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> Option<T> {
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(f());
        });
        rx.recv_timeout(std::time::Duration::from_secs(20)).ok()
    }

    #[test]
    fn a_core_path_naming_a_fifo_or_a_device_is_refused_without_waiting() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("core");
        let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
        for path in [fifo, PathBuf::from("/dev/zero")] {
            let shown = path.clone();
            let got = within(move || map_core(&path).map(|_| ()).map_err(|e| e.to_string()));
            let err = got
                .unwrap_or_else(|| panic!("map_core blocked on {}", shown.display()))
                .unwrap_err();
            assert!(err.contains("not a regular file"), "{err}");
        }
    }
}
