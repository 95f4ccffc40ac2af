//! The versions stage: run a case on every clang that can be found and say which versions
//! crash the same way ("crashes on 14–16, fixed by 19"), which crash differently, and which
//! compile it. Maintainers ask for the regression range first.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::case::{Case, CaseError};
use crate::crash::{self, Symbolizer};
use crate::exec::{self, Cmd, Status};

pub use crate::case::versions::{summary, Outcome, VersionRow};

/// Why the stage could not run.
#[derive(Debug, thiserror::Error)]
pub enum VersionsError {
    #[error(transparent)]
    Case(#[from] CaseError),
    #[error("no clang found (looked on PATH and in /usr/lib/llvm-*/bin); name compilers with --compiler")]
    NoCompilers,
    #[error("--compiler {0}: not found (not on PATH and not a path to an executable); install it or give its full path")]
    CompilerNotFound(PathBuf),
    #[error("cannot run {compiler}: {why}")]
    Run { compiler: PathBuf, why: String },
}

impl crate::error::ExitCoded for VersionsError {
    fn exit_code(&self) -> u8 {
        match self {
            VersionsError::Case(e) => crate::error::ExitCoded::exit_code(e),
            VersionsError::CompilerNotFound(_) => crate::error::USAGE,
            VersionsError::NoCompilers | VersionsError::Run { .. } => crate::error::FAILED,
        }
    }
}

/// Clang drivers on this machine: `/usr/lib/llvm-*/bin/clang` and `clang`/`clang-N` on PATH,
/// one per resolved binary, in version order of their directory names.
pub fn find_clangs() -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = Vec::new();
    if let Ok(entries) = std::fs::read_dir("/usr/lib") {
        let mut dirs: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| {
                p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with("llvm-"))
            })
            .collect();
        dirs.sort();
        found.extend(
            dirs.into_iter()
                .map(|d| d.join("bin/clang"))
                .filter(|p| p.is_file()),
        );
    }
    if let Some(path) = std::env::var_os("PATH") {
        for dir in std::env::split_paths(&path) {
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            for e in entries.filter_map(Result::ok) {
                let name = e.file_name().to_string_lossy().into_owned();
                let versioned = name
                    .strip_prefix("clang-")
                    .is_some_and(|v| v.chars().all(|c| c.is_ascii_digit()));
                if name == "clang" || versioned {
                    found.push(e.path());
                }
            }
        }
    }
    let mut seen = std::collections::HashSet::new();
    found
        .into_iter()
        .filter(|p| seen.insert(std::fs::canonicalize(p).unwrap_or_else(|_| p.clone())))
        .collect()
}

/// The major version in a `--version` line (`Debian clang version 16.0.6 …` → 16).
pub fn major_of(version: &str) -> Option<u32> {
    let rest = version.split("version ").nth(1)?;
    rest.split('.').next()?.trim().parse().ok()
}

/// The limit on one compiler's run of the case when the caller sets none.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(300);

/// Runs the case (its verified reduction when it has one) on each compiler, in parallel,
/// each run limited to `timeout` (`--timeout`, or the triage budget's share); a run killed
/// at the limit is a `timeout` row, as any other.
pub fn run_versions(
    dir: &Path,
    compilers: &[PathBuf],
    jobs: usize,
    timeout: Duration,
) -> Result<Vec<VersionRow>, VersionsError> {
    let (mut case, _lock) = Case::load_for_writing(dir)?;
    let compilers = compilers_to_run(compilers)?;
    let replay: Vec<String> = case.best_replay_command();
    let mut cmds = Vec::new();
    for c in &compilers {
        cmds.push(
            Cmd::new(c)
                .args(["--version"])
                .timeout(Duration::from_secs(30)),
        );
        cmds.push(
            Cmd::new(c)
                .args(&replay[1..])
                .cwd(dir)
                .timeout(timeout)
                .output_cap(1 << 20),
        );
    }
    let outs = exec::run_all(&cmds, jobs.max(1));
    let mut rows = Vec::new();
    for (i, c) in compilers.iter().enumerate() {
        let version = first_line(&outs[2 * i]);
        let (outcome, signature, detail) = row_of(&case.signature, c, &outs[2 * i + 1])?;
        rows.push(VersionRow {
            compiler: c.to_string_lossy().into_owned(),
            major: major_of(&version),
            version,
            outcome,
            signature,
            detail,
        });
    }
    rows.sort_by_key(|r| (r.major, r.compiler.clone()));
    case.versions = Some(serde_json::to_value(&rows).expect("serialisable"));
    case.save(dir)?;
    Ok(rows)
}

/// The compilers to try: those named, each of which must be there (one that cannot run has
/// no version to report, and its failure to start must never read as "no crash"), else
/// every clang found.
fn compilers_to_run(named: &[PathBuf]) -> Result<Vec<PathBuf>, VersionsError> {
    let compilers: Vec<PathBuf> = if named.is_empty() {
        find_clangs()
    } else {
        // The compilers run in the case directory, so a relative path is made absolute from
        // here first.
        let cwd = std::env::current_dir().unwrap_or_default();
        named
            .iter()
            .map(|c| {
                let found = c
                    .to_str()
                    .and_then(|s| exec::which(s, &cwd))
                    .ok_or_else(|| VersionsError::CompilerNotFound(c.clone()))?;
                Ok(if c.components().count() > 1 {
                    found
                } else {
                    c.clone()
                })
            })
            .collect::<Result<_, VersionsError>>()?
    };
    if compilers.is_empty() {
        return Err(VersionsError::NoCompilers);
    }
    Ok(compilers)
}

/// The first line of a run's stdout (`--version`), empty when it did not run.
fn first_line(out: &Result<exec::Output, exec::ExecError>) -> String {
    out.as_ref()
        .ok()
        .map(|o| {
            String::from_utf8_lossy(&o.stdout)
                .lines()
                .next()
                .unwrap_or("")
                .trim()
                .to_string()
        })
        .unwrap_or_default()
}

/// A row's outcome, other signature and detail from compiler `c`'s run of the case. A
/// compiler that could not be started, or was interrupted, did not "not crash": an error.
fn row_of(
    case_signature: &crash::Signature,
    c: &Path,
    out: &Result<exec::Output, exec::ExecError>,
) -> Result<(Outcome, Option<String>, Option<String>), VersionsError> {
    let o = match out {
        Err(e) => {
            return Err(VersionsError::Run {
                compiler: c.to_path_buf(),
                why: e.to_string(),
            })
        }
        Ok(o) if o.status == Status::TimedOut => return Ok((Outcome::Timeout, None, None)),
        // Stopped by an interrupt: it neither compiled nor rejected the code.
        Ok(o) if o.status == Status::Cancelled => {
            return Err(VersionsError::Run {
                compiler: c.to_path_buf(),
                why: "interrupted".into(),
            })
        }
        Ok(o) => o,
    };
    let lib =
        crate::capture::library_dirs(&std::fs::canonicalize(c).unwrap_or_else(|_| c.to_path_buf()));
    let stderr = o.stderr_text();
    let crash = crash::parse(&stderr, o.status.exit_info()).map(|mut cr| {
        Symbolizer::new(lib).symbolize(&mut cr);
        cr
    });
    Ok(judge(
        case_signature,
        crash.as_ref(),
        o.status == Status::Exited(0),
        &stderr,
    ))
}

/// A row's outcome, other signature and detail from what one compiler did: the crash it
/// printed, if any, whether it exited 0, and its stderr (for the first error). A crash is
/// the same when its exact id is the case's, the same coarsely when only the coarse id
/// (kind, message, top frame) is.
fn judge(
    case_signature: &crash::Signature,
    crash: Option<&crash::Crash>,
    exited_zero: bool,
    stderr: &str,
) -> (Outcome, Option<String>, Option<String>) {
    match crash {
        Some(cr) => {
            let sig = crash::signature(cr);
            if sig.id == case_signature.id {
                (Outcome::SameCrash, None, None)
            } else if sig.coarse_id == case_signature.coarse_id {
                (
                    Outcome::SameCrashCoarse,
                    Some(sig.id.clone()),
                    Some(crash_line(cr, &sig)),
                )
            } else {
                (
                    Outcome::OtherCrash,
                    Some(sig.id.clone()),
                    Some(crash_line(cr, &sig)),
                )
            }
        }
        None if exited_zero => (Outcome::Compiles, None, None),
        None => (
            Outcome::Rejects,
            None,
            Some(crash::first_error(stderr).unwrap_or_else(|| "no error printed".into())),
        ),
    }
}

/// The crash in one line: its kind, and its normalised message or else its first named frame.
fn crash_line(cr: &crash::Crash, sig: &crash::Signature) -> String {
    let kind = crash::kind_words(cr.kind);
    if !sig.message.is_empty() {
        format!("{kind}: {}", sig.message)
    } else if let Some(f) = sig.frames.first() {
        format!("{kind} in {f}")
    } else {
        kind.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn major_version_from_version_lines() {
        assert_eq!(
            major_of("Debian clang version 16.0.6 (15~deb12u1)"),
            Some(16)
        );
        assert_eq!(major_of("clang version 19.1.7"), Some(19));
        assert_eq!(major_of("gcc (Debian 12.2.0-14) 12.2.0"), None);
    }

    #[test]
    fn outcomes_tell_rejects_from_compiles_and_name_other_crashes() {
        let stderr = "fatal error: error in backend: Do not know how to scalarize the result of this operator!\n";
        let cr = crash::parse(
            stderr,
            crash::ExitInfo {
                code: Some(70),
                signal: None,
            },
        )
        .expect("a crash");
        let mut other = crash::signature(&cr);
        other.id = "abc".into();
        other.coarse_id = "def".into();
        let none = judge(&other, None, true, "");
        assert_eq!(none, (Outcome::Compiles, None, None));
        let (o, _, d) = judge(
            &other,
            None,
            false,
            "t.c:3:23: warning: unsupported\n/tmp/a/t.c:2:35: error: invalid vector element type '_Bool'\n",
        );
        assert_eq!(o, Outcome::Rejects);
        assert_eq!(
            d.as_deref(),
            Some("t.c:2:35: error: invalid vector element type '_Bool'")
        );
        let (o, sig, d) = judge(&other, Some(&cr), false, stderr);
        assert_eq!(o, Outcome::OtherCrash);
        assert!(sig.is_some());
        let d = d.unwrap();
        assert!(d.starts_with("fatal error: "), "{d}");
        assert!(d.contains("Do not know how to scalarize"), "{d}");
        let same = crash::signature(&cr);
        assert_eq!(judge(&same, Some(&cr), false, stderr).0, Outcome::SameCrash);
        // Only the coarse id in common: the same crash at the coarse grain, with its own id.
        let mut coarse = same.clone();
        coarse.id = "abc".into();
        let (o, sig, _) = judge(&coarse, Some(&cr), false, stderr);
        assert_eq!(o, Outcome::SameCrashCoarse);
        assert_eq!(sig, Some(same.id));
    }
}
