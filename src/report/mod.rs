//! One case model, rendered for people: `report.md` (upstream-ready Markdown), the JSON report
//! (`icepick report --format json`) and `repro.sh` (a self-contained reproducer). Rendering is
//! pure and reads the case's data only, never a stage module (one file per section:
//! [`flags`], `classification.rs`, `versions.rs` …; `tests/architecture.rs` checks it).
//! [`write_files`], [`rerender`] and [`Report::load`] are the functions here that read a case
//! directory, and [`write_files`] the one that writes: whoever runs a stage calls [`rerender`]
//! after it (docs/architecture.md).

pub mod chart;
mod classification;
mod environment;
mod facts;
mod files;
pub mod flags;
pub mod godbolt;
mod ir;
mod link;
pub mod markdown;
mod page;
mod redact;
mod upstream;
mod versions;

pub use crate::case::{involves_riscv, target_tag};
pub use facts::{invalid_code, ReductionFacts};
pub use files::{reduced_input, rerender, write_files, Report};
pub use godbolt::compiler_explorer;
pub use page::markdown;
pub use redact::{redact, redact_bytes, redact_case, Redactions};
pub use upstream::labels;

use crate::crash::family::FAMILY_RUNS;
use std::fmt::Write as _;

use crate::case::Case;
use crate::command::{shell_join, shell_quote};
use crate::crash::kind_words;
use markdown::code;

/// Inputs up to this size are embedded in `repro.sh`; larger ones are read from beside it.
pub const EMBED_LIMIT: usize = 256 * 1024;

/// The crash's title, as LLVM issues are titled: `[tag] message`, else `[tag] kind in
/// function`, at most 160 characters. The tag is the backend target of a backend crash, else
/// the LLVM tool of an `llc`/`opt` case, else `clang`; a GCC crash is `gcc crash: …`.
pub fn title(case: &Case) -> String {
    let tag = upstream::title_tag(case)
        .or_else(|| case.llvm_tool())
        .unwrap_or("clang");
    crash_title(&case.crash, &case.signature, tag)
}

/// The one writer of crash titles, for a case ([`title`]) and for a crash store's bucket,
/// which has no case yet: the message without what differs from run to run (addresses,
/// locations, directories), else the crash's kind and site.
pub fn crash_title(
    crash: &crate::crash::Crash,
    signature: &crate::crash::Signature,
    tag: &str,
) -> String {
    let what = match &crash.message {
        Some(m) => upstream::title_message(m),
        None => upstream::site_words(crash, signature),
    };
    let mut t = if crash.family == crate::crash::Family::Gcc {
        format!("gcc crash: {what}")
    } else {
        format!("[{tag}] {what}")
    };
    if t.len() > 160 {
        let mut cut = 157;
        while !t.is_char_boundary(cut) {
            cut -= 1;
        }
        t.truncate(cut);
        t.push_str("...");
    }
    t
}

/// Whether the compiler is a release build that printed no assertion: a maintainer's first
/// question, since an assertions build often stops earlier and says why. Read from the
/// version line (`19.1.7`, not `20.0.0git`) and from the crash (no assertion, no
/// `UNREACHABLE`); `link`: the report has a Compiler Explorer link (which runs trunk with
/// assertions beside the release).
fn release_build_note(case: &Case, link: bool) -> Option<String> {
    static RELEASE: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r"(?:clang|LLVM) version \d+\.\d+\.\d+(?:[\s(,-]|$)")
            .expect("valid regex")
    });
    let v = &case.compiler.version;
    let asserted = matches!(
        case.crash.kind,
        crate::crash::CrashKind::Assertion | crate::crash::CrashKind::Unreachable
    ) || case
        .crash
        .message
        .as_deref()
        .is_some_and(|m| m.contains("Assertion"));
    if case.crash.family == crate::crash::Family::Gcc
        || asserted
        || !RELEASE.is_match(v)
        || v.contains("git")
        || v.to_lowercase().contains("assert")
    {
        return None;
    }
    let mut s = format!(
        "{} is a release build, built without assertions (the crash printed none): an assertions build may stop earlier and say why.",
        code(v)
    );
    if link {
        // clang, or the LLVM tool (`llc-19` runs beside `llc-assertions-trunk`).
        let tool = if v.contains("clang version") {
            "clang".to_string()
        } else {
            let name = std::path::Path::new(&case.compiler.path)
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or("");
            name.split('-')
                .next()
                .filter(|t| !t.is_empty())
                .map_or("LLVM".into(), code)
        };
        s.push_str(&format!(
            " The Compiler Explorer link below runs {tool} trunk with assertions beside it."
        ));
    }
    Some(s)
}

/// The verified reduction of a case, if it has one: (replay command, output file name).
fn verified_reduction(case: &Case) -> Option<(Vec<String>, String)> {
    let r = case.reduction_section()?;
    (r.verified && !r.output.is_empty()).then_some((r.replay_command, r.output))
}

/// The JSON report: `case.json`'s fields, then what the Markdown report adds to them.
#[derive(Debug, Clone, serde::Serialize)]
pub struct JsonReport<'a> {
    #[serde(flatten)]
    pub case: &'a Case,
    pub title: String,
    pub labels: Vec<String>,
    /// A Compiler Explorer session with the crash, when one can be made ([`godbolt`]).
    pub compiler_explorer_url: Option<String>,
    /// What that link opens, or why there is none.
    pub compiler_explorer_note: String,
    /// A Compiler Explorer session running `llc`/`opt` on the verified reduced IR
    /// ([`godbolt::ir_link`]); null when the case has no verified IR reproducer.
    pub ir_compiler_explorer_url: Option<String>,
    /// What the IR link opens, or why there is none; null with no verified IR reproducer.
    pub ir_compiler_explorer_note: Option<String>,
}

/// The JSON report of a case; `reduced` and `input` as for [`markdown`].
pub fn json<'a>(case: &'a Case, reduced: Option<&[u8]>, input: Option<&[u8]>) -> JsonReport<'a> {
    let link = godbolt::compiler_explorer(case, reduced, input);
    let ir_link = ir::link(case);
    JsonReport {
        case,
        title: title(case),
        labels: upstream::labels(case, facts::invalid_code(case)),
        compiler_explorer_url: link.url,
        compiler_explorer_note: link.note,
        ir_compiler_explorer_url: ir_link.as_ref().and_then(|l| l.url.clone()),
        ir_compiler_explorer_note: ir_link.map(|l| l.note),
    }
}

/// `repro.sh`: runs the replay command from any directory, on the verified reduction when
/// there is one (`reduced`), else on the preprocessed input. Small inputs are embedded (the
/// script alone is the reproducer); large ones are read from beside it.
///
/// Everything in the script that comes from the case is data to the shell: comment lines
/// hold no line break, the compiler path and every argument are single-quoted by
/// [`shell_quote`] (the path is assigned outside double quotes, where single quotes are
/// literal, so `$(…)` or backticks in it never run), the embedded input sits in a heredoc
/// with a quoted delimiter that no line of it equals, and its file name is a plain relative
/// path inside the script's temporary directory.
pub fn repro_script(case: &Case, input: &[u8], reduced: Option<&[u8]>) -> String {
    let (replay, file, input) = match verified_reduction(case).zip(reduced) {
        Some(((replay, output), text)) => (replay, output, text),
        None => (case.replay_command.clone(), case.input.clone(), input),
    };
    let mut s = String::new();
    let _ = writeln!(s, "#!/bin/sh");
    let _ = writeln!(
        s,
        "# icepick reproducer for crash {} ({}): {}",
        comment_text(&case.signature.id),
        kind_words(case.crash.kind),
        comment_text(&title(case))
    );
    let _ = writeln!(s, "# Compiler: {}", comment_text(&case.compiler.version));
    let _ = writeln!(
        s,
        "# Set ICEPICK_COMPILER to try another compiler. Exit status: the compiler's."
    );
    let _ = writeln!(s, "set -u");
    s.push_str(&ir::repro_branch(case));
    let compiler = replay
        .first()
        .cloned()
        .unwrap_or_else(|| case.compiler.path.clone());
    let _ = writeln!(s, "compiler=${{ICEPICK_COMPILER:-}}");
    let _ = writeln!(
        s,
        "[ -n \"$compiler\" ] || compiler={}",
        shell_quote(&compiler)
    );
    // A replay that reads embedded files (`--embed-dir`) runs in the case, which holds them.
    let reads_case_files = replay.iter().any(|a| a.starts_with("--embed-dir="));
    match embed_delimiter(input).filter(|_| is_plain_relative(&file) && !reads_case_files) {
        Some(delim) => {
            let _ = writeln!(s, "dir=$(mktemp -d) || exit 1");
            let _ = writeln!(s, "trap 'rm -rf \"$dir\"' EXIT");
            if let Some((parent, _)) = file.rsplit_once('/') {
                let _ = writeln!(s, "mkdir -p \"$dir\"/{} || exit 1", shell_quote(parent));
            }
            let _ = writeln!(s, "cat > \"$dir\"/{} <<'{delim}'", shell_quote(&file));
            s.push_str(&String::from_utf8_lossy(input));
            if !input.ends_with(b"\n") {
                s.push('\n');
            }
            let _ = writeln!(s, "{delim}");
            let _ = writeln!(s, "cd \"$dir\" || exit 1");
        }
        None => {
            let _ = writeln!(s, "cd \"$(dirname \"$0\")\" || exit 1");
        }
    }
    let args = shell_join(&replay[1.min(replay.len())..]);
    let family = case.family();
    if family.is_deterministic() {
        let _ = writeln!(s, "\"$compiler\" {args}");
    } else {
        // A crash of some runs only: run it until it fails, as often as a run of ten needs.
        let _ = writeln!(
            s,
            "# The crash comes in some runs only ({}): up to {FAMILY_RUNS} runs, until one fails.",
            comment_text(&family.describe())
        );
        let _ = writeln!(
            s,
            "i=0\nwhile [ \"$i\" -lt {FAMILY_RUNS} ]; do\n  \"$compiler\" {args} || exit $?\n  i=$((i + 1))\ndone\necho \"no crash in {FAMILY_RUNS} runs\" >&2"
        );
    }
    s
}

/// Text for a `#` comment line: control characters (a line break would end the comment
/// and make the rest a command) become spaces.
fn comment_text(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

/// A relative path with no empty, `.` or `..` component: written under the script's
/// temporary directory, it stays there.
fn is_plain_relative(path: &str) -> bool {
    !path.is_empty()
        && path
            .split('/')
            .all(|c| !c.is_empty() && c != "." && c != "..")
}

/// A heredoc delimiter that no line of `input` equals, or `None` when the input is too large,
/// not UTF-8 or holds a NUL byte (which a shell drops from a heredoc) to embed.
fn embed_delimiter(input: &[u8]) -> Option<String> {
    if input.len() > EMBED_LIMIT || input.contains(&0) {
        return None;
    }
    let text = std::str::from_utf8(input).ok()?;
    // `split('\n')`, not `lines()`: the shell compares whole lines, `\r` included.
    let lines: std::collections::HashSet<&str> = text.split('\n').collect();
    (0..)
        .map(|n| format!("ICEPICK_INPUT_END_{n}"))
        .find(|d| !lines.contains(d.as_str()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::case::tests::sample_case;

    #[test]
    fn repro_script_embeds_small_inputs_and_runs_anywhere() {
        let case = sample_case();
        let s = repro_script(&case, b"int main(void) { return 0; }\n", None);
        assert!(s.contains("<<'ICEPICK_INPUT_END_0'\nint main(void)"));
        assert!(s.contains("\"$compiler\" input.i"));
        let big = vec![b'x'; EMBED_LIMIT + 1];
        let s = repro_script(&case, &big, None);
        assert!(s.contains("cd \"$(dirname \"$0\")\""));
        assert!(!s.contains("ICEPICK_INPUT_END"));
    }

    #[test]
    fn repro_script_of_a_crash_of_some_runs_runs_it_until_it_fails() {
        let mut case = sample_case();
        let s = repro_script(&case, b"int x;\n", None);
        assert!(!s.contains("while"), "{s}");
        let mut family = case.family();
        family.runs = 10;
        family.crashed = 6;
        case.family = Some(family);
        let s = repro_script(&case, b"int x;\n", None);
        assert!(
            s.contains("# The crash comes in some runs only (crashes 6 of 10 runs)"),
            "{s}"
        );
        assert!(s.contains("  \"$compiler\" input.i || exit $?\n"), "{s}");
    }

    #[test]
    fn repro_script_keeps_case_text_out_of_the_shells_hands() {
        let mut case = sample_case();
        let path = "/opt/x $(touch P) `id` \"q\" it's\n\\";
        case.replay_command = vec![path.into(), "-DX=$(id)".into(), "input.i".into()];
        case.compiler.version = "clang 19\ntouch P2".into();
        case.crash.message = Some("boom\rtouch P3".into());
        let s = repro_script(&case, b"int x;\n", None);
        // The compiler path is assigned single-quoted, outside double quotes.
        assert!(
            s.contains(
                "\n[ -n \"$compiler\" ] || compiler='/opt/x $(touch P) `id` \"q\" it'\\''s\n\\'\n"
            ),
            "{s}"
        );
        assert!(s.contains("\ncompiler=${ICEPICK_COMPILER:-}\n"), "{s}");
        assert!(s.contains("\"$compiler\" '-DX=$(id)' input.i\n"), "{s}");
        // Comment lines hold no line break: every line after `#` is one comment.
        assert!(s.contains("# Compiler: clang 19 touch P2\n"), "{s}");
        assert!(!s.contains('\r'), "{s}");
        // A file name that would leave the temporary directory is not written there.
        case.input = "../x.i".into();
        case.replay_command = vec!["clang".into(), "../x.i".into()];
        let s = repro_script(&case, b"int x;\n", None);
        assert!(!s.contains("cat >"), "{s}");
        case.input = "sub/x.i".into();
        let s = repro_script(&case, b"int x;\n", None);
        assert!(
            s.contains("mkdir -p \"$dir\"/sub || exit 1\ncat > \"$dir\"/sub/x.i"),
            "{s}"
        );
        // Inputs with a NUL byte are not embedded.
        assert!(embed_delimiter(b"a\0b\n").is_none());
    }

    #[test]
    fn delimiter_avoids_the_content() {
        assert_eq!(
            embed_delimiter(b"ICEPICK_INPUT_END_0\n").as_deref(),
            Some("ICEPICK_INPUT_END_1")
        );
        // The last line counts without its newline; a line with `\r` is not the delimiter.
        assert_eq!(
            embed_delimiter(b"x\nICEPICK_INPUT_END_0").as_deref(),
            Some("ICEPICK_INPUT_END_1")
        );
        assert_eq!(
            embed_delimiter(b"ICEPICK_INPUT_END_0\r\n").as_deref(),
            Some("ICEPICK_INPUT_END_0")
        );
    }

    #[test]
    fn release_builds_are_said_to_have_no_assertions() {
        let mut case = sample_case();
        case.compiler.version = "Debian clang version 19.1.7 (3~deb12u1)".into();
        let n = release_build_note(&case, true).unwrap();
        assert!(n.contains("release build, built without assertions"), "{n}");
        assert!(n.contains("trunk with assertions"), "{n}");
        assert!(!release_build_note(&case, false)
            .unwrap()
            .contains("Compiler Explorer"));
        case.compiler.version =
            "clang version 20.0.0git (https://github.com/llvm/llvm-project abc)".into();
        assert_eq!(release_build_note(&case, true), None);
        case.compiler.version = "Debian clang version 19.1.7 (3~deb12u1)".into();
        case.crash.kind = crate::crash::CrashKind::Assertion;
        assert_eq!(release_build_note(&case, true), None);
        // llc and opt print `LLVM version`, and an assertions build says so on a later line.
        case.crash.kind = crate::crash::CrashKind::Segfault;
        case.compiler.version = "Debian LLVM version 19.1.7".into();
        case.compiler.path = "/usr/bin/llc-19".into();
        assert!(release_build_note(&case, false).is_some());
        let n = release_build_note(&case, true).unwrap();
        assert!(n.contains("runs `llc` trunk with assertions"), "{n}");
        case.compiler.version = "Debian LLVM version 19.1.7, with assertions".into();
        assert_eq!(release_build_note(&case, false), None);
    }

    #[test]
    fn title_prefers_the_verbatim_message() {
        let mut case = sample_case();
        assert_eq!(title(&case), "[clang] segmentation fault in f");
        case.crash.message = Some("Cannot select: 0x1: ch = store".into());
        assert_eq!(title(&case), "[clang] Cannot select: ch = store");
    }
}

#[cfg(test)]
mod reduced_tests {
    use super::*;
    use crate::case::tests::sample_case;

    #[test]
    fn a_verified_reduction_is_shown_and_replayed() {
        let mut case = sample_case();
        case.reduction = Some(serde_json::json!({
            "verified": true,
            "output": "reduced.i",
            "replay_command": ["clang", "-c", "reduced.i"],
        }));
        let md = markdown(&case, Some(b"int f(){}\n"), None);
        assert!(
            md.contains("## Reduced test case\n\n```c\nint f(){}\n```"),
            "{md}"
        );
        let sh = repro_script(&case, b"big input", Some(b"int f(){}\n"));
        assert!(sh.contains("cat > \"$dir\"/reduced.i"), "{sh}");
        assert!(sh.contains("\"$compiler\" -c reduced.i"), "{sh}");
        // An unverified reduction is not used.
        case.reduction.as_mut().unwrap()["verified"] = false.into();
        assert!(!markdown(&case, Some(b"x"), None).contains("Reduced test case"));
        assert!(repro_script(&case, b"orig", Some(b"x")).contains("input.i"));
    }
}

#[cfg(test)]
mod snapshot_tests;

#[cfg(test)]
mod kind_snapshot_tests;

#[cfg(test)]
mod hostile_tests;
