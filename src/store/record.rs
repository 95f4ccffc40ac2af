//! From a crashed compile seen in a build (by `icepick wrap`, or in a log by `scan-log`) to
//! an occurrence in the store, and, for the first occurrence of a bucket, a captured case.

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::{now_utc, BucketKey, NewOccurrence, Store, StoreError};
use crate::capture::{self, Outcome, Request};
use crate::command::CompilerCommand;
use crate::crash::{self, Crash, ExitInfo, Signature, Symbolizer};

/// A crashed compile as the build saw it.
#[derive(Debug, Clone)]
pub struct Observed<'a> {
    /// The compile command, program first.
    pub argv: &'a [String],
    /// Where it ran.
    pub cwd: &'a Path,
    /// The compiler's exit code as the build saw it, when known.
    pub exit_code: Option<i32>,
    /// `wrap` or `scan-log`.
    pub origin: &'a str,
}

/// A crash parsed from compiler output, with its bucket.
#[derive(Debug, Clone)]
pub struct Analysed {
    pub crash: Crash,
    pub signature: Signature,
    pub key: BucketKey,
    /// The compiler's version line from the crash text (`Debian clang version 16.0.6 …`).
    pub compiler_version: Option<String>,
}

/// Whether, and how, to capture a case for a bucket's first occurrence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CaptureMode {
    /// Only record the occurrence (the crash text is enough to bucket it); `icepick triage
    /// --pending` captures from the recorded command later.
    Off,
    /// Capture when this occurrence is the first of its bucket (or earlier captures failed).
    FirstPerBucket { reruns: u32, timeout: Duration },
}

/// What recording did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recording {
    pub bucket: String,
    pub title: String,
    /// Occurrences of the bucket, this one included.
    pub count: i64,
    pub occurrence: i64,
    /// The bucket's representative case (captured now or earlier), if any.
    pub case_dir: Option<PathBuf>,
    /// This call captured the case.
    pub captured: bool,
    /// Why this call's capture failed, if it tried and failed.
    pub capture_error: Option<String>,
}

/// Parses compiler output; `None` when it shows no crash. Frames printed without names are
/// symbolized from the compiler's libraries (ELF reads only, no process).
pub fn analyse(stderr: &str, exit: ExitInfo, compiler: &Path) -> Option<Analysed> {
    let mut crash = crash::parse(stderr, exit)?;
    if matches!(
        crash.kind,
        crash::CrashKind::Killed | crash::CrashKind::Timeout
    ) {
        // Infrastructure (the OOM killer, a build timeout), not a compiler bug.
        return None;
    }
    let resolved = std::fs::canonicalize(compiler).unwrap_or_else(|_| compiler.to_owned());
    Symbolizer::new(capture::library_dirs(&resolved)).symbolize(&mut crash);
    let signature = crash::signature(&crash);
    let key = BucketKey {
        id: signature.id.clone(),
        coarse_id: signature.coarse_id.clone(),
        title: title(
            &crash,
            &signature,
            capture::is_link_output(stderr, &crash),
            compiler,
        ),
        kind: signature.kind.clone(),
    };
    Some(Analysed {
        compiler_version: compiler_version_in(stderr),
        crash,
        signature,
        key,
    })
}

/// The bucket title, as a case's report titles the crash ([`crate::report::crash_title`]):
/// tagged with the LLVM tool of an `llc`/`opt` crash, `clang, LTO link` for a crash in a
/// link's LTO step (`link`), else `clang`.
pub fn title(crash: &Crash, sig: &Signature, link: bool, compiler: &Path) -> String {
    let tool = crate::command::llvm_tool_named(&compiler.to_string_lossy());
    let tag = match (link, tool) {
        (true, _) => "clang, LTO link",
        (false, Some(t)) => t,
        (false, None) => "clang",
    };
    crate::report::crash_title(crash, sig, tag)
}

/// The version line clang prints after a crash (`Debian clang version 16.0.6 (15~deb12u1)`),
/// so that recording needs no `--version` run.
pub fn compiler_version_in(stderr: &str) -> Option<String> {
    stderr
        .lines()
        .map(str::trim)
        .find(|l| {
            (l.contains("clang version ") || l.starts_with("gcc version "))
                && !l.starts_with('#')
                && !l.contains(": ")
        })
        .map(str::to_string)
}

/// This host's name (the UTS name: a container or `unshare --uts` machine has its own).
pub(crate) fn hostname() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: gethostname writes at most `len` bytes into the buffer we own.
    let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    if rc != 0 {
        return String::new();
    }
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(&buf[..end]).into_owned()
}

/// The user running icepick: `$USER`, else `$LOGNAME`, else the numeric uid.
pub(crate) fn user_name() -> Option<String> {
    ["USER", "LOGNAME"]
        .iter()
        .find_map(|k| std::env::var(k).ok().filter(|v| !v.is_empty()))
        .or_else(|| {
            // SAFETY: getuid cannot fail and touches no memory of ours.
            Some(unsafe { libc::getuid() }.to_string())
        })
}

/// The occurrence `obs` of the crash `a`, as recorded (or spooled): now, on this host, by
/// this user.
pub fn occurrence_of(obs: &Observed<'_>, a: &Analysed) -> NewOccurrence {
    let command = CompilerCommand::from_argv(obs.argv);
    let source = command
        .as_ref()
        .and_then(|c| c.inputs().first().map(|s| s.to_string()));
    let compiler = obs
        .argv
        .first()
        .map(|p| {
            crate::exec::which(p, obs.cwd)
                .map(|f| f.to_string_lossy().into_owned())
                .unwrap_or_else(|| p.clone())
        })
        .unwrap_or_default();
    NewOccurrence {
        time: now_utc(),
        host: hostname(),
        user: user_name(),
        cwd: obs.cwd.to_string_lossy().into_owned(),
        command: obs.argv.to_vec(),
        source,
        compiler,
        compiler_version: a.compiler_version.clone(),
        exit_code: obs.exit_code,
        origin: obs.origin.to_string(),
    }
}

impl Store {
    /// Records `obs` in the bucket of `a`; when `mode` says so and this occurrence claims the
    /// bucket's capture, captures the case into the store's `cases/` (outside any
    /// transaction: other processes keep recording meanwhile). A failed capture is recorded
    /// in the bucket and reported in [`Recording::capture_error`], not as `Err`.
    pub fn record_crash(
        &mut self,
        obs: &Observed<'_>,
        a: &Analysed,
        mode: &CaptureMode,
    ) -> Result<Recording, StoreError> {
        let occ = occurrence_of(obs, a);
        let want = matches!(mode, CaptureMode::FirstPerBucket { .. });
        let rec = self.record(&a.key, &occ, want)?;
        let mut out = Recording {
            bucket: a.key.id.clone(),
            title: a.key.title.clone(),
            count: rec.count,
            occurrence: rec.occurrence,
            case_dir: rec.case_dir.map(PathBuf::from),
            captured: false,
            capture_error: None,
        };
        let CaptureMode::FirstPerBucket { reruns, timeout } = mode else {
            return Ok(out);
        };
        if !rec.capture {
            return Ok(out);
        }
        match self.capture_for(
            &a.key.id,
            Some(rec.occurrence),
            obs.argv,
            obs.cwd,
            *reruns,
            *timeout,
        ) {
            Ok(dir) => {
                out.case_dir = Some(dir);
                out.captured = true;
            }
            Err(reason) => out.capture_error = Some(reason),
        }
        Ok(out)
    }

    /// Captures a case for `bucket` from a recorded command and attaches it; on failure
    /// records the reason in the bucket and returns it.
    pub fn capture_for(
        &mut self,
        bucket: &str,
        occurrence: Option<i64>,
        argv: &[String],
        cwd: &Path,
        reruns: u32,
        timeout: Duration,
    ) -> Result<PathBuf, String> {
        let req = Request {
            argv: argv.to_vec(),
            cwd: cwd.to_owned(),
            out: None,
            cases_parent: self.cases_dir(),
            timeout,
            reruns,
            given_input: None,
            emulator: Vec::new(),
        };
        let failure = match capture::capture(&req, &mut |_| {}) {
            Ok(Outcome::Case { dir, case }) => {
                // Capture writes its section only; the report is rendered by whoever runs it.
                if let Err(e) = crate::report::write_files(&dir, &case) {
                    return Err(e.to_string());
                }
                return match self.attach_case(bucket, occurrence, &dir) {
                    Ok(()) => Ok(dir),
                    Err(e) => Err(e.to_string()),
                };
            }
            Ok(Outcome::NoCrash { reason, .. }) => {
                format!("the compile did not crash again when rerun ({reason})")
            }
            Ok(Outcome::TimedOut { seconds }) => {
                format!("the rerun did not finish within {seconds} s")
            }
            Err(e) => e.to_string(),
        };
        let _ = self.capture_failed(bucket, &failure);
        Err(failure)
    }
}

#[cfg(test)]
mod title_tests {
    use super::*;

    #[test]
    fn bucket_titles_are_the_reports_and_name_the_tool() {
        let stderr = "LLVM ERROR: Cannot select: 0x55d0edd0f9c0: v16i1 = setcc 0x55d0edd0f6b0, 0x55d0edd0f870, seteq:ch\n";
        let exit = ExitInfo {
            code: Some(1),
            signal: None,
        };
        let llc = analyse(stderr, exit, Path::new("/usr/lib/llvm-19/bin/llc")).unwrap();
        // No addresses: the title is the same for every run of the crash.
        assert_eq!(llc.key.title, "[llc] Cannot select: v16i1 = setcc");
        let clang = analyse(stderr, exit, Path::new("/usr/bin/clang-19")).unwrap();
        assert_eq!(clang.key.title, "[clang] Cannot select: v16i1 = setcc");
        assert_eq!(
            crate::report::crash_title(&clang.crash, &clang.signature, "clang"),
            clang.key.title
        );
    }
}
