//! The case directory: the contract between stages.
//!
//! A case is a directory holding `case.json` (this module's [`Case`], with a
//! `schema_version`), the preprocessed input, the original compiler output and logs. Every
//! stage reads a case, adds its section and writes `case.json` back atomically (temp file,
//! fsync, rename), so an interrupted stage leaves the previous valid state behind. A new case
//! is assembled in a hidden sibling directory and renamed into place only when complete, so a
//! half-written case never looks like a case.
//!
//! The section types live here ([`flags`], [`classification`], [`versions`], [`ir`],
//! [`reduction`], [`host`], [`BugInfo`]); stages read sections through them (`Case::ir_section`,
//! `Case::reduction_section` …), never by looking fields up in JSON. With them live the
//! facts several readers share ([`target_tag`], [`involves_riscv`],
//! [`library_dirs`]): the case model names no stage and no renderer, only the pure models
//! below it (`crash`, `command`). Every field and its writer: docs/architecture.md.

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::crash::{Crash, Signature};

/// The version of the `case.json` layout this build writes and reads.
pub const SCHEMA_VERSION: u32 = 1;

/// Name of the case file inside a case directory.
pub const CASE_FILE: &str = "case.json";

/// How far capture got.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CaseStatus {
    /// The crash reproduces, on preprocessed input, with the same signature.
    Captured,
    /// The crash did not come back: no rerun crashed as the first run did
    /// ([`crate::crash::CrashFamily`]).
    Flaky,
    /// The crash reproduces on the original command but not on the preprocessed input.
    LostInPreprocessing,
}

/// The compiler that crashed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Compiler {
    /// As found on PATH or as given (not resolved through links: clang's mode depends on it).
    pub path: String,
    /// The file it resolves to.
    pub resolved_path: String,
    /// First line of `--version` (with `, with assertions` added when a later line says the
    /// build has them, as LLVM's tools do).
    pub version: String,
}

/// Which job of a multi-job compile crashed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobInfo {
    /// `single` (one job), `host` or `device`.
    pub kind: String,
    /// The GPU arch of a device job.
    pub offload_arch: Option<String>,
    /// The jobs `-###` listed (`host`, `device:gfx90a`, `tool:ld` …), when it was asked.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub listed: Vec<String>,
}

/// How the preprocessed input was made and whether it keeps the crash.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Preprocessing {
    /// `full` (`-E`), `rewrite-includes` (`-E -frewrite-includes`, macros kept), or `given`
    /// (the input was already preprocessed, e.g. a clang reproducer).
    pub mode: String,
    /// The command that made it.
    pub command: Vec<String>,
    /// `reproduced`, `lost` or `failed`.
    pub status: String,
    /// What happened, in one line, when not reproduced.
    pub detail: Option<String>,
}

/// Reruns of the original command.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reproducibility {
    pub runs: u32,
    pub same_signature: u32,
}

/// What capture cost.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CaptureStats {
    pub compiler_runs: u32,
    pub seconds: f64,
    /// Flags icepick added to the original command to get a usable crash report
    /// (`-fno-integrated-cc1` when the in-process cc1 died without a stack dump).
    #[serde(default)]
    pub added_flags: Vec<String>,
}

/// `case.json`'s `bug_info`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BugInfo {
    /// The target triple of the crashing job (its cc1 line's `-triple`, else the `Target:`
    /// line `-###` printed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub triple: Option<String>,
    /// The crashing job's `-cc1` line as `-###` printed it (program first), paths as printed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cc1: Vec<String>,
    /// The lines clang printed before its crash report, verbatim (capped:
    /// [`crate::crash::prior_diagnostics`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub diagnostics: Vec<String>,
    /// Lines of those left out by the cap.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub diagnostics_omitted: u32,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// `case.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Case {
    pub schema_version: u32,
    pub icepick_version: String,
    pub status: CaseStatus,
    /// One line saying why the status is not `captured`.
    pub status_detail: Option<String>,
    /// The original command, program first.
    pub command: Vec<String>,
    /// The directory it ran in.
    pub cwd: String,
    /// The user-mode emulator the compiler ran under when it was captured, program first
    /// (`qemu-riscv64 -cpu rv64,v=true`): the case's "host" is the emulated machine, and every
    /// stage runs the compiler behind it ([`Case::host_argv`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub emulator: Vec<String>,
    /// The facts of the machine the case was captured on (`icepick probe --json`: kernel,
    /// CPU ISA and vendor ids, AT_HWCAP, riscv_hwprobe, the vector control), taken while
    /// that machine is at hand. Under an emulator, the machine running the emulator.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<serde_json::Value>,
    pub compiler: Compiler,
    pub crash: Crash,
    pub signature: Signature,
    pub job: JobInfo,
    /// File name (inside the case directory) of the preprocessed input.
    pub input: String,
    /// The command that compiles `input` and crashes; run it inside the case directory.
    pub replay_command: Vec<String>,
    pub preprocessing: Preprocessing,
    pub reproducibility: Reproducibility,
    /// The crashes the reruns saw, the rule that says which belong to the case, and how often
    /// the compile crashed so (absent in older cases: [`Case::family`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub family: Option<crate::crash::CrashFamily>,
    pub capture: CaptureStats,
    /// The triple, the diagnostics before the crash and the crashing job's cc1 line, as
    /// LLVM's bug guide asks (recorded at capture; absent in older cases).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bug_info: Option<BugInfo>,
    /// Later stages' sections; kept verbatim by stages that do not know them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flags: Option<serde_json::Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reduction: Option<serde_json::Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub classification: Option<serde_json::Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub versions: Option<serde_json::Value>,
    /// The IR stage's section: the reduced IR and its `llc`/`opt` command (see docs/architecture.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ir: Option<serde_json::Value>,
    /// The triage pipeline's record: which stages ran, how each ended, and the budget.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub triage: Option<triage::Triage>,
    /// Capture: the crash is the linker's LTO step's ([`link::LinkInfo`]); the case's command
    /// is then `llc`/`opt` on the module that step saw.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link: Option<link::LinkInfo>,
}

/// Problems reading or writing a case directory. Every variant but [`CaseError::Io`] is about
/// the case given (missing, not a case, damaged, unsafe) and maps to exit 2 (see
/// [`CaseError::is_bad_input`]); `Io` is icepick failing to read or write what it should
/// be able to.
#[derive(Debug, thiserror::Error)]
pub enum CaseError {
    /// The error is part of the message, not a `source`: printed as a chain it would repeat.
    #[error("{path}: {error}")]
    Io { path: PathBuf, error: io::Error },
    #[error("{path} is not a case directory (no {CASE_FILE}); run `icepick capture` first")]
    NotACase { path: PathBuf },
    #[error("{path} is a file, not a case directory; give the directory that holds {CASE_FILE} ({dir})", dir = parent_or_dot(path).display())]
    NotADirectory { path: PathBuf },
    #[error("cannot read {path}: {error}")]
    Unreadable { path: PathBuf, error: io::Error },
    #[error("{path} is not a valid case file ({why}); it is damaged or was not written by icepick: capture the crash again")]
    Invalid { path: PathBuf, why: String },
    #[error("{path}: schema_version {found} is newer than this icepick understands ({SCHEMA_VERSION}); upgrade icepick")]
    TooNew { path: PathBuf, found: u32 },
    #[error("{path} already exists; choose another --out or remove it")]
    Exists { path: PathBuf },
    #[error("case.json field `{field}` = {value:?} {why}")]
    OutsideCase {
        field: String,
        value: String,
        why: String,
    },
    #[error("case.json field `{field}` {why}; the case is damaged: capture the crash again")]
    BadField { field: String, why: String },
    #[error("{path} {why}: a case's files must be regular files in the case directory itself, not links; remove it, or capture the crash again")]
    UnsafeFile { path: PathBuf, why: String },
    #[error("{path} is being written by {holder}; wait for it to end, or work on a copy of the case (`cp -r`)")]
    Busy { path: PathBuf, holder: String },
    #[error("the case's input `{name}` is missing ({path} does not exist): restore it, or capture the crash again with `icepick capture`")]
    MissingInput { name: String, path: PathBuf },
}

impl crate::error::ExitCoded for CaseError {
    fn exit_code(&self) -> u8 {
        if self.is_bad_input() {
            crate::error::USAGE
        } else {
            crate::error::FAILED
        }
    }
}

impl CaseError {
    /// The case given is wrong (exit 2), as opposed to icepick failing on a good one.
    pub fn is_bad_input(&self) -> bool {
        !matches!(self, CaseError::Io { .. })
    }
}

fn parent_or_dot(p: &Path) -> &Path {
    match p.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    }
}

fn io_err(path: &Path) -> impl FnOnce(io::Error) -> CaseError + '_ {
    move |error| CaseError::Io {
        path: path.to_owned(),
        error,
    }
}

impl Case {
    /// `llc` or `opt` when the case is a crash of one of LLVM's tools on IR (its command's
    /// program), not of a compiler on source.
    pub fn llvm_tool(&self) -> Option<&'static str> {
        crate::command::CompilerCommand::from_argv(&self.command).and_then(|c| c.llvm_tool())
    }

    pub fn is_llvm_tool(&self) -> bool {
        self.llvm_tool().is_some()
    }

    /// Which crashes are this case's: the family capture recorded, else (a case written
    /// before families) its one signature, as often as it reproduced.
    pub fn family(&self) -> crate::crash::CrashFamily {
        match &self.family {
            Some(f) if !f.variants.is_empty() => f.clone(),
            _ => crate::crash::CrashFamily::single(
                &crate::crash::family::Seen::new(&self.crash, &self.signature),
                self.reproducibility.runs.max(1),
            ),
        }
    }

    /// Reads `DIR/case.json` and checks it ([`validate`]): every file it names is inside
    /// `DIR`, its input exists, and the fields stages rely on have the right shape. Any
    /// error is a typed [`CaseError`]; nothing here panics on any content.
    pub fn load(dir: &Path) -> Result<Case, CaseError> {
        let case = Self::parse(dir)?;
        validate::check(dir, &case)?;
        Ok(case)
    }

    /// [`Case::load`] for a command that writes the case: the case is checked, then its write
    /// lock taken ([`lock::lock`]), then read again, so that what the command starts from is
    /// what the writer before it left. The case stays locked until the returned guard is
    /// dropped.
    pub fn load_for_writing(dir: &Path) -> Result<(Case, lock::CaseLock), CaseError> {
        Self::parse(dir)?;
        let guard = lock::lock(dir)?;
        Ok((Self::load(dir)?, guard))
    }

    /// Reads and parses `DIR/case.json` without checking the files it names.
    fn parse(dir: &Path) -> Result<Case, CaseError> {
        match fs::metadata(dir) {
            Ok(m) if !m.is_dir() => {
                return Err(CaseError::NotADirectory {
                    path: dir.to_owned(),
                })
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                return Err(CaseError::NotACase {
                    path: dir.to_owned(),
                })
            }
            _ => {}
        }
        let path = dir.join(CASE_FILE);
        let text = match fileio::read(dir, CASE_FILE, fileio::cap::CASE_JSON)? {
            Some(t) => t,
            None => {
                return Err(CaseError::NotACase {
                    path: dir.to_owned(),
                })
            }
        };
        let invalid = |path: &Path, why: String| CaseError::Invalid {
            path: path.to_owned(),
            why,
        };
        let value: serde_json::Value =
            serde_json::from_slice(&text).map_err(|e| invalid(&path, format!("not JSON: {e}")))?;
        if !value.is_object() {
            return Err(invalid(&path, "not a JSON object".into()));
        }
        match value.get("schema_version").and_then(|v| v.as_u64()) {
            Some(v) if v == u64::from(SCHEMA_VERSION) => {}
            Some(v) if v > u64::from(SCHEMA_VERSION) => {
                return Err(CaseError::TooNew {
                    path,
                    found: u32::try_from(v).unwrap_or(u32::MAX),
                })
            }
            Some(v) => {
                return Err(invalid(
                    &path,
                    format!("schema_version {v}: this icepick reads {SCHEMA_VERSION}"),
                ))
            }
            None => {
                return Err(invalid(
                    &path,
                    format!("no schema_version {SCHEMA_VERSION}"),
                ))
            }
        }
        serde_json::from_value(value.clone()).map_err(|e| {
            let why = match validate::first_bad_field(&value) {
                Some(field) => format!("field `{field}`: {e}"),
                None => e.to_string(),
            };
            invalid(&path, why)
        })
    }

    /// The path of the case file that field `field` (e.g. `reduction.output`) names, checked
    /// as [`Case::load`] checks `input`: `Ok(None)` when it does not exist.
    pub fn file(dir: &Path, field: &str, name: &str) -> Result<Option<PathBuf>, CaseError> {
        let root = fs::canonicalize(dir).map_err(io_err(dir))?;
        validate::case_file(&root, dir, field, name)
    }

    /// `argv` as it runs on the case's host: behind the case's emulator, if it has one.
    pub fn host_argv(&self, argv: &[String]) -> Vec<String> {
        emulated(&self.emulator, argv)
    }

    /// Where the shared libraries its crash frames name are (see
    /// [`library_dirs_emulated`]).
    pub fn library_dirs(&self) -> Vec<PathBuf> {
        library_dirs_emulated(Path::new(&self.compiler.resolved_path), &self.emulator)
    }

    /// Writes `DIR/case.json` atomically.
    pub fn save(&self, dir: &Path) -> Result<(), CaseError> {
        let mut text = serde_json::to_vec_pretty(self).expect("the case serialises");
        text.push(b'\n');
        fileio::write(dir, CASE_FILE, &text)
    }
}

/// The value of `-L DIR` (or `-LDIR`) in an emulator command line: the emulated system's root.
pub fn emulator_root(emulator: &[String]) -> Option<PathBuf> {
    let mut it = emulator.iter().skip(1);
    while let Some(a) = it.next() {
        if a == "-L" {
            return it.next().map(PathBuf::from);
        }
        if let Some(v) = a.strip_prefix("-L") {
            return Some(PathBuf::from(v));
        }
    }
    None
}

/// `argv` behind `emulator` (an empty emulator leaves it as it is).
pub fn emulated(emulator: &[String], argv: &[String]) -> Vec<String> {
    emulator.iter().chain(argv).cloned().collect()
}

/// Writes `bytes` to `path` so that a reader (or a crash at any moment) sees either the old
/// file or the new one, never a mix: temp file in the same directory, fsync, rename.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), CaseError> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut tmp = tempfile::Builder::new()
        .prefix(".icepick-")
        .suffix(".tmp")
        .tempfile_in(dir)
        .map_err(io_err(dir))?;
    tmp.write_all(bytes).map_err(io_err(path))?;
    {
        use std::os::unix::fs::PermissionsExt;
        let _ = tmp
            .as_file()
            .set_permissions(fs::Permissions::from_mode(0o644));
    }
    tmp.as_file().sync_all().map_err(io_err(path))?;
    tmp.persist(path).map_err(|e| CaseError::Io {
        path: path.to_owned(),
        error: e.error,
    })?;
    Ok(())
}

/// A case directory being assembled: a hidden sibling of its final location, renamed into
/// place by [`NewCaseDir::finish`]. Dropped unfinished, it is removed.
#[derive(Debug)]
pub struct NewCaseDir {
    tmp: tempfile::TempDir,
    parent: PathBuf,
}

impl NewCaseDir {
    /// Starts a case that will live under `parent`.
    pub fn start(parent: &Path) -> Result<Self, CaseError> {
        fs::create_dir_all(parent).map_err(io_err(parent))?;
        let tmp = tempfile::Builder::new()
            .prefix(".icepick-case-")
            .tempdir_in(parent)
            .map_err(io_err(parent))?;
        fs::create_dir_all(tmp.path().join("logs")).map_err(io_err(tmp.path()))?;
        // The write lock's file from the start: a stage that takes the lock later then
        // leaves the case's files as they were.
        fileio::write(tmp.path(), lock::LOCK_FILE, b"")?;
        Ok(Self {
            tmp,
            parent: parent.to_owned(),
        })
    }

    /// Where files go while the case is assembled.
    pub fn path(&self) -> &Path {
        self.tmp.path()
    }

    /// Writes a file into the case (atomically).
    pub fn write(&self, name: &str, bytes: &[u8]) -> Result<PathBuf, CaseError> {
        fileio::write(self.tmp.path(), name, bytes)?;
        Ok(self.tmp.path().join(name))
    }

    /// Saves `case.json` and moves the directory to `dest` (which must not exist), or, when
    /// `dest` is `None`, to the first free `PARENT/icepick-<signature id>[-N]`.
    pub fn finish(self, case: &Case, dest: Option<&Path>) -> Result<PathBuf, CaseError> {
        case.save(self.tmp.path())?;
        let dest = match dest {
            Some(d) => {
                if d.exists()
                    && fs::read_dir(d)
                        .map(|mut r| r.next().is_some())
                        .unwrap_or(true)
                {
                    return Err(CaseError::Exists { path: d.to_owned() });
                }
                let _ = fs::remove_dir(d);
                d.to_owned()
            }
            None => {
                let base = format!("icepick-{}", case.signature.id);
                (1..)
                    .map(|n| {
                        self.parent.join(if n == 1 {
                            base.clone()
                        } else {
                            format!("{base}-{n}")
                        })
                    })
                    .find(|p| !p.exists())
                    .expect("some name is free")
            }
        };
        let tmp = self.tmp.keep();
        fs::rename(&tmp, &dest).map_err(|error| {
            let _ = fs::remove_dir_all(&tmp);
            CaseError::Io {
                path: dest.clone(),
                error,
            }
        })?;
        Ok(dest)
    }
}

pub mod classification;
mod facts;
pub mod farm;
pub mod fileio;
pub mod flags;
pub mod host;
pub mod ir;
pub mod link;
pub mod lock;
pub mod reduction;
pub mod triage;
mod validate;
pub mod versions;
pub use facts::{involves_riscv, library_dirs, library_dirs_emulated, target_tag};
pub use validate::unsafe_name;

#[cfg(test)]
pub(crate) mod tests;
