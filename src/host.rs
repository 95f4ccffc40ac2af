//! Host facts for a case captured on a RISC-V machine (`icepick probe`): kernel,
//! `/proc/cpuinfo` ISA and vendor ids, `AT_HWCAP`, `riscv_hwprobe`, the per-task vector control
//! (`prctl(PR_RISCV_V_GET_CONTROL)`), `/proc/sys/abi/riscv_v_default_allow` and the
//! `hide_v0p7_ext` boot flag (`docs/rvv.md` §1.1, `docs/classify.md` "Host facts").
//!
//! Parsing and decoding are pure functions tested on sample text; [`probe`] reads `/proc` and
//! makes the syscalls (no processes). The RISC-V-only syscalls are behind
//! `cfg(target_arch = "riscv64")`, so this compiles and reports "not a RISC-V host" elsewhere.

use std::collections::BTreeMap;

use serde::Serialize;

/// `PR_RISCV_V_GET_CONTROL`.
pub const PR_RISCV_V_GET_CONTROL: i32 = 70;
/// `__NR_riscv_hwprobe` (`__NR_arch_specific_syscall` + 14).
pub const NR_RISCV_HWPROBE: i64 = 258;
/// `COMPAT_HWCAP_ISA_V`: ratified RVV 1.0 (vendor kernels for SG2042 set it for 0.7.1 units).
pub const HWCAP_ISA_V: u64 = 1 << 21;
/// T-Head's JEDEC vendor id, as `mvendorid` reports it.
pub const MVENDORID_THEAD: u64 = 0x5b7;

/// Everything `icepick probe` reports.
#[derive(Debug, Clone, Serialize)]
pub struct HostFacts {
    pub kernel: Kernel,
    /// `std::env::consts::ARCH` of this build of icepick.
    pub arch: &'static str,
    pub riscv: bool,
    pub cpuinfo: CpuInfo,
    pub hwcap: Option<Hwcap>,
    pub hwprobe: Hwprobe,
    pub v_control: VControl,
    /// `/proc/sys/abi/riscv_v_default_allow` (0/1), when present.
    pub riscv_v_default_allow: Option<String>,
    /// Whether the kernel command line carries `hide_v0p7_ext` (vendor SG2042 kernels: hide
    /// the 0.7.1 unit so user space does not take RVV 1.0 paths).
    pub hide_v0p7_ext: Option<bool>,
    /// What the facts suggest, in plain words.
    pub notes: Vec<String>,
    /// The user who ran icepick and their home directory (`$USER`/`$LOGNAME`, `$HOME`), so that
    /// `report --redact` can remove the capturing user's names wherever the report is made.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub user: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub home: Option<String>,
}

/// `uname(2)`.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Kernel {
    pub sysname: String,
    /// The machine's host name (`uname -n`): kept so that `report --redact` can remove the
    /// capturing machine's name from a report made elsewhere.
    pub nodename: String,
    pub release: String,
    pub version: String,
    pub machine: String,
}

/// The `/proc/cpuinfo` lines that matter for vector support, with each distinct value and how
/// many processors report it (heterogeneous SoCs report different harts differently).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct CpuInfo {
    pub processors: usize,
    pub fields: BTreeMap<String, BTreeMap<String, usize>>,
}

/// The cpuinfo keys kept.
const CPUINFO_KEYS: &[&str] = &[
    "isa",
    "hart isa",
    "mmu",
    "mvendorid",
    "marchid",
    "mimpid",
    "uarch",
    "model name",
];

/// Parses `/proc/cpuinfo` text.
pub fn parse_cpuinfo(text: &str) -> CpuInfo {
    let mut c = CpuInfo::default();
    for line in text.lines() {
        let Some((k, v)) = line.split_once(':') else {
            continue;
        };
        let k = k.trim();
        if k == "processor" {
            c.processors += 1;
        }
        if CPUINFO_KEYS.contains(&k) {
            *c.fields
                .entry(k.to_owned())
                .or_default()
                .entry(v.trim().to_owned())
                .or_default() += 1;
        }
    }
    c
}

impl CpuInfo {
    /// The value most processors report for `key`.
    pub fn value(&self, key: &str) -> Option<&str> {
        self.fields
            .get(key)?
            .iter()
            .max_by_key(|(_, n)| **n)
            .map(|(v, _)| v.as_str())
    }

    /// `key` parsed as a hex or decimal number.
    pub fn number(&self, key: &str) -> Option<u64> {
        parse_number(self.value(key)?)
    }
}

/// A cpuinfo number: `0x…` hex, else decimal.
pub(crate) fn parse_number(s: &str) -> Option<u64> {
    match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(h) => u64::from_str_radix(h, 16).ok(),
        None => s.parse().ok(),
    }
}

/// `AT_HWCAP`, with the single-letter extensions decoded on RISC-V.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Hwcap {
    pub value: u64,
    /// `imafdcv` style, RISC-V only.
    pub letters: Option<String>,
    /// Bit 21 (`V`): the kernel says ratified RVV 1.0 is usable by this task.
    pub v: Option<bool>,
}

/// Decodes `AT_HWCAP` (`riscv` selects the single-letter decoding).
pub fn decode_hwcap(value: u64, riscv: bool) -> Hwcap {
    if !riscv {
        return Hwcap {
            value,
            letters: None,
            v: None,
        };
    }
    let letters = (0..26u8)
        .filter(|i| value & (1 << i) != 0)
        .map(|i| char::from(b'a' + i))
        .collect();
    Hwcap {
        value,
        letters: Some(letters),
        v: Some(value & HWCAP_ISA_V != 0),
    }
}

/// One `riscv_hwprobe` key/value pair.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HwprobePair {
    pub key: i64,
    pub name: &'static str,
    /// `false` when the kernel answered `key = -1` (key unknown to it).
    pub known: bool,
    pub value: u64,
    /// Decoded bits for `IMA_EXT_0` and `VENDOR_EXT_THEAD_0`.
    pub decoded: Vec<&'static str>,
}

/// The keys asked: MVENDORID, MARCHID, MIMPID, IMA_EXT_0, VENDOR_EXT_THEAD_0.
pub const HWPROBE_KEYS: &[(i64, &str)] = &[
    (0, "mvendorid"),
    (1, "marchid"),
    (2, "mimpid"),
    (4, "ima_ext_0"),
    (11, "vendor_ext_thead_0"),
];

/// `RISCV_HWPROBE_KEY_IMA_EXT_0` bits 0–58 (`arch/riscv/include/uapi/asm/hwprobe.h`).
const IMA_EXT_0: &[&str] = &[
    "fd",
    "c",
    "v",
    "zba",
    "zbb",
    "zbs",
    "zicboz",
    "zbc",
    "zbkb",
    "zbkc",
    "zbkx",
    "zknd",
    "zkne",
    "zknh",
    "zksed",
    "zksh",
    "zkt",
    "zvbb",
    "zvbc",
    "zvkb",
    "zvkg",
    "zvkned",
    "zvknha",
    "zvknhb",
    "zvksed",
    "zvksh",
    "zvkt",
    "zfh",
    "zfhmin",
    "zihintntl",
    "zvfh",
    "zvfhmin",
    "zfa",
    "ztso",
    "zacas",
    "zicond",
    "zihintpause",
    "zve32x",
    "zve32f",
    "zve64x",
    "zve64f",
    "zve64d",
    "zimop",
    "zca",
    "zcb",
    "zcd",
    "zcf",
    "zcmop",
    "zawrs",
    "supm",
    "zicntr",
    "zihpm",
    "zfbfmin",
    "zvfbfmin",
    "zvfbfwma",
    "zicbom",
    "zaamo",
    "zalrsc",
    "zabha",
];

/// Builds the reported pair for a raw `(key, value)` the kernel returned for `asked`.
pub fn hwprobe_pair(asked: i64, name: &'static str, key: i64, value: u64) -> HwprobePair {
    let known = key != -1;
    let decoded = match (asked, known) {
        (4, true) => IMA_EXT_0
            .iter()
            .enumerate()
            .filter(|(i, _)| value & (1 << i) != 0)
            .map(|(_, n)| *n)
            .collect(),
        (11, true) if value & 1 != 0 => vec!["xtheadvector"],
        _ => Vec::new(),
    };
    HwprobePair {
        key: asked,
        name,
        known,
        value: if known { value } else { 0 },
        decoded,
    }
}

/// The `riscv_hwprobe` answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "state")]
pub enum Hwprobe {
    Ok {
        pairs: Vec<HwprobePair>,
    },
    /// ENOSYS: kernel < 6.4 or an emulator without it (qemu-user 7.2).
    Error {
        errno: i32,
        meaning: String,
    },
    NotRiscv,
}

impl Hwprobe {
    fn pairs(&self) -> &[HwprobePair] {
        match self {
            Hwprobe::Ok { pairs } => pairs,
            _ => &[],
        }
    }
}

/// The per-task vector control.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "state")]
pub enum VControl {
    /// `prctl(PR_RISCV_V_GET_CONTROL)` returned a value.
    Value {
        raw: i64,
        /// `default`, `off` or `on` for this thread now.
        current: &'static str,
        /// What the next execve applies.
        next: &'static str,
        inherit: bool,
    },
    /// The call failed; EINVAL means the kernel has no vector support (or qemu-user, which
    /// does not emulate this prctl).
    Error {
        errno: i32,
        meaning: String,
    },
    NotRiscv,
}

/// Decodes the value of `prctl(PR_RISCV_V_GET_CONTROL)`: CUR in bits 0–1, NEXT in bits 2–3
/// (0 default, 1 off, 2 on), INHERIT 0x10.
pub fn decode_v_control(raw: i64) -> VControl {
    let name = |v: i64| match v & 3 {
        0 => "default",
        1 => "off",
        2 => "on",
        _ => "reserved",
    };
    VControl::Value {
        raw,
        current: name(raw),
        next: name(raw >> 2),
        inherit: raw & 0x10 != 0,
    }
}

/// Whether a kernel command line carries `flag` as a word (`flag` or `flag=…`).
pub fn cmdline_has(cmdline: &str, flag: &str) -> bool {
    cmdline
        .split_whitespace()
        .any(|w| w == flag || w.strip_prefix(flag).is_some_and(|r| r.starts_with('=')))
}

/// Plain-words reading of the facts (docs/rvv.md §1.1: a vendor kernel that sets HWCAP V on an
/// XTheadVector core sends RVV-1.0 dispatch onto a 0.7.1 unit).
pub fn assess(f: &HostFacts) -> Vec<String> {
    let mut notes = Vec::new();
    if !f.riscv {
        notes.push(format!(
            "not a RISC-V host ({}): vector facts do not apply; run `icepick probe` on the machine \
             where the compiler crashed",
            f.arch
        ));
        return notes;
    }
    let vendor = f.cpuinfo.number("mvendorid").or_else(|| {
        f.hwprobe
            .pairs()
            .iter()
            .find(|p| p.key == 0 && p.known)
            .map(|p| p.value)
    });
    let hwcap_v = f.hwcap.as_ref().and_then(|h| h.v).unwrap_or(false);
    let thead_ext = f
        .hwprobe
        .pairs()
        .iter()
        .any(|p| p.decoded.contains(&"xtheadvector"));
    if vendor == Some(MVENDORID_THEAD) {
        let mimpid = f.cpuinfo.number("mimpid");
        // Linux's test for a 0.7.1 unit: marchid and mimpid both 0 (marchid may be absent).
        let marchid = f.cpuinfo.number("marchid");
        if hwcap_v && mimpid == Some(0) && marchid.unwrap_or(0) == 0 {
            notes.push(
                "T-Head core (mvendorid 0x5b7, marchid and mimpid 0: C906/C910/C920 class, vector 0.7.1) and \
                 AT_HWCAP reports V (RVV 1.0): a vendor kernel is advertising a 0.7.1 unit as \
                 RVV 1.0, so RVV-1.0 code paths will fault (boot with hide_v0p7_ext, or use a \
                 mainline kernel >= 6.14)"
                    .into(),
            );
        } else if hwcap_v {
            notes.push("T-Head core and AT_HWCAP reports V: check which vector version the core implements".into());
        }
        if thead_ext {
            notes.push("riscv_hwprobe reports XTheadVector (mainline >= 6.14 support)".into());
        }
    }
    if let VControl::Value { current, next, .. } = &f.v_control {
        if *current == "off" || *next == "off" {
            notes.push(format!(
                "vector use is disabled for this task (current {current}, next exec {next})"
            ));
        }
    }
    if let VControl::Error { errno, .. } = &f.v_control {
        if *errno == libc::EINVAL && hwcap_v {
            notes.push(
                "AT_HWCAP reports V but the kernel has no PR_RISCV_V_* control: an out-of-tree \
                 (vendor) vector implementation or an emulator"
                    .into(),
            );
        }
    }
    if f.riscv_v_default_allow.as_deref() == Some("0") {
        notes.push("riscv_v_default_allow is 0: new programs start with vector disabled".into());
    }
    notes
}

/// Collects the facts of this host.
pub fn probe() -> HostFacts {
    let riscv = cfg!(target_arch = "riscv64");
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo")
        .map(|t| parse_cpuinfo(&t))
        .unwrap_or_default();
    let mut f = HostFacts {
        kernel: uname(),
        arch: std::env::consts::ARCH,
        riscv,
        cpuinfo,
        hwcap: Some(decode_hwcap(getauxval_hwcap(), riscv)),
        hwprobe: os::hwprobe(),
        v_control: os::v_control(),
        riscv_v_default_allow: std::fs::read_to_string("/proc/sys/abi/riscv_v_default_allow")
            .ok()
            .map(|s| s.trim().to_owned()),
        hide_v0p7_ext: std::fs::read_to_string("/proc/cmdline")
            .ok()
            .map(|c| cmdline_has(&c, "hide_v0p7_ext")),
        notes: Vec::new(),
        user: ["USER", "LOGNAME"]
            .iter()
            .find_map(|v| std::env::var(v).ok().filter(|u| !u.is_empty())),
        home: std::env::var("HOME").ok().filter(|h| !h.is_empty()),
    };
    f.notes = assess(&f);
    f
}

#[expect(
    clippy::useless_conversion,
    reason = "c_ulong is u64 here but u32 on 32-bit targets"
)]
fn getauxval_hwcap() -> u64 {
    // SAFETY: getauxval has no preconditions; it returns 0 for an absent entry.
    u64::from(unsafe { libc::getauxval(libc::AT_HWCAP) })
}

fn uname() -> Kernel {
    // SAFETY: utsname is plain old data; uname fills it and NUL-terminates each field.
    let mut u: libc::utsname = unsafe { std::mem::zeroed() };
    if unsafe { libc::uname(&mut u) } != 0 {
        return Kernel::default();
    }
    let field = |f: &[libc::c_char]| {
        let bytes: Vec<u8> = f
            .iter()
            .take_while(|c| **c != 0)
            .map(|c| c.to_ne_bytes()[0])
            .collect();
        String::from_utf8_lossy(&bytes).into_owned()
    };
    Kernel {
        sysname: field(&u.sysname),
        nodename: field(&u.nodename),
        release: field(&u.release),
        version: field(&u.version),
        machine: field(&u.machine),
    }
}

/// What an errno from the vector prctl or `riscv_hwprobe` means.
pub fn errno_text(errno: i32) -> String {
    let meaning = match errno {
        libc::EINVAL => "EINVAL: the kernel has no vector support (or runs under qemu-user)",
        libc::ENOSYS => "ENOSYS: the syscall is not implemented (kernel < 6.4, or qemu-user < 8)",
        libc::EPERM => "EPERM",
        _ => "",
    };
    if meaning.is_empty() {
        std::io::Error::from_raw_os_error(errno).to_string()
    } else {
        meaning.to_owned()
    }
}

#[cfg(target_arch = "riscv64")]
mod os {
    use super::*;

    #[repr(C)]
    struct Pair {
        key: i64,
        value: u64,
    }

    pub(super) fn hwprobe() -> Hwprobe {
        let mut pairs: Vec<Pair> = HWPROBE_KEYS
            .iter()
            .map(|(k, _)| Pair { key: *k, value: 0 })
            .collect();
        // SAFETY: riscv_hwprobe(pairs, count, cpusetsize = 0, cpus = NULL, flags = 0) writes
        // only within `pairs[..count]`.
        let r = unsafe {
            libc::syscall(
                NR_RISCV_HWPROBE,
                pairs.as_mut_ptr(),
                pairs.len(),
                0usize,
                std::ptr::null_mut::<libc::c_void>(),
                0u32,
            )
        };
        if r != 0 {
            let errno = std::io::Error::last_os_error().raw_os_error().unwrap_or(0);
            return Hwprobe::Error {
                errno,
                meaning: errno_text(errno),
            };
        }
        Hwprobe::Ok {
            pairs: HWPROBE_KEYS
                .iter()
                .zip(&pairs)
                .map(|((k, n), p)| hwprobe_pair(*k, n, p.key, p.value))
                .collect(),
        }
    }

    pub(super) fn v_control() -> VControl {
        // SAFETY: PR_RISCV_V_GET_CONTROL takes no pointers.
        let r = unsafe { libc::prctl(PR_RISCV_V_GET_CONTROL, 0, 0, 0, 0) };
        if r < 0 {
            let errno = std::io::Error::last_os_error().raw_os_error().unwrap_or(0);
            return VControl::Error {
                errno,
                meaning: errno_text(errno),
            };
        }
        decode_v_control(i64::from(r))
    }
}

#[cfg(not(target_arch = "riscv64"))]
mod os {
    use super::*;

    pub(super) fn hwprobe() -> Hwprobe {
        Hwprobe::NotRiscv
    }

    pub(super) fn v_control() -> VControl {
        VControl::NotRiscv
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An SG2042: the values quoted in the sophgo/linux-riscv PR #50 thread (docs/rvv.md §1.1), laid out
    /// as the kernel prints cpuinfo; two harts of 64.
    const SG2042: &str = "processor\t: 0\nhart\t\t: 0\nisa\t\t: rv64imafdcv\nmmu\t\t: sv39\n\
        mvendorid\t: 0x5b7\nmarchid\t\t: 0x0\nmimpid\t\t: 0x0\n\n\
        processor\t: 1\nhart\t\t: 1\nisa\t\t: rv64imafdcv\nmmu\t\t: sv39\n\
        mvendorid\t: 0x5b7\nmarchid\t\t: 0x0\nmimpid\t\t: 0x0\n\n";

    /// A synthetic RVV 1.0 core on a mainline kernel (illustrative ids, not a real machine's).
    const RVV1_CORE: &str = "processor\t: 0\nhart\t\t: 0\nmodel name\t: Example RVV core\n\
        isa\t\t: rv64imafdcv_zicbom_zicboz_zicntr_zicond_zicsr_zifencei_zihintpause_zihpm_zfh_zfhmin_zca_zcd_zba_zbb_zbc_zbs_zkt_zve32f_zve32x_zve64d_zve64f_zve64x_zvfh_zvfhmin_zvkt_sscofpmf_sstc_svinval_svnapot_svpbmt\n\
        mmu\t\t: sv39\nmvendorid\t: 0x489\nmarchid\t\t: 0x8000000000000007\nmimpid\t\t: 0x20181004\n\
        hart isa\t: rv64imafdcv_zicbom\n";

    fn facts(cpuinfo: &str, hwcap: u64) -> HostFacts {
        HostFacts {
            kernel: Kernel::default(),
            arch: "riscv64",
            riscv: true,
            cpuinfo: parse_cpuinfo(cpuinfo),
            hwcap: Some(decode_hwcap(hwcap, true)),
            hwprobe: Hwprobe::Error {
                errno: libc::ENOSYS,
                meaning: errno_text(libc::ENOSYS),
            },
            v_control: VControl::Error {
                errno: libc::EINVAL,
                meaning: errno_text(libc::EINVAL),
            },
            riscv_v_default_allow: None,
            hide_v0p7_ext: Some(false),
            notes: Vec::new(),
            user: None,
            home: None,
        }
    }

    #[test]
    fn cpuinfo_fields() {
        let c = parse_cpuinfo(SG2042);
        assert_eq!(c.processors, 2);
        assert_eq!(c.value("isa"), Some("rv64imafdcv"));
        assert_eq!(c.fields["isa"]["rv64imafdcv"], 2);
        assert_eq!(c.number("mvendorid"), Some(0x5b7));
        assert_eq!(c.number("mimpid"), Some(0));
        let k = parse_cpuinfo(RVV1_CORE);
        assert_eq!(k.value("model name"), Some("Example RVV core"));
        assert_eq!(k.value("hart isa"), Some("rv64imafdcv_zicbom"));
        assert_eq!(k.number("marchid"), Some(0x8000_0000_0000_0007));
        // x86 cpuinfo has none of the RISC-V keys.
        let x = parse_cpuinfo(
            "processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Xeon\nflags\t\t: fpu\n",
        );
        assert_eq!(x.processors, 1);
        assert_eq!(x.value("isa"), None);
    }

    #[test]
    fn hwcap_letters() {
        // qemu-riscv64 rv64 (docs/rvv.md §1.5): 0x112d = acdfim; with v=true 0x20112d.
        let h = decode_hwcap(0x112d, true);
        assert_eq!(h.letters.as_deref(), Some("acdfim"));
        assert_eq!(h.v, Some(false));
        let h = decode_hwcap(0x20112d, true);
        assert_eq!(h.letters.as_deref(), Some("acdfimv"));
        assert_eq!(h.v, Some(true));
        assert_eq!(decode_hwcap(0xbfebfbff, false).letters, None);
    }

    #[test]
    fn hwprobe_decoding() {
        // qemu 10 with v=true (docs/rvv.md §1.5).
        let p = hwprobe_pair(4, "ima_ext_0", 4, 0x1_2000_00ff);
        assert!(p.known);
        assert_eq!(
            p.decoded,
            [
                "fd",
                "c",
                "v",
                "zba",
                "zbb",
                "zbs",
                "zicboz",
                "zbc",
                "zihintntl",
                "zfa"
            ]
        );
        let p = hwprobe_pair(11, "vendor_ext_thead_0", -1, 0);
        assert!(!p.known);
        assert!(p.decoded.is_empty());
        let p = hwprobe_pair(11, "vendor_ext_thead_0", 11, 1);
        assert_eq!(p.decoded, ["xtheadvector"]);
        assert_eq!(IMA_EXT_0[41], "zve64d");
        assert_eq!(IMA_EXT_0[58], "zabha");
    }

    #[test]
    fn v_control_values() {
        assert_eq!(
            decode_v_control(0x16),
            VControl::Value {
                raw: 0x16,
                current: "on",
                next: "off",
                inherit: true
            }
        );
        assert!(matches!(
            decode_v_control(0),
            VControl::Value {
                current: "default",
                next: "default",
                inherit: false,
                ..
            }
        ));
    }

    #[test]
    fn cmdline_flag() {
        assert!(cmdline_has(
            "console=ttyS0 hide_v0p7_ext root=/dev/sda",
            "hide_v0p7_ext"
        ));
        assert!(cmdline_has("hide_v0p7_ext=1", "hide_v0p7_ext"));
        assert!(!cmdline_has("hide_v0p7_extra", "hide_v0p7_ext"));
        assert!(!cmdline_has("", "hide_v0p7_ext"));
    }

    #[test]
    fn assessment() {
        let n = assess(&facts(SG2042, 0x20112d));
        assert!(
            n.iter().any(|s| s.contains("advertising a 0.7.1 unit")),
            "{n:?}"
        );
        assert!(
            n.iter().any(|s| s.contains("no PR_RISCV_V_* control")),
            "{n:?}"
        );
        let n = assess(&facts(RVV1_CORE, 0x20112d));
        assert!(!n.iter().any(|s| s.contains("0.7.1")), "{n:?}");
        let mut x = facts("", 0);
        x.riscv = false;
        x.arch = "x86_64";
        assert!(assess(&x)[0].starts_with("not a RISC-V host"));
    }

    #[test]
    fn probe_runs_here() {
        let f = probe();
        assert!(!f.kernel.release.is_empty());
        let hostname = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
        assert_eq!(f.kernel.nodename, hostname.trim());
        if !f.riscv {
            assert_eq!(f.v_control, VControl::NotRiscv);
            assert_eq!(f.hwprobe, Hwprobe::NotRiscv);
        }
    }
}
