//! Finds crashed compiles in build logs (ninja, make, CMake's generators): pure text in,
//! commands and their crash text out.
//!
//! A log is read as a sequence of *segments*, each starting at an echoed compiler command
//! (ninja prints `FAILED: <output>` and then the command; `make VERBOSE=1` and plain
//! Makefiles echo every command; CMake's Makefiles may prefix `cd DIR && `) and running to
//! the next command or build-tool line (`[3/8] …`, `[ 50%] …`, `FAILED:`, `make: ***`).
//! A segment whose text parses as a crash ([`crate::crash::parse`]) is a crashed compile.
//!
//! Where output of parallel jobs interleaves (`make -j`), the crash's `Program arguments`
//! line (the driver's argv when cc1 ran in-process) picks the command whose input it names;
//! a crash with no echoed command at all (plain `make` without `VERBOSE=1`) takes its command
//! from that line. The working directory comes from `cd DIR &&`, else the innermost
//! `make: Entering directory`, else `ninja: Entering directory` (relative directories are
//! left for the caller to resolve against the log's directory).

use std::sync::OnceLock;

use regex::Regex;

use crate::command::CompilerCommand;
use crate::crash::{self, ExitInfo};

/// One crashed compile found in a log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FoundCrash {
    /// 1-based line of the command in the log (or of the crash text, when the command came
    /// from `Program arguments`).
    pub line: usize,
    /// The compile command, compiler first (launchers such as `icepick wrap` or `ccache`
    /// removed).
    pub command: Vec<String>,
    /// The directory the command ran in, as the log says it (may be relative), if it says.
    pub cwd: Option<String>,
    /// The compiler output that followed the command: the crash text.
    pub output: String,
    /// The bucket `icepick wrap` already recorded this crash in, when the build ran under
    /// it (its line follows the crash text): scanning such a log must not count it twice.
    pub recorded_by_wrap: Option<String>,
}

/// A compiler command echoed in the log.
#[derive(Debug, Clone)]
struct Echoed {
    line: usize,
    argv: Vec<String>,
    cwd: Option<String>,
}

fn compiler_name() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(
            r"^(?:[\w.+]+-)*(?:clang|clang\+\+|clang-cl|gcc|g\+\+|cc|c\+\+|amdclang|amdclang\+\+|hipcc)(?:-\d+(?:\.\d+)*)?$",
        )
        .expect("valid regex")
    })
}

/// Lines that end a command's output: build-tool progress and summaries.
fn tool_line() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(
            r"^(?:\[\d+/\d+\] |\[ *\d+%\] |FAILED: |ninja: |g?make(?:\[\d+\])?: |-- |Scanning dependencies|Consolidate compiler generated dependencies)",
        )
        .expect("valid regex")
    })
}

fn entering() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(r"^(?:(ninja)|g?make(?:\[\d+\])?): (Entering|Leaving) directory [`'](.*)'$")
            .expect("valid regex")
    })
}

/// The line `icepick wrap` adds after a crash it recorded.
fn wrap_line() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(r"(?m)^icepick: crash (?:captured as|recorded in) bucket ([0-9a-f]+)\b")
            .expect("valid regex")
    })
}

fn basename(p: &str) -> &str {
    p.rsplit('/').next().unwrap_or(p)
}

/// Launchers that run the compiler given after them (and how many words they take).
fn launcher_words(argv: &[String]) -> Option<usize> {
    let first = basename(argv.first()?);
    match first {
        "icepick" if argv.get(1).map(String::as_str) == Some("wrap") => Some(2),
        "ccache" | "sccache" | "distcc" | "icecc" | "buildcache" | "time" => Some(1),
        "env" => Some(
            1 + argv[1..]
                .iter()
                .take_while(|a| a.contains('=') || a.starts_with('-'))
                .count(),
        ),
        _ => None,
    }
}

/// The compiler command in one echoed line, with the directory of a `cd DIR && ` prefix.
fn parse_command(line: &str) -> Option<(Vec<String>, Option<String>)> {
    let trimmed = line.trim();
    let first = trimmed.split_whitespace().next()?;
    // Cheap filter before shell parsing: most log lines are diagnostics.
    if !(first == "cd" || first == ":" || first == "env" || compiler_like(first)) {
        let b = basename(first);
        if !matches!(
            b,
            "icepick" | "ccache" | "sccache" | "distcc" | "icecc" | "buildcache" | "time"
        ) {
            return None;
        }
    }
    let words = shlex::split(trimmed)?;
    let mut cwd = None;
    for part in words.split(|w| w == "&&" || w == ";") {
        if part.is_empty() {
            continue;
        }
        if part[0] == "cd" && part.len() == 2 {
            cwd = Some(part[1].clone());
            continue;
        }
        let mut rest = part;
        while let Some(n) = launcher_words(rest) {
            rest = rest.get(n..)?;
        }
        if rest.first().is_some_and(|p| compiler_like(p)) {
            return Some((rest.to_vec(), cwd));
        }
    }
    None
}

fn compiler_like(word: &str) -> bool {
    compiler_name().is_match(basename(word))
}

/// Every crashed compile in `log`, in log order. One pass over the lines on purpose: the
/// directory stack, ninja's directory and the open segment are state every case changes.
pub fn crashed_compiles(log: &str) -> Vec<FoundCrash> {
    let lines: Vec<&str> = log.lines().collect();
    let mut dirs: Vec<String> = Vec::new();
    let mut ninja_dir: Option<String> = None;
    let mut echoed: Vec<Echoed> = Vec::new();
    // Segments: (index into `echoed` or None for text before any command, first line, end).
    let mut segments: Vec<(Option<usize>, usize, usize)> = Vec::new();
    let mut open: Option<(Option<usize>, usize)> = Some((None, 0));
    let close = |open: &mut Option<(Option<usize>, usize)>, segs: &mut Vec<_>, end: usize| {
        if let Some((cmd, start)) = open.take() {
            segs.push((cmd, start, end));
        }
    };
    for (i, line) in lines.iter().enumerate() {
        if let Some(c) = entering().captures(line) {
            let dir = c[3].to_string();
            match (c.get(1).is_some(), &c[2]) {
                (true, _) => ninja_dir = Some(dir),
                (false, "Entering") => dirs.push(dir),
                (false, _) => {
                    dirs.pop();
                }
            }
        }
        if let Some((argv, cd)) = parse_command(strip_status(line)) {
            close(&mut open, &mut segments, i);
            let cwd = cd.or_else(|| dirs.last().cloned()).or(ninja_dir.clone());
            echoed.push(Echoed {
                line: i + 1,
                argv,
                cwd,
            });
            open = Some((Some(echoed.len() - 1), i + 1));
        } else if tool_line().is_match(line) {
            close(&mut open, &mut segments, i);
            open = Some((None, i + 1));
        }
    }
    close(&mut open, &mut segments, lines.len());

    let mut found = Vec::new();
    for (cmd, start, end) in segments {
        if start >= end {
            continue;
        }
        let text = lines[start..end].join("\n");
        let Some(c) = crash::parse(&text, ExitInfo::default()) else {
            continue;
        };
        let from_args = c
            .program_arguments
            .as_deref()
            .filter(|a| !a.split_whitespace().any(|w| w == "-cc1"));
        let named = |e: &Echoed| from_args.is_some_and(|a| names_input_of(a, &e.argv));
        // The echoed command this crash belongs to: the segment's own, unless the crash
        // names another command's input (interleaved parallel output).
        let chosen = match cmd.map(|k| &echoed[k]) {
            Some(e) if from_args.is_none() || named(e) => Some(e.clone()),
            own => echoed[..cmd.unwrap_or(echoed.len()).min(echoed.len())]
                .iter()
                .rev()
                .find(|e| named(e))
                .cloned()
                .or_else(|| own.filter(|_| from_args.is_none()).cloned()),
        };
        let (line, command, cwd) = match (chosen, from_args) {
            (Some(e), _) => (e.line, e.argv, e.cwd),
            (None, Some(args)) => {
                let argv: Vec<String> = args.split_whitespace().map(String::from).collect();
                (start + 1, argv, dirs_at(&lines[..start]))
            }
            (None, None) => match cmd {
                Some(k) => (
                    echoed[k].line,
                    echoed[k].argv.clone(),
                    echoed[k].cwd.clone(),
                ),
                None => continue,
            },
        };
        let recorded_by_wrap = wrap_line().captures(&text).map(|c| c[1].to_string());
        found.push(FoundCrash {
            line,
            command,
            cwd,
            output: text,
            recorded_by_wrap,
        });
    }
    found
}

/// A line without ninja's `[3/8] ` status prefix (`ninja -v` prints commands after it).
fn strip_status(line: &str) -> &str {
    static RE: OnceLock<Regex> = OnceLock::new();
    let re = RE.get_or_init(|| Regex::new(r"^\[\d+/\d+\] ").expect("valid regex"));
    match re.find(line) {
        Some(m) => &line[m.end()..],
        None => line,
    }
}

/// Whether the driver argv printed as `Program arguments` names `argv`'s input file.
fn names_input_of(program_arguments: &str, argv: &[String]) -> bool {
    let Some(cmd) = CompilerCommand::from_argv(argv) else {
        return false;
    };
    let inputs = cmd.inputs();
    !inputs.is_empty()
        && inputs
            .iter()
            .all(|i| program_arguments.split_whitespace().any(|w| w == *i))
}

/// The directory in force after `lines` (innermost make directory, else ninja's).
fn dirs_at(lines: &[&str]) -> Option<String> {
    let mut dirs: Vec<String> = Vec::new();
    let mut ninja = None;
    for line in lines {
        if let Some(c) = entering().captures(line) {
            match (c.get(1).is_some(), &c[2]) {
                (true, _) => ninja = Some(c[3].to_string()),
                (false, "Entering") => dirs.push(c[3].to_string()),
                (false, _) => {
                    dirs.pop();
                }
            }
        }
    }
    dirs.pop().or(ninja)
}

#[cfg(test)]
mod tests;
