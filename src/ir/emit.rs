//! Getting the IR out of the case's crashing job, and running `llc`/`opt` on it.
//!
//! Why this exists: the IR must be what the crashing pass saw, made by the clang that
//! crashed. For a codegen crash that is the optimised IR (`-S -emit-llvm`, same `-O`), fed to
//! `llc` with the job's triple, CPU and features; for a middle-end crash the IR before any
//! pass (`-Xclang -disable-llvm-passes`), fed to `opt` with the pipeline clang itself prints
//! for the job (`-mllvm -print-pipeline-passes`: clang adds passes `-O2` alone does not, such
//! as `declare-to-assign` under `-g`). The tools are the ones next to the case's clang.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::IrError;
use crate::case::Case;
use crate::crash::{self, Signature, Symbolizer};
use crate::exec::{self, Cmd, Status};

/// Which LLVM tool reproduces the crash.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Tool {
    Llc,
    Opt,
}

impl Tool {
    pub fn name(self) -> &'static str {
        match self {
            Tool::Llc => "llc",
            Tool::Opt => "opt",
        }
    }
}

/// The major version in `clang version 19.1.7 (…)`.
fn major(version: &str) -> String {
    version
        .split("version ")
        .nth(1)
        .and_then(|v| v.split('.').next())
        .unwrap_or("")
        .to_owned()
}

/// `name` (llc, opt, llvm-reduce) of the case's LLVM: next to its clang, else `name-MAJOR`
/// on PATH.
pub fn tool_path(case: &Case, name: &str) -> Result<PathBuf, IrError> {
    let resolved = Path::new(&case.compiler.resolved_path);
    if let Some(dir) = resolved.parent() {
        let p = dir.join(name);
        if p.is_file() {
            return Ok(p);
        }
    }
    let major = major(&case.compiler.version);
    if !major.is_empty() {
        if let Some(p) = exec::which(&format!("{name}-{major}"), Path::new(".")) {
            return Ok(p);
        }
    }
    Err(IrError::NoTool {
        tool: name.to_owned(),
        compiler: case.compiler.resolved_path.clone(),
        major,
    })
}

/// Is this a `clang -cc1` command?
fn is_cc1(argv: &[String]) -> bool {
    argv.get(1).is_some_and(|a| a == "-cc1")
}

/// The replay command without its output and action (`-o X`, `-c`, `-S`, `-emit-obj` …).
fn without_output(argv: &[String]) -> Vec<String> {
    let mut out = Vec::with_capacity(argv.len());
    let mut it = argv.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "-o" => {
                it.next();
            }
            "-c" | "-S" | "-E" | "-emit-llvm" | "-emit-obj" | "-emit-llvm-bc" | "-fsyntax-only" => {
            }
            _ if a.starts_with("-o") && a.len() > 2 && !a.starts_with("-obj") => {}
            _ => out.push(a.clone()),
        }
    }
    out
}

/// The clang command that writes the job's IR to `out`: optimised (`before_passes` false)
/// or as IR generation left it.
pub fn emit_argv(case: &Case, out: &Path, before_passes: bool) -> Vec<String> {
    let argv = &case.replay_command;
    let mut v = without_output(argv);
    let cc1 = is_cc1(argv);
    // Options go before the input (the last argument).
    let input = v.pop().unwrap_or_default();
    if cc1 {
        v.push("-emit-llvm".into());
        if before_passes {
            v.push("-disable-llvm-passes".into());
        }
    } else {
        v.extend(["-S", "-emit-llvm", "-w"].map(String::from));
        if before_passes {
            v.extend(["-Xclang", "-disable-llvm-passes"].map(String::from));
        }
        // One job only: the crashing one.
        let has = |f: &[&str]| argv.iter().any(|a| f.contains(&a.as_str()));
        match case.job.kind.as_str() {
            "host" if !has(&["--cuda-host-only", "--offload-host-only"]) => {
                v.push("--offload-host-only".into())
            }
            "device" if !has(&["--cuda-device-only", "--offload-device-only"]) => {
                v.push("--offload-device-only".into());
                if let Some(a) = &case.job.offload_arch {
                    v.push(format!("--offload-arch={a}"));
                }
            }
            _ => {}
        }
    }
    v.push("-o".into());
    v.push(out.display().to_string());
    v.push(input);
    v
}

/// Runs clang (as the case runs it) in the case directory; `Err` with its last lines when it
/// did not write `out`.
pub fn emit(dir: &Path, case: &Case, out: &Path, before_passes: bool) -> Result<(), IrError> {
    let argv = case.host_argv(&emit_argv(case, out, before_passes));
    let cmd = Cmd::new(&argv[0])
        .args(&argv[1..])
        .cwd(dir)
        .timeout(Duration::from_secs(600))
        .output_cap(1 << 20);
    let o = exec::run(&cmd).map_err(|e| IrError::Emit(e.to_string()))?;
    if o.success() && out.is_file() {
        return Ok(());
    }
    let text = o.stderr_text();
    let first = text
        .lines()
        .find(|l| l.contains("error") || l.contains("LLVM ERROR"))
        .unwrap_or("no output");
    Err(IrError::Emit(format!(
        "`{}` failed ({:?}): {}",
        argv.join(" "),
        o.status,
        exec::one_line(first, 300)
    )))
}

/// The optimisation pipeline clang runs for the job, as it prints it with
/// `-mllvm -print-pipeline-passes` (printed before it runs, so the crash does not lose it).
pub fn clang_pipeline(dir: &Path, case: &Case) -> Result<String, IrError> {
    let mut v = case.replay_command.clone();
    let input = v.pop().unwrap_or_default();
    v.extend(["-mllvm", "-print-pipeline-passes"].map(String::from));
    if !is_cc1(&v) {
        v.push("-w".into());
    }
    v.push(input);
    let argv = case.host_argv(&v);
    let cmd = Cmd::new(&argv[0])
        .args(&argv[1..])
        .cwd(dir)
        .timeout(Duration::from_secs(600))
        .output_cap(1 << 20);
    let o = exec::run(&cmd).map_err(|e| IrError::Emit(e.to_string()))?;
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.contains(' '))
        .map(str::to_owned)
        .ok_or_else(|| IrError::Emit("clang printed no pass pipeline".into()))
}

/// Runs a tool (with `stack_limit`, [`Cmd::stack_limit`]); `Some(signature)` when it crashed
/// (parsed, symbolized).
pub fn run_tool(
    argv: &[String],
    cwd: Option<&Path>,
    timeout: Duration,
    stack_limit: Option<u64>,
    sym: &Symbolizer,
    symbolize: bool,
) -> Option<Signature> {
    let mut cmd = Cmd::new(&argv[0])
        .args(&argv[1..])
        .timeout(timeout)
        .output_cap(1 << 20);
    cmd.stack_limit = stack_limit;
    cmd = crate::executor::compiler_env(cmd, symbolize);
    if let Some(d) = cwd {
        cmd = cmd.cwd(d);
    }
    let out = exec::run(&cmd).ok()?;
    judge(&out, sym)
}

/// The signature of a finished tool run, when it crashed.
pub fn judge(out: &exec::Output, sym: &Symbolizer) -> Option<Signature> {
    if matches!(out.status, Status::TimedOut | Status::Cancelled) {
        return None;
    }
    let mut c = crash::parse(&out.stderr_text(), out.status.exit_info())?;
    sym.symbolize(&mut c);
    Some(crash::signature(&c))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn output_and_action_go() {
        assert_eq!(
            without_output(&s(&[
                "clang",
                "-c",
                "-O2",
                "-o",
                "/dev/null",
                "-ofoo",
                "x.i"
            ])),
            s(&["clang", "-O2", "x.i"])
        );
    }

    #[test]
    fn major_of_version_line() {
        assert_eq!(major("Debian clang version 19.1.7 (3)"), "19");
        assert_eq!(major("nonsense"), "");
    }
}
