//! The minimal pipeline of an `opt` crash, and the IR just before the pass that crashes.
//!
//! Why this exists: clang's `-O2` pipeline is 122 passes and adaptors; ddmin keeps the passes
//! the crash needs, the adaptors and parameters it can do without go, and the pipeline is
//! split where the IR its head writes still crashes under its tail alone (so a later test runs
//! only the tail, e.g. `loop(indvars,loop-unroll-full)`, on IR the head already simplified). Kept apart from the stage's
//! other steps ([`super::reduce`]) so that it can run twice: first under a small stack for a
//! stack overflow (cheap tests), again with the inherited stack when that result does not
//! crash there.

use std::path::Path;

use super::judge::Judge;
use super::toolcmd::{take_target_attrs, ToolCmd};
use super::{io, pipeline, IrError};
use crate::ddmin::{minimize, Tester};
use crate::exec::{self, Cmd};

/// What [`minimal`] found.
pub(super) struct Minimal {
    /// The IR the tail of the pipeline runs on (the input when the pipeline was not split).
    pub ir: String,
    /// The command with the minimal pipeline (its tail, when split).
    pub cmd: ToolCmd,
    /// The last pass of the minimal pipeline.
    pub pass: Option<String>,
}

/// The minimal pipeline of `tree` (`cmd`'s pipeline) that still crashes on `ir`, split where
/// its head's output crashes under its tail alone.
pub(super) fn minimal(
    judge: &Judge,
    work: &Path,
    ir: &str,
    cmd: &ToolCmd,
    tree: &[pipeline::Node],
    progress: &mut dyn FnMut(&str),
) -> Result<Minimal, IrError> {
    let mut ir = ir.to_owned();
    let mut cmd = cmd.clone();
    progress(&format!(
        "minimising the {}-pass pipeline",
        pipeline::count(tree)
    ));
    std::fs::write(work.join("pipe.ll"), &ir).map_err(io(work))?;
    let base = cmd.clone();
    let build = |kept: &[usize]| {
        let mut c = base.clone();
        c.passes = Some(pipeline::render(&pipeline::keep(tree, kept)));
        c.argv("pipe.ll")
    };
    let oracle = |argvs: &[Vec<String>]| judge.outcomes(argvs);
    let mut t = Tester::new(&oracle);
    let kept = minimize(pipeline::count(tree), &build, &mut t);
    let min = unwrapped(judge, "pipe.ll", &base, pipeline::keep(tree, &kept));
    let pass = pipeline::crashing_pass(&min);
    cmd.passes = Some(pipeline::render(&min));
    // The IR just before the crash: the shortest tail of the pipeline that still
    // crashes on what its head writes (each llvm-reduce test then runs only that tail, on IR
    // the earlier passes already simplified).
    for at in (1..pipeline::passes(&min)).rev() {
        let Some((head, tail)) = pipeline::split_at(&min, at) else {
            continue;
        };
        let mut h = cmd.clone();
        h.passes = Some(pipeline::render(&head));
        let mut argv = h.argv("pipe.ll");
        argv.pop(); // -disable-output
        argv.extend(["-S", "-o", "head.ll"].map(String::from));
        let run = Cmd::new(&argv[0])
            .args(&argv[1..])
            .cwd(work)
            .timeout(judge.timeout)
            .output_cap(1 << 20);
        let _ = std::fs::remove_file(work.join("head.ll"));
        let wrote = exec::run(&run).is_ok_and(|o| o.success());
        let Ok(mid) = std::fs::read_to_string(work.join("head.ll")) else {
            continue;
        };
        let mut t = cmd.clone();
        t.passes = Some(pipeline::render(&tail));
        // opt writes the command line's -mcpu/-mattr into the functions it prints:
        // they move back to the command line.
        let bare = take_target_attrs(&mid).0;
        let mid = if bare != mid && wrote && judge.ir_crashes("tail.ll", &bare, &t)? {
            bare
        } else {
            mid
        };
        if wrote && judge.ir_crashes("tail.ll", &mid, &t)? {
            progress(&format!(
                "the IR after `{}` crashes under `{}` alone",
                pipeline::render(&head),
                pipeline::render(&tail)
            ));
            ir = mid;
            cmd = t;
            break;
        }
    }
    Ok(Minimal { ir, cmd, pass })
}

/// `min` (the pipeline of `base`) without the parameters and the adaptors it can do without
/// (their passes kept in place), each kept only when `base` with it still crashes on `file`
/// in the judge's directory: ddmin cannot drop an adaptor and keep what it holds. All
/// parameters at once first (one test), else unit by unit.
fn unwrapped(
    judge: &Judge,
    file: &str,
    base: &ToolCmd,
    mut min: Vec<pipeline::Node>,
) -> Vec<pipeline::Node> {
    let crashes = |nodes: &[pipeline::Node]| {
        let mut c = base.clone();
        c.passes = Some(pipeline::render(nodes));
        judge.outcomes(&[c.argv(file)])[0].is_same()
    };
    let bare = pipeline::without_params(&min);
    if bare != min && crashes(&bare) {
        min = bare;
    }
    // Unit by unit: each adaptor unwrapped, each unit's parameters dropped (a no-op, not
    // tested, once all went at once), until neither keeps the crash
    // (`devirt<4>(function<eager-inv;no-rerun>(loop(…)))` needs the `no-rerun` gone before
    // the `devirt<4>` can go).
    let mut i = 0;
    while i < pipeline::count(&min) {
        let cands = [
            pipeline::unwrap_at(&min, i),
            pipeline::without_params_at(&min, i),
        ];
        match cands.into_iter().find(|c| *c != min && crashes(c)) {
            Some(c) => {
                min = c;
                i = 0;
            }
            None => i += 1,
        }
    }
    min
}

/// `cmd`'s pipeline with the adaptors and parameters the *reduced* IR can do without
/// ([`unwrapped`]): on clang's IR they may be needed (`devirt<4>(function<eager-inv;no-rerun>(…))`),
/// on the reduced IR often not (`indvars,loop-unroll-full`, opt adding the adaptors, as
/// upstream RUN lines write it). `cmd`
/// unchanged when it runs no pipeline.
pub(super) fn tidied(judge: &Judge, ir: &str, cmd: &ToolCmd) -> Result<ToolCmd, IrError> {
    let Some(tree) = cmd.passes.as_deref().and_then(pipeline::parse) else {
        return Ok(cmd.clone());
    };
    let path = judge.cwd.join("tidy.ll");
    std::fs::write(&path, ir).map_err(io(&path))?;
    let min = unwrapped(judge, "tidy.ll", cmd, tree);
    let mut c = cmd.clone();
    c.passes = Some(pipeline::render(&min));
    Ok(c)
}
