//! A "Try it on Compiler Explorer" link, built offline: no request to godbolt.org is made.
//!
//! LLVM maintainers ask for a Compiler Explorer link with every crash report
//! (docs/crash-formats.md §6). Compiler Explorer opens a session from its whole state in the URL:
//! `https://godbolt.org/clientstate/<base64 of a ClientState JSON>` (its `docs/API.md`,
//! "GET /clientstate/<base64>"). The server (`lib/handlers/route-api.ts`,
//! `unstoredStateHandler`) decodes the path parameter with Node's `Buffer.from(s, 'base64')`,
//! which reads the standard alphabet, and the router hands it over through
//! `decodeURIComponent`, so `+`, `/` and `=` may be percent-escaped. We escape them: a proxy
//! that merges `//` in paths cannot corrupt the state then. The JSON is the subset of
//! `lib/clientstate.ts` that a session needs: `sessions[{id, language, source,
//! compilers[{id, options}]}]`.
//!
//! When a link is made (see [`compiler_explorer`]):
//! - The source is the verified reduction, else the preprocessed input if it is at most
//!   [`MAX_SOURCE`] bytes, and the whole URL must fit in [`MAX_URL`] characters: CE's
//!   front end (CloudFront) refuses longer request URLs (CE issues #2720 and #4844,
//!   quick-bench-front-end #66: links over about 8,000 characters fail).
//! - The compiler is Compiler Explorer's x86-64 build of the case's major version, and a second
//!   pane runs trunk with assertions (maintainers ask whether trunk and an assertions build
//!   crash too). Compiler Explorer's x86-64 clang is built for every LLVM target (its
//!   `armv8-clang1910` is the same `clang-19.1.0` binary with `-target aarch64-linux-gnu`), so a
//!   cross compile (`--target=riscv64-linux-gnu`, `amdgcn`, HIP device jobs) runs there as it
//!   did here.
//! - Not when the case's compiler is itself a foreign build (a riscv64 clang under
//!   `qemu-riscv64`, or captured on a riscv64 host): its crash may be in that build only. Then
//!   a link is made only when `icepick classify` saw this host's x86-64 clang crash the same
//!   way (evidence `E6` or `baseline`, `same-crash` or `same-crash-coarse`).
//!
//! Compiler ids were read from Compiler Explorer's `etc/config/c++.amazon.properties` (C++:
//! `clang1910`, `clang_assertions_trunk`, `g122`, `gsnapshot` …) and
//! `etc/config/c.amazon.properties` (C: `cclang1910`, `cclang_assertions_trunk`, `cg122`,
//! `cgsnapshot` …); the tests pin them.

use base64::Engine as _;
use serde_json::{json, Value};

use crate::case::{Case, CaseStatus};
use crate::command::{CompilerCommand, Lang};
use crate::crash::Family;

/// Where links point.
pub const ORIGIN: &str = "https://godbolt.org";

/// The largest preprocessed input put into a link (a reduction is used whatever its size, as
/// long as the URL fits).
pub const MAX_SOURCE: usize = 64 * 1024;

/// The longest URL made: CloudFront, in front of godbolt.org, refuses request URLs over 8,192
/// bytes.
pub const MAX_URL: usize = 8000;

/// Compiler Explorer's language of a session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CeLang {
    C,
    Cxx,
}

impl CeLang {
    /// The ClientState `language` value.
    pub fn id(self) -> &'static str {
        match self {
            CeLang::C => "c",
            CeLang::Cxx => "c++",
        }
    }
}

/// x86-64 clang on Compiler Explorer, one entry per major version (the newest release of it
/// there): (major, id without the language prefix, version as CE names it).
const CLANG: &[(u32, &str, &str)] = &[
    (7, "710", "7.1.0"),
    (8, "801", "8.0.1"),
    (9, "901", "9.0.1"),
    (10, "1001", "10.0.1"),
    (11, "1101", "11.0.1"),
    (12, "1201", "12.0.1"),
    (13, "1301", "13.0.1"),
    (14, "1400", "14.0.0"),
    (15, "1500", "15.0.0"),
    (16, "1600", "16.0.0"),
    (17, "1701", "17.0.1"),
    (18, "1810", "18.1.0"),
    (19, "1910", "19.1.0"),
    (20, "2010", "20.1.0"),
    (21, "2110", "21.1.0"),
];

/// LLVM's `llc` and `opt` on Compiler Explorer, one entry per major version: (major, id
/// suffix, version). From `etc/config/llvm.amazon.properties` (groups `llc` and `opt`, the
/// `compiler.llc1910.exe=/opt/compiler-explorer/clang-19.1.0/bin/llc` lines): ids are
/// `llc<suffix>` and `opt<suffix>`, trunk with assertions is `llc-assertions-trunk` and
/// `opt-assertions-trunk`, and the session language is `llvm` (LLVM IR). Majors before 14
/// are left out: their suffixes differ from clang's and no case needs them.
const LLVM_TOOLS: &[(u32, &str, &str)] = &[
    (14, "1400", "14.0.0"),
    (15, "1500", "15.0.0"),
    (16, "1600", "16.0.0"),
    (17, "1701", "17.0.1"),
    (18, "1810", "18.1.0"),
    (19, "1910", "19.1.0"),
    (20, "2010", "20.1.0"),
    (21, "2110", "21.1.0"),
    (22, "2210", "22.1.0"),
];

/// Compiler Explorer's id of `tool` (`llc`, `opt`) of LLVM `major` and its version.
pub fn llvm_tool_id(tool: &str, major: u32) -> Option<(String, &'static str)> {
    LLVM_TOOLS
        .iter()
        .find(|(m, _, _)| *m == major)
        .map(|(_, id, v)| (format!("{tool}{id}"), *v))
}

/// x86-64 GCC releases on Compiler Explorer (major, minor); ids are `g<major><minor>` (C++)
/// and `cg<major><minor>` (C).
const GCC: &[(u32, u32)] = &[
    (8, 1),
    (8, 2),
    (8, 3),
    (8, 4),
    (8, 5),
    (9, 1),
    (9, 2),
    (9, 3),
    (9, 4),
    (9, 5),
    (10, 1),
    (10, 2),
    (10, 3),
    (10, 4),
    (10, 5),
    (11, 1),
    (11, 2),
    (11, 3),
    (11, 4),
    (12, 1),
    (12, 2),
    (12, 3),
    (12, 4),
    (12, 5),
    (13, 1),
    (13, 2),
    (13, 3),
    (13, 4),
    (14, 1),
    (14, 2),
    (14, 3),
    (15, 1),
    (15, 2),
];

fn prefix(lang: CeLang) -> &'static str {
    match lang {
        CeLang::C => "c",
        CeLang::Cxx => "",
    }
}

/// Compiler Explorer's id of x86-64 clang `major` (`clang1910`, C: `cclang1910`) and the
/// version it runs, or `None` when Compiler Explorer has no release of that major.
pub fn clang_id(major: u32, lang: CeLang) -> Option<(String, &'static str)> {
    CLANG
        .iter()
        .find(|(m, _, _)| *m == major)
        .map(|(_, id, v)| (format!("{}clang{id}", prefix(lang)), *v))
}

/// Compiler Explorer's id of x86-64 GCC `major.minor` (`g122`, C: `cg122`).
pub fn gcc_id(major: u32, minor: u32, lang: CeLang) -> Option<String> {
    GCC.contains(&(major, minor))
        .then(|| format!("{}g{major}{minor}", prefix(lang)))
}

/// Trunk with assertions (clang) or the GCC snapshot: the second pane of every link.
pub fn trunk_id(family: Family, lang: CeLang, assertions: bool) -> String {
    match family {
        Family::Gcc => format!("{}gsnapshot", prefix(lang)),
        _ if assertions => format!("{}clang_assertions_trunk", prefix(lang)),
        _ => format!("{}clang_trunk", prefix(lang)),
    }
}

/// The (major, minor) release in a `--version` first line: `Debian clang version 19.1.7
/// (3~deb12u1)` → (19, 1); `gcc (Debian 12.2.0-14) 12.2.0` → (12, 2). Apple clang numbers its
/// releases its own way, so it gives `None`.
pub fn release(version_line: &str) -> Option<(u32, u32)> {
    if version_line.contains("Apple") {
        return None;
    }
    let re = regex::Regex::new(r"(?:version |\) )(\d+)\.(\d+)").expect("valid");
    let c = re.captures(version_line)?;
    Some((c[1].parse().ok()?, c[2].parse().ok()?))
}

/// The ClientState for one source in one session, each compiler with its options.
pub fn client_state(lang: CeLang, source: &str, compilers: &[(String, String)]) -> Value {
    session_state(lang.id(), source, compilers)
}

fn session_state(language: &str, source: &str, compilers: &[(String, String)]) -> Value {
    json!({
        "sessions": [{
            "id": 1,
            "language": language,
            "source": source,
            "compilers": compilers
                .iter()
                .map(|(id, options)| json!({"id": id, "options": options}))
                .collect::<Vec<_>>(),
        }]
    })
}

/// `https://godbolt.org/clientstate/<base64>` for a ClientState, with `+`, `/` and `=`
/// percent-escaped.
pub fn clientstate_url(state: &Value) -> String {
    let b64 = base64::engine::general_purpose::STANDARD.encode(state.to_string());
    let mut url = format!("{ORIGIN}/clientstate/");
    url.reserve(b64.len() + b64.len() / 8);
    for c in b64.chars() {
        match c {
            '+' => url.push_str("%2B"),
            '/' => url.push_str("%2F"),
            '=' => url.push_str("%3D"),
            c => url.push(c),
        }
    }
    url
}

/// A Compiler Explorer link for a case, or why there is none.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Link {
    /// The URL, when one was made.
    pub url: Option<String>,
    /// One sentence of Markdown: what the link opens, or why there is no link (case text in
    /// it is escaped by [`super::markdown`]).
    pub note: String,
}

impl Link {
    fn none(reason: impl Into<String>) -> Self {
        Link {
            url: None,
            note: reason.into(),
        }
    }
}

/// The architecture the case's compiler binary runs on, when case.json tells: the emulator it
/// ran under (`qemu-riscv64` → `riscv64`), else the Debian multiarch directory of the
/// libraries in its backtrace (`/lib/riscv64-linux-gnu/libc.so.6`).
pub fn compiler_arch(case: &Value) -> Option<String> {
    if let Some(prog) = case["emulator"][0].as_str() {
        let name = prog.rsplit('/').next().unwrap_or(prog);
        if let Some(arch) = name.strip_prefix("qemu-") {
            return Some(arch.trim_end_matches("-static").to_string());
        }
        return Some(name.to_string());
    }
    let re = regex::Regex::new(r"/([a-z0-9_]+)-linux-gnu[a-z]*/").expect("valid");
    case["crash"]["frames"]
        .as_array()?
        .iter()
        .filter_map(|f| f["module"].as_str())
        .find_map(|m| re.captures(m).map(|c| c[1].to_string()))
}

fn is_x86(arch: &str) -> bool {
    matches!(arch, "x86_64" | "i386" | "i486" | "i586" | "i686")
}

/// True when `icepick classify` saw this host's x86-64 compiler crash like the case.
fn x86_crashes_too(case: &Value) -> bool {
    case["classification"]["evidence"]
        .as_array()
        .is_some_and(|ev| {
            ev.iter().any(|e| {
                matches!(e["id"].as_str(), Some("E6" | "baseline"))
                    && e["ran"].as_bool() == Some(true)
                    && e["host_or_emulator"]
                        .as_str()
                        .is_some_and(|h| h == "host x86_64" || h.starts_with("host x86_64 "))
                    && matches!(
                        e["outcome"].as_str(),
                        Some("same-crash" | "same-crash-coarse")
                    )
            })
        })
}

/// Options that name files on this machine, with a separate value.
const PATH_OPTIONS: &[&str] = &[
    "-o",
    "-I",
    "-isystem",
    "-iquote",
    "-idirafter",
    "-include",
    "-imacros",
    "-isysroot",
    "--sysroot",
    "-MF",
    "-MT",
    "-MQ",
    "-MJ",
    "-resource-dir",
    "-B",
    "-L",
];

/// The same with the value joined.
const PATH_PREFIXES: &[&str] = &[
    "-o",
    "-I",
    "-isystem",
    "-iquote",
    "-idirafter",
    "--sysroot=",
    "-MF",
    "-MT",
    "-MQ",
    "-MJ",
    "-B",
    "-L",
    "--gcc-toolchain=",
    "-resource-dir=",
    "-fdebug-prefix-map=",
    "-ffile-prefix-map=",
    "-fmacro-prefix-map=",
    "-fprofile-use=",
    "-fprofile-instr-use=",
    "-Wl,",
];

/// The options of a compile command as Compiler Explorer takes them: without the compiler,
/// the inputs, the output, the action (`-c`, `-S`: CE picks its own), icepick's
/// `-fno-crash-diagnostics`, dependency-file options and options naming local files.
pub fn ce_options(cmd: &CompilerCommand) -> Vec<String> {
    let inputs = cmd.input_indices();
    let mut out = Vec::new();
    let mut i = 0;
    while i < cmd.args.len() {
        let a = cmd.args[i].as_str();
        if inputs.contains(&i) {
            i += 1;
            continue;
        }
        if PATH_OPTIONS.contains(&a) {
            i += 2;
            continue;
        }
        let dropped = matches!(
            a,
            "-c" | "-S" | "-fno-crash-diagnostics" | "-M" | "-MM" | "-MD" | "-MMD" | "-MP" | "-MG"
        ) || (PATH_PREFIXES
            .iter()
            .any(|p| a.starts_with(p) && a.len() > p.len())
            && !a.starts_with("-objcmt"));
        if !dropped {
            out.push(a.to_string());
        }
        i += 1;
    }
    out
}

/// The language of a session for a compile command: C for C and preprocessed C, C++ for the
/// rest (the command's `-x` is kept, so HIP stays HIP on Compiler Explorer's clang).
fn ce_lang(cmd: &CompilerCommand) -> CeLang {
    match cmd.language() {
        Lang::C | Lang::CPre => CeLang::C,
        _ => CeLang::Cxx,
    }
}

/// Joins options into Compiler Explorer's one-line options field, quoting as a shell would.
fn options_line(opts: &[String]) -> String {
    crate::command::shell_join(opts)
}

/// The command and source a link uses: the verified reduction with its replay command, else
/// the preprocessed input with the flags' minimal command (or the replay command).
fn pick<'a>(
    case: &Case,
    reduced: Option<&'a [u8]>,
    input: Option<&'a [u8]>,
) -> Result<(Vec<String>, &'a [u8], &'static str), String> {
    let verified = case
        .reduction_section()
        .and_then(|r| r.verified.then_some(r.replay_command));
    if let (Some(argv), Some(text)) = (verified, reduced) {
        return Ok((argv, text, "the reduced test case"));
    }
    if case.status != CaseStatus::Captured {
        return Err(
            "the preprocessed input does not reproduce the crash reliably (status is not `captured`) and there is no verified reduction"
                .into(),
        );
    }
    let Some(text) = input else {
        return Err("the preprocessed input is not in the case directory".into());
    };
    if text.len() > MAX_SOURCE {
        return Err(format!(
            "the preprocessed input is {} bytes, too long for a link (over {} KiB); `icepick reduce` makes one that fits",
            text.len(),
            MAX_SOURCE / 1024
        ));
    }
    let argv = case
        .minimal_command()
        .unwrap_or_else(|| case.replay_command.clone());
    Ok((argv, text, "the preprocessed input"))
}

/// The Compiler Explorer link of a case (pure): `reduced` is the content of its reduction
/// output, `input` of its preprocessed input. Pass redacted text to get a redacted link.
pub fn compiler_explorer(case: &Case, reduced: Option<&[u8]>, input: Option<&[u8]>) -> Link {
    let family = case.crash.family;
    if family == Family::LlvmTool {
        return llvm_tool_link(case, input);
    }
    let value = serde_json::to_value(case).unwrap_or(Value::Null);
    let arch = compiler_arch(&value);
    let foreign = arch.as_deref().filter(|a| !is_x86(a));
    if let Some(refusal) = foreign.and_then(|arch| foreign_build_refusal(&value, arch)) {
        return refusal;
    }
    let (argv, text, what) = match pick(case, reduced, input) {
        Ok(p) => p,
        Err(reason) => return Link::none(reason),
    };
    let Some(cmd) = CompilerCommand::from_argv(&argv) else {
        return Link::none("the case has no command to replay");
    };
    if cmd.is_cc1() {
        return Link::none(
            "the replay command is a `-cc1` command, which Compiler Explorer cannot run",
        );
    }
    let Ok(source) = std::str::from_utf8(text) else {
        return Link::none(format!("{what} is not UTF-8 text"));
    };
    let lang = ce_lang(&cmd);
    let mut opts = ce_options(&cmd);
    let has_target = opts
        .iter()
        .any(|o| o == "-target" || o.starts_with("--target=") || o == "--target");
    if let Some(refusal) = foreign_gcc_refusal(&cmd, family) {
        return refusal;
    }
    if let (Some(arch), false, Family::Clang) = (foreign, has_target, family) {
        // The foreign compiler's default target is its own architecture.
        opts.insert(0, format!("--target={arch}-linux-gnu"));
    }
    let (main_id, main_name, known) = first_pane(family, &case.compiler.version, lang);
    let second = trunk_id(family, lang, true);
    let second_name = if family == Family::Gcc {
        "GCC trunk"
    } else {
        "clang trunk with assertions"
    };
    let options = options_line(&opts);
    let mut compilers = vec![(main_id.clone(), options.clone())];
    if second != main_id {
        compilers.push((second, options.clone()));
    }
    let url = clientstate_url(&client_state(lang, source, &compilers));
    if url.len() > MAX_URL {
        return Link::none(format!(
            "a link with {what} ({} bytes) would be {} characters long, and Compiler Explorer refuses URLs over about {MAX_URL}",
            text.len(),
            url.len()
        ));
    }
    let flags = if options.is_empty() {
        "no flags".to_string()
    } else {
        super::markdown::code(&options)
    };
    let mut note = format!("{what} with {flags} on {main_name} and on {second_name}");
    if !known {
        note.push_str(&format!(
            " (Compiler Explorer has no release matching {}, so the first pane is trunk too)",
            super::markdown::code(&case.compiler.version)
        ));
    }
    if foreign.is_some() {
        note.push_str("; the x86-64 build crashed the same way here (E6)");
    }
    Link {
        url: Some(url),
        note,
    }
}

/// Why a case whose compiler is an `arch` (not x86) build gets no link, unless an experiment
/// showed an x86-64 build crashing the same way.
fn foreign_build_refusal(value: &Value, arch: &str) -> Option<Link> {
    if x86_crashes_too(value) {
        return None;
    }
    let arch = super::markdown::text(arch);
    let verdict = value["classification"]["verdict"].as_str().unwrap_or("");
    Some(Link::none(if verdict == "compiler-bug-riscv-build" {
        format!("the crash is in the {arch} build of the compiler only (classification `compiler-bug-riscv-build`), and Compiler Explorer runs x86-64 builds")
    } else {
        format!("the case's compiler is a {arch} build, and no experiment has shown an x86-64 build crashing the same way (`icepick classify` runs one, E6), so Compiler Explorer's x86-64 compilers may not show this crash")
    }))
}

/// Why a GCC cross compile (`riscv64-linux-gnu-gcc`) gets no link: Compiler Explorer's x86-64
/// GCC compiles for x86 only.
fn foreign_gcc_refusal(cmd: &CompilerCommand, family: Family) -> Option<Link> {
    if family != Family::Gcc {
        return None;
    }
    let name = cmd.program.rsplit('/').next().unwrap_or(&cmd.program);
    let (target, _) = name.split_once("-linux-gnu")?;
    (!is_x86(target)).then(|| {
        Link::none(format!(
            "the compile is for {}, and Compiler Explorer's x86-64 GCC compiles for x86 only",
            super::markdown::text(target)
        ))
    })
}

/// The first pane's compiler: the release matching `version` (its id, its name, `true`), or
/// trunk when Compiler Explorer has none (`false`).
fn first_pane(family: Family, version: &str, lang: CeLang) -> (String, String, bool) {
    let trunk = |name: &str| (trunk_id(family, lang, false), name.to_string(), false);
    match (family, release(version)) {
        (Family::Gcc, Some((maj, min))) => match gcc_id(maj, min, lang) {
            Some(id) => (id, format!("x86-64 GCC {maj}.{min}"), true),
            None => trunk("GCC trunk"),
        },
        (Family::Gcc, None) => trunk("GCC trunk"),
        (_, Some((maj, _))) => match clang_id(maj, lang) {
            Some((id, v)) => (id, format!("x86-64 clang {v}"), true),
            None => trunk("clang trunk"),
        },
        (_, None) => trunk("clang trunk"),
    }
}

/// The Compiler Explorer link of an IR reproducer (pure): `tool` (`llc` or `opt`) of the
/// case's LLVM major on `ir` with `flags` (the tool's flags without the input and output), and
/// the same tool of trunk with assertions beside it. Foreign builds are treated as for the
/// source link: Compiler Explorer's tools are x86-64 builds.
pub fn ir_link(case: &Case, tool: &str, ir: &str, flags: &[String]) -> Link {
    tool_link(case, tool, "the reduced IR", ir, flags)
}

/// The link of an `llc`/`opt` crash: its input IR (`input`, when at hand and at most
/// [`MAX_SOURCE`] bytes) with the replay command's flags, on that tool of the case's LLVM
/// major and of trunk with assertions. The IR stage's reduced IR gets its own link
/// ([`ir_link`], in report.md's "Reduced IR" section); this one is the whole input's.
fn llvm_tool_link(case: &Case, input: Option<&[u8]>) -> Link {
    let Some(program) = case.replay_command.first() else {
        return Link::none("the case has no command to replay");
    };
    let name = program.rsplit('/').next().unwrap_or(program);
    let tool = match name.split_once('-').map_or(name, |(t, _)| t) {
        t @ ("llc" | "opt") => t,
        _ => {
            return Link::none(format!(
                "Compiler Explorer runs `llc` and `opt` of LLVM's tools, not {}",
                super::markdown::code(name)
            ))
        }
    };
    if case.status != CaseStatus::Captured {
        return Link::none(
            "the input does not reproduce the crash reliably (status is not `captured`)",
        );
    }
    let Some(text) = input else {
        return Link::none("the input IR is not in the case directory");
    };
    if text.len() > MAX_SOURCE {
        return Link::none(format!(
            "the input IR is {} bytes, too long for a link (over {} KiB); `icepick ir` makes a reduced one",
            text.len(),
            MAX_SOURCE / 1024
        ));
    }
    let Ok(ir) = std::str::from_utf8(text) else {
        return Link::none("the input IR is not text (bitcode cannot go into a link)");
    };
    let flags = llvm_tool_flags(&case.replay_command[1..], &case.input);
    tool_link(case, tool, "the input IR", ir, &flags)
}

/// An `llc`/`opt` command's flags without the input file and what only sends the output
/// away (`-o FILE`, `-disable-output`): Compiler Explorer gives the tool its own.
fn llvm_tool_flags(args: &[String], input: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "-o" => {
                it.next();
            }
            "-disable-output" => {}
            _ if a == input || a.starts_with("-o=") => {}
            _ => out.push(a.clone()),
        }
    }
    out
}

fn tool_link(case: &Case, tool: &str, what: &str, ir: &str, flags: &[String]) -> Link {
    let value = serde_json::to_value(case).unwrap_or(Value::Null);
    if let Some(arch) = compiler_arch(&value).filter(|a| !is_x86(a)) {
        if !x86_crashes_too(&value) {
            return Link::none(format!(
                "the case's compiler is a {} build, and no experiment has shown an x86-64 build crashing the same way, so Compiler Explorer's x86-64 {} may not show this crash",
                super::markdown::text(&arch),
                super::markdown::code(tool)
            ));
        }
    }
    let Some((id, version)) =
        release(&case.compiler.version).and_then(|(major, _)| llvm_tool_id(tool, major))
    else {
        return Link::none(format!(
            "Compiler Explorer has no {} matching {}",
            super::markdown::code(tool),
            super::markdown::code(&case.compiler.version)
        ));
    };
    let options = options_line(flags);
    let compilers = [
        (id, options.clone()),
        (format!("{tool}-assertions-trunk"), options.clone()),
    ];
    let url = clientstate_url(&session_state("llvm", ir, &compilers));
    if url.len() > MAX_URL {
        return Link::none(format!(
            "a link with {what} would be {} characters long, and Compiler Explorer refuses URLs over about {MAX_URL}",
            url.len()
        ));
    }
    let flags = if options.is_empty() {
        "no flags".to_string()
    } else {
        super::markdown::code(&options)
    };
    Link {
        url: Some(url),
        note: format!(
            "{what} with {flags} on {tool} {version} and on {tool} trunk with assertions",
            tool = super::markdown::code(tool)
        ),
    }
}

#[cfg(test)]
mod tests;
