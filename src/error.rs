//! Exit codes: the documented contract with scripts and build systems.

/// Success.
pub const OK: u8 = 0;
/// icepick itself failed (I/O, a bug); the message says what.
pub const FAILED: u8 = 1;
/// The command line or an input is wrong (missing compiler, unreadable file, not a case, a
/// damaged or unsafe `case.json`, a case without its input, a case another icepick is
/// writing, a taken `--out`, a `--test` script that rejects the original).
pub const USAGE: u8 = 2;
/// The command did not crash: it compiled, failed with ordinary diagnostics, or timed out.
pub const NO_CRASH: u8 = 3;
/// The crash did not come back in any rerun (ten runs in all), or was lost in preprocessing;
/// the case was still written and says which.
pub const NOT_REPRODUCED: u8 = 4;

/// An error that knows the exit code it ends icepick with: each error type says which of its
/// variants are the caller's fault ([`USAGE`]), which are a crash that did not reproduce
/// ([`NOT_REPRODUCED`]) and which are icepick failing ([`FAILED`]); a variant that wraps
/// another error asks it.
pub trait ExitCoded {
    fn exit_code(&self) -> u8;
}

// Interrupted by a signal: 128 + the signal (130 SIGINT, 143 SIGTERM), see
// [`crate::interrupt::exit_code`].

/// The exit-code table for `--help`.
pub const EXIT_CODES_HELP: &str = "\
Exit codes:
  0  success
  1  icepick failed (I/O error or bug; the message says what)
  2  usage error or bad input: missing compiler or file, not a case directory, a damaged
     case.json or one naming files outside its case, a case without its input, a case
     another icepick is writing, --out not empty, a reduce --test script that is not
     executable or fails on the original
  3  the command did not crash (it compiled, failed with ordinary diagnostics, or timed out)
  4  the crash did not reproduce: it did not come back in ten runs (status flaky; a crash that
     comes back in some runs is a case with its rate), or it was lost in preprocessing (the
     case is still written and its status says which), or a link's crash that its LTO
     module does not show (no case; the message says why)
  130  interrupted by Ctrl-C (SIGINT); 143: by SIGTERM. Running compilers and scripts are
     killed; reduce keeps its best so far (--resume continues), other stages leave the case
     as it was";
