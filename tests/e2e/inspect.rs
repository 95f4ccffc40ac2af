//! `icepick inspect` on real riscv64 programs: static test programs built here with
//! `riscv64-linux-gnu-gcc -O2 -static` from `corpus/rvv-programs/`, checked instruction by
//! instruction against `riscv64-linux-gnu-objdump -d`, run under `qemu-riscv64` with the
//! vector unit on and off, and Debian's riscv64 clang-19 closure fetched by
//! `scripts/fetch-riscv64-clang` (scripts/test exports `ICEPICK_RISCV64_SYSROOT`).
//!
//! The qemu runs model a host fault (a CPU or kernel without usable RVV 1.0, or a binary in
//! the other vector dialect); they are not faults of a real host.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use icepick::elf::{self, Dialect};
use serde_json::Value;

use crate::util::{at, build_riscv64, icepick};

const OBJDUMP: &str = "riscv64-linux-gnu-objdump";
const QEMU: &str = "qemu-riscv64";

/// The `.word`-encoded XTheadVector instructions of `xthead.c`, which objdump (no
/// XTheadVector support, and `$d` mapping symbols around them) shows as data.
const XTHEAD_WORDS: &[u32] = &[0x0000_72d7, 0x1205_0087, 0x0040_72d7];

/// `icepick inspect --json ARGS`, listing every instruction.
fn inspect(args: &[&str]) -> Value {
    let mut all = vec!["inspect", "--json", "--list", "1000000"];
    all.extend_from_slice(args);
    let o = icepick(Path::new(env!("CARGO_MANIFEST_DIR")), &all);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "inspect failed: {stderr}");
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {stderr}"))
}

/// One instruction line of objdump's output.
#[derive(Debug, Clone)]
struct Line {
    word: u32,
    mnemonic: String,
    operands: String,
}

/// Vector CSR names as objdump prints them.
const VECTOR_CSRS: &[&str] = &["vstart", "vxsat", "vxrm", "vcsr", "vl", "vtype", "vlenb"];

/// What objdump shows: decoded vector instructions, and undecoded `.word`s from
/// [`XTHEAD_WORDS`], by address.
struct Objdump {
    vector: BTreeMap<u64, Line>,
    known_words: BTreeMap<u64, u32>,
}

fn objdump(path: &Path) -> Objdump {
    let o = Command::new(OBJDUMP)
        .arg("-d")
        .arg(path)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {OBJDUMP} ({e})"));
    assert!(o.status.success(), "{OBJDUMP} failed");
    let text = String::from_utf8_lossy(&o.stdout);
    let mut r = Objdump {
        vector: BTreeMap::new(),
        known_words: BTreeMap::new(),
    };
    for line in text.lines() {
        // "   106da:\t0c06f7d7          \tvsetvli\ta5,a3,e8,m1,ta,ma"
        let mut parts = line.split('\t');
        let (Some(addr), Some(hex), Some(mnemonic)) = (parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        let Some(addr) = addr.trim().strip_suffix(':') else {
            continue;
        };
        let (Ok(addr), Ok(word)) = (
            u64::from_str_radix(addr, 16),
            u32::from_str_radix(hex.trim(), 16),
        ) else {
            continue;
        };
        if hex.trim().len() != 8 {
            continue;
        }
        let operands = parts.next().unwrap_or("").trim().to_owned();
        let mnemonic = mnemonic.trim().to_owned();
        let is_vector = (mnemonic.starts_with('v') || mnemonic.starts_with("th.v"))
            || (mnemonic.starts_with("csr")
                && operands
                    .split(',')
                    .any(|op| VECTOR_CSRS.contains(&op.trim())));
        if is_vector {
            r.vector.insert(
                addr,
                Line {
                    word,
                    mnemonic,
                    operands,
                },
            );
        } else if matches!(mnemonic.as_str(), ".word" | ".4byte" | ".insn")
            && XTHEAD_WORDS.contains(&word)
        {
            r.known_words.insert(addr, word);
        }
    }
    r
}

/// The dialect objdump's mnemonic implies (an oracle independent of icepick's bit tests):
/// RVV-1.0-only are vsetivli, vsetvli with `ma`, whole-register and mask loads/stores and
/// unordered indexed accesses.
fn objdump_dialect(l: &Line) -> &'static str {
    let m = l.mnemonic.as_str();
    let whole_register = (m.starts_with("vl") || m.starts_with("vs"))
        && m[2..].starts_with(|c: char| c.is_ascii_digit())
        && m.contains('r');
    if m == "vsetivli"
        || (m == "vsetvli" && l.operands.ends_with(",ma"))
        || whole_register
        || m == "vlm.v"
        || m == "vsm.v"
        || m.starts_with("vluxei")
        || m.starts_with("vsuxei")
    {
        "rvv1_only"
    } else {
        "ambiguous"
    }
}

/// icepick's instruction list for one file: address → (word, dialect, in_data, function).
fn hits(file: &Value) -> BTreeMap<u64, (u32, String, bool, String)> {
    assert_eq!(
        file["instructions_truncated"], false,
        "instruction list truncated"
    );
    file["instructions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| {
            let word = h["word"].as_str().unwrap();
            (
                h["address"].as_u64().unwrap(),
                (
                    u32::from_str_radix(word.trim_start_matches("0x"), 16).unwrap(),
                    h["dialect"].as_str().unwrap().to_owned(),
                    h["in_data"].as_bool().unwrap(),
                    h["function"].as_str().unwrap_or("").to_owned(),
                ),
            )
        })
        .collect()
}

/// Asserts icepick and objdump agree on every instruction objdump decodes (address, word,
/// dialect by mnemonic), and that icepick also finds the undecoded known `.word`s.
fn assert_agrees_with_objdump(bin: &Path, file: &Value) {
    let od = objdump(bin);
    let ours = hits(file);
    for (addr, l) in &od.vector {
        let Some((word, dialect, in_data, _)) = ours.get(addr) else {
            panic!(
                "objdump shows {} {} at {addr:#x}; icepick missed it",
                l.mnemonic, l.operands
            );
        };
        assert_eq!(*word, l.word, "word at {addr:#x}");
        assert_eq!(
            dialect,
            objdump_dialect(l),
            "dialect of {} {}",
            l.mnemonic,
            l.operands
        );
        assert!(!in_data);
    }
    for (addr, word) in &od.known_words {
        let Some((w, _, in_data, _)) = ours.get(addr) else {
            panic!(".word {word:#010x} at {addr:#x} (undecoded by objdump) missed by icepick");
        };
        assert_eq!(w, word);
        assert!(in_data, "a .word objdump shows as data is flagged in_data");
    }
    for (addr, (w, ..)) in &ours {
        assert!(
            od.vector.contains_key(addr) || od.known_words.contains_key(addr),
            "icepick reports {w:#010x} at {addr:#x}, which objdump shows as neither"
        );
    }
    let rvv1 = od
        .vector
        .values()
        .filter(|l| objdump_dialect(l) == "rvv1_only")
        .count();
    assert_eq!(at(file, "rvv1_only").as_u64(), Some(rvv1 as u64));
    assert_eq!(
        at(file, "vector_instructions").as_u64(),
        Some((od.vector.len() + od.known_words.len()) as u64)
    );
}

fn function_count(file: &Value, name: &str) -> u64 {
    file["functions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["name"] == name)
        .and_then(|f| f["vector_instructions"].as_u64())
        .unwrap_or(0)
}

#[test]
fn inspect_rvv1_program_agrees_with_objdump() {
    let tmp = tempfile::tempdir().unwrap();
    let bin = build_riscv64(tmp.path(), "rvv1");
    let r = inspect(&[bin.to_str().unwrap()]);
    assert_eq!(r["verdict"], "rvv1");
    let files = r["files"].as_array().unwrap();
    assert_eq!(files.len(), 1, "a static program has no DT_NEEDED");
    let f = &files[0];
    assert_eq!(f["machine"], "RISC-V");
    assert_eq!(f["riscv_flags"]["float_abi"], "double");
    // .option arch,+v does not reach Tag_RISCV_arch (docs/rvv.md §1.3).
    let arch = f["arch"].as_str().unwrap();
    assert!(
        arch.starts_with("rv64i") && !arch.contains("_v1p0"),
        "{arch}"
    );
    assert_agrees_with_objdump(&bin, f);
    assert_eq!(at(f, "vector_instructions").as_u64(), Some(12));
    assert_eq!(at(f, "rvv1_only").as_u64(), Some(6));
    assert_eq!(at(f, "xthead_only").as_u64(), Some(0));
    assert_eq!(at(f, "vector_csr").as_u64(), Some(1));
    assert_eq!(function_count(f, "rvv1_add_bytes"), 5);
    assert_eq!(function_count(f, "rvv1_whole_register"), 7);
}

#[test]
fn inspect_xthead_program_finds_words_objdump_cannot_decode() {
    let tmp = tempfile::tempdir().unwrap();
    let bin = build_riscv64(tmp.path(), "xthead");
    let r = inspect(&[bin.to_str().unwrap()]);
    assert_eq!(r["verdict"], "xtheadvector");
    let f = &r["files"][0];
    let od = objdump(&bin);
    assert!(od.vector.is_empty(), "objdump decoded {:?}", od.vector);
    assert_eq!(
        od.known_words.values().copied().collect::<Vec<_>>(),
        XTHEAD_WORDS,
        "objdump shows the three .words as data, in source order"
    );
    assert_agrees_with_objdump(&bin, f);
    assert_eq!(at(f, "xthead_only").as_u64(), Some(2));
    assert_eq!(at(f, "rvv1_only").as_u64(), Some(0));
    assert_eq!(function_count(f, "thead_load"), 2);
    assert_eq!(function_count(f, "thead_config16"), 1);
}

#[test]
fn inspect_scalar_program_finds_no_vector_code() {
    let tmp = tempfile::tempdir().unwrap();
    let bin = build_riscv64(tmp.path(), "novec");
    let r = inspect(&[bin.to_str().unwrap()]);
    let f = &r["files"][0];
    assert_agrees_with_objdump(&bin, f);
    assert_eq!(function_count(f, "main"), 0);
    assert_eq!(function_count(f, "checksum"), 0);
    // Debian bookworm's static glibc and libgcc have no vector code either.
    assert_eq!(r["verdict"], "none");
}

/// Runs `qemu-riscv64 -strace -cpu rv64,v=V BIN`; returns (signal, stdout, si_addr).
fn qemu(bin: &Path, v: bool) -> (Option<i32>, String, Option<u64>) {
    use std::os::unix::process::CommandExt;
    use std::os::unix::process::ExitStatusExt;
    let mut cmd = Command::new(QEMU);
    cmd.args([
        "-strace",
        "-cpu",
        if v { "rv64,v=true" } else { "rv64,v=false" },
    ])
    .arg(bin)
    // qemu-user dumps a core of itself (not of the guest) on a guest signal: keep it
    // out of the way.
    .current_dir(bin.parent().unwrap());
    // SAFETY: setrlimit is async-signal-safe; nothing else runs between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            let zero = libc::rlimit {
                rlim_cur: 0,
                rlim_max: 0,
            };
            libc::setrlimit(libc::RLIMIT_CORE, &zero);
            Ok(())
        });
    }
    let o = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {QEMU} ({e}): scripts/setup installs qemu-user"));
    let stdout = String::from_utf8_lossy(&o.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&o.stderr);
    // "--- SIGILL {si_signo=SIGILL, si_code=1, si_addr=0x000000000001069e} ---"
    let si_addr = stderr
        .lines()
        .chain(stdout.lines())
        .find(|l| l.contains("--- SIGILL"))
        .and_then(|l| l.split("si_addr=0x").nth(1))
        .and_then(|r| {
            u64::from_str_radix(r.trim_end_matches(|c: char| !c.is_ascii_hexdigit()), 16).ok()
        });
    (o.status.signal(), stdout, si_addr)
}

/// Experiment E2 through the library: the faulting address mapped to a file offset and the
/// instruction there decoded; `Some(dialect)` when it is a vector instruction.
fn e2_decode(bin: &Path, addr: u64) -> Option<Dialect> {
    let bytes = std::fs::read(bin).unwrap();
    let off = elf::vaddr_to_offset(&bytes, addr).expect("address inside a loaded segment");
    match elf::decode_at(&bytes, off as usize)?.what {
        elf::Decoded::Vector(v) => Some(v.dialect),
        _ => None,
    }
}

/// Models of host faults under qemu-user: the RVV 1.0 program dies with SIGILL when the
/// vector unit is off (as on a host without usable V) and runs when it is on; the
/// XTheadVector program dies on its 0.7.1-only load even with V on (the dialect mismatch of
/// running a C906/C920 binary on RVV 1.0 hardware); the scalar program runs either way. The
/// faulting address, mapped through `inspect`'s instruction list, names the instruction the
/// way experiment E2 will.
#[test]
fn qemu_vector_on_and_off_model_host_faults() {
    let tmp = tempfile::tempdir().unwrap();
    let rvv1 = build_riscv64(tmp.path(), "rvv1");
    let xthead = build_riscv64(tmp.path(), "xthead");
    let novec = build_riscv64(tmp.path(), "novec");

    let (sig, out, _) = qemu(&rvv1, true);
    assert_eq!(sig, None, "rvv1 with v=true: {out}");
    assert!(out.contains("rvv1 OK"), "{out}");
    let (sig, out, si_addr) = qemu(&rvv1, false);
    assert_eq!(sig, Some(libc::SIGILL), "rvv1 with v=false: {out}");
    let r = inspect(&[rvv1.to_str().unwrap()]);
    let h = hits(&r["files"][0]);
    let si_addr = si_addr.expect("qemu -strace printed si_addr");
    let (_, dialect, _, func) = &h[&si_addr];
    assert_eq!(
        (dialect.as_str(), func.as_str()),
        ("rvv1_only", "rvv1_add_bytes")
    );
    assert_eq!(e2_decode(&rvv1, si_addr), Some(Dialect::Rvv1Only));

    let (sig, out, si_addr) = qemu(&xthead, true);
    assert_eq!(sig, Some(libc::SIGILL), "xthead with v=true: {out}");
    let r = inspect(&[xthead.to_str().unwrap()]);
    let h = hits(&r["files"][0]);
    let si_addr = si_addr.expect("qemu -strace printed si_addr");
    let (word, dialect, _, _) = &h[&si_addr];
    assert_eq!((*word, dialect.as_str()), (0x1205_0087, "xthead_only"));
    assert_eq!(e2_decode(&xthead, si_addr), Some(Dialect::XTheadOnly));
    let (sig, _, _) = qemu(&xthead, false);
    assert_eq!(sig, Some(libc::SIGILL));

    for v in [true, false] {
        let (sig, out, _) = qemu(&novec, v);
        assert_eq!(sig, None, "novec with v={v}");
        assert!(out.contains("novec OK"), "{out}");
    }
}

#[test]
fn inspect_lists_non_riscv_files_with_zero_counts() {
    let r = inspect(&["/bin/true"]);
    let files = r["files"].as_array().unwrap();
    assert!(files.len() >= 2, "/bin/true and at least libc: {files:?}");
    assert!(files
        .iter()
        .any(|f| f["path"].as_str().unwrap().contains("libc.so")));
    for f in files {
        assert_ne!(f["machine"], "RISC-V");
        assert_eq!(f["vector_instructions"], 0);
        assert_eq!(f["arch"], Value::Null);
    }
    assert_eq!(r["verdict"], "none");
    assert_eq!(r["missing"].as_array().unwrap().len(), 0);
}

/// Debian trixie's riscv64 clang-19 and its DT_NEEDED closure. docs/rvv.md §2 found no vector code
/// in it except 12 `csrr vlenb` in libgcc_s's DWARF unwinder.
#[test]
fn inspect_riscv64_clang_closure() {
    let Some(sysroot) = std::env::var_os("ICEPICK_RISCV64_SYSROOT") else {
        panic!(
            "ICEPICK_RISCV64_SYSROOT is not set: run scripts/test, or \
             `export ICEPICK_RISCV64_SYSROOT=$(scripts/fetch-riscv64-clang)` first"
        );
    };
    let sysroot = PathBuf::from(sysroot);
    let clang = sysroot.join("usr/lib/llvm-19/bin/clang");
    assert!(
        clang.is_file(),
        "{} is missing: rerun scripts/fetch-riscv64-clang",
        clang.display()
    );
    let r = inspect(&[
        "--sysroot",
        sysroot.to_str().unwrap(),
        clang.to_str().unwrap(),
    ]);
    let files = r["files"].as_array().unwrap();
    assert!(files.len() >= 10, "closure has {} files", files.len());
    assert_eq!(
        r["missing"].as_array().unwrap().len(),
        0,
        "{}",
        r["missing"]
    );
    let names: Vec<&str> = files
        .iter()
        .map(|f| f["path"].as_str().unwrap().rsplit('/').next().unwrap())
        .collect();
    assert!(names.iter().any(|n| n.starts_with("libLLVM")), "{names:?}");
    assert!(
        names.iter().any(|n| n.starts_with("libclang-cpp")),
        "{names:?}"
    );
    for f in files {
        assert_eq!(f["machine"], "RISC-V", "{}", f["path"]);
        assert!(f["path"]
            .as_str()
            .unwrap()
            .starts_with(sysroot.to_str().unwrap()));
    }
    let total = at(&r, "totals.vector_instructions").as_u64().unwrap();
    assert!(total <= 64, "{total} vector instructions: expected a few");
    assert_eq!(
        at(&r, "totals.vector_csr").as_u64(),
        Some(total),
        "all are CSR accesses"
    );
    assert_eq!(at(&r, "totals.rvv1_only").as_u64(), Some(0));
    assert_eq!(at(&r, "totals.xthead_only").as_u64(), Some(0));
    for f in files {
        let n = f["vector_instructions"].as_u64().unwrap();
        let name = f["path"].as_str().unwrap();
        if n > 0 {
            assert!(
                name.contains("libgcc_s"),
                "{n} vector instructions in {name}"
            );
            // The same count as objdump's `csrr …,vlenb` lines.
            let od = objdump(Path::new(name));
            assert_eq!(od.vector.len() as u64, n, "objdump: {:?}", od.vector);
            assert_agrees_with_objdump(Path::new(name), f);
        }
    }
}
