//! The `llc`/`opt` command line the ir stage cuts ([`ToolCmd`]): its fields, the argv and
//! the RUN line made from them, the command read back from a case's own tool command, and
//! the target attributes the stage moves from the IR to `-mcpu`/`-mattr`. Pure text, no
//! process: every ir module that runs the tool shares it.

use std::sync::LazyLock;

use regex::Regex;

use super::emit::Tool;
static TARGET_ATTR: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"\s*"(target-cpu|target-features|tune-cpu)"="([^"]*)""#).expect("valid regex")
});

/// The tool's command line, the IR file given as `file`.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct ToolCmd {
    pub tool: Tool,
    pub program: String,
    pub triple: Option<String>,
    pub mcpu: Option<String>,
    pub mattr: Vec<String>,
    /// `-O2` … for llc.
    pub olevel: Option<String>,
    /// The `-passes=` pipeline for opt.
    pub passes: Option<String>,
    /// Flags that only raise a pass's budget ([`super::depth`]), after the pipeline.
    pub limits: Vec<String>,
    /// Flags of a given `llc`/`opt` command that no field above models
    /// (`-filetype=obj`, `-enable-…`), kept as written.
    pub extra: Vec<String>,
}

impl ToolCmd {
    pub fn argv(&self, file: &str) -> Vec<String> {
        let mut v = vec![self.program.clone()];
        v.extend(self.flags());
        v.push(file.to_owned());
        match self.tool {
            Tool::Llc => v.extend(["-o".to_owned(), "/dev/null".to_owned()]),
            Tool::Opt => v.push("-disable-output".into()),
        }
        v
    }

    fn flags(&self) -> Vec<String> {
        let mut v = Vec::new();
        if let Some(t) = &self.triple {
            v.push(format!("-mtriple={t}"));
        }
        if let Some(c) = &self.mcpu {
            v.push(format!("-mcpu={c}"));
        }
        if !self.mattr.is_empty() {
            v.push(format!("-mattr={}", self.mattr.join(",")));
        }
        if let Some(o) = &self.olevel {
            v.push(o.clone());
        }
        if let Some(p) = &self.passes {
            v.push(format!("-passes={p}"));
        }
        v.extend(self.limits.iter().cloned());
        v.extend(self.extra.iter().cloned());
        v
    }

    /// `; RUN: llc -mtriple=… < %s` (the pipeline quoted for the shell lit runs).
    pub fn run_line(&self) -> String {
        let flags: Vec<String> = self
            .flags()
            .into_iter()
            .map(|f| match f.strip_prefix("-passes=") {
                Some(p) => format!("-passes='{p}'"),
                None => f,
            })
            .collect();
        let tail = match self.tool {
            Tool::Llc => "< %s",
            Tool::Opt => "-disable-output < %s",
        };
        format!("; RUN: {} {} {tail}", self.tool.name(), flags.join(" ")).replace("  ", " ")
    }
}

/// The optimisation level of a compile job's last `-O` flag, as clang reads it (`-O` and
/// `-Og` are `-O1`, `-Ofast` is `-O3`, none is `-O0`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum OptLevel {
    O0,
    O1,
    O2,
    O3,
    Os,
    Oz,
}

fn last_opt_level(argv: &[String]) -> OptLevel {
    let last = argv
        .iter()
        .rev()
        .find(|a| a.starts_with("-O") && a.len() <= 6)
        .map(String::as_str);
    match last {
        None | Some("-O0") => OptLevel::O0,
        Some("-O" | "-O1" | "-Og") => OptLevel::O1,
        Some("-O3" | "-Ofast") => OptLevel::O3,
        Some("-Os") => OptLevel::Os,
        Some("-Oz") => OptLevel::Oz,
        _ => OptLevel::O2,
    }
}

/// The `-O` level `llc` needs for the job's codegen (`llc` has no size levels: clang runs
/// codegen at `-O2` for them).
pub(super) fn llc_olevel(argv: &[String]) -> String {
    match last_opt_level(argv) {
        OptLevel::O0 => "-O0",
        OptLevel::O1 => "-O1",
        OptLevel::O3 => "-O3",
        OptLevel::O2 | OptLevel::Os | OptLevel::Oz => "-O2",
    }
    .to_owned()
}

/// The `opt` default pipeline level (`O2`, `Os`, …) that matches the job's last `-O` flag,
/// for `-passes=default<LEVEL>`.
pub(super) fn opt_default_level(argv: &[String]) -> &'static str {
    match last_opt_level(argv) {
        OptLevel::O0 => "O0",
        OptLevel::O1 => "O1",
        OptLevel::O2 => "O2",
        OptLevel::O3 => "O3",
        OptLevel::Os => "Os",
        OptLevel::Oz => "Oz",
    }
}

/// The IR with its target attributes taken out, and the CPU and features it had (from the
/// first attribute group that names them).
pub(super) fn take_target_attrs(ir: &str) -> (String, Option<String>, Vec<String>) {
    let mut cpu = None;
    let mut features = None;
    for c in TARGET_ATTR.captures_iter(ir) {
        match &c[1] {
            "target-cpu" if cpu.is_none() => cpu = Some(c[2].to_owned()),
            "target-features" if features.is_none() => {
                features = Some(
                    c[2].split(',')
                        .filter(|f| !f.is_empty())
                        .map(str::to_owned)
                        .collect::<Vec<_>>(),
                )
            }
            _ => {}
        }
    }
    let stripped = TARGET_ATTR.replace_all(ir, "").into_owned();
    (stripped, cpu, features.unwrap_or_default())
}

/// Every distinct `"target-features"` list of the IR's attribute groups and call sites, in
/// the order they appear.
pub(super) fn feature_sets(ir: &str) -> Vec<Vec<String>> {
    let mut sets: Vec<Vec<String>> = Vec::new();
    for c in TARGET_ATTR.captures_iter(ir) {
        if &c[1] == "target-features" {
            let set: Vec<String> = c[2]
                .split(',')
                .filter(|f| !f.is_empty())
                .map(str::to_owned)
                .collect();
            if !sets.contains(&set) {
                sets.push(set);
            }
        }
    }
    sets
}

/// What the job's command had and `kept` does without: each target feature (`+v`), `-mcpu=…`
/// and the `-O` level ddmin dropped, in the job's order.
pub(super) fn dropped_flags(job: &ToolCmd, kept: &ToolCmd) -> Vec<String> {
    let mut v: Vec<String> = job
        .mattr
        .iter()
        .filter(|f| !kept.mattr.contains(f))
        .cloned()
        .collect();
    if let (Some(c), None) = (&job.mcpu, &kept.mcpu) {
        v.push(format!("-mcpu={c}"));
    }
    if let (Some(o), None) = (&job.olevel, &kept.olevel) {
        v.push(o.clone());
    }
    v
}

/// A given `llc`/`opt` command line as a [`ToolCmd`]: the options the stage cuts get their
/// fields, the input and the output go, everything else is kept as written.
pub(super) fn from_command(tool: Tool, program: String, argv: &[String]) -> ToolCmd {
    let mut c = ToolCmd {
        tool,
        program,
        triple: None,
        mcpu: None,
        mattr: Vec::new(),
        olevel: None,
        passes: None,
        limits: Vec::new(),
        extra: Vec::new(),
    };
    let is_olevel = |a: &str| matches!(a, "-O0" | "-O1" | "-O2" | "-O3" | "-Os" | "-Oz");
    let mut args = argv.iter().skip(1);
    while let Some(a) = args.next() {
        let a = a.as_str();
        let value = |name: &str| a.strip_prefix(name).and_then(|r| r.strip_prefix('='));
        if a == "-o" {
            args.next();
        } else if a.starts_with("-o=") || a == "-disable-output" || a == "-S" {
        } else if let Some(t) = value("-mtriple") {
            c.triple = Some(t.to_owned());
        } else if let Some(t) = value("-mcpu") {
            c.mcpu = Some(t.to_owned());
        } else if let Some(t) = value("-mattr") {
            c.mattr
                .extend(t.split(',').filter(|f| !f.is_empty()).map(str::to_owned));
        } else if let Some(p) = value("-passes") {
            c.passes = Some(p.to_owned());
        } else if is_olevel(a) && tool == Tool::Llc {
            c.olevel = Some(a.to_owned());
        } else if is_olevel(a) {
            c.passes = Some(format!("default<{}>", &a[1..]));
        } else if !a.starts_with('-') {
            // The input (the case's copy): the stage gives its own file.
        } else {
            c.extra.push(a.to_owned());
        }
    }
    c
}

/// Non-empty lines that are not a RUN line.
pub(super) fn count_lines(ir: &str) -> usize {
    ir.lines()
        .filter(|l| !l.trim().is_empty() && !l.trim_start().starts_with("; RUN:"))
        .count()
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_attribute_groups_features_are_offered() {
        let ir = "define i32 @g(i32 %x) #0 {\n  ret i32 %x\n}\n\
                  define <32 x i1> @f(<32 x i16> %a, <32 x i16> %b) #1 {\n  %c = icmp eq <32 x i16> %a, %b\n  ret <32 x i1> %c\n}\n\
                  attributes #0 = { \"target-cpu\"=\"x86-64\" \"target-features\"=\"+cmov,+x87\" }\n\
                  attributes #1 = { \"target-cpu\"=\"x86-64\" \"target-features\"=\"+avx512bw,-evex512\" }\n\
                  attributes #2 = { \"target-features\"=\"+cmov,+x87\" }\n";
        assert_eq!(
            super::feature_sets(ir),
            [vec!["+cmov", "+x87"], vec!["+avx512bw", "-evex512"]]
        );
        let (stripped, cpu, _) = super::take_target_attrs(ir);
        assert!(!stripped.contains("target-features"), "{stripped}");
        assert_eq!(cpu.as_deref(), Some("x86-64"));
    }

    use super::*;

    /// A call site's features, written inline or through its own attribute group, are offered
    /// and taken out like a function's (llvm-as 19 parses this module).
    #[test]
    fn a_call_sites_features_are_offered_and_taken_out() {
        let ir = "define i32 @g(i32 %x) {\n  ret i32 %x\n}\n\
                  define i32 @f(i32 %x) {\n  %r = call i32 @g(i32 %x) #1\n  \
                  %s = call i32 @g(i32 %r) \"target-features\"=\"+avx2,+fma\"\n  ret i32 %s\n}\n\
                  attributes #1 = { \"target-features\"=\"+avx512bw,-evex512\" }\n";
        assert_eq!(
            feature_sets(ir),
            [vec!["+avx2", "+fma"], vec!["+avx512bw", "-evex512"]]
        );
        let (stripped, cpu, features) = take_target_attrs(ir);
        assert!(
            stripped.contains("  %s = call i32 @g(i32 %r)\n"),
            "{stripped}"
        );
        assert!(stripped.contains("attributes #1 = { }"), "{stripped}");
        assert_eq!(cpu, None);
        assert_eq!(features, ["+avx2", "+fma"]);
    }

    #[test]
    fn target_attributes_move_out_of_the_ir() {
        let ir = "attributes #0 = { nounwind \"target-cpu\"=\"generic-rv64\" \"target-features\"=\"+64bit,+v,-e\" \"tune-cpu\"=\"x\" }\nattributes #1 = { \"target-cpu\"=\"other\" }\n";
        let (s, cpu, f) = take_target_attrs(ir);
        assert_eq!(s, "attributes #0 = { nounwind }\nattributes #1 = { }\n");
        assert_eq!(cpu.as_deref(), Some("generic-rv64"));
        assert_eq!(f, ["+64bit", "+v", "-e"]);
    }

    #[test]
    fn run_lines_look_like_llvm_tests() {
        let c = ToolCmd {
            tool: Tool::Llc,
            program: "/usr/lib/llvm-19/bin/llc".into(),
            triple: Some("riscv64".into()),
            mcpu: None,
            mattr: vec!["+v".into()],
            olevel: None,
            passes: None,
            limits: Vec::new(),
            extra: Vec::new(),
        };
        assert_eq!(c.run_line(), "; RUN: llc -mtriple=riscv64 -mattr=+v < %s");
        assert_eq!(
            c.argv("reduced.ll"),
            [
                "/usr/lib/llvm-19/bin/llc",
                "-mtriple=riscv64",
                "-mattr=+v",
                "reduced.ll",
                "-o",
                "/dev/null"
            ]
        );
        let o = ToolCmd {
            tool: Tool::Opt,
            passes: Some("loop(indvars)".into()),
            mattr: vec![],
            triple: None,
            ..c
        };
        assert_eq!(
            o.run_line(),
            "; RUN: opt -passes='loop(indvars)' -disable-output < %s"
        );
        let u = ToolCmd {
            passes: Some("loop(indvars,loop-unroll-full)".into()),
            limits: vec!["-unroll-threshold=1000000".into()],
            ..o
        };
        assert_eq!(
            u.run_line(),
            "; RUN: opt -passes='loop(indvars,loop-unroll-full)' -unroll-threshold=1000000 -disable-output < %s"
        );
    }

    #[test]
    fn a_given_tool_command_keeps_what_the_stage_does_not_cut() {
        let v = |l: &str| shlex::split(l).unwrap();
        let c = from_command(
            Tool::Llc,
            "llc".into(),
            &v("/usr/lib/llvm-19/bin/llc -O2 -mtriple=riscv64 -mattr=+v,+zvl256b -filetype=obj -o /dev/null input.ll"),
        );
        assert_eq!(c.olevel.as_deref(), Some("-O2"));
        assert_eq!(c.triple.as_deref(), Some("riscv64"));
        assert_eq!(c.mattr, ["+v", "+zvl256b"]);
        assert_eq!(c.extra, ["-filetype=obj"]);
        assert_eq!(
            c.argv("r.ll"),
            v("llc -mtriple=riscv64 -mattr=+v,+zvl256b -O2 -filetype=obj r.ll -o /dev/null")
        );
        let o = from_command(
            Tool::Opt,
            "opt".into(),
            &v("opt-19 -O2 -S input.ll -o out.ll"),
        );
        assert_eq!(o.passes.as_deref(), Some("default<O2>"));
        assert!(o.extra.is_empty(), "{:?}", o.extra);
        let o = from_command(
            Tool::Opt,
            "opt".into(),
            &v("opt -passes=safe-stack -disable-output input.ll"),
        );
        assert_eq!(o.passes.as_deref(), Some("safe-stack"));
        assert_eq!(
            o.argv("r.ll"),
            v("opt -passes=safe-stack r.ll -disable-output")
        );
    }

    #[test]
    fn olevels_follow_the_job() {
        let v = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(llc_olevel(&v(&["clang", "-c", "x.c"])), "-O0");
        assert_eq!(llc_olevel(&v(&["clang", "-O1", "-Os", "x.c"])), "-O2");
        assert_eq!(llc_olevel(&v(&["clang", "-Ofast"])), "-O3");
        assert_eq!(opt_default_level(&v(&["clang", "-O2", "-Os", "x.c"])), "Os");
        // `clang -###` shows `-O` as cc1's `-O1`; `-Og` is `-O1` to LLVM.
        assert_eq!(opt_default_level(&v(&["clang", "-O", "x.c"])), "O1");
        assert_eq!(opt_default_level(&v(&["clang", "-O3", "-Og", "x.c"])), "O1");
        assert_eq!(opt_default_level(&v(&["clang", "-Oz", "x.c"])), "Oz");
        assert_eq!(llc_olevel(&v(&["clang", "-Oz", "x.c"])), "-O2");
        assert_eq!(opt_default_level(&v(&["clang", "x.c"])), "O0");
        assert_eq!(
            count_lines("; RUN: llc\n\ndefine void @f() {\n  ret void\n}\n"),
            3
        );
    }
}
