//! E4: the replay with the RISC-V vector unit turned off for the compiler (`prctl` before
//! exec): a crash that goes away points at the host's vector unit or its kernel context.

use super::{compare, not_run, this_host};
use crate::case::Case;
use crate::classify::Evidence;
use crate::crash::Symbolizer;
use crate::exec::{self, Cmd, ExecError};

/// E4: the replay with V off for the new process.
/// What E4 is, in its evidence.
pub(super) const EXPERIMENT: &str =
    "V off: prctl(PR_RISCV_V_SET_CONTROL, next=OFF|INHERIT) before exec";

pub(super) fn vector_off(case: &Case, replay: &Cmd, sym: &Symbolizer) -> Evidence {
    let experiment = EXPERIMENT;
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
    let seen = compare(case, &out, sym);
    let note = seen.note.clone();
    seen.evidence("E4", experiment, &this_host(), note)
}
