//! Reduces a C or C++ file with a shell-command interestingness test, C-Vise style:
//!
//! ```text
//! cargo run -p reducers --example reduce -- FILE -- sh -c 'grep -q keep FILE && gcc -c FILE'
//! ```
//!
//! Each candidate is written, under FILE's own name, into a fresh scratch directory, and the
//! command runs there: exit status 0 means "still interesting". The best text so far is kept in
//! `FILE.reduced` (written to a temporary name, then renamed), and FILE itself is never touched.
//! The library does no I/O: all of it (files, processes, cancellation) is here, in the test
//! closure and the observer.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitCode, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use reducers::passes::{raw_pipeline, Hints};
use reducers::{reduce, CancelToken, Event, Options, Outcome};

/// How often a running test looks at its cancel token.
const POLL: Duration = Duration::from_millis(10);

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (file, command) = match args.split_first() {
        Some((file, rest)) if rest.first().map(String::as_str) == Some("--") && rest.len() > 1 => {
            (PathBuf::from(file), rest[1..].to_vec())
        }
        _ => {
            eprintln!("usage: reduce FILE -- COMMAND [ARG...]");
            return ExitCode::from(2);
        }
    };
    match run(&file, &command) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("reduce: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(file: &Path, command: &[String]) -> Result<(), String> {
    let input = std::fs::read(file).map_err(|e| format!("{}: {e}", file.display()))?;
    let name = file
        .file_name()
        .ok_or_else(|| format!("{}: not a file name", file.display()))?
        .to_owned();
    let scratch = Scratch::new()?;
    let test = |text: &[u8], cancel: &CancelToken| match scratch.test(
        Path::new(&name),
        text,
        command,
        cancel,
    ) {
        Ok(true) => Outcome::Interesting,
        Ok(false) => Outcome::Uninteresting,
        Err(e) => {
            eprintln!("reduce: {e}");
            Outcome::Uninteresting
        }
    };
    if test(&input, &CancelToken::new()) != Outcome::Interesting {
        return Err("the command does not succeed on the original file".into());
    }
    let out = PathBuf::from(format!("{}.reduced", file.display()));
    let opts = Options::new(raw_pipeline(Hints::default()));
    let mut failed = None;
    let r = reduce(&input, &opts, &test, &mut |e| {
        if let Event::Improved { best, pass, .. } = e {
            eprintln!("{pass}: {} bytes", best.len());
            if let Err(e) = write_atomically(&out, best) {
                failed.get_or_insert(e);
            }
        }
    });
    if let Some(e) = failed {
        return Err(e);
    }
    write_atomically(&out, &r.output)?;
    eprintln!(
        "{} -> {} bytes in {} tests; written to {}",
        input.len(),
        r.output.len(),
        r.stats.tests,
        out.display()
    );
    Ok(())
}

/// A private directory under the system's temporary directory, removed when dropped; each test
/// gets a fresh subdirectory of it.
struct Scratch {
    dir: PathBuf,
    next: AtomicU64,
}

impl Scratch {
    fn new() -> Result<Self, String> {
        let dir = std::env::temp_dir().join(format!("reducers-example-{}", std::process::id()));
        std::fs::create_dir(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        Ok(Scratch {
            dir,
            next: AtomicU64::new(0),
        })
    }

    /// Runs `command` in a fresh directory holding `text` as `name`; true if it exits with 0.
    fn test(
        &self,
        name: &Path,
        text: &[u8],
        command: &[String],
        cancel: &CancelToken,
    ) -> Result<bool, String> {
        let dir = self
            .dir
            .join(self.next.fetch_add(1, Ordering::Relaxed).to_string());
        std::fs::create_dir(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let result = (|| {
            std::fs::write(dir.join(name), text).map_err(|e| format!("{}: {e}", dir.display()))?;
            let child = Command::new(&command[0])
                .args(&command[1..])
                .current_dir(&dir)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .map_err(|e| format!("{}: {e}", command[0]))?;
            wait(child, cancel)
        })();
        let _ = std::fs::remove_dir_all(&dir);
        result
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Waits for `child`, killing it when the driver no longer wants the result. (Only the child
/// itself is killed: a real tool would put it in a process group of its own and kill that.)
fn wait(mut child: Child, cancel: &CancelToken) -> Result<bool, String> {
    loop {
        if let Some(status) = child.try_wait().map_err(|e| e.to_string())? {
            return Ok(status.success());
        }
        if cancel.is_cancelled() {
            let _ = child.kill();
            let _ = child.wait();
            return Ok(false);
        }
        std::thread::sleep(POLL);
    }
}

fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), String> {
    let tmp = PathBuf::from(format!("{}.tmp", path.display()));
    std::fs::write(&tmp, bytes)
        .and_then(|()| std::fs::rename(&tmp, path))
        .map_err(|e| format!("{}: {e}", path.display()))
}
