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

/// The first error a compiler printed, on one line, without local paths: `input.i:2:35: error:
/// invalid vector element type '_Bool'` for a source error (its location keeps the file's
/// name, the directories go), `error: invalid arch name 'rv32i…'` for a driver error (the
/// driver's path goes). `None` when no line says `error:`.
pub fn first_error(stderr: &str) -> Option<String> {
    let line = stderr
        .lines()
        .find(|l| l.contains("error: ") && !l.trim_start().starts_with('#'))?;
    let line = line.trim();
    let (before, after) = line.split_once("error: ")?;
    let before = before.trim_end();
    // `clang: error:` / `/usr/lib/llvm-14/bin/clang: error:` / `t.c:2:35: error:` /
    // `t.c:2:35: fatal error:`: keep a source location's file name and position only.
    let before = before
        .strip_suffix("fatal")
        .map(str::trim_end)
        .unwrap_or(before);
    let before = before.strip_suffix(':').unwrap_or(before);
    let location = if super::is_source_error(line) {
        let base = before.rsplit('/').next().unwrap_or(before);
        format!("{base}: ")
    } else {
        String::new()
    };
    let fatal = if line.contains("fatal error: ") {
        "fatal "
    } else {
        ""
    };
    let mut out = format!("{location}{fatal}error: {}", strip_dirs(after.trim()));
    if out.len() > MAX_LINE {
        let mut cut = MAX_LINE;
        while !out.is_char_boundary(cut) {
            cut -= 1;
        }
        out.truncate(cut);
        out.push('…');
    }
    Some(out)
}

/// `text` with the directories of every absolute path removed (`'/home/me/x.h'` → `'x.h'`).
fn strip_dirs(text: &str) -> String {
    static ABS: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r#"(^|[\s'"`(=])(?:/[^\s'"`/:()]+)+/"#).expect("valid regex")
    });
    ABS.replace_all(text, "$1").into_owned()
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

    #[test]
    fn first_error_without_local_paths() {
        let err = "/tmp/x/t2.c:2:35: error: invalid vector element type '_Bool'\n\
                   typedef _Bool v32b __attribute__((ext_vector_type(32)));\n\
                   t2.c:5:1: error: second\n";
        assert_eq!(
            first_error(err).as_deref(),
            Some("t2.c:2:35: error: invalid vector element type '_Bool'")
        );
        let err = "warning: x\n/usr/lib/llvm-14/bin/clang: error: invalid arch name 'rv32ixventanacondops', unsupported\n";
        assert_eq!(
            first_error(err).as_deref(),
            Some("error: invalid arch name 'rv32ixventanacondops', unsupported")
        );
        let err = "a.c:1:10: fatal error: '/home/me/inc/x.h' file not found\n";
        assert_eq!(
            first_error(err).as_deref(),
            Some("a.c:1:10: fatal error: 'x.h' file not found")
        );
        assert_eq!(first_error("1 warning generated.\n"), None);
    }
}
