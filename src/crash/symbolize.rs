//! Fills in names of unnamed frames from the modules' ELF symbol tables
//! (`docs/crash-formats.md` §7).
//!
//! Without llvm-symbolizer LLVM names only exported (`.dynsym`) functions, and with it a
//! Debian build names the same set; a self-built LLVM has a `.symtab` too. Lookups are
//! **size-checked**: a frame is named only by a symbol whose `[st_value, st_value + st_size)`
//! contains its offset, because a nearest-below lookup (what `object`'s `SymbolMap::get` does)
//! would name a stripped local function after whatever exported function precedes it.
//!
//! The dladdr format prints no module offset, only the runtime address and `name + delta`;
//! the module's load base is recovered from its named frames (`address - delta - st_value`,
//! page-aligned, agreed on by most of them), which gives the unnamed frames their offsets.
//!
//! A crash log may come from another machine or an older package: the file found today under
//! a module's name can be another build, whose symbols at those offsets are other functions.
//! So frames are named from a file only when it is plausibly the one that crashed
//! ([`Table::is_the_crashed_module`], `docs/crash-formats.md` §7): every offset the log gives
//! lies in the file's code, the names the log printed are the names the file has there, and
//! frames that print only `name + delta` agree on a load base. Otherwise the module's frames
//! stay unnamed: no name is better than a wrong one.

use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use object::{Object, ObjectSegment, ObjectSymbol, SegmentFlags, SymbolKind};

use super::frames::demangle;
use super::Crash;

/// Load bases are page-aligned.
const PAGE: u64 = 0x1000;
/// How far back a lookup walks past symbols that start below the offset but end before it
/// (nested or overlapping symbols are rare; aliases share a range).
const LOOKBACK: usize = 64;

/// One function symbol: `[start, end)` in the module's virtual addresses.
struct Sym {
    start: u64,
    end: u64,
    /// As stored in the ELF file (mangled); demangled only when used.
    name: Box<str>,
}

/// A loadable segment, for converting file offsets to virtual addresses.
struct Segment {
    vaddr: u64,
    memsz: u64,
    file_offset: u64,
    file_size: u64,
    executable: bool,
}

/// The function symbols of one module.
struct Table {
    /// Sorted by `start`.
    symbols: Vec<Sym>,
    segments: Vec<Segment>,
    /// Whitespace-free demangled name → `st_value`s; built on first dladdr use.
    by_name: OnceLock<HashMap<String, Vec<u64>>>,
}

impl Table {
    fn load(path: &Path) -> Option<Table> {
        // Mapped, not read: libLLVM is 100+ MB and only its symbol tables are touched, so
        // reading it whole made a reduction's peak memory 70x its input.
        let f = std::fs::File::open(path).ok()?;
        // SAFETY: the mapping is read-only and dropped before `load` returns; a compiler
        // library replaced underneath us would at worst give wrong names, which the size
        // check and the signature comparison tolerate.
        let data = unsafe { memmap2::Mmap::map(&f) }.ok()?;
        let file = object::File::parse(&*data).ok()?;
        let mut symbols: Vec<Sym> = file
            .symbols()
            .chain(file.dynamic_symbols())
            .filter(|s| s.kind() == SymbolKind::Text && s.is_definition() && s.size() > 0)
            .filter_map(|s| {
                Some(Sym {
                    start: s.address(),
                    end: s.address().checked_add(s.size())?,
                    name: s.name().ok().filter(|n| !n.is_empty())?.into(),
                })
            })
            .collect();
        // `.symtab` came first, so for a range in both tables its name is kept.
        symbols.sort_by_key(|s| (s.start, s.end));
        symbols.dedup_by_key(|s| (s.start, s.end));
        let segments = file
            .segments()
            .map(|s| {
                let (file_offset, file_size) = s.file_range();
                Segment {
                    vaddr: s.address(),
                    memsz: s.size(),
                    file_offset,
                    file_size,
                    executable: matches!(s.flags(), SegmentFlags::Elf { p_flags } if p_flags & object::elf::PF_X != 0),
                }
            })
            .collect();
        Some(Table {
            symbols,
            segments,
            by_name: OnceLock::new(),
        })
    }

    /// The module offset as a virtual address. LLVM prints `address - load bias`, which is
    /// already one; an offset that only makes sense as a file offset is converted.
    fn to_vaddr(&self, offset: u64) -> u64 {
        if self.in_code(offset) {
            return offset;
        }
        self.segments
            .iter()
            .find(|s| (s.file_offset..s.file_offset.saturating_add(s.file_size)).contains(&offset))
            .map(|s| offset - s.file_offset + s.vaddr)
            .filter(|&a| self.in_code(a))
            .unwrap_or(offset)
    }

    /// Whether the virtual address lies in an executable segment (a segment-less file, which
    /// `object` could still parse, is given the benefit of the doubt).
    fn in_code(&self, addr: u64) -> bool {
        self.segments.is_empty()
            || self
                .segments
                .iter()
                .any(|s| s.executable && (s.vaddr..s.vaddr.saturating_add(s.memsz)).contains(&addr))
    }

    /// Whether this file can be the module `frames` (all of one module) were printed from,
    /// with `base` the load base recovered from them (dladdr and glibc formats):
    /// - frames that print only `name + delta` must have agreed on a base;
    /// - every known offset must fall in the file's code;
    /// - every name the log printed for a known offset must be the name this file has there,
    ///   and at least one must match when the log printed any (a file that names none of the
    ///   log's frames is not the one that printed them).
    fn is_the_crashed_module(&self, frames: &[&super::Frame], base: Option<u64>) -> bool {
        let vouches_for_base = |f: &&super::Frame| {
            f.offset.is_none()
                && f.symbol.is_some()
                && f.symbol_offset.is_some()
                && f.address.is_some()
        };
        if base.is_none() && frames.iter().any(vouches_for_base) {
            return false;
        }
        let (mut named, mut agreeing) = (0, 0);
        for f in frames {
            let offset = f
                .offset
                .or_else(|| base.zip(f.address).and_then(|(b, a)| a.checked_sub(b)));
            let Some(offset) = offset else {
                continue;
            };
            if !self.in_code(self.to_vaddr(offset)) {
                return false;
            }
            let Some(printed) = f.symbol.as_deref() else {
                continue;
            };
            named += 1;
            match self.lookup(offset) {
                Some(sym) if same_function(printed, &demangle(&sym.name)) => agreeing += 1,
                Some(_) => return false,
                // A name from debug info or `.symtab` of the printing machine that this file
                // does not export: neither for nor against.
                None => {}
            }
        }
        named == 0 || agreeing > 0
    }

    /// The symbol whose range contains `offset`, if any.
    fn lookup(&self, offset: u64) -> Option<&Sym> {
        let addr = self.to_vaddr(offset);
        let after = self.symbols.partition_point(|s| s.start <= addr);
        self.symbols[..after]
            .iter()
            .rev()
            .take(LOOKBACK)
            .find(|s| s.start <= addr && addr < s.end)
    }

    /// The `st_value`s of the functions whose demangled name is `demangled`.
    fn values_of(&self, demangled: &str) -> Vec<u64> {
        let key = name_key(demangled);
        let Some(ident) = last_identifier(demangled) else {
            // Operators, lambdas…: compare against every demangled name (built once).
            let map = self.by_name.get_or_init(|| {
                let mut map: HashMap<String, Vec<u64>> = HashMap::new();
                for s in &self.symbols {
                    map.entry(name_key(&demangle(&s.name)))
                        .or_default()
                        .push(s.start);
                }
                map
            });
            return map.get(&key).cloned().unwrap_or_default();
        };
        // A mangled name holds its identifiers length-prefixed (`21HandlePragmaDirective`):
        // only those candidates are demangled.
        let needle = format!("{}{ident}", ident.len());
        self.symbols
            .iter()
            .filter(|s| &*s.name == ident || s.name.contains(&needle))
            .filter(|s| name_key(&demangle(&s.name)) == key)
            .map(|s| s.start)
            .collect()
    }
}

/// `s` without a trailing `open … close` group (`(args)`, `<targs>`), brackets matched.
fn strip_trailing_group(s: &str, open: char, close: char) -> &str {
    if !s.ends_with(close) {
        return s;
    }
    let mut depth = 0;
    for (i, ch) in s.char_indices().rev() {
        if ch == close {
            depth += 1;
        } else if ch == open {
            depth -= 1;
            if depth == 0 {
                return &s[..i];
            }
        }
    }
    s
}

/// The unqualified name of a demangled function (`HandlePragmaDirective` in
/// `clang::Preprocessor::HandlePragmaDirective(clang::PragmaIntroducer)`), when it is a plain
/// identifier.
fn last_identifier(demangled: &str) -> Option<&str> {
    let s = demangled.trim();
    let s = s.strip_suffix(" const").unwrap_or(s);
    let s = strip_trailing_group(s, '(', ')');
    let s = strip_trailing_group(s, '<', '>');
    let ident = s.rsplit("::").next()?;
    let mut chars = ident.chars();
    let first = chars.next()?;
    ((first.is_ascii_alphabetic() || first == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_'))
    .then_some(ident)
}

/// Demanglers disagree on spaces (`> >` vs `>>`); compare names without them.
fn name_key(name: &str) -> String {
    name.chars().filter(|c| !c.is_whitespace()).collect()
}

/// Whether two demangled names are the same function: equal up to spaces, or (demanglers
/// also disagree on template arguments, `<32u>` vs `<(unsigned int)32>`) the same last
/// identifier.
fn same_function(a: &str, b: &str) -> bool {
    name_key(a) == name_key(b) || last_identifier(a).is_some_and(|i| last_identifier(b) == Some(i))
}

type Slot = Arc<OnceLock<Option<Table>>>;

/// Resolves `module+offset` frames to function names, caching parsed symbol tables.
///
/// Meant to be built once and shared: each module is read and parsed at most once, even when
/// several threads ask for it at the same time.
#[derive(Default)]
pub struct Symbolizer {
    search_dirs: Vec<PathBuf>,
    /// Printed module name → the file it resolved to (`None`: not found).
    paths: Mutex<HashMap<String, Option<PathBuf>>>,
    /// Canonical file path → its symbol table (`None`: unreadable or not an object file).
    tables: Mutex<HashMap<PathBuf, Slot>>,
}

impl fmt::Debug for Symbolizer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let cached = self
            .tables
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len();
        f.debug_struct("Symbolizer")
            .field("search_dirs", &self.search_dirs)
            .field("cached_modules", &cached)
            .finish()
    }
}

impl Symbolizer {
    /// A symbolizer that looks for bare module names (`libLLVM.so.19.1`) in `search_dirs`.
    pub fn new(search_dirs: Vec<PathBuf>) -> Self {
        Self {
            search_dirs,
            ..Self::default()
        }
    }

    /// Names the unnamed frames it can; returns how many it named. Frames whose module is
    /// unknown or unreadable, or resolves to a file that is not the one that crashed, are left
    /// alone.
    pub fn symbolize(&self, crash: &mut Crash) -> usize {
        let mut modules: Vec<String> = crash
            .frames
            .iter()
            .filter(|f| f.symbol.is_none())
            .filter_map(|f| f.module.clone())
            .collect();
        modules.sort();
        modules.dedup();
        let mut named = 0;
        for module in modules {
            let Some(table) = self.table(&module) else {
                continue;
            };
            let Some(table) = table.get().and_then(Option::as_ref) else {
                continue;
            };
            let in_module = |m: &Option<String>| m.as_deref() == Some(module.as_str());
            let needs_base = crash
                .frames
                .iter()
                .any(|f| in_module(&f.module) && f.offset.is_none() && f.address.is_some());
            let base = if needs_base {
                load_base(table, crash.frames.iter().filter(|f| in_module(&f.module)))
            } else {
                None
            };
            let frames: Vec<&super::Frame> = crash
                .frames
                .iter()
                .filter(|f| in_module(&f.module))
                .collect();
            if !table.is_the_crashed_module(&frames, base) {
                continue;
            }
            for frame in crash.frames.iter_mut().filter(|f| in_module(&f.module)) {
                if frame.offset.is_none() {
                    frame.offset = base.zip(frame.address).and_then(|(b, a)| a.checked_sub(b));
                }
                if frame.symbol.is_some() {
                    continue;
                }
                if let Some(sym) = frame.offset.and_then(|o| table.lookup(o)) {
                    frame.symbol = Some(demangle(&sym.name));
                    frame.symbolized_by_icepick = true;
                    named += 1;
                }
            }
        }
        named
    }

    /// The table of the file `module` names, loading it on first use.
    fn table(&self, module: &str) -> Option<Slot> {
        let path = self.resolve(module)?;
        let slot = {
            let mut tables = self.tables.lock().unwrap_or_else(PoisonError::into_inner);
            tables.entry(path.clone()).or_default().clone()
        };
        // Parsed outside the map lock: other modules stay available meanwhile.
        slot.get_or_init(|| Table::load(&path));
        Some(slot)
    }

    fn resolve(&self, module: &str) -> Option<PathBuf> {
        let mut paths = self.paths.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(found) = paths.get(module) {
            return found.clone();
        }
        let printed = Path::new(module);
        let found = Some(printed)
            .filter(|p| p.is_absolute() && p.is_file())
            .map(Path::to_path_buf)
            .or_else(|| {
                let name = printed.file_name()?;
                self.search_dirs
                    .iter()
                    .map(|d| d.join(name))
                    .find(|p| p.is_file())
            })
            .map(|p| p.canonicalize().unwrap_or(p));
        paths.insert(module.to_owned(), found.clone());
        found
    }
}

/// The load base of a module, from its named frames that print a delta from their symbol.
fn load_base<'a>(table: &Table, frames: impl Iterator<Item = &'a super::Frame>) -> Option<u64> {
    let mut votes: HashMap<u64, usize> = HashMap::new();
    for f in frames {
        let (Some(symbol), Some(delta), Some(address)) = (&f.symbol, f.symbol_offset, f.address)
        else {
            continue;
        };
        let Some(start) = address.checked_sub(delta) else {
            continue;
        };
        for value in table.values_of(symbol) {
            if let Some(base) = start.checked_sub(value).filter(|b| b % PAGE == 0) {
                *votes.entry(base).or_default() += 1;
            }
        }
    }
    votes
        .into_iter()
        .max_by_key(|&(base, n)| (n, std::cmp::Reverse(base)))
        .map(|(base, _)| base)
}

#[cfg(test)]
#[path = "symbolize_tests.rs"]
mod tests;
