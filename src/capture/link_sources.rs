//! Back from a link's crash to source: the build's `compile_commands.json` says how each
//! needed input was compiled; its source, preprocessed, goes into the case with the
//! commands that compile it and run the link again, so that `reduce --test` can shrink the
//! sources while the link keeps crashing ([`link_test`] is that test's verdict).
//!
//! Only what the build wrote is used: a compile the database does not list (or an archive
//! member, or an offload compile) leaves the case without sources, and says why.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::case::link::{LinkInput, LinkSource, LinkSources};
use crate::command::{CompilerCommand, JobSelector, Sink};
use crate::crash::{self, Symbolizer};
use crate::exec::{self, Cmd, ExecError};

/// Where the sources go inside the case.
pub const SOURCE_DIR: &str = "source";

/// A bigger compilation database is not read (a big project's is a few MB).
const COMPDB_MAX_BYTES: u64 = 256 << 20;

/// The sources of a link's needed inputs, ready for the case: the section and each file's
/// bytes under its name in the case. `Err` says why there are none.
pub struct Gathered {
    pub sources: LinkSources,
    pub files: Vec<(String, Vec<u8>)>,
}

/// Finds, preprocesses and checks the sources of `needed` (input names of `link`, each with
/// the object its compile writes: itself, or an archive's member), run from `cwd`; `scratch`
/// holds the preprocessed files and the check's build.
pub fn gather(
    link: &CompilerCommand,
    inputs: &[LinkInput],
    needed: &[(String, String)],
    cwd: &Path,
    scratch: &Path,
    (signature, timeout): (&str, Duration),
) -> Result<Gathered, String> {
    let mut files = Vec::new();
    let mut bytes = Vec::new();
    for (k, (input, object)) in needed.iter().enumerate() {
        let (compile, dir) = compile_of(cwd, object)
            .ok_or_else(|| format!("no compile_commands.json entry writes {object}"))?;
        // Its dependency files, diagnostics and the like are the build's: written nowhere.
        let compile = compile.without_side_outputs(&Sink::Nowhere);
        if compile.is_offload() {
            return Err(format!("{input} is an offload compile's object"));
        }
        let from_ir = compile.llvm_tool().is_some()
            || compile
                .inputs()
                .iter()
                .any(|i| i.ends_with(".ll") || i.ends_with(".bc"));
        if from_ir {
            return Err(format!(
                "{input} is built from LLVM IR: the reduced IR is its source reproducer"
            ));
        }
        let lang = compile.language();
        let stem = Path::new(compile.inputs().first().copied().unwrap_or("tu"))
            .file_stem()
            .map_or("tu".into(), |s| s.to_string_lossy().into_owned());
        let name = format!("{k}-{stem}.{}", lang.preprocessed_ext());
        let out = scratch.join(&name);
        let pp = compile.preprocess(&JobSelector::Whole, &out.to_string_lossy(), false);
        let r = exec::run(
            &Cmd::new(&pp.program)
                .args(&pp.args)
                .cwd(&dir)
                .timeout(timeout),
        )
        .map_err(|e| e.to_string())?;
        let text = std::fs::read(&out).map_err(|_| {
            format!(
                "preprocessing {input}'s source failed ({})",
                exec::status_words(r.status)
            )
        })?;
        let object = format!("{k}.o");
        let c = compile.compile_preprocessed(&JobSelector::Whole, &name, lang, &object, false);
        files.push(LinkSource {
            input: input.clone(),
            file: format!("{SOURCE_DIR}/{name}"),
            object,
            compile: c.argv(),
        });
        bytes.push((format!("{SOURCE_DIR}/{name}"), text));
    }
    let sources = LinkSources {
        link: link_template(link, inputs, &files, cwd).argv(),
        files,
        test: crate::case::link::SOURCE_TEST.into(),
        reduction: None,
    };
    let check = scratch.join("check");
    std::fs::create_dir_all(&check).map_err(|e| e.to_string())?;
    for (name, b) in &bytes {
        let base = name.rsplit('/').next().unwrap_or(name);
        std::fs::write(check.join(base), b).map_err(|e| e.to_string())?;
    }
    match link_test(&sources, signature, &check, timeout) {
        Ok(true) => Ok(Gathered {
            sources,
            files: bytes,
        }),
        Ok(false) => Err("its preprocessed sources, compiled and linked again, do not crash the link the same way".into()),
        Err(e) => Err(e.to_string()),
    }
}

/// The link as the source test runs it: the needed inputs by their objects, the bitcode
/// inputs it does not need left out, every other input by its full path, writing `out`.
fn link_template(
    link: &CompilerCommand,
    inputs: &[LinkInput],
    files: &[LinkSource],
    cwd: &Path,
) -> CompilerCommand {
    let objects: HashMap<&str, &str> = files
        .iter()
        .map(|f| (f.input.as_str(), f.object.as_str()))
        .collect();
    let bitcode: HashSet<&str> = inputs
        .iter()
        .filter(|x| x.kind == "bitcode" || x.bitcode_members.unwrap_or(0) > 0)
        .map(|x| x.name.as_str())
        .collect();
    let input_at: HashSet<usize> = link.input_indices().into_iter().collect();
    let mut args = Vec::with_capacity(link.args.len());
    for (i, a) in link.args.iter().enumerate() {
        if !input_at.contains(&i) {
            args.push(a.clone());
        } else if let Some(object) = objects.get(a.as_str()) {
            args.push(object.to_string());
        } else if bitcode.contains(a.as_str()) {
            // a bitcode input the crash does not need: left out
        } else if cwd.join(a).exists() {
            args.push(cwd.join(a).to_string_lossy().into_owned());
        } else {
            args.push(a.clone());
        }
    }
    CompilerCommand {
        program: link.program.clone(),
        args,
    }
    .with_output("out")
}

/// The entry of the nearest `compile_commands.json` (in `cwd` or above: make runs a link in
/// a subdirectory of the build) whose output is `input`, as a command and the directory it
/// runs in. A relative `directory` is taken from the database's own place. Its commands are
/// run, so a database is taken only from a directory and a file this user owns (root's
/// too): not one another user left in `/tmp`.
fn compile_of(cwd: &Path, input: &str) -> Option<(CompilerCommand, PathBuf)> {
    let want = normalize(&cwd.join(input));
    for dir in cwd.ancestors() {
        if !owned_by_us(dir) || !owned_by_us(&dir.join("compile_commands.json")) {
            continue;
        }
        let Ok(Some(text)) =
            crate::case::fileio::read(dir, "compile_commands.json", COMPDB_MAX_BYTES)
        else {
            continue;
        };
        let Ok(entries) = serde_json::from_slice::<Vec<serde_json::Value>>(&text) else {
            continue;
        };
        for e in &entries {
            let run_in = dir.join(e["directory"].as_str().unwrap_or("."));
            let argv: Option<Vec<String>> = match (e["arguments"].as_array(), e["command"].as_str())
            {
                (Some(a), _) => a.iter().map(|x| x.as_str().map(String::from)).collect(),
                (None, Some(cmd)) => shlex::split(cmd),
                _ => None,
            };
            let Some(cmd) = argv.as_deref().and_then(CompilerCommand::from_argv) else {
                continue;
            };
            if cmd
                .output()
                .is_some_and(|o| normalize(&run_in.join(o)) == want)
            {
                return Some((cmd, run_in));
            }
        }
    }
    None
}

/// Owned by this user or by root.
fn owned_by_us(p: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    // SAFETY: geteuid has no preconditions and cannot fail.
    let me = unsafe { libc::geteuid() };
    std::fs::symlink_metadata(p).is_ok_and(|m| m.uid() == me || m.uid() == 0)
}

fn normalize(p: &Path) -> PathBuf {
    std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf())
}

/// Whether the sources in `dir` (each file of `sources` by its base name) compile and then
/// link to a crash with `signature`: the verdict of a source reduction's test. Every run
/// writes into `dir` (objects, the link's `out`) with `dir` as its TMPDIR.
pub fn link_test(
    sources: &LinkSources,
    signature: &str,
    dir: &Path,
    timeout: Duration,
) -> Result<bool, ExecError> {
    // Frames are named as capture named them: from the libraries of the link's compiler.
    let program =
        std::fs::canonicalize(&sources.link[0]).unwrap_or_else(|_| (&sources.link[0]).into());
    let symbolizer = Symbolizer::new(crate::case::library_dirs(&program));
    for f in &sources.files {
        let r = exec::run(&cmd_in(&f.compile, dir, timeout))?;
        if !r.success() {
            return Ok(false);
        }
    }
    let r = exec::run(&cmd_in(&sources.link, dir, timeout))?;
    let stderr = r.stderr_text();
    Ok(match crash::parse(&stderr, r.status.exit_info()) {
        Some(mut c) => {
            symbolizer.symbolize(&mut c);
            crash::signature(&c).id == signature
        }
        None => false,
    })
}

fn cmd_in(argv: &[String], dir: &Path, timeout: Duration) -> Cmd {
    Cmd::new(&argv[0])
        .args(&argv[1..])
        .cwd(dir)
        .env("TMPDIR", dir)
        .timeout(timeout)
}
