//! The `icepick` binary: parse arguments, run, map the result to an exit code.

fn main() -> std::process::ExitCode {
    icepick::cli::main()
}
