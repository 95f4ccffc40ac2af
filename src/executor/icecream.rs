//! The icecream backend: one test is `icecc <absolute compiler> … -c cand.ii -o
//! <scratch>/x.o`; the local iceccd asks its scheduler for a node.
//!
//! Facts this relies on (icecream 1.4, Debian's `icecc`, seen on this machine and in its
//! client sources):
//! - icecc compiles locally, silently, for `-E`, `-o /dev/null`, `-save-temps`, `-B`, for an
//!   `-x` it does not know (`c++-cpp-output`: "unsupported -x option … running locally"),
//!   and it falls back to a local compile when the remote output mentions "out of memory",
//!   "bad_alloc" or "file not found", or when no daemon answers. Each attempt therefore gets
//!   its own `ICECC_LOGFILE` with `ICECC_DEBUG=info`, and a log showing `<building_local>`
//!   is a local test ([`Place::Local`], counted: a farm that runs everything locally is not
//!   a farm). The test argv drops `-x c++-cpp-output`/`-x cpp-output` when the candidate's
//!   extension (`.ii`/`.i`) says the same.
//! - The node compiles from stdin (`-x c++ … -`, plus `-main-file-name`) inside a chroot
//!   made from the compiler tarball, which has no llvm-symbolizer: a remote crash comes back
//!   with exit 139 and an unsymbolized stack dump; `crash::symbolize` names its frames from
//!   the ELF files named in it, so the signature is a local run's (tests/fixtures/farm).
//! - The compiler is shipped as a tarball made once per run by `icecc-create-env --clang
//!   <absolute clang>` and named by `ICECC_VERSION`.
//! - The client's log at `ICECC_DEBUG=debug` names the node the scheduler gave
//!   (`Have to use host 10.0.0.7:10245`) and ends a remote compile with `Compiled on`; a
//!   remote test is counted on that node (`icecream` if the log does not say). When the
//!   scheduler picks this machine's own daemon the client "builds myself": a local test.
//! - On a loopback farm every node is 127.0.0.1, which the client takes for itself unless
//!   `ICECC_TEST_REMOTEBUILD=1`, and the local daemon is picked for its own jobs unless it
//!   has no slots (`iceccd --no-remote -m 0`); tests/e2e/farm_util.rs sets both up.

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::{farm_args, resolve, scratch_file, Attempt, Backend, ExecutorError, Job, Place};
use crate::exec::{self, Cmd, ExecError, Status};

/// Tests on an icecream farm.
#[derive(Debug)]
pub struct Icecream {
    /// The absolute compiler.
    compiler: String,
    /// The tarball `icecc-create-env` made (`ICECC_VERSION`).
    env_tarball: PathBuf,
}

/// What a client log (`ICECC_DEBUG=debug`) says about where the compile ran: `None` when
/// it does not say the compile finished anywhere (an infrastructure failure). A remote
/// compile is named by the node the scheduler gave (`Have to use host 10.0.0.7:10245`),
/// else `icecream`.
pub fn ran_on(log: &str) -> Option<Place> {
    // icecc's own local builds: `<building_local>` (no daemon, an unsupported option, a
    // remote failure it retries here) and "building myself" (the scheduler chose this
    // machine's daemon, which then only counts the job).
    if log.contains("<building_local>") || log.contains("building myself") {
        return Some(Place::Local);
    }
    // A remote job: the client sent the file and got the result back.
    if log.contains("Compiled on ") || log.contains("</wait for cs") {
        return Some(Place::Remote(
            node_of(log).unwrap_or_else(|| "icecream".into()),
        ));
    }
    None
}

/// The node a failed attempt was sent to, when its log says.
pub fn node_of(log: &str) -> Option<String> {
    log.lines()
        .rev()
        .find_map(|l| l.split("Have to use host ").nth(1))
        .and_then(|rest| rest.split_whitespace().next())
        .map(String::from)
}

/// The icecc form of a test's arguments: [`farm_args`], with `-x c++-cpp-output` (which
/// icecc compiles locally) dropped when the input's extension implies it.
pub fn icecc_args(args: &[String], obj: &Path) -> Vec<String> {
    let mut out = Vec::with_capacity(args.len());
    let ext_of = |a: &str| {
        Path::new(a)
            .extension()
            .and_then(|e| e.to_str())
            .map(String::from)
    };
    let exts: Vec<String> = args.iter().filter_map(|a| ext_of(a)).collect();
    let mut i = 0;
    while i < args.len() {
        if args[i] == "-x" && i + 1 < args.len() {
            let implied = match args[i + 1].as_str() {
                "c++-cpp-output" => "ii",
                "cpp-output" | "c-cpp-output" => "i",
                _ => "",
            };
            if !implied.is_empty() && exts.iter().any(|e| e == implied) {
                i += 2;
                continue;
            }
        }
        out.push(args[i].clone());
        i += 1;
    }
    farm_args(&out, obj)
}

impl Icecream {
    /// Packs `compiler` for the farm (`icecc-create-env --clang`, once per run).
    pub fn new(compiler: &str) -> Result<Self, ExecutorError> {
        let abs = resolve(compiler)
            .ok_or_else(|| ExecutorError::Setup(format!("cannot find the compiler {compiler}")))?;
        if !abs
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with("clang"))
        {
            return Err(ExecutorError::Setup(format!(
                "icecream: only clang cases are packed for now ({compiler})"
            )));
        }
        let dir = scratch_file("icecc-env", "d");
        std::fs::create_dir_all(&dir)
            .map_err(|e| ExecutorError::Setup(format!("{}: {e}", dir.display())))?;
        let out = exec::run(
            &Cmd::new("icecc-create-env")
                .args([std::ffi::OsStr::new("--clang"), abs.as_os_str()])
                .cwd(&dir)
                .timeout(Duration::from_secs(600)),
        )?;
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            out.stderr_text()
        );
        let tarball = text
            .lines()
            .filter_map(|l| l.strip_prefix("creating "))
            .map(|n| dir.join(n.trim()))
            .find(|p| p.is_file())
            .ok_or_else(|| {
                ExecutorError::Setup(format!(
                    "icecc-create-env --clang {} made no tarball: {}",
                    abs.display(),
                    exec::one_line(&text, 300)
                ))
            })?;
        Ok(Icecream {
            compiler: abs.to_string_lossy().into_owned(),
            env_tarball: tarball,
        })
    }
}

impl Backend for Icecream {
    fn attempt(
        &self,
        job: &Job<'_>,
        _attempt: u32,
        cancel: &(dyn Fn() -> bool + Sync),
    ) -> Result<Attempt, ExecError> {
        let obj = scratch_file("i", "o");
        let log = scratch_file("i", "log");
        let args: Vec<String> = std::iter::once(self.compiler.clone())
            .chain(icecc_args(&job.argv[1..], &obj))
            .collect();
        let cmd = job.environment(
            Cmd::new("icecc")
                .args(&args)
                .cwd(job.cwd)
                .timeout(job.timeout)
                .output_cap(1 << 20)
                .env("ICECC_VERSION", &self.env_tarball)
                .env("ICECC_DEBUG", "debug")
                .env("ICECC_LOGFILE", &log),
        );
        let out = exec::run_cancellable(&cmd, cancel);
        let log_text = std::fs::read_to_string(&log).unwrap_or_default();
        let _ = std::fs::remove_file(&log);
        let _ = std::fs::remove_file(&obj);
        let out = out?;
        if matches!(out.status, Status::TimedOut | Status::Cancelled) {
            let node = node_of(&log_text).unwrap_or_else(|| "icecream".into());
            return Ok(Attempt::Ran(out, Place::Remote(node)));
        }
        match ran_on(&log_text) {
            // icecc's own local build after the node it was given failed.
            Some(Place::Local) if log_text.contains("got exception") => Ok(Attempt::RanHereAfter {
                out,
                failed: node_of(&log_text).unwrap_or_else(|| "?".into()),
            }),
            Some(place) => Ok(Attempt::Ran(out, place)),
            None => Ok(Attempt::Infra {
                host: node_of(&log_text),
                why: exec::one_line(&log_text, 300),
            }),
        }
    }

    fn nodes(&self) -> usize {
        1
    }
}
