//! Step 0 of the ir stage: the IR it starts from and the tool's command on it. For a case
//! that is itself an `llc`/`opt` crash, the case's own input and command; else the job's IR
//! as clang emits it (optimised for `llc`, before any pass with clang's pipeline for `opt`).

use std::path::Path;
use std::time::Duration;

use super::emit::{self, Tool};
use super::toolcmd::{from_command, llc_olevel, opt_default_level, ToolCmd};
use super::{io, IrError};
use crate::case::Case;
use crate::exec::{self, Cmd};

/// The IR the stage starts from and the tool's command on it: the case's own for an
/// `llc`/`opt` case, else the job's IR as clang emits it (optimised for `llc`, before any
/// pass with clang's pipeline for `opt`).
pub(super) fn start_ir(
    dir: &Path,
    case: &Case,
    tool: Tool,
    program: &Path,
    start_path: &Path,
    progress: &mut dyn FnMut(&str),
) -> Result<(String, ToolCmd), IrError> {
    let middle = tool == Tool::Opt;
    Ok(if case.is_llvm_tool() {
        progress("the case's own IR and command");
        given_ir(dir, case, tool, program, start_path)?
    } else {
        progress(&format!(
            "emitting the job's IR ({}) with {}",
            if middle {
                "before any pass"
            } else {
                "optimised"
            },
            case.compiler.path
        ));
        emit::emit(dir, case, start_path, middle)?;
        let start = std::fs::read_to_string(start_path).map_err(io(start_path))?;
        let passes = if middle {
            Some(middle_end_pipeline(dir, case, program, start_path)?)
        } else {
            None
        };
        let cmd = ToolCmd {
            tool,
            program: program.display().to_string(),
            triple: None,
            mcpu: None,
            mattr: Vec::new(),
            olevel: (!middle).then(|| llc_olevel(&case.replay_command)),
            passes,
            limits: Vec::new(),
            extra: Vec::new(),
        };
        (start, cmd)
    })
}

/// The pass pipeline the job runs, as clang prints it. A clang that does not print it
/// (clang 14 ignores `-print-pipeline-passes`) gets the one its own `opt` prints for the
/// job's `-O` level, which differs from clang's only in options the crash is then checked
/// against (step 1 of the stage).
fn middle_end_pipeline(dir: &Path, case: &Case, opt: &Path, ir: &Path) -> Result<String, IrError> {
    emit::clang_pipeline(dir, case).or_else(|e| {
        let level = opt_default_level(&case.replay_command);
        opt_pipeline(opt, level, ir).ok_or(e)
    })
}

/// The IR and command of a case that is itself an `llc`/`opt` crash: its input (bitcode read
/// back as text with the same LLVM's `llvm-dis`) written to `start_path`, and its replay
/// command as a [`ToolCmd`]. An `opt -O2` becomes the pipeline that level runs, printed by
/// opt itself, so the minimal-pipeline step can cut it.
fn given_ir(
    dir: &Path,
    case: &Case,
    tool: Tool,
    program: &Path,
    start_path: &Path,
) -> Result<(String, ToolCmd), IrError> {
    let input = dir.join(&case.input);
    // Read inside the case only (no link, no special file), like every case file.
    let bytes = crate::case::fileio::read_existing(dir, &case.input, 1 << 30)?;
    if std::str::from_utf8(&bytes).is_ok() {
        std::fs::write(start_path, &bytes).map_err(io(start_path))?;
    } else {
        let dis = emit::tool_path(case, "llvm-dis")?;
        let c = Cmd::new(&dis)
            .args([input.as_os_str(), "-o".as_ref(), start_path.as_os_str()])
            .timeout(Duration::from_secs(120));
        let o = exec::run(&c).map_err(|e| IrError::Io(e.to_string()))?;
        if !o.success() {
            return Err(IrError::Emit(format!(
                "llvm-dis could not read {}: {}",
                case.input,
                exec::one_line(&o.stderr_text(), 300)
            )));
        }
    }
    let start = std::fs::read_to_string(start_path).map_err(io(start_path))?;
    let mut cmd = from_command(tool, program.display().to_string(), &case.replay_command);
    if let Some(level) = cmd
        .passes
        .as_deref()
        .and_then(|p| p.strip_prefix("default<"))
    {
        let level = level.trim_end_matches('>');
        if let Some(full) = opt_pipeline(program, level, start_path) {
            cmd.passes = Some(full);
        }
    }
    Ok((start, cmd))
}

/// The pipeline `opt -passes=default<LEVEL>` runs, as opt prints it.
fn opt_pipeline(program: &Path, level: &str, ir: &Path) -> Option<String> {
    let c = Cmd::new(program)
        .args([
            format!("-passes=default<{level}>"),
            "-print-pipeline-passes".into(),
            "-disable-output".into(),
            ir.display().to_string(),
        ])
        .timeout(Duration::from_secs(60))
        .output_cap(1 << 20);
    let o = exec::run(&c).ok()?;
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.contains(' '))
        .map(str::to_owned)
}
