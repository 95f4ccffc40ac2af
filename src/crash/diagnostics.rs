//! The diagnostics a compiler printed before it crashed, verbatim.
//!
//! Why this exists: LLVM's "How to submit a bug" asks for what clang said, and a triager
//! reads the errors before a crash to tell a crash-on-invalid from a crash-on-valid (issue
//! 12). The crash parser counts those errors ([`super::parse`]'s `source_errors`); this keeps
//! their text: every line before the first line of the crash report (`PLEASE submit a bug
//! report`, `Stack dump:`, an assertion, `LLVM ERROR` …), leading and trailing blank lines
//! dropped, at most [`MAX_LINES`] lines of at most [`MAX_LINE`] bytes each. Pure.

/// Most lines kept.
pub const MAX_LINES: usize = 40;
/// Longest line kept (bytes; longer ones are cut at a character boundary and end in `…`).
pub const MAX_LINE: usize = 512;

/// Starts of the lines that begin a crash report (clang, LLVM tools, GCC).
const CRASH_STARTS: &[&str] = &[
    "PLEASE submit a bug report",
    "PLEASE ATTACH THE FOLLOWING FILES",
    "Stack dump:",
    "LLVM ERROR:",
    "UNREACHABLE executed",
    "Please submit a full bug report",
];

fn starts_crash(line: &str) -> bool {
    let t = line.trim_start();
    CRASH_STARTS.iter().any(|s| t.starts_with(s))
        || t.starts_with("#0 ")
        || line.contains(": Assertion `")
        || line.starts_with("Assertion failed: ")
        || line.contains("fatal error: error in backend:")
        || line.contains("internal compiler error:")
        || line.contains("error: unable to execute command:")
        || (line.contains("error: ") && line.contains(" command failed "))
}

/// The lines printed before the crash report, and how many were left out by the cap.
pub fn prior_diagnostics(stderr: &str) -> (Vec<String>, u32) {
    let mut lines: Vec<&str> = stderr.lines().take_while(|l| !starts_crash(l)).collect();
    while lines.last().is_some_and(|l| l.trim().is_empty()) {
        lines.pop();
    }
    let first = lines
        .iter()
        .position(|l| !l.trim().is_empty())
        .unwrap_or(lines.len());
    let lines = &lines[first..];
    let omitted = lines.len().saturating_sub(MAX_LINES) as u32;
    let kept = lines
        .iter()
        .take(MAX_LINES)
        .map(|l| {
            if l.len() <= MAX_LINE {
                l.to_string()
            } else {
                let mut cut = MAX_LINE;
                while !l.is_char_boundary(cut) {
                    cut -= 1;
                }
                format!("{}…", &l[..cut])
            }
        })
        .collect();
    (kept, omitted)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_what_came_before_the_crash_verbatim() {
        let err = "\
a.cpp:1:23: error: unknown type name 'concept'
    1 | template <typename T> concept Small = sizeof(T) <= 4;
      |                       ^
1 error generated.
PLEASE submit a bug report to https://github.com/llvm/llvm-project/issues/ and include the crash backtrace.
Stack dump:
0.\tProgram arguments: clang++ -c a.cpp
a.cpp:9:1: error: not before the crash
";
        let (d, omitted) = prior_diagnostics(err);
        assert_eq!(omitted, 0);
        assert_eq!(d.len(), 4, "{d:?}");
        assert_eq!(d[0], "a.cpp:1:23: error: unknown type name 'concept'");
        assert_eq!(d[2], "      |                       ^");
    }

    #[test]
    fn nothing_before_the_crash_is_nothing_and_long_output_is_capped() {
        assert!(prior_diagnostics("\nStack dump:\n0.\tx\n").0.is_empty());
        assert!(prior_diagnostics(" #0 0x1 f()\n").0.is_empty());
        let out = "clang: error: unable to execute command: Segmentation fault\n";
        assert!(prior_diagnostics(out).0.is_empty());
        let many: String = (0..100)
            .map(|i| format!("f.c:{i}:1: warning: w{i}\n"))
            .collect::<String>()
            + &"x".repeat(2000)
            + "\nStack dump:\n";
        let (d, omitted) = prior_diagnostics(&many);
        assert_eq!(d.len(), MAX_LINES);
        assert_eq!(omitted, 101 - MAX_LINES as u32);
        let (d, _) = prior_diagnostics(&format!("{}é\nStack dump:\n", "x".repeat(MAX_LINE - 1)));
        assert!(
            d[0].ends_with('…') && d[0].len() <= MAX_LINE + 3,
            "{}",
            d[0].len()
        );
    }
}
