//! E6: the case on this host's compiler of the same version, aimed at the capturing host's
//! target: a crash that follows the compiler to another machine is not the host's doing.

use std::path::{Path, PathBuf};

use super::{captured_on_riscv, compare, not_run, this_host, TIMEOUT};
use crate::case::Case;
use crate::classify::emulation::with_target;
use crate::classify::Evidence;
use crate::crash::Symbolizer;
use crate::exec::{self, Cmd};

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
/// What E6 is, in its evidence.
pub(super) const EXPERIMENT: &str =
    "cross-host replay: the case on this host's compiler of the same version";

pub(super) fn cross_host(dir: &Path, case: &Case, replay: &[String]) -> Evidence {
    let what = EXPERIMENT;
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
    let seen = compare(case, &exec::run(&cmd), &native_sym);
    let note = format!(
        "`{} {}`: {}",
        native.display(),
        crate::command::shell_join(&args),
        seen.note
    );
    seen.evidence("E6", what, &host, note)
}
