//! The report's `## Environment` lines about the machine a case was captured on, from
//! `case.json`'s `host` (what `icepick probe` saw at capture). Maintainers ask which kernel
//! and CPU a crash came from; for a RISC-V host the vector facts (ISA string, vendor ids,
//! whether AT_HWCAP claims V, the per-task vector control) are what tells a host fault from a
//! compiler bug, so they are printed with `probe`'s reading of them. The facts are case data
//! (a case may come from anywhere): every value is Markdown-escaped.

use serde_json::Value;

use crate::case::host::HostFacts;

use super::markdown::{code, text};

/// Markdown list items (without the `- `) describing the capturing host; empty when the case
/// has no host facts.
pub fn host_lines(host: Option<&Value>, emulator: &[String]) -> Vec<String> {
    let Some(h) = host.and_then(HostFacts::of) else {
        return Vec::new();
    };
    let mut lines = Vec::new();
    let kernel = h.kernel.clone().unwrap_or_default();
    let kernel = [kernel.sysname, kernel.release, kernel.machine]
        .into_iter()
        .flatten()
        .filter(|s| !s.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    if !kernel.is_empty() {
        lines.push(format!("host: {}", text(&kernel)));
    }
    if !emulator.is_empty() {
        lines.push(format!(
            "emulated: the compiler ran under {} on that host",
            code(&crate::command::shell_join(emulator))
        ));
    }
    let cpuinfo = h.cpuinfo.clone().unwrap_or_default();
    let cpu: Vec<String> = cpuinfo
        .fields
        .iter()
        .filter(|(_, values)| !values.is_empty())
        .map(|(key, values)| format!("{} {}", text(key), text(&values.join(" / "))))
        .collect();
    if !cpu.is_empty() {
        let count = cpuinfo
            .processors
            .map(|n| format!(" ({n} processors)"))
            .unwrap_or_default();
        lines.push(format!("cpu: {}{count}", cpu.join(", ")));
    }
    if h.riscv != Some(true) {
        return lines;
    }
    lines.extend(vector_lines(&h));
    lines
}

/// The RISC-V vector facts of a RISC-V host, with `probe`'s notes.
fn vector_lines(h: &HostFacts) -> Vec<String> {
    let mut lines = Vec::new();
    if let Some(hwcap) = &h.hwcap {
        let letters = hwcap.letters.as_deref().unwrap_or("?");
        let v = match hwcap.v {
            Some(true) => "claims V (RVV 1.0)",
            Some(false) => "no V",
            None => "V unknown",
        };
        lines.push(format!("AT_HWCAP: {}, {v}", text(letters)));
    }
    if let Some(vc) = &h.v_control {
        let control = match vc.state.as_deref() {
            Some("value") => format!(
                "current {}, next exec {}{}",
                vc.current.as_deref().unwrap_or("?"),
                vc.next.as_deref().unwrap_or("?"),
                if vc.inherit == Some(true) {
                    ", inherited"
                } else {
                    ""
                }
            ),
            Some("error") => vc.meaning.as_deref().unwrap_or("error").to_string(),
            other => other.unwrap_or("?").to_string(),
        };
        lines.push(format!("vector control (prctl): {}", text(&control)));
    }
    if let Some(allow) = &h.riscv_v_default_allow {
        lines.push(format!("riscv_v_default_allow: {}", text(allow)));
    }
    if h.hide_v0p7_ext == Some(true) {
        lines.push("kernel command line: hide_v0p7_ext".into());
    }
    for note in &h.notes {
        lines.push(format!("host note: {}", text(note)));
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_x86_host_gets_kernel_and_cpu_and_no_vector_lines() {
        let h = json!({
            "kernel": {"sysname": "Linux", "release": "6.1.0-18-amd64", "version": "#1 SMP", "machine": "x86_64"},
            "arch": "x86_64", "riscv": false,
            "cpuinfo": {"processors": 2, "fields": {"model name": {"AMD EPYC": 2}}},
            "hwcap": {"value": 2, "letters": null, "v": null},
            "hwprobe": {"state": "not_riscv"}, "v_control": {"state": "not_riscv"},
            "notes": ["not a RISC-V host (x86_64): vector facts do not apply"]
        });
        assert_eq!(
            host_lines(Some(&h), &[]),
            [
                "host: Linux 6.1.0-18-amd64 x86_64",
                "cpu: model name AMD EPYC (2 processors)"
            ]
        );
        let emulated = host_lines(
            Some(&h),
            &["qemu-riscv64".into(), "-cpu".into(), "rv64".into()],
        );
        assert_eq!(
            emulated[1],
            "emulated: the compiler ran under `qemu-riscv64 -cpu rv64` on that host"
        );
    }

    /// The facts of an SG2042 with a vendor kernel, as `probe` reports them (mvendorid and
    /// the ISA string from the sophgo/linux-riscv thread in docs/rvv.md §1.1).
    #[test]
    fn a_riscv_host_gets_its_vector_facts_and_probes_reading() {
        let h = json!({
            "kernel": {"sysname": "Linux", "release": "6.1.31-sg2042", "version": "#1", "machine": "riscv64"},
            "arch": "riscv64", "riscv": true,
            "cpuinfo": {"processors": 64, "fields": {
                "isa": {"rv64imafdcv": 64}, "mvendorid": {"0x5b7": 64}, "mimpid": {"0x0": 64}}},
            "hwcap": {"value": 2_113_833, "letters": "imafdcv", "v": true},
            "v_control": {"state": "error", "errno": 22, "meaning": "EINVAL: no vector support in this kernel"},
            "riscv_v_default_allow": null, "hide_v0p7_ext": false,
            "notes": ["T-Head core (mvendorid 0x5b7, mimpid 0: C906/C910/C920 class, vector 0.7.1) and AT_HWCAP reports V"]
        });
        let lines = host_lines(Some(&h), &[]);
        assert_eq!(lines[0], "host: Linux 6.1.31-sg2042 riscv64");
        assert_eq!(
            lines[1],
            "cpu: isa rv64imafdcv, mimpid 0x0, mvendorid 0x5b7 (64 processors)"
        );
        assert_eq!(lines[2], "AT_HWCAP: imafdcv, claims V (RVV 1.0)");
        assert_eq!(
            lines[3],
            "vector control (prctl): EINVAL: no vector support in this kernel"
        );
        assert!(lines[4].starts_with("host note: T-Head core"), "{lines:?}");
        assert_eq!(lines.len(), 5, "{lines:?}");
    }

    #[test]
    fn no_host_facts_no_lines() {
        assert!(host_lines(None, &[]).is_empty());
        assert!(host_lines(Some(&json!("x")), &[]).is_empty());
    }
}
