//! The symbolizer against the real libraries of the installed compilers.
//!
//! Crashes are made live (`#pragma clang __debug crash`) by the installed clang, and its
//! libraries are found the way the loader finds them (the compiler's `DT_NEEDED` and
//! `DT_RUNPATH`, then the default directories): which `/usr/lib/llvm-N/lib` symlinks exist
//! depends on the Debian package set, and a recorded log's offsets belong to the build that
//! printed it. The recorded samples in `tests/fixtures/samples` are used only to show that a
//! log is never named from a build other than its own.
// Most of these run Debian's clang and llvm-symbolizer: the system tier only. Their helpers
// are unused without it.
#![cfg_attr(not(feature = "system-tests"), allow(dead_code, unused_imports))]

use super::*;
use crate::crash::{parse, CrashKind, ExitInfo, Family, Frame};
use crate::exec::{self, Cmd};

const CLANG14: &str = "/usr/lib/llvm-14/bin/clang";
const CLANG16: &str = "/usr/lib/llvm-16/bin/clang";
const CLANG19: &str = "/usr/lib/llvm-19/bin/clang";
/// llvm-19's symbolizer (`scripts/setup` installs `llvm-19`) reads any version's libraries.
const SYMBOLIZER: &str = "/usr/lib/llvm-19/bin/llvm-symbolizer";
/// The loader's default directories on x86-64 Debian (after `DT_RUNPATH`).
const DEFAULT_DIRS: [&str; 6] = [
    "/lib/x86_64-linux-gnu",
    "/usr/lib/x86_64-linux-gnu",
    "/lib64",
    "/usr/lib64",
    "/lib",
    "/usr/lib",
];
const PRAGMA_CRASH: &str = "void before(void) {\n#pragma clang __debug crash\n}\n";

fn samples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/samples")
}

/// The file the loader maps for `name`, a `DT_NEEDED` entry of `compiler`: its `DT_RUNPATH`
/// (`$ORIGIN` is the executable's real directory), then the default directories; symlinks
/// resolved.
fn loaded_library(compiler: &str, name: &str) -> PathBuf {
    let exe = std::fs::canonicalize(compiler)
        .unwrap_or_else(|e| panic!("{compiler}: {e} (scripts/setup installs it)"));
    let info = crate::elf::closure::dynamic_info(&std::fs::read(&exe).unwrap()).unwrap();
    assert!(
        info.needed.iter().any(|n| n == name),
        "{compiler} needs {:?}",
        info.needed
    );
    let origin = exe.parent().unwrap().to_string_lossy().into_owned();
    info.runpath
        .iter()
        .map(|d| d.replace("${ORIGIN}", &origin).replace("$ORIGIN", &origin))
        .chain(DEFAULT_DIRS.iter().map(|d| d.to_string()))
        .map(|d| Path::new(&d).join(name))
        .find(|p| p.is_file())
        .and_then(|p| p.canonicalize().ok())
        .unwrap_or_else(|| panic!("the loader finds no {name} for {compiler}"))
}

fn libllvm19() -> PathBuf {
    loaded_library(CLANG19, "libLLVM.so.19.1")
}

/// `#pragma clang __debug crash` compiled now by `compiler`, printed through llvm-symbolizer
/// (`symbolized`) or in the fallback format of its version.
fn live_pragma_crash(compiler: &str, symbolized: bool) -> Crash {
    assert!(
        Path::new(SYMBOLIZER).is_file(),
        "{SYMBOLIZER} is missing: scripts/setup installs llvm-19"
    );
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("pragma_crash.c"), PRAGMA_CRASH).unwrap();
    let cmd = Cmd::new(compiler)
        .args([
            "-fno-crash-diagnostics",
            "-c",
            "pragma_crash.c",
            "-o",
            "/dev/null",
        ])
        .cwd(dir.path());
    let cmd = if symbolized {
        cmd.env("LLVM_SYMBOLIZER_PATH", SYMBOLIZER)
    } else {
        cmd.env("LLVM_DISABLE_SYMBOLIZATION", "1")
    };
    let out = exec::run(&cmd).unwrap_or_else(|e| panic!("{compiler}: {e}"));
    let text = out.stderr_text();
    parse(&text, ExitInfo::default()).unwrap_or_else(|| panic!("{compiler} did not crash:\n{text}"))
}

fn crash_with(frames: Vec<Frame>) -> Crash {
    Crash {
        family: Family::Clang,
        kind: CrashKind::Segfault,
        signal: Some(11),
        message: None,
        tool: None,
        in_process: None,
        cc1_exit_code: None,
        program_arguments: None,
        pretty_stack: vec![],
        frames,
        gcc_pass: None,
        reproducer_files: vec![],
        source_errors: 0,
    }
}

fn unnamed(module: &Path, offset: u64) -> Frame {
    Frame {
        module: Some(module.to_string_lossy().into_owned()),
        offset: Some(offset),
        ..Frame::default()
    }
}

/// `llvm::sys::PrintStackTrace`'s `(st_value, st_size)` in `lib`, read with `object` itself.
fn print_stack_trace(lib: &Path) -> (u64, u64) {
    let data = std::fs::read(lib).unwrap();
    let file = object::File::parse(&*data).unwrap();
    let sym = file
        .dynamic_symbols()
        .find(|s| s.name() == Ok("_ZN4llvm3sys15PrintStackTraceERNS_11raw_ostreamEi"))
        .unwrap();
    (sym.address(), sym.size())
}

fn module_is(f: &Frame, lib: &str) -> bool {
    f.module.as_deref().is_some_and(|m| m.contains(lib))
}

/// Looks an exported function up in the real libLLVM with `object` itself, then names a
/// frame pointing into the middle of it.
#[test]
#[cfg(feature = "system-tests")]
fn names_an_exported_function_of_real_libllvm() {
    let lib = libllvm19();
    let (addr, size) = print_stack_trace(&lib);
    assert!(size > 0x10);
    let mut crash = crash_with(vec![
        unnamed(&lib, addr + 0x10),
        unnamed(&lib, addr + size), // one past the end
    ]);
    let symbolizer = Symbolizer::new(vec![]);
    assert_eq!(symbolizer.symbolize(&mut crash), 1);
    let f = &crash.frames[0];
    assert_eq!(
        f.symbol.as_deref(),
        Some("llvm::sys::PrintStackTrace(llvm::raw_ostream&, int)")
    );
    assert!(f.symbolized_by_icepick);
    assert_ne!(
        crash.frames[1].symbol.as_deref(),
        Some("llvm::sys::PrintStackTrace(llvm::raw_ostream&, int)")
    );
}

/// The symbolized print of a live crash with its names removed: every frame llvm-symbolizer
/// named gets the same name from icepick, and every frame it left unnamed stays unnamed (a
/// stripped local function, not its exported neighbour).
#[test]
#[cfg(feature = "system-tests")]
fn agrees_with_llvm_symbolizer_on_the_pragma_crash() {
    for compiler in [CLANG14, CLANG16, CLANG19] {
        let printed = live_pragma_crash(compiler, true);
        let mut stripped = printed.clone();
        for f in &mut stripped.frames {
            f.symbol = None;
        }
        let symbolizer = Symbolizer::new(vec![]);
        let named = symbolizer.symbolize(&mut stripped);
        let mut checked = 0;
        for (p, s) in printed.frames.iter().zip(&stripped.frames) {
            let module = p.module.as_deref().unwrap_or("");
            if module.is_empty() || module.contains("libc.so") {
                continue; // file:line frames (libc debug info), libc without .dynsym names
            }
            let want = p.symbol.as_deref().map(name_key);
            let got = s.symbol.as_deref().map(name_key);
            assert_eq!(got, want, "{compiler} frame #{}", p.index);
            checked += 1;
        }
        assert!(
            checked > 25 && named > 20,
            "{compiler}: {checked} checked, {named} named"
        );
    }
}

/// A local function llvm-symbolizer could not name stays unnamed, although an exported
/// function starts below it (what a nearest-below lookup would print).
#[test]
#[cfg(feature = "system-tests")]
fn stripped_local_is_not_named_after_its_neighbour() {
    let printed = live_pragma_crash(CLANG14, true);
    let lib = loaded_library(CLANG14, "libclang-cpp.so.14");
    let locals: Vec<u64> = printed
        .frames
        .iter()
        .filter(|f| module_is(f, "libclang-cpp.so.14") && f.symbol.is_none())
        .filter_map(|f| f.offset)
        .collect();
    assert!(!locals.is_empty(), "{:#?}", printed.frames);
    let symbolizer = Symbolizer::new(vec![]);
    for &offset in &locals {
        let mut crash = crash_with(vec![unnamed(&lib, offset)]);
        assert_eq!(symbolizer.symbolize(&mut crash), 0, "+{offset:#x}");
        assert_eq!(crash.frames[0].symbol, None);
        let table = symbolizer.table(&lib.to_string_lossy()).unwrap();
        let table = table.get().unwrap().as_ref().unwrap();
        let below = table.symbols.partition_point(|s| s.start <= offset);
        assert!(below > 0, "no exported symbol below +{offset:#x}");
    }
}

/// clang-19 without llvm-symbolizer (dladdr format): bare basenames found through the search
/// dirs, load bases recovered from the named frames.
#[test]
#[cfg(feature = "system-tests")]
fn dladdr_frames_via_search_dirs() {
    let mut crash = live_pragma_crash(CLANG19, false);
    let printed = live_pragma_crash(CLANG19, true);
    assert_eq!(
        crash.frames[5].module.as_deref(),
        Some("libclang-cpp.so.19.1")
    );
    for f in &mut crash.frames {
        if f.index == 6 || f.index == 7 {
            f.symbol = None;
        }
    }
    let lib_dir = loaded_library(CLANG19, "libclang-cpp.so.19.1")
        .parent()
        .unwrap()
        .to_path_buf();
    let symbolizer = Symbolizer::new(vec!["/nonexistent".into(), lib_dir]);
    let named = symbolizer.symbolize(&mut crash);
    assert!(named >= 2, "{named}");
    for i in [6, 7] {
        assert_eq!(
            crash.frames[i].symbol.as_deref().map(name_key),
            printed.frames[i].symbol.as_deref().map(name_key)
        );
        assert_eq!(crash.frames[i].offset, printed.frames[i].offset);
    }
    // Frame 4 is a local function in both prints.
    assert_eq!(printed.frames[4].symbol, None);
    assert_eq!(crash.frames[4].offset, printed.frames[4].offset);
    assert_eq!(crash.frames[4].symbol, None);
}

/// The same live crash, its `libclang-cpp` frames pointed at another library (clang 14's
/// `libclang-cpp`, a real ELF file whose code also spans those offsets) and every other name
/// removed: the names left in the log do not match that file, so none is given.
#[test]
#[cfg(feature = "system-tests")]
fn frames_are_not_named_from_a_library_that_did_not_crash() {
    let printed = live_pragma_crash(CLANG19, true);
    let other = loaded_library(CLANG14, "libclang-cpp.so.14");
    let mut crash = printed.clone();
    let mut removed = 0;
    for f in &mut crash.frames {
        if module_is(f, "libclang-cpp.so.19.1") {
            f.module = Some(other.to_string_lossy().into_owned());
            if f.symbol.is_some() && f.index % 2 == 0 {
                f.symbol = None;
                removed += 1;
            }
        }
    }
    assert!(removed >= 5, "{removed}");
    let before = crash.clone();
    let symbolizer = Symbolizer::new(vec![]);
    symbolizer.symbolize(&mut crash);
    for (b, a) in before.frames.iter().zip(&crash.frames) {
        if b.module.as_deref() == Some(&*other.to_string_lossy()) {
            assert_eq!(a, b, "frame #{} named from {}", a.index, other.display());
        }
    }
    // The same crash against its own library names every removed frame again.
    let mut own = printed.clone();
    for f in &mut own.frames {
        if module_is(f, "libclang-cpp.so.19.1") && f.symbol.is_some() && f.index % 2 == 0 {
            f.symbol = None;
        }
    }
    assert_eq!(symbolizer.symbolize(&mut own), removed);
    assert_eq!(
        own.frames
            .iter()
            .map(|f| f.symbol.as_deref().map(name_key))
            .collect::<Vec<_>>(),
        printed
            .frames
            .iter()
            .map(|f| f.symbol.as_deref().map(name_key))
            .collect::<Vec<_>>()
    );
}

/// The dladdr print names modules by basename only: a search directory whose
/// `libLLVM.so.19.1` is really clang 16's libLLVM gives no load base the named frames agree
/// on, so no frame gets an offset or a name from it.
#[test]
#[cfg(feature = "system-tests")]
fn dladdr_basename_resolving_to_another_build_names_nothing() {
    let mut crash = live_pragma_crash(CLANG19, false);
    let dir = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(
        loaded_library(CLANG16, "libLLVM-16.so.1"),
        dir.path().join("libLLVM.so.19.1"),
    )
    .unwrap();
    for f in &mut crash.frames {
        if f.module.as_deref() != Some("libLLVM.so.19.1") {
            f.module = None; // only libLLVM is looked at here
        }
    }
    let before = crash.clone();
    let symbolizer = Symbolizer::new(vec![dir.path().to_path_buf()]);
    assert_eq!(symbolizer.symbolize(&mut crash), 0);
    assert_eq!(crash, before);
}

/// An offset past the end of the file's code means the file is not the module the log came
/// from: none of its frames is named, not even one that would fall in an exported function.
#[test]
#[cfg(feature = "system-tests")]
fn offsets_outside_the_files_code_name_nothing() {
    let lib = libllvm19();
    let (addr, _) = print_stack_trace(&lib);
    let len = std::fs::metadata(&lib).unwrap().len();
    let mut crash = crash_with(vec![
        unnamed(&lib, addr + 0x10),
        unnamed(&lib, len + 0x1000),
    ]);
    let before = crash.clone();
    assert_eq!(Symbolizer::new(vec![]).symbolize(&mut crash), 0);
    assert_eq!(crash, before);
}

/// A recorded log (another machine's print of the pragma crash) is named only from the build
/// that printed it. Which library is that build is checked first, from a live crash of the
/// installed compiler: the first named frame of each library in the recorded log (crash
/// machinery or the pragma handler, the same call site whatever the source) must be at the
/// same offset in the live print. Then every removed name of that library comes back; for a
/// library of another build, none of its frames gets any name.
#[test]
#[cfg(feature = "system-tests")]
fn recorded_logs_are_named_only_from_the_build_that_printed_them() {
    for (compiler, version, libs) in [
        (
            CLANG14,
            "clang-14",
            ["libLLVM-14.so.1", "libclang-cpp.so.14"],
        ),
        (
            CLANG16,
            "clang-16",
            ["libLLVM-16.so.1", "libclang-cpp.so.16"],
        ),
        (
            CLANG19,
            "clang-19",
            ["libLLVM.so.19.1", "libclang-cpp.so.19.1"],
        ),
    ] {
        let text =
            std::fs::read_to_string(samples().join(version).join("crash_sym.stderr")).unwrap();
        let recorded = parse(&text, ExitInfo::default()).unwrap();
        let live = live_pragma_crash(compiler, true);
        let same_build: Vec<bool> = libs
            .iter()
            .map(|lib| {
                let first = recorded
                    .frames
                    .iter()
                    .find(|f| module_is(f, lib) && f.symbol.is_some())
                    .unwrap();
                live.frames.iter().any(|f| {
                    module_is(f, lib) && f.symbol == first.symbol && f.offset == first.offset
                })
            })
            .collect();
        let mut crash = recorded.clone();
        let mut removed = [0, 0];
        for f in &mut crash.frames {
            if let Some(l) = libs.iter().position(|l| module_is(f, l)) {
                if f.symbol.is_some() && f.index % 2 == 1 {
                    f.symbol = None;
                    removed[l] += 1;
                }
            }
        }
        let dirs = libs
            .iter()
            .map(|l| loaded_library(compiler, l).parent().unwrap().to_path_buf())
            .collect();
        Symbolizer::new(dirs).symbolize(&mut crash);
        for (l, lib) in libs.iter().enumerate() {
            if !same_build[l] {
                eprintln!("{version}: the installed {lib} is not the build that recorded the sample; checking only that its frames get no names");
            }
            let mut named = 0;
            for (r, c) in recorded.frames.iter().zip(&crash.frames) {
                if !module_is(r, lib) {
                    continue;
                }
                if same_build[l] {
                    assert_eq!(
                        c.symbol.as_deref().map(name_key),
                        r.symbol.as_deref().map(name_key),
                        "{version} frame #{}",
                        r.index
                    );
                } else {
                    assert!(
                        !c.symbolized_by_icepick,
                        "{version} frame #{} named {:?} from another build of {lib}",
                        r.index, c.symbol
                    );
                }
                named += usize::from(c.symbolized_by_icepick);
            }
            if same_build[l] {
                assert_eq!(named, removed[l], "{version} {lib}");
            }
        }
    }
}

#[test]
fn last_identifiers() {
    let rows = [
        (
            "clang::Preprocessor::HandlePragmaDirective(clang::PragmaIntroducer)",
            Some("HandlePragmaDirective"),
        ),
        (
            "llvm::SmallVector<int, 4u>::grow(unsigned long) const",
            Some("grow"),
        ),
        ("std::vector<int>::push_back<int&>(int&)", Some("push_back")),
        ("_start", Some("_start")),
        ("llvm::APInt::operator<<=(unsigned int)", None),
        ("(anonymous namespace)::f()", Some("f")),
    ];
    for (name, want) in rows {
        assert_eq!(last_identifier(name), want, "{name}");
    }
}

#[test]
fn unknown_modules_are_left_alone() {
    let mut crash = crash_with(vec![
        unnamed(Path::new("/nonexistent/libfoo.so"), 0x10),
        unnamed(Path::new("libbar.so.1"), 0x10),
        unnamed(Path::new("/etc/hostname"), 0x10),
    ]);
    let before = crash.clone();
    let symbolizer = Symbolizer::new(vec!["/etc".into()]);
    assert_eq!(symbolizer.symbolize(&mut crash), 0);
    assert_eq!(crash, before);
}

#[test]
#[cfg(feature = "system-tests")]
fn shared_across_threads() {
    let lib = libllvm19();
    let (addr, _) = print_stack_trace(&lib);
    let symbolizer = Symbolizer::new(vec![]);
    std::thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| {
                let mut crash = crash_with(vec![unnamed(&lib, addr + 0x10)]);
                assert_eq!(symbolizer.symbolize(&mut crash), 1);
            });
        }
    });
    assert_eq!(symbolizer.tables.lock().unwrap().len(), 1);
}
