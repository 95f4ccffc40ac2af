//! What a link-time crash is, read from its command and its output: whether the linker's LTO
//! step crashed, which module it was working on, which of the linker's save-temps files holds
//! that module as the crashing step saw it, and the `llc`/`opt` command that runs the same
//! step on it.
//!
//! In an LTO build the compile of each file only writes bitcode; the linker runs LLVM's
//! optimizer and code generator on the merged module (full LTO) or on each module after
//! importing (ThinLTO). `-plugin-opt=save-temps` (lld, and the gold plugin that bfd and gold
//! load) writes those modules at each step: `OUT.0.2.internalize.bc` and
//! `OUT.0.5.precodegen.bc` for full LTO, `INPUT.3.import.bc` and `INPUT.5.precodegen.bc` for
//! each ThinLTO backend. A crash in the code generator reproduces with `llc` on the
//! pre-codegen module; one in the optimizer with `opt -passes=lto<On>` (`thinlto<On>`) on the
//! module before it. Pure: the flow that runs the link is `capture::link`.

use std::path::{Path, PathBuf};

use crate::command::CompilerCommand;
use crate::crash::Crash;

/// The LTO flavour of the crashing step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lto {
    Full,
    Thin,
}

impl Lto {
    pub fn name(self) -> &'static str {
        match self {
            Lto::Full => "full",
            Lto::Thin => "thin",
        }
    }
}

/// Which LTO step crashed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// The code generator: `llc` on the pre-codegen module.
    Codegen,
    /// The optimizer: `opt` with the LTO pipeline on the module before it.
    Optimizer,
}

impl Step {
    pub fn name(self) -> &'static str {
        match self {
            Step::Codegen => "codegen",
            Step::Optimizer => "optimizer",
        }
    }
}

/// The save-temps file holding the crashing step's module.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Saved {
    pub file: String,
    pub lto: Lto,
    pub step: Step,
}

/// The name full LTO gives its merged module.
const FULL_LTO_MODULE: &str = "ld-temp.o";

/// The save-temps suffixes: full LTO's after the output's name, ThinLTO's after each input's.
const FULL_CODEGEN: &str = ".0.5.precodegen.bc";
const FULL_OPTIMIZER: &str = ".0.2.internalize.bc";
const THIN_CODEGEN: &str = ".5.precodegen.bc";
const THIN_OPTIMIZER: &str = ".3.import.bc";
/// clang-linker-wrapper's (after the output's name, the device triple and arch).
const WRAPPER_CODEGEN: &str = ".postopt.bc";
const WRAPPER_OPTIMIZER: &str = ".postlink.bc";
/// Every step's file; the newest of them says how far LTO got.
const STEP_FILES: [&str; 6] = [
    ".0.preopt.bc",
    ".1.promote.bc",
    ".2.internalize.bc",
    ".3.import.bc",
    ".4.opt.bc",
    ".5.precodegen.bc",
];

/// The LTO step a save-temps file is of (0 for the first, higher later; 0 for any other
/// file), to order files written within one clock tick.
pub fn step_rank(file: &str) -> usize {
    STEP_FILES
        .iter()
        .position(|s| file.ends_with(s))
        .map_or(0, |i| i + 1)
}

/// Whether `program` is a linker: `ld`, `ld.lld`, `ld.gold`, `ld.bfd`, `lld`, with or
/// without a version suffix (`ld.lld-19`) or a target prefix (`riscv64-linux-gnu-ld`).
pub fn is_linker(program: &str) -> bool {
    let name = program.rsplit('/').next().unwrap_or(program);
    let base = match name.rsplit_once('-') {
        Some((b, v)) if !v.is_empty() && v.chars().all(|c| c.is_ascii_digit() || c == '.') => b,
        _ => name,
    };
    let tool = base.rsplit('-').next().unwrap_or(base);
    matches!(tool, "ld" | "ld.lld" | "ld.gold" | "ld.bfd" | "lld")
}

/// Whether the crash is the linker's, not a compiler's: the command is a linker, or a clang
/// driver says its linker failed, or the crash's first pretty-stack line runs a linker.
pub fn is_link_crash(command: &CompilerCommand, stderr: &str, crash: &Crash) -> bool {
    if is_linker(&command.program) {
        return true;
    }
    if command.is_cc1() || command.llvm_tool().is_some() || command.is_gcc() {
        return false;
    }
    is_link_output(stderr, crash)
}

/// Whether a crash's output is a linker's: a clang driver says its linker failed, or the
/// crash's program line runs a linker.
pub fn is_link_output(stderr: &str, crash: &Crash) -> bool {
    let driver_says = stderr
        .lines()
        .any(|l| l.contains("error: linker command failed"));
    let stack_says = crash
        .program_arguments
        .as_deref()
        .and_then(|args| args.split_whitespace().next())
        .is_some_and(is_linker);
    driver_says || stack_says
}

/// The arguments that make the link keep every LTO module (`save-temps`) and run ThinLTO's
/// backends one at a time, so that the newest file is the crashing step's.
/// An offload link (`--hip-link`, `-fgpu-rdc`, an offload arch) also gets them for its
/// device link (`-Xoffload-linker`), which writes them beside its temporary output.
pub fn save_temps_args(command: &CompilerCommand) -> Vec<String> {
    plugin_args(command, &["-plugin-opt=save-temps", "-plugin-opt=jobs=1"])
}

/// The arguments that make the link run ThinLTO's backends one at a time: two backends that
/// crash at once garble each other's output.
pub fn one_backend_args(command: &CompilerCommand) -> Vec<String> {
    plugin_args(command, &["-plugin-opt=jobs=1"])
}

/// `opts` for the linker: as they are for a linker, through `-Wl,` for a driver, and also
/// through `-Xoffload-linker` for an offload link's device linker.
fn plugin_args(command: &CompilerCommand, opts: &[&str]) -> Vec<String> {
    if is_linker(&command.program) {
        return opts.iter().map(|o| o.to_string()).collect();
    }
    let mut args: Vec<String> = opts.iter().map(|o| format!("-Wl,{o}")).collect();
    if is_offload_link(command) {
        for o in opts {
            args.extend(["-Xoffload-linker".to_string(), o.to_string()]);
        }
    }
    args
}

/// A link with a device side: `--hip-link`, relocatable device code, or an offload arch.
fn is_offload_link(command: &CompilerCommand) -> bool {
    command.args.iter().any(|a| {
        a == "--hip-link"
            || a == "-fgpu-rdc"
            || a.starts_with("--offload-arch=")
            || a.starts_with("--cuda-gpu-arch=")
    })
}

/// The crashing linker's own command line, from the crash's program line (clang prints it
/// unquoted: split at spaces), when it names a linker.
pub fn crashed_linker_argv(crash: &Crash) -> Option<Vec<String>> {
    let line = crash.program_arguments.as_deref()?;
    let argv: Vec<String> = line.split_whitespace().map(str::to_string).collect();
    argv.first()
        .is_some_and(|p| is_linker(p) || is_offload_wrapper(p))
        .then_some(argv)
}

/// Whether `program` is LLVM's own linker (`ld.lld`, `lld`, `ld.lld-19`).
pub fn is_lld(program: &str) -> bool {
    let name = program.rsplit('/').next().unwrap_or(program);
    name.contains("lld")
}

/// clang's offload link wrapper (the new offload driver's), which runs the device code's
/// LTO in its own process and, with `--save-temps`, writes `OUT.<triple>.<arch>.postlink.bc`
/// (before the optimizer) and `.postopt.bc` (after it) into its working directory.
pub fn is_offload_wrapper(program: &str) -> bool {
    let name = program.rsplit('/').next().unwrap_or(program);
    name.starts_with("clang-linker-wrapper")
}

/// Linker options that write a file of their own (a map, a dependency file, a cache, the
/// LTO objects, ThinLTO's index and import files beside each input), with their value in the
/// next word or after `=`.
const LINKER_SIDE_OUTPUTS: [&str; 9] = [
    "-Map",
    "--Map",
    "--dependency-file",
    "--thinlto-cache-dir",
    "--lto-obj-path",
    "--why-extract",
    "--reproduce",
    "-plugin-opt=obj-path",
    "--plugin-opt=obj-path",
];
/// Flags that make a ThinLTO link write index or import files beside its inputs (and stop
/// before code generation).
const LINKER_SIDE_FLAGS: [&str; 6] = [
    "--thinlto-index-only",
    "--thinlto-emit-imports-files",
    "--thinlto-emit-index-files",
    "-plugin-opt=thinlto-index-only",
    "-plugin-opt=thinlto-emit-imports-files",
    "--plugin-opt=thinlto-index-only",
];

/// `cmd` without the linker options that write files of their own, in a linker's command
/// line or a driver's `-Wl,` and `-Xlinker` words: icepick's reruns of a link write nothing
/// but into scratch.
pub fn without_linker_side_outputs(cmd: &CompilerCommand) -> CompilerCommand {
    let mut args = Vec::with_capacity(cmd.args.len());
    let direct = is_linker(&cmd.program);
    let mut words = cmd.args.iter().peekable();
    while let Some(a) = words.next() {
        if let Some(list) = a.strip_prefix("-Wl,") {
            let kept = keep_linker_words(&list.split(',').map(str::to_string).collect::<Vec<_>>());
            if !kept.is_empty() {
                args.push(format!("-Wl,{}", kept.join(",")));
            }
        } else if a == "-Xlinker" {
            let Some(value) = words.next() else { break };
            if side_output(value).is_some() || LINKER_SIDE_FLAGS.contains(&value.as_str()) {
                // its value follows as another `-Xlinker VALUE`
                if side_output(value) == Some(true)
                    && words.peek().is_some_and(|w| *w == "-Xlinker")
                {
                    words.next();
                    words.next();
                }
                continue;
            }
            args.extend([a.clone(), value.clone()]);
        } else if direct {
            match side_output(a) {
                Some(true) => {
                    words.next();
                }
                Some(false) => {}
                None if LINKER_SIDE_FLAGS.contains(&a.as_str()) => {}
                None => args.push(a.clone()),
            }
        } else {
            args.push(a.clone());
        }
    }
    CompilerCommand {
        program: cmd.program.clone(),
        args,
    }
}

/// The words of one `-Wl,` list that do not ask for a side output.
fn keep_linker_words(words: &[String]) -> Vec<String> {
    let mut kept = Vec::new();
    let mut i = 0;
    while i < words.len() {
        match side_output(&words[i]) {
            Some(true) => i += 2,
            Some(false) => i += 1,
            None if LINKER_SIDE_FLAGS.contains(&words[i].as_str()) => i += 1,
            None => {
                kept.push(words[i].clone());
                i += 1;
            }
        }
    }
    kept
}

/// Whether `word` is a side-output option: `Some(true)` when its value is the next word,
/// `Some(false)` when it is joined (`-Map=x`); `None` otherwise.
fn side_output(word: &str) -> Option<bool> {
    LINKER_SIDE_OUTPUTS.iter().find_map(|o| {
        if word == *o {
            Some(true)
        } else {
            word.strip_prefix(o)
                .filter(|rest| rest.starts_with('='))
                .map(|_| false)
        }
    })
}

/// A response file bigger than this is left as it is.
const RESPONSE_FILE_MAX: u64 = 16 << 20;

/// `cmd` with each `@FILE` (a response file, as GN and Meson links use) replaced by the
/// words it holds, split as a shell would; one that cannot be read stays as it is.
pub fn expand_response_files(cmd: &CompilerCommand, cwd: &Path) -> CompilerCommand {
    let mut args = Vec::with_capacity(cmd.args.len());
    for a in &cmd.args {
        let words = a.strip_prefix('@').and_then(|f| {
            let path = cwd.join(f);
            let meta = std::fs::metadata(&path).ok()?;
            if !meta.is_file() || meta.len() > RESPONSE_FILE_MAX {
                return None;
            }
            shlex::split(&std::fs::read_to_string(path).ok()?)
        });
        match words {
            Some(w) => args.extend(w),
            None => args.push(a.clone()),
        }
    }
    CompilerCommand {
        program: cmd.program.clone(),
        args,
    }
}

/// `cmd` with each `-lNAME` whose `libNAME.a` is found in a `-L` directory replaced by that
/// archive's path: a library of bitcode members is an input like any other.
pub fn with_libraries_named(cmd: &CompilerCommand, cwd: &Path) -> CompilerCommand {
    let mut dirs: Vec<PathBuf> = Vec::new();
    let mut words = cmd.args.iter();
    while let Some(a) = words.next() {
        let d = if a == "-L" {
            words.next().cloned()
        } else {
            a.strip_prefix("-L").map(str::to_string)
        };
        if let Some(d) = d.filter(|d| !d.is_empty()) {
            dirs.push(cwd.join(d));
        }
    }
    let mut args = Vec::with_capacity(cmd.args.len());
    let mut words = cmd.args.iter().peekable();
    while let Some(a) = words.next() {
        let name = if a == "-l" {
            words.peek().map(|n| n.to_string())
        } else {
            a.strip_prefix("-l").map(str::to_string)
        };
        let found = name
            .filter(|n| !n.is_empty() && !n.starts_with(':'))
            .and_then(|n| {
                dirs.iter()
                    .map(|d| d.join(format!("lib{n}.a")))
                    .find(|p| p.is_file())
            });
        match found {
            Some(p) => {
                if a == "-l" {
                    words.next();
                }
                args.push(p.to_string_lossy().into_owned());
            }
            None => args.push(a.clone()),
        }
    }
    CompilerCommand {
        program: cmd.program.clone(),
        args,
    }
}

/// The module the crash names (`Running pass '…' on module 'X'.`), innermost last.
pub fn crashing_module(crash: &Crash) -> Option<String> {
    crash.pretty_stack.iter().rev().find_map(|e| {
        let rest = e.text.split(" on module '").nth(1)?;
        let end = rest.rfind('\'')?;
        Some(rest[..end].to_string())
    })
}

/// The file that holds the crashing step's module. `files` are every file the link wrote,
/// oldest first; `output` is the link's output path as given to it, and `module` the name
/// the crash gave the module, when it did.
pub fn pick_saved(files: &[String], output: &str, module: Option<&str>) -> Option<Saved> {
    let has = |f: &str| files.iter().any(|x| x == f);
    let found = |file: String, lto, step| has(&file).then_some(Saved { file, lto, step });
    // Full LTO's files are named after the linker's output: the link's own, or a device
    // link's temporary one (the newest such file then).
    let full = |suffix: &str, step| {
        found(format!("{output}{suffix}"), Lto::Full, step).or_else(|| {
            let f = files.iter().rev().find(|f| f.ends_with(suffix))?;
            Some(Saved {
                file: f.clone(),
                lto: Lto::Full,
                step,
            })
        })
    };
    match module {
        Some(m) if m == FULL_LTO_MODULE || m.ends_with("/ld-temp.o") => {
            full(FULL_CODEGEN, Step::Codegen)
                .or_else(|| full(WRAPPER_CODEGEN, Step::Codegen))
                .or_else(|| full(FULL_OPTIMIZER, Step::Optimizer))
                .or_else(|| full(WRAPPER_OPTIMIZER, Step::Optimizer))
        }
        Some(m) => found(format!("{m}{THIN_CODEGEN}"), Lto::Thin, Step::Codegen)
            .or_else(|| found(format!("{m}{THIN_OPTIMIZER}"), Lto::Thin, Step::Optimizer))
            .or_else(|| newest_step(files, output)),
        None => newest_step(files, output),
    }
}

/// Without a module name: the newest step file says where LTO stopped.
fn newest_step(files: &[String], output: &str) -> Option<Saved> {
    let newest = files
        .iter()
        .rev()
        .find(|f| STEP_FILES.iter().any(|s| f.ends_with(s)))?;
    let full = newest.starts_with(&format!("{output}.0."));
    let (lto, codegen_file, optimizer_file) = if full {
        let stem = format!("{output}.0");
        (
            Lto::Full,
            format!("{stem}.5.precodegen.bc"),
            format!("{stem}.2.internalize.bc"),
        )
    } else {
        let suffix = STEP_FILES.iter().find(|s| newest.ends_with(**s))?;
        let stem = &newest[..newest.len() - suffix.len()];
        (
            Lto::Thin,
            format!("{stem}{THIN_CODEGEN}"),
            format!("{stem}{THIN_OPTIMIZER}"),
        )
    };
    let codegen_done = newest.ends_with(".4.opt.bc") || newest.ends_with(".5.precodegen.bc");
    if codegen_done && files.contains(&codegen_file) {
        return Some(Saved {
            file: codegen_file,
            lto,
            step: Step::Codegen,
        });
    }
    files.contains(&optimizer_file).then_some(Saved {
        file: optimizer_file,
        lto,
        step: Step::Optimizer,
    })
}

/// The LTO settings a link passes its optimizer and code generator.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LtoOptions {
    /// `--lto-O`/`-plugin-opt=O` (2 when not given, as lld and the gold plugin default).
    pub opt_level: Option<u8>,
    /// `--lto-CGO` (the optimization level otherwise).
    pub codegen_level: Option<u8>,
    pub mcpu: Option<String>,
    /// LLVM options the link passes on (`-mllvm X`, `-plugin-opt=-X`).
    pub llvm_args: Vec<String>,
    /// A position-independent output (`-shared`, `-pie`).
    pub pic: bool,
    /// The linker is lld (whose code generator runs at `-O2` at least).
    pub lld: bool,
}

/// The code generator's level for LTO level `level` when the link gives none of its own: lld
/// never generates code below its default (`-O2`: `clamp(level, 2, 3)`); the gold plugin maps
/// the level as it is.
fn codegen_level(o: &LtoOptions, level: u8) -> u8 {
    if o.lld {
        level.clamp(2, 3)
    } else {
        level
    }
}

/// Reads the LTO settings from a linker's arguments (`linker_args` without the program;
/// `lld`: the linker is LLVM's own).
pub fn lto_options(linker_args: &[String]) -> LtoOptions {
    let mut o = LtoOptions::default();
    let mut args = linker_args.iter();
    while let Some(a) = args.next() {
        let plugin = a
            .strip_prefix("--plugin-opt=")
            .or_else(|| a.strip_prefix("-plugin-opt="));
        if let Some(p) = plugin {
            if let Some(level) = p.strip_prefix('O').and_then(|l| l.parse().ok()) {
                o.opt_level = Some(level);
            } else if let Some(cpu) = p.strip_prefix("mcpu=") {
                o.mcpu = Some(cpu.to_string());
            } else if p.starts_with('-') {
                o.llvm_args.push(p.to_string());
            }
        } else if let Some(level) = a.strip_prefix("--lto-O").and_then(|l| l.parse().ok()) {
            o.opt_level = Some(level);
        } else if let Some(level) = a.strip_prefix("--lto-CGO").and_then(|l| l.parse().ok()) {
            o.codegen_level = Some(level);
        } else if a == "-mllvm" {
            o.llvm_args.extend(args.next().cloned());
        } else if let Some(v) = a.strip_prefix("-mllvm=") {
            o.llvm_args.push(v.to_string());
        } else if matches!(a.as_str(), "-shared" | "--shared" | "-pie" | "--pie") {
            o.pic = true;
        } else if matches!(a.as_str(), "-no-pie" | "--no-pie") {
            o.pic = false;
        }
    }
    o
}

/// The linker's line in a clang driver's `-###` listing, as its arguments (program first).
pub fn linker_line(listing: &str) -> Option<Vec<String>> {
    listing
        .lines()
        .filter(|l| l.trim_start().starts_with('"'))
        .filter_map(|l| shlex::split(l.trim()))
        .find(|argv| argv.first().is_some_and(|p| is_linker(p)))
}

/// The `llc`/`opt` command that runs the crashing step on `input` (in `bindir`, the LLVM the
/// link used), writing nothing.
pub fn ir_command(bindir: &str, saved: &Saved, o: &LtoOptions, input: &str) -> CompilerCommand {
    let level = o.opt_level.unwrap_or(2);
    let mut args = Vec::new();
    let program = match saved.step {
        Step::Codegen => {
            args.push(format!(
                "-O{}",
                o.codegen_level.unwrap_or(codegen_level(o, level))
            ));
            if let Some(cpu) = &o.mcpu {
                args.push(format!("-mcpu={cpu}"));
            }
            if o.pic {
                args.push("-relocation-model=pic".to_string());
            }
            args.extend(o.llvm_args.iter().cloned());
            args.extend(["-o".to_string(), "/dev/null".to_string()]);
            "llc"
        }
        Step::Optimizer => {
            let pipeline = match saved.lto {
                Lto::Full => "lto",
                Lto::Thin => "thinlto",
            };
            args.push(format!("-passes={pipeline}<O{level}>"));
            args.extend(o.llvm_args.iter().cloned());
            args.push("-disable-output".to_string());
            "opt"
        }
    };
    args.push(input.to_string());
    CompilerCommand {
        program: format!("{}/{program}", bindir.trim_end_matches('/')),
        args,
    }
}

/// What an input file of a link is, from its first bytes.
pub fn input_kind(head: &[u8]) -> &'static str {
    if is_bitcode(head) {
        "bitcode"
    } else if head.starts_with(b"\x7fELF") {
        "object"
    } else if head.starts_with(b"!<arch>\n") || head.starts_with(b"!<thin>\n") {
        "archive"
    } else if std::str::from_utf8(&head[..head.len().min(256)]).is_ok() && !head.is_empty() {
        "linker-script"
    } else {
        "other"
    }
}

/// LLVM bitcode: its magic, or the wrapper's.
pub fn is_bitcode(head: &[u8]) -> bool {
    head.starts_with(b"BC\xC0\xDE") || head.starts_with(&[0xDE, 0xC0, 0x17, 0x0B])
}

/// An archive's members and how many are bitcode (`None`: not a readable archive, or a thin
/// one, whose members are files of their own).
pub fn archive_members(bytes: &[u8]) -> Option<(u32, u32)> {
    let archive = object::read::archive::ArchiveFile::parse(bytes).ok()?;
    if archive.is_thin() {
        return None;
    }
    let (mut members, mut bitcode) = (0u32, 0u32);
    for m in archive.members() {
        let data = m.ok()?.data(bytes).ok()?;
        members += 1;
        if is_bitcode(data) {
            bitcode += 1;
        }
    }
    Some((members, bitcode))
}

#[cfg(test)]
#[path = "lto_tests.rs"]
mod tests;
