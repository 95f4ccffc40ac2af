//! The option knowledge capture needs: which options take a separate value, which only
//! matter to the preprocessor, which choose the output, the action or the offload job.

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
    "-sys-header-deps",
    "-header-include-file",
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
    DRIVER_SEPARATE.contains(&arg) || (cc1 && CC1_SEPARATE.contains(&arg))
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

/// `-o` in any spelling.
pub fn is_output(arg: &str) -> bool {
    arg == "-o" || (arg.starts_with("-o") && !arg.starts_with("-objcmt") && arg.len() > 2)
}

/// Options that make a compile write files besides its output, or name where: dependency
/// files, saved temporaries, time traces, serialized diagnostics, compilation-database
/// fragments. A rerun that must leave the build's files alone drops them.
pub fn is_side_output(arg: &str) -> bool {
    matches!(
        arg,
        "-MD" | "-MMD" | "--serialize-diagnostics" | "-dependency-file"
    ) || [
        "-MF",
        "-MJ",
        "-save-temps",
        "-ftime-trace",
        "-fdump-",
        "-fmodules-cache-path",
        "-gsplit-dwarf",
        "-fprofile-generate",
        "-fprofile-instr-generate",
        "-fcrash-diagnostics-dir",
    ]
    .iter()
    .any(|p| arg.starts_with(p))
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
