//! RISC-V ELF inspection for telling host vector (RVV) faults from compiler bugs
//! (`docs/rvv.md`): header facts and `.riscv.attributes`
//! ([`header`]), the vector-instruction classifier and [`decode_at`] for a faulting
//! instruction ([`insn`]), the static scan of executable sections ([`scan`]), and the loader's
//! `DT_NEEDED` closure ([`closure`]).
//!
//! Everything here works on `&[u8]` and spawns nothing; the only filesystem access is
//! [`closure::HostFs`], behind the [`closure::Fs`] trait the closure walk takes.

pub mod closure;
pub mod header;
pub mod insn;
pub mod scan;

use rayon::prelude::*;
use serde::Serialize;

pub use closure::{dynamic_info, resolve, Closure, DynamicInfo, Fs, HostFs};
pub use header::{header, riscv_arch_attribute, Header, RiscvFlags, EM_RISCV};
pub use insn::{classify, decode_at, insn_len, Decoded, Dialect, Instruction, Trap, VectorKind};
pub use scan::{scan, Counts, FileScan, FunctionCounts, Hit};

/// Why a file could not be inspected.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ElfError {
    #[error("not an ELF file")]
    NotElf,
    #[error("malformed ELF file: {0}")]
    Malformed(String),
}

/// Scans many files in parallel (rayon), keeping their order.
pub fn scan_all<B: AsRef<[u8]> + Sync>(files: &[B]) -> Vec<Result<FileScan, ElfError>> {
    files.par_iter().map(|b| scan(b.as_ref())).collect()
}

/// Which vector dialect a set of files shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// No vector instructions at all.
    None,
    /// RVV-1.0-only encodings and no XTheadVector-only ones.
    Rvv1,
    /// XTheadVector-only encodings and no RVV-1.0-only ones.
    Xtheadvector,
    /// Vector instructions with no decisive encoding, or decisive encodings of both dialects.
    Ambiguous,
}

impl Verdict {
    pub fn of(c: &Counts) -> Self {
        match (c.vector_instructions, c.rvv1_only, c.xthead_only) {
            (0, _, _) => Verdict::None,
            (_, r, 0) if r > 0 => Verdict::Rvv1,
            (_, 0, x) if x > 0 => Verdict::Xtheadvector,
            _ => Verdict::Ambiguous,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::None => "none",
            Verdict::Rvv1 => "rvv1",
            Verdict::Xtheadvector => "xtheadvector",
            Verdict::Ambiguous => "ambiguous",
        }
    }
}

/// True when `path` is a regular file whose ELF header names a RISC-V machine. Reads 64 bytes
/// at most: the path may come from a case (`/dev/zero`, a FIFO, a huge file).
pub fn is_riscv_file(path: &std::path::Path) -> bool {
    use std::io::Read;
    if !std::fs::metadata(path).is_ok_and(|m| m.is_file()) {
        return false;
    }
    let mut head = Vec::with_capacity(64);
    std::fs::File::open(path)
        .and_then(|f| f.take(64).read_to_end(&mut head))
        .is_ok()
        && header(&head).is_ok_and(|h| h.e_machine == EM_RISCV)
}

/// Maps a virtual address (e.g. a stack dump's `module+0xOFF`, which is relative to a load
/// base of 0 for a shared object) to a file offset through the loadable segments.
pub fn vaddr_to_offset(bytes: &[u8], vaddr: u64) -> Option<u64> {
    use object::{Object, ObjectSegment};
    let file = object::File::parse(bytes).ok()?;
    file.segments().find_map(|s| {
        let (off, size) = s.file_range();
        let rel = vaddr.checked_sub(s.address())?;
        (rel < size).then_some(off + rel)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdicts() {
        let c = |v, r, x| Counts {
            vector_instructions: v,
            rvv1_only: r,
            xthead_only: x,
            vector_csr: 0,
        };
        assert_eq!(Verdict::of(&c(0, 0, 0)), Verdict::None);
        assert_eq!(Verdict::of(&c(9, 2, 0)), Verdict::Rvv1);
        assert_eq!(Verdict::of(&c(10, 0, 1)), Verdict::Xtheadvector);
        assert_eq!(Verdict::of(&c(12, 0, 0)), Verdict::Ambiguous);
        assert_eq!(Verdict::of(&c(6, 1, 1)), Verdict::Ambiguous);
    }

    #[test]
    fn is_riscv_file_only_looks_at_headers_of_regular_files() {
        // A device that never ends, a directory and this (x86_64) test binary: all false, and
        // /dev/zero is not read whole.
        assert!(!is_riscv_file(std::path::Path::new("/dev/zero")));
        assert!(!is_riscv_file(std::path::Path::new("/")));
        assert!(!is_riscv_file(&std::env::current_exe().unwrap()));
        // The first 64 bytes of an ELF64 RISC-V header are enough.
        let mut h = vec![0u8; 64];
        h[..4].copy_from_slice(b"\x7fELF");
        h[4] = 2; // ELFCLASS64
        h[5] = 1; // little-endian
        h[6] = 1;
        h[18] = EM_RISCV as u8;
        let f = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(f.path(), &h).unwrap();
        assert_eq!(is_riscv_file(f.path()), header(&h).is_ok());
        assert!(is_riscv_file(f.path()), "{:?}", header(&h).err());
    }
}
