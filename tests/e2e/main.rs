//! End-to-end tests: the `icepick` binary against the real compilers that `scripts/setup`
//! installs (Debian's clang-14/15/16/19). Nothing here is mocked except where a test says
//! it models something no real binary shows on demand.

mod bad_input;
mod build_readonly;
mod capture;
mod capture_jobs;
mod case_safety;
mod classify;
mod cli_conventions;
mod dashboard;
mod farm;
mod flags;
mod flaky;
mod inspect;
mod ir;
mod link;
mod processes;
mod quoting;
mod reduce;
mod reduce_test_raw;
mod reduce_valid;
mod report_truth;
mod standalone;
mod store;
mod store_pg;
mod symbolizer;
mod trace;
mod triage_kinds;
mod util;
mod versions;
mod wrap_tty;
