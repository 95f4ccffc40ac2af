//! The `DT_NEEDED` closure of ELF files, resolved as glibc's `ld.so` would: `PT_INTERP`, then
//! breadth-first through `DT_NEEDED`, searching for each name in the requester's `DT_RPATH`
//! and its loaders' (only when the requester has no `DT_RUNPATH`), the requester's
//! `DT_RUNPATH`, then the standard directories (`/lib/<triple>`, `/usr/lib/<triple>`,
//! `/lib64`, `/usr/lib64`, `/lib`, `/usr/lib`). A candidate of another machine or class is
//! skipped, as the loader skips it. `$ORIGIN` is the executable's directory after resolving
//! symlinks (what `/proc/self/exe` gives) and a library's directory as found. `LD_LIBRARY_PATH`
//! and `ld.so.cache` are not consulted: the closure is the target system's, not this host's.
//!
//! With a sysroot, every absolute path (search directories, `PT_INTERP`, absolute symlink
//! targets inside the sysroot) is taken relative to it. The filesystem is reached only through
//! [`Fs`], so the walk is tested on an in-memory tree; [`HostFs`] is the real one.

use std::collections::{HashSet, VecDeque};
use std::io;
use std::path::{Component, Path, PathBuf};

use object::read::elf::{Dyn, FileHeader, ProgramHeader};
use object::Endianness;
use serde::Serialize;

use super::header::{header, multiarch_triple, Header};
use super::ElfError;

/// The dynamic-linking facts of one file.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct DynamicInfo {
    pub needed: Vec<String>,
    pub runpath: Vec<String>,
    pub rpath: Vec<String>,
    pub soname: Option<String>,
    /// `PT_INTERP`.
    pub interp: Option<String>,
}

/// Reads `DT_NEEDED`, `DT_RUNPATH`, `DT_RPATH`, `DT_SONAME` and `PT_INTERP`.
pub fn dynamic_info(bytes: &[u8]) -> Result<DynamicInfo, ElfError> {
    let h = header(bytes)?;
    let bad = |e: object::Error| ElfError::Malformed(e.to_string());
    if h.class == 64 {
        let f = object::read::elf::ElfFile64::<Endianness>::parse(bytes).map_err(bad)?;
        read_dynamic(f.elf_header(), f.endian(), bytes).map_err(bad)
    } else {
        let f = object::read::elf::ElfFile32::<Endianness>::parse(bytes).map_err(bad)?;
        read_dynamic(f.elf_header(), f.endian(), bytes).map_err(bad)
    }
}

fn read_dynamic<Elf: FileHeader<Endian = Endianness>>(
    elf: &Elf,
    endian: Endianness,
    data: &[u8],
) -> object::Result<DynamicInfo> {
    let mut info = DynamicInfo::default();
    for ph in elf.program_headers(endian, data)? {
        if let Some(interp) = ph.interpreter(endian, data)? {
            info.interp = Some(String::from_utf8_lossy(interp).into_owned());
        }
    }
    let sections = elf.sections(endian, data)?;
    let Some((dyns, link)) = sections.dynamic(endian, data)? else {
        return Ok(info);
    };
    let strings = sections.strings(endian, data, link)?;
    for d in dyns {
        let Some(tag) = d.tag32(endian) else { continue };
        if tag == object::elf::DT_NULL {
            break;
        }
        if !d.is_string(endian) {
            continue;
        }
        let s = String::from_utf8_lossy(d.string(endian, strings)?).into_owned();
        match tag {
            object::elf::DT_NEEDED => info.needed.push(s),
            object::elf::DT_RUNPATH => info.runpath.extend(split_path_list(&s)),
            object::elf::DT_RPATH => info.rpath.extend(split_path_list(&s)),
            object::elf::DT_SONAME => info.soname = Some(s),
            _ => {}
        }
    }
    Ok(info)
}

fn split_path_list(s: &str) -> impl Iterator<Item = String> + '_ {
    s.split(':').filter(|p| !p.is_empty()).map(str::to_owned)
}

/// The filesystem as the walk sees it.
pub trait Fs {
    fn read(&self, path: &Path) -> io::Result<Vec<u8>>;
    /// The target of `path` if it is a symlink.
    fn read_link(&self, path: &Path) -> Option<PathBuf>;
}

/// The real filesystem.
#[derive(Debug, Clone, Copy, Default)]
pub struct HostFs;

impl Fs for HostFs {
    fn read(&self, path: &Path) -> io::Result<Vec<u8>> {
        std::fs::read(path)
    }
    fn read_link(&self, path: &Path) -> Option<PathBuf> {
        std::fs::read_link(path).ok()
    }
}

/// How a file entered the closure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Via {
    /// Named on the command line.
    Argument,
    /// `PT_INTERP` of an executable.
    Interpreter,
    Rpath,
    Runpath,
    /// A standard library directory.
    Default,
    /// A `DT_NEEDED` entry containing a slash.
    Path,
}

/// One file of the closure.
#[derive(Debug, Clone)]
pub struct Resolved {
    /// The path with symlinks resolved (inside the sysroot, when there is one).
    pub path: PathBuf,
    /// The path the loader would open (before resolving symlinks).
    pub found_as: PathBuf,
    pub via: Via,
    /// Index into [`Closure::files`] of the file that needed it.
    pub needed_by: Option<usize>,
    pub header: Header,
    pub dynamic: DynamicInfo,
    pub bytes: Vec<u8>,
}

/// A `DT_NEEDED` name no search directory had.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Missing {
    pub name: String,
    pub needed_by: PathBuf,
}

/// A closure: the files, the names that were not found, and the arguments that could not be
/// read or are not ELF.
#[derive(Debug, Default)]
pub struct Closure {
    pub files: Vec<Resolved>,
    pub missing: Vec<Missing>,
    pub errors: Vec<(PathBuf, String)>,
}

/// Upper bound on symlinks followed while resolving one path (Linux's MAXSYMLINKS is 40).
const MAX_SYMLINKS: usize = 40;

/// Resolves symlinks in `path` component by component. An absolute target is re-rooted at
/// `sysroot` when `path` lies inside it, and `..` never climbs out of the sysroot.
pub fn canonicalize(fs: &dyn Fs, sysroot: Option<&Path>, path: &Path) -> PathBuf {
    let root: PathBuf = sysroot
        .filter(|s| path.starts_with(s))
        .map_or_else(|| PathBuf::from("/"), Path::to_path_buf);
    let rest = path.strip_prefix(&root).unwrap_or(path);
    let mut queue: VecDeque<PathBuf> = rest.components().map(|c| c.as_os_str().into()).collect();
    let mut out = root.clone();
    let mut links = 0;
    while let Some(c) = queue.pop_front() {
        match Path::new(&c).components().next() {
            Some(Component::RootDir) => out = root.clone(),
            Some(Component::ParentDir) if out != root => {
                out.pop();
            }
            Some(Component::Normal(name)) => {
                let candidate = out.join(name);
                match fs.read_link(&candidate) {
                    Some(target) if links < MAX_SYMLINKS => {
                        links += 1;
                        if target.is_absolute() {
                            out = root.clone();
                        }
                        for (i, tc) in target.components().enumerate() {
                            queue.insert(i, tc.as_os_str().into());
                        }
                    }
                    _ => out = candidate,
                }
            }
            _ => {}
        }
    }
    out
}

/// Resolves the closure of `roots` (absolute paths).
pub fn resolve(fs: &dyn Fs, roots: &[PathBuf], sysroot: Option<&Path>) -> Closure {
    let mut c = Closure::default();
    let mut seen: HashSet<PathBuf> = HashSet::new();
    let mut queue: VecDeque<usize> = VecDeque::new();
    for root in roots {
        let real = canonicalize(fs, sysroot, root);
        if seen.contains(&real) {
            continue;
        }
        match load(fs, &real) {
            Ok((bytes, header, dynamic)) => {
                seen.insert(real.clone());
                c.files.push(Resolved {
                    path: real,
                    found_as: root.clone(),
                    via: Via::Argument,
                    needed_by: None,
                    header,
                    dynamic,
                    bytes,
                });
                queue.push_back(c.files.len() - 1);
            }
            Err(e) => c.errors.push((root.clone(), e)),
        }
    }
    while let Some(i) = queue.pop_front() {
        let mut wanted: Vec<(String, bool)> = Vec::new();
        if let Some(interp) = &c.files[i].dynamic.interp {
            wanted.push((interp.clone(), true));
        }
        wanted.extend(c.files[i].dynamic.needed.iter().map(|n| (n.clone(), false)));
        for (name, is_interp) in wanted {
            let found = if is_interp {
                let p = under(sysroot, Path::new(&name));
                candidate(fs, sysroot, &c.files[i].header, &p, &seen).map(|r| (r, Via::Interpreter))
            } else {
                search(fs, sysroot, &c, i, &name, &seen)
            };
            match found {
                Some((Found::New(loaded), via)) => {
                    let (real, found_as, bytes, header, dynamic) = *loaded;
                    seen.insert(real.clone());
                    c.files.push(Resolved {
                        path: real,
                        found_as,
                        via,
                        needed_by: Some(i),
                        header,
                        dynamic,
                        bytes,
                    });
                    queue.push_back(c.files.len() - 1);
                }
                Some((Found::Seen, _)) => {}
                None => c.missing.push(Missing {
                    name,
                    needed_by: c.files[i].path.clone(),
                }),
            }
        }
    }
    c
}

/// A file read and accepted: (path with symlinks resolved, path as found, bytes, header,
/// dynamic info).
type Loaded = (PathBuf, PathBuf, Vec<u8>, Header, DynamicInfo);

enum Found {
    New(Box<Loaded>),
    /// Already in the closure (the loader would reuse the loaded object).
    Seen,
}

fn load(fs: &dyn Fs, path: &Path) -> Result<(Vec<u8>, Header, DynamicInfo), String> {
    let bytes = fs.read(path).map_err(|e| format!("cannot read: {e}"))?;
    let h = header(&bytes).map_err(|e| e.to_string())?;
    let d = dynamic_info(&bytes).unwrap_or_default();
    Ok((bytes, h, d))
}

/// `p` inside the sysroot when it is absolute.
fn under(sysroot: Option<&Path>, p: &Path) -> PathBuf {
    match sysroot {
        Some(s) if p.is_absolute() => s.join(p.strip_prefix("/").unwrap_or(p)),
        _ => p.to_path_buf(),
    }
}

/// Accepts `p` if it is an ELF file of the requester's machine and class.
fn candidate(
    fs: &dyn Fs,
    sysroot: Option<&Path>,
    want: &Header,
    p: &Path,
    seen: &HashSet<PathBuf>,
) -> Option<Found> {
    let real = canonicalize(fs, sysroot, p);
    if seen.contains(&real) {
        return Some(Found::Seen);
    }
    let (bytes, h, d) = load(fs, &real).ok()?;
    if h.e_machine != want.e_machine || h.class != want.class {
        return None;
    }
    Some(Found::New(Box::new((real, p.to_path_buf(), bytes, h, d))))
}

/// Expands `$ORIGIN`/`${ORIGIN}` and `$LIB`/`${LIB}`; `None` for entries the loader would not
/// use here (relative directories depend on the process's cwd; `$PLATFORM` is unknown).
fn expand(entry: &str, origin: &Path, lib: &str, sysroot: Option<&Path>) -> Option<PathBuf> {
    let origin_s = origin.to_string_lossy();
    let e = entry
        .replace("${ORIGIN}", &origin_s)
        .replace("$ORIGIN", &origin_s)
        .replace("${LIB}", lib)
        .replace("$LIB", lib);
    if e.contains('$') || !e.starts_with('/') {
        return None;
    }
    if entry.starts_with("$ORIGIN") || entry.starts_with("${ORIGIN}") {
        Some(PathBuf::from(e))
    } else {
        Some(under(sysroot, Path::new(&e)))
    }
}

fn search(
    fs: &dyn Fs,
    sysroot: Option<&Path>,
    c: &Closure,
    i: usize,
    name: &str,
    seen: &HashSet<PathBuf>,
) -> Option<(Found, Via)> {
    let req = &c.files[i];
    if name.contains('/') {
        let p = under(sysroot, Path::new(name));
        return candidate(fs, sysroot, &req.header, &p, seen).map(|f| (f, Via::Path));
    }
    let triple = multiarch_triple(req.header.e_machine, req.header.class);
    let lib = triple.map_or_else(|| "lib".to_owned(), |t| format!("lib/{t}"));
    let origin_of = |f: &Resolved| -> PathBuf {
        let p = if f.via == Via::Argument {
            &f.path
        } else {
            &f.found_as
        };
        p.parent().map(Path::to_path_buf).unwrap_or_default()
    };
    let mut dirs: Vec<(PathBuf, Via)> = Vec::new();
    if req.dynamic.runpath.is_empty() {
        // DT_RPATH of the requester, then of each object that loaded it, up to the executable.
        let mut k = Some(i);
        while let Some(j) = k {
            let f = &c.files[j];
            if j == i || f.dynamic.runpath.is_empty() {
                for e in &f.dynamic.rpath {
                    if let Some(d) = expand(e, &origin_of(f), &lib, sysroot) {
                        dirs.push((d, Via::Rpath));
                    }
                }
            }
            k = f.needed_by;
        }
    }
    for e in &req.dynamic.runpath {
        if let Some(d) = expand(e, &origin_of(req), &lib, sysroot) {
            dirs.push((d, Via::Runpath));
        }
    }
    let mut std_dirs: Vec<String> = Vec::new();
    if let Some(t) = triple {
        std_dirs.push(format!("/lib/{t}"));
        std_dirs.push(format!("/usr/lib/{t}"));
    }
    if req.header.e_machine == super::header::EM_RISCV && req.header.class == 64 {
        std_dirs.push("/lib64/lp64d".into());
        std_dirs.push("/usr/lib64/lp64d".into());
    }
    for d in ["/lib64", "/usr/lib64", "/lib", "/usr/lib"] {
        std_dirs.push(d.into());
    }
    dirs.extend(
        std_dirs
            .iter()
            .map(|d| (under(sysroot, Path::new(d)), Via::Default)),
    );
    dirs.into_iter().find_map(|(d, via)| {
        candidate(fs, sysroot, &req.header, &d.join(name), seen).map(|f| (f, via))
    })
}

#[cfg(test)]
#[path = "closure_tests.rs"]
mod tests;
