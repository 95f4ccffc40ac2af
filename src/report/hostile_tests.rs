//! Every string field of a real `case.json`, replaced in turn by text built to break out of
//! where it lands: `repro.sh` must run the same compiler command and nothing else, and
//! `report.md` must hold no Markdown or HTML structure that came from the field.

use std::path::Path;

use serde_json::Value;

use crate::case::Case;

/// What a field may hold. `MARK` stands for a file whose creation means a command ran.
const PAYLOADS: &[&str] = &[
    "llc\ntouch \"$ICEPICK_FUZZ_MARK\" #",
    "x'; touch \"$ICEPICK_FUZZ_MARK\"; '",
    "$(touch \"$ICEPICK_FUZZ_MARK\")`touch \"$ICEPICK_FUZZ_MARK\"`",
    "ICEPICK_INPUT_END_0\nICEPICK_IR_END_0\ntouch \"$ICEPICK_FUZZ_MARK\"\n",
    "v\r\ntouch \"$ICEPICK_FUZZ_MARK\"\n\\",
    "```\n# Injected heading\n<img src=x onerror=alert(1)>\n```",
    "a` [link](javascript:alert(1)) `b",
    "</details>\n\n## Injected\n<script>alert(1)</script>",
    "| cell |\n|---|\n> quote\n- item",
    "x\u{1b}]0;title\u{7}\u{1b}[2J",
];

/// Payloads a shell could act on: run through `sh` (the others only through Markdown).
fn for_the_shell(p: &str) -> bool {
    p.contains("ICEPICK_FUZZ_MARK")
}

fn base() -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("src/report/testdata/destructor-lookup/case.json");
    let mut v: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    // The IR section too, so that its fields are fuzzed as well.
    v["ir"] = serde_json::json!({
        "tool": "llc",
        "command": ["/usr/lib/llvm-19/bin/llc", "-mtriple=riscv32", "reduced.ll", "-o", "/dev/null"],
        "output": "reduced.ll",
        "text": "; RUN: llc -mtriple=riscv32 < %s\ndefine void @f() {\n  ret void\n}\n",
        "pass": "RISC-V DAG->DAG Pattern Instruction Selection",
        "note": "a note",
        "not_needed": ["-mcpu=x", "+v"],
        "verified": true,
    });
    v
}

/// The JSON pointers of every string in `v`.
fn strings(v: &Value, at: String, out: &mut Vec<String>) {
    match v {
        Value::String(_) => out.push(at),
        // Entries of one list are rendered alike: the first two and the last stand for all.
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                if i < 2 || i + 1 == a.len() {
                    strings(x, format!("{at}/{i}"), out);
                }
            }
        }
        Value::Object(o) => {
            for (k, x) in o {
                strings(
                    x,
                    format!("{at}/{}", k.replace('~', "~0").replace('/', "~1")),
                    out,
                );
            }
        }
        _ => {}
    }
}

/// Lines outside fenced code blocks (CommonMark's rule for backtick and tilde fences).
fn outside_fences(md: &str) -> (Vec<&str>, bool) {
    let mut out = Vec::new();
    let mut open: Option<(char, usize)> = None;
    for line in md.lines() {
        let t = line.trim_start_matches(' ');
        let indent = line.len() - t.len();
        let run = |c: char| t.chars().take_while(|x| *x == c).count();
        match open {
            // A backtick fence's info string holds no backtick (else the line is a code span).
            None => match ['`', '~']
                .into_iter()
                .map(|c| (c, run(c)))
                .find(|&(c, n)| n >= 3 && !(c == '`' && t[n..].contains('`')))
            {
                Some(f) if indent <= 3 => open = Some(f),
                _ => out.push(line),
            },
            Some((c, n)) => {
                let r = run(c);
                if indent <= 3 && r >= n && t[r..].trim_end_matches(' ').is_empty() {
                    open = None;
                }
            }
        }
    }
    (out, open.is_some())
}

/// A line without its inline code spans.
fn without_code_spans(line: &str) -> String {
    let chars: Vec<char> = line.chars().collect();
    let run_at = |i: usize| chars[i..].iter().take_while(|c| **c == '`').count();
    let mut out = String::new();
    let mut i = 0;
    while i < chars.len() {
        if chars[i] != '`' {
            out.push(chars[i]);
            i += 1;
            continue;
        }
        let n = run_at(i);
        let mut j = i + n;
        let close = loop {
            if j >= chars.len() {
                break None;
            }
            if chars[j] == '`' {
                let m = run_at(j);
                if m == n {
                    break Some(j + m);
                }
                j += m;
            } else {
                j += 1;
            }
        };
        match close {
            Some(end) => i = end,
            None => {
                out.extend(&chars[i..i + n]);
                i += n;
            }
        }
    }
    out
}

/// The Markdown structure a payload tries to make, counted outside code in `md` (the report
/// has some of its own, `</details>` say: what counts is more of it than without the payload).
fn structure(md: &str) -> Vec<usize> {
    const RAW: &[&str] = &["<img", "<script", "</details", "](javascript:", "\u{1b}"];
    let mut n = vec![0; RAW.len() + 2];
    let (lines, open) = outside_fences(md);
    n[RAW.len() + 1] = usize::from(open);
    for line in lines {
        let bare = without_code_spans(line);
        let t = bare.trim_start();
        for (i, bad) in RAW.iter().enumerate() {
            n[i] += bare
                .match_indices(bad)
                .filter(|(at, _)| *at == 0 || bare.as_bytes()[at - 1] != b'\\')
                .count();
        }
        if t.starts_with("# Injected")
            || t.starts_with("## Injected")
            || t == "|---|"
            || t.starts_with("| cell |")
            || t.starts_with("> quote")
            || t.starts_with("- item")
        {
            n[RAW.len()] += 1;
        }
    }
    n
}

/// Runs `script` with `sh` (and with `sh script ir`), the compiler and the IR tool replaced by
/// a recorder; returns the recorded arguments of the compiler run, and whether the mark file
/// was made.
fn run_script(script: &str, dir: &Path, ir: bool) -> (Vec<String>, bool) {
    let rec = dir.join("rec.sh");
    if !rec.exists() {
        // Written once per directory, by a child process: this process never holds it open
        // for writing, so no fork of another test thread can make running it fail with
        // ETXTBSY ("text file busy").
        let o = std::process::Command::new("sh")
            .args(["-c", "cat > \"$1\" <<'EOF'\n#!/bin/sh\nfor a in \"$@\"; do printf '%s\\0' \"$a\"; done > \"$ICEPICK_FUZZ_REC\"\nEOF\nchmod 755 \"$1\"", "sh"])
            .arg(&rec)
            .status()
            .unwrap();
        assert!(o.success());
    }
    let sh = dir.join("repro.sh");
    std::fs::write(&sh, script).unwrap();
    let (out, mark) = (dir.join("args"), dir.join("MARK"));
    let _ = std::fs::remove_file(&out);
    let _ = std::fs::remove_file(&mark);
    let runs: &[&[&str]] = if ir { &[&[], &["ir"]] } else { &[&[]] };
    for extra in runs {
        std::process::Command::new("sh")
            .arg(&sh)
            .args(*extra)
            .current_dir(dir)
            .env("ICEPICK_COMPILER", &rec)
            .env(
                "ICEPICK_FUZZ_REC",
                if extra.is_empty() {
                    out.clone()
                } else {
                    dir.join("ir-args")
                },
            )
            .env("ICEPICK_FUZZ_MARK", &mark)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .unwrap();
    }
    let args = std::fs::read(&out).unwrap_or_default();
    let args = args
        .split(|b| *b == 0)
        .filter(|a| !a.is_empty())
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect();
    (args, mark.exists())
}

#[test]
fn every_string_field_stays_in_its_place_in_repro_sh_and_report_md() {
    let base = base();
    let mut paths = Vec::new();
    strings(&base, String::new(), &mut paths);
    assert!(paths.len() > 50, "{} strings", paths.len());
    let input = b"struct S { ~S(); };\n".as_slice();
    let reduced = b"struct S;\n".as_slice();
    let case: Case = serde_json::from_value(base.clone()).unwrap();
    let before = structure(&super::markdown(&case, Some(reduced), Some(input)));
    let plain_script = super::repro_script(&case, input, Some(reduced));
    // One field per task: each renders its variants and runs its scripts in a directory of
    // its own.
    use rayon::prelude::*;
    let tried: usize = paths
        .par_iter()
        .map(|path| {
            let dir = tempfile::tempdir().unwrap();
            let mut tried = 0;
            for payload in PAYLOADS {
                let mut v = base.clone();
                *v.pointer_mut(path).unwrap() = Value::String((*payload).into());
                let Ok(case) = serde_json::from_value::<Case>(v) else {
                    continue; // a field with a fixed vocabulary: refused on load
                };
                tried += 1;
                let md = super::markdown(&case, Some(reduced), Some(input));
                let after = structure(&md);
                assert!(
                    after.iter().zip(&before).all(|(a, b)| a <= b),
                    "{path} = {payload:?} puts raw structure ({after:?} > {before:?}) into report.md:\n{md}"
                );
                if !for_the_shell(payload) {
                    continue;
                }
                let script = super::repro_script(&case, input, Some(reduced));
                if script == plain_script {
                    continue; // the field is not in repro.sh
                }
                let (args, marked) = run_script(&script, dir.path(), path.starts_with("/ir/"));
                assert!(!marked, "{path} = {payload:?} ran a command in repro.sh:\n{script}");
                let want: Vec<String> = match super::verified_reduction(&case) {
                    Some((replay, _)) => replay[1..].to_vec(),
                    None => case.replay_command[1..].to_vec(),
                };
                assert_eq!(
                    args, want,
                    "{path} = {payload:?}: repro.sh runs another command:\n{script}"
                );
            }
            tried
        })
        .sum();
    assert!(tried > 200, "{tried} variants");
}
