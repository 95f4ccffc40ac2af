//! The capturing host's facts (case.json `host`, recorded by capture from what `icepick
//! probe` sees) as evidence `H`. One fact decides between the two host-RVV sub-cases of
//! docs/classify.md row 6: a T-Head core of the C906/C910/C920 class (vector 0.7.1,
//! XTheadVector) whose kernel sets V (RVV 1.0) in AT_HWCAP, as SG2042 vendor kernels did,
//! sends RVV-1.0 code onto a unit that cannot run it (a dialect mismatch), where any other
//! host's vector fault points at the kernel's vector context.

use serde_json::Value;

use super::outcome as o;
use super::Evidence;
use crate::case::host::HostFacts;
use crate::host::{parse_number, MVENDORID_THEAD};

/// The experiment's name in the evidence table.
const EXPERIMENT: &str = "host facts recorded at capture (cpuinfo vendor ids, AT_HWCAP)";

/// Evidence `H` from the case's host facts and its emulator (when the compiler ran under an
/// emulator, the facts are the emulating machine's, not a RISC-V host's).
pub fn evidence(host: Option<&Value>, emulator: &[String]) -> Evidence {
    let mut e = Evidence {
        id: "H".into(),
        experiment: EXPERIMENT.into(),
        ran: true,
        host_or_emulator: "capturing host".into(),
        outcome: String::new(),
        signature: None,
        coarse_signature: None,
        frames: Vec::new(),
        detail: String::new(),
    };
    let Some(h) = host.and_then(HostFacts::of) else {
        e.ran = false;
        e.outcome = o::NOT_RUN.into();
        e.detail = "the case has no host facts (captured by an older icepick); run `icepick probe` on the host where the compiler crashed".into();
        return e;
    };
    let arch = h.arch.as_deref().unwrap_or("?");
    if h.riscv != Some(true) {
        e.outcome = o::HOST_NOT_RISCV.into();
        e.detail = if emulator.is_empty() {
            format!(
                "captured on {} {arch} host: no RISC-V vector unit involved",
                article(arch)
            )
        } else {
            format!(
                "captured under `{}` on {} {arch} host: the emulated CPU is the one E5 varies",
                emulator.join(" "),
                article(arch)
            )
        };
        return e;
    }
    let cpuinfo = h.cpuinfo.clone().unwrap_or_default();
    let field = |key: &str| -> Vec<u64> {
        cpuinfo
            .values(key)
            .iter()
            .filter_map(|k| parse_number(k.trim()))
            .collect()
    };
    let hwcap_v = h.hwcap.as_ref().and_then(|c| c.v);
    let thead = field("mvendorid").contains(&MVENDORID_THEAD);
    // Linux takes a T-Head core for a 0.7.1 vector unit when marchid and mimpid are both 0
    // (marchid may be missing from older kernels' cpuinfo).
    let marchid = field("marchid");
    let mimpid_zero = field("mimpid").contains(&0) && (marchid.is_empty() || marchid.contains(&0));
    let isa = cpuinfo.values("isa");
    let isa = if isa.is_empty() {
        String::new()
    } else {
        format!(", isa {}", isa.join(" / "))
    };
    let (outcome, detail) = match (thead && mimpid_zero, hwcap_v) {
        (true, Some(true)) => (
            o::HOST_THEAD_CLAIMS_V,
            format!("a T-Head core (mvendorid 0x5b7, marchid and mimpid 0: vector 0.7.1, XTheadVector){isa}, and AT_HWCAP claims V (RVV 1.0): a vendor kernel advertising the 0.7.1 unit as RVV 1.0"),
        ),
        (_, Some(true)) => (
            o::HOST_V,
            format!("a RISC-V host whose AT_HWCAP claims V (RVV 1.0){isa}"),
        ),
        (_, Some(false)) => (
            o::HOST_NO_V,
            format!("a RISC-V host without V in AT_HWCAP{isa}: user-space vector code does not run there"),
        ),
        (_, None) => (o::HOST_V_UNKNOWN, format!("a RISC-V host{isa}; AT_HWCAP was not read")),
    };
    e.outcome = outcome.into();
    e.detail = detail;
    e
}

/// `an x86_64`, `an aarch64`, `a riscv64`.
fn article(word: &str) -> &'static str {
    if word.starts_with(['a', 'e', 'i', 'o', 'u', 'x']) {
        "an"
    } else {
        "a"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn riscv(mvendorid: &str, mimpid: &str, v: Option<bool>) -> Value {
        json!({
            "arch": "riscv64", "riscv": true,
            "cpuinfo": {"processors": 64, "fields": {
                "isa": {"rv64imafdcv": 64}, "mvendorid": {mvendorid: 64}, "mimpid": {mimpid: 64}}},
            "hwcap": {"value": 0, "letters": "imafdcv", "v": v},
        })
    }

    #[test]
    fn an_sg2042_whose_kernel_claims_v_is_recognised() {
        let e = evidence(Some(&riscv("0x5b7", "0x0", Some(true))), &[]);
        assert_eq!(e.outcome, o::HOST_THEAD_CLAIMS_V);
        assert!(e.detail.contains("isa rv64imafdcv"), "{}", e.detail);
        // Long hex forms parse the same.
        let e = evidence(
            Some(&riscv("0x00000000000005b7", "0x0000", Some(true))),
            &[],
        );
        assert_eq!(e.outcome, o::HOST_THEAD_CLAIMS_V);
    }

    #[test]
    fn other_riscv_hosts_say_what_their_hwcap_says() {
        // A SiFive core (mvendorid 0x489) with RVV 1.0.
        let e = evidence(Some(&riscv("0x489", "0x0", Some(true))), &[]);
        assert_eq!(e.outcome, o::HOST_V);
        // A later T-Head core (non-zero marchid) is not taken for a 0.7.1 unit.
        let mut h = riscv("0x5b7", "0x0", Some(true));
        h["cpuinfo"]["fields"]["marchid"] = json!({"0x8000000000000001": 64});
        assert_eq!(evidence(Some(&h), &[]).outcome, o::HOST_V);
        h["cpuinfo"]["fields"]["marchid"] = json!({"0x0": 64});
        assert_eq!(evidence(Some(&h), &[]).outcome, o::HOST_THEAD_CLAIMS_V);
        // A T-Head core whose kernel hides the 0.7.1 unit (hide_v0p7_ext).
        let e = evidence(Some(&riscv("0x5b7", "0x0", Some(false))), &[]);
        assert_eq!(e.outcome, o::HOST_NO_V);
        let e = evidence(Some(&riscv("0x5b7", "0x0", None)), &[]);
        assert_eq!(e.outcome, o::HOST_V_UNKNOWN);
    }

    #[test]
    fn x86_emulated_and_missing_facts() {
        let x86 = json!({"arch": "x86_64", "riscv": false});
        let e = evidence(Some(&x86), &[]);
        assert_eq!((e.outcome.as_str(), e.ran), (o::HOST_NOT_RISCV, true));
        let e = evidence(
            Some(&x86),
            &["qemu-riscv64".into(), "-cpu".into(), "rv64".into()],
        );
        assert!(
            e.detail.contains("under `qemu-riscv64 -cpu rv64`"),
            "{}",
            e.detail
        );
        let e = evidence(None, &[]);
        assert_eq!((e.outcome.as_str(), e.ran), (o::NOT_RUN, false));
    }
}
