//! `icepick probe [--json]`: this host's facts for attaching to a case captured here (kernel,
//! CPU ISA and vendor ids, AT_HWCAP, riscv_hwprobe, the prctl vector state); see [`crate::host`].

use clap::Args;

use crate::error;
use crate::host::{self, HostFacts, Hwprobe, VControl};

/// Arguments of `icepick probe`.
#[derive(Debug, Args)]
pub struct ProbeArgs {
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
}

/// Runs `icepick probe`.
pub fn run(args: ProbeArgs) -> anyhow::Result<u8> {
    let facts = host::probe();
    let out = if args.json {
        serde_json::to_string_pretty(&facts)? + "\n"
    } else {
        text(&facts)
    };
    super::inspect::emit(&out)?;
    Ok(error::OK)
}

/// The facts as `name: value` lines for a terminal.
fn text(f: &HostFacts) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    let k = &f.kernel;
    let _ = writeln!(
        s,
        "kernel:     {} {} ({}) {}",
        k.sysname, k.release, k.machine, k.version
    );
    let _ = writeln!(s, "arch:       {}", f.arch);
    let _ = writeln!(s, "processors: {}", f.cpuinfo.processors);
    for (key, values) in &f.cpuinfo.fields {
        for (v, n) in values {
            let _ = writeln!(
                s,
                "cpuinfo:    {key}: {v}  ({n} of {})",
                f.cpuinfo.processors
            );
        }
    }
    if let Some(h) = &f.hwcap {
        match (&h.letters, h.v) {
            (Some(l), Some(v)) => {
                let _ = writeln!(
                    s,
                    "AT_HWCAP:   {:#x} ({l}), V (RVV 1.0) {}",
                    h.value,
                    yes(v)
                );
            }
            _ => {
                let _ = writeln!(s, "AT_HWCAP:   {:#x}", h.value);
            }
        }
    }
    s.push_str(&hwprobe_lines(&f.hwprobe));
    let _ = match &f.v_control {
        VControl::Value {
            raw,
            current,
            next,
            inherit,
        } => writeln!(
            s,
            "V control:  {raw:#x}: current {current}, next exec {next}{}",
            if *inherit { ", inherited" } else { "" }
        ),
        VControl::Error { meaning, .. } => writeln!(s, "V control:  prctl failed: {meaning}"),
        VControl::NotRiscv => writeln!(s, "V control:  not a RISC-V host"),
    };
    if let Some(a) = &f.riscv_v_default_allow {
        let _ = writeln!(s, "riscv_v_default_allow: {a}");
    }
    if let Some(h) = f.hide_v0p7_ext {
        let _ = writeln!(s, "cmdline hide_v0p7_ext: {}", yes(h));
    }
    for n in &f.notes {
        let _ = writeln!(s, "note: {n}");
    }
    s
}

/// One `hwprobe:` line per key the kernel was asked about, or why there are none.
fn hwprobe_lines(h: &Hwprobe) -> String {
    match h {
        Hwprobe::NotRiscv => "hwprobe:    not a RISC-V host\n".into(),
        Hwprobe::Error { meaning, .. } => format!("hwprobe:    failed: {meaning}\n"),
        Hwprobe::Ok { pairs } => pairs
            .iter()
            .map(|p| {
                if p.known {
                    format!(
                        "hwprobe:    {} = {:#x} {}\n",
                        p.name,
                        p.value,
                        p.decoded.join(",")
                    )
                } else {
                    format!("hwprobe:    {} unknown to this kernel\n", p.name)
                }
            })
            .collect(),
    }
}

fn yes(b: bool) -> &'static str {
    if b {
        "yes"
    } else {
        "no"
    }
}
