//! What LLVM's "How to submit a bug" asks for beyond the stack dump, recorded at capture:
//! the target triple, the diagnostics clang printed before the crash, and the `-cc1` line of
//! the crashing job.
//!
//! Why this exists: the report must carry them, and only capture has the
//! original command, its build directory and its output at hand. The `-cc1` line comes from
//! one extra `-###` run of the original command (cheap: nothing is compiled); for an
//! offload (HIP/CUDA) compile it is the line of the job that crashed. A cc1 command is its
//! own line. GCC has neither a triple line nor cc1 jobs here: only its diagnostics are kept.

use crate::command::{parse_hash_hash_hash, CompilerCommand, Job, JobKind, JobSelector};

pub use crate::case::BugInfo;

/// The `-triple` of a cc1 argv.
fn triple_of(args: &[String]) -> Option<String> {
    args.windows(2)
        .find(|w| w[0] == "-triple")
        .map(|w| w[1].clone())
}

/// The cc1 job of `-###` output that matches `sel` (the first compile job for a plain
/// command).
fn crashing_job<'a>(jobs: &'a [Job], sel: &JobSelector) -> Option<&'a Job> {
    let compiles = || jobs.iter().filter(|j| j.kind != JobKind::Tool);
    match sel {
        JobSelector::Device(arch) => {
            compiles().find(|j| matches!(&j.kind, JobKind::Device { arch: a } if a == arch))
        }
        JobSelector::Host => compiles().find(|j| j.kind == JobKind::Host),
        JobSelector::Whole => compiles().next(),
    }
}

/// Fills the triple and cc1 line from the stderr of `COMMAND -###`.
pub(super) fn from_listing(info: &mut BugInfo, listing: &str, sel: &JobSelector) {
    let jobs = parse_hash_hash_hash(listing);
    if let Some(job) = crashing_job(&jobs, sel) {
        info.cc1 = job.command.argv();
        info.triple = triple_of(&job.command.args);
    }
    if info.triple.is_none() {
        info.triple = listing
            .lines()
            .find_map(|l| l.strip_prefix("Target: "))
            .map(|t| t.trim().to_string());
    }
}

/// For a cc1 command: itself, and its `-triple`.
pub(super) fn from_cc1(info: &mut BugInfo, command: &CompilerCommand) {
    info.cc1 = command.argv();
    info.triple = triple_of(&command.args);
}

/// The diagnostics part, from the stderr of the run whose crash the case is about.
pub(super) fn with_diagnostics(stderr: &str) -> BugInfo {
    let (diagnostics, diagnostics_omitted) = crate::crash::prior_diagnostics(stderr);
    BugInfo {
        diagnostics,
        diagnostics_omitted,
        ..BugInfo::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HIP_LISTING: &str = r#"Debian clang version 19.1.7 (3~deb12u1)
Target: x86_64-pc-linux-gnu
Thread model: posix
 "/usr/lib/llvm-19/bin/clang" "-cc1" "-triple" "amdgcn-amd-amdhsa" "-aux-triple" "x86_64-pc-linux-gnu" "-emit-obj" "-fcuda-is-device" "-target-cpu" "gfx906" "-o" "/tmp/k-gfx906.o" "-x" "hip" "k.hip"
 "/usr/lib/llvm-19/bin/clang" "-cc1" "-triple" "amdgcn-amd-amdhsa" "-aux-triple" "x86_64-pc-linux-gnu" "-emit-obj" "-fcuda-is-device" "-target-cpu" "gfx1030" "-o" "/tmp/k-gfx1030.o" "-x" "hip" "k.hip"
 "/usr/bin/ld.lld" "-o" "/tmp/k.out"
 "/usr/lib/llvm-19/bin/clang" "-cc1" "-triple" "x86_64-pc-linux-gnu" "-aux-triple" "amdgcn-amd-amdhsa" "-emit-obj" "-o" "k.o" "-x" "hip" "k.hip"
"#;

    #[test]
    fn the_crashing_jobs_line_and_triple() {
        let mut i = BugInfo::default();
        from_listing(&mut i, HIP_LISTING, &JobSelector::Device("gfx1030".into()));
        assert_eq!(i.triple.as_deref(), Some("amdgcn-amd-amdhsa"));
        assert!(i.cc1.contains(&"gfx1030".to_string()), "{:?}", i.cc1);
        assert_eq!(i.cc1[0], "/usr/lib/llvm-19/bin/clang");
        let mut i = BugInfo::default();
        from_listing(&mut i, HIP_LISTING, &JobSelector::Host);
        assert_eq!(i.triple.as_deref(), Some("x86_64-pc-linux-gnu"));
        let mut i = BugInfo::default();
        from_listing(
            &mut i,
            "Target: riscv64-unknown-linux-gnu\n",
            &JobSelector::Whole,
        );
        assert_eq!(i.triple.as_deref(), Some("riscv64-unknown-linux-gnu"));
        assert!(i.cc1.is_empty());
    }
}
