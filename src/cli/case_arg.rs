//! The CASE argument of `report`, `reduce`, `flags`, `classify`, `versions` and `ir`: a case
//! directory, or a bucket id of the crash store (as `icepick list` prints it and `icepick show`
//! accepts), resolved to the bucket's case. A path that does not exist is said so, with the
//! closest existing case directory next to it when there is one (a typo).

use std::path::{Path, PathBuf};

use crate::store::Store;

/// Why a CASE argument names no case. All are usage errors (exit 2).
#[derive(Debug, thiserror::Error)]
pub enum CaseArgError {
    #[error("{path} does not exist{}", hint(.suggestion))]
    Missing {
        path: PathBuf,
        suggestion: Option<PathBuf>,
    },
    #[error(
        "bucket {bucket} has no case on this machine yet: `icepick triage --pending` captures \
         one{}",
        if *.archived { format!(", `icepick show {bucket} --fetch DIR` fetches the stored one") } else { String::new() }
    )]
    NoCaseYet { bucket: String, archived: bool },
}

impl crate::error::ExitCoded for CaseArgError {
    fn exit_code(&self) -> u8 {
        crate::error::USAGE
    }
}

fn hint(suggestion: &Option<PathBuf>) -> String {
    match suggestion {
        Some(s) => format!(
            "; did you mean {}?",
            crate::command::shell_quote(&s.to_string_lossy())
        ),
        None => String::new(),
    }
}

/// `arg` as a case directory: itself when it exists (the stage then checks that it is a
/// case), else the case of the bucket it names, else an error saying it does not exist.
pub(crate) fn resolve(arg: &Path) -> Result<PathBuf, CaseArgError> {
    if std::fs::symlink_metadata(arg).is_ok() {
        return Ok(arg.to_path_buf());
    }
    if let Some(dir) = bucket_case(arg)? {
        return Ok(dir);
    }
    Err(CaseArgError::Missing {
        path: arg.to_path_buf(),
        suggestion: close_match(arg),
    })
}

/// The case directory of the bucket `arg` names (an id or an unambiguous prefix, as
/// `icepick show` takes), if `arg` looks like one and the store has it.
fn bucket_case(arg: &Path) -> Result<Option<PathBuf>, CaseArgError> {
    let id = arg.to_string_lossy();
    if id.len() < 4 || !id.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Ok(None);
    }
    // No store, or one that cannot be read: the argument is just a missing path.
    let Ok((_, Some(store))) = Store::open_existing_default() else {
        return Ok(None);
    };
    let Ok(Some(bucket)) = store.bucket(&id) else {
        return Ok(None);
    };
    match bucket.case_dir.as_deref().map(PathBuf::from) {
        Some(dir) if dir.join(crate::case::CASE_FILE).is_file() => {
            log::info!("bucket {}: case {}", bucket.id, dir.display());
            Ok(Some(dir))
        }
        _ => Err(CaseArgError::NoCaseYet {
            bucket: bucket.id,
            archived: bucket.archived,
        }),
    }
}

/// The entry beside `arg` whose name is closest to its name (a few typos at most),
/// preferring case directories.
fn close_match(arg: &Path) -> Option<PathBuf> {
    let name = arg.file_name()?.to_string_lossy().into_owned();
    let parent = match arg.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let limit = (name.chars().count() / 3).clamp(1, 3);
    let mut best: Option<(bool, usize, String)> = None;
    for entry in std::fs::read_dir(parent).ok()?.flatten() {
        let cand = entry.file_name().to_string_lossy().into_owned();
        let d = strsim::levenshtein(&name, &cand);
        if d > limit {
            continue;
        }
        let is_case = entry.path().join(crate::case::CASE_FILE).is_file();
        let key = (!is_case, d, cand);
        if best.as_ref().map_or(true, |b| key < *b) {
            best = Some(key);
        }
    }
    let (_, _, cand) = best?;
    Some(match arg.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.join(cand),
        _ => PathBuf::from(cand),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_typo_finds_the_case_beside_it() {
        let tmp = tempfile::tempdir().unwrap();
        let case = tmp.path().join("icepick-49724a2ef4a4");
        std::fs::create_dir(&case).unwrap();
        std::fs::write(case.join(crate::case::CASE_FILE), "{}").unwrap();
        std::fs::create_dir(tmp.path().join("icepick-49724a2ef4a5")).unwrap();
        let typo = tmp.path().join("icepick-49724a2ef4b4");
        assert_eq!(close_match(&typo), Some(case));
        assert_eq!(close_match(&tmp.path().join("something-else")), None);
    }
}
