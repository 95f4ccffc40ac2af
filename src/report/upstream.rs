//! What an upstream LLVM issue needs beyond the crash itself: the target tag for the title,
//! suggested labels (docs/crash-formats.md §6), and redaction of local paths and names before a
//! report leaves the machine.

use crate::case::Case;
use crate::command::CompilerCommand;
use crate::crash::CrashKind;

/// The backend a case exercises, from its command: `RISC-V`, `AMDGPU`, `X86` or `None`.
pub fn target_tag(case: &Case) -> Option<&'static str> {
    let cmd = CompilerCommand::from_argv(&case.command)?;
    let triple = cmd
        .option_value("--target")
        .or_else(|| cmd.option_value("-target"))
        .or_else(|| cmd.option_value("-triple"))
        .unwrap_or_default();
    if case
        .job
        .offload_arch
        .as_deref()
        .is_some_and(|a| a.starts_with("gfx"))
        || triple.starts_with("amdgcn")
    {
        Some("AMDGPU")
    } else if triple.starts_with("riscv")
        || cmd
            .option_value("-march")
            .is_some_and(|m| m.starts_with("rv"))
    {
        Some("RISC-V")
    } else if triple.is_empty() || triple.starts_with("x86_64") || triple.starts_with("i686") {
        Some("X86")
    } else {
        None
    }
}

/// The `[Target]` tag LLVM issue titles carry for backend crashes.
pub(crate) fn title_tag(case: &Case) -> Option<&'static str> {
    (stage(case) == "backend")
        .then(|| target_tag(case))
        .flatten()
}

/// Where in the compiler the crash is, from the signature's phase and frames.
fn stage(case: &Case) -> &'static str {
    let phase = &case.signature.phase;
    let top = case
        .signature
        .frames
        .first()
        .map(String::as_str)
        .unwrap_or("");
    let stack = case
        .crash
        .pretty_stack
        .iter()
        .map(|e| e.text.as_str())
        .collect::<Vec<_>>()
        .join("\n");
    if top.starts_with("clang::Parser")
        || top.starts_with("clang::Sema")
        || top.starts_with("clang::Preprocessor")
        || top.starts_with("clang::Lexer")
        || (phase.contains("pars") && !stack.contains("Code generation"))
    {
        "frontend"
    } else if stack.contains("Code generation") || phase.contains("Instruction Selection") {
        "backend"
    } else if stack.contains("Optimizer") {
        "optimizer"
    } else if top.starts_with("clang::CodeGen") {
        "codegen"
    } else {
        "unknown"
    }
}

/// Labels to suggest for the LLVM issue tracker.
pub fn labels(case: &Case, invalid_code: bool) -> Vec<String> {
    let mut l = vec!["crash".to_string()];
    if !matches!(case.crash.kind, CrashKind::Killed | CrashKind::Timeout) {
        l.push(
            if invalid_code {
                "crash-on-invalid"
            } else {
                "crash-on-valid"
            }
            .into(),
        );
    }
    match stage(case) {
        "frontend" => l.push("clang:frontend".into()),
        "codegen" => l.push("clang:codegen".into()),
        "backend" => {
            if let Some(t) = target_tag(case) {
                l.push(format!("backend:{t}"));
            }
            if case.signature.phase.contains("DAG->DAG")
                || case
                    .signature
                    .frames
                    .iter()
                    .any(|f| f.starts_with("llvm::SelectionDAG"))
            {
                l.push("llvm:SelectionDAG".into());
            }
        }
        _ => {}
    }
    let frames = case.signature.frames.join(" ");
    if case.signature.phase.contains("declare-to-assign")
        || frames.contains("DebugInfo")
        || frames.contains("llvm::at::")
    {
        l.push("debuginfo".into());
    }
    if case.signature.phase.contains("instcombine") {
        l.push("llvm:instcombine".into());
    }
    l
}

/// Local facts to remove from a report.
#[derive(Debug, Clone, Default)]
pub struct Redactions {
    pub home: Option<String>,
    pub user: Option<String>,
    pub host: Option<String>,
}

impl Redactions {
    /// This machine's home directory, user and host name.
    pub fn of_this_machine() -> Self {
        let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
            .ok()
            .map(|h| h.trim().to_string());
        Redactions {
            home: std::env::var("HOME").ok().filter(|h| h.len() > 1),
            user: std::env::var("USER")
                .or_else(|_| std::env::var("LOGNAME"))
                .ok(),
            host,
        }
    }
}

/// Replaces the home directory by `~`, the user and host names by `USER` and `HOST`, and
/// the name under `/tmp` of temporary directories and files (`/tmp/icepick-x1/a.c`,
/// `/tmp/widget-205623.sh`) by `…`.
pub fn redact(text: &str, r: &Redactions) -> String {
    Redactor::new(r).apply(text)
}

/// [`redact`]'s patterns, compiled once for many strings.
struct Redactor {
    home: Option<String>,
    words: Vec<(regex::Regex, &'static str)>,
    tmp: regex::Regex,
}

impl Redactor {
    fn new(r: &Redactions) -> Self {
        let word = |w: &Option<String>, with: &'static str| {
            w.as_deref().filter(|w| w.len() >= 3).map(|w| {
                let re = regex::Regex::new(&format!(r"\b{}\b", regex::escape(w)));
                (re.expect("escaped"), with)
            })
        };
        Redactor {
            home: r.home.clone().filter(|h| h != "/"),
            words: [word(&r.user, "USER"), word(&r.host, "HOST")]
                .into_iter()
                .flatten()
                .collect(),
            tmp: regex::Regex::new(r"/tmp/[^/\s'`]+").expect("valid"),
        }
    }

    fn apply(&self, text: &str) -> String {
        let mut out = text.to_string();
        if let Some(h) = &self.home {
            out = out.replace(h.as_str(), "~");
        }
        for (re, with) in &self.words {
            out = re.replace_all(&out, *with).into_owned();
        }
        self.tmp.replace_all(&out, "/tmp/…").into_owned()
    }
}

/// [`redact`] applied to every string of a case (keys and numbers are left alone). A string
/// that is a user or host name and nothing else is kept only when replacing it would make the
/// case unreadable (a user called `clang` is not the compiler family `clang`); any other
/// failure is an error, never an unredacted case.
pub fn redact_case(case: &Case, r: &Redactions) -> Result<Case, serde_json::Error> {
    fn walk(v: &mut serde_json::Value, red: &Redactor, r: &Redactions, keep_names: bool) {
        match v {
            serde_json::Value::String(s) => {
                let name = [&r.user, &r.host]
                    .iter()
                    .any(|n| n.as_deref() == Some(s.as_str()));
                if !(keep_names && name) {
                    *s = red.apply(s);
                }
            }
            serde_json::Value::Array(a) => a.iter_mut().for_each(|x| walk(x, red, r, keep_names)),
            serde_json::Value::Object(o) => {
                o.values_mut().for_each(|x| walk(x, red, r, keep_names))
            }
            _ => {}
        }
    }
    let red = Redactor::new(r);
    let value = serde_json::to_value(case)?;
    let mut v = value.clone();
    walk(&mut v, &red, r, false);
    serde_json::from_value(v).or_else(|_| {
        let mut v = value;
        walk(&mut v, &red, r, true);
        serde_json::from_value(v)
    })
}

/// [`redact`] applied to a file's text (bytes that are not UTF-8 are replaced).
pub fn redact_bytes(b: &[u8], r: &Redactions) -> Vec<u8> {
    redact(&String::from_utf8_lossy(b), r).into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::case::tests::sample_case;

    #[test]
    fn labels_follow_the_stage_and_target() {
        let mut case = sample_case();
        case.signature.frames = vec!["clang::Sema::getDestructorName".into()];
        assert_eq!(
            labels(&case, true),
            ["crash", "crash-on-invalid", "clang:frontend"]
        );
        case.command = [
            "clang",
            "--target=riscv64-linux-gnu",
            "-march=rv64gcv",
            "-c",
            "f.c",
        ]
        .map(String::from)
        .to_vec();
        case.signature.frames = vec!["llvm::SelectionDAGISel::SelectCodeCommon".into()];
        case.signature.phase = "RISC-V DAG->DAG Pattern Instruction Selection".into();
        assert_eq!(
            labels(&case, false),
            [
                "crash",
                "crash-on-valid",
                "backend:RISC-V",
                "llvm:SelectionDAG"
            ]
        );
        assert_eq!(target_tag(&case), Some("RISC-V"));
    }

    #[test]
    fn a_redacted_case_is_still_a_case() {
        let mut case = sample_case();
        case.cwd = "/home/clang/src".into();
        let r = Redactions {
            home: Some("/home/clang".into()),
            user: Some("clang".into()),
            host: Some("pioneer".into()),
        };
        // The user name is also the compiler family: a whole-string `clang` stays.
        let red = redact_case(&case, &r).unwrap();
        assert_eq!(red.cwd, "~/src");
        assert_eq!(red.crash.family, crate::crash::Family::Clang);
        assert_eq!(red.compiler.version, "Debian USER version 19.1.7");
        case.compiler.path = "/opt/pioneer/bin/clang".into();
        let red = redact_case(&case, &Redactions { user: None, ..r }).unwrap();
        assert_eq!(red.compiler.path, "/opt/HOST/bin/clang");
    }

    #[test]
    fn redaction_removes_home_user_host_and_temp_dirs() {
        let r = Redactions {
            home: Some("/home/alice".into()),
            user: Some("alice".into()),
            host: Some("pioneer".into()),
        };
        let text = "cd /home/alice/src on pioneer by alice; /tmp/icepick-demo.x1/project/a.c";
        assert_eq!(
            redact(text, &r),
            "cd ~/src on HOST by USER; /tmp/…/project/a.c"
        );
        assert_eq!(
            redact("'/tmp/widget-205623.sh' /tmp/", &r),
            "'/tmp/…' /tmp/"
        );
    }
}
