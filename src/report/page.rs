//! `report.md`, section by section, in the order a maintainer reads it: what crashes and
//! where, the reduced test case (the IR one first), how to reproduce it, the crash itself,
//! then what the stages measured (flags, versions, classification) and the environment.

use std::fmt::Write as _;

use super::markdown::{code, fence, table_code, table_text, text};
use super::{
    chart, classification, environment, facts, flags, godbolt, involves_riscv, ir, link,
    release_build_note, title, upstream, verified_reduction, versions,
};
use crate::case::{Case, CaseStatus};
use crate::command::shell_join;
use crate::crash::kind_words;

/// Reduced sources up to this size are shown inline in the report.
const INLINE_LIMIT: usize = 16 * 1024;

/// Frames of the backtrace in view; the rest are folded away.
const FRAMES_SHOWN: usize = 15;

/// `report.md`; `reduced` is the content of the case's reduction output and `input` of its
/// preprocessed input, when they are at hand (the Compiler Explorer link is made from them).
pub fn markdown(case: &Case, reduced: Option<&[u8]>, input: Option<&[u8]>) -> String {
    let link = godbolt::compiler_explorer(case, reduced, input);
    let reduction = verified_reduction(case).zip(reduced);
    let mut s = opening(case, reduction.is_some());
    if let Some(note) = release_build_note(case, link.url.is_some()) {
        let _ = writeln!(s, "{note}\n");
    }
    s.push_str(&status_note(case));
    s.push_str(&budget_note(case));
    // A verified IR reproducer comes first: it is what becomes the regression test.
    s.push_str(&ir::section(case));
    s.push_str(&link::section(case));
    s.push_str(&link::source_section(case));
    if let Some(((replay, output), source)) = &reduction {
        s.push_str(&reduced_section(case, replay, output, source));
    }
    let replay = reduction.as_ref().map(|((r, _), _)| r);
    s.push_str(&reproducer_section(
        case,
        &link,
        replay.unwrap_or(&case.replay_command),
    ));
    s.push_str(&crash_section(case));
    s.push_str(&facts::bug_info_section(case));
    if let Some(flags) = &case.flags {
        let _ = writeln!(s, "{}", flags::markdown_section(flags));
    }
    s.push_str(&versions::markdown_section(case));
    if let Some(c) = &case.classification {
        s.push_str(&classification::markdown_section(
            c,
            involves_riscv(case),
            &crate::crash::named_frames(&case.crash, crate::case::classification::FRAMES_KEPT),
        ));
    }
    s.push_str(&environment_section(case));
    s
}

/// The title and the sentence under it: which compiler crashes how, on what, and the
/// signature.
fn opening(case: &Case, reduced_shown: bool) -> String {
    let on = if reduced_shown {
        "the reduced test case below".to_string()
    } else {
        let what = if case.link.is_some() {
            "LTO module saved from the link,"
        } else if case.is_llvm_tool() {
            "input"
        } else {
            "preprocessed input"
        };
        format!("its {what} {}", code(&case.input))
    };
    let at = link::crashed_in(case)
        .map(|w| format!(" {w}"))
        .unwrap_or_default();
    format!(
        "# {}\n\n{} crashes ({}){at} on {on}. Signature {} (coarse {}).\n\n",
        text(&title(case)),
        code(&case.compiler.version),
        kind_words(case.crash.kind),
        code(&case.signature.id),
        code(&case.signature.coarse_id)
    )
}

/// A quoted status line for a capture that did not go as planned (flaky, lost in
/// preprocessing); empty otherwise.
fn status_note(case: &Case) -> String {
    match case.status {
        CaseStatus::Captured => String::new(),
        CaseStatus::Flaky | CaseStatus::LostInPreprocessing => format!(
            "> **Status: {}.** {}\n\n",
            serde_json::to_value(case.status)
                .ok()
                .and_then(|v| v.as_str().map(String::from))
                .unwrap_or_default(),
            text(case.status_detail.as_deref().unwrap_or(""))
        ),
    }
}

/// What the triage budget cut or kept from running, and how to finish it; empty when it cut
/// nothing.
fn budget_note(case: &Case) -> String {
    use crate::case::triage::{StageName, StageStatus};
    let Some(t) = case.triage.as_ref().filter(|t| t.budget_ran_out) else {
        return String::new();
    };
    let what: Vec<String> = t
        .budget_losses()
        .iter()
        .map(|r| {
            let name = r.stage.as_str();
            match (r.stage, r.status) {
                (StageName::Flags, StageStatus::Cut) => {
                    "`flags` was cut short (the command may not be minimal; undecided dimensions say so)".to_string()
                }
                (StageName::Reduce, StageStatus::Cut) => {
                    "`reduce` was cut short (the result is its smallest so far)".to_string()
                }
                (_, StageStatus::Cut) => format!("`{name}` was cut short"),
                _ => format!("`{name}` did not run"),
            }
        })
        .collect();
    let budget = t
        .budget_seconds
        .map_or(String::new(), |b| format!(" of {b:.0} s"));
    format!(
        "> **Triage budget{budget} ran out:** {}. Run the stage again on this case (`icepick reduce --resume`, `icepick classify`, …) to finish it.\n\n",
        what.join("; ")
    )
}

/// The verified reduced test case (inline when short), the command that crashes on it, and
/// what the reduction did.
fn reduced_section(case: &Case, replay: &[String], output: &str, source: &[u8]) -> String {
    let lang = match output.rsplit('.').next() {
        Some("i" | "c") => "c",
        _ => "cpp",
    };
    let mut s = String::from("## Reduced test case\n\n");
    if source.len() <= INLINE_LIMIT {
        let _ = writeln!(
            s,
            "{}",
            fence(lang, String::from_utf8_lossy(source).trim_end())
        );
    } else {
        let _ = writeln!(
            s,
            "{} ({} bytes, too long to show here).\n",
            code(output),
            source.len()
        );
    }
    let _ = writeln!(s, "{}", fence("sh", &shell_join(replay)));
    if replay.iter().any(|a| a.starts_with("--embed-dir=")) {
        let _ = writeln!(
            s,
            "The test case embeds files with `#embed`; they are in the case's `embed/` directory, which `--embed-dir=embed` names.\n"
        );
    }
    s.push_str(&facts::reduction_paragraph(case));
    s.push_str(&chart::markdown_link(case));
    s
}

/// The Compiler Explorer link (or why there is none), the command `repro.sh` runs, the
/// original command, the crashing job of a multi-job compile and the suggested labels.
fn reproducer_section(case: &Case, link: &godbolt::Link, replay: &[String]) -> String {
    let mut s = String::from("## Reproducer\n\n");
    match &link.url {
        Some(url) => {
            let _ = writeln!(s, "[Try it on Compiler Explorer]({url}): {}.\n", link.note);
        }
        None => {
            let _ = writeln!(s, "No Compiler Explorer link: {}.\n", link.note);
        }
    }
    let _ = writeln!(
        s,
        "Run `sh repro.sh` from anywhere, or inside this directory:\n\n{}",
        fence("sh", &shell_join(replay))
    );
    // A link's case: its command is the IR command above; the link is in its own section.
    if case.link.is_none() {
        let _ = writeln!(s, "Original command (in {}):\n", code(&case.cwd));
        let _ = writeln!(s, "{}", fence("sh", &shell_join(&case.command)));
    }
    if case.job.kind != "single" {
        let arch = case
            .job
            .offload_arch
            .as_deref()
            .map(|a| format!(" for {}", code(a)))
            .unwrap_or_default();
        let _ = writeln!(
            s,
            "The crash is in the **{}** job{arch}.\n",
            text(&case.job.kind)
        );
    }
    let labels: Vec<String> = upstream::labels(case, facts::invalid_code(case))
        .iter()
        .map(|l| code(l))
        .collect();
    let _ = writeln!(s, "Suggested labels: {}\n", labels.join(", "));
    s
}

/// The crash's table (kind, message, top frames, how often it reproduced, the input) and
/// its output: the pretty stack and the backtrace.
fn crash_section(case: &Case) -> String {
    let mut s = String::from("## Crash\n\n");
    s.push_str(&facts::crash_rows(case, kind_words(case.crash.kind)));
    let frames: Vec<String> = case
        .signature
        .frames
        .iter()
        .map(|f| table_code(f))
        .collect();
    let _ = writeln!(s, "| top frames | {} |", frames.join(" → "));
    let family = case.family();
    if family.is_one_signature() {
        let _ = writeln!(
            s,
            "| reproduced | {} of {} runs |",
            case.reproducibility.same_signature, case.reproducibility.runs
        );
    } else {
        let _ = writeln!(
            s,
            "| reproduced | crashed in {} of {} runs, {} different signatures; the case's crash is {}{} |",
            family.crashed,
            family.runs,
            family.variants.len(),
            table_text(family.rule.words()),
            family
                .key()
                .map(|k| format!(": {}", table_code(k)))
                .unwrap_or_default()
        );
    }
    let _ = writeln!(
        s,
        "| {} | {} ({}, {}) |\n",
        if case.is_llvm_tool() {
            "input (IR)"
        } else {
            "preprocessed input"
        },
        table_code(&case.input),
        table_text(&case.preprocessing.mode),
        table_text(&case.preprocessing.status)
    );
    s.push_str(&crash_output(case));
    s
}

/// The pretty stack and the backtrace once, from the crash site (the crash handler's and
/// libc's frames above it are noise; an unsymbolised site is kept, it is where the crash
/// is): its top frames in view, the rest folded away. Empty when the crash printed neither.
fn crash_output(case: &Case) -> String {
    let crash = &case.crash;
    if crash.pretty_stack.is_empty() && crash.frames.is_empty() {
        return String::new();
    }
    let mut output = String::new();
    for e in &crash.pretty_stack {
        let _ = writeln!(output, "{}.\t{}", e.index, e.text);
    }
    let first = crate::crash::crash_site(crash)
        .and_then(|site| crash.frames.iter().position(|f| std::ptr::eq(f, site)))
        .unwrap_or(0);
    let frame_line = |f: &crate::crash::Frame| match (&f.symbol, &f.module, f.offset) {
        (Some(sym), _, _) => format!("#{:<3} {sym}", f.index),
        (None, Some(m), Some(o)) => format!("#{:<3} ({m}+{o:#x})", f.index),
        _ => format!("#{:<3} ??", f.index),
    };
    let shown = &crash.frames[first.min(crash.frames.len())..];
    for f in shown.iter().take(FRAMES_SHOWN) {
        let _ = writeln!(output, "{}", frame_line(f));
    }
    let mut s = format!("{}\n", fence("", &output));
    if shown.len() > FRAMES_SHOWN {
        let rest: String = shown[FRAMES_SHOWN..]
            .iter()
            .map(|f| frame_line(f) + "\n")
            .collect();
        let _ = writeln!(
            s,
            "<details><summary>The other {} frames</summary>\n\n{}</details>\n",
            shown.len() - FRAMES_SHOWN,
            fence("", &rest)
        );
    }
    s
}

/// The compiler, its version, the host and how the capture went.
fn environment_section(case: &Case) -> String {
    let mut s = String::from("## Environment\n\n");
    let _ = writeln!(
        s,
        "- compiler: {} ({})",
        code(&case.compiler.path),
        code(&case.compiler.resolved_path)
    );
    let _ = writeln!(s, "- version: {}", text(&case.compiler.version));
    for line in environment::host_lines(case.host.as_ref(), &case.emulator) {
        let _ = writeln!(s, "- {line}");
    }
    let _ = writeln!(
        s,
        "- captured by icepick {} in {} compiler runs ({:.1} s)",
        text(&case.icepick_version),
        case.capture.compiler_runs,
        case.capture.seconds
    );
    s
}
