//! E7: resources: an OOM kill, a timeout or a stack overflow is the machine running out,
//! not a miscompiling compiler; a stack overflow is rerun with an unlimited stack.

use super::{compare, not_run, this_host};
use crate::case::Case;
use crate::classify::outcome as o;
use crate::classify::Evidence;
use crate::crash::{CrashKind, Symbolizer};
use crate::exec::{self, Cmd};

/// What E7 is, in its evidence.
pub(super) const EXPERIMENT: &str = "resources: OOM kill, timeout, stack overflow";

pub(super) fn resources(case: &Case, timeouts: usize, replay: &Cmd, sym: &Symbolizer) -> Evidence {
    let experiment = EXPERIMENT;
    let host = this_host();
    let mut e = not_run("E7", experiment, &host, "");
    e.ran = true;
    match case.crash.kind {
        CrashKind::Killed | CrashKind::Timeout => {
            e.outcome = o::RESOURCE_KILLED.into();
            e.detail = format!(
                "the case's crash is a {}",
                crate::crash::kind_words(case.crash.kind)
            );
        }
        _ if timeouts > 0 => {
            e.outcome = o::RESOURCE_KILLED.into();
            e.detail = format!("{timeouts} E1 rerun(s) timed out");
        }
        CrashKind::StackOverflow => {
            let mut cmd = replay.clone();
            cmd.stack_limit = Some(u64::MAX);
            let seen = compare(case, &exec::run(&cmd), sym);
            e.outcome = if seen.outcome == o::NO_CRASH {
                o::FIXED_BY_STACK
            } else {
                o::NOT_FIXED_BY_STACK
            }
            .into();
            e.signature = seen.crash.as_ref().map(|(_, s)| s.id.clone());
            e.detail = format!(
                "rerun with an unlimited stack (RLIMIT_STACK): {}",
                seen.note
            );
        }
        k => {
            e.outcome = o::NO_RESOURCE_SIGN.into();
            e.detail = format!(
                "the crash is a {}: not a kill, timeout or stack overflow",
                crate::crash::kind_words(k)
            );
        }
    }
    e
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_e7_rerun_gets_an_unlimited_stack_and_other_runs_keep_theirs() {
        let sh = |limit| {
            let mut c = Cmd::new("sh").args(["-c", "ulimit -s"]);
            c.stack_limit = limit;
            String::from_utf8(exec::run(&c).unwrap().stdout).unwrap()
        };
        let mut hard = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: getrlimit writes only into `hard`.
        unsafe { libc::getrlimit(libc::RLIMIT_STACK, &mut hard) };
        if hard.rlim_max == libc::RLIM_INFINITY {
            assert_eq!(sh(Some(u64::MAX)).trim(), "unlimited");
        }
        assert_eq!(sh(Some(16 << 20)).trim(), "16384");
        let inherited = sh(None);
        assert!(!inherited.trim().is_empty());
    }
}
