//! Capture of a crash in a link's LTO step: rerun the link in scratch with its inputs copied
//! there and `save-temps` on, take the module the crashing step was working on, and make
//! the case an `llc`/`opt` case on that module ([`tool::capture_tool`]), with a `link`
//! section that keeps the link, its inputs and how the module was got. What is read from
//! the commands and the output is in [`lto`]; this module runs them.
//!
//! The build's directory stays as it was: the inputs are copied (a ThinLTO backend writes its
//! save-temps beside its input), the output goes into scratch.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use super::link_sources;
use super::lto::{self, Saved};
use super::tool::{self, Found, LinkFound};
use super::{CaptureError, Outcome, Runner};
use crate::case::flags::Outcome as Candidate;
use crate::case::link::{LinkInfo, LinkInput, LinkSources};
use crate::command::CompilerCommand;
use crate::crash;
use crate::ddmin::Tester;
use crate::exec::{Cmd, ExecError};

/// Captures a link whose LTO step crashed in its first run (`f`: that run, on the command as
/// the build gave it).
pub(super) fn capture_link(
    req: &super::Request,
    runner: &mut Runner,
    f: Found<'_>,
    progress: &mut dyn FnMut(&str),
) -> Result<Outcome, CaptureError> {
    progress("the linker crashed: rerunning the link with save-temps for its LTO module");
    let scratch = super::scratch_for(&f.command.program)?;
    // The reruns write nothing where the build's link would: its side outputs go to scratch
    // or are dropped.
    let quiet = lto::without_linker_side_outputs(
        &f.command
            .without_side_outputs(&crate::command::Sink::Dir(scratch.path())),
    );
    let (staged, inputs) = stage_inputs(&quiet, &req.cwd, scratch.path())?;
    let out_dir = scratch.path().join("out");
    std::fs::create_dir_all(&out_dir).map_err(|e| scratch_error(&out_dir, e))?;
    let out = out_dir.join("a.out");
    let out_name = out.to_string_lossy().into_owned();
    let mut extra = lto::save_temps_args(&f.command);
    // The offload wrapper writes its save-temps into its working directory: that rerun runs
    // in scratch (its inputs and output are absolute paths there).
    let wrapper =
        lto::crashed_linker_argv(&f.crash).is_some_and(|a| lto::is_offload_wrapper(&a[0]));
    let run_dir = scratch.path().join("cwd");
    if wrapper {
        extra.push("-save-temps=obj".into());
    }
    let extra = as_strs(&extra);
    let tmp = scratch.path().join("tmp");
    for d in [&tmp, &run_dir] {
        std::fs::create_dir_all(d).map_err(|e| scratch_error(d, e))?;
    }
    let rerun = runner.run_with_tmpdir(
        &with_link_args(&staged, &extra).with_output(&out_name),
        wrapper.then_some(run_dir.as_path()),
        Some(&tmp),
    )?;
    let rerun_signature = rerun.signature;
    let Some(link_crash) = rerun.crash else {
        return Err(lost(format!(
            "the link did not crash when rerun with save-temps ({})",
            super::first_line(&rerun.output)
        )));
    };
    let files = files_by_age(scratch.path());
    // The crash's own program line names the linker that crashed (a device link's, not the
    // host's) and the options it got; without one, the driver's listing says.
    let linker_argv = match lto::crashed_linker_argv(&link_crash) {
        Some(argv) => argv,
        None => linker_argv(runner, &f.command)?,
    };
    let module = lto::crashing_module(&link_crash);
    let saved = lto::pick_saved(&files, &out_name, module.as_deref()).ok_or_else(|| {
        lost(format!(
            "the link crashed again, but wrote no LTO module of the crashing step (module {}); \
             is it an LTO link (-flto) through lld, gold or the LLVM gold plugin?",
            module.as_deref().unwrap_or("not named")
        ))
    })?;
    let mut options = lto::lto_options(linker_argv.get(1..).unwrap_or_default());
    options.lld = linker_argv.first().is_some_and(|l| lto::is_lld(l));
    let bindir = llvm_bindir(&linker_argv, f.resolved, &saved).ok_or_else(|| {
        lost(format!(
            "the crash is in LTO's {}, but no {} was found beside the linker or the compiler; \
             install LLVM's tools (llvm-19 for clang 19)",
            saved.step.name(),
            tool_name(&saved)
        ))
    })?;
    let ir = lto::ir_command(&bindir.to_string_lossy(), &saved, &options, &saved.file);
    progress(&format!("running {}", ir.to_shell()));
    let ir_run = runner.run(&ir, None)?;
    let (Some(ir_crash), Some(ir_sig)) = (ir_run.crash, ir_run.signature) else {
        return Err(lost(format!(
            "the LTO module does not crash under `{}` ({})",
            ir.to_shell(),
            super::first_line(&ir_run.output)
        )));
    };
    // A link may print no stack: the gold plugin installs no crash handler, and a crash in a
    // ThinLTO backend's thread has none (LLVM's alternate signal stack is the main
    // thread's). Then its kind and message, or nothing, are what the IR command can match.
    let stackless = link_crash.frames.is_empty();
    let user_sig = f.signature;
    // ThinLTO backends that crash at once garble each other's message, so the user's run may
    // not say the same twice. The links icepick runs from here on (the search for the needed
    // inputs, the source test) run the backends one at a time, and are judged against such a
    // link's signature.
    let serial = with_link_args(&staged, &as_strs(&lto::one_backend_args(&f.command)));
    let link_sig = if rerun_signature.as_ref().map(|s| &s.id) == Some(&user_sig.id) {
        user_sig.clone()
    } else {
        let r = runner.run_with_tmpdir(&serial.with_output(&out_name), None, Some(&tmp))?;
        r.signature.ok_or_else(|| {
            lost(format!(
                "the link run one LTO backend at a time does not crash ({})",
                super::first_line(&r.output)
            ))
        })?
    };
    let weak_link = link_sig.weak && stackless;
    let Some(matched) = signature_match(&link_sig, stackless, &ir_sig)
        .or_else(|| signature_match(&user_sig, stackless, &ir_sig))
    else {
        return Err(lost(format!(
            "the LTO module crashes differently under {} (signature {} instead of the link's {})",
            tool_name(&saved),
            ir_sig.id,
            link_sig.id
        )));
    };
    let by_path: Vec<(String, LinkInput)> = inputs
        .iter()
        .map(|(at, i)| (staged.args[*at].clone(), i.clone()))
        .collect();
    let needed = minimal_inputs(
        runner,
        &serial,
        &by_path,
        &link_sig,
        scratch.path(),
        progress,
    )?;
    let inputs_named: Vec<(usize, String)> =
        inputs.iter().map(|(at, i)| (*at, i.name.clone())).collect();
    let inputs: Vec<LinkInput> = inputs.into_iter().map(|(_, i)| i).collect();
    let named_module = module
        .as_deref()
        .map(|m| module_as_named(m, &staged, &inputs_named, scratch.path()));
    let (source, source_note, files) = sources_of(
        &with_link_args(&quiet, &as_strs(&lto::one_backend_args(&f.command))),
        &inputs,
        (needed.as_ref(), named_module.as_deref()),
        (&req.cwd, scratch.path()),
        (&link_sig, weak_link, runner.timeout),
        progress,
    );
    let link = LinkInfo {
        command: f.command.argv(),
        linker: linker_argv.first().cloned(),
        lto: saved.lto.name().into(),
        stage: saved.step.name().into(),
        module: named_module,
        saved_as: file_name(&saved.file),
        link_signature: link_sig.id.clone(),
        signature_match: matched.into(),
        inputs,
        needed_inputs: needed.as_ref().map(|n| n.names.clone()),
        input_tests: needed.as_ref().map(|n| n.tests),
        source,
        source_note,
    };
    progress(&format!(
        "{} {} crash reproduced by {} on the saved module (signature {})",
        link.lto_words(),
        saved.step.name(),
        tool_name(&saved),
        ir_sig.id
    ));
    let found_ir = Found {
        found: &bindir.join(tool_name(&saved)),
        resolved: &bindir.join(tool_name(&saved)),
        command: ir,
        crash: ir_crash,
        signature: ir_sig,
        stderr: ir_run.output.stderr,
        started: f.started,
        link: Some(LinkFound {
            info: link,
            stderr: f.stderr,
            files,
        }),
    };
    tool::capture_tool(req, runner, found_ir, progress)
}

fn tool_name(saved: &Saved) -> &'static str {
    match saved.step {
        lto::Step::Codegen => "llc",
        lto::Step::Optimizer => "opt",
    }
}

fn lost(detail: String) -> CaptureError {
    CaptureError::LinkNotReproduced(detail)
}

/// A scratch file or directory that could not be made: an I/O error naming it (a full disk
/// is not a linker that cannot start).
fn scratch_error(path: &Path, error: std::io::Error) -> CaptureError {
    CaptureError::Case(crate::case::CaseError::Io {
        path: path.to_path_buf(),
        error,
    })
}

/// The linker's own command line: the command itself for a linker, else the linker line of
/// the driver's `-###` listing (empty when it lists none).
fn linker_argv(runner: &mut Runner, command: &CompilerCommand) -> Result<Vec<String>, ExecError> {
    if lto::is_linker(&command.program) {
        return Ok(command.argv());
    }
    let listing = runner.run_listing(command)?;
    Ok(lto::linker_line(&listing.output.stderr_text()).unwrap_or_default())
}

/// The command with each input file copied into `scratch/in` (ThinLTO writes a backend's
/// save-temps beside its input), and what each input is, with its index in the arguments.
fn stage_inputs(
    command: &CompilerCommand,
    cwd: &Path,
    scratch: &Path,
) -> Result<(CompilerCommand, Vec<(usize, LinkInput)>), CaptureError> {
    let dir = scratch.join("in");
    std::fs::create_dir_all(&dir).map_err(|e| scratch_error(&dir, e))?;
    // Inputs a response file lists, and archives found through `-l`, are inputs too: a
    // ThinLTO backend writes its save-temps beside whichever file its module came from.
    let command = &lto::with_libraries_named(&lto::expand_response_files(command, cwd), cwd);
    let mut staged = command.clone();
    let mut inputs = Vec::new();
    for (k, i) in command.input_indices().into_iter().enumerate() {
        let name = &command.args[i];
        let path = cwd.join(name);
        let meta = match std::fs::metadata(&path) {
            Ok(m) if m.is_file() => m,
            _ => continue, // a library searched for, or a word the table took for an input
        };
        let copy = dir.join(format!("{k}-{}", file_name(name)));
        // Copied, not read: a big archive is read through a map of the copy.
        std::fs::copy(&path, &copy).map_err(|e| CaptureError::UnreadableInput(path, e))?;
        staged.args[i] = copy.to_string_lossy().into_owned();
        let described = std::fs::File::open(&copy)
            .and_then(|f| {
                // SAFETY: the copy is this capture's own file in its scratch directory; nothing
                // else writes it while the map lives.
                unsafe { memmap2::Mmap::map(&f) }
            })
            .map(|m| describe_input(name, &m, meta.len()))
            .map_err(|e| scratch_error(&copy, e))?;
        inputs.push((i, described));
    }
    Ok((staged, inputs))
}

fn describe_input(name: &str, bytes: &[u8], len: u64) -> LinkInput {
    let kind = lto::input_kind(&bytes[..bytes.len().min(512)]);
    let (members, bitcode_members) = match (kind, lto::archive_members(bytes)) {
        ("archive", Some((m, b))) => (Some(m), Some(b)),
        _ => (None, None),
    };
    LinkInput {
        name: name.to_string(),
        kind: kind.to_string(),
        bytes: len,
        members,
        bitcode_members,
    }
}

/// Every file under `dir`, as full paths, oldest first (the newest save-temps file is the
/// step LTO was in when it crashed).
fn files_by_age(dir: &Path) -> Vec<String> {
    let mut found: Vec<(std::time::SystemTime, String)> = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let Ok(meta) = e.metadata() else { continue };
            if meta.is_dir() {
                todo.push(e.path());
            } else if meta.is_file() {
                let when = meta.modified().unwrap_or(std::time::UNIX_EPOCH);
                found.push((when, e.path().to_string_lossy().into_owned()));
            }
        }
    }
    // Files written within one clock tick: the earlier LTO step counts as the newer. Backends
    // run one at a time, so such a tie across modules is a finished backend's last file and
    // the next one's first, and the next one is where LTO stopped; within one module, an
    // `.4.opt.bc` taken as newest still says its code generation began.
    let key = |p: &str| std::cmp::Reverse(lto::step_rank(p));
    found.sort_by(|(ta, a), (tb, b)| (ta, key(a), a).cmp(&(tb, key(b), b)));
    found.into_iter().map(|(_, p)| p).collect()
}

/// The directory of the LLVM tools that match the link's LTO: beside the linker, beside the
/// gold plugin it loads (`…/lib/LLVMgold.so` → `…/bin`), else beside the compiler.
fn llvm_bindir(linker_argv: &[String], compiler: &Path, saved: &Saved) -> Option<PathBuf> {
    let tool = tool_name(saved);
    let plugin = linker_argv
        .windows(2)
        .find(|w| w[0] == "-plugin" || w[0] == "--plugin")
        .map(|w| PathBuf::from(&w[1]));
    // Only an LLVM linker's directory holds the tools of its LLVM: gold and bfd are not
    // LLVM's, and `/usr/bin` beside them may hold another LLVM's `llc`.
    let linker = linker_argv
        .first()
        .filter(|l| lto::is_lld(l) || lto::is_offload_wrapper(l))
        .map(PathBuf::from);
    let candidates = [
        linker.as_deref().and_then(resolve_dir),
        plugin
            .as_deref()
            .and_then(resolve_dir)
            .map(|lib| lib.join("../bin")),
        resolve_dir(compiler),
    ];
    candidates
        .into_iter()
        .flatten()
        .find(|d| d.join(tool).is_file())
        .map(|d| std::fs::canonicalize(&d).unwrap_or(d))
}

/// The directory of the file `p` resolves to (a linker called `ld.lld` on PATH is a link
/// into an LLVM's `bin`).
fn resolve_dir(p: &Path) -> Option<PathBuf> {
    let found = if p.components().count() > 1 {
        p.to_path_buf()
    } else {
        crate::exec::which(&p.to_string_lossy(), Path::new("/"))?
    };
    let real = std::fs::canonicalize(&found).unwrap_or(found);
    real.parent().map(Path::to_path_buf)
}

fn file_name(path: &str) -> String {
    path.rsplit('/').next().unwrap_or(path).to_string()
}

/// Whether the crash is the linker's: the case then follows [`capture_link`].
pub(super) fn is_link_crash(command: &CompilerCommand, stderr: &[u8], c: &crash::Crash) -> bool {
    lto::is_link_crash(command, &String::from_utf8_lossy(stderr), c)
}

/// The output of a candidate link, before each gets a directory of its own.
const OUT_MARK: &str = "@icepick-link-output@";

/// The bitcode inputs the link needs to crash, found by ddmin.
struct Needed {
    names: Vec<String>,
    /// Links run to find them.
    tests: u32,
}

/// The fewest of the link's bitcode inputs (bitcode files, archives with bitcode members)
/// with which it still crashes with `signature`, the others left in place; `None` when there
/// is only one such input. Each candidate link writes into a directory of its own; two run at
/// once.
fn minimal_inputs(
    runner: &Runner,
    staged: &CompilerCommand,
    inputs: &[(String, LinkInput)],
    signature: &crate::crash::Signature,
    scratch: &Path,
    progress: &mut dyn FnMut(&str),
) -> Result<Option<Needed>, CaptureError> {
    let units: Vec<(&str, &LinkInput)> = inputs
        .iter()
        .filter(|(_, i)| i.kind == "bitcode" || i.bitcode_members.unwrap_or(0) > 0)
        .map(|(path, i)| (path.as_str(), i))
        .collect();
    if units.len() < 2 {
        return Ok(None);
    }
    progress(&format!(
        "finding which of the link's {} bitcode inputs it needs",
        units.len()
    ));
    // Inputs are told by their staged paths (each copy's own): options added to the link
    // move their positions.
    let build = |kept: &[usize]| -> Vec<String> {
        let kept: HashSet<usize> = kept.iter().copied().collect();
        let dropped: HashSet<&str> = (0..units.len())
            .filter(|k| !kept.contains(k))
            .map(|k| units[k].0)
            .collect();
        let mut c = staged.clone();
        c.args.retain(|a| !dropped.contains(a.as_str()));
        c.with_output(OUT_MARK).argv()
    };
    // A candidate that could not be run is no verdict on it: the first such fault ends the
    // search and the capture.
    let fault: Mutex<Option<CaptureError>> = Mutex::new(None);
    let note_fault = |e: CaptureError| {
        let mut f = fault.lock().unwrap_or_else(|p| p.into_inner());
        f.get_or_insert(e);
    };
    let tries = std::sync::atomic::AtomicUsize::new(0);
    let oracle = |cands: &[Vec<String>]| -> Vec<Candidate> {
        let cmds: Vec<Cmd> = cands
            .iter()
            .map(|argv| {
                let n = tries.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let out = scratch.join(format!("try-{n}"));
                if let Err(e) = std::fs::create_dir_all(&out) {
                    note_fault(scratch_error(&out, e));
                }
                let target = out.join("a.out").to_string_lossy().into_owned();
                let args = argv[1..].iter().map(|a| {
                    if a == OUT_MARK {
                        target.clone()
                    } else {
                        a.clone()
                    }
                });
                Cmd::new(&argv[0])
                    .args(args)
                    .env("TMPDIR", &out)
                    .cwd(&runner.cwd)
                    .timeout(runner.timeout)
            })
            .collect();
        crate::exec::run_all(&cmds, 2)
            .into_iter()
            .map(|r| match r {
                Ok(o) => runner.outcome(&o, signature),
                Err(e) => {
                    note_fault(CaptureError::Exec(e));
                    Candidate::Error
                }
            })
            .collect()
    };
    let mut tester = Tester::new(&oracle);
    let kept = crate::ddmin::minimize(units.len(), &build, &mut tester);
    let tests = tester.runs() as u32;
    drop(tester);
    if let Some(e) = fault.lock().unwrap_or_else(|p| p.into_inner()).take() {
        return Err(e);
    }
    Ok(Some(Needed {
        names: kept.iter().map(|&k| units[k].1.name.clone()).collect(),
        tests,
    }))
}

/// A module's name as the user knows it: the input's own name for a copy of it in scratch,
/// else the name relative to scratch (an object the driver compiled into its TMPDIR).
fn module_as_named(
    module: &str,
    staged: &CompilerCommand,
    inputs: &[(usize, String)],
    scratch: &Path,
) -> String {
    // An archive member is `archive(member at offset)`.
    for (at, name) in inputs {
        if let Some(rest) = module.strip_prefix(staged.args[*at].as_str()) {
            if rest.is_empty() || rest.starts_with('(') {
                return format!("{name}{rest}");
            }
        }
    }
    let prefix = format!("{}/", scratch.to_string_lossy());
    module.strip_prefix(&prefix).unwrap_or(module).to_string()
}

/// The sources of the bitcode inputs the link needs (all of them when ddmin did not run:
/// one bitcode input), for the case: the section, or a note saying why there is none, and
/// the files to write. A link whose crash has no identity (no stack) has no source test.
#[allow(clippy::type_complexity)]
fn sources_of(
    link: &CompilerCommand,
    inputs: &[LinkInput],
    (needed, module): (Option<&Needed>, Option<&str>),
    (cwd, scratch): (&Path, &Path),
    (signature, weak, timeout): (&crate::crash::Signature, bool, std::time::Duration),
    progress: &mut dyn FnMut(&str),
) -> (Option<LinkSources>, Option<String>, Vec<(String, Vec<u8>)>) {
    let names: Vec<String> = match needed {
        Some(n) => n.names.clone(),
        None => inputs
            .iter()
            .filter(|i| i.kind == "bitcode" || i.bitcode_members.unwrap_or(0) > 0)
            .map(|i| i.name.clone())
            .collect(),
    };
    // Each needed input and the object its source compiles to: itself, or for an archive the
    // member the crashing module came from (`lib.a(m.o at 102)`: `m.o` beside `lib.a`).
    let objects: Option<Vec<(String, String)>> = names
        .iter()
        .map(|n| {
            let input = inputs.iter().find(|i| &i.name == n)?;
            if input.kind == "bitcode" {
                return Some((n.clone(), n.clone()));
            }
            let member = module?.strip_prefix(n.as_str())?.strip_prefix('(')?;
            let member = member.split(" at ").next()?.trim_end_matches(')');
            let beside = Path::new(n).parent().unwrap_or(Path::new(""));
            Some((
                n.clone(),
                beside.join(member).to_string_lossy().into_owned(),
            ))
        })
        .collect();
    let objects = match objects {
        Some(o) if !o.is_empty() => o,
        _ => {
            let why = "the bitcode the link needs is in an archive member it did not name";
            return (
                None,
                (!names.is_empty()).then(|| why.to_string()),
                Vec::new(),
            );
        }
    };
    if weak {
        let why = "the link's crash printed no stack: no signature for a source test to keep";
        return (None, Some(why.into()), Vec::new());
    }
    progress("looking up the needed inputs' sources in compile_commands.json");
    let dir = scratch.join("sources");
    if let Err(e) = std::fs::create_dir_all(&dir) {
        return (None, Some(e.to_string()), Vec::new());
    }
    match link_sources::gather(link, inputs, &objects, cwd, &dir, (&signature.id, timeout)) {
        Ok(g) => {
            progress(&format!(
                "the link crashes the same way from {} preprocessed source(s)",
                g.files.len()
            ));
            (Some(g.sources), None, g.files)
        }
        Err(why) => (None, Some(why), Vec::new()),
    }
}

/// How the IR command's crash matches the link's: `same` signature, `coarse` (kind,
/// message, pass, top frame), or when the link printed no stack (the gold plugin installs
/// no crash handler; a ThinLTO backend thread's overflow kills it silently) `message` (kind
/// and message) or `unidentified` (the link said nothing to compare: any crash of the step
/// is the evidence). `None`: another crash.
fn signature_match(
    link: &crate::crash::Signature,
    stackless: bool,
    ir: &crate::crash::Signature,
) -> Option<&'static str> {
    if ir.id == link.id {
        Some("same")
    } else if ir.coarse_id == link.coarse_id {
        Some("coarse")
    } else if stackless && link.weak {
        Some("unidentified")
    } else if stackless && !link.message.is_empty() {
        (ir.kind == link.kind && ir.message == link.message).then_some("message")
    } else {
        None
    }
}

fn as_strs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

/// `cmd` with `extra` options: for a driver before its inputs, for a linker's own command
/// line at its end (clang's option table does not know which of a linker's options take a
/// value, so its "first input" may be one).
fn with_link_args(cmd: &CompilerCommand, extra: &[&str]) -> CompilerCommand {
    if lto::is_linker(&cmd.program) {
        let mut c = cmd.clone();
        c.args.extend(extra.iter().map(|e| e.to_string()));
        c
    } else {
        cmd.with_extra_args(extra)
    }
}
