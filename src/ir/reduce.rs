//! The stage's steps: IR → checked tool command → minimal pipeline → llvm-reduce → cuts →
//! verified `reduced.ll`.
//!
//! Why this exists: each step only keeps a change the signature oracle accepts, so the
//! result is known to crash the case's way. The cuts after llvm-reduce are what it cannot
//! make: the target attributes move from the IR to `-mcpu`/`-mattr` (LLVM's tests carry them
//! on the RUN line), where ddmin (the flags stage's [`minimize`]) keeps only the features the
//! crash needs; the triple is shortened to its architecture when that still crashes; the
//! datalayout goes when it is not needed; and `-O`/`-mcpu` go when they do not matter.

use std::path::{Path, PathBuf};
use std::sync::LazyLock;
use std::time::{Duration, Instant};

use regex::Regex;

use super::emit::{self, Tool};
use super::judge::{Judge, SMALL_STACK};
use super::start::start_ir;
use super::toolcmd::{count_lines, dropped_flags, feature_sets, take_target_attrs, ToolCmd};
use super::{crash_key, io, pipeline, IrError, IrSection, Options, OUTPUT};
use crate::case::Case;
use crate::crash::Symbolizer;
use crate::ddmin::{minimize, Tester};
use crate::exec::{self, Cmd};

static TRIPLE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r#"(?m)^target triple = "([^"]*)"\n?"#).expect("valid regex"));
static DATALAYOUT: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r#"(?m)^target datalayout = "[^"]*"\n?"#).expect("valid regex"));
static NOISE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"(?m)^(; ModuleID = .*|source_filename = .*)\n?"#).expect("valid regex")
});

/// The whole stage on a loaded case (see the module doc).
pub(super) fn run(
    dir: &Path,
    case: &Case,
    tool: Tool,
    opts: &Options,
    progress: &mut dyn FnMut(&str),
) -> Result<IrSection, IrError> {
    let scratch_parent = exec::scratch_dir();
    let _ = std::fs::create_dir_all(&scratch_parent);
    let scratch = tempfile::Builder::new()
        .prefix("ir-")
        .tempdir_in(&scratch_parent)
        .map_err(io(&scratch_parent))?;
    let work = scratch.path();
    let program = emit::tool_path(case, tool.name())?;
    let reducer = emit::tool_path(case, "llvm-reduce")?;
    let sym = Symbolizer::new(case.library_dirs());

    let start_path = work.join("start.ll");
    let (start, mut cmd) = start_ir(dir, case, tool, &program, &start_path, progress)?;
    let case_key = crash_key(&case.signature, tool);
    let mut judge = Judge {
        cwd: work,
        key: case_key.clone(),
        tool,
        sym: &sym,
        jobs: opts.jobs.max(1),
        timeout: opts.timeout,
        runs: std::cell::Cell::new(0),
        prefilter: None,
        deadline: std::cell::Cell::new(None),
        symbolize: true,
        shallow: None,
    };

    // 1. The tool on the IR as clang wrote it.
    check_reproduces(&mut judge, case, &cmd, opts, progress)?;

    // 2. Target attributes to the command line, the triple to -mtriple. The attribute
    // groups may differ (a function's own `target` attribute, `+avx512bw,-evex512`, beside
    // the module's defaults): each group's features are tried on the command line, the
    // first group's first, and -mattr's ddmin then cuts what the crash does not need.
    let (ir, mut note) = move_target_attrs(&judge, &start, &mut cmd)?;

    // 3 to 5. The minimal pipeline (opt), llvm-reduce and the cuts.
    let start_bytes = start.len();
    let llreduce = |quick| super::llvm_reduce::LlvmReduce {
        work,
        reducer: &reducer,
        key: &case_key,
        tool,
        library_dirs: case.library_dirs(),
        jobs: opts.jobs.max(1),
        timeout: opts.reduce_timeout,
        quick,
    };
    let reduced = reduce(&mut judge, case, (ir, cmd), &llreduce, opts, progress)?;
    let (ir, mut cmd, pass, deep_why) = (reduced.ir, reduced.cmd, reduced.pass, reduced.deep_why);
    if reduced.why.is_some() {
        note = reduced.why;
    }
    let reduce_tests = std::fs::metadata(work.join("oracle.json.count"))
        .map(|m| m.len() as usize)
        .unwrap_or(0);
    let not_needed = minimise_command(&judge, &ir, &mut cmd, progress)?;
    let found = Found {
        ir,
        cmd,
        pass,
        note,
        deep_why,
        not_needed,
        start_bytes,
        reduce_tests,
    };
    conclude(dir, &judge, found, opts, progress)
}

/// What steps 1 to 5 found: the reduced IR and its minimal command, the crashing pass as far
/// as they know it, and how they got there.
struct Found {
    ir: String,
    cmd: ToolCmd,
    pass: Option<String>,
    note: Option<String>,
    /// How a stack overflow's depth was kept, when it was.
    deep_why: Option<String>,
    not_needed: Vec<String>,
    start_bytes: usize,
    /// llvm-reduce's tool runs (the judge counts its own).
    reduce_tests: usize,
}

/// Steps 6 and 7: `reduced.ll` written with its RUN line and verified from the case
/// directory; for `opt`, the pass named a second way, by OptBisect on the reduced IR.
fn conclude(
    dir: &Path,
    judge: &Judge,
    found: Found,
    opts: &Options,
    progress: &mut dyn FnMut(&str),
) -> Result<IrSection, IrError> {
    let Found {
        ir,
        cmd,
        mut pass,
        mut note,
        deep_why,
        not_needed,
        start_bytes,
        reduce_tests,
    } = found;
    let run_line = cmd.run_line();
    let text = format!("{run_line}\n{}\n", ir.trim());
    crate::case::fileio::write(dir, OUTPUT, text.as_bytes())?;
    let final_argv = cmd.argv(OUTPUT);
    progress(&format!(
        "verifying `{}` {} times",
        final_argv.join(" "),
        opts.verify_runs
    ));
    let same = verify_final(dir, judge, &final_argv, opts.verify_runs);
    let pass_pipeline = cmd.passes.as_ref().and(pass.clone());
    let bisected = if same == opts.verify_runs && cmd.passes.is_some() {
        progress("naming the pass with -opt-bisect-limit");
        name_pass_by_bisect(judge, &cmd, &text, &mut pass, &mut note)?
    } else {
        None
    };
    if let Some(why) = deep_why {
        note = Some(match note {
            Some(x) => format!("{why}; {x}"),
            None => why,
        });
    }
    Ok(IrSection {
        tool: judge.tool.name().into(),
        command: final_argv,
        run_line,
        pass,
        pass_pipeline,
        pass_bisect: bisected.as_ref().map(|b| b.found.class.clone()),
        bisect_limit: bisected.as_ref().map(|b| b.found.limit),
        bisect_counted: bisected.as_ref().map(|b| b.found.counted),
        pipeline: cmd.passes.clone(),
        output: OUTPUT.into(),
        text: text.clone(),
        triple: cmd.triple.clone().unwrap_or_default(),
        mcpu: cmd.mcpu.clone(),
        mattr: cmd.mattr.clone(),
        not_needed,
        lines: count_lines(&text),
        bytes: text.len(),
        start_bytes,
        tests: judge.runs.get() + reduce_tests + opts.verify_runs as usize,
        seconds: 0.0,
        verified: same == opts.verify_runs,
        runs: opts.verify_runs,
        same,
        key: judge.key.clone(),
        note,
    })
}

/// What steps 3 to 5 give: the reduced IR and its command, the crashing pass as far as they
/// know it, and the notes on how (llvm-reduce's or the cuts', and the depth's).
struct Reduced {
    ir: String,
    cmd: ToolCmd,
    pass: Option<String>,
    why: Option<String>,
    deep_why: Option<String>,
}

/// Steps 3 to 5: the minimal pipeline (`opt`), llvm-reduce and the cuts; for a stack
/// overflow first under a small stack (3a), else with the inherited one.
fn reduce<'a>(
    judge: &mut Judge,
    case: &Case,
    (ir, cmd): (String, ToolCmd),
    llreduce: &dyn Fn(bool) -> super::llvm_reduce::LlvmReduce<'a>,
    opts: &Options,
    progress: &mut dyn FnMut(&str),
) -> Result<Reduced, IrError> {
    let mut pass = None;
    let tree = cmd.passes.as_deref().and_then(pipeline::parse);
    if cmd.passes.is_none() {
        pass = crate::crash::phase_as_printed(&case.crash)
            .filter(|_| !case.signature.phase.is_empty())
            .map(|_| case.signature.phase.clone());
    }
    let overflow = judge.tool == Tool::Opt && case.signature.kind == "stack_overflow";
    let mut deep_why = None;
    let mut shrunk = None;
    // 3a. A stack overflow in a pipeline that unrolls, reduced shallow: everything under the
    // smallest stack it overflows the case's way (one cheap run per test instead of a 1 MB
    // and an 8 MB run), with the unroller's budget raised and no bound multiplied; then one loop bound
    // of the reduced IR multiplied until it overflows the inherited stack. When that fails,
    // the stage starts again from the pipeline with the inherited stack.
    if let (true, Some(tree)) = (overflow, &tree) {
        if let Some((small_pass, deep, why)) =
            reduce_under_small_stack(judge, &ir, &cmd, tree, &llreduce(true), opts, progress)?
        {
            pass = small_pass;
            shrunk = Some(deep);
            deep_why = Some(why);
        }
    }
    let (got, got_cmd, why) = match shrunk {
        Some(s) => s,
        None => {
            let (s, minimal_pass, why) = reduce_with_inherited_stack(
                judge,
                (ir, cmd),
                tree.as_deref(),
                overflow,
                &llreduce(false),
                opts,
                progress,
            )?;
            if let Some(p) = minimal_pass {
                pass = p;
            }
            deep_why = why;
            s
        }
    };
    Ok(Reduced {
        ir: got,
        cmd: got_cmd,
        pass,
        why,
        deep_why,
    })
}

/// Step 3a: a stack overflow in a pipeline that unrolls, reduced shallow (everything under the
/// smallest stack it overflows the case's way, then one loop bound multiplied until it
/// overflows the inherited stack): the pass, the deepened IR and command, and the note
/// saying how. `None` when there is no such stack or the reduced IR does not deepen.
fn reduce_under_small_stack(
    judge: &mut Judge,
    ir: &str,
    cmd: &ToolCmd,
    tree: &[pipeline::Node],
    llreduce: &super::llvm_reduce::LlvmReduce,
    opts: &Options,
    progress: &mut dyn FnMut(&str),
) -> Result<Option<(Option<String>, Shrunk, String)>, IrError> {
    let Some(stack) = super::depth::shallow_stack(judge, ir, cmd)? else {
        return Ok(None);
    };
    progress(&format!(
        "reducing under a {} KB stack (the case's crash is a stack overflow); deepened for the inherited stack afterwards",
        stack >> 10
    ));
    let prefilter = judge.prefilter.take();
    judge.shallow = Some(stack);
    let got = shallow(judge, judge.cwd, ir, cmd, tree, llreduce, opts, progress);
    judge.shallow = None;
    judge.prefilter = prefilter;
    let Some(Shallow {
        pass: small_pass,
        shrunk: (small, small_cmd, why),
        nested,
    }) = got?
    else {
        return Ok(None);
    };
    let Some(d) = super::depth::deepen_reduced(judge, &small, &small_cmd)? else {
        progress(
            "the IR reduced under the small stack does not deepen to the case's crash; again with the inherited stack",
        );
        return Ok(None);
    };
    progress(&format!(
        "deepened for the inherited stack{}",
        d.scaled
            .as_ref()
            .map(|s| format!(": loop bound {s}"))
            .unwrap_or_default()
    ));
    let deep_why = format!(
        "stack overflow: reduced under a {} KB stack with the unroller's budget raised ({}){}, then {} for the inherited stack",
        stack >> 10,
        d.cmd.limits.join(" "),
        nested
            .map(|c| format!(", the unrolled recurrence rewritten as a two-loop nest ({c})"))
            .unwrap_or_default(),
        d.scaled
            .map(|s| format!("a loop bound multiplied ({s})"))
            .unwrap_or_else(|| "unchanged".into())
    );
    Ok(Some((small_pass, (d.ir, d.cmd, why), deep_why)))
}

/// Steps 3 to 5 with the inherited stack: the minimal pipeline (`opt`), for a stack
/// overflow the depth from a raised budget and a larger trip count (so that llvm-reduce can
/// delete the loops the depth no longer needs), then llvm-reduce and the cuts. Returns what
/// they shrank the IR to, the minimal pipeline's pass when there was a pipeline, and the
/// note on the depth.
#[allow(clippy::type_complexity)]
fn reduce_with_inherited_stack(
    judge: &Judge,
    (mut ir, mut cmd): (String, ToolCmd),
    tree: Option<&[pipeline::Node]>,
    overflow: bool,
    llreduce: &super::llvm_reduce::LlvmReduce,
    opts: &Options,
    progress: &mut dyn FnMut(&str),
) -> Result<(Shrunk, Option<Option<String>>, Option<String>), IrError> {
    let mut pass = None;
    if let Some(tree) = tree {
        let m = super::minimal::minimal(judge, judge.cwd, &ir, &cmd, tree, progress)?;
        (ir, cmd, pass) = (m.ir, m.cmd, Some(m.pass));
    }
    let mut deep_why = None;
    // 3b. The depth from a raised budget and a larger trip count, so that
    // llvm-reduce can delete the loops the depth no longer needs.
    if overflow {
        let d = super::depth::deepen(judge, &ir, &cmd)?;
        if d.cmd.limits != cmd.limits || d.scaled.is_some() {
            progress(&format!(
                "raised the budget ({}){}",
                d.cmd.limits.join(" "),
                d.scaled
                    .as_ref()
                    .map(|s| format!(", loop bound {s}"))
                    .unwrap_or_default()
            ));
        }
        deep_why = d.scaled.map(|s| {
            format!(
                "stack overflow: a loop bound multiplied ({s}) with the unroller's budget raised, so that llvm-reduce could delete the loops that only gave depth"
            )
        });
        ir = d.ir;
        cmd = d.cmd;
    }
    // 4 and 5.
    let shrunk = shrink(judge, llreduce, &ir, &cmd, opts, progress)?;
    Ok((shrunk, pass, deep_why))
}

/// Step 1: the tool on the start IR crashes the case's way. Sets the judge's symbolizing,
/// its timeout (from the first run's time) and, for a stack overflow, its small-stack
/// prefilter.
fn check_reproduces(
    judge: &mut Judge,
    case: &Case,
    cmd: &ToolCmd,
    opts: &Options,
    progress: &mut dyn FnMut(&str),
) -> Result<(), IrError> {
    let tool = judge.tool;
    progress(&format!(
        "checking that {} crashes the case's way",
        tool.name()
    ));
    let first = Cmd::new(&cmd.program)
        .args(&cmd.argv("start.ll")[1..])
        .cwd(judge.cwd)
        .timeout(opts.timeout)
        .output_cap(1 << 20);
    let out = exec::run(&first).map_err(|e| IrError::Io(e.to_string()))?;
    judge.runs.set(1);
    let not_reproduced = |why: String| IrError::NotReproduced {
        tool: tool.name().into(),
        why,
    };
    match emit::judge(&out, judge.sym) {
        None => {
            return Err(not_reproduced(format!(
                "`{}` did not crash ({:?}); the crash may need clang's own pass setup",
                cmd.argv("IR").join(" "),
                out.status
            )))
        }
        Some(s) if crash_key(&s, tool) != judge.key => {
            return Err(not_reproduced(format!(
                "it crashes as `{}`, the case as `{}`",
                crash_key(&s, tool),
                judge.key
            )))
        }
        Some(_) => {}
    }
    // Without the tool's own llvm-symbolizer (icepick names the frames from the ELF files):
    // kept when it reproduces and is faster. An llc crash takes about a third of the time
    // without it; a deep stack overflow's dladdr fallback costs more than the symbolizer, so
    // there it stays on.
    let t = Instant::now();
    judge.symbolize = false;
    let quiet = judge.run(&[cmd.argv("start.ll")], None);
    if !quiet[0].is_same() || t.elapsed() >= out.elapsed {
        judge.symbolize = true;
    }
    // Later runs: ten times the first, at least 10 s.
    judge.timeout = (out.elapsed * 10)
        .max(Duration::from_secs(10))
        .min(opts.timeout);
    // A stack overflow: can a small stack sort the candidates out first? Only when the
    // unreduced IR overflows it the case's way too.
    if case.signature.kind == "stack_overflow" {
        let small = judge.run(&[cmd.argv("start.ll")], Some(SMALL_STACK));
        if small[0].is_same() {
            progress(&format!(
                "candidates run first with a {} KB stack (the case's crash is a stack overflow)",
                SMALL_STACK >> 10
            ));
            judge.prefilter = Some(SMALL_STACK);
        }
    }
    Ok(())
}

/// Step 2: the IR's target attributes to the command line (`-mcpu`/`-mattr`), its triple to
/// `-mtriple`, when the crash survives it: the IR to go on with and a note when it did not.
fn move_target_attrs(
    judge: &Judge,
    start: &str,
    cmd: &mut ToolCmd,
) -> Result<(String, Option<String>), IrError> {
    let triple = TRIPLE.captures(start).map(|c| c[1].to_owned());
    let (stripped, cpu, _) = take_target_attrs(start);
    let stripped = TRIPLE.replace(&stripped, "").into_owned();
    let sets = feature_sets(start);
    let tried = sets.len().max(1);
    let mut ir = start.to_owned();
    let mut note = None;
    let mut moved_ok = false;
    for features in sets
        .into_iter()
        .chain(std::iter::once(Vec::new()))
        .take(tried)
    {
        let mut moved = cmd.clone();
        // A given llc/opt command's own -mtriple/-mcpu/-mattr stay; the IR's add to them.
        moved.triple = triple.clone().or(cmd.triple.clone());
        moved.mcpu = cpu.clone().or(cmd.mcpu.clone());
        for f in features {
            if !moved.mattr.contains(&f) {
                moved.mattr.push(f);
            }
        }
        if judge.ir_crashes("moved.ll", &stripped, &moved)? {
            ir = stripped.clone();
            *cmd = moved;
            moved_ok = true;
            break;
        }
    }
    if !moved_ok {
        // The IR keeps its attributes and its triple; the RUN line names the triple too, so
        // it does not depend on the host it runs on.
        cmd.triple = triple.clone().or(cmd.triple.clone());
        note = Some(if tried > 1 {
            format!("the target attributes stay in the IR: with each of its {tried} attribute groups' features moved to -mcpu/-mattr, the crash is lost")
        } else {
            "the target attributes stay in the IR: moved to -mcpu/-mattr, the crash is lost"
                .to_owned()
        });
    }
    Ok((ir, note))
}

/// The command's parts the reduced IR does without: the pipeline's adaptors and
/// parameters, the budget flags, then (ddmin) target features, `-mcpu` and `-O`. Returns
/// the job's flags that were dropped.
fn minimise_command(
    judge: &Judge,
    ir: &str,
    cmd: &mut ToolCmd,
    progress: &mut dyn FnMut(&str),
) -> Result<Vec<String>, IrError> {
    // The adaptors and parameters the reduced IR does without.
    let tidy = super::minimal::tidied(judge, ir, cmd)?;
    if tidy.passes != cmd.passes {
        progress(&format!(
            "the pipeline on the reduced IR: `{}`",
            tidy.passes.as_deref().unwrap_or("")
        ));
        *cmd = tidy;
    }
    // The budget flags stay only when the reduced IR needs them.
    if !cmd.limits.is_empty() {
        let mut c = cmd.clone();
        c.limits.clear();
        if judge.ir_crashes("cut.ll", ir, &c)? {
            *cmd = c;
        }
    }
    // ddmin over the features, -mcpu and -O.
    std::fs::write(judge.cwd.join("cut.ll"), ir).map_err(io(judge.cwd))?;
    let mut not_needed = Vec::new();
    let nfeat = cmd.mattr.len();
    let has_cpu = cmd.mcpu.is_some();
    let has_o = cmd.olevel.is_some();
    let n = nfeat + usize::from(has_cpu) + usize::from(has_o);
    if n > 0 {
        let base = cmd.clone();
        let rebuild = |kept: &[usize]| {
            let mut c = base.clone();
            c.mattr = kept
                .iter()
                .filter(|&&i| i < nfeat)
                .map(|&i| base.mattr[i].clone())
                .collect();
            if has_cpu && !kept.contains(&nfeat) {
                c.mcpu = None;
            }
            if has_o && !kept.contains(&(nfeat + usize::from(has_cpu))) {
                c.olevel = None;
            }
            c
        };
        let build = |kept: &[usize]| rebuild(kept).argv("cut.ll");
        let oracle = |argvs: &[Vec<String>]| judge.outcomes(argvs);
        let mut t = Tester::new(&oracle);
        progress(&format!("minimising {nfeat} target features, -mcpu and -O"));
        let kept = minimize(n, &build, &mut t);
        *cmd = rebuild(&kept);
        not_needed = dropped_flags(&base, cmd);
    }
    Ok(not_needed)
}

/// Step 6's check: how many of `runs` runs of the final command, from the case directory,
/// crash the case's way.
fn verify_final(dir: &Path, judge: &Judge, final_argv: &[String], runs: u32) -> u32 {
    let verify = Judge {
        cwd: dir,
        key: judge.key.clone(),
        tool: judge.tool,
        sym: judge.sym,
        jobs: judge.jobs,
        timeout: judge.timeout,
        runs: std::cell::Cell::new(0),
        prefilter: None,
        deadline: std::cell::Cell::new(None),
        symbolize: judge.symbolize,
        shallow: None,
    };
    let mut same = 0;
    for _ in 0..runs {
        if verify.outcomes(&[final_argv.to_vec()])[0].is_same() {
            same += 1;
        }
    }
    same
}

/// Step 7 (`opt`): the pass named a second way, by OptBisect on the reduced IR; a name that
/// differs from the minimal pipeline's last pass replaces it, with a note saying why.
fn name_pass_by_bisect(
    judge: &Judge,
    cmd: &ToolCmd,
    text: &str,
    pass: &mut Option<String>,
    note: &mut Option<String>,
) -> Result<Option<super::bisect::CrossCheck>, IrError> {
    let work = judge.cwd;
    std::fs::write(work.join("bisect.ll"), text).map_err(io(work))?;
    let bisected = super::bisect::cross_check(judge, cmd, "bisect.ll");
    match &bisected {
        Some(b) => {
            if let Some(n) = &b.name {
                if pass.as_deref() != Some(n.as_str()) {
                    let why = format!(
                        "OptBisect names `{n}` ({}, pass {} of {}), the minimal pipeline ends in `{}`: that pass is needed, not where the crash happens (an adaptor runs its passes loop by loop or SCC by SCC)",
                        b.found.class,
                        b.found.limit,
                        b.found.counted,
                        pass.as_deref().unwrap_or("")
                    );
                    *note = Some(match note.take() {
                        Some(x) => format!("{x}; {why}"),
                        None => why,
                    });
                }
                *pass = Some(n.clone());
            }
        }
        None => {
            let why = "-opt-bisect-limit did not find the crashing pass";
            *note = Some(match note.take() {
                Some(x) => format!("{x}; {why}"),
                None => why.to_owned(),
            });
        }
    }
    Ok(bisected)
}

/// What [`shrink`] gives: the IR, its command, and a note when llvm-reduce or the cuts
/// stopped early.
type Shrunk = (String, ToolCmd, Option<String>);

/// What step 3a ([`shallow`]) gives: the pass, the shrunk IR, and the line change of the
/// recurrence's two-loop nest when it was kept.
struct Shallow {
    pass: Option<String>,
    shrunk: Shrunk,
    nested: Option<String>,
}

/// Step 3a under the judge's small stack: the minimal pipeline, the budget raised (`None`
/// when no flag applies or the crash needs the budget as it is), llvm-reduce's quick round
/// and the cuts, then the recurrence's two-loop nest ([`super::depth::nested`]). The pass, the
/// IR, its command, [`shrink`]'s note, and the nest's line change when it was kept.
#[allow(clippy::too_many_arguments)]
fn shallow(
    judge: &Judge,
    work: &Path,
    ir: &str,
    cmd: &ToolCmd,
    tree: &[pipeline::Node],
    llreduce: &super::llvm_reduce::LlvmReduce,
    opts: &Options,
    progress: &mut dyn FnMut(&str),
) -> Result<Option<Shallow>, IrError> {
    let m = super::minimal::minimal(judge, work, ir, cmd, tree, progress)?;
    let Some(raised) = super::depth::raised(judge, &m.ir, &m.cmd)? else {
        return Ok(None);
    };
    progress(&format!("raised the budget ({})", raised.limits.join(" ")));
    // The nest first, on the IR as the pipeline's head left it: when it keeps the crash,
    // llvm-reduce and the cuts then work on a dozen lines (the rewrite shortens the IR they
    // have to walk, in a few tests where llvm-reduce would take most of a minute); else again
    // after them.
    let mut nested = None;
    let mut try_nest =
        |ir: &str, progress: &mut dyn FnMut(&str)| -> Result<Option<String>, IrError> {
            progress("rewriting the unrolled recurrence as a two-loop nest");
            let Some(n) = super::depth::nested(judge, ir, &raised)? else {
                return Ok(None);
            };
            let change = format!("{} → {} lines", count_lines(ir), count_lines(&n));
            progress(&format!(
                "the recurrence's two-loop nest keeps the crash: {change}"
            ));
            nested = Some(change);
            Ok(Some(n))
        };
    let early = try_nest(&m.ir, progress)?;
    let start = early.as_deref().unwrap_or(&m.ir);
    let (mut ir, cmd, why) = shrink(judge, llreduce, start, &raised, opts, progress)?;
    if early.is_none() {
        if let Some(n) = try_nest(&ir, progress)? {
            ir = n;
        }
    }
    Ok(Some(Shallow {
        pass: m.pass,
        shrunk: (ir, cmd, why),
        nested,
    }))
}

/// Steps 4 and 5: llvm-reduce with icepick's oracle, then the cuts it does not make. The
/// reduced IR, its command, and a note when llvm-reduce or the cuts stopped early.
fn shrink(
    judge: &Judge,
    llreduce: &super::llvm_reduce::LlvmReduce,
    ir: &str,
    cmd: &ToolCmd,
    opts: &Options,
    progress: &mut dyn FnMut(&str),
) -> Result<Shrunk, IrError> {
    let mut cmd = cmd.clone();
    let (mut ir, mut note) = llreduce.run(judge, &cmd, ir, progress)?;
    progress("cutting the datalayout, the triple and the tool's flags");
    let no_noise = NOISE.replace_all(&ir, "").into_owned();
    if judge.ir_crashes("cut.ll", &no_noise, &cmd)? {
        ir = no_noise;
    }
    let no_dl = DATALAYOUT.replace_all(&ir, "").into_owned();
    if no_dl != ir && judge.ir_crashes("cut.ll", &no_dl, &cmd)? {
        ir = no_dl;
    }
    if let Some(t) = cmd.triple.clone() {
        let arch = t.split('-').next().unwrap_or(&t).to_owned();
        if arch != t {
            let mut c = cmd.clone();
            c.triple = Some(arch);
            if judge.ir_crashes("cut.ll", &ir, &c)? {
                cmd = c;
            }
        }
    }
    progress("cutting lines, debug-info fields and optional words");
    judge
        .deadline
        .set(Some(Instant::now() + opts.reduce_timeout));
    ir = judge.cuts(&ir, &cmd);
    if judge.deadline.get().is_some_and(|d| Instant::now() >= d) {
        let why = format!(
            "the textual cuts stopped after {} s (--reduce-timeout); what they had is kept",
            opts.reduce_timeout.as_secs()
        );
        note = Some(match note {
            Some(n) => format!("{n}; {why}"),
            None => why,
        });
    }
    judge.deadline.set(None);
    Ok((ir, cmd, note))
}

/// Counts one oracle run next to its spec (llvm-reduce's tests are counted this way).
pub(super) fn count_oracle_run(spec: &Path) {
    use std::io::Write;
    let mut p = PathBuf::from(spec);
    p.as_mut_os_string().push(".count");
    if let Ok(mut f) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(p)
    {
        let _ = f.write_all(b".");
    }
}
