//! Unit tests of the link-crash rules ([`super`]), on crash outputs as lld and clang print them.

use super::*;
use crate::crash::{self, ExitInfo};

fn cmd(line: &str) -> CompilerCommand {
    CompilerCommand::from_argv(&shlex::split(line).unwrap()).unwrap()
}

fn parsed(stderr: &str) -> Crash {
    crash::parse(
        stderr,
        ExitInfo {
            code: None,
            signal: Some(6),
        },
    )
    .expect("a crash")
}

const FULL_LTO_CRASH: &str = "LLVM ERROR: Cannot select: 0x1: v16i1 = setcc 0x2, 0x3, seteq:ch
In function: f
PLEASE submit a bug report to https://github.com/llvm/llvm-project/issues/ and include the crash backtrace.
Stack dump:
0.\tProgram arguments: /usr/lib/llvm-19/bin/ld.lld --hash-style=gnu -m elf_x86_64 -shared -o a.so -plugin-opt=mcpu=x86-64 -plugin-opt=O1 a.o
1.\tRunning pass 'Function Pass Manager' on module 'ld-temp.o'.
2.\tRunning pass 'X86 DAG->DAG Instruction Selection' on function '@f'
 #0 0x00007ff150eb73c6 llvm::sys::PrintStackTrace(llvm::raw_ostream&, int) (/lib/x86_64-linux-gnu/libLLVM.so.19.1+0xeb73c6)
clang-19: error: unable to execute command: Aborted
clang-19: error: linker command failed due to signal (use -v to see invocation)
";

const THIN_LTO_CRASH: &str = "LLVM ERROR: Cannot select: 0x1: v16i1 = setcc 0x2, 0x3, seteq:ch
Stack dump:
0.\tRunning pass 'Function Pass Manager' on module '/tmp/s/in/0-t.o'.
1.\tRunning pass 'X86 DAG->DAG Instruction Selection' on function '@f'
 #0 0x00007ff150eb73c6 llvm::sys::PrintStackTrace(llvm::raw_ostream&, int) (/lib/x86_64-linux-gnu/libLLVM.so.19.1+0xeb73c6)
";

#[test]
fn linkers_are_known_by_name_with_versions_and_target_prefixes() {
    for l in [
        "ld",
        "/usr/bin/ld.lld",
        "ld.lld-19",
        "ld.gold",
        "/usr/bin/riscv64-linux-gnu-ld",
        "riscv64-linux-gnu-ld.bfd",
        "lld",
    ] {
        assert!(is_linker(l), "{l}");
    }
    for n in [
        "clang-19",
        "llc",
        "ldd",
        "old",
        "/usr/bin/gold-ld-helper",
        "lld-link",
    ] {
        assert!(!is_linker(n), "{n}");
    }
}

#[test]
fn a_driver_whose_linker_crashed_is_a_link_crash_and_a_compile_crash_is_not() {
    let link = cmd("clang-19 -flto -fuse-ld=lld -shared a.o -o a.so");
    let c = parsed(FULL_LTO_CRASH);
    assert!(is_link_crash(&link, FULL_LTO_CRASH, &c));
    // The stack's program line alone says so too (the driver's own lines cut off).
    let only_stack = FULL_LTO_CRASH.replace("linker command failed", "something else");
    assert!(is_link_crash(&link, &only_stack, &c));
    let compile = cmd("clang-19 -O2 -c x.c -o x.o");
    let cc1_crash = FULL_LTO_CRASH
        .replace("/usr/lib/llvm-19/bin/ld.lld", "/usr/lib/llvm-19/bin/clang")
        .replace("linker command failed", "clang frontend command failed");
    assert!(!is_link_crash(&compile, &cc1_crash, &parsed(&cc1_crash)));
    assert!(is_link_crash(
        &cmd("ld.lld-19 -shared a.o -o a.so"),
        THIN_LTO_CRASH,
        &parsed(THIN_LTO_CRASH)
    ));
    assert!(!is_link_crash(
        &cmd("llc-19 -O2 x.ll"),
        THIN_LTO_CRASH,
        &parsed(THIN_LTO_CRASH)
    ));
}

#[test]
fn save_temps_goes_through_the_driver_to_the_linker() {
    assert_eq!(
        save_temps_args(&cmd("clang++ -flto=thin a.o b.o -o app")),
        ["-Wl,-plugin-opt=save-temps", "-Wl,-plugin-opt=jobs=1"]
    );
    assert_eq!(
        save_temps_args(&cmd("ld.lld a.o -o app")),
        ["-plugin-opt=save-temps", "-plugin-opt=jobs=1"]
    );
}

#[test]
fn the_crashing_module_is_the_innermost_one_named() {
    assert_eq!(
        crashing_module(&parsed(FULL_LTO_CRASH)).as_deref(),
        Some("ld-temp.o")
    );
    assert_eq!(
        crashing_module(&parsed(THIN_LTO_CRASH)).as_deref(),
        Some("/tmp/s/in/0-t.o")
    );
    let none = THIN_LTO_CRASH.replace(" on module '/tmp/s/in/0-t.o'", "");
    assert_eq!(crashing_module(&parsed(&none)), None);
}

fn names(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

#[test]
fn full_lto_codegen_crash_takes_the_precodegen_module() {
    let files = names(&[
        "/s/out/a.out.0.0.preopt.bc",
        "/s/out/a.out.0.2.internalize.bc",
        "/s/out/a.out.0.4.opt.bc",
        "/s/out/a.out.0.5.precodegen.bc",
    ]);
    let s = pick_saved(&files, "/s/out/a.out", Some("ld-temp.o")).unwrap();
    assert_eq!(
        (s.file.as_str(), s.lto, s.step),
        ("/s/out/a.out.0.5.precodegen.bc", Lto::Full, Step::Codegen)
    );
    // The optimizer crashed: no precodegen module was written.
    let s = pick_saved(&files[..2], "/s/out/a.out", Some("ld-temp.o")).unwrap();
    assert_eq!(
        (s.file.as_str(), s.step),
        ("/s/out/a.out.0.2.internalize.bc", Step::Optimizer)
    );
    assert_eq!(
        pick_saved(&files[..1], "/s/out/a.out", Some("ld-temp.o")),
        None
    );
}

#[test]
fn a_thin_backend_crash_takes_its_own_module() {
    let files = names(&[
        "/s/out/a.out.0.0.preopt.bc",
        "/s/in/0-a.o.3.import.bc",
        "/s/in/0-a.o.5.precodegen.bc",
        "/s/in/1-b.o.3.import.bc",
        "/s/in/1-b.o.5.precodegen.bc",
    ]);
    let s = pick_saved(&files, "/s/out/a.out", Some("/s/in/0-a.o")).unwrap();
    assert_eq!(
        (s.file.as_str(), s.lto, s.step),
        ("/s/in/0-a.o.5.precodegen.bc", Lto::Thin, Step::Codegen)
    );
    let s = pick_saved(&files[..4], "/s/out/a.out", Some("/s/in/1-b.o")).unwrap();
    assert_eq!(
        (s.file.as_str(), s.step),
        ("/s/in/1-b.o.3.import.bc", Step::Optimizer)
    );
}

#[test]
fn without_a_module_name_the_newest_step_file_decides() {
    let files = names(&[
        "/s/in/0-a.o.3.import.bc",
        "/s/in/0-a.o.4.opt.bc",
        "/s/in/0-a.o.5.precodegen.bc",
        "/s/in/1-b.o.3.import.bc",
    ]);
    let s = pick_saved(&files, "/s/out/a.out", None).unwrap();
    assert_eq!(
        (s.file.as_str(), s.lto, s.step),
        ("/s/in/1-b.o.3.import.bc", Lto::Thin, Step::Optimizer)
    );
    let s = pick_saved(&files[..3], "/s/out/a.out", None).unwrap();
    assert_eq!(
        (s.file.as_str(), s.step),
        ("/s/in/0-a.o.5.precodegen.bc", Step::Codegen)
    );
    let full = names(&[
        "/s/out/a.out.0.0.preopt.bc",
        "/s/out/a.out.0.2.internalize.bc",
        "/s/out/a.out.resolution.txt",
    ]);
    let s = pick_saved(&full, "/s/out/a.out", None).unwrap();
    assert_eq!((s.lto, s.step), (Lto::Full, Step::Optimizer));
    assert_eq!(
        pick_saved(&names(&["/s/out/a.out"]), "/s/out/a.out", None),
        None
    );
}

fn args(line: &str) -> Vec<String> {
    shlex::split(line).unwrap()
}

#[test]
fn lto_options_come_from_the_linker_line() {
    let o = lto_options(&args(
        "-m elf_x86_64 -shared -o a.so -plugin-opt=mcpu=x86-64 -plugin-opt=O1 \
         -plugin-opt=-enable-foo --lto-CGO3 -mllvm -bar=1 a.o",
    ));
    assert_eq!(
        o,
        LtoOptions {
            opt_level: Some(1),
            codegen_level: Some(3),
            mcpu: Some("x86-64".into()),
            llvm_args: vec!["-enable-foo".into(), "-bar=1".into()],
            pic: true,
            lld: false,
        }
    );
    let o = lto_options(&args("--lto-O3 -pie --no-pie a.o"));
    assert_eq!((o.opt_level, o.pic), (Some(3), false));
}

#[test]
fn the_linker_line_is_found_in_a_listing() {
    let listing = "Debian clang version 19.1.7\nTarget: x86_64-pc-linux-gnu\n \
        \"/usr/lib/llvm-19/bin/ld.lld\" \"--hash-style=gnu\" \"-shared\" \"-o\" \"a.so\" \"-plugin-opt=O1\" \"a.o\"\n";
    let line = linker_line(listing).unwrap();
    assert_eq!(line[0], "/usr/lib/llvm-19/bin/ld.lld");
    assert_eq!(line.last().unwrap(), "a.o");
    assert_eq!(linker_line(" \"/usr/bin/clang-19\" \"-cc1\"\n"), None);
}

#[test]
fn the_ir_command_runs_the_crashing_step() {
    let codegen = Saved {
        file: "/s/out/a.out.0.5.precodegen.bc".into(),
        lto: Lto::Full,
        step: Step::Codegen,
    };
    let o = lto_options(&args("-shared -plugin-opt=O1 -plugin-opt=mcpu=x86-64 a.o"));
    assert_eq!(
        ir_command("/usr/lib/llvm-19/bin/", &codegen, &o, "m.bc").argv(),
        args("/usr/lib/llvm-19/bin/llc -O1 -mcpu=x86-64 -relocation-model=pic -o /dev/null m.bc")
    );
    // lld generates code at -O2 at least, whatever the LTO level; the gold plugin does not.
    let lld = LtoOptions {
        lld: true,
        ..o.clone()
    };
    assert_eq!(ir_command("/b", &codegen, &lld, "m.bc").args[0], "-O2");
    let o3 = LtoOptions {
        lld: true,
        opt_level: Some(3),
        ..LtoOptions::default()
    };
    assert_eq!(ir_command("/b", &codegen, &o3, "m.bc").args[0], "-O3");
    let optimizer = Saved {
        file: "/s/in/0-a.o.3.import.bc".into(),
        lto: Lto::Thin,
        step: Step::Optimizer,
    };
    assert_eq!(
        ir_command("/l/bin", &optimizer, &LtoOptions::default(), "m.bc").argv(),
        args("/l/bin/opt -passes=thinlto<O2> -disable-output m.bc")
    );
}

#[test]
fn inputs_are_told_apart_by_their_first_bytes() {
    assert_eq!(input_kind(b"BC\xC0\xDE\x35\x14"), "bitcode");
    assert_eq!(input_kind(b"\x7fELF\x02\x01"), "object");
    assert_eq!(input_kind(b"!<arch>\n"), "archive");
    assert_eq!(input_kind(b"INPUT(-lfoo)\n"), "linker-script");
    assert_eq!(input_kind(b"\x00\xff\xfe"), "other");
}

/// An `ar` archive of the given members (BSD-less GNU layout, no symbol table).
fn archive(members: &[(&str, &[u8])]) -> Vec<u8> {
    let mut a = b"!<arch>\n".to_vec();
    for (name, data) in members {
        let header = format!(
            "{:<16}{:<12}{:<6}{:<6}{:<8}{:<10}`\n",
            format!("{name}/"),
            0,
            0,
            0,
            644,
            data.len()
        );
        a.extend_from_slice(header.as_bytes());
        a.extend_from_slice(data);
        if data.len() % 2 == 1 {
            a.push(b'\n');
        }
    }
    a
}

#[test]
fn an_archive_counts_its_bitcode_members() {
    let a = archive(&[
        ("a.o", b"BC\xC0\xDE\x01"),
        ("b.o", b"\x7fELF\x02\x01\x01\x00"),
        ("c.o", &[0xDE, 0xC0, 0x17, 0x0B, 0, 0]),
    ]);
    assert_eq!(archive_members(&a), Some((3, 2)));
    assert_eq!(archive_members(b"!<arch>\n"), Some((0, 0)));
    assert_eq!(archive_members(b"not an archive"), None);
}

#[test]
fn an_offload_link_passes_save_temps_to_its_device_linker_too() {
    let args = save_temps_args(&cmd(
        "clang-19 --hip-link -fgpu-rdc --offload-arch=gfx600 -fuse-ld=lld k.o -o a.so",
    ));
    assert_eq!(
        args,
        [
            "-Wl,-plugin-opt=save-temps",
            "-Wl,-plugin-opt=jobs=1",
            "-Xoffload-linker",
            "-plugin-opt=save-temps",
            "-Xoffload-linker",
            "-plugin-opt=jobs=1"
        ]
    );
}

#[test]
fn the_crashing_linker_is_read_from_the_program_line() {
    let device = FULL_LTO_CRASH
        .replace(
            "/usr/lib/llvm-19/bin/ld.lld --hash-style=gnu -m elf_x86_64",
            "/usr/lib/llvm-19/bin/lld -flavor gnu -m elf64_amdgpu",
        )
        .replace("mcpu=x86-64", "mcpu=gfx600");
    let argv = crashed_linker_argv(&parsed(&device)).unwrap();
    assert_eq!(argv[..3], ["/usr/lib/llvm-19/bin/lld", "-flavor", "gnu"]);
    assert_eq!(lto_options(&argv[1..]).mcpu.as_deref(), Some("gfx600"));
    assert_eq!(crashed_linker_argv(&parsed(THIN_LTO_CRASH)), None);
    let cc1 = FULL_LTO_CRASH.replace("/usr/lib/llvm-19/bin/ld.lld", "/usr/bin/clang-19");
    assert_eq!(crashed_linker_argv(&parsed(&cc1)), None);
}

#[test]
fn a_device_links_full_lto_files_are_named_after_its_temporary_output() {
    let files = names(&[
        "/s/out/a.out.0.0.preopt.bc",
        "/s/tmp/a-gfx600-1234.out.0.2.internalize.bc",
        "/s/tmp/a-gfx600-1234.out.0.5.precodegen.bc",
    ]);
    let s = pick_saved(&files, "/s/out/a.out", Some("ld-temp.o")).unwrap();
    assert_eq!(
        (s.file.as_str(), s.lto, s.step),
        (
            "/s/tmp/a-gfx600-1234.out.0.5.precodegen.bc",
            Lto::Full,
            Step::Codegen
        )
    );
}

#[test]
fn the_offload_wrappers_post_link_and_post_opt_modules_are_full_lto_steps() {
    assert!(is_offload_wrapper(
        "/usr/lib/llvm-19/bin/clang-linker-wrapper"
    ));
    assert!(!is_offload_wrapper("ld.lld"));
    let files = names(&[
        "/s/cwd/a.out.amdgcn-amd-amdhsa.gfx600.postlink.bc",
        "/s/cwd/a.out.amdgcn-amd-amdhsa.gfx600.postopt.bc",
    ]);
    let s = pick_saved(&files, "/s/out/a.out", Some("ld-temp.o")).unwrap();
    assert_eq!((s.lto, s.step), (Lto::Full, Step::Codegen));
    assert!(s.file.ends_with(".postopt.bc"));
    let s = pick_saved(&files[..1], "/s/out/a.out", Some("ld-temp.o")).unwrap();
    assert_eq!((s.lto, s.step), (Lto::Full, Step::Optimizer));
}

#[test]
fn a_links_own_side_outputs_are_dropped_from_its_reruns() {
    let c = cmd(
        "clang-19 -flto=thin -fuse-ld=lld -Wl,-Map=app.map,--gc-sections \
         -Wl,--dependency-file,app.d -Xlinker --thinlto-cache-dir=cache -Xlinker -z \
         -Xlinker defs -Wl,--thinlto-index-only a.o -o app",
    );
    assert_eq!(
        without_linker_side_outputs(&c).argv(),
        args("clang-19 -flto=thin -fuse-ld=lld -Wl,--gc-sections -Xlinker -z -Xlinker defs a.o -o app")
    );
    let direct = cmd("ld.lld -Map app.map --why-extract=w.txt -shared a.o -o app");
    assert_eq!(
        without_linker_side_outputs(&direct).argv(),
        args("ld.lld -shared a.o -o app")
    );
}

#[test]
fn response_files_and_libraries_found_through_l_become_inputs() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("objs.rsp"), "a.o 'b c.o'\n-lm").unwrap();
    std::fs::create_dir(dir.path().join("lib")).unwrap();
    std::fs::write(dir.path().join("lib/libk.a"), b"!<arch>\n").unwrap();
    let c = cmd("clang -flto @objs.rsp @missing.rsp -Llib -lk -l k -lm -o app");
    let expanded = expand_response_files(&c, dir.path());
    assert_eq!(
        expanded.args,
        args("-flto a.o 'b c.o' -lm @missing.rsp -Llib -lk -l k -lm -o app")
    );
    let named = with_libraries_named(&expanded, dir.path());
    let lib = dir.path().join("lib/libk.a").to_string_lossy().into_owned();
    let mut want = args("-flto a.o 'b c.o' -lm @missing.rsp -Llib");
    want.extend([lib.clone(), lib]);
    want.extend(args("-lm -o app"));
    assert_eq!(named.args, want);
}

#[test]
fn save_temps_files_rank_by_their_step() {
    assert!(step_rank("/s/in/0-b.o.3.import.bc") > step_rank("/s/in/1-a.o.2.internalize.bc"));
    assert!(step_rank("/s/out/a.out.0.5.precodegen.bc") > step_rank("/s/in/0-a.o.4.opt.bc"));
    assert_eq!(step_rank("/s/out/a.out.resolution.txt"), 0);
}
