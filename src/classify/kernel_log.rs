//! The kernel's own record of a crash: the "unhandled signal" lines that Linux prints to its
//! log (`dmesg`, `journalctl -k`) when a process dies of a signal, with the registers after
//! them. On a RISC-V host this is often the best evidence E2 has: clang's stack dump may lack
//! the faulting frame (or the process died before printing one), but the kernel names the
//! program counter, the mapped file and its address range, and, for an illegal-instruction
//! trap, the instruction bits themselves (`badaddr`). Parsing and decoding are pure; the
//! caller reads the log and the ELF files.
//!
//! The line (arch/riscv/kernel/traps.c, mm/memory.c `print_vma_addr`):
//! `clang[4242]: unhandled signal 4 code 0x1 at 0x0000003f8a2b1c40 in libLLVM.so.19.1[3f88000000+2c00000]`,
//! then `epc : …` (older kernels `sepc:`) and `status: … badaddr: … cause: …` (older
//! `sstatus: … sbadaddr: … scause: …`). `at` is the fault address: the pc for SIGILL and
//! SIGTRAP, the data address for SIGSEGV and SIGBUS; the mapping is the one holding the pc.

use crate::elf::{decode_at, Instruction};

/// RISC-V `scause` of an illegal-instruction trap.
pub const CAUSE_ILLEGAL_INSTRUCTION: u64 = 2;
const SIGILL: i32 = 4;
const SIGTRAP: i32 = 5;
const PAGE: u64 = 4096;

/// One "unhandled signal" report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelFault {
    /// The report's first line, without the log's timestamp prefix.
    pub line: String,
    /// The task name (at most 15 characters: `clang`, `clang++`, `clang-19` …).
    pub comm: String,
    pub pid: u32,
    pub signal: i32,
    pub code: u64,
    /// The fault address (`at 0x…`).
    pub addr: u64,
    /// The file mapped at the pc, when the kernel printed one.
    pub mapping: Option<Mapping>,
    /// `epc`/`sepc` from the register dump.
    pub epc: Option<u64>,
    /// `badaddr`/`sbadaddr` (`stval`): the instruction bits of an illegal instruction.
    pub badaddr: Option<u64>,
    /// `cause`/`scause`.
    pub cause: Option<u64>,
}

/// `name[start+size]` (or `name[offset,start+size]`): the mapping that holds the pc.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mapping {
    /// The file's base name (the kernel prints no directory).
    pub name: String,
    pub start: u64,
    pub size: u64,
    /// The pc's offset in the file, when the kernel printed it (newer kernels:
    /// `name[offset,start+size]`).
    pub pc_offset: Option<u64>,
}

impl KernelFault {
    /// The faulting pc: `epc`, else the fault address of a SIGILL or SIGTRAP (for those the
    /// fault address is the pc).
    pub fn pc(&self) -> Option<u64> {
        self.epc
            .or_else(|| matches!(self.signal, SIGILL | SIGTRAP).then_some(self.addr))
    }

    /// The instruction the trap reported in `badaddr` (illegal-instruction traps only; zero
    /// means the hart did not report it).
    pub fn trapped_instruction(&self) -> Option<Instruction> {
        let bits = self
            .badaddr
            .filter(|b| *b != 0 && *b <= u64::from(u32::MAX))?;
        if self.cause != Some(CAUSE_ILLEGAL_INSTRUCTION) {
            return None;
        }
        decode_at(&bits.to_le_bytes(), 0)
    }

    /// The pc's offset in the mapped file, given the file's bytes: the mapping starts at the
    /// page of the executable `PT_LOAD` segment's file offset.
    pub fn file_offset(&self, elf: &[u8]) -> Option<u64> {
        let m = self.mapping.as_ref()?;
        if let Some(off) = m.pc_offset {
            return Some(off);
        }
        let rel = self.pc()?.checked_sub(m.start)?;
        if rel >= m.size {
            return None;
        }
        let segments = executable_segments(elf);
        // The executable segment whose mapped size is the mapping's; a lone executable
        // segment when no size matches (the kernel may have merged or split the mapping).
        // Several and none matching: no guess.
        let mapped_size = |vaddr: u64, memsz: u64| {
            let end = vaddr.checked_add(memsz)?.div_ceil(PAGE).checked_mul(PAGE)?;
            end.checked_sub(vaddr & !(PAGE - 1))
        };
        let seg = segments
            .iter()
            .find(|(_, vaddr, memsz)| mapped_size(*vaddr, *memsz) == Some(m.size))
            .or_else(|| (segments.len() == 1).then(|| &segments[0]))?;
        (seg.0 & !(PAGE - 1)).checked_add(rel)
    }

    /// The instruction at the pc, decoded from the mapped file.
    pub fn instruction_in(&self, elf: &[u8]) -> Option<(u64, Instruction)> {
        let off = self.file_offset(elf)?;
        decode_at(elf, usize::try_from(off).ok()?).map(|i| (off, i))
    }
}

/// `(p_offset, p_vaddr, p_memsz)` of each executable `PT_LOAD`.
fn executable_segments(elf: &[u8]) -> Vec<(u64, u64, u64)> {
    use object::read::elf::{FileHeader, ProgramHeader};
    let Ok(header) = object::elf::FileHeader64::<object::Endianness>::parse(elf) else {
        return Vec::new();
    };
    let Ok(endian) = header.endian() else {
        return Vec::new();
    };
    let Ok(phdrs) = header.program_headers(endian, elf) else {
        return Vec::new();
    };
    phdrs
        .iter()
        .filter(|p| {
            p.p_type(endian) == object::elf::PT_LOAD && p.p_flags(endian) & object::elf::PF_X != 0
        })
        .map(|p| (p.p_offset(endian), p.p_vaddr(endian), p.p_memsz(endian)))
        .collect()
}

/// Every "unhandled signal" report in a kernel log, in order, with the registers printed
/// after it (up to the next report).
pub fn parse(log: &str) -> Vec<KernelFault> {
    let mut faults: Vec<KernelFault> = Vec::new();
    for raw in log.lines() {
        let line = strip_prefix(raw);
        if let Some(f) = parse_report(line) {
            faults.push(f);
            continue;
        }
        let Some(f) = faults.last_mut() else {
            continue;
        };
        for (keys, slot) in [
            (&["epc", "sepc"][..], &mut f.epc),
            (&["badaddr", "sbadaddr", "stval"][..], &mut f.badaddr),
            (&["cause", "scause"][..], &mut f.cause),
        ] {
            if slot.is_none() {
                *slot = register(line, keys);
            }
        }
    }
    faults
}

/// The report line without a `dmesg` timestamp (`[  204.72] `) or a syslog/journal prefix
/// (`Dec 03 10:00:00 host kernel: `).
fn strip_prefix(line: &str) -> &str {
    let mut s = line.trim_end();
    if let Some(i) = s.find("kernel: ") {
        s = &s[i + "kernel: ".len()..];
    }
    let t = s.trim_start();
    if let Some(rest) = t.strip_prefix('[') {
        if let Some((stamp, after)) = rest.split_once(']') {
            if stamp.trim().chars().all(|c| c.is_ascii_digit() || c == '.') {
                return after.trim_start();
            }
        }
    }
    t
}

fn hex(s: &str) -> Option<u64> {
    u64::from_str_radix(s.trim_start_matches("0x"), 16).ok()
}

/// `comm[pid]: unhandled signal N code 0xC at 0xADDR[ in name[start+size]]`
fn parse_report(line: &str) -> Option<KernelFault> {
    let (head, rest) = line.split_once(": unhandled signal ")?;
    let open = head.rfind('[')?;
    // The task name is the last word before `[pid]`: whatever `dmesg -T` (a date in
    // brackets) or `dmesg -x` (`kern  :info  : `) put in front is not part of it.
    let comm = head[..open].split_whitespace().last()?.to_string();
    let pid = head[open + 1..].strip_suffix(']')?.parse().ok()?;
    let mut words = rest.split_whitespace();
    let signal = words.next()?.parse().ok()?;
    (words.next()? == "code").then_some(())?;
    let code = hex(words.next()?)?;
    (words.next()? == "at").then_some(())?;
    let addr = hex(words.next()?)?;
    let mapping = rest.split_once(" in ").and_then(|(_, m)| parse_mapping(m));
    Some(KernelFault {
        line: line.to_string(),
        comm,
        pid,
        signal,
        code,
        addr,
        mapping,
        epc: None,
        badaddr: None,
        cause: None,
    })
}

/// `name[start+size]`, or `name[offset,start+size]` as some kernels print it.
fn parse_mapping(m: &str) -> Option<Mapping> {
    let open = m.rfind('[')?;
    let inner = m[open + 1..].split(']').next()?;
    let (pc_offset, range) = match inner.split_once(',') {
        Some((off, range)) => (Some(hex(off)?), range),
        None => (None, inner),
    };
    let (start, size) = range.split_once('+')?;
    Some(Mapping {
        name: m[..open].trim().to_string(),
        start: hex(start)?,
        size: hex(size)?,
        pc_offset,
    })
}

/// The value after `key :`/`key:` for the first of `keys` that the register line holds.
fn register(line: &str, keys: &[&str]) -> Option<u64> {
    let words: Vec<&str> = line.split_whitespace().collect();
    keys.iter().find_map(|key| {
        words.iter().enumerate().find_map(|(i, w)| {
            let value = if *w == format!("{key}:") {
                words.get(i + 1)
            } else if *w == *key && words.get(i + 1) == Some(&":") {
                words.get(i + 2)
            } else {
                None
            }?;
            hex(value)
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::elf::Decoded;

    /// From a public bug report (cnrv/fpga-rocket-chip#7): a 4.20 kernel's SIGILL report with
    /// the old register names; `sbadaddr` holds the instruction (`csrs mstatus, t0`, which
    /// user mode may not run).
    const OLD_SIGILL: &str = "\
[  204.720000] hello.riscv[63]: unhandled signal 4 code 0x1 at 0x0000000080000040 in hello.riscv[80000000+1000]
[  204.724000] CPU: 0 PID: 63 Comm: hello.riscv Not tainted 4.20.0-44631-g8fe28cb58bcb-dirty #4
[  204.724000] sepc: 0000000080000040 ra : 0000000000000000 sp : 0000000000000000
[  204.728000]  gp : 0000000000000000 tp : 0000000000000000 t0 : 000000000001e000
[  204.752000] sstatus: 8000000200006020 sbadaddr: 000000003002a073 scause: 0000000000000002
";

    /// From a public bug report (riscv-boom/riscv-boom#101): a SIGSEGV in libc; `at` is the
    /// data address, the pc is `sepc`.
    const OLD_SIGSEGV: &str = "\
[    0.996000] xargs[57]: unhandled signal 11 code 0x1 at 0x0000000000000038 in libc-2.26.so[2000024000+13e000]
[    0.996000] CPU: 0 PID: 57 Comm: xargs Not tainted 4.15.0-rc6-31580-g9c3074b5c2cd-dirty #21
[    0.996000] sepc: 0000002000093804 ra : 00000020000937d0 sp : 0000003fffc1da80
[    1.000000] sstatus: 8000000200006020 sbadaddr: 0000000000000038 scause: 000000000000000d
";

    #[test]
    fn an_old_kernels_sigill_report_yields_pc_mapping_and_the_trapped_instruction() {
        let f = &parse(OLD_SIGILL)[0];
        assert_eq!(
            (f.comm.as_str(), f.pid, f.signal, f.code),
            ("hello.riscv", 63, 4, 1)
        );
        assert_eq!(f.pc(), Some(0x8000_0040));
        assert_eq!(
            f.mapping,
            Some(Mapping {
                name: "hello.riscv".into(),
                start: 0x8000_0000,
                size: 0x1000,
                pc_offset: None,
            })
        );
        assert_eq!((f.badaddr, f.cause), (Some(0x3002_a073), Some(2)));
        let insn = f.trapped_instruction().unwrap();
        assert_eq!((insn.len, insn.raw), (4, 0x3002_a073));
        assert_eq!(insn.what, Decoded::Other, "a CSR access, not vector");
    }

    #[test]
    fn a_sigsegv_reports_the_data_address_and_the_pc_comes_from_sepc() {
        let f = &parse(OLD_SIGSEGV)[0];
        assert_eq!((f.signal, f.addr), (11, 0x38));
        assert_eq!(f.pc(), Some(0x20_0009_3804));
        assert_eq!(f.mapping.as_ref().unwrap().name, "libc-2.26.so");
        assert_eq!(
            f.trapped_instruction(),
            None,
            "a page fault's badaddr is data"
        );
    }

    /// The current register names (`epc :`, `badaddr:`, `cause:`) in a journal line, with a
    /// vector instruction in `badaddr`: the shape of a V-less hart (or V turned off) trapping
    /// on `vsetvli`. Modelled on the kernel's format strings, not copied from a real log.
    #[test]
    fn current_register_names_and_journal_prefixes_parse() {
        let log = "\
Dec 03 10:00:00 sg2042 kernel: clang[4242]: unhandled signal 4 code 0x1 at 0x0000003f8a2b1c40 in libLLVM.so.19.1[3f88000000+2c00000]
Dec 03 10:00:00 sg2042 kernel: epc : 0000003f8a2b1c40 ra : 0000003f8a2b1b00 sp : 0000003fffc1da80
Dec 03 10:00:00 sg2042 kernel: status: 0000000200004020 badaddr: 00000000000172d7 cause: 0000000000000002
";
        let f = &parse(log)[0];
        assert_eq!(f.comm, "clang");
        assert_eq!(f.epc, Some(0x3f_8a2b_1c40));
        let insn = f.trapped_instruction().unwrap();
        assert!(
            matches!(insn.what, Decoded::Vector(_)),
            "vsetvli: {}",
            insn.describe()
        );
    }

    #[test]
    fn several_reports_keep_their_own_registers_and_other_lines_are_ignored() {
        let log = format!("random line\n{OLD_SIGSEGV}audit: something\n{OLD_SIGILL}");
        let v = parse(&log);
        assert_eq!(v.len(), 2);
        assert_eq!(v[0].cause, Some(0xd));
        assert_eq!(v[1].cause, Some(2));
        assert!(parse("clang[1]: unhandled signal x code 0x1 at 0x0").is_empty());
        assert!(parse("no report here").is_empty());
    }

    #[test]
    fn a_mapping_with_the_pcs_file_offset_uses_it() {
        let m = parse_mapping("libc.so.6[27a3d,7f0000000000+195000]").unwrap();
        assert_eq!((m.start, m.size), (0x7f00_0000_0000, 0x19_5000));
        assert_eq!(m.pc_offset, Some(0x27a3d));
        let f = KernelFault {
            mapping: Some(m),
            ..parse(OLD_SIGSEGV)[0].clone()
        };
        // No ELF needed: the kernel said where the pc is in the file.
        assert_eq!(f.file_offset(&[]), Some(0x27a3d));
    }

    #[test]
    fn dmesg_human_and_decoded_prefixes_leave_the_task_name_alone() {
        for line in [
            "[Tue Dec  3 10:00:00 2024] clang[4242]: unhandled signal 4 code 0x1 at 0x10 in clang[0+1000]",
            "kern  :info  : [  204.720000] clang[4242]: unhandled signal 4 code 0x1 at 0x10 in clang[0+1000]",
        ] {
            let f = &parse(line)[0];
            assert_eq!((f.comm.as_str(), f.pid), ("clang", 4242), "{line}");
        }
    }

    #[test]
    fn malformed_numbers_do_not_panic() {
        let f = KernelFault {
            epc: Some(u64::MAX),
            mapping: Some(Mapping {
                name: "x".into(),
                start: 0,
                size: u64::MAX,
                pc_offset: None,
            }),
            ..parse(OLD_SIGSEGV)[0].clone()
        };
        assert_eq!(f.file_offset(b"not an elf"), None);
    }
}
