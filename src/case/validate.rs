//! What [`Case::load`] checks before any stage trusts a `case.json`: people run icepick on
//! case directories they did not write (a colleague's case, a CI artifact), so a case file is
//! hostile input. Every field that names a file of the case must name one *inside* the case
//! directory — relative, no `..`, no NUL, and not reached through a symlink that leads out —
//! because stages read those files (into reports and Compiler Explorer links) and write
//! through them (`repro.sh` recreates the input under its name). Fields that later stages
//! index (a command's program) must be there, and the case's input must exist, so that no
//! stage mistakes a broken case for a compiler that no longer crashes.

use std::fs;
use std::io;
use std::path::{Component, Path, PathBuf};

use serde_json::Value;

use super::{Case, CaseError};

/// Checks a parsed case against the directory it was read from.
pub(super) fn check(dir: &Path, case: &Case) -> Result<(), CaseError> {
    non_empty_command("command", &case.command)?;
    non_empty_command("replay_command", &case.replay_command)?;
    let root = fs::canonicalize(dir).map_err(|error| CaseError::Io {
        path: dir.to_owned(),
        error,
    })?;
    let input = case_file(&root, dir, "input", &case.input)?;
    if input.is_none() {
        return Err(CaseError::MissingInput {
            name: case.input.clone(),
            path: dir.join(&case.input),
        });
    }
    if let Some(r) = &case.reduction {
        let r = section_object("reduction", r)?;
        if let Some(v) = r.get("output") {
            let name = string_field("reduction.output", v)?;
            case_file(&root, dir, "reduction.output", name)?;
        }
        if let Some(v) = r.get("replay_command") {
            let argv = string_array("reduction.replay_command", v)?;
            if argv.is_empty() {
                return Err(invalid_field("reduction.replay_command", "is empty"));
            }
        }
        if let Some(v) = r.get("verified") {
            if !v.is_boolean() {
                return Err(invalid_field("reduction.verified", "is not true or false"));
            }
        }
    }
    if let Some(f) = &case.flags {
        let f = section_object("flags", f)?;
        if let Some(v) = f.get("minimal_command") {
            string_array("flags.minimal_command", v)?;
        }
        if let Some(v) = f.get("reproduced") {
            if !v.is_boolean() {
                return Err(invalid_field("flags.reproduced", "is not true or false"));
            }
        }
    }
    if let Some(c) = &case.classification {
        section_object("classification", c)?;
    }
    if let Some(ir) = &case.ir {
        let ir = section_object("ir", ir)?;
        if let Some(v) = ir.get("output").filter(|v| v.as_str() != Some("")) {
            case_file(&root, dir, "ir.output", string_field("ir.output", v)?)?;
        }
        if let Some(v) = ir.get("command") {
            string_array("ir.command", v)?;
        }
        // The tool is a word of icepick's vocabulary, not free text: it names the Compiler
        // Explorer compiler and is printed as the program of the IR reproducer.
        if let Some(v) = ir.get("tool") {
            if !matches!(string_field("ir.tool", v)?, "llc" | "opt") {
                return Err(invalid_field("ir.tool", "is neither llc nor opt"));
            }
        }
    }
    if let Some(v) = &case.versions {
        if !v.is_array() {
            return Err(invalid_field("versions", "is not a list"));
        }
    }
    if let Some(src) = case.link.as_ref().and_then(|l| l.source.as_ref()) {
        check_link_sources(&root, dir, src)?;
    }
    Ok(())
}

/// A link case's sources are files of the case that the reduce stage rewrites in place, and
/// commands it runs: the files must be inside the case, the commands name a program.
fn check_link_sources(
    root: &Path,
    dir: &Path,
    src: &super::link::LinkSources,
) -> Result<(), CaseError> {
    non_empty_command("link.source.link", &src.link)?;
    if src.files.is_empty() {
        return Err(invalid_field("link.source.files", "is empty"));
    }
    for f in &src.files {
        non_empty_command("link.source.files[].compile", &f.compile)?;
        if case_file(root, dir, "link.source.files[].file", &f.file)?.is_none() {
            return Err(CaseError::MissingInput {
                name: f.file.clone(),
                path: dir.join(&f.file),
            });
        }
        if let Some(why) = unsafe_name(&f.object)
            .or_else(|| f.object.contains('/').then_some("is not a plain file name"))
        {
            return Err(invalid_field("link.source.files[].object", why));
        }
    }
    Ok(())
}

fn invalid_field(field: &str, why: &str) -> CaseError {
    CaseError::BadField {
        field: field.to_owned(),
        why: why.to_owned(),
    }
}

fn non_empty_command(field: &str, argv: &[String]) -> Result<(), CaseError> {
    match argv.first() {
        None => Err(invalid_field(
            field,
            "is empty (it needs at least the compiler)",
        )),
        Some(p) if p.is_empty() || p.contains('\0') => Err(invalid_field(
            field,
            "names no program (its first word is empty or holds a NUL)",
        )),
        Some(_) => Ok(()),
    }
}

fn section_object<'a>(
    field: &str,
    v: &'a Value,
) -> Result<&'a serde_json::Map<String, Value>, CaseError> {
    v.as_object()
        .ok_or_else(|| invalid_field(field, "is not an object"))
}

fn string_field<'a>(field: &str, v: &'a Value) -> Result<&'a str, CaseError> {
    v.as_str()
        .ok_or_else(|| invalid_field(field, "is not a string"))
}

fn string_array<'a>(field: &str, v: &'a Value) -> Result<Vec<&'a str>, CaseError> {
    v.as_array()
        .and_then(|a| a.iter().map(Value::as_str).collect::<Option<Vec<_>>>())
        .ok_or_else(|| invalid_field(field, "is not a list of strings"))
}

/// Why `name` cannot name a file inside a case directory, judged on the text alone.
pub fn unsafe_name(name: &str) -> Option<&'static str> {
    if name.is_empty() {
        return Some("is empty");
    }
    if name.contains('\0') {
        return Some("contains a NUL byte");
    }
    let p = Path::new(name);
    if p.is_absolute() {
        return Some("is an absolute path");
    }
    // `Path` drops a trailing `/` (and reads `a/./b` as `a/b`): such a name is not the plain
    // file name it looks like (`input.ii/` would be opened as a directory).
    if name.ends_with('/') || name.split('/').any(|c| c.is_empty() || c == ".") {
        return Some("is not a plain relative file name");
    }
    for c in p.components() {
        match c {
            Component::Normal(_) => {}
            Component::ParentDir => return Some("leaves the case directory (`..`)"),
            _ => return Some("is not a plain relative file name"),
        }
    }
    None
}

/// Checks that field `field` = `name` names a file inside the case directory `dir` (whose
/// canonical path is `root`): lexically, and, for what exists on disk, after resolving
/// symlinks. Returns the joined path when the file exists, `None` when it does not.
pub(super) fn case_file(
    root: &Path,
    dir: &Path,
    field: &str,
    name: &str,
) -> Result<Option<PathBuf>, CaseError> {
    let refuse = |why: String| CaseError::OutsideCase {
        field: field.to_owned(),
        value: name.to_owned(),
        why: format!("{why}; a case's files must be inside the case directory"),
    };
    if let Some(why) = unsafe_name(name) {
        return Err(refuse(why.to_owned()));
    }
    let joined = dir.join(name);
    // The deepest part of the path that exists (the file, or a directory on the way to it)
    // must resolve inside the case: a symlink there could lead anywhere.
    let mut existing = joined.as_path();
    let exists = loop {
        match fs::symlink_metadata(existing) {
            Ok(_) => break existing == joined,
            Err(e) if e.kind() == io::ErrorKind::NotFound => match existing.parent() {
                Some(p) if p.starts_with(dir) && p != dir => existing = p,
                _ => return Ok(None),
            },
            Err(error) => {
                return Err(CaseError::Io {
                    path: existing.to_owned(),
                    error,
                })
            }
        }
    };
    let resolved = fs::canonicalize(existing)
        .map_err(|_| refuse("is a symlink that leads nowhere".to_owned()))?;
    if !resolved.starts_with(root) || resolved == root {
        return Err(refuse(format!(
            "leads outside the case directory (to {})",
            resolved.display()
        )));
    }
    if !exists {
        return Ok(None);
    }
    let meta = fs::metadata(&resolved).map_err(|error| CaseError::Io {
        path: resolved.clone(),
        error,
    })?;
    if !meta.is_file() {
        return Err(CaseError::OutsideCase {
            field: field.to_owned(),
            value: name.to_owned(),
            why: "is not a regular file; the case is damaged: capture the crash again".to_owned(),
        });
    }
    Ok(Some(joined))
}

/// For a `case.json` that parses as JSON but not as a [`Case`]: the first top-level field
/// whose value has the wrong shape, so the message can name it.
pub(super) fn first_bad_field(v: &Value) -> Option<&'static str> {
    use serde::de::DeserializeOwned;
    fn bad<T: DeserializeOwned>(v: &Value, name: &str) -> bool {
        v.get(name)
            .is_some_and(|x| serde_json::from_value::<T>(x.clone()).is_err())
    }
    macro_rules! fields {
        ($($name:literal: $t:ty),* $(,)?) => {
            $(if bad::<$t>(v, $name) { return Some($name); })*
        };
    }
    fields! {
        "schema_version": u32,
        "icepick_version": String,
        "status": super::CaseStatus,
        "status_detail": Option<String>,
        "command": Vec<String>,
        "cwd": String,
        "emulator": Vec<String>,
        "compiler": super::Compiler,
        "crash": crate::crash::Crash,
        "signature": crate::crash::Signature,
        "job": super::JobInfo,
        "input": String,
        "replay_command": Vec<String>,
        "preprocessing": super::Preprocessing,
        "reproducibility": super::Reproducibility,
        "family": Option<crate::crash::CrashFamily>,
        "capture": super::CaptureStats,
    }
    None
}
