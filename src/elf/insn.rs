//! RISC-V instruction lengths, the vector-instruction classifier with dialect evidence, and
//! [`decode_at`], which labels one instruction (E2: the faulting instruction of a crash).
//!
//! Encodings are from the RVV 1.0 spec (tag `v1.0`), the 0.7.1 draft and T-Head's
//! `xtheadvector.adoc` (`docs/rvv.md` §1.4). Every vector instruction is 32 bits.
//! The kernel's first-use trap filter (`riscv_v_first_use_handler`) accepts exactly the three
//! groups this module counts: OP-V, LOAD-FP/STORE-FP with a vector width, and vector CSRs.
//!
//! Dialect evidence is deliberately narrow: an encoding counts as RVV-1.0-only or
//! XTheadVector-only only when the other dialect reserves it. Most instructions exist in both
//! (`th.vle.v` has the same bits as `vle64.v`), and are [`Dialect::Ambiguous`].

use serde::Serialize;

/// Length in bytes of the instruction whose first 16-bit parcel is `lo`: 2, 4, 6 or 8.
/// Longer (reserved) encodings are reported as 2 so a linear walk resynchronises.
pub fn insn_len(lo: u16) -> usize {
    if lo & 0x3 != 0x3 {
        2
    } else if lo & 0x1f != 0x1f {
        4
    } else if lo & 0x3f == 0x1f {
        6
    } else if lo & 0x7f == 0x3f {
        8
    } else {
        2
    }
}

/// Major opcodes (bits 6:0).
const OP_V: u32 = 0x57;
const LOAD_FP: u32 = 0x07;
const STORE_FP: u32 = 0x27;
const SYSTEM: u32 = 0x73;

/// What a vector instruction does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum VectorKind {
    /// `vsetvli`, `vsetivli`, `vsetvl` (OP-V, funct3 7).
    Config,
    /// OP-V arithmetic (funct3 0–6).
    Arith,
    /// LOAD-FP with width 0/5/6/7.
    Load,
    /// STORE-FP with width 0/5/6/7.
    Store,
    /// A CSR instruction naming a vector CSR (0x008–0x00F, 0xC20–0xC22).
    Csr,
}

/// Which vector dialect an encoding belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Dialect {
    /// Valid in ratified RVV 1.0, reserved in XTheadVector/0.7.1.
    Rvv1Only,
    /// Valid in XTheadVector/0.7.1, reserved in RVV 1.0.
    #[serde(rename = "xthead_only")]
    XTheadOnly,
    /// Valid in both (or decisive in neither).
    Ambiguous,
}

/// One classified vector instruction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VectorInsn {
    pub kind: VectorKind,
    pub dialect: Dialect,
    /// Why the dialect is what it is, or the instruction's name when ambiguous.
    pub note: &'static str,
}

/// Classifies a 32-bit instruction word; `None` if it is not a vector instruction.
pub fn classify(w: u32) -> Option<VectorInsn> {
    let funct3 = (w >> 12) & 7;
    match w & 0x7f {
        OP_V if funct3 == 7 => Some(classify_config(w)),
        OP_V => Some(VectorInsn {
            kind: VectorKind::Arith,
            dialect: Dialect::Ambiguous,
            note: "vector arithmetic",
        }),
        LOAD_FP | STORE_FP if matches!(funct3, 0 | 5 | 6 | 7) => Some(classify_mem(w)),
        SYSTEM if funct3 != 0 && funct3 != 4 && is_vector_csr(w >> 20) => Some(VectorInsn {
            kind: VectorKind::Csr,
            dialect: Dialect::Ambiguous,
            note: csr_name(w >> 20),
        }),
        _ => None,
    }
}

fn classify_config(w: u32) -> VectorInsn {
    let v = |dialect, note| VectorInsn {
        kind: VectorKind::Config,
        dialect,
        note,
    };
    if w >> 31 == 0 {
        // vsetvli: zimm[10:0] in bits 30:20.
        let zimm = (w >> 20) & 0x7ff;
        if zimm & 0x80 != 0 {
            // vma exists only in 1.0; 0.7.1 reserves vtype bits 7 and up.
            v(Dialect::Rvv1Only, "vsetvli with vma (vtype bit 7)")
        } else if zimm & 7 == 4 {
            // vlmul=100 is reserved in 1.0; in 0.7.1 it is vsew bit 0 set with vlmul=00.
            v(
                Dialect::XTheadOnly,
                "vsetvli with vtype&7 == 4 (reserved vlmul in 1.0)",
            )
        } else {
            v(Dialect::Ambiguous, "vsetvli")
        }
    } else if w >> 30 == 3 {
        v(Dialect::Rvv1Only, "vsetivli (not in 0.7.1)")
    } else if w >> 25 == 0x40 {
        v(Dialect::Ambiguous, "vsetvl")
    } else {
        v(Dialect::Ambiguous, "reserved vector config encoding")
    }
}

fn classify_mem(w: u32) -> VectorInsn {
    let kind = if w & 0x7f == LOAD_FP {
        VectorKind::Load
    } else {
        VectorKind::Store
    };
    let mew = (w >> 28) & 1;
    let mop = (w >> 26) & 3;
    let umop = (w >> 20) & 0x1f;
    let (dialect, note) = if mew == 1 {
        // 0.7.1 has a 3-bit mop (bits 28:26): sign-extending loads and unordered indexed
        // stores set bit 28, which RVV 1.0 reserves (mew, for EEW > 64).
        (
            Dialect::XTheadOnly,
            "mew=1 (0.7.1 3-bit mop; reserved in 1.0)",
        )
    } else if mop == 0 && umop == 0x08 {
        (Dialect::Rvv1Only, "whole-register load/store (lumop 01000)")
    } else if mop == 0 && umop == 0x0b {
        (Dialect::Rvv1Only, "mask load/store (lumop 01011)")
    } else if mop == 1 {
        // 1.0: indexed-unordered; 0.7.1 reserves mop=001.
        (
            Dialect::Rvv1Only,
            "indexed-unordered (mop=01; reserved in 0.7.1)",
        )
    } else if kind == VectorKind::Load {
        (Dialect::Ambiguous, "vector load")
    } else {
        (Dialect::Ambiguous, "vector store")
    };
    VectorInsn {
        kind,
        dialect,
        note,
    }
}

/// Whether `csr` is one of the vector CSRs the kernel's first-use filter traps on.
pub fn is_vector_csr(csr: u32) -> bool {
    matches!(csr, 0x008..=0x00f | 0xc20..=0xc22)
}

fn csr_name(csr: u32) -> &'static str {
    match csr {
        0x008 => "vector CSR access: vstart",
        0x009 => "vector CSR access: vxsat",
        0x00a => "vector CSR access: vxrm",
        0x00f => "vector CSR access: vcsr",
        0xc20 => "vector CSR access: vl",
        0xc21 => "vector CSR access: vtype",
        0xc22 => "vector CSR access: vlenb",
        _ => "vector CSR access (unallocated vector CSR number)",
    }
}

/// A trap instruction: what `__builtin_trap`, `llvm_unreachable` and assertions compile to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Trap {
    /// `c.unimp` (0x0000).
    CUnimp,
    /// `unimp` (0xc0001073, `csrrw x0, cycle, x0`).
    Unimp,
    /// `ebreak` (0x00100073).
    Ebreak,
    /// `c.ebreak` (0x9002).
    CEbreak,
}

impl Trap {
    pub fn mnemonic(self) -> &'static str {
        match self {
            Trap::CUnimp => "c.unimp",
            Trap::Unimp => "unimp",
            Trap::Ebreak => "ebreak",
            Trap::CEbreak => "c.ebreak",
        }
    }
}

/// What the instruction at an offset is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decoded {
    Vector(VectorInsn),
    Trap(Trap),
    Other,
}

/// One decoded instruction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Instruction {
    /// 2, 4, 6 or 8.
    pub len: usize,
    /// The instruction's bytes, little-endian, zero-extended (the low `8 * len` bits count).
    pub raw: u64,
    pub what: Decoded,
}

impl Instruction {
    /// A one-line description, e.g. `0x0c047657 vector config, rvv1-only: vsetvli with vma`.
    pub fn describe(&self) -> String {
        let hex = format!("0x{:0width$x}", self.raw, width = self.len * 2);
        match self.what {
            Decoded::Vector(v) => {
                let d = match v.dialect {
                    Dialect::Rvv1Only => "RVV-1.0-only",
                    Dialect::XTheadOnly => "XTheadVector-only",
                    Dialect::Ambiguous => "dialect-ambiguous",
                };
                format!("{hex} vector instruction ({d}): {}", v.note)
            }
            Decoded::Trap(t) => format!("{hex} trap: {}", t.mnemonic()),
            Decoded::Other => format!("{hex} not a vector or trap instruction"),
        }
    }
}

/// Decodes the instruction at `offset` in `bytes` (little-endian RISC-V code), or `None` when
/// fewer bytes remain than its length needs.
pub fn decode_at(bytes: &[u8], offset: usize) -> Option<Instruction> {
    let lo = u16::from_le_bytes(bytes.get(offset..offset.checked_add(2)?)?.try_into().ok()?);
    let len = insn_len(lo);
    let b = bytes.get(offset..offset + len)?;
    let mut raw = 0u64;
    for (i, byte) in b.iter().enumerate() {
        raw |= u64::from(*byte) << (8 * i);
    }
    let what = match len {
        2 => match lo {
            0x0000 => Decoded::Trap(Trap::CUnimp),
            0x9002 => Decoded::Trap(Trap::CEbreak),
            _ => Decoded::Other,
        },
        4 => {
            let w = raw as u32;
            match w {
                0xc000_1073 => Decoded::Trap(Trap::Unimp),
                0x0010_0073 => Decoded::Trap(Trap::Ebreak),
                _ => classify(w).map_or(Decoded::Other, Decoded::Vector),
            }
        }
        _ => Decoded::Other,
    };
    Some(Instruction { len, raw, what })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dialect(w: u32) -> Option<Dialect> {
        classify(w).map(|v| v.dialect)
    }

    #[test]
    fn lengths_follow_the_low_bits() {
        assert_eq!(insn_len(0x0000), 2);
        assert_eq!(insn_len(0x4501), 2); // c.li a0,0
        assert_eq!(insn_len(0x7657), 4); // low half of vsetvli
        assert_eq!(insn_len(0x0013), 4); // nop
        assert_eq!(insn_len(0x001f), 6);
        assert_eq!(insn_len(0x003f), 8);
        assert_eq!(insn_len(0x007f), 2); // >= 80-bit reserved: resync by 2
    }

    #[test]
    fn rvv_md_examples() {
        // vsetvli a2,s0,e8,m1,ta,ma (vprobe rvv path): vma set -> 1.0 only.
        let v = classify(0x0c04_7657).unwrap();
        assert_eq!(v.kind, VectorKind::Config);
        assert_eq!(v.dialect, Dialect::Rvv1Only);
        // vsetvli t0,x0,zimm=0 (vprobe thead path): e8,m1 in both dialects.
        let v = classify(0x0000_72d7).unwrap();
        assert_eq!(v.kind, VectorKind::Config);
        assert_eq!(v.dialect, Dialect::Ambiguous);
        // 0.7.1 sign-extending unit-stride load th.vlb.v v1,(a0): mew=1.
        let v = classify(0x1205_0087).unwrap();
        assert_eq!(v.kind, VectorKind::Load);
        assert_eq!(v.dialect, Dialect::XTheadOnly);
    }

    #[test]
    fn config_encodings() {
        // th.vsetvli a0,a1,e16,m1 (vtype 0.7.1: vsew[4:2]=001 -> zimm 0x004).
        assert_eq!(dialect(0x0045_f557), Some(Dialect::XTheadOnly));
        // vsetivli a0,16,e32,m1,ta,ma: bits 31:30 = 11.
        assert_eq!(dialect(0xcd08_7557), Some(Dialect::Rvv1Only));
        // vsetvl a0,a1,a2: bits 31:25 = 1000000.
        assert_eq!(dialect(0x80c5_f557), Some(Dialect::Ambiguous));
        // vsetvli a0,a1,e32,m1,tu,mu (zimm 0x010): valid in both.
        assert_eq!(dialect(0x0105_f557), Some(Dialect::Ambiguous));
        // vsetvli with vta only (zimm 0x050): bit 6 is vediv[1] in 0.7.1, so still ambiguous.
        assert_eq!(dialect(0x0505_f557), Some(Dialect::Ambiguous));
    }

    #[test]
    fn memory_encodings() {
        // vle8.v v1,(a0): 0x02050087 (mop 00, vm 1, lumop 0, width 000).
        assert_eq!(classify(0x0205_0087).unwrap().kind, VectorKind::Load);
        assert_eq!(dialect(0x0205_0087), Some(Dialect::Ambiguous));
        // vse8.v v1,(a1): STORE-FP 0x020580a7.
        assert_eq!(classify(0x0205_80a7).unwrap().kind, VectorKind::Store);
        assert_eq!(dialect(0x0205_80a7), Some(Dialect::Ambiguous));
        // vle64.v v8,(a0) = th.vle.v: width 111.
        assert_eq!(dialect(0x0205_7407), Some(Dialect::Ambiguous));
        // vl1re8.v v1,(a0): lumop 01000, nf 000.
        assert_eq!(dialect(0x0285_0087), Some(Dialect::Rvv1Only));
        // vs1r.v v1,(a0): sumop 01000.
        assert_eq!(dialect(0x0285_00a7), Some(Dialect::Rvv1Only));
        // vlm.v v1,(a0): lumop 01011.
        assert_eq!(dialect(0x02b5_0087), Some(Dialect::Rvv1Only));
        // vluxei8.v v1,(a0),v2: mop 01.
        assert_eq!(dialect(0x0625_0087), Some(Dialect::Rvv1Only));
        // vlse8.v v1,(a0),a1: mop 10 (strided exists in both).
        assert_eq!(dialect(0x0ab5_0087), Some(Dialect::Ambiguous));
        // Scalar flw/fld/fsd are not vector: widths 2, 3.
        assert_eq!(classify(0x0005_2087), None); // flw f1,0(a0)
        assert_eq!(classify(0x0005_3087), None); // fld f1,0(a0)
        assert_eq!(classify(0x0015_3027), None); // fsd f1,0(a0)
    }

    #[test]
    fn arithmetic_and_csrs() {
        // vadd.vv v1,v2,v3: OP-V funct3 000.
        let v = classify(0x0221_80d7).unwrap();
        assert_eq!((v.kind, v.dialect), (VectorKind::Arith, Dialect::Ambiguous));
        // csrr a0,vlenb = csrrs a0,0xc22,x0.
        let v = classify(0xc220_2573).unwrap();
        assert_eq!(v.kind, VectorKind::Csr);
        assert!(v.note.ends_with("vlenb"));
        // csrr a0,vl; csrw vstart,zero (csrrw x0,0x008,x0); csrwi vxrm,0.
        assert_eq!(classify(0xc200_2573).unwrap().kind, VectorKind::Csr);
        assert_eq!(classify(0x0080_1073).unwrap().kind, VectorKind::Csr);
        assert_eq!(classify(0x00a0_5073).unwrap().kind, VectorKind::Csr);
        // Not vector: rdcycle (csr 0xc00), csrr a0,fcsr (0x003), ecall, unimp.
        assert_eq!(classify(0xc000_2573), None);
        assert_eq!(classify(0x0030_2573), None);
        assert_eq!(classify(0x0000_0073), None);
        assert_eq!(classify(0xc000_1073), None);
        // Plain integer code.
        assert_eq!(classify(0x0000_0013), None); // nop
        assert_eq!(classify(0x0000_8067), None); // ret
    }

    #[test]
    fn decode_at_labels_traps_vectors_and_others() {
        let code: Vec<u8> = [
            &0x0000u16.to_le_bytes()[..], // c.unimp
            &0xc000_1073u32.to_le_bytes(),
            &0x0010_0073u32.to_le_bytes(),
            &0x9002u16.to_le_bytes(),
            &0x0c04_7657u32.to_le_bytes(),
            &0x1205_0087u32.to_le_bytes(),
            &0x0000_72d7u32.to_le_bytes(),
            &0x4501u16.to_le_bytes(), // c.li a0,0
            &0x8082u16.to_le_bytes(), // ret
        ]
        .concat();
        let at = |o| decode_at(&code, o).unwrap();
        assert_eq!(at(0).what, Decoded::Trap(Trap::CUnimp));
        assert_eq!(at(0).len, 2);
        assert_eq!(at(2).what, Decoded::Trap(Trap::Unimp));
        assert_eq!(at(6).what, Decoded::Trap(Trap::Ebreak));
        assert_eq!(at(10).what, Decoded::Trap(Trap::CEbreak));
        let Decoded::Vector(v) = at(12).what else {
            panic!("not vector")
        };
        assert_eq!(v.dialect, Dialect::Rvv1Only);
        let Decoded::Vector(v) = at(16).what else {
            panic!("not vector")
        };
        assert_eq!(v.dialect, Dialect::XTheadOnly);
        let Decoded::Vector(v) = at(20).what else {
            panic!("not vector")
        };
        assert_eq!(v.dialect, Dialect::Ambiguous);
        assert_eq!(at(24).what, Decoded::Other);
        assert_eq!(at(26).what, Decoded::Other);
        assert!(decode_at(&code, 28).is_none());
        assert!(decode_at(&code, 27).is_none());
        // A 32-bit instruction cut short.
        assert!(decode_at(&code[..14], 12).is_none());
        assert!(at(12).describe().contains("RVV-1.0-only"));
        assert!(at(0).describe().starts_with("0x0000 trap: c.unimp"));
        assert!(decode_at(&code, usize::MAX).is_none());
    }
}
