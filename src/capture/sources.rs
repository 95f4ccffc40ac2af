//! Other ways in: a compile command taken from `compile_commands.json`, or from clang's own
//! crash reproducer script (`*.sh` beside a preprocessed `*.c`/`*.cpp`).

use std::path::{Path, PathBuf};

/// Why a command could not be taken from a file.
#[derive(Debug, thiserror::Error)]
pub enum SourceError {
    #[error("{0}: {1}")]
    Io(PathBuf, std::io::Error),
    #[error("{0}: not a compilation database: {1}")]
    BadCompdb(PathBuf, String),
    #[error("{compdb}: no entry compiles {file}; check the path (relative to the current directory) or regenerate the database")]
    NotInCompdb { compdb: PathBuf, file: PathBuf },
    #[error("{0}: not a clang crash reproducer script (no command line after the `#` comments)")]
    BadReproducer(PathBuf),
    #[error("{script}: the preprocessed file it names, {input}, is missing; it must sit beside the script")]
    ReproducerInputMissing { script: PathBuf, input: PathBuf },
}

impl crate::error::ExitCoded for SourceError {
    /// A file given on the command line that holds no usable command.
    fn exit_code(&self) -> u8 {
        crate::error::USAGE
    }
}

/// A command found in a file: argv, the directory to run it in, and (for reproducers) the
/// already-preprocessed input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FoundCommand {
    pub argv: Vec<String>,
    pub cwd: PathBuf,
    pub preprocessed_input: Option<PathBuf>,
}

/// The entry of `compile_commands.json` that compiles `file`.
pub fn command_from_compdb(
    compdb: &Path,
    file: &Path,
    cwd: &Path,
) -> Result<FoundCommand, SourceError> {
    let text = std::fs::read_to_string(compdb).map_err(|e| SourceError::Io(compdb.into(), e))?;
    let entries: Vec<serde_json::Value> = serde_json::from_str(&text)
        .map_err(|e| SourceError::BadCompdb(compdb.into(), e.to_string()))?;
    let want = normalize(&cwd.join(file));
    for e in &entries {
        let dir = PathBuf::from(e["directory"].as_str().unwrap_or("."));
        let Some(f) = e["file"].as_str() else {
            continue;
        };
        if normalize(&dir.join(f)) != want {
            continue;
        }
        let argv: Vec<String> = if let Some(args) = e["arguments"].as_array() {
            args.iter()
                .filter_map(|a| a.as_str().map(String::from))
                .collect()
        } else if let Some(cmd) = e["command"].as_str() {
            shlex::split(cmd).ok_or_else(|| {
                SourceError::BadCompdb(
                    compdb.into(),
                    format!("unbalanced quotes in command for {f}"),
                )
            })?
        } else {
            return Err(SourceError::BadCompdb(
                compdb.into(),
                format!("entry for {f} has neither `arguments` nor `command`"),
            ));
        };
        return Ok(FoundCommand {
            argv,
            cwd: dir,
            preprocessed_input: None,
        });
    }
    Err(SourceError::NotInCompdb {
        compdb: compdb.into(),
        file: file.into(),
    })
}

/// The command in clang's crash reproducer script: its last non-comment line, run in the
/// script's directory on the preprocessed file it names.
pub fn command_from_reproducer(script: &Path) -> Result<FoundCommand, SourceError> {
    let text = std::fs::read_to_string(script).map_err(|e| SourceError::Io(script.into(), e))?;
    let line = text
        .lines()
        .rev()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with('#'))
        .ok_or_else(|| SourceError::BadReproducer(script.into()))?;
    let argv = shlex::split(line).ok_or_else(|| SourceError::BadReproducer(script.into()))?;
    let cmd = crate::command::CompilerCommand::from_argv(&argv)
        .ok_or_else(|| SourceError::BadReproducer(script.into()))?;
    let dir = script
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."));
    let dir = if dir.as_os_str().is_empty() {
        PathBuf::from(".")
    } else {
        dir
    };
    let input = cmd
        .inputs()
        .last()
        .map(|i| dir.join(i))
        .ok_or_else(|| SourceError::BadReproducer(script.into()))?;
    if !input.is_file() {
        return Err(SourceError::ReproducerInputMissing {
            script: script.into(),
            input,
        });
    }
    Ok(FoundCommand {
        argv,
        cwd: dir,
        preprocessed_input: Some(input),
    })
}

/// Lexically normalises a path (`a/./b/../c` → `a/c`); falls back from canonicalize so that
/// databases naming files that no longer exist still match.
fn normalize(p: &Path) -> PathBuf {
    if let Ok(c) = std::fs::canonicalize(p) {
        return c;
    }
    let mut out = PathBuf::new();
    for comp in p.components() {
        match comp {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                out.pop();
            }
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compdb_entry_by_relative_path_with_command_or_arguments() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("a.c"), "int a;").unwrap();
        std::fs::write(d.path().join("b.c"), "int b;").unwrap();
        let db = serde_json::json!([
            {"directory": d.path(), "file": "a.c", "command": "clang -DX='1 2' -c a.c"},
            {"directory": d.path(), "file": "b.c", "arguments": ["clang", "-c", "b.c"]},
        ]);
        let dbp = d.path().join("compile_commands.json");
        std::fs::write(&dbp, db.to_string()).unwrap();
        let a = command_from_compdb(&dbp, Path::new("a.c"), d.path()).unwrap();
        assert_eq!(a.argv, vec!["clang", "-DX=1 2", "-c", "a.c"]);
        assert_eq!(a.cwd, d.path());
        let b = command_from_compdb(&dbp, &d.path().join("b.c"), Path::new("/")).unwrap();
        assert_eq!(b.argv, vec!["clang", "-c", "b.c"]);
        let err = command_from_compdb(&dbp, Path::new("zzz.c"), d.path()).unwrap_err();
        assert!(err.to_string().contains("no entry compiles"), "{err}");
    }

    #[test]
    fn reproducer_script_from_the_samples() {
        let dir = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/samples/clang-19/crash_O2_opts.crashdir"
        );
        let script = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| p.extension().is_some_and(|e| e == "sh"))
            .unwrap();
        let found = command_from_reproducer(&script).unwrap();
        assert_eq!(found.argv[1], "-cc1");
        assert!(found
            .preprocessed_input
            .unwrap()
            .extension()
            .is_some_and(|e| e == "c"));
    }
}
