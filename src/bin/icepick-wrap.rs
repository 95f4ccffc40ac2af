//! `icepick-wrap <compiler> <args…>`: the compiler launcher of `icepick wrap` as a binary of
//! its own, for builds that start it once per compile (`CMAKE_CXX_COMPILER_LAUNCHER=icepick-wrap`,
//! `CC="icepick-wrap clang"`). It links only the pass-through, so it starts faster than the
//! full `icepick`, which it runs only when a compile fails with what may be a crash.

fn main() -> std::process::ExitCode {
    icepick::cli::wrap_launcher()
}
