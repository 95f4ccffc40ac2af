//! Command-line surgery on real build commands and real `-###` output.

use super::*;

fn cmd(line: &str) -> CompilerCommand {
    CompilerCommand::from_argv(&shlex::split(line).unwrap()).unwrap()
}

const SAMPLES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/samples");

#[test]
fn inputs_skip_option_values() {
    let c = cmd("clang++ -c -o out.o -I inc -D X=1 -x c++ a.cpp -include pre.h -MF d.d b.cc");
    assert_eq!(c.inputs(), vec!["a.cpp", "b.cc"]);
    assert_eq!(c.language(), Lang::Cxx);
}

#[test]
fn language_from_x_or_extension() {
    assert_eq!(cmd("clang -c f.c").language(), Lang::C);
    assert_eq!(cmd("clang -x hip -c f.cpp").language(), Lang::Hip);
    assert_eq!(cmd("clang -xc++ -c f.c").language(), Lang::Cxx);
    assert_eq!(cmd("clang -c f.hip").language(), Lang::Hip);
    assert_eq!(cmd("clang -c f.ii").language(), Lang::CxxPre);
}

#[test]
fn offload_arches_in_every_spelling() {
    let c = cmd("clang -x hip --offload-arch=gfx90a --offload-arch gfx1030 --cuda-gpu-arch=gfx600,gfx90a -c k.hip");
    assert_eq!(c.offload_arches(), vec!["gfx90a", "gfx1030", "gfx600"]);
    assert!(c.is_offload());
}

#[test]
fn option_value_in_every_spelling() {
    let c = cmd("clang --target=riscv64-linux-gnu -march=rv64gcv -O1 -c f.c");
    assert_eq!(
        c.option_value("--target").as_deref(),
        Some("riscv64-linux-gnu")
    );
    assert_eq!(c.option_value("-march").as_deref(), Some("rv64gcv"));
    let c = cmd("clang -target x86_64-linux-gnu -c f.c");
    assert_eq!(
        c.option_value("-target").as_deref(),
        Some("x86_64-linux-gnu")
    );
}

#[test]
fn preprocess_keeps_what_changes_preprocessing_and_drops_outputs() {
    let c = cmd("clang++ -O2 -g -DFOO=1 -I /inc -isystem /sys -include pre.h -std=c++17 --target=riscv64-linux-gnu -march=rv64gcv -MD -MF f.d -c -o f.o f.cpp");
    let p = c.preprocess(&JobSelector::Whole, "/tmp/x.ii", false);
    assert_eq!(
        p.args,
        shlex::split("-O2 -g -DFOO=1 -I /inc -isystem /sys -include pre.h -std=c++17 --target=riscv64-linux-gnu -march=rv64gcv -E -o /tmp/x.ii f.cpp").unwrap()
    );
}

#[test]
fn compile_preprocessed_drops_preprocessor_options_and_sets_language() {
    let c = cmd("clang++ -O2 -g -DFOO=1 -I /inc -isystem /sys -include pre.h -std=c++17 -MD -MF f.d -c -o f.o f.cpp");
    let p = c.compile_preprocessed(
        &JobSelector::Whole,
        "input.ii",
        Lang::Cxx,
        "/dev/null",
        false,
    );
    assert_eq!(
        p.args,
        shlex::split("-O2 -g -std=c++17 -c -o /dev/null -x c++-cpp-output input.ii").unwrap()
    );
}

#[test]
fn compile_preprocessed_hip_keeps_hip_and_adds_nogpuinc() {
    let c = cmd("clang -fno-crash-diagnostics -S -o /dev/null -x hip --offload-arch=gfx600 -nogpulib --cuda-device-only -O2 k.hip");
    let p = c.compile_preprocessed(
        &JobSelector::Device("gfx600".into()),
        "input.hipi",
        Lang::Hip,
        "/dev/null",
        false,
    );
    assert_eq!(
        p.args,
        shlex::split("-fno-crash-diagnostics -S -nogpulib -O2 --cuda-device-only --offload-arch=gfx600 -nogpuinc -o /dev/null -x hip input.hipi").unwrap()
    );
}

#[test]
fn a_link_command_compiles_only_when_replayed() {
    let c = cmd("clang -O2 f.c -o f");
    let p = c.compile_preprocessed(&JobSelector::Whole, "input.i", Lang::C, "/dev/null", false);
    assert_eq!(
        p.args,
        shlex::split("-O2 -c -o /dev/null -x cpp-output input.i").unwrap()
    );
}

#[test]
fn device_job_selection_replaces_arches() {
    let c = cmd("clang -x hip --offload-arch=gfx90a --offload-arch=gfx1030 -nogpulib -nogpuinc --cuda-device-only -S k.hip");
    let p = c.preprocess(&JobSelector::Device("gfx1030".into()), "o.hipi", false);
    assert_eq!(
        p.args,
        shlex::split("-x hip -nogpulib -nogpuinc -E --cuda-device-only --offload-arch=gfx1030 -o o.hipi k.hip").unwrap()
    );
    let h = c.preprocess(&JobSelector::Host, "o.hipi", false);
    assert!(h.args.contains(&"--cuda-host-only".to_string()));
    assert!(!h.args.iter().any(|a| a.starts_with("--offload-arch")));
}

#[test]
fn rewrite_includes_keeps_debug_pragmas_inert() {
    let c = cmd("clang -c f.c");
    let p = c.preprocess(&JobSelector::Whole, "o.i", true);
    assert_eq!(
        p.args,
        shlex::split("-E -frewrite-includes -Xclang -disable-pragma-debug-crash -o o.i f.c")
            .unwrap()
    );
}

#[test]
fn with_output_and_extra_args() {
    let c = cmd("clang -c -o f.o f.c");
    assert_eq!(
        c.with_output("/dev/null").args,
        shlex::split("-c -o /dev/null f.c").unwrap()
    );
    assert_eq!(
        c.with_extra_args(&["-fno-integrated-cc1"]).args,
        shlex::split("-c -o f.o -fno-integrated-cc1 f.c").unwrap()
    );
}

#[test]
fn shell_quoting_round_trips() {
    let args: Vec<String> = ["clang", "-DX=\"a b\"", "it's", "", "$HOME", "-O2"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let line = shell_join(&args);
    assert_eq!(shlex::split(&line).unwrap(), args);
    assert!(line.contains("'$HOME'"));
}

#[test]
fn shell_quote_leaves_nothing_for_the_shell_to_expand() {
    for (raw, quoted) in [
        ("", "''"),
        ("-DX=1", "-DX=1"),
        ("CC=clang", "'CC=clang'"),
        ("_a1=b", "'_a1=b'"),
        ("=ls", "'=ls'"),
        ("~", "'~'"),
        ("~/x", "'~/x'"),
        ("a!b", "'a!b'"),
        ("it's", r"'it'\''s'"),
        ("a\nb", "'a\nb'"),
        ("$(touch x)", "'$(touch x)'"),
        ("`id`", "'`id`'"),
        ("a\\b", "'a\\b'"),
        ("*.c", "'*.c'"),
        ("/usr/bin/clang-19", "/usr/bin/clang-19"),
    ] {
        assert_eq!(shell_quote(raw), quoted, "{raw:?}");
    }
    assert_eq!(shell_cd("/a b"), "cd '/a b'");
    assert_eq!(shell_cd("-P"), "cd -- -P");
}

proptest::proptest! {
    /// Any argv joined and split again by a POSIX-style lexer is the same argv.
    #[test]
    fn shell_join_round_trips_any_argv(args in proptest::collection::vec("\\PC*|[ -~\n\t]*", 0..6)) {
        let line = shell_join(&args);
        proptest::prop_assert_eq!(shlex::split(&line).unwrap(), args);
    }
}

#[test]
fn cc1_inputs_and_values() {
    let c = cmd("/usr/lib/llvm-19/bin/clang -cc1 -triple riscv64-unknown-linux-gnu -target-feature +v -target-cpu generic-rv64 -main-file-name x.c -O2 -o /dev/null -x c x-2e579b.c");
    assert!(c.is_cc1());
    assert_eq!(c.inputs(), vec!["x-2e579b.c"]);
    assert_eq!(c.language(), Lang::C);
}

#[test]
fn hash_hash_hash_jobs_of_a_two_arch_hip_compile() {
    let text = std::fs::read_to_string(format!("{SAMPLES}/hip/hash3_clang19.txt")).unwrap();
    let jobs = parse_hash_hash_hash(&text);
    let devices: Vec<&str> = jobs
        .iter()
        .filter_map(|j| match &j.kind {
            JobKind::Device { arch } => Some(arch.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(devices, vec!["gfx1100", "gfx90a"]);
    assert_eq!(jobs.iter().filter(|j| j.kind == JobKind::Host).count(), 1);
    assert!(jobs.iter().any(|j| j.kind == JobKind::Tool));
}

#[test]
fn crashed_cc1_line_names_its_job() {
    let text =
        std::fs::read_to_string(format!("{SAMPLES}/hip/crash_rdc_clang19/stderr.txt")).unwrap();
    let line = text
        .lines()
        .find_map(|l| l.strip_prefix("0.\tProgram arguments: "))
        .unwrap();
    assert_eq!(
        job_of_cc1(line),
        Some(JobKind::Device {
            arch: "gfx90a".into()
        })
    );
    assert_eq!(job_of_cc1("/usr/bin/clang-19 -c f.c"), None);
    assert_eq!(
        job_of_cc1("clang -cc1 -triple x86_64-pc-linux-gnu f.c"),
        Some(JobKind::Host)
    );
}

#[test]
fn rewrite_includes_replay_keeps_macro_definitions() {
    let c = cmd("clang -DWITH_BUG=1 -UNDEBUG -I inc -c f.c");
    let p = c.compile_preprocessed(&JobSelector::Whole, "input.i", Lang::C, "/dev/null", true);
    assert_eq!(
        p.args,
        shlex::split("-DWITH_BUG=1 -UNDEBUG -c -o /dev/null -x c input.i").unwrap()
    );
}

#[test]
fn cc1_options_missing_from_the_table_do_not_become_inputs() {
    let c = cmd("clang -cc1 -triple riscv64-unknown-linux-gnu -target-abi lp64d -msmall-data-limit 8 -vectorize-slp -target-feature -v -D FOO=1 -o /dev/null -x c vec-8d1a2b.c");
    assert_eq!(c.inputs(), vec!["vec-8d1a2b.c"]);
    let p = c.compile_preprocessed(&JobSelector::Whole, "input.c", Lang::C, "/dev/null", true);
    assert!(
        p.args.windows(2).any(|w| w == ["-msmall-data-limit", "8"]),
        "{:?}",
        p.args
    );
    assert!(
        p.args.windows(2).any(|w| w == ["-target-feature", "-v"]),
        "{:?}",
        p.args
    );
}

#[test]
fn llvm_tools_are_told_by_their_name_whatever_the_version_suffix() {
    assert_eq!(cmd("llc -O2 x.ll -o /dev/null").llvm_tool(), Some("llc"));
    assert_eq!(
        cmd("/usr/lib/llvm-19/bin/llc x.ll").llvm_tool(),
        Some("llc")
    );
    assert_eq!(
        cmd("opt-19 -passes=safe-stack x.ll").llvm_tool(),
        Some("opt")
    );
    assert_eq!(cmd("clang -c x.c").llvm_tool(), None);
    assert_eq!(cmd("clang-19 -c x.c").llvm_tool(), None);
    assert_eq!(cmd("llc-lto x.ll").llvm_tool(), None);
    assert_eq!(cmd("/opt/bin/clang -c x.c").llvm_tool(), None);
    let c = cmd("llc-19 -mtriple=riscv64 -mattr=+v x.ll -o out.s");
    assert_eq!(c.inputs(), ["x.ll"]);
}

fn args(line: &str) -> Vec<String> {
    shlex::split(line).unwrap()
}

#[test]
fn the_side_output_table_is_well_formed() {
    for (k, o) in SIDE_OUTPUTS.iter().enumerate() {
        assert!(o.name.starts_with('-'), "{o:?}");
        if o.spelling == Spelling::Joined {
            assert!(o.name.ends_with('=') || o.name == "-fdump-", "{o:?}");
        }
        if matches!(o.spelling, Spelling::Separate | Spelling::JoinedOrSeparate) {
            // The command's own parser must take the value along, or it becomes an input.
            let cc1 = o.r#where == Where::Cc1;
            assert!(options::takes_value(o.name, cc1), "{o:?}");
        }
        if let Handling::BesideOutput { pin: Some(p) } = o.handling {
            let pinned = SIDE_OUTPUTS
                .iter()
                .find(|q| q.name == p)
                .unwrap_or_else(|| panic!("{p} is not in the table"));
            assert_eq!(pinned.handling, Handling::RedirectFile, "{p}");
        }
        let twin = SIDE_OUTPUTS[k + 1..]
            .iter()
            .find(|q| q.name == o.name && q.r#where == o.r#where);
        assert!(twin.is_none(), "{o:?} twice");
    }
}

#[test]
fn side_outputs_are_told_in_every_spelling() {
    fn name(a: &str, cc1: bool, gcc: bool) -> Option<(&'static str, Option<&str>)> {
        side_output(a, cc1, gcc).map(|(o, v)| (o.name, v))
    }
    assert_eq!(name("-MF", false, false), Some(("-MF", None)));
    assert_eq!(name("-MFd.d", false, false), Some(("-MF", Some("d.d"))));
    assert_eq!(name("-MD", false, false), Some(("-MD", None)));
    assert_eq!(
        name("-ftime-trace", false, false),
        Some(("-ftime-trace", None))
    );
    assert_eq!(
        name("-ftime-trace=t.json", false, false),
        Some(("-ftime-trace=", Some("t.json")))
    );
    assert_eq!(
        name("--serialize-diagnostics", false, false),
        Some(("--serialize-diagnostics", None))
    );
    assert_eq!(
        name("-gsplit-dwarf", false, false).unwrap().0,
        "-gsplit-dwarf"
    );
    assert_eq!(name("-gsplit-dwarf=single", false, false), None);
    // cc1 options only on cc1 lines; GCC's dumps only for GCC; clang's dumps print.
    assert_eq!(name("-stack-usage-file", false, false), None);
    assert!(name("-stack-usage-file", true, false).is_some());
    assert!(name("-fdump-tree-all", false, true).is_some());
    assert_eq!(name("-fdump-tree-all", false, false), None);
    assert_eq!(name("-fdump-record-layouts", false, true), None);
    // Not side outputs: options that only look alike, and those writing at run time.
    for a in [
        "-MM",
        "-M",
        "-fprofile-generate",
        "-fprofile-arcs",
        "-o",
        "-MDx",
        "-fno-stack-usage",
    ] {
        assert_eq!(name(a, false, false), None, "{a}");
    }
}

/// The crashing command of the end-to-end test: every file it writes lands in the scratch
/// directory or nowhere.
const EVERY_KIND: &str = "clang-19 -O1 -g -Iinclude -c -Wp,-MMD,t.d -ftime-trace=tt.json -fstack-usage -MD -MF d.d --serialize-diagnostics s.dia -save-temps=obj -gsplit-dwarf -ftest-coverage -o out/x.o src/x.c";

#[test]
fn without_build_outputs_moves_every_file_into_the_sink() {
    let dir = std::path::Path::new("/scratch/run-1");
    let c = cmd(EVERY_KIND);
    assert_eq!(
        c.without_build_outputs(&Sink::Dir(dir)).args,
        args("-O1 -g -Iinclude -c -fstack-usage -save-temps=obj -gsplit-dwarf -ftest-coverage -o /scratch/run-1/x.o src/x.c")
    );
    let nowhere = c.without_build_outputs(&Sink::Nowhere);
    assert_eq!(
        nowhere.args,
        args("-O1 -g -Iinclude -c -fstack-usage -gsplit-dwarf -ftest-coverage \
              -Xclang -stack-usage-file -Xclang /dev/null -Xclang -split-dwarf-output -Xclang /dev/null \
              -Xclang -coverage-notes-file=/dev/null -o /dev/null src/x.c")
    );
    // Made twice, the same: a replay that writes nowhere is left as it is.
    assert_eq!(nowhere.without_build_outputs(&Sink::Nowhere), nowhere);
    // The pins follow the output into scratch.
    assert_eq!(
        nowhere.without_build_outputs(&Sink::Dir(dir)).args,
        args("-O1 -g -Iinclude -c -fstack-usage -gsplit-dwarf -ftest-coverage \
              -Xclang -stack-usage-file -Xclang /scratch/run-1/null -Xclang -split-dwarf-output -Xclang /scratch/run-1/null \
              -Xclang -coverage-notes-file=/scratch/run-1/null -o /scratch/run-1/null src/x.c")
    );
}

#[test]
fn without_build_outputs_takes_every_spelling_of_the_output() {
    let dir = std::path::Path::new("/s");
    for line in [
        "clang -c --output=out/x.o f.c",
        "clang -c --output out/x.o f.c",
        "clang -c -oout/x.o f.c",
        "clang -c -o out/x.o f.c",
    ] {
        let c = cmd(line);
        assert_eq!(c.output().as_deref(), Some("out/x.o"), "{line}");
        assert_eq!(
            c.without_build_outputs(&Sink::Dir(dir)).args,
            args("-c -o /s/x.o f.c"),
            "{line}"
        );
    }
    assert_eq!(
        cmd("clang -c f.c")
            .without_build_outputs(&Sink::Dir(dir))
            .args,
        args("-c -o /s/out f.c")
    );
}

#[test]
fn side_outputs_inside_wrappers_go_too() {
    let dir = std::path::Path::new("/s");
    let c = cmd("clang -c -Wp,-MD,t.d -Wp,-DX,-MMD,u.d -Wp,-MF,w.d,-MT,x -Xclang -dependency-file -Xclang d.d -Xpreprocessor -MD -Xclang -stack-usage-file -Xclang b/x.su -Xclang -coverage-notes-file=b/x.gcno -Xclang -fno-pch-timestamp f.c");
    assert_eq!(
        c.without_side_outputs(&Sink::Dir(dir)).args,
        args("-c -Wp,-DX -Xclang -stack-usage-file -Xclang /s/x.su -Xclang -coverage-notes-file=/s/x.gcno -Xclang -fno-pch-timestamp f.c")
    );
}

#[test]
fn named_files_are_redirected_or_dropped() {
    let dir = std::path::Path::new("/s");
    let c = cmd("clang -c -save-temps -fmodules -fmodules-cache-path=build/mc -foptimization-record-file=r/x.yaml -MJ cdb/x.json -fcrash-diagnostics-dir=crash -fproc-stat-report=p.txt -save-stats=obj -dumpdir d/ f.c");
    assert_eq!(
        c.without_side_outputs(&Sink::Dir(dir)).args,
        args("-c -save-temps=obj -fmodules -fmodules-cache-path=/s/mc -foptimization-record-file=/s/x.yaml f.c")
    );
    assert_eq!(
        c.without_side_outputs(&Sink::Nowhere).args,
        args("-c -fmodules -foptimization-record-file=/dev/null f.c")
    );
}

#[test]
fn a_cc1_line_writes_its_named_files_into_the_sink() {
    let dir = std::path::Path::new("/s");
    let c = cmd("clang -cc1 -triple x86_64-pc-linux-gnu -emit-obj -dependency-file x.d -MT x.o -sys-header-deps -serialize-diagnostic-file x.dia -stack-usage-file b/x.su -split-dwarf-file x.dwo -split-dwarf-output b/x.dwo -opt-record-file x.opt.yaml -ftime-trace=x.json -o b/x.o -x c x.c");
    assert_eq!(
        c.without_build_outputs(&Sink::Dir(dir)).args,
        args("-cc1 -triple x86_64-pc-linux-gnu -emit-obj -stack-usage-file /s/x.su -split-dwarf-file x.dwo -split-dwarf-output /s/x.dwo -opt-record-file /s/x.opt.yaml -o /s/x.o -x c x.c")
    );
}

#[test]
fn a_cc1_replay_moved_twice_keeps_its_input() {
    // The case keeps a cc1 replay at `-o /dev/null`; capture runs it once more with the
    // output in scratch. cc1's input is told by the `-x` before it, so `-o` goes before both.
    let c = cmd("clang -cc1 -triple x86_64-pc-linux-gnu -emit-obj -O2 -x c x.c");
    let kept = c.without_build_outputs(&Sink::Nowhere);
    assert_eq!(
        kept.args,
        args("-cc1 -triple x86_64-pc-linux-gnu -emit-obj -O2 -o /dev/null -x c x.c")
    );
    let run = kept.without_build_outputs(&Sink::Dir(std::path::Path::new("/s")));
    assert_eq!(
        run.args,
        args("-cc1 -triple x86_64-pc-linux-gnu -emit-obj -O2 -o /s/null -x c x.c")
    );
    assert_eq!(run.inputs(), ["x.c"]);
}

#[test]
fn gcc_keeps_what_it_cannot_pin_only_in_scratch() {
    let dir = std::path::Path::new("/s");
    let c = cmd("gcc -c -fdump-tree-all -dumpbase x -fstack-usage -MD -o out/x.o x.c");
    assert_eq!(
        c.without_build_outputs(&Sink::Dir(dir)).args,
        args("-c -fstack-usage -o /s/x.o x.c")
    );
    // GCC has no cc1 option to name the `.su`: where there is no scratch, it goes.
    assert_eq!(
        c.without_build_outputs(&Sink::Nowhere).args,
        args("-c -o /dev/null x.c")
    );
}

#[test]
fn several_offload_arches_get_one_output_where_clang_allows_it() {
    let dir = std::path::Path::new("/s");
    let hip = cmd(
        "clang -x hip --offload-device-only --offload-arch=gfx906 --offload-arch=gfx908 -S k.hip",
    );
    assert_eq!(
        hip.without_build_outputs(&Sink::Dir(dir)).args,
        args("-x hip --offload-device-only --offload-arch=gfx906 --offload-arch=gfx908 -S --gpu-bundle-output -o /s/out k.hip")
    );
    // CUDA cannot bundle: the compile names its outputs itself.
    let cuda = cmd(
        "clang -x cuda --cuda-device-only --offload-arch=sm_70 --offload-arch=sm_80 -S -MD k.cu",
    );
    assert_eq!(
        cuda.without_build_outputs(&Sink::Dir(dir)).args,
        args("-x cuda --cuda-device-only --offload-arch=sm_70 --offload-arch=sm_80 -S k.cu")
    );
    // With an -o of its own, clang took one output: it moves.
    let both = cmd("clang -x cuda --offload-arch=sm_70 --offload-arch=sm_80 -c -o b/k.o k.cu");
    assert_eq!(
        both.without_build_outputs(&Sink::Dir(dir)).args,
        args("-x cuda --offload-arch=sm_70 --offload-arch=sm_80 -c -o /s/k.o k.cu")
    );
}
