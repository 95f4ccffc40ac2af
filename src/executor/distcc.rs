//! The distcc backend: one test is `distcc <compiler> … -c cand.ii -o <scratch>/x.o` sent
//! to one host icepick picks (so that a retry goes to another host and the summary knows
//! where each test ran).
//!
//! Facts this relies on (distcc 3.4, its man page and sources, checked on Debian's package):
//! - By default distcc reruns a failed remote compile locally and, on an "accidental" error,
//!   compiles locally instead; `DISTCC_SKIP_LOCAL_RETRY=1 DISTCC_FALLBACK=0` turn both off,
//!   so a crash seen is the node's. `DISTCC_BACKOFF_PERIOD=0` stops it banning a host that
//!   "failed" (crashing is what our tests do).
//! - Exit codes 100–127 are distcc's own failures, never the compiler's; a compiler killed
//!   by a signal comes back as 128+signal with the node's stderr. distcc itself can also die
//!   (on a refused connection Debian's 3.4 aborts: "bit out of range 0 - FD_SETSIZE", exit
//!   134), so the outcome is taken from distcc's log (`DISTCC_LOG`, one file per attempt):
//!   only a `compile … on HOST completed ok|failed with exit code N` line says the compiler
//!   ran; anything else is an infrastructure failure, retried.
//! - distccd 3.4 refuses an absolute compiler path unless started with
//!   `--enable-tcp-insecure` or `DISTCC_CMDLIST`; it accepts names in its whitelist
//!   (/usr/lib/distcc: `clang-16`, `gcc-12`). So a case's `/usr/lib/llvm-16/bin/clang` is
//!   sent as `clang-16` when that name on PATH is the same binary (a versioned name: a bare
//!   `clang` may be another version on the node), else as the absolute path. Either way each
//!   host's compiler is checked first: a `-v` compile on it must print the same version line
//!   as the local compiler's `--version`; a host that does not is left out.
//! - With `DISTCC_BACKOFF_PERIOD=0` a host that accepts the connection and never answers
//!   makes distcc retry forever; the test's time limit (exec kills the group) ends it, and a
//!   timed-out attempt is retried on another host once.

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use super::{farm_args, resolve, scratch_file, Attempt, Backend, ExecutorError, Job, Place};
use crate::exec::{self, Cmd, ExecError, Status};

/// One distcc host.
#[derive(Debug)]
struct Host {
    /// Its `DISTCC_HOSTS` entry (`127.0.0.1:3632/4,lzo`).
    spec: String,
    in_flight: AtomicUsize,
    failures: AtomicUsize,
}

/// Tests on distcc hosts.
#[derive(Debug)]
pub struct Distcc {
    /// The compiler name sent to the hosts.
    compiler: String,
    hosts: Vec<Host>,
}

/// The host entries of a `DISTCC_HOSTS` value: options (`--randomize`) and zeroconf left
/// out, `localhost` too (a farm that compiles here is not a farm).
pub fn parse_hosts(list: &str) -> Vec<String> {
    list.split_whitespace()
        .filter(|h| !h.starts_with("--") && *h != "+zeroconf")
        .filter(|h| {
            let name = h.split(['/', ',']).next().unwrap_or("");
            name != "localhost"
        })
        .map(String::from)
        .collect()
}

/// The versioned name under which distccd's whitelist knows `compiler`, when that name on
/// PATH is the same binary: `/usr/lib/llvm-16/bin/clang` → `clang-16`.
pub fn whitelisted_name(compiler: &str) -> Option<String> {
    let real = resolve(compiler)?;
    let base = Path::new(compiler).file_name()?.to_str()?;
    let mut names = vec![base.to_string()];
    // /usr/lib/llvm-N/bin/clang(++) → clang(++)-N
    if let Some(v) = compiler
        .split('/')
        .find_map(|c| c.strip_prefix("llvm-"))
        .filter(|v| v.chars().all(|c| c.is_ascii_digit()))
    {
        names.push(format!("{base}-{v}"));
    }
    names
        .into_iter()
        .rev()
        .find(|n| n.chars().any(|c| c.is_ascii_digit()) && resolve(n).is_some_and(|p| p == real))
}

/// Where the compiler ran according to distcc's log (`host:port`, no limit or options):
/// `None` when the log does not say the compiler ran (an infrastructure failure).
pub fn ran_on(log: &str) -> Option<Place> {
    log.lines().rev().find_map(|l| {
        let rest = &l[l.find("compile ")?..];
        let (_, after) = rest.split_once(" on ")?;
        let mut words = after.split_whitespace();
        let host = words.next()?.split(['/', ',']).next()?;
        // `completed ok`, `failed` (exit 1) or `failed with exit code N` (a signal).
        if !matches!(words.next(), Some("completed" | "failed")) {
            return None;
        }
        Some(if host == "localhost" {
            Place::Local
        } else {
            Place::Remote(host.to_string())
        })
    })
}

/// The environment of every distcc attempt: no local retry, no fallback, no backoff.
fn distcc_cmd(host: &str, log: &Path, args: &[String], job: &Job<'_>) -> Cmd {
    // distcc's lock and state files; it does not create the directory itself (exit 107).
    let state = crate::exec::scratch_dir().join("distcc");
    let _ = std::fs::create_dir_all(&state);
    job.environment(
        Cmd::new("distcc")
            .args(args)
            .cwd(job.cwd)
            .timeout(job.timeout)
            .output_cap(1 << 20)
            .env("DISTCC_HOSTS", host)
            .env("DISTCC_SKIP_LOCAL_RETRY", "1")
            .env("DISTCC_FALLBACK", "0")
            .env("DISTCC_BACKOFF_PERIOD", "0")
            .env("DISTCC_LOG", log)
            .env("DISTCC_DIR", state),
    )
}

/// The first line of `compiler --version` here: what every host must print too.
fn local_version(compiler: &str) -> Result<String, ExecutorError> {
    let local = exec::run(
        &Cmd::new(compiler)
            .args(["--version"])
            .timeout(Duration::from_secs(60)),
    )?;
    let want = String::from_utf8_lossy(&local.stdout)
        .lines()
        .next()
        .unwrap_or("")
        .trim()
        .to_string();
    if want.is_empty() {
        return Err(ExecutorError::Setup(format!(
            "`{compiler} --version` printed no version"
        )));
    }
    Ok(want)
}

/// Compiles `probe` on host `spec` with `name -v`: `Ok(Ok(()))` when it ran remotely and
/// printed the version line `want`, else why the host is left out.
fn probe_host(
    spec: &str,
    name: &str,
    probe: &Path,
    want: &str,
) -> Result<Result<(), String>, ExecutorError> {
    let log = scratch_file("identity", "log");
    let args: Vec<String> = [name, "-v"]
        .into_iter()
        .map(String::from)
        .chain(farm_args(
            &[probe.to_string_lossy().into_owned()],
            &scratch_file("identity", "o"),
        ))
        .collect();
    let cwd = exec::scratch_dir();
    let job = Job {
        argv: &args,
        cwd: &cwd,
        timeout: Duration::from_secs(60),
        symbolize: false,
        tmpdir: None,
    };
    let out = exec::run(&distcc_cmd(spec, &log, &args, &job))?;
    let log_text = std::fs::read_to_string(&log).unwrap_or_default();
    let _ = std::fs::remove_file(&log);
    let stderr = out.stderr_text();
    let remote = matches!(ran_on(&log_text), Some(Place::Remote(_)));
    Ok(if remote && stderr.lines().any(|l| l.trim() == want) {
        Ok(())
    } else if remote {
        let got = stderr
            .lines()
            .find(|l| l.contains(" version "))
            .unwrap_or("no version line");
        Err(format!("runs `{got}`, not `{want}`"))
    } else {
        Err(format!(
            "did not compile a probe ({})",
            crate::exec::one_line(&stderr, 200)
        ))
    })
}

impl Distcc {
    /// Hosts from `hosts` or `DISTCC_HOSTS`, each checked to run the same `compiler`; the
    /// second value lists the hosts left out and why.
    pub fn new(hosts: Option<&str>, compiler: &str) -> Result<(Self, Vec<String>), ExecutorError> {
        let list = match hosts {
            Some(h) => h.to_string(),
            None => std::env::var("DISTCC_HOSTS").map_err(|_| {
                ExecutorError::Setup(
                    "no distcc hosts: set DISTCC_HOSTS or pass --distcc-hosts".into(),
                )
            })?,
        };
        let specs = parse_hosts(&list);
        if specs.is_empty() {
            return Err(ExecutorError::Setup(format!(
                "no remote host in the distcc host list `{list}`"
            )));
        }
        let name = whitelisted_name(compiler).unwrap_or_else(|| compiler.to_string());
        let want = local_version(compiler)?;
        let probe = scratch_file("identity", "ii");
        std::fs::write(&probe, "int icepick_identity;\n")
            .map_err(|e| ExecutorError::Setup(format!("{}: {e}", probe.display())))?;
        let (mut ok, mut dropped) = (Vec::new(), Vec::new());
        for spec in specs {
            match probe_host(&spec, &name, &probe, &want)? {
                Ok(()) => ok.push(Host {
                    spec,
                    in_flight: AtomicUsize::new(0),
                    failures: AtomicUsize::new(0),
                }),
                Err(why) => dropped.push(format!("{spec}: {why}")),
            }
        }
        if ok.is_empty() {
            return Err(ExecutorError::Setup(format!(
                "no distcc host runs the case's compiler `{name}`: {}",
                dropped.join("; ")
            )));
        }
        Ok((
            Distcc {
                compiler: name,
                hosts: ok,
            },
            dropped,
        ))
    }

    /// The host for attempt `attempt`: the least busy one, then the next ones on retries.
    fn pick(&self, attempt: u32) -> &Host {
        let mut order: Vec<&Host> = self.hosts.iter().collect();
        order.sort_by_key(|h| {
            (
                h.in_flight.load(Ordering::Relaxed),
                h.failures.load(Ordering::Relaxed),
            )
        });
        order[attempt as usize % order.len()]
    }
}

impl Backend for Distcc {
    fn attempt(
        &self,
        job: &Job<'_>,
        attempt: u32,
        cancel: &(dyn Fn() -> bool + Sync),
    ) -> Result<Attempt, ExecError> {
        let host = self.pick(attempt);
        let obj = scratch_file("d", "o");
        let log = scratch_file("d", "log");
        let args: Vec<String> = std::iter::once(self.compiler.clone())
            .chain(farm_args(&job.argv[1..], &obj))
            .collect();
        host.in_flight.fetch_add(1, Ordering::Relaxed);
        let out = exec::run_cancellable(&distcc_cmd(&host.spec, &log, &args, job), cancel);
        host.in_flight.fetch_sub(1, Ordering::Relaxed);
        let log_text = std::fs::read_to_string(&log).unwrap_or_default();
        let _ = std::fs::remove_file(&log);
        let _ = std::fs::remove_file(&obj);
        let out = out?;
        let name = host.spec.split(['/', ',']).next().unwrap_or("").to_string();
        if matches!(out.status, Status::TimedOut | Status::Cancelled) {
            return Ok(Attempt::Ran(out, Place::Remote(name)));
        }
        match ran_on(&log_text) {
            Some(place) => Ok(Attempt::Ran(out, place)),
            None => {
                host.failures.fetch_add(1, Ordering::Relaxed);
                Ok(Attempt::Infra {
                    host: Some(name),
                    why: format!(
                        "distcc {:?}: {}",
                        out.status,
                        crate::exec::one_line(&out.stderr_text(), 200)
                    ),
                })
            }
        }
    }

    fn nodes(&self) -> usize {
        self.hosts.len()
    }
}
