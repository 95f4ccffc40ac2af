//! `icepick classify`: real x86 clang-19 cases, and Debian's riscv64 clang-19 under
//! qemu-user (`ICEPICK_RISCV64_SYSROOT`, exported by scripts/test from
//! scripts/fetch-riscv64-clang).

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::util::*;

fn riscv64_sysroot() -> PathBuf {
    let root = std::env::var_os("ICEPICK_RISCV64_SYSROOT").unwrap_or_else(|| {
        panic!(
            "ICEPICK_RISCV64_SYSROOT is not set: run scripts/fetch-riscv64-clang and export \
             the path it prints (scripts/test does this)"
        )
    });
    let root = PathBuf::from(root);
    assert!(
        root.join("usr/lib/llvm-19/bin/clang").is_file(),
        "ICEPICK_RISCV64_SYSROOT={} has no usr/lib/llvm-19/bin/clang",
        root.display()
    );
    root
}

fn capture(src: &Path) -> (tempfile::TempDir, PathBuf) {
    let (tmp, dir) = scratch_copy(src);
    let out = dir.join("case");
    let (code, case, stderr) = capture_json(&dir, &out, &cmd_txt(&dir));
    assert_eq!(code, 0, "{stderr}\n{case:#}");
    (tmp, out)
}

fn classify(case: &Path, sysroot: Option<&Path>) -> serde_json::Value {
    let mut cmd = Command::new(BIN);
    cmd.args(["classify", case.to_str().unwrap(), "--json"]);
    match sysroot {
        Some(root) => cmd.env("ICEPICK_RISCV64_SYSROOT", root),
        None => cmd.env_remove("ICEPICK_RISCV64_SYSROOT"),
    };
    let o = cmd.output().unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{stderr}");
    serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}\n{stderr}", String::from_utf8_lossy(&o.stdout)))
}

fn evidence<'a>(c: &'a serde_json::Value, id: &str) -> &'a serde_json::Value {
    c["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["id"] == id)
        .unwrap_or_else(|| panic!("no evidence {id}: {c:#}"))
}

/// GH75010 on x86 clang-19, then Debian's riscv64 clang-19 under qemu with V off and on.
/// Observed: the emulated crash has the same fatal error and pass (`declare-to-assign`) but
/// another signature id, because the riscv64 build's frames differ (an extra
/// `TypeSize::operator unsigned long` frame, which x86 inlines): `same-crash-coarse`.
#[test]
fn gh75010_crashes_under_qemu_with_v_off_and_on_so_it_is_a_compiler_bug() {
    let sysroot = riscv64_sysroot();
    let (_tmp, case) = capture(&corpus("rv-gh75010"));
    let c = classify(&case, Some(&sysroot));
    assert_eq!(c["verdict"], "compiler-bug", "{c:#}");
    assert_eq!(c["rule"], 3, "{c:#}");
    assert_eq!(evidence(&c, "E1")["outcome"], "deterministic");
    assert_eq!(evidence(&c, "baseline")["outcome"], "same-crash");
    let same = ["same-crash", "same-crash-coarse"];
    for id in ["E5-v-off", "E5-v128", "E5-v256"] {
        let e = evidence(&c, id);
        assert_eq!(e["ran"], true, "{e:#}");
        assert!(same.contains(&e["outcome"].as_str().unwrap()), "{e:#}");
        let detail = e["detail"].as_str().unwrap();
        assert!(
            detail.contains("Invalid size request on a scalable vector"),
            "{detail}"
        );
        assert!(detail.contains("declare-to-assign"), "{detail}");
    }
    assert_eq!(evidence(&c, "E4")["ran"], false);
    assert_eq!(evidence(&c, "E4")["detail"], "not a RISC-V host");
    // Saved into the case and the report.
    let saved = read_case(&case);
    assert_eq!(saved["classification"], c);
    let report = std::fs::read_to_string(case.join("report.md")).unwrap();
    let at_class = report.find("## Classification").expect("report section");
    assert!(at_class < report.find("## Environment").unwrap());
    assert!(report.contains("**compiler-bug**"));
}

/// The repository's SIGILL case on x86 clang-19, classified with no sysroot at all: E5 is
/// recorded as not run, and the deterministic crash on a host that is not RISC-V is a
/// compiler bug with medium confidence; E5 is the next step.
#[test]
fn vector_pragma_without_a_sysroot_is_a_compiler_bug_with_e5_as_next_step() {
    let (_tmp, case) = capture(&corpus("rv-vector-pragma"));
    let c = classify(&case, None);
    assert_eq!(c["verdict"], "compiler-bug", "{c:#}");
    assert_eq!(c["confidence"], "medium");
    assert_eq!(evidence(&c, "E1")["outcome"], "deterministic");
    let e5 = evidence(&c, "E5-v-off");
    assert_eq!(e5["ran"], false);
    assert!(e5["detail"]
        .as_str()
        .unwrap()
        .contains("ICEPICK_RISCV64_SYSROOT"));
    assert!(c["next_step"].as_str().unwrap().starts_with("E5"));
    assert_eq!(evidence(&c, "E7")["outcome"], "no-resource-sign");
    // The facts capture recorded about this (x86) machine.
    let h = evidence(&c, "H");
    assert_eq!(h["outcome"], "not-riscv", "{h:#}");
    assert_eq!(
        h["detail"],
        format!(
            "captured on an {} host: no RISC-V vector unit involved",
            std::env::consts::ARCH
        )
    );
}

/// `ICEPICK_RISCV64_SYSROOT=` (set but empty, as a script whose lookup failed leaves it) made
/// classify look for `usr/lib/llvm-19/bin/clang` relative to the working directory and fail
/// with exit 2, so `icepick triage` of an x86 crash ended in an error after its reduction. An
/// empty value now counts as unset.
#[test]
fn empty_riscv64_sysroot_variable_failed_classify_of_an_x86_crash() {
    let (_tmp, case) = capture(&corpus("rv-vector-pragma"));
    let o = Command::new(BIN)
        .args(["classify", case.to_str().unwrap(), "--json"])
        .env("ICEPICK_RISCV64_SYSROOT", "")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{stderr}");
    let c: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(c["verdict"], "compiler-bug", "{c:#}");
    assert_eq!(evidence(&c, "E5-v-off")["ran"], false);
}

/// `corpus/rvv-programs/fakecc.c` captured under `qemu-riscv64 -cpu CPU` as a compiler of a
/// RISC-V host, on a source with `text`. Returns the scratch dir and the case.
fn capture_fakecc(text: &str, cpu: &str) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    build_riscv64(tmp.path(), "fakecc");
    std::fs::write(tmp.path().join("unit.c"), text).unwrap();
    let case = tmp.path().join("case");
    let emulator = format!("qemu-riscv64 -cpu {cpu}");
    let o = icepick(
        tmp.path(),
        &[
            "capture",
            "--json",
            "--out",
            case.to_str().unwrap(),
            "--emulator",
            &emulator,
            "--",
            "./fakecc",
            "-O2",
            "-c",
            "unit.c",
            "-o",
            "unit.o",
        ],
    );
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "capture failed: {stderr}");
    let saved = read_case(&case);
    assert_eq!(
        saved["emulator"],
        serde_json::json!(["qemu-riscv64", "-cpu", cpu])
    );
    (tmp, case)
}

/// A model of the C920 fault (docs/rvv.md §1), not a real host fault: `fakecc` takes a vector path
/// when AT_HWCAP has V and that path is XTheadVector code, so on qemu's RVV 1.0 unit
/// (`v=true`, the "host" it was captured on) it dies with SIGILL, and with `v=false` it takes
/// the scalar path. E2 decodes the faulting word as XTheadVector-only: host-rvv, dialect
/// mismatch, whatever the input.
#[test]
fn a_compiler_running_xtheadvector_code_on_an_rvv1_unit_is_a_host_dialect_mismatch() {
    let (_tmp, case) = capture_fakecc("int main(void) { return 0; }\n", "rv64,v=true");
    let saved = read_case(&case);
    assert_eq!(saved["crash"]["kind"], "illegal_instruction", "{saved:#}");
    assert!(
        saved["signature"]["frames"][0]
            .as_str()
            .unwrap()
            .contains("hash_xthead"),
        "symbolized from fakecc's symbol table: {:#}",
        saved["signature"]
    );
    // The sysroot clang must not be used: the case's own compiler is the riscv64 compiler.
    let c = classify(&case, Some(&riscv64_sysroot()));
    assert_eq!(c["verdict"], "host-rvv", "{c:#}");
    assert_eq!(c["subcase"], "dialect-mismatch", "{c:#}");
    assert_eq!(c["rule"], 51, "{c:#}");
    assert_eq!(c["confidence"], "high");
    let e1 = evidence(&c, "E1");
    assert_eq!(e1["outcome"], "deterministic", "{e1:#}");
    assert_eq!(e1["host_or_emulator"], "qemu-riscv64 -cpu rv64,v=true");
    assert_eq!(evidence(&c, "E5-v-off")["outcome"], "no-crash");
    assert_eq!(evidence(&c, "E5-v128")["outcome"], "same-crash");
    assert_eq!(evidence(&c, "E5-v256")["outcome"], "same-crash");
    let e2 = evidence(&c, "E2");
    assert_eq!(e2["outcome"], "vector", "{e2:#}");
    let d2 = e2["detail"].as_str().unwrap();
    assert!(
        d2.contains("0x12050087") && d2.contains("XTheadVector-only"),
        "{d2}"
    );
    let e3 = evidence(&c, "E3");
    assert_eq!(e3["ran"], true, "{e3:#}");
    let d3 = e3["detail"].as_str().unwrap();
    assert!(d3.contains("fakecc ("), "{d3}");
    // Not a clang: there is no build of it for this host to replay on.
    assert_eq!(evidence(&c, "E6")["ran"], false);
    let h = evidence(&c, "H");
    assert_eq!(h["outcome"], "not-riscv", "{h:#}");
    assert!(
        h["detail"]
            .as_str()
            .unwrap()
            .starts_with("captured under `qemu-riscv64 -cpu rv64,v=true` on an x86_64 host"),
        "{h:#}"
    );
    let report = std::fs::read_to_string(case.join("report.md")).unwrap();
    assert!(
        report.contains("**host-rvv** (dialect-mismatch)"),
        "{report}"
    );
    assert!(report.contains("row 5b"), "{report}");
}

/// The same model compiler with an input that hits its parser bug (a null dereference before
/// any vector code): it crashes the same way with V off and on, so the host's vector unit is
/// not involved, whatever the "host" says.
#[test]
fn a_crash_the_same_with_v_off_and_on_is_not_the_host() {
    let (_tmp, case) = capture_fakecc("#pragma fakecc crash\nint x;\n", "rv64,v=true");
    assert_eq!(read_case(&case)["crash"]["kind"], "segfault");
    let c = classify(&case, None);
    assert_ne!(c["verdict"], "host-rvv", "{c:#}");
    assert_eq!(c["verdict"], "compiler-bug", "{c:#}");
    assert_eq!(c["rule"], 42, "{c:#}");
    for id in ["E5-v-off", "E5-v128", "E5-v256"] {
        assert_eq!(evidence(&c, id)["outcome"], "same-crash", "{id}: {c:#}");
    }
    assert_eq!(evidence(&c, "E2")["outcome"], "other", "{c:#}");
    assert!(c["next_step"].as_str().unwrap().starts_with("E6"));
}

/// GH75010 captured with Debian's riscv64 clang-19 itself under `qemu-riscv64 -cpu
/// rv64,v=true` (as on a RISC-V host), then classified with no options: E1 reruns under the
/// same emulator, E5 uses the case's own compiler (same signature with V off and on, frames
/// symbolized from the sysroot's libLLVM), E6 replays on this host's clang-19 with
/// `--target=riscv64-linux-gnu` (same message and pass, other frames: another build); E6
/// keeps its frames and the report diffs them against the case's (#17 item 8).
#[test]
fn a_riscv64_clang_captured_under_qemu_replays_on_x86_clang_of_its_version() {
    let sysroot = riscv64_sysroot();
    let (_tmp, dir) = scratch_copy(&corpus("rv-gh75010"));
    let clang = sysroot.join("usr/lib/llvm-19/bin/clang");
    let emulator = format!("qemu-riscv64 -L {} -cpu rv64,v=true", sysroot.display());
    let case = dir.join("case");
    let o = icepick(
        &dir,
        &[
            "capture",
            "--json",
            "--out",
            case.to_str().unwrap(),
            "--emulator",
            &emulator,
            "--",
            clang.to_str().unwrap(),
            "-fno-crash-diagnostics",
            "-c",
            "-o",
            "/dev/null",
            "-march=rv64gcv",
            "-O1",
            "-g",
            "GH75010.c",
        ],
    );
    expect_success(&o);
    let saved = read_case(&case);
    assert_eq!(
        saved["signature"]["frames"][2], "llvm::at::trackAssignments",
        "guest library paths are symbolized from the -L root: {:#}",
        saved["signature"]
    );
    let out = Command::new(BIN)
        .args(["classify", case.to_str().unwrap(), "--json", "--runs", "2"])
        .env_remove("ICEPICK_RISCV64_SYSROOT")
        .output()
        .unwrap();
    expect_success(&out);
    let c: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(c["verdict"], "compiler-bug", "{c:#}");
    assert_eq!(c["rule"], 3, "{c:#}");
    assert_eq!(evidence(&c, "E1")["outcome"], "deterministic");
    assert!(evidence(&c, "E1")["host_or_emulator"]
        .as_str()
        .unwrap()
        .starts_with("qemu-riscv64 -L"));
    for id in ["E5-v-off", "E5-v128", "E5-v256"] {
        assert_eq!(evidence(&c, id)["outcome"], "same-crash", "{id}: {c:#}");
    }
    let e6 = evidence(&c, "E6");
    assert_eq!(e6["outcome"], "same-crash-coarse", "{e6:#}");
    let d6 = e6["detail"].as_str().unwrap();
    assert!(
        d6.contains("/usr/lib/llvm-19/bin/clang --target=riscv64-linux-gnu"),
        "{d6}"
    );
    // The two builds' frames are kept and the report shows where they part, as a diff.
    let f6: Vec<&str> = e6["frames"]
        .as_array()
        .unwrap_or_else(|| panic!("E6 keeps its frames: {e6:#}"))
        .iter()
        .map(|f| f.as_str().unwrap())
        .collect();
    let ours: Vec<&str> = saved["crash"]["frames"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|f| f["symbol"].as_str())
        .collect();
    assert!(!f6.is_empty() && f6.len() <= 12, "{f6:?}");
    assert_eq!(f6[0], saved["signature"]["frames"][0], "same top frame");
    let report = std::fs::read_to_string(case.join("report.md")).unwrap();
    let block = report
        .split("```diff\n")
        .nth(1)
        .and_then(|b| b.split("\n```").next())
        .unwrap_or_else(|| panic!("no frame diff in the report:\n{report}"));
    let lines: Vec<&str> = block.lines().collect();
    assert_eq!(lines[0], "--- the case's crash", "{block}");
    assert_eq!(
        lines[1],
        format!("+++ E6 (host {})", std::env::consts::ARCH),
        "{block}"
    );
    assert!(lines[2].starts_with("@@ "), "{block}");
    let (minus, plus) = (
        lines.iter().filter(|l| l.starts_with('-')).count() - 1,
        lines.iter().filter(|l| l.starts_with('+')).count() - 1,
    );
    assert!(minus + plus > 0, "the frames differ: {block}");
    for l in lines.iter().skip(3).filter(|l| l.starts_with('+')) {
        assert!(f6.contains(&&l[1..]), "{l} is one of E6's frames: {f6:?}");
    }
    for l in lines.iter().skip(3).filter(|l| l.starts_with('-')) {
        assert!(
            ours.iter().any(|o| o.contains(&l[1..])),
            "{l} is one of the case's frames: {ours:?}"
        );
    }
    // Debian's riscv64 clang-19 closure has no vector code but libgcc_s's vlenb reads.
    let e3 = evidence(&c, "E3");
    assert_eq!(e3["ran"], true, "{e3:#}");
    assert!(e3["detail"]
        .as_str()
        .unwrap()
        .contains("0 RVV-1.0-only, 0 XTheadVector-only"));
    // The capturing host is emulated, so its replay is E1, not a baseline on this host.
    assert!(c["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .all(|e| e["id"] != "baseline"));
}

/// `icepick classify CASE --json --runs 1 EXTRA…` without a sysroot.
fn classify_once(case: &Path, extra: &[&std::ffi::OsStr]) -> std::process::Output {
    Command::new(BIN)
        .args(["classify", case.to_str().unwrap(), "--json", "--runs", "1"])
        .args(extra)
        .env_remove("ICEPICK_RISCV64_SYSROOT")
        .output()
        .unwrap()
}

/// The report a RISC-V kernel prints when `fakecc` dies of SIGILL at `word` (a model of a
/// C920 host's log: the same format as arch/riscv/kernel/traps.c, with `badaddr` zero as when
/// the hart does not report the bits, so the instruction must come from the file). The pc is
/// where `word` sits in the static non-PIE `fakecc`, found from its program headers here.
/// With `with_offset`, the mapping is printed as newer kernels do, `fakecc[OFF,START+SIZE]`,
/// OFF being the pc's offset in the file (here: where the word is, found by searching the
/// file's bytes, independently of icepick's ELF arithmetic).
fn modelled_kernel_report(fakecc: &Path, word: u32, with_offset: bool) -> String {
    use object::{Object, ObjectSegment, SegmentFlags};
    let bytes = std::fs::read(fakecc).unwrap();
    let file = object::File::parse(&*bytes).unwrap();
    let at = bytes
        .windows(4)
        .position(|w| w == word.to_le_bytes())
        .unwrap_or_else(|| panic!("0x{word:08x} is not in {}", fakecc.display()))
        as u64;
    let seg = file
        .segments()
        .find(|s| {
            let (off, size) = s.file_range();
            let exec = matches!(s.flags(), SegmentFlags::Elf { p_flags } if p_flags & object::elf::PF_X != 0);
            exec && (off..off + size).contains(&at)
        })
        .expect("the word lies in an executable segment");
    let pc = seg.address() + (at - seg.file_range().0);
    let start = seg.address() & !0xfff;
    let size = (seg.address() + seg.size()).div_ceil(0x1000) * 0x1000 - start;
    let off = if with_offset {
        format!("{at:x},")
    } else {
        String::new()
    };
    format!(
        "[ 5120.118532] fakecc[4242]: unhandled signal 4 code 0x1 at 0x{pc:016x} in fakecc[{off}{start:x}+{size:x}]\n\
         [ 5120.118540] CPU: 17 PID: 4242 Comm: fakecc Not tainted 6.6.20-sg2042 #1\n\
         [ 5120.118544] epc : {pc:016x} ra : 0000000000010c2e sp : 0000003fffffe8a0\n\
         [ 5120.118560] status: 0000000200004020 badaddr: 0000000000000000 cause: 0000000000000002\n"
    )
}

/// `classify --kernel-log`: E2 decodes the instruction at the pc of the kernel's report, from
/// the mapped file (here the case's own compiler), and the log is kept in the case. A log
/// without a report is refused as bad input.
#[test]
fn the_kernel_logs_report_gives_e2_the_faulting_instruction() {
    let (tmp, case) = capture_fakecc("int main(void) { return 0; }\n", "rv64,v=true");
    let log = tmp.path().join("dmesg.txt");
    let write_log = |with_offset: bool| {
        std::fs::write(
            &log,
            format!(
                "[ 5119.000000] systemd-journald[312]: Received client request to flush\n{}",
                modelled_kernel_report(&tmp.path().join("fakecc"), 0x1205_0087, with_offset)
            ),
        )
        .unwrap()
    };
    write_log(true);
    let run = |log: &Path| classify_once(&case, &["--kernel-log".as_ref(), log.as_os_str()]);
    let o = run(&log);
    expect_success(&o);
    let c: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let e2 = evidence(&c, "E2");
    assert_eq!(e2["outcome"], "vector", "{e2:#}");
    assert_eq!(e2["host_or_emulator"], "kernel log of the crashing host");
    let d2 = e2["detail"].as_str().unwrap();
    let first = d2.to_string();
    assert!(
        d2.starts_with("kernel log: `fakecc[4242]: unhandled signal 4"),
        "{d2}"
    );
    assert!(
        d2.contains("0x12050087") && d2.contains("XTheadVector-only"),
        "{d2}"
    );
    assert!(d2.contains("fakecc+0x"), "{d2}");
    assert_eq!(c["verdict"], "host-rvv", "{c:#}");
    assert_eq!(c["subcase"], "dialect-mismatch", "{c:#}");
    assert_eq!(
        std::fs::read_to_string(case.join("kernel.log")).unwrap(),
        std::fs::read_to_string(&log).unwrap()
    );
    // The older format (no file offset): the offset comes from the executable segment.
    write_log(false);
    let o = run(&log);
    expect_success(&o);
    let c: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let d2 = evidence(&c, "E2")["detail"].as_str().unwrap().to_string();
    assert!(
        d2.contains("0x12050087") && d2.contains("XTheadVector-only"),
        "{d2}"
    );
    // Both formats find the same place in the file.
    let place = |d: &str| {
        let at = d.find("fakecc+0x").unwrap_or_else(|| panic!("{d}"));
        d[at..].split_whitespace().next().unwrap().to_string()
    };
    assert_eq!(place(&d2), place(&first));

    // Reports from other processes only: E2 does not take them for the compiler's.
    std::fs::write(
        &log,
        "[ 1.0] journald[312]: unhandled signal 11 code 0x1 at 0x38 in libc.so.6[2000024000+13e000]\n",
    )
    .unwrap();
    let o = run(&log);
    expect_success(&o);
    let c: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let e2 = evidence(&c, "E2");
    assert_ne!(
        e2["host_or_emulator"], "kernel log of the crashing host",
        "{e2:#}"
    );
    // The stack dump still decodes the fault; the log's note is not needed then.
    assert_eq!(e2["outcome"], "vector", "{e2:#}");

    let empty = tmp.path().join("empty.log");
    std::fs::write(&empty, "[    0.000000] Linux version 6.6.20\n").unwrap();
    let o = run(&empty);
    assert_eq!(o.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        stderr.contains("empty.log") && stderr.contains("no \"unhandled signal\" report"),
        "{stderr}"
    );
}

/// A core of `fakecc` dying of SIGILL under `qemu-riscv64 -cpu rv64,v=true`, written by gdb's
/// `gcore` through qemu's gdbstub: qemu-user writes no guest cores (docs/rvv.md §3), and gdb is
/// how a user gets a core of a RISC-V process on any machine. gdb keeps the code in the core.
fn gcore_of_fakecc(dir: &Path) -> PathBuf {
    use std::time::{Duration, Instant};
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    std::fs::write(dir.join("u.c"), "int x;\n").unwrap();
    let mut qemu = Command::new("qemu-riscv64")
        .args(["-cpu", "rv64,v=true", "-g", &port.to_string(), "./fakecc"])
        .args(["-c", "u.c", "-o", "u.o"])
        .current_dir(dir)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let core = dir.join("fakecc.core");
    let gdb = Command::new("gdb-multiarch")
        .args(["-q", "-batch", "-nx"])
        .args(["-ex", "set architecture riscv:rv64"])
        .args(["-ex", "set tcp connect-timeout 30"])
        .args(["-ex", &format!("target remote 127.0.0.1:{port}")])
        .args(["-ex", "continue"])
        .args(["-ex", &format!("gcore {}", core.display())])
        .arg(dir.join("fakecc"))
        .output()
        .unwrap_or_else(|e| panic!("cannot run gdb-multiarch ({e}): scripts/setup installs it"));
    let deadline = Instant::now() + Duration::from_secs(30);
    while qemu.try_wait().unwrap().is_none() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = qemu.kill();
    let _ = qemu.wait();
    let out = String::from_utf8_lossy(&gdb.stdout);
    assert!(
        core.is_file() && out.contains("SIGILL"),
        "gdb made no core:\n{out}\n{}",
        String::from_utf8_lossy(&gdb.stderr)
    );
    core
}

/// `classify --core`: E2 reads the pc from the core's NT_PRSTATUS and the instruction from
/// the core's memory. A core that is not a RISC-V core is refused as bad input.
#[test]
fn a_core_file_gives_e2_the_faulting_instruction() {
    let (tmp, case) = capture_fakecc("int main(void) { return 0; }\n", "rv64,v=true");
    let core = gcore_of_fakecc(tmp.path());
    let run = |core: &Path| classify_once(&case, &["--core".as_ref(), core.as_os_str()]);
    let o = run(&core);
    expect_success(&o);
    let c: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let e2 = evidence(&c, "E2");
    assert_eq!(e2["outcome"], "vector", "{e2:#}");
    assert_eq!(e2["host_or_emulator"], "core file of the crashed compiler");
    let d2 = e2["detail"].as_str().unwrap();
    assert!(d2.contains("signal 4, pc 0x"), "{d2}");
    assert!(d2.contains("read from the core's memory"), "{d2}");
    assert!(
        d2.contains("0x12050087") && d2.contains("XTheadVector-only"),
        "{d2}"
    );
    assert_eq!(c["verdict"], "host-rvv", "{c:#}");
    // The case remembers the core: a later run without --core decodes it again.
    let again = classify_once(&case, &[]);
    expect_success(&again);
    let c2: serde_json::Value = serde_json::from_slice(&again.stdout).unwrap();
    assert_eq!(evidence(&c2, "E2")["detail"], e2["detail"]);

    // An x86 ELF file that is not a core, then no file at all.
    for bad in [Path::new(BIN), &tmp.path().join("missing.core")] {
        let o = run(bad);
        assert_eq!(o.status.code(), Some(2), "{}", bad.display());
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert!(stderr.contains("core file"), "{stderr}");
    }
}

/// The `NT_FILE` note that kernel cores carry (and from which `--core` finds the file holding
/// the pc when the core leaves code out), read from a real core: gdb's `gcore` of a running
/// `sleep` on this host writes the note the way the kernel does. Every file mapping in the
/// process's /proc/PID/maps must come back with the same range and file offset.
#[test]
fn nt_file_of_a_real_core_matches_the_process_maps() {
    let tmp = tempfile::tempdir().unwrap();
    let mut sleep = Command::new("sleep").arg("60").spawn().unwrap();
    // Once the loader has mapped libc, the mappings stay as they are while it sleeps.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let read_maps = || std::fs::read_to_string(format!("/proc/{}/maps", sleep.id())).unwrap();
    while !read_maps().contains("libc") && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    // Relocation (RELRO) splits mappings right after: read them once it sleeps.
    std::thread::sleep(std::time::Duration::from_millis(300));
    let maps = read_maps();
    let core = tmp.path().join("sleep.core");
    let gdb = Command::new("gdb-multiarch")
        .args(["-q", "-batch", "-nx", "-p", &sleep.id().to_string()])
        .args(["-ex", &format!("gcore {}", core.display())])
        .output()
        .unwrap_or_else(|e| panic!("cannot run gdb-multiarch ({e}): scripts/setup installs it"));
    let _ = sleep.kill();
    let _ = sleep.wait();
    assert!(
        core.is_file(),
        "gdb made no core: {}",
        String::from_utf8_lossy(&gdb.stderr)
    );
    let files = icepick::classify::core_file::mapped_files(&std::fs::read(&core).unwrap());
    let mut checked = 0;
    for line in maps.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() < 6 || !f[5].starts_with('/') {
            continue;
        }
        let (start, end) = f[0].split_once('-').unwrap();
        let want = (
            u64::from_str_radix(start, 16).unwrap(),
            u64::from_str_radix(end, 16).unwrap(),
            u64::from_str_radix(f[2], 16).unwrap(),
            f[5].to_string(),
        );
        assert!(files.contains(&want), "{want:x?} missing from {files:x?}");
        checked += 1;
    }
    assert!(checked >= 4, "sleep maps its binary and libc: {maps}");
    // The core is x86's: read() refuses it for E2, naming the machine.
    let err = icepick::classify::core_file::read(&std::fs::read(&core).unwrap()).unwrap_err();
    assert!(err.to_string().contains(std::env::consts::ARCH), "{err}");
}
