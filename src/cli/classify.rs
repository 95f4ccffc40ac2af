//! `icepick classify CASE`: is the crash the compiler's fault or the RISC-V host's?

use std::io::Write;
use std::path::PathBuf;

use anyhow::Context;
use clap::Args;

use super::progress::Spinner;
use crate::classify::{self, Options};
use crate::error;

/// Arguments of `icepick classify`.
#[derive(Debug, Args)]
pub struct ClassifyArgs {
    /// The case directory, or a bucket id of the crash store.
    case: PathBuf,
    /// Reruns for the determinism experiment (E1): N one after another, then N at once
    /// (1 to 100).
    #[arg(long, value_name = "N", default_value_t = 5, value_parser = crate::cli::runs_arg)]
    runs: u32,
    /// User-mode emulator for the emulation experiment (E5).
    #[arg(long, value_name = "PATH", default_value = "qemu-riscv64")]
    emulator: PathBuf,
    /// Root of a riscv64 system holding a clang (default: $ICEPICK_RISCV64_SYSROOT; without
    /// either, E5 is not run).
    #[arg(long, value_name = "DIR")]
    sysroot: Option<PathBuf>,
    /// The riscv64 compiler E5 runs and E3 scans (default: the case's own compiler when it
    /// was captured under --emulator, else SYSROOT/usr/lib/llvm-19/bin/clang).
    #[arg(long, value_name = "PATH")]
    compiler: Option<PathBuf>,
    /// The kernel log (`dmesg`, `journalctl -k`) of the RISC-V host where the compiler
    /// crashed: E2 decodes the instruction at the pc of its "unhandled signal" report (the
    /// trapped bits in `badaddr`, else the mapped file's bytes). Saved into the case as
    /// kernel.log, so later runs use it too.
    #[arg(long, value_name = "FILE")]
    kernel_log: Option<PathBuf>,
    /// A core file of the crashed compiler (`coredumpctl dump -o core`, or gdb's `gcore`):
    /// E2 decodes the instruction at its pc, from the core's memory or from the mapped file
    /// its NT_FILE note names (looked up as is, then under --sysroot).
    #[arg(long, value_name = "FILE")]
    core: Option<PathBuf>,
    /// Print the classification section as JSON on stdout, and nothing else.
    #[arg(long)]
    json: bool,
}

/// Runs `icepick classify`.
pub fn run(args: ClassifyArgs) -> anyhow::Result<u8> {
    let mut opts = Options {
        runs: args.runs,
        emulator: args.emulator,
        compiler: args.compiler,
        kernel_log: args.kernel_log,
        core: args.core,
        ..Options::default()
    };
    if args.sysroot.is_some() {
        opts.sysroot = args.sysroot;
    }
    let mut spinner = Spinner::start("running the classification experiments", args.json);
    let case = super::case_arg::resolve(&args.case)?;
    let c = classify::classify(&case, &opts)
        .with_context(|| format!("classifying {}", case.display()))?;
    spinner.finish();
    crate::report::rerender(&case)?;
    let mut out = crate::cli::term::stdout();
    if args.json {
        writeln!(out, "{}", serde_json::to_string(&c)?)?;
    } else {
        for e in &c.evidence {
            writeln!(
                out,
                "{:<9} {:<26} {}",
                e.id,
                if e.ran { e.outcome.as_str() } else { "not run" },
                e.detail
            )?;
        }
        let sub = c
            .subcase
            .as_deref()
            .map(|s| format!(" ({s})"))
            .unwrap_or_default();
        writeln!(
            out,
            "verdict: {}{sub}, confidence {}: {}",
            c.verdict, c.confidence, c.reason
        )?;
        if let Some(n) = &c.next_step {
            writeln!(out, "next step: {n}")?;
        }
    }
    Ok(error::OK)
}
