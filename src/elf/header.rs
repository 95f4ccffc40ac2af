//! ELF header facts (machine, class, `e_flags` decoded for RISC-V) and the
//! `.riscv.attributes` section (`Tag_RISCV_arch`), from `riscv-elf-psabi-doc/riscv-elf.adoc`.
//!
//! `Tag_RISCV_arch` is only a hint: it is the merged superset of the inputs' arch strings, so
//! inline assembly under `.option arch,+v` leaves it at `rv64gc`, and a library whose vector
//! code sits behind ifuncs lists `v1p0` although it may never run it (docs/rvv.md §1.3).

use serde::Serialize;

use super::ElfError;

/// `EM_RISCV`.
pub const EM_RISCV: u16 = 243;

/// Facts from the ELF header.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Header {
    /// `e_machine`.
    pub e_machine: u16,
    /// A readable machine name (`RISC-V`, `x86_64`, …) or `EM_<n>`.
    pub machine: String,
    /// 32 or 64.
    pub class: u8,
    pub little_endian: bool,
    /// `e_type`: 1 REL, 2 EXEC, 3 DYN, 4 CORE.
    pub e_type: u16,
    pub e_flags: u32,
    /// `e_flags` decoded, for RISC-V files only.
    pub riscv_flags: Option<RiscvFlags>,
}

/// RISC-V `e_flags` (psABI): RVC 0x1, float ABI bits 1–2, RVE 0x8, TSO 0x10, RV64ILP32 0x20.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RiscvFlags {
    pub rvc: bool,
    /// `soft`, `single`, `double` or `quad`.
    pub float_abi: &'static str,
    pub rve: bool,
    pub tso: bool,
    pub rv64ilp32: bool,
}

impl RiscvFlags {
    pub fn decode(e_flags: u32) -> Self {
        Self {
            rvc: e_flags & 0x1 != 0,
            float_abi: match (e_flags >> 1) & 3 {
                0 => "soft",
                1 => "single",
                2 => "double",
                _ => "quad",
            },
            rve: e_flags & 0x8 != 0,
            tso: e_flags & 0x10 != 0,
            rv64ilp32: e_flags & 0x20 != 0,
        }
    }
}

/// Reads the ELF identification and header fields without building a full parser.
pub fn header(bytes: &[u8]) -> Result<Header, ElfError> {
    if bytes.len() < 0x34 || &bytes[..4] != b"\x7fELF" {
        return Err(ElfError::NotElf);
    }
    let class = match bytes[4] {
        1 => 32,
        2 => 64,
        c => return Err(ElfError::Malformed(format!("unknown ELF class {c}"))),
    };
    let little_endian = match bytes[5] {
        1 => true,
        2 => false,
        d => {
            return Err(ElfError::Malformed(format!(
                "unknown ELF data encoding {d}"
            )))
        }
    };
    let u16_at = |o: usize| {
        let b = [bytes[o], bytes[o + 1]];
        if little_endian {
            u16::from_le_bytes(b)
        } else {
            u16::from_be_bytes(b)
        }
    };
    let flags_off = if class == 64 { 0x30 } else { 0x24 };
    if bytes.len() < flags_off + 4 {
        return Err(ElfError::Malformed("truncated ELF header".into()));
    }
    let fb: [u8; 4] = bytes[flags_off..flags_off + 4].try_into().expect("4 bytes");
    let e_flags = if little_endian {
        u32::from_le_bytes(fb)
    } else {
        u32::from_be_bytes(fb)
    };
    let e_machine = u16_at(0x12);
    Ok(Header {
        e_machine,
        machine: machine_name(e_machine),
        class,
        little_endian,
        e_type: u16_at(0x10),
        e_flags,
        riscv_flags: (e_machine == EM_RISCV).then(|| RiscvFlags::decode(e_flags)),
    })
}

/// A readable name for `e_machine`: the one table icepick has (`inspect`, and the core files
/// E2 refuses). The common machines are spelled as `uname -m` and Rust's
/// `std::env::consts::ARCH` spell them (`x86_64`, `aarch64`, `i386`), so a message naming a
/// core's machine reads like the host's own name for it.
pub fn machine_name(e_machine: u16) -> String {
    match e_machine {
        3 => "i386".into(),
        8 => "MIPS".into(),
        20 => "PowerPC".into(),
        21 => "PowerPC64".into(),
        22 => "S390".into(),
        40 => "ARM".into(),
        62 => "x86_64".into(),
        183 => "aarch64".into(),
        224 => "AMDGPU".into(),
        EM_RISCV => "RISC-V".into(),
        258 => "LoongArch".into(),
        n => format!("EM_{n}"),
    }
}

/// The Debian multiarch triple for a machine and class, used for `/usr/lib/<triple>`.
pub fn multiarch_triple(e_machine: u16, class: u8) -> Option<&'static str> {
    Some(match (e_machine, class) {
        (62, 64) => "x86_64-linux-gnu",
        (3, 32) => "i386-linux-gnu",
        (183, 64) => "aarch64-linux-gnu",
        (40, 32) => "arm-linux-gnueabihf",
        (EM_RISCV, 64) => "riscv64-linux-gnu",
        (21, 64) => "powerpc64le-linux-gnu",
        (22, 64) => "s390x-linux-gnu",
        (258, 64) => "loongarch64-linux-gnu",
        _ => return None,
    })
}

/// `Tag_RISCV_arch`.
const TAG_RISCV_ARCH: u64 = 5;

/// Reads `Tag_RISCV_arch` from the contents of a `.riscv.attributes` section, through
/// `object`'s attributes reader (`'A'`, then `"riscv"` subsections of `Tag_File`
/// sub-subsections). RISC-V's rule for the values: an odd tag has a NUL-terminated string, an
/// even one a uleb128. `None` when the section has no such tag or is malformed.
pub fn riscv_arch_attribute(section: &[u8]) -> Option<String> {
    use object::read::elf::AttributesSection;
    use object::{elf, LittleEndian};
    let attrs = AttributesSection::<elf::FileHeader64<LittleEndian>>::new(LittleEndian, section);
    for sub in attrs.ok()?.subsections().ok()? {
        let sub = sub.ok()?;
        if sub.vendor() != b"riscv" {
            continue;
        }
        for subsub in sub.subsubsections() {
            let Ok(subsub) = subsub else { break };
            if subsub.tag() != elf::Tag_File {
                continue;
            }
            let mut r = subsub.attributes();
            while let Some(tag) = r.read_tag().ok()? {
                if tag % 2 == 1 {
                    let value = r.read_string().ok()?;
                    if tag == TAG_RISCV_ARCH {
                        return Some(String::from_utf8_lossy(value).into_owned());
                    }
                } else {
                    r.read_integer().ok()?;
                }
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Builds a `.riscv.attributes` section with the given file attributes.
    fn attributes(attrs: &[u8]) -> Vec<u8> {
        let mut subsub = vec![1u8];
        subsub.extend_from_slice(&((attrs.len() + 5) as u32).to_le_bytes());
        subsub.extend_from_slice(attrs);
        let mut sub = Vec::new();
        sub.extend_from_slice(&((4 + 6 + subsub.len()) as u32).to_le_bytes());
        sub.extend_from_slice(b"riscv\0");
        sub.extend_from_slice(&subsub);
        let mut s = vec![b'A'];
        s.extend_from_slice(&sub);
        s
    }

    #[test]
    fn arch_string_after_integer_attributes() {
        // Tag_RISCV_stack_align (4) = 16, then Tag_RISCV_arch (5), then
        // Tag_RISCV_unaligned_access (6) = 0.
        let mut attrs = vec![4, 16];
        attrs.push(5);
        attrs.extend_from_slice(b"rv64i2p1_m2p0_a2p1_f2p2_d2p2_c2p0_v1p0_zve32f1p0\0");
        attrs.extend_from_slice(&[6, 0]);
        let s = attributes(&attrs);
        assert_eq!(
            riscv_arch_attribute(&s).as_deref(),
            Some("rv64i2p1_m2p0_a2p1_f2p2_d2p2_c2p0_v1p0_zve32f1p0")
        );
    }

    #[test]
    fn missing_or_malformed_attributes() {
        assert_eq!(riscv_arch_attribute(&attributes(&[4, 16])), None);
        assert_eq!(riscv_arch_attribute(b""), None);
        assert_eq!(riscv_arch_attribute(b"B\x05\0\0\0"), None);
        let mut s = attributes(&[5, b'r', b'v', 0]);
        s.truncate(s.len() - 3);
        assert_eq!(riscv_arch_attribute(&s), None);
        // A uleb128 string-tag number above 127 (two bytes) is skipped correctly.
        let s = attributes(&[0x81, 0x01, b'x', 0, 5, b'r', b'v', b'6', b'4', 0]);
        assert_eq!(riscv_arch_attribute(&s).as_deref(), Some("rv64"));
    }

    #[test]
    fn e_flags_decode() {
        let f = RiscvFlags::decode(0x5);
        assert!(f.rvc && !f.rve && !f.tso);
        assert_eq!(f.float_abi, "double");
        let f = RiscvFlags::decode(0x1a);
        assert!(!f.rvc && f.rve && f.tso);
        assert_eq!(f.float_abi, "single");
        assert_eq!(RiscvFlags::decode(0x6).float_abi, "quad");
        assert_eq!(RiscvFlags::decode(0).float_abi, "soft");
    }

    #[test]
    fn header_fields() {
        let mut h = vec![0u8; 64];
        h[..4].copy_from_slice(b"\x7fELF");
        h[4] = 2;
        h[5] = 1;
        h[0x10] = 3;
        h[0x12..0x14].copy_from_slice(&EM_RISCV.to_le_bytes());
        h[0x30..0x34].copy_from_slice(&5u32.to_le_bytes());
        let hd = header(&h).unwrap();
        assert_eq!((hd.class, hd.e_type, hd.e_flags), (64, 3, 5));
        assert_eq!(hd.machine, "RISC-V");
        assert_eq!(hd.riscv_flags.unwrap().float_abi, "double");
        assert!(matches!(header(b"#!/bin/sh\n"), Err(ElfError::NotElf)));
        assert_eq!(multiarch_triple(EM_RISCV, 64), Some("riscv64-linux-gnu"));
        assert_eq!(machine_name(9999), "EM_9999");
    }
}
