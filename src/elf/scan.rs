//! The static vector scan of one ELF file (experiment E3): a linear walk over every executable
//! section with the RISC-V length rules, classifying each 32-bit instruction, attributing hits
//! to functions through a size-checked symbol lookup.
//!
//! Mapping symbols (`$x…`/`$d` in `.symtab`, emitted by GNU as and LLVM) split a section into
//! code and data runs; the walk restarts at each run, so data never desynchronises the code
//! that follows it. Hits inside a `$d` run are still counted (a `.word` that encodes a vector
//! instruction executes like any other: vprobe's XTheadVector path is two of them) and are
//! flagged `in_data`, because a disassembler shows them as data.

use object::{Object, ObjectSection, ObjectSymbol, SectionFlags, SectionKind, SymbolKind};
use serde::Serialize;

use super::header::{header, riscv_arch_attribute, Header, EM_RISCV};
use super::insn::{classify, insn_len, Dialect, VectorKind};
use super::ElfError;

/// Per-file cap on the individual hits kept in [`FileScan::instructions`] (the counts are
/// always complete).
pub const MAX_LISTED: usize = 4096;

/// Vector-instruction counts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Counts {
    /// Every instruction the kernel's vector first-use trap accepts, CSR accesses included.
    pub vector_instructions: u64,
    /// Encodings valid only in RVV 1.0.
    pub rvv1_only: u64,
    /// Encodings valid only in XTheadVector/0.7.1.
    pub xthead_only: u64,
    /// CSR instructions on vector CSRs (a subset of `vector_instructions`).
    pub vector_csr: u64,
}

impl Counts {
    fn add_hit(&mut self, kind: VectorKind, dialect: Dialect) {
        self.vector_instructions += 1;
        match dialect {
            Dialect::Rvv1Only => self.rvv1_only += 1,
            Dialect::XTheadOnly => self.xthead_only += 1,
            Dialect::Ambiguous => {}
        }
        if kind == VectorKind::Csr {
            self.vector_csr += 1;
        }
    }

    /// Adds another file's counts.
    pub fn add(&mut self, o: &Counts) {
        self.vector_instructions += o.vector_instructions;
        self.rvv1_only += o.rvv1_only;
        self.xthead_only += o.xthead_only;
        self.vector_csr += o.vector_csr;
    }
}

/// One vector instruction found by the scan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Hit {
    /// Virtual address (section-relative in a relocatable object).
    pub address: u64,
    /// File offset.
    pub offset: u64,
    /// The instruction word (`"0x12050087"` in JSON).
    #[serde(serialize_with = "hex32")]
    pub word: u32,
    pub kind: VectorKind,
    pub dialect: Dialect,
    pub note: &'static str,
    /// The function containing it, if a sized symbol covers it.
    pub function: Option<String>,
    /// Inside a `$d` (data) mapping-symbol run: a disassembler shows it as `.word`.
    pub in_data: bool,
}

fn hex32<S: serde::Serializer>(w: &u32, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&format!("{w:#010x}"))
}

/// Vector counts of one function.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FunctionCounts {
    /// The symbol name as stored (mangled), or `(no symbol)`.
    pub name: String,
    pub address: Option<u64>,
    #[serde(flatten)]
    pub counts: Counts,
}

/// Everything the scan learned about one file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FileScan {
    pub header: Header,
    /// `Tag_RISCV_arch` from `.riscv.attributes`.
    pub arch: Option<String>,
    pub counts: Counts,
    /// Functions with at least one vector instruction, most first.
    pub functions: Vec<FunctionCounts>,
    /// The individual hits, in address order, at most [`MAX_LISTED`].
    pub instructions: Vec<Hit>,
    /// Bytes of executable sections walked (0 for non-RISC-V files, which are not decoded).
    pub code_bytes: u64,
}

/// The name used for hits no sized function symbol covers.
pub const NO_SYMBOL: &str = "(no symbol)";

/// Scans one ELF file. Non-RISC-V files get their header facts and zero counts.
pub fn scan(bytes: &[u8]) -> Result<FileScan, ElfError> {
    let header = header(bytes)?;
    let mut out = FileScan {
        header,
        arch: None,
        counts: Counts::default(),
        functions: Vec::new(),
        instructions: Vec::new(),
        code_bytes: 0,
    };
    if out.header.e_machine != EM_RISCV || !out.header.little_endian {
        return Ok(out);
    }
    let file = object::File::parse(bytes).map_err(|e| ElfError::Malformed(e.to_string()))?;
    let relocatable = out.header.e_type == 1;
    out.arch = file
        .section_by_name(".riscv.attributes")
        .and_then(|s| s.data().ok())
        .and_then(riscv_arch_attribute);
    let mapping = mapping_symbols(&file);
    let mut raw_hits: Vec<(usize, Hit)> = Vec::new();
    for section in file.sections() {
        let SectionFlags::Elf { sh_flags } = section.flags() else {
            continue;
        };
        if sh_flags & u64::from(object::elf::SHF_EXECINSTR) == 0
            || section.kind() == SectionKind::UninitializedData
        {
            continue;
        }
        let Ok(data) = section.data() else { continue };
        let Some((file_off, _)) = section.file_range() else {
            continue;
        };
        out.code_bytes += data.len() as u64;
        let base = section.address();
        let runs = runs(&mapping, section.index().0, base, data.len() as u64);
        for (start, end, in_data) in runs {
            walk(&data[start..end], |off, w| {
                if let Some(v) = classify(w) {
                    out.counts.add_hit(v.kind, v.dialect);
                    let o = (start + off) as u64;
                    raw_hits.push((
                        section.index().0,
                        Hit {
                            address: base + o,
                            offset: file_off + o,
                            word: w,
                            kind: v.kind,
                            dialect: v.dialect,
                            note: v.note,
                            function: None,
                            in_data,
                        },
                    ));
                }
            });
        }
    }
    if raw_hits.is_empty() {
        return Ok(out);
    }
    out.functions = function_counts(&Symbols::new(&file, relocatable), &mut raw_hits);
    raw_hits.sort_by_key(|(s, h)| (*s, h.address));
    out.instructions = raw_hits
        .into_iter()
        .take(MAX_LISTED)
        .map(|(_, h)| h)
        .collect();
    Ok(out)
}

/// Names each hit's function (the sized symbol that covers it) and counts the hits per
/// function, most vector instructions first; hits no symbol covers count as [`NO_SYMBOL`].
fn function_counts(symbols: &Symbols<'_>, raw_hits: &mut [(usize, Hit)]) -> Vec<FunctionCounts> {
    let mut by_func: std::collections::BTreeMap<(Option<u64>, String), Counts> =
        std::collections::BTreeMap::new();
    for (section, hit) in raw_hits.iter_mut() {
        let f = symbols.lookup(*section, hit.address);
        hit.function = f.map(|s| s.name.to_owned());
        let key = match f {
            Some(s) => (Some(s.start), s.name.to_owned()),
            None => (None, NO_SYMBOL.to_owned()),
        };
        by_func
            .entry(key)
            .or_default()
            .add_hit(hit.kind, hit.dialect);
    }
    let mut functions: Vec<FunctionCounts> = by_func
        .into_iter()
        .map(|((address, name), counts)| FunctionCounts {
            name,
            address,
            counts,
        })
        .collect();
    functions.sort_by(|a, b| {
        b.counts
            .vector_instructions
            .cmp(&a.counts.vector_instructions)
    });
    functions
}

/// Walks `code` with the RISC-V length rules, calling `hit(offset, word)` for every 32-bit
/// instruction whose major opcode can be a vector one.
fn walk(code: &[u8], mut hit: impl FnMut(usize, u32)) {
    let mut off = 0;
    while off + 2 <= code.len() {
        let lo = u16::from_le_bytes([code[off], code[off + 1]]);
        let n = insn_len(lo);
        if n == 4 && off + 4 <= code.len() && matches!(lo & 0x7f, 0x57 | 0x07 | 0x27 | 0x73) {
            let hi = u16::from_le_bytes([code[off + 2], code[off + 3]]);
            hit(off, u32::from(lo) | (u32::from(hi) << 16));
        }
        off += n;
    }
}

/// A mapping symbol: where a code (`$x`) or data (`$d`) run starts.
struct Mapping {
    section: usize,
    address: u64,
    data: bool,
}

fn mapping_symbols(file: &object::File) -> Vec<Mapping> {
    let mut m: Vec<Mapping> = file
        .symbols()
        .filter_map(|s| {
            let name = s.name_bytes().ok()?;
            let data = match name {
                b"$d" => true,
                n if n.starts_with(b"$x") => false,
                _ => return None,
            };
            Some(Mapping {
                section: s.section_index()?.0,
                address: s.address(),
                data,
            })
        })
        .collect();
    m.sort_by_key(|x| (x.section, x.address));
    m
}

/// Splits a section into `(start, end, is_data)` byte runs at its mapping symbols.
fn runs(mapping: &[Mapping], section: usize, base: u64, len: u64) -> Vec<(usize, usize, bool)> {
    let first = mapping.partition_point(|m| m.section < section);
    let last = mapping.partition_point(|m| m.section <= section);
    let mut cuts: Vec<(u64, bool)> = vec![(0, false)];
    for m in &mapping[first..last] {
        let rel = m.address.wrapping_sub(base);
        if rel >= len {
            continue;
        }
        if cuts.last().is_some_and(|c| c.0 == rel) {
            cuts.pop();
        }
        cuts.push((rel, m.data));
    }
    let mut out = Vec::with_capacity(cuts.len());
    for (i, &(start, data)) in cuts.iter().enumerate() {
        let end = cuts.get(i + 1).map_or(len, |c| c.0);
        if end > start {
            out.push((start as usize, end as usize, data));
        }
    }
    out
}

/// One sized function symbol.
struct Sym<'a> {
    section: usize,
    start: u64,
    end: u64,
    name: &'a str,
}

/// Function symbols from `.symtab` and `.dynsym`, sorted by start.
struct Symbols<'a> {
    syms: Vec<Sym<'a>>,
    relocatable: bool,
}

/// How far a lookup walks back past symbols that start below the address but end before it.
const LOOKBACK: usize = 64;

impl<'a> Symbols<'a> {
    fn new(file: &object::File<'a>, relocatable: bool) -> Self {
        let mut syms: Vec<Sym<'a>> = file
            .symbols()
            .chain(file.dynamic_symbols())
            .filter(|s| s.kind() == SymbolKind::Text && s.size() > 0)
            .filter_map(|s| {
                Some(Sym {
                    section: s.section_index().map_or(usize::MAX, |i| i.0),
                    start: s.address(),
                    end: s.address().checked_add(s.size())?,
                    name: s.name().ok().filter(|n| !n.is_empty())?,
                })
            })
            .collect();
        syms.sort_by(|a, b| (a.start, a.name).cmp(&(b.start, b.name)));
        syms.dedup_by(|a, b| a.start == b.start && a.end == b.end && a.name == b.name);
        Self { syms, relocatable }
    }

    /// The symbol whose `[start, end)` contains `address` (floor lookup, size-checked).
    fn lookup(&self, section: usize, address: u64) -> Option<&Sym<'a>> {
        let i = self.syms.partition_point(|s| s.start <= address);
        self.syms[..i]
            .iter()
            .rev()
            .take(LOOKBACK)
            .find(|s| address < s.end && (!self.relocatable || s.section == section))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn walk_steps_by_instruction_length() {
        let code: Vec<u8> = [
            &0x4501u16.to_le_bytes()[..],    // c.li
            &0x0c04_7657u32.to_le_bytes(),   // vsetvli
            &[0x1f, 0, 0, 0, 0, 0],          // 48-bit, contents ignored
            &0xc220_2573u32.to_le_bytes(),   // csrr vlenb
            &[0x3f, 0, 0x57, 0, 0, 0, 0, 0], // 64-bit containing an OP-V-looking parcel
            &0x0000_0013u32.to_le_bytes(),   // nop
            &0x57u8.to_le_bytes(),           // a dangling byte
        ]
        .concat();
        let mut seen = Vec::new();
        walk(&code, |off, w| seen.push((off, w)));
        assert_eq!(seen, vec![(2, 0x0c04_7657), (12, 0xc220_2573)]);
    }

    #[test]
    fn runs_split_at_mapping_symbols() {
        let m = vec![
            Mapping {
                section: 1,
                address: 0x100,
                data: false,
            },
            Mapping {
                section: 1,
                address: 0x110,
                data: true,
            },
            Mapping {
                section: 1,
                address: 0x118,
                data: false,
            },
            Mapping {
                section: 2,
                address: 0x0,
                data: true,
            },
        ];
        assert_eq!(
            runs(&m, 1, 0x100, 0x40),
            vec![(0, 0x10, false), (0x10, 0x18, true), (0x18, 0x40, false)]
        );
        assert_eq!(runs(&m, 3, 0, 8), vec![(0, 8, false)]);
    }

    #[test]
    fn non_elf_is_an_error() {
        assert!(matches!(
            scan(b"not an elf file at all, 52 bytes long............"),
            Err(ElfError::NotElf)
        ));
    }
}
