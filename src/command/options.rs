//! The option knowledge capture needs: which options take a separate value, which only
//! matter to the preprocessor, which choose the output, the action or the offload job, and
//! which write files besides the output ([`SIDE_OUTPUTS`]).

/// Driver options whose value is the next argument.
const DRIVER_SEPARATE: &[&str] = &[
    "-o",
    "-x",
    "-I",
    "-D",
    "-U",
    "-include",
    "-imacros",
    "-isystem",
    "-iquote",
    "-idirafter",
    "-iprefix",
    "-iwithprefix",
    "-iwithprefixbefore",
    "-isysroot",
    "--sysroot",
    "-target",
    "-Xclang",
    "-Xlinker",
    "-Xassembler",
    "-Xpreprocessor",
    "-Xarch_device",
    "-Xarch_host",
    "-Xcuda-ptxas",
    "-Xcuda-fatbinary",
    "-Xopenmp-target",
    "-Xoffload-linker",
    "-mllvm",
    "-MF",
    "-MT",
    "-MQ",
    "-MJ",
    "-arch",
    "-L",
    "-z",
    "-u",
    "-T",
    "-F",
    "-framework",
    "--param",
    "-ivfsoverlay",
    "-include-pch",
    "-working-directory",
    "-isystem-after",
    "-B",
    "--serialize-diagnostics",
    "-dependency-file",
    "--offload-arch",
    "--cuda-gpu-arch",
    "-G",
    "-e",
    "--config",
    "--output",
];

/// cc1 options whose value is the next argument (in addition to the driver ones).
const CC1_SEPARATE: &[&str] = &[
    "-triple",
    "-aux-triple",
    "-target-cpu",
    "-aux-target-cpu",
    "-target-feature",
    "-aux-target-feature",
    "-target-abi",
    "-tune-cpu",
    "-main-file-name",
    "-mrelocation-model",
    "-pic-level",
    "-pie-level",
    "-resource-dir",
    "-internal-isystem",
    "-internal-externc-isystem",
    "-ferror-limit",
    "-fmessage-length",
    "-stack-protector",
    "-mthread-model",
    "-function-alignment",
    "-coverage-notes-file",
    "-coverage-data-file",
    "-split-dwarf-file",
    "-split-dwarf-output",
    "-dwarf-debug-flags",
    "-fdebug-compilation-dir",
    "-mdebug-pass",
    "-fconstexpr-depth",
    "-ftemplate-depth",
    "-fvisibility",
    "-ftype-visibility",
    "-mframe-pointer",
    "-debugger-tuning",
    "-dwarf-version",
    "-mfloat-abi",
    "-fobjc-runtime",
    "-fexperimental-max-bitint-width",
    "-mlink-bitcode-file",
    "-mlink-builtin-bitcode",
    "-fcuda-include-gpubinary",
    "-fmodule-format",
    "-object-file-name",
    "-fcoverage-compilation-dir",
    "-target-sdk-version",
    "-mcode-model",
    "-mregparm",
    "-vectorize-slp",
    "-fexperimental-assignment-tracking",
];

/// True when `arg` (an option) takes the following argument as its value.
pub fn takes_value(arg: &str, cc1: bool) -> bool {
    DRIVER_SEPARATE.contains(&arg)
        || (cc1 && CC1_SEPARATE.contains(&arg))
        || SIDE_OUTPUTS.iter().any(|o| {
            matches!(o.spelling, Spelling::Separate | Spelling::JoinedOrSeparate)
                && o.name == arg
                && (o.applies(cc1, false) || o.applies(cc1, true))
        })
}

/// Options that only change preprocessing; compiling preprocessed input does not need them.
pub fn is_preprocessor_only(arg: &str, cc1: bool) -> bool {
    const EXACT: &[&str] = &[
        "-D",
        "-U",
        "-I",
        "-include",
        "-imacros",
        "-isystem",
        "-iquote",
        "-idirafter",
        "-iprefix",
        "-iwithprefix",
        "-iwithprefixbefore",
        "-isysroot",
        "--sysroot",
        "-Xpreprocessor",
        "-isystem-after",
        "-ivfsoverlay",
        "-include-pch",
        "-M",
        "-MM",
        "-MD",
        "-MMD",
        "-MP",
        "-MG",
        "-MF",
        "-MT",
        "-MQ",
        "-MJ",
        "-H",
        "-C",
        "-CC",
        "-P",
        "-dependency-file",
        "-sys-header-deps",
        "-nostdinc",
        "-nostdinc++",
        "-nostdlibinc",
        "-nobuiltininc",
        "-internal-isystem",
        "-internal-externc-isystem",
        "-header-include-file",
    ];
    const PREFIX: &[&str] = &[
        "-D",
        "-U",
        "-I",
        "-isystem",
        "-iquote",
        "-idirafter",
        "-isysroot",
        "--sysroot=",
        "-Wp,",
        "-MF",
        "-MT",
        "-MQ",
        "-MJ",
        "-include",
        "-imacros",
    ];
    let _ = cc1;
    EXACT.contains(&arg)
        || PREFIX
            .iter()
            .any(|p| arg.starts_with(p) && arg.len() > p.len())
            && !arg.starts_with("-include-pch")
}

/// `-o` in any spelling (`-o F`, `-oF`, `--output F`, `--output=F`), not the options whose
/// names start with `-o` (`-opt-record-file` of cc1 names the remarks file).
pub fn is_output(arg: &str) -> bool {
    const NOT: &[&str] = &["-objcmt", "-object", "-opt-record-", "-output-asm-variant"];
    arg == "-o"
        || (arg.starts_with("-o") && arg.len() > 2 && !NOT.iter().any(|n| arg.starts_with(n)))
        || arg == "--output"
        || arg.starts_with("--output=")
}

/// The action a compile performs (`-c`, `-S`, `-E`, `-fsyntax-only` …).
pub fn is_mode(arg: &str) -> bool {
    matches!(
        arg,
        "-c" | "-S"
            | "-E"
            | "-fsyntax-only"
            | "-emit-obj"
            | "-emit-llvm"
            | "-emit-llvm-bc"
            | "-emit-llvm-only"
            | "-emit-codegen-only"
            | "-emit-llvm-uselists"
    )
}

/// Options replaced when deriving the preprocessing command: output, action, dependency files,
/// saving temporaries, and (for cc1) the emit actions.
pub fn is_output_or_action(arg: &str, cc1: bool) -> bool {
    is_output(arg)
        || matches!(
            arg,
            "-c" | "-S" | "-E" | "-fsyntax-only" | "-M" | "-MM" | "-MD" | "-MMD"
        )
        || matches!(arg, "-MP" | "-MG" | "-MF" | "-MT" | "-MQ" | "-MJ")
        || ["-MF", "-MT", "-MQ", "-MJ"]
            .iter()
            .any(|p| arg.starts_with(p))
        || arg.starts_with("-save-temps")
        || arg.starts_with("-Wl,")
        || is_mode(arg)
        || (cc1 && arg == "-dependency-file")
}

/// Options that choose which offload jobs run or which arches are compiled.
pub fn is_job_choice(arg: &str) -> bool {
    matches!(
        arg,
        "--cuda-device-only"
            | "--cuda-host-only"
            | "--offload-device-only"
            | "--offload-host-only"
            | "--offload-host-device"
            | "--cuda-compile-host-device"
            | "--offload-arch"
            | "--cuda-gpu-arch"
    ) || arg.starts_with("--offload-arch=")
        || arg.starts_with("--cuda-gpu-arch=")
        || arg.starts_with("--no-offload-arch=")
        || arg.starts_with("--no-cuda-gpu-arch=")
}

/// `-x LANG` in any spelling.
pub fn is_language(arg: &str) -> bool {
    arg == "-x" || (arg.starts_with("-x") && arg.len() > 2 && !arg.starts_with("-xc-"))
}

/// `-D`/`-U` in any spelling.
pub fn is_macro(arg: &str) -> bool {
    arg == "-D" || arg == "-U" || arg.starts_with("-D") || arg.starts_with("-U")
}

/// How an option and its value are spelled, as clang's option table
/// (`clang/include/clang/Driver/Options.td`) declares it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Spelling {
    /// The name alone: `-MD`.
    Flag,
    /// The value joined to the name, which ends in `=` where the option has one:
    /// `-ftime-trace=tt.json`.
    Joined,
    /// The value is the next argument: `--serialize-diagnostics s.dia`.
    Separate,
    /// Either: `-MF d.d` or `-MFd.d`.
    JoinedOrSeparate,
}

/// What a rerun of a build's command does with an option that writes a file besides the
/// output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Handling {
    /// The file is all it makes (dependency lists, serialized diagnostics, time traces,
    /// statistics, dumps): the option goes, with its value.
    Remove,
    /// It may change the code the compile makes, and writes its file beside the output (the
    /// name made from `-o`): the option stays, and the rerun's `-o` in a scratch directory
    /// takes the file there. `pin` is clang's cc1 option that names that file, for a command
    /// whose `-o` is `/dev/null`: without it the file would go beside `/dev/null`.
    BesideOutput { pin: Option<&'static str> },
    /// It may change the code and names the file it writes: the value becomes a file of the
    /// same name in the scratch directory (`/dev/null` where there is none).
    RedirectFile,
    /// It names a directory it reads and writes (a module cache): the value becomes a
    /// directory of the same name in the scratch directory; dropped where there is none.
    RedirectDir,
    /// It writes into the working directory: replaced by the spelling given, which writes
    /// beside the output instead.
    Replace(&'static str),
}

/// Which command lines an option belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Where {
    /// The clang (and GCC) driver.
    Driver,
    /// The clang driver and `clang -cc1` (also after `-Xclang`, `-Xpreprocessor`, `-Wp,`).
    Both,
    /// `clang -cc1` only (a cc1 line, or after `-Xclang`).
    Cc1,
    /// The GCC driver only (clang rejects or ignores these).
    Gcc,
}

/// An option that makes a compile write a file besides its output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SideOutput {
    /// As written, up to its value (`-ftime-trace=`, `-MF`).
    pub name: &'static str,
    pub spelling: Spelling,
    pub handling: Handling,
    pub r#where: Where,
}

impl SideOutput {
    /// True when this option means what the table says on a command line of this kind.
    pub fn applies(&self, cc1: bool, gcc: bool) -> bool {
        match self.r#where {
            Where::Both => true,
            Where::Driver => !cc1,
            Where::Cc1 => cc1,
            Where::Gcc => gcc && !cc1,
        }
    }
}

const fn side(
    name: &'static str,
    spelling: Spelling,
    handling: Handling,
    r#where: Where,
) -> SideOutput {
    SideOutput {
        name,
        spelling,
        handling,
        r#where,
    }
}

use Handling::{BesideOutput, RedirectDir, RedirectFile, Remove, Replace};
use Spelling::{Flag, Joined, JoinedOrSeparate, Separate};

/// Every option of the clang driver and of `clang -cc1` (and the GCC ones clang lacks) that
/// writes a file besides the output, from clang's option table (LLVM 19) and checked against
/// clang 14, 16 and 19's `-###`: the one list every rerun of a build's command is made
/// from ([`super::CompilerCommand::without_side_outputs`]), so a rerun writes nothing of
/// the build's and nothing beside `/dev/null`.
///
/// Not here because they write no file at compile time: `-fprofile-generate`,
/// `-fprofile-arcs` (the program writes `.gcda` when it runs), `-fproc-stat-report` without
/// `=` and clang's `-fdump-record-layouts`/`-fdump-vtable-layouts` (stdout), `-M`/`-MM`
/// (their dependency list is the output), `-gsplit-dwarf=single` (no `.dwo`).
pub const SIDE_OUTPUTS: &[SideOutput] = &[
    // Dependency files, and what only shapes them (`-MG` without `-M`/`-MM` is an error).
    side("-MD", Flag, Remove, Where::Both),
    side("-MMD", Flag, Remove, Where::Both),
    side("-MF", JoinedOrSeparate, Remove, Where::Both),
    side("-MT", JoinedOrSeparate, Remove, Where::Both),
    side("-MQ", JoinedOrSeparate, Remove, Where::Both),
    side("-MP", Flag, Remove, Where::Both),
    side("-MG", Flag, Remove, Where::Both),
    side("-MV", Flag, Remove, Where::Both),
    side("-dependency-file", Separate, Remove, Where::Both),
    side("-dependency-dot", Separate, Remove, Where::Cc1),
    side("-sys-header-deps", Flag, Remove, Where::Cc1),
    side("-module-file-deps", Flag, Remove, Where::Cc1),
    side("-module-dependency-dir", Separate, Remove, Where::Cc1),
    side("-header-include-file", Separate, Remove, Where::Cc1),
    // A compilation database fragment.
    side("-MJ", JoinedOrSeparate, Remove, Where::Driver),
    // Serialized diagnostics (the driver takes one or two dashes).
    side("--serialize-diagnostics", Separate, Remove, Where::Driver),
    side("-serialize-diagnostics", Separate, Remove, Where::Driver),
    side("-serialize-diagnostic-file", Separate, Remove, Where::Cc1),
    // Time traces (`-ftime-trace` alone writes beside the output).
    side("-ftime-trace", Flag, Remove, Where::Both),
    side("-ftime-trace=", Joined, Remove, Where::Both),
    side("-ftime-trace-granularity=", Joined, Remove, Where::Both),
    side("-ftime-trace-verbose", Flag, Remove, Where::Both),
    // LLVM statistics.
    side("-save-stats", Flag, Remove, Where::Driver),
    side("-save-stats=", Joined, Remove, Where::Driver),
    side("--save-stats", Flag, Remove, Where::Driver),
    side("--save-stats=", Joined, Remove, Where::Driver),
    side("-stats-file=", Joined, Remove, Where::Cc1),
    side("-stats-file-append", Flag, Remove, Where::Cc1),
    // Where crash reproducers and process statistics go.
    side("-fcrash-diagnostics-dir=", Joined, Remove, Where::Driver),
    side("-crash-diagnostics-dir=", Joined, Remove, Where::Cc1),
    side("-fproc-stat-report=", Joined, Remove, Where::Driver),
    // Prefixes for auxiliary file names (clang: `.dwo`; GCC: dumps and temporaries). Without
    // them those files go beside the output.
    side("-dumpdir", Separate, Remove, Where::Both),
    side("-dumpbase", Separate, Remove, Where::Gcc),
    side("-dumpbase-ext", Separate, Remove, Where::Gcc),
    // GCC's dumps (`-fdump-tree-all`, `-fdump-rtl-expand` …) only show what it does.
    side("-fdump-", Joined, Remove, Where::Gcc),
    // Saved temporaries change how the compile runs (one process per step): kept, beside
    // the output.
    side(
        "-save-temps",
        Flag,
        Replace("-save-temps=obj"),
        Where::Driver,
    ),
    side(
        "--save-temps",
        Flag,
        Replace("-save-temps=obj"),
        Where::Driver,
    ),
    // `-save-temps=cwd` and `=obj` are the option's two values, listed whole.
    side(
        "-save-temps=cwd",
        Flag,
        Replace("-save-temps=obj"),
        Where::Driver,
    ),
    side(
        "-save-temps=obj",
        Flag,
        BesideOutput { pin: None },
        Where::Driver,
    ),
    // Stack usage (`.su`): the backend computes it.
    side(
        "-fstack-usage",
        Flag,
        BesideOutput {
            pin: Some("-stack-usage-file"),
        },
        Where::Driver,
    ),
    side("-stack-usage-file", Separate, RedirectFile, Where::Cc1),
    // Split DWARF (`.dwo`): a different object.
    side(
        "-gsplit-dwarf",
        Flag,
        BesideOutput {
            pin: Some("-split-dwarf-output"),
        },
        Where::Driver,
    ),
    side(
        "-gsplit-dwarf=split",
        Flag,
        BesideOutput {
            pin: Some("-split-dwarf-output"),
        },
        Where::Driver,
    ),
    side("-split-dwarf-output", Separate, RedirectFile, Where::Cc1),
    // Optimization remarks (`.opt.yaml`): the passes build them.
    side(
        "-fsave-optimization-record",
        Flag,
        BesideOutput {
            pin: Some("-opt-record-file"),
        },
        Where::Driver,
    ),
    side(
        "-fsave-optimization-record=",
        Joined,
        BesideOutput {
            pin: Some("-opt-record-file"),
        },
        Where::Driver,
    ),
    side(
        "-foptimization-record-file=",
        Joined,
        RedirectFile,
        Where::Driver,
    ),
    side("-opt-record-file", Separate, RedirectFile, Where::Cc1),
    // gcov notes (`.gcno`): `--coverage` also instruments. cc1 took the notes file as a
    // separate value up to clang 18 and joined after; the joined pin works on both.
    side(
        "-ftest-coverage",
        Flag,
        BesideOutput {
            pin: Some("-coverage-notes-file="),
        },
        Where::Driver,
    ),
    side(
        "--coverage",
        Flag,
        BesideOutput {
            pin: Some("-coverage-notes-file="),
        },
        Where::Driver,
    ),
    side(
        "-coverage",
        Flag,
        BesideOutput {
            pin: Some("-coverage-notes-file="),
        },
        Where::Driver,
    ),
    side("-coverage-notes-file=", Joined, RedirectFile, Where::Cc1),
    side("-coverage-notes-file", Separate, RedirectFile, Where::Cc1),
    // Modules: the cache the compile fills, and a C++20 module unit's interface.
    side("-fmodules-cache-path=", Joined, RedirectDir, Where::Both),
    side(
        "-fmodule-output",
        Flag,
        BesideOutput { pin: None },
        Where::Driver,
    ),
    side("-fmodule-output=", Joined, RedirectFile, Where::Driver),
];

/// Wrappers that hand their value to cc1: the value is an option of cc1 (or of the
/// preprocessor), spelled as on a cc1 line; a separate value comes in the next pair.
pub const CC1_WRAPPERS: &[&str] = &["-Xclang", "-Xpreprocessor"];

/// `-Wp,A,B,…`: comma-joined preprocessor options; the driver reads `-Wp,-MD,F` and
/// `-Wp,-MMD,F` as `-MD -MF F` (GCC's meaning), so there `-MD`/`-MMD` take a value.
pub const WP: &str = "-Wp,";

/// The side output `arg` is (on a command line of this kind), and its value when it is
/// joined to the name. `Some((o, None))` for a separate option means the value is the
/// next argument.
pub fn side_output(arg: &str, cc1: bool, gcc: bool) -> Option<(&'static SideOutput, Option<&str>)> {
    // clang's own `-fdump-*` print to stdout and write no file.
    if arg.starts_with("-fdump-record-layouts") || arg == "-fdump-vtable-layouts" {
        return None;
    }
    SIDE_OUTPUTS
        .iter()
        .filter(|o| o.applies(cc1, gcc))
        .find_map(|o| match o.spelling {
            Flag | Separate => (arg == o.name).then_some((o, None)),
            Joined => arg.strip_prefix(o.name).map(|v| (o, Some(v))),
            JoinedOrSeparate => match arg.strip_prefix(o.name) {
                Some("") => Some((o, None)),
                Some(v) => Some((o, Some(v))),
                None => None,
            },
        })
}
