//! The experiments of the classify stage, each turned into [`Evidence`], one file each
//! (`determinism` E1, `vector_off` E4, `cross_host` E6, `resources` E7; the emulation, core
//! file, kernel log and host facts experiments live beside this module). This module holds
//! what they share (the replay command, how a run compares with the case) and [`run_all`],
//! which runs them in order. Processes run only
//! through [`crate::exec`]; crashes are parsed, symbolized and compared by signature the way
//! capture does it.

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::emulation::{emulation, evidence_crashes, faulting_instruction, static_scan};
use super::outcome as o;
use super::{Evidence, Options};
use crate::case::Case;
use crate::crash::{self, Crash, Signature, Symbolizer};
use crate::exec::{self, Cmd, ExecError, Output, Status};

mod cross_host;
mod determinism;
mod resources;
mod vector_off;

use cross_host::cross_host;
use determinism::determinism;
use resources::resources;
use vector_off::vector_off;

pub(super) const TIMEOUT: Duration = Duration::from_secs(300);

/// The command to replay: the verified reduction's when there is one, else the case's.
pub fn replay_command(case: &Case) -> Vec<String> {
    case.best_replay_command()
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
pub fn compare(case: &Case, out: &Result<Output, ExecError>, sym: &Symbolizer) -> Seen {
    let case_sig = &case.signature;
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
    if o.status == Status::Cancelled {
        return Seen {
            outcome: o::NOT_RUN,
            crash: None,
            note: "cut by the triage budget".into(),
        };
    }
    if o.status == Status::TimedOut {
        return Seen {
            outcome: o::TIMEOUT,
            crash: None,
            note: "timed out".into(),
        };
    }
    let Some(mut cr) = crash::parse(&o.stderr_text(), o.status.exit_info()) else {
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
    let outcome = if case.family().contains(&crash::family::Seen::new(&cr, &sig)) {
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

/// Why an experiment did not run when the triage budget's end came first.
const BUDGET_SPENT: &str = "not run: the triage budget had run out";

/// Runs every experiment that can run here; those that would start after `opts.deadline`
/// are recorded as not run, and E1 stops at it.
pub fn run_all(dir: &Path, case: &Case, opts: &Options) -> Vec<Evidence> {
    let spent = || {
        opts.deadline
            .is_some_and(|d| std::time::Instant::now() >= d)
    };
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
    let skip = |id: &str, experiment: &str| not_run(id, experiment, &host, BUDGET_SPENT);
    if (captured_here || !case.emulator.is_empty()) && spent() {
        evidence.push(skip("E1", &determinism::experiment(opts.runs.max(1))));
    } else if captured_here || !case.emulator.is_empty() {
        let (e1, first, t) = determinism(case, &replay_cmd, opts.runs.max(1), &host, &sym, &spent);
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
        evidence.push(match spent() {
            true => skip("E6", cross_host::EXPERIMENT),
            false => cross_host(dir, case, &replay),
        });
    }

    // E5: emulation; E3: the emulated compiler's vector code.
    if spent() && super::emulation::riscv64_compiler(case, opts).is_some() {
        let e5 = |(id, cpu): &(&str, &str)| {
            let on = format!("qemu-riscv64 -cpu {cpu}");
            not_run(id, super::emulation::E5_EXPERIMENT, &on, BUDGET_SPENT)
        };
        evidence.extend(super::emulation::E5_CPUS.iter().map(e5));
    } else {
        evidence.extend(emulation(dir, case, &replay, opts));
    }
    evidence.push(static_scan(case, opts));

    // E2: the faulting instruction of a RISC-V crash.
    evidence.push(match spent() {
        true => skip("E2", super::emulation::E2_EXPERIMENT),
        false => faulting_instruction(dir, case, opts, &evidence_crashes(dir, case, &replay, opts)),
    });

    // E4: V off on a RISC-V host.
    evidence.push(match spent() {
        true => skip("E4", vector_off::EXPERIMENT),
        false => vector_off(case, &replay_cmd, &sym),
    });

    // E7: resources.
    evidence.push(match spent() {
        true => skip("E7", resources::EXPERIMENT),
        false => resources(case, timeouts, &replay_cmd, &sym),
    });

    // H: what the capturing host is.
    evidence.push(super::host_facts::evidence(
        case.host.as_ref(),
        &case.emulator,
    ));
    evidence
}

#[cfg(test)]
mod budget_tests {
    use super::*;

    #[test]
    fn past_the_budget_no_experiment_runs_and_none_reads_as_a_timeout() {
        let fixture =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/report-kinds/fe-gh59446");
        let case = Case::load(&fixture).unwrap();
        let opts = Options {
            deadline: Some(std::time::Instant::now()),
            sysroot: None,
            ..Options::default()
        };
        let evidence = run_all(&fixture, &case, &opts);
        // No experiment that runs a compiler ran.
        for id in ["E1", "E2", "E4", "E7"] {
            let e = evidence.iter().find(|e| e.id == id).unwrap();
            assert!(!e.ran, "{id} ran: {e:?}");
        }
        assert!(evidence.iter().all(|e| e.outcome != o::TIMEOUT));
        let e1 = evidence.iter().find(|e| e.id == "E1").unwrap();
        assert_eq!((e1.outcome.as_str(), e1.ran), (o::NOT_RUN, false));
        assert_eq!(e1.detail, BUDGET_SPENT);
        assert_eq!(e1.experiment, determinism::experiment(opts.runs));
        let e7 = evidence.iter().find(|e| e.id == "E7").unwrap();
        assert_eq!(e7.detail, BUDGET_SPENT);
    }
}
