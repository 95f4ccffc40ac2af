//! The reduce stage of a link case whose needed inputs' sources are in the case: the sources
//! are reduced C-Reduce style (`reduce::reduce_with_script`), the test being that they
//! compile and link to the link's crash (`icepick link-test`, [`link_sources::link_test`]),
//! then checked once more from a fresh directory.

use std::path::Path;
use std::time::Instant;

use super::{PipelineError, Progress, StageStatus};
use crate::capture::link_sources;
use crate::case::link::{LinkSources, SourceReduction, SOURCE_TEST};
use crate::case::{Case, CaseError};
use crate::command::shell_quote;
use crate::reduce::{self, Settings};

/// Reduced sources up to this size each are kept in the section, for the report.
const TEXT_SHOWN: usize = 16 * 1024;

/// The link sources of the case in `dir`, when it has them.
pub(super) fn sources(dir: &Path) -> Option<LinkSources> {
    Case::load(dir).ok()?.link?.source
}

/// Reduces the sources; the stage's status and one line, with the section saved.
pub(super) fn reduce_sources(
    dir: &Path,
    sources: &LinkSources,
    settings: &Settings,
    progress: &mut dyn Progress,
) -> Result<(StageStatus, String), PipelineError> {
    let started = Instant::now();
    // The script's name is icepick's, not the case's: nothing a case says is written over.
    let script = dir.join(SOURCE_TEST);
    let exe = std::env::current_exe().map_err(|e| io(dir, e))?;
    let case_dir = std::fs::canonicalize(dir).map_err(|e| io(dir, e))?;
    let text = format!(
        "#!/bin/sh\n# Interesting (exit 0) when the files here compile and link to the case's crash.\nexec {} link-test {}\n",
        shell_quote(&exe.to_string_lossy()),
        shell_quote(&case_dir.to_string_lossy())
    );
    crate::case::fileio::write_mode(dir, SOURCE_TEST, text.as_bytes(), 0o755)?;
    let files: Vec<_> = sources.files.iter().map(|f| dir.join(&f.file)).collect();
    progress.step(&format!(
        "reducing the {} source(s) the link needs, each compiled and linked per test",
        files.len()
    ));
    let r =
        reduce::reduce_with_script(&script, &files, settings, None, &mut |n| progress.reduce(n))
            .map_err(PipelineError::Reduce)?;
    let verified = verify(dir, sources);
    let texts: Vec<String> = sources
        .files
        .iter()
        .filter_map(|f| crate::case::fileio::read(dir, &f.file, TEXT_SHOWN as u64).ok()?)
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .collect();
    let section = SourceReduction {
        status: r.status.clone(),
        bytes_before: r.bytes_before as u64,
        bytes_after: r.bytes_after as u64,
        tests: r.tests,
        seconds: (started.elapsed().as_secs_f64() * 10.0).round() / 10.0,
        verified,
        texts: if texts.len() == files.len() {
            texts
        } else {
            Vec::new()
        },
    };
    let mut case = Case::load(dir)?;
    if let Some(s) = case.link.as_mut().and_then(|l| l.source.as_mut()) {
        s.reduction = Some(section.clone());
    }
    case.save(dir)?;
    let line = format!(
        "sources {} -> {} B in {} tests, {}",
        section.bytes_before,
        section.bytes_after,
        section.tests,
        if verified { "verified" } else { "NOT verified" }
    );
    let status = if r.status == "done" {
        StageStatus::Done
    } else if crate::interrupt::is_interrupted() {
        StageStatus::Interrupted
    } else {
        StageStatus::Failed
    };
    Ok((status, line))
}

/// The reduced sources, copied into a fresh directory, still make the link crash its way.
fn verify(dir: &Path, sources: &LinkSources) -> bool {
    let Ok(case) = Case::load(dir) else {
        return false;
    };
    let Some(link) = case.link else { return false };
    let Ok(scratch) = crate::exec::fresh_scratch("link-verify-") else {
        return false;
    };
    for f in &sources.files {
        let base = f.file.rsplit('/').next().unwrap_or(&f.file);
        let Ok(Some(bytes)) =
            crate::case::fileio::read(dir, &f.file, crate::case::fileio::cap::INPUT)
        else {
            return false;
        };
        if std::fs::write(scratch.path().join(base), bytes).is_err() {
            return false;
        }
    }
    let timeout = std::time::Duration::from_secs(120);
    (0..reduce::DEFAULT_VERIFY_RUNS).all(|_| {
        link_sources::link_test(sources, &link.link_signature, scratch.path(), timeout)
            .unwrap_or(false)
    })
}

fn io(path: &Path, error: std::io::Error) -> PipelineError {
    PipelineError::Case(CaseError::Io {
        path: path.to_path_buf(),
        error,
    })
}
