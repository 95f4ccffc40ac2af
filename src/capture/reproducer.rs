//! Clang's crash reproducer files. On every crash the clang driver writes the preprocessed
//! source and a run script into the temp directory (megabytes for a real translation unit)
//! and names them in its output. The user's own run is the only one icepick lets write them:
//! those files are evidence and move into the case; every rerun icepick makes of a clang
//! driver says `-fno-crash-diagnostics`.

use std::path::Path;
use std::time::{Duration, Instant, SystemTime};

use crate::command::CompilerCommand;

/// `command` with `-fno-crash-diagnostics` (clang only: it writes a reproducer pair into the
/// temp directory on every crash), unless it has it or is a cc1 command (only the driver
/// writes reproducers).
pub(super) fn no_crash_diagnostics(command: &CompilerCommand) -> CompilerCommand {
    if command.is_cc1() || command.args.iter().any(|a| a == "-fno-crash-diagnostics") {
        command.clone()
    } else {
        command.with_extra_args(&["-fno-crash-diagnostics"])
    }
}

/// Where clang's reproducer files go in a case.
pub const REPRODUCER_DIR: &str = "clang-reproducer";

/// Moves the reproducer files clang named (`PLEASE ATTACH … located at:`) into
/// `case/clang-reproducer/` and returns their case-relative paths. Only regular files (not
/// symlinks) written since the capture started are taken: the names come from the
/// compiler's output, which is not trusted to name files icepick should take. Files that
/// cannot be moved stay where they are and are left out.
pub(super) fn move_reproducer_files(
    files: &[String],
    started: Instant,
    case: &Path,
) -> Vec<String> {
    let since = SystemTime::now()
        .checked_sub(started.elapsed() + Duration::from_secs(2))
        .unwrap_or(SystemTime::UNIX_EPOCH);
    let mut moved = Vec::new();
    for f in files {
        let src = Path::new(f);
        let Some(name) = src.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        let fresh = std::fs::symlink_metadata(src)
            .is_ok_and(|m| m.file_type().is_file() && m.modified().is_ok_and(|t| t >= since));
        if !src.is_absolute() || !fresh || name.starts_with('.') {
            continue;
        }
        let dir = case.join(REPRODUCER_DIR);
        let dest = dir.join(name);
        if dest.exists() || std::fs::create_dir_all(&dir).is_err() {
            continue;
        }
        let ok = std::fs::rename(src, &dest).is_ok()
            || (std::fs::copy(src, &dest).is_ok() && std::fs::remove_file(src).is_ok());
        if ok {
            moved.push(format!("{REPRODUCER_DIR}/{name}"));
        } else {
            let _ = std::fs::remove_file(&dest);
        }
    }
    moved
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cmd(s: &str) -> CompilerCommand {
        CompilerCommand::from_argv(&shlex::split(s).unwrap()).unwrap()
    }

    #[test]
    fn reruns_say_no_crash_diagnostics_once_and_not_to_cc1() {
        let c = no_crash_diagnostics(&cmd("clang -O2 -c x.c -o x.o"));
        assert_eq!(
            c.args,
            ["-O2", "-c", "-fno-crash-diagnostics", "x.c", "-o", "x.o"]
        );
        assert_eq!(no_crash_diagnostics(&c), c);
        let cc1 = cmd("clang -cc1 -emit-obj -x c x.c");
        assert_eq!(no_crash_diagnostics(&cc1), cc1);
    }

    #[test]
    fn moves_fresh_regular_files_and_leaves_the_rest() {
        let tmp = tempfile::tempdir().unwrap();
        let case = tempfile::tempdir().unwrap();
        let started = Instant::now();
        let src = tmp.path().join("x-1a2b3c.c");
        let sh = tmp.path().join("x-1a2b3c.sh");
        std::fs::write(&src, "int x;").unwrap();
        std::fs::write(&sh, "clang x-1a2b3c.c").unwrap();
        // A symlink named in the output is not followed or taken.
        let target = tmp.path().join("secret");
        std::fs::write(&target, "keep").unwrap();
        let link = tmp.path().join("link.c");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        // Nor is an old file that this capture did not write.
        let old = tmp.path().join("old.c");
        std::fs::write(&old, "old").unwrap();
        let f = std::fs::File::options().write(true).open(&old).unwrap();
        f.set_modified(SystemTime::now() - Duration::from_secs(3600))
            .unwrap();
        let named: Vec<String> = [&src, &sh, &link, &old, &tmp.path().join("gone.c")]
            .iter()
            .map(|p| p.to_string_lossy().into_owned())
            .chain(["relative.c".to_string()])
            .collect();
        let moved = move_reproducer_files(&named, started, case.path());
        assert_eq!(
            moved,
            [
                "clang-reproducer/x-1a2b3c.c",
                "clang-reproducer/x-1a2b3c.sh"
            ]
        );
        assert!(!src.exists() && !sh.exists());
        assert_eq!(
            std::fs::read_to_string(case.path().join(&moved[0])).unwrap(),
            "int x;"
        );
        assert!(link.exists() && target.exists() && old.exists());
    }
}
