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

#[test]
fn without_build_outputs_writes_nothing_of_the_builds() {
    let c = cmd("clang -c -MD -MF dir/f.d -MT f.o -o out/f.o -save-temps=obj -ftime-trace=t.json -gsplit-dwarf -MJ cdb.json --serialize-diagnostics f.dia -DX=1 f.c");
    assert_eq!(
        c.without_build_outputs("/dev/null").args,
        shlex::split("-c -MT f.o -DX=1 -o /dev/null f.c").unwrap()
    );
}
