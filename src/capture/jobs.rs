//! Which job of a compile crashed. A plain compile has one; an offload (HIP/CUDA) compile
//! runs a host job and one device job per GPU arch, and its output does not always say which
//! one died: an out-of-process cc1 names itself in `Program arguments`, but a device cc1 that
//! stops in `report_fatal_error` next to another job prints neither a stack nor its arch. Then
//! each job is run alone, and the one that crashes the same way is the case's.

use crate::case::JobInfo;
use crate::command::{job_of_cc1, parse_hash_hash_hash, CompilerCommand, JobKind, JobSelector};
use crate::crash::{self, Crash, Signature};
use crate::exec::ExecError;

use super::{Run, Runner};

/// Finds the crashing job of an offload compile; plain compiles have one job. When the job
/// was found by running it alone, that run comes back too (its crash may have the frames the
/// whole command's output lacked).
pub(super) fn find_job(
    runner: &mut Runner,
    command: &CompilerCommand,
    crash: &Crash,
    signature: &Signature,
    progress: &mut dyn FnMut(&str),
) -> Result<(JobSelector, JobInfo, Option<Run>), ExecError> {
    if command.is_cc1() {
        let (sel, info) = match job_of_cc1(&command.args.join(" ")) {
            Some(kind @ JobKind::Device { .. }) => (JobSelector::Whole, job_info(&kind, vec![]).1),
            _ => (JobSelector::Whole, single(Vec::new())),
        };
        return Ok((sel, info, None));
    }
    if !command.is_offload() {
        return Ok((JobSelector::Whole, single(Vec::new()), None));
    }
    let (compiles, listed) = list_jobs(runner, command)?;
    // Out-of-process cc1 (every multi-job compile) names its job in `Program arguments`.
    if let Some(kind) = crash.program_arguments.as_deref().and_then(job_of_cc1) {
        let (sel, info) = job_info(&kind, listed);
        return Ok((sel, info, None));
    }
    if compiles.len() == 1 {
        let (sel, info) = job_info(&compiles[0], listed);
        return Ok((sel, info, None));
    }
    // Otherwise try each job alone and keep the one that gives this crash.
    for kind in &compiles {
        let (sel, info) = job_info(kind, listed.clone());
        progress(&format!("trying job {}", info_label(&info)));
        let only = job_alone(command, &sel);
        let r = runner.run_sandboxed(&only, None)?;
        if same_crash(crash, signature, &r) {
            return Ok((sel, info, Some(r)));
        }
    }
    Ok((JobSelector::Whole, single(listed), None))
}

/// A compile of one job (or one no job could be told apart in).
fn single(listed: Vec<String>) -> JobInfo {
    JobInfo {
        kind: "single".into(),
        offload_arch: None,
        listed,
    }
}

/// The compile jobs (host, each device) the driver runs for `command`, from its `-###`, and
/// every job it lists as a label (`host`, `device:gfx906`, `tool:ld.lld`).
fn list_jobs(
    runner: &mut Runner,
    command: &CompilerCommand,
) -> Result<(Vec<JobKind>, Vec<String>), ExecError> {
    let mut listing = command.clone();
    listing.args.retain(|a| a != "-fno-crash-diagnostics");
    let r = runner.run_listing(&listing)?;
    let jobs = parse_hash_hash_hash(&r.output.stderr_text());
    let listed = jobs
        .iter()
        .map(|j| match &j.kind {
            JobKind::Host => "host".to_string(),
            JobKind::Device { arch } => format!("device:{arch}"),
            JobKind::Tool => format!(
                "tool:{}",
                j.command.program.rsplit('/').next().unwrap_or_default()
            ),
        })
        .collect();
    let compiles = jobs
        .into_iter()
        .map(|j| j.kind)
        .filter(|k| *k != JobKind::Tool)
        .collect();
    Ok((compiles, listed))
}

/// How to select job `kind` of an offload compile, and what the case records of it.
fn job_info(kind: &JobKind, listed: Vec<String>) -> (JobSelector, JobInfo) {
    match kind {
        JobKind::Device { arch } => (
            JobSelector::Device(arch.clone()),
            JobInfo {
                kind: "device".into(),
                offload_arch: Some(arch.clone()),
                listed,
            },
        ),
        _ => (
            JobSelector::Host,
            JobInfo {
                kind: "host".into(),
                offload_arch: None,
                listed,
            },
        ),
    }
}

/// `command` compiling only the job `sel` selects: `--cuda-device-only --offload-arch=A` for
/// a device, `--cuda-host-only` for the host, the command's own job flags dropped.
fn job_alone(command: &CompilerCommand, sel: &JobSelector) -> CompilerCommand {
    let mut c = command.clone();
    c.args.retain(|a| !is_job_flag(a));
    match sel {
        JobSelector::Device(arch) => {
            c.with_extra_args(&["--cuda-device-only", &format!("--offload-arch={arch}")])
        }
        _ => c.with_extra_args(&["--cuda-host-only"]),
    }
}

/// True when `run` crashed the way `crash` (with `signature`) did. A crash printed without a
/// stack (a multi-job compile's cc1 that died in `report_fatal_error`: out of process that is a
/// plain `exit(70)`) matches a run of the same kind and message whatever frames that run shows.
fn same_crash(crash: &Crash, signature: &Signature, run: &Run) -> bool {
    match (&run.crash, &run.signature) {
        (Some(c), Some(s)) => {
            s.id == signature.id
                || (crash.frames.is_empty() && frameless_id(c) == frameless_id(crash))
        }
        _ => false,
    }
}

/// The signature id of `crash` without its frames and pretty stack: kind and message.
fn frameless_id(crash: &Crash) -> String {
    let mut c = crash.clone();
    c.frames.clear();
    c.pretty_stack.clear();
    crash::signature(&c).id
}

fn is_job_flag(a: &str) -> bool {
    a.starts_with("--offload-arch")
        || a.starts_with("--cuda-gpu-arch")
        || matches!(
            a,
            "--cuda-device-only"
                | "--cuda-host-only"
                | "--offload-device-only"
                | "--offload-host-only"
        )
}

pub(super) fn info_label(info: &JobInfo) -> String {
    match &info.offload_arch {
        Some(a) => format!("{}:{a}", info.kind),
        None => info.kind.clone(),
    }
}
