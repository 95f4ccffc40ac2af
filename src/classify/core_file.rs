//! A core file of the crashed compiler as E2's source: the pc of the thread that took the
//! signal (`NT_PRSTATUS`), and the instruction there, read from the core's own memory when
//! the core holds the code (gdb's `gcore` writes it) or from the mapped file the kernel's
//! `NT_FILE` note names (kernel cores and `coredumpctl dump` leave file-backed code out).
//! Pure: it reads bytes the caller maps.

use object::read::elf::{FileHeader, ProgramHeader};
use object::{elf, Endianness};

use crate::elf::header::machine_name;
use crate::elf::{decode_at, Instruction};

/// Offset of `pr_cursig` and of `pr_reg` in a 64-bit `struct elf_prstatus`; the first
/// register of RISC-V's `user_regs_struct` is the pc.
const PR_CURSIG: usize = 12;
const PR_REG: usize = 112;

/// What a core says about the fault.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CoreFault {
    /// The signal that killed the process (`pr_cursig`), when recorded.
    pub signal: Option<i32>,
    pub pc: u64,
    /// The instruction at the pc, from the core's memory.
    pub in_memory: Option<Instruction>,
    /// The file mapped at the pc and the pc's offset in it (`NT_FILE`).
    pub mapped: Option<(String, u64)>,
}

/// Why a core cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CoreError {
    #[error("not a 64-bit ELF core file")]
    NotACore,
    #[error("a core of a {0} process: E2 decodes RISC-V instructions only")]
    NotRiscv(String),
    #[error("the core has no NT_PRSTATUS note with registers")]
    NoRegisters,
}

/// Reads the fault out of a RISC-V core file.
pub fn read(core: &[u8]) -> Result<CoreFault, CoreError> {
    let header = elf::FileHeader64::<Endianness>::parse(core).map_err(|_| CoreError::NotACore)?;
    let endian = header.endian().map_err(|_| CoreError::NotACore)?;
    if header.e_type(endian) != elf::ET_CORE {
        return Err(CoreError::NotACore);
    }
    let machine = header.e_machine(endian);
    if machine != elf::EM_RISCV {
        return Err(CoreError::NotRiscv(machine_name(machine)));
    }
    let phdrs = header
        .program_headers(endian, core)
        .map_err(|_| CoreError::NotACore)?;
    let mut prstatus: Vec<(Option<i32>, u64)> = Vec::new();
    let mut files: Vec<(u64, u64, u64, String)> = Vec::new();
    for ph in phdrs {
        let Ok(Some(mut notes)) = ph.notes(endian, core) else {
            continue;
        };
        while let Ok(Some(note)) = notes.next() {
            let desc = note.desc();
            match note.n_type(endian) {
                elf::NT_PRSTATUS if desc.len() >= PR_REG + 8 => {
                    let sig = i16::from_le_bytes([desc[PR_CURSIG], desc[PR_CURSIG + 1]]);
                    let pc = u64::from_le_bytes(desc[PR_REG..PR_REG + 8].try_into().unwrap());
                    prstatus.push(((sig != 0).then_some(i32::from(sig)), pc));
                }
                elf::NT_FILE => files = parse_nt_file(desc),
                _ => {}
            }
        }
    }
    // The kernel writes the thread that took the signal first; prefer one with a signal.
    let &(signal, pc) = prstatus
        .iter()
        .find(|(s, _)| s.is_some())
        .or(prstatus.first())
        .ok_or(CoreError::NoRegisters)?;
    let in_memory = phdrs.iter().find_map(|ph| {
        let (vaddr, filesz) = (ph.p_vaddr(endian), ph.p_filesz(endian));
        if ph.p_type(endian) != elf::PT_LOAD || pc < vaddr || pc - vaddr >= filesz {
            return None;
        }
        let start = usize::try_from(ph.p_offset(endian)).ok()?;
        let len = usize::try_from(filesz).ok()?;
        let segment = core.get(start..start.checked_add(len)?)?;
        decode_at(segment, usize::try_from(pc - vaddr).ok()?)
    });
    let mapped = files
        .into_iter()
        .find(|(start, end, _, _)| (*start..*end).contains(&pc))
        .and_then(|(start, _, file_offset, name)| {
            Some((name, file_offset.checked_add(pc - start)?))
        });
    Ok(CoreFault {
        signal,
        pc,
        in_memory,
        mapped,
    })
}

/// The files mapped into the process, from the core's `NT_FILE` note (any 64-bit
/// little-endian core): (start, end, byte offset in the file, path).
pub fn mapped_files(core: &[u8]) -> Vec<(u64, u64, u64, String)> {
    let Ok(header) = elf::FileHeader64::<Endianness>::parse(core) else {
        return Vec::new();
    };
    let Ok(endian) = header.endian() else {
        return Vec::new();
    };
    let Ok(phdrs) = header.program_headers(endian, core) else {
        return Vec::new();
    };
    for ph in phdrs {
        let Ok(Some(mut notes)) = ph.notes(endian, core) else {
            continue;
        };
        while let Ok(Some(note)) = notes.next() {
            if note.n_type(endian) == elf::NT_FILE {
                return parse_nt_file(note.desc());
            }
        }
    }
    Vec::new()
}

/// `NT_FILE`: count, page size, `count` × (start, end, offset in pages), then the names.
/// Returns (start, end, byte offset, path).
fn parse_nt_file(desc: &[u8]) -> Vec<(u64, u64, u64, String)> {
    let word = |i: usize| -> Option<u64> {
        Some(u64::from_le_bytes(
            desc.get(i * 8..i * 8 + 8)?.try_into().ok()?,
        ))
    };
    let (Some(count), Some(page)) = (word(0), word(1)) else {
        return Vec::new();
    };
    let Ok(count) = usize::try_from(count) else {
        return Vec::new();
    };
    let Some(names) = count
        .checked_mul(3)
        .and_then(|n| n.checked_add(2))
        .and_then(|n| n.checked_mul(8))
        .and_then(|at| desc.get(at..))
    else {
        return Vec::new();
    };
    names
        .split(|b| *b == 0)
        .take(count)
        .enumerate()
        .filter_map(|(i, name)| {
            let base = 2 + 3 * i;
            Some((
                word(base)?,
                word(base + 1)?,
                word(base + 2)?.checked_mul(page)?,
                String::from_utf8_lossy(name).into_owned(),
            ))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nt_file_lists_mappings_with_byte_offsets() {
        let mut d = Vec::new();
        for w in [2u64, 4096, 0x1000, 0x3000, 0, 0x7000, 0x8000, 5] {
            d.extend_from_slice(&w.to_le_bytes());
        }
        d.extend_from_slice(b"/usr/bin/clang\0/usr/lib/libLLVM.so.19.1\0");
        assert_eq!(
            parse_nt_file(&d),
            vec![
                (0x1000, 0x3000, 0, "/usr/bin/clang".into()),
                (0x7000, 0x8000, 5 * 4096, "/usr/lib/libLLVM.so.19.1".into()),
            ]
        );
        // Truncated or absurd notes give what they hold, never a panic.
        assert!(parse_nt_file(&d[..20]).is_empty());
        assert!(parse_nt_file(&[]).is_empty());
        let mut huge = d.clone();
        huge[..8].copy_from_slice(&0x6000_0000_0000_0000u64.to_le_bytes());
        assert!(parse_nt_file(&huge).is_empty());
    }

    #[test]
    fn what_is_not_a_riscv_core_is_refused() {
        assert_eq!(read(b"not an elf file"), Err(CoreError::NotACore));
        // This test binary itself: an ELF file, but not a core.
        let me = std::fs::read(std::env::current_exe().unwrap()).unwrap();
        assert_eq!(read(&me), Err(CoreError::NotACore));
    }
}
