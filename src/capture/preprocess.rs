//! Capture's last step: the crashing job preprocessed (fully, else with
//! `-frewrite-includes`, or an already-preprocessed input copied as it is) into the case, and
//! the replay on it checked to crash with the case's signature. The first mode that keeps the
//! crash wins; the case records each mode's command and what happened.

use std::path::Path;

use super::{embed, first_line, given_replay, scratch_for, CaptureError, Request, Runner};
use crate::case::{CaseError, NewCaseDir, Preprocessing};
use crate::command::{CompilerCommand, JobSelector, Lang, Sink};
use crate::crash::Signature;

/// The crashing job and the command it comes from.
pub(super) struct Job<'a> {
    pub req: &'a Request,
    pub command: &'a CompilerCommand,
    /// The command reruns start from (`-fno-crash-diagnostics` added for clang).
    pub replay_base: &'a CompilerCommand,
    pub job_sel: &'a JobSelector,
    pub signature: &'a Signature,
    /// The crashes that count as the case's ([`crate::crash::CrashFamily`]).
    pub family: &'a crate::crash::CrashFamily,
}

/// The input's name in the case, how it was made, and the replay command on it (the last
/// mode's when none kept the crash).
pub(super) fn preprocess_and_replay(
    job: &Job,
    runner: &mut Runner,
    case_dir: &NewCaseDir,
    progress: &mut dyn FnMut(&str),
) -> Result<(String, Preprocessing, Vec<String>), CaptureError> {
    let Job {
        req,
        command,
        replay_base,
        job_sel,
        ..
    } = *job;
    let lang = command.language();
    let mut input_name = String::new();
    let mut preprocessing = None;
    let mut last_replay = None;
    // Input that is already preprocessed (`.i`/`.ii`, or clang's reproducer) is copied as it
    // is: `-E` on it writes nothing.
    let given_input = req.given_input.clone().or_else(|| {
        matches!(lang, Lang::CPre | Lang::CxxPre)
            .then(|| command.inputs().first().map(|i| req.cwd.join(i)))
            .flatten()
    });
    let modes: &[&str] = if given_input.is_some() {
        &["given"]
    } else {
        &["full", "rewrite-includes"]
    };
    for mode in modes {
        input_name = input_name_for(mode, given_input.as_deref(), lang);
        let input_abs = case_dir.path().join(&input_name);
        let (pp_cmd, made) = make_input(
            job,
            runner,
            case_dir,
            mode,
            given_input.as_deref(),
            &input_name,
            progress,
        )?;
        if let Err(detail) = made {
            preprocessing = Some(Preprocessing {
                mode: mode.to_string(),
                command: pp_cmd,
                status: "failed".into(),
                detail: Some(detail),
            });
            continue;
        }
        let (replay, status, detail) = replay_on_input(
            job,
            runner,
            case_dir,
            mode,
            given_input.is_some(),
            (&input_name, &input_abs),
            progress,
        )?;
        last_replay = Some(replay);
        preprocessing = Some(Preprocessing {
            mode: mode.to_string(),
            command: pp_cmd,
            status: status.into(),
            detail,
        });
        if status == "reproduced" {
            break;
        }
    }
    let replay = last_replay.unwrap_or_else(|| {
        replay_base
            .without_side_outputs(&Sink::Nowhere)
            .compile_preprocessed(job_sel, &input_name, lang, "/dev/null", false)
            .argv()
    });
    let preprocessing = preprocessing.expect("at least one mode was tried");
    Ok((input_name, preprocessing, replay))
}

/// The input's file name in the case for `mode`: a given file keeps its extension, a
/// preprocessed one gets the language's (`.i`, `.ii`, `.cui`…), a rewritten one the extension
/// its `-x` reads.
fn input_name_for(mode: &str, given_input: Option<&std::path::Path>, lang: Lang) -> String {
    match (mode, given_input) {
        ("given", Some(src)) => format!(
            "input.{}",
            src.extension().and_then(|e| e.to_str()).unwrap_or("i")
        ),
        ("rewrite-includes", _) => format!("input.{}", lang.rewritten_x().1),
        _ => format!("input.{}", lang.preprocessed_ext()),
    }
}

/// The input made one way (`mode`): copied as given, or the job preprocessed into the case.
/// Returns the command that made it (as the case records it) and whether it was made.
#[allow(clippy::type_complexity)]
fn make_input(
    job: &Job,
    runner: &mut Runner,
    case_dir: &NewCaseDir,
    mode: &str,
    given_input: Option<&Path>,
    input_name: &str,
    progress: &mut dyn FnMut(&str),
) -> Result<(Vec<String>, Result<(), String>), CaptureError> {
    let Job {
        replay_base,
        job_sel,
        ..
    } = *job;
    Ok(match (mode, given_input) {
        ("given", Some(src)) => {
            let bytes = std::fs::read(src)
                .map_err(|e| CaptureError::UnreadableInput(src.to_path_buf(), e))?;
            case_dir.write(input_name, &bytes)?;
            (Vec::new(), Ok(()))
        }
        _ => {
            progress(&format!("preprocessing ({mode})"));
            // `-E` runs in the build's directory: it writes the input and anything beside it
            // into scratch, and the input is copied into the case from there.
            let scratch = scratch_for(&replay_base.program)?;
            let made_at = scratch.path().join(input_name);
            let pp = replay_base
                .without_side_outputs(&Sink::Dir(scratch.path()))
                .preprocess(
                    job_sel,
                    &made_at.to_string_lossy(),
                    mode == "rewrite-includes",
                );
            let r = runner.run(&pp, None)?;
            case_dir.write(&format!("logs/preprocess-{mode}.stderr"), &r.output.stderr)?;
            let made = if r.crash.is_some() {
                Err(format!("`-E` itself crashed ({})", first_line(&r.output)))
            } else if !r.output.success() {
                Err(format!("preprocessing failed: {}", first_line(&r.output)))
            } else {
                match std::fs::read(&made_at) {
                    Ok(bytes) => {
                        case_dir.write(input_name, &bytes)?;
                        Ok(())
                    }
                    Err(_) => Err("preprocessing wrote no output".to_string()),
                }
            };
            let recorded = pp
                .argv()
                .into_iter()
                .map(|a| {
                    if Path::new(&a) == made_at {
                        input_name.to_owned()
                    } else {
                        a
                    }
                })
                .collect();
            (recorded, made)
        }
    })
}

/// The replay on the input made `mode`'s way, from the case directory: its command, and
/// `reproduced` (the case's signature) or `lost` with what happened instead.
fn replay_on_input(
    job: &Job,
    runner: &mut Runner,
    case_dir: &NewCaseDir,
    mode: &str,
    given: bool,
    (input_name, input_abs): (&str, &Path),
    progress: &mut dyn FnMut(&str),
) -> Result<(Vec<String>, &'static str, Option<String>), CaptureError> {
    let Job {
        req,
        command,
        replay_base,
        job_sel,
        signature,
        family,
    } = *job;
    let lang = command.language();
    // The replay the case keeps is run later by every stage: it writes nowhere.
    let replay = replay_base
        .without_side_outputs(&Sink::Nowhere)
        .compile_preprocessed(
            job_sel,
            input_name,
            lang,
            "/dev/null",
            mode == "rewrite-includes",
        );
    let replay = if given {
        given_replay(replay_base, input_name)
    } else {
        replay
    };
    let replay = if carry_embeds(case_dir, input_abs, &req.cwd, command)? {
        replay.with_extra_args(&[&format!("--embed-dir={}", embed::EMBED_DIR)])
    } else {
        replay
    };
    progress("replaying on the preprocessed input");
    let r = runner.run_in_family(&replay, Some(case_dir.path()), family)?;
    case_dir.write(&format!("logs/replay-{mode}.stderr"), &r.output.stderr)?;
    let (status, detail) = match &r.signature {
        _ if super::in_family(family, &r) => ("reproduced", None),
        Some(s) => (
            "lost",
            Some(format!(
                "the preprocessed input crashes differently (signature {} instead of {})",
                s.id, signature.id
            )),
        ),
        None => (
            "lost",
            Some(format!(
                "the preprocessed input does not crash ({})",
                first_line(&r.output)
            )),
        ),
    };
    Ok((replay.argv(), status, detail))
}

/// Copies the files the input's `#embed` directives name into the case's embed directory
/// (renaming directives whose names cannot stand inside it); true when it carried any.
fn carry_embeds(
    case_dir: &NewCaseDir,
    input: &Path,
    cwd: &Path,
    command: &CompilerCommand,
) -> Result<bool, CaptureError> {
    let Ok(text) = std::fs::read_to_string(input) else {
        return Ok(false);
    };
    let names = embed::named(&text);
    if names.is_empty() {
        return Ok(false);
    }
    let source_dir = command
        .inputs()
        .first()
        .map(|i| cwd.join(i))
        .and_then(|p| p.parent().map(Path::to_path_buf))
        .unwrap_or_else(|| cwd.to_path_buf());
    let dirs: Vec<String> = command
        .args
        .iter()
        .filter_map(|a| a.strip_prefix("--embed-dir="))
        .map(str::to_string)
        .collect();
    let mut text_now = text.clone();
    let mut carried = false;
    for n in &names {
        let (Some(from), Some(to)) = (
            embed::resolve(n, &source_dir, &dirs, cwd),
            embed::case_name(n),
        ) else {
            continue;
        };
        let Ok(bytes) = std::fs::read(&from) else {
            continue;
        };
        let rel = format!("{}/{to}", embed::EMBED_DIR);
        if let Some(parent) = case_dir.path().join(&rel).parent() {
            std::fs::create_dir_all(parent).map_err(|e| CaseError::Io {
                path: parent.to_path_buf(),
                error: e,
            })?;
        }
        case_dir.write(&rel, &bytes)?;
        if to != n.name {
            text_now = embed::renamed(&text_now, n, &to);
        }
        carried = true;
    }
    if text_now != text {
        crate::case::write_atomic(input, text_now.as_bytes())?;
    }
    Ok(carried)
}
