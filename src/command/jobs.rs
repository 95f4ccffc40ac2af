//! The jobs a driver command runs (`-###`), and which job a crashed cc1 command line was.

use super::CompilerCommand;

/// What a job does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JobKind {
    /// The host compile of an offload command, or the only compile of a plain one.
    Host,
    /// A GPU device compile for one arch (`-fcuda-is-device … -target-cpu ARCH`).
    Device { arch: String },
    /// Anything else: linker, bundler, assembler.
    Tool,
}

/// One job printed by `clang -###`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Job {
    pub kind: JobKind,
    pub command: CompilerCommand,
}

/// Parses the stderr of `clang -### …`: each job is a line of double-quoted arguments.
pub fn parse_hash_hash_hash(stderr: &str) -> Vec<Job> {
    stderr
        .lines()
        .filter(|l| l.starts_with(" \""))
        .filter_map(|l| shlex::split(l.trim()))
        .filter_map(|argv| CompilerCommand::from_argv(&argv))
        .map(|command| Job {
            kind: kind_of(&command.args),
            command,
        })
        .collect()
}

fn kind_of<S: AsRef<str>>(args: &[S]) -> JobKind {
    let args: Vec<&str> = args.iter().map(AsRef::as_ref).collect();
    if args.first() != Some(&"-cc1") {
        return JobKind::Tool;
    }
    let device = args
        .iter()
        .any(|a| *a == "-fcuda-is-device" || *a == "-fopenmp-is-target-device");
    if device {
        let arch = args
            .windows(2)
            .find(|w| w[0] == "-target-cpu")
            .map(|w| w[1].to_string())
            .unwrap_or_default();
        JobKind::Device { arch }
    } else {
        JobKind::Host
    }
}

/// The job a crash's `0. Program arguments:` line belongs to, when that line is a cc1
/// command (out-of-process cc1: every multi-job compile). `None` for a driver line.
pub fn job_of_cc1(program_arguments: &str) -> Option<JobKind> {
    let words: Vec<&str> = program_arguments.split_whitespace().collect();
    let cc1 = words.iter().position(|w| *w == "-cc1")?;
    Some(kind_of(&words[cc1..]))
}
