//! Closure tests on an in-memory filesystem of hand-built ELF files.

use std::collections::HashMap;

use super::*;
use crate::elf::header::EM_RISCV;

/// A minimal little-endian ELF64 shared object or executable: `.dynstr`, `.dynamic`,
/// `.shstrtab`, and a `PT_INTERP` when `interp` is given.
fn elf(machine: u16, interp: Option<&str>, dyns: &[(u32, &str)]) -> Vec<u8> {
    let mut dynstr = vec![0u8];
    let mut entries: Vec<(u64, u64)> = Vec::new();
    for (tag, s) in dyns {
        entries.push((u64::from(*tag), dynstr.len() as u64));
        dynstr.extend_from_slice(s.as_bytes());
        dynstr.push(0);
    }
    entries.push((0, 0));
    let shstr = b"\0.dynstr\0.dynamic\0.shstrtab\0";
    let mut out = vec![0u8; 64];
    let phnum = u16::from(interp.is_some());
    let phoff = 64u64;
    out.resize(64 + 56 * phnum as usize, 0);
    let interp_off = out.len() as u64;
    if let Some(i) = interp {
        out.extend_from_slice(i.as_bytes());
        out.push(0);
    }
    let dynstr_off = out.len() as u64;
    out.extend_from_slice(&dynstr);
    while out.len() % 8 != 0 {
        out.push(0);
    }
    let dyn_off = out.len() as u64;
    for (t, v) in &entries {
        out.extend_from_slice(&t.to_le_bytes());
        out.extend_from_slice(&v.to_le_bytes());
    }
    let shstr_off = out.len() as u64;
    out.extend_from_slice(shstr);
    while out.len() % 8 != 0 {
        out.push(0);
    }
    let shoff = out.len() as u64;
    let sh = |out: &mut Vec<u8>, name: u32, ty: u32, off: u64, size: u64, link: u32, ent: u64| {
        out.extend_from_slice(&name.to_le_bytes());
        out.extend_from_slice(&ty.to_le_bytes());
        out.extend_from_slice(&0u64.to_le_bytes()); // flags
        out.extend_from_slice(&0u64.to_le_bytes()); // addr
        out.extend_from_slice(&off.to_le_bytes());
        out.extend_from_slice(&size.to_le_bytes());
        out.extend_from_slice(&link.to_le_bytes());
        out.extend_from_slice(&0u32.to_le_bytes());
        out.extend_from_slice(&8u64.to_le_bytes());
        out.extend_from_slice(&ent.to_le_bytes());
    };
    sh(&mut out, 0, 0, 0, 0, 0, 0);
    sh(&mut out, 1, 3, dynstr_off, dynstr.len() as u64, 0, 0);
    sh(&mut out, 9, 6, dyn_off, 16 * entries.len() as u64, 1, 16);
    sh(&mut out, 18, 3, shstr_off, shstr.len() as u64, 0, 0);
    out[..4].copy_from_slice(b"\x7fELF");
    out[4] = 2;
    out[5] = 1;
    out[6] = 1;
    out[0x10..0x12].copy_from_slice(&3u16.to_le_bytes());
    out[0x12..0x14].copy_from_slice(&machine.to_le_bytes());
    out[0x14..0x18].copy_from_slice(&1u32.to_le_bytes());
    out[0x20..0x28].copy_from_slice(&(if phnum > 0 { phoff } else { 0 }).to_le_bytes());
    out[0x28..0x30].copy_from_slice(&shoff.to_le_bytes());
    out[0x30..0x34].copy_from_slice(&5u32.to_le_bytes());
    out[0x34..0x36].copy_from_slice(&64u16.to_le_bytes());
    out[0x36..0x38].copy_from_slice(&56u16.to_le_bytes());
    out[0x38..0x3a].copy_from_slice(&phnum.to_le_bytes());
    out[0x3a..0x3c].copy_from_slice(&64u16.to_le_bytes());
    out[0x3c..0x3e].copy_from_slice(&4u16.to_le_bytes());
    out[0x3e..0x40].copy_from_slice(&3u16.to_le_bytes());
    if let Some(i) = interp {
        let p = 64;
        out[p..p + 4].copy_from_slice(&3u32.to_le_bytes());
        out[p + 8..p + 16].copy_from_slice(&interp_off.to_le_bytes());
        out[p + 32..p + 40].copy_from_slice(&(i.len() as u64 + 1).to_le_bytes());
        out[p + 40..p + 48].copy_from_slice(&(i.len() as u64 + 1).to_le_bytes());
    }
    out
}

#[derive(Default)]
struct MemFs {
    files: HashMap<PathBuf, Vec<u8>>,
    links: HashMap<PathBuf, PathBuf>,
}

impl MemFs {
    fn file(&mut self, p: &str, b: Vec<u8>) {
        self.files.insert(p.into(), b);
    }
    fn link(&mut self, p: &str, target: &str) {
        self.links.insert(p.into(), target.into());
    }
}

impl Fs for MemFs {
    fn read(&self, path: &Path) -> io::Result<Vec<u8>> {
        self.files
            .get(path)
            .cloned()
            .ok_or_else(|| io::Error::from(io::ErrorKind::NotFound))
    }
    fn read_link(&self, path: &Path) -> Option<PathBuf> {
        self.links.get(path).cloned()
    }
}

const NEEDED: u32 = object::elf::DT_NEEDED;
const RUNPATH: u32 = object::elf::DT_RUNPATH;
const RPATH: u32 = object::elf::DT_RPATH;

fn paths(c: &Closure) -> Vec<(String, Via)> {
    c.files
        .iter()
        .map(|f| (f.path.to_string_lossy().into_owned(), f.via))
        .collect()
}

#[test]
fn dynamic_info_reads_needed_runpath_and_interp() {
    let b = elf(
        EM_RISCV,
        Some("/lib/ld-linux-riscv64-lp64d.so.1"),
        &[
            (NEEDED, "libc.so.6"),
            (RUNPATH, "$ORIGIN/../lib:/opt/x"),
            (NEEDED, "libm.so.6"),
        ],
    );
    let d = dynamic_info(&b).unwrap();
    assert_eq!(d.needed, ["libc.so.6", "libm.so.6"]);
    assert_eq!(d.runpath, ["$ORIGIN/../lib", "/opt/x"]);
    assert_eq!(
        d.interp.as_deref(),
        Some("/lib/ld-linux-riscv64-lp64d.so.1")
    );
}

/// Debian's layout: /usr/bin/clang-19 -> ../lib/llvm-19/bin/clang with RUNPATH
/// $ORIGIN/../lib, where libLLVM is a symlink into the multiarch directory; merged /usr.
fn debian_like() -> MemFs {
    let mut fs = MemFs::default();
    let s = "/sr";
    fs.link("/sr/lib", "usr/lib");
    fs.link("/sr/usr/bin/clang-19", "../lib/llvm-19/bin/clang");
    fs.file(
        "/sr/usr/lib/llvm-19/bin/clang",
        elf(
            EM_RISCV,
            Some("/lib/ld-linux-riscv64-lp64d.so.1"),
            &[
                (NEEDED, "libLLVM.so.19.1"),
                (NEEDED, "libc.so.6"),
                (RUNPATH, "$ORIGIN/../lib"),
            ],
        ),
    );
    // An absolute symlink inside the sysroot must stay inside it.
    fs.link(
        "/sr/usr/lib/llvm-19/lib/libLLVM.so.19.1",
        "/usr/lib/riscv64-linux-gnu/libLLVM.so.19.1",
    );
    fs.file(
        "/sr/usr/lib/riscv64-linux-gnu/libLLVM.so.19.1",
        elf(
            EM_RISCV,
            None,
            &[(NEEDED, "libz.so.1"), (NEEDED, "libc.so.6")],
        ),
    );
    // A same-named library of the wrong machine earlier in the search order is skipped.
    fs.file("/sr/lib64/lp64d/libz.so.1", elf(62, None, &[]));
    fs.file(
        "/sr/usr/lib/riscv64-linux-gnu/libz.so.1",
        elf(EM_RISCV, None, &[]),
    );
    fs.file(
        "/sr/usr/lib/riscv64-linux-gnu/libc.so.6",
        elf(EM_RISCV, None, &[(NEEDED, "ld-linux-riscv64-lp64d.so.1")]),
    );
    fs.file(
        "/sr/usr/lib/riscv64-linux-gnu/ld-linux-riscv64-lp64d.so.1",
        elf(EM_RISCV, None, &[]),
    );
    fs.link(
        "/sr/usr/lib/ld-linux-riscv64-lp64d.so.1",
        "riscv64-linux-gnu/ld-linux-riscv64-lp64d.so.1",
    );
    let _ = s;
    fs
}

#[test]
fn closure_in_a_sysroot() {
    let fs = debian_like();
    let c = resolve(
        &fs,
        &["/sr/usr/bin/clang-19".into()],
        Some(Path::new("/sr")),
    );
    assert!(c.errors.is_empty(), "{:?}", c.errors);
    assert!(c.missing.is_empty(), "{:?}", c.missing);
    assert_eq!(
        paths(&c),
        vec![
            ("/sr/usr/lib/llvm-19/bin/clang".into(), Via::Argument),
            (
                "/sr/usr/lib/riscv64-linux-gnu/ld-linux-riscv64-lp64d.so.1".into(),
                Via::Interpreter
            ),
            (
                "/sr/usr/lib/riscv64-linux-gnu/libLLVM.so.19.1".into(),
                Via::Runpath
            ),
            (
                "/sr/usr/lib/riscv64-linux-gnu/libc.so.6".into(),
                Via::Default
            ),
            (
                "/sr/usr/lib/riscv64-linux-gnu/libz.so.1".into(),
                Via::Default
            ),
        ]
    );
    assert_eq!(
        c.files[2].found_as,
        Path::new("/sr/usr/lib/llvm-19/bin/../lib/libLLVM.so.19.1")
    );
    assert_eq!(c.files[2].needed_by, Some(0));
}

#[test]
fn missing_names_and_unreadable_roots_are_reported() {
    let mut fs = debian_like();
    fs.file(
        "/sr/usr/bin/tool",
        elf(EM_RISCV, None, &[(NEEDED, "libnothere.so.1")]),
    );
    fs.file("/sr/usr/bin/script", b"#!/bin/sh\necho hi\n".to_vec());
    let c = resolve(
        &fs,
        &[
            "/sr/usr/bin/tool".into(),
            "/sr/usr/bin/script".into(),
            "/nope".into(),
        ],
        Some(Path::new("/sr")),
    );
    assert_eq!(c.files.len(), 1);
    assert_eq!(c.missing[0].name, "libnothere.so.1");
    assert_eq!(c.errors.len(), 2);
    assert!(c.errors[0].1.contains("not an ELF"), "{}", c.errors[0].1);
}

#[test]
fn rpath_is_ignored_when_runpath_exists_and_inherited_otherwise() {
    let mut fs = MemFs::default();
    fs.file(
        "/app/bin/exe",
        elf(
            EM_RISCV,
            None,
            &[(NEEDED, "liba.so"), (RPATH, "$ORIGIN/../rp")],
        ),
    );
    // liba has no RUNPATH: the executable's RPATH applies to its needs too.
    fs.file(
        "/app/rp/liba.so",
        elf(EM_RISCV, None, &[(NEEDED, "libb.so")]),
    );
    fs.file(
        "/app/rp/libb.so",
        elf(EM_RISCV, None, &[(NEEDED, "libc.so"), (RUNPATH, "/rp2")]),
    );
    // libb has a RUNPATH, so the inherited RPATH does not apply to libc.so.
    fs.file("/app/rp/libc.so", elf(EM_RISCV, None, &[]));
    fs.file("/rp2/libc.so", elf(EM_RISCV, None, &[]));
    let c = resolve(&fs, &["/app/bin/exe".into()], None);
    assert_eq!(
        paths(&c),
        vec![
            ("/app/bin/exe".into(), Via::Argument),
            ("/app/rp/liba.so".into(), Via::Rpath),
            ("/app/rp/libb.so".into(), Via::Rpath),
            ("/rp2/libc.so".into(), Via::Runpath),
        ]
    );
}

#[test]
fn canonicalize_stays_in_the_sysroot() {
    let mut fs = MemFs::default();
    fs.link("/sr/a", "/b/../../../c");
    assert_eq!(
        canonicalize(&fs, Some(Path::new("/sr")), Path::new("/sr/a/x")),
        Path::new("/sr/c/x")
    );
    fs.link("/loop", "/loop");
    // A symlink loop stops after MAX_SYMLINKS instead of spinning.
    let _ = canonicalize(&fs, None, Path::new("/loop/x"));
}
