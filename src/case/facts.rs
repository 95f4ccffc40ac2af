//! Facts derived from a case's data that more than one stage and the report need: which
//! backend it exercises, whether RISC-V is involved, where its compiler's libraries are.
//! Pure functions of the case (no processes, no files read).

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::Case;
use crate::command::CompilerCommand;

/// The backend a case exercises, from its command: `RISC-V`, `AMDGPU`, `X86` or `None`.
pub fn target_tag(case: &Case) -> Option<&'static str> {
    let cmd = CompilerCommand::from_argv(&case.command)?;
    // An llc/opt command names its target with -mtriple, or not at all (the IR's own
    // `target triple`, which capture keeps in bug_info).
    let triple = cmd
        .option_value("--target")
        .or_else(|| cmd.option_value("-target"))
        .or_else(|| cmd.option_value("-triple"))
        .or_else(|| cmd.option_value("-mtriple"))
        .or_else(|| {
            cmd.llvm_tool()
                .and(case.bug_info.as_ref())
                .and_then(|b| b.triple.clone())
        })
        .unwrap_or_default();
    if case
        .job
        .offload_arch
        .as_deref()
        .is_some_and(|a| a.starts_with("gfx"))
        || triple.starts_with("amdgcn")
    {
        Some("AMDGPU")
    } else if triple.starts_with("riscv")
        || cmd
            .option_value("-march")
            .is_some_and(|m| m.starts_with("rv"))
    {
        Some("RISC-V")
    } else if triple.is_empty() || triple.starts_with("x86_64") || triple.starts_with("i686") {
        Some("X86")
    } else {
        None
    }
}

/// True when a RISC-V host, target or emulator is involved: only then do the RISC-V
/// experiments, their next step and their "not run here" list belong in the report.
pub fn involves_riscv(case: &Case) -> bool {
    let triple = case
        .bug_info
        .as_ref()
        .and_then(|b| b.triple.as_deref())
        .unwrap_or("");
    let host_machine = case
        .host
        .as_ref()
        .and_then(|h| h.pointer("/kernel/machine"))
        .and_then(Value::as_str)
        .unwrap_or("");
    target_tag(case) == Some("RISC-V")
        || triple.starts_with("riscv")
        || host_machine.starts_with("riscv")
        || !case.emulator.is_empty()
}

/// Library directories to find bare module names (`libLLVM.so.19.1`) in.
pub fn library_dirs(compiler: &Path) -> Vec<PathBuf> {
    library_dirs_emulated(compiler, &[])
}

/// [`library_dirs`] for a compiler run under `emulator`: its frames name the emulated
/// system's paths (`/lib/riscv64-linux-gnu/libLLVM.so.19.1`), found under the emulator's
/// `-L` root.
pub fn library_dirs_emulated(compiler: &Path, emulator: &[String]) -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    if let Some(bin) = compiler.parent() {
        dirs.push(bin.join("../lib"));
        dirs.push(bin.to_path_buf());
    }
    match super::emulator_root(emulator) {
        Some(root) => {
            for d in ["usr/lib/riscv64-linux-gnu", "lib/riscv64-linux-gnu"] {
                dirs.push(root.join(d));
            }
        }
        None => {
            dirs.push(PathBuf::from("/usr/lib/x86_64-linux-gnu"));
            dirs.push(PathBuf::from("/lib/x86_64-linux-gnu"));
        }
    }
    dirs
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::case::tests::sample_case;
    use crate::case::BugInfo;

    #[test]
    fn riscv_is_involved_by_target_triple_host_or_emulator() {
        let mut case = sample_case();
        assert!(!involves_riscv(&case));
        case.bug_info = Some(BugInfo {
            triple: Some("riscv64-unknown-linux-gnu".into()),
            ..BugInfo::default()
        });
        assert!(involves_riscv(&case));
        case.bug_info = None;
        case.emulator = vec!["qemu-riscv64".into()];
        assert!(involves_riscv(&case));
        case.emulator.clear();
        case.host = Some(serde_json::json!({"kernel": {"machine": "riscv64"}}));
        assert!(involves_riscv(&case));
    }
}
