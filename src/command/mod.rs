//! Compiler command lines as data.
//!
//! Capture needs to take a build's compile command apart: which arguments are inputs, which
//! only matter to the preprocessor, which pick the offload job (host, or one `--offload-arch`),
//! and how to turn it into "preprocess this job" and "compile the preprocessed file the same
//! way". Everything here is pure string work over argv vectors; nothing is run.

mod jobs;
mod options;

pub use jobs::{job_of_cc1, parse_hash_hash_hash, Job, JobKind};
pub use options::{side_output, Handling, SideOutput, Where, SIDE_OUTPUTS};
use options::{takes_value, Spelling};

/// Which compile job of a (possibly multi-job) command to work on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JobSelector {
    /// The command as it is (one job, or no offloading).
    Whole,
    /// The host side of an offload compile (`--cuda-host-only`).
    Host,
    /// The device side for one GPU arch (`--cuda-device-only --offload-arch=ARCH`).
    Device(String),
}

/// Source language, as `-x` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lang {
    C,
    Cxx,
    Hip,
    Cuda,
    OpenCl,
    /// Already preprocessed C (`.i`).
    CPre,
    /// Already preprocessed C++ (`.ii`).
    CxxPre,
    Other,
}

impl Lang {
    /// From a `-x` value.
    pub fn from_x(x: &str) -> Lang {
        match x {
            "c" => Lang::C,
            "c++" => Lang::Cxx,
            "hip" => Lang::Hip,
            "cuda" => Lang::Cuda,
            "cl" | "clcpp" => Lang::OpenCl,
            "cpp-output" => Lang::CPre,
            "c++-cpp-output" => Lang::CxxPre,
            _ => Lang::Other,
        }
    }

    /// From a file name's extension, as the driver guesses it.
    pub fn from_path(path: &str) -> Lang {
        let ext = path.rsplit_once('.').map(|(_, e)| e).unwrap_or("");
        match ext {
            "c" => Lang::C,
            "cc" | "cpp" | "cxx" | "C" | "c++" | "cp" | "CPP" => Lang::Cxx,
            "hip" => Lang::Hip,
            "cu" => Lang::Cuda,
            "cl" => Lang::OpenCl,
            "i" => Lang::CPre,
            "ii" => Lang::CxxPre,
            "hipi" => Lang::Hip,
            _ => Lang::Other,
        }
    }

    /// File extension for this language's preprocessed output.
    pub fn preprocessed_ext(self) -> &'static str {
        match self {
            Lang::C | Lang::CPre => "i",
            Lang::Cxx | Lang::CxxPre | Lang::Other => "ii",
            Lang::Hip => "hipi",
            Lang::Cuda => "cui",
            Lang::OpenCl => "cl",
        }
    }

    /// The `-x` value and file extension for `-frewrite-includes` output, which is still
    /// source of the original language (macros and `#if` live; `cpp-output` would skip the
    /// predefined and `-D` macros it needs).
    pub fn rewritten_x(self) -> (&'static str, &'static str) {
        match self {
            Lang::C => ("c", "c"),
            Lang::Cxx | Lang::Other => ("c++", "cpp"),
            Lang::Hip => ("hip", "hip"),
            Lang::Cuda => ("cuda", "cu"),
            Lang::OpenCl => ("cl", "cl"),
            Lang::CPre => ("cpp-output", "i"),
            Lang::CxxPre => ("c++-cpp-output", "ii"),
        }
    }

    /// The `-x` value to compile a preprocessed file of this language with, and extra
    /// arguments that must come with it. HIP/CUDA keep their language (`-x hip-cpp-output`
    /// makes the driver look for an offload bundle, find none and compile nothing, exit 0)
    /// and need `-nogpuinc` so the runtime wrapper header is not included a second time.
    pub fn preprocessed_x(self) -> (&'static str, &'static [&'static str]) {
        match self {
            Lang::C | Lang::CPre => ("cpp-output", &[]),
            Lang::Cxx | Lang::CxxPre | Lang::Other => ("c++-cpp-output", &[]),
            Lang::Hip => ("hip", &["-nogpuinc"]),
            Lang::Cuda => ("cuda", &["-nocudainc"]),
            Lang::OpenCl => ("cl", &[]),
        }
    }
}

/// A compiler invocation: the program as it was named, and its arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompilerCommand {
    pub program: String,
    pub args: Vec<String>,
}

/// What an argument is, after the option table has been applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ArgRole {
    /// An option; `len` arguments long (1, or 2 when its value is separate).
    Option {
        len: usize,
    },
    Input,
}

impl CompilerCommand {
    /// Builds a command from an argv (program first).
    pub fn from_argv(argv: &[String]) -> Option<Self> {
        let (program, args) = argv.split_first()?;
        Some(Self {
            program: program.clone(),
            args: args.to_vec(),
        })
    }

    /// The whole argv, program first.
    pub fn argv(&self) -> Vec<String> {
        std::iter::once(self.program.clone())
            .chain(self.args.iter().cloned())
            .collect()
    }

    /// True for a `clang -cc1 …` frontend command.
    pub fn is_cc1(&self) -> bool {
        self.args.first().map(String::as_str) == Some("-cc1")
    }

    /// `llc` or `opt` when the program is one of LLVM's tools that take IR (`llc-19`,
    /// `/usr/lib/llvm-19/bin/opt`): its input is already portable and its crash is reduced
    /// as IR, not as source.
    pub fn llvm_tool(&self) -> Option<&'static str> {
        llvm_tool_named(&self.program)
    }

    /// True when the program is GCC rather than clang.
    pub fn is_gcc(&self) -> bool {
        let name = self.program.rsplit('/').next().unwrap_or(&self.program);
        (name.starts_with("gcc") || name.starts_with("g++") || name.contains("-gcc"))
            && !name.contains("clang")
    }

    /// Splits the arguments into options (with their values) and inputs.
    fn roles(&self) -> Vec<(usize, ArgRole)> {
        let cc1 = self.is_cc1();
        // cc1 has no positional arguments but its inputs, and every input follows `-x LANG`
        // (as clang prints them); any other bare word is the value of the option before it.
        // That holds for options no table lists (`-msmall-data-limit 8`).
        let cc1_inputs: Vec<usize> = if cc1 {
            (2..self.args.len())
                .filter(|&i| self.args[i - 2] == "-x" && !self.args[i].starts_with('-'))
                .collect()
        } else {
            Vec::new()
        };
        let mut out = Vec::new();
        let mut i = 0;
        let mut only_inputs = false;
        while i < self.args.len() {
            let a = &self.args[i];
            let bare = a == "-" || !a.starts_with('-');
            if cc1 && !cc1_inputs.is_empty() && !only_inputs {
                if cc1_inputs.contains(&i) || i == 0 {
                    let role = if i == 0 {
                        ArgRole::Option { len: 1 }
                    } else {
                        ArgRole::Input
                    };
                    out.push((i, role));
                    i += 1;
                    continue;
                }
                let next_is_value = self.args.get(i + 1).is_some_and(|n| {
                    !cc1_inputs.contains(&(i + 1)) && (!n.starts_with('-') || takes_value(a, true))
                });
                let len = if !bare && next_is_value { 2 } else { 1 };
                out.push((i, ArgRole::Option { len }));
                i += len;
                continue;
            }
            if only_inputs || bare {
                out.push((i, ArgRole::Input));
                i += 1;
                continue;
            }
            if a == "--" {
                only_inputs = true;
                out.push((i, ArgRole::Option { len: 1 }));
                i += 1;
                continue;
            }
            let len = if takes_value(a, cc1) && i + 1 < self.args.len() {
                2
            } else {
                1
            };
            out.push((i, ArgRole::Option { len }));
            i += len;
        }
        out
    }

    /// Indices of the input files.
    pub fn input_indices(&self) -> Vec<usize> {
        self.roles()
            .into_iter()
            .filter(|(_, r)| *r == ArgRole::Input)
            .map(|(i, _)| i)
            .collect()
    }

    /// The input files, as written.
    pub fn inputs(&self) -> Vec<&str> {
        self.input_indices()
            .into_iter()
            .map(|i| self.args[i].as_str())
            .collect()
    }

    /// Every option with its value, as (name-as-written, value).
    fn options(&self) -> Vec<(usize, &str, Option<&str>)> {
        self.roles()
            .into_iter()
            .filter_map(|(i, r)| match r {
                ArgRole::Option { len } => Some((
                    i,
                    self.args[i].as_str(),
                    (len == 2).then(|| self.args[i + 1].as_str()),
                )),
                ArgRole::Input => None,
            })
            .collect()
    }

    /// The value of an option spelled `-name value`, `-name=value` or `-namevalue` (last wins).
    pub fn option_value(&self, name: &str) -> Option<String> {
        let mut found = None;
        for (_, opt, val) in self.options() {
            if opt == name {
                if let Some(v) = val {
                    found = Some(v.to_string());
                }
            } else if let Some(rest) = opt.strip_prefix(name) {
                let rest = rest.strip_prefix('=').unwrap_or(rest);
                if name.ends_with('=') || opt.as_bytes().get(name.len()) == Some(&b'=') {
                    found = Some(rest.to_string());
                }
            }
        }
        found
    }

    /// The language of the (first) input: `-x` before it, else its extension.
    pub fn language(&self) -> Lang {
        let mut x: Option<&str> = None;
        for (i, role) in self.roles() {
            match role {
                ArgRole::Option { len } => {
                    let a = self.args[i].as_str();
                    if a == "-x" && len == 2 {
                        x = Some(self.args[i + 1].as_str());
                    } else if let Some(v) = a.strip_prefix("-x") {
                        if !v.is_empty() && !a.starts_with("-xc-") {
                            x = Some(v);
                        }
                    }
                }
                ArgRole::Input => {
                    return match x {
                        Some(x) if x != "none" => Lang::from_x(x),
                        _ => Lang::from_path(&self.args[i]),
                    };
                }
            }
        }
        x.map(Lang::from_x).unwrap_or(Lang::Other)
    }

    /// GPU arches named by `--offload-arch` / `--cuda-gpu-arch`, in order, deduplicated.
    pub fn offload_arches(&self) -> Vec<String> {
        let mut arches: Vec<String> = Vec::new();
        for (_, opt, val) in self.options() {
            let v = ["--offload-arch=", "--cuda-gpu-arch="]
                .iter()
                .find_map(|p| opt.strip_prefix(p).map(str::to_string))
                .or_else(|| {
                    (opt == "--offload-arch" || opt == "--cuda-gpu-arch")
                        .then(|| val.map(str::to_string))
                        .flatten()
                });
            if let Some(v) = v {
                for a in v.split(',') {
                    if !a.is_empty() && !arches.iter().any(|x| x == a) {
                        arches.push(a.to_string());
                    }
                }
            }
        }
        arches
    }

    /// True when the compile offloads to a GPU (HIP or CUDA input).
    pub fn is_offload(&self) -> bool {
        matches!(self.language(), Lang::Hip | Lang::Cuda)
    }

    /// True if the command already asks for device-only compilation.
    pub fn is_device_only(&self) -> bool {
        self.args
            .iter()
            .any(|a| a == "--cuda-device-only" || a == "--offload-device-only")
    }

    /// Copy with the arguments that `keep` rejects removed (option and value together).
    fn filtered(&self, mut keep: impl FnMut(&str, Option<&str>, bool) -> bool) -> Vec<String> {
        let mut out = Vec::new();
        for (i, role) in self.roles() {
            match role {
                ArgRole::Input => {
                    if keep(&self.args[i], None, true) {
                        out.push(self.args[i].clone());
                    }
                }
                ArgRole::Option { len } => {
                    let val = (len == 2).then(|| self.args[i + 1].as_str());
                    if keep(&self.args[i], val, false) {
                        out.extend(self.args[i..i + len].iter().cloned());
                    }
                }
            }
        }
        out
    }

    /// The command that writes the preprocessed input of `job` to `out`.
    pub fn preprocess(&self, job: &JobSelector, out: &str, rewrite_includes: bool) -> Self {
        let cc1 = self.is_cc1();
        let mut args = self.filtered(|a, _, input| {
            !input && !options::is_output_or_action(a, cc1) && !options::is_job_choice(a)
        });
        if cc1 {
            args.push("-E".into());
        } else {
            args.push("-E".into());
            args.extend(job_args(job));
        }
        if rewrite_includes {
            args.push("-frewrite-includes".into());
            // `#pragma clang __debug crash` fires in the preprocessor; keep it as text.
            args.extend(["-Xclang".into(), "-disable-pragma-debug-crash".into()]);
            if cc1 {
                // -Xclang is a driver spelling; cc1 takes the flag directly.
                args.retain(|a| a != "-Xclang");
            }
        }
        args.extend(["-o".into(), out.into()]);
        args.extend(self.inputs().into_iter().map(String::from));
        Self {
            program: self.program.clone(),
            args,
        }
    }

    /// The command that compiles the preprocessed `input` of `job` the way the original
    /// compiled its source, writing to `out`; preprocessor-only options are dropped so it
    /// needs no headers. `lang` is the original input's language. With `rewritten` (for
    /// `-frewrite-includes` output, where `#if` and macros are still live) `-D`/`-U` stay and
    /// the input is compiled as the original language.
    pub fn compile_preprocessed(
        &self,
        job: &JobSelector,
        input: &str,
        lang: Lang,
        out: &str,
        rewritten: bool,
    ) -> Self {
        let cc1 = self.is_cc1();
        let mut has_mode = false;
        let mut args = self.filtered(|a, _, is_input| {
            if is_input {
                return false;
            }
            if options::is_mode(a) {
                has_mode = true;
            }
            (!options::is_preprocessor_only(a, cc1) || (rewritten && options::is_macro(a)))
                && !options::is_output(a)
                && !options::is_job_choice(a)
                && !options::is_language(a)
        });
        if !cc1 {
            if !has_mode {
                args.push("-c".into());
            }
            args.extend(job_args(job));
        }
        let (x, extra) = lang.preprocessed_x();
        let x = if rewritten { lang.rewritten_x().0 } else { x };
        for e in extra {
            if !args.iter().any(|a| a == e) {
                args.push((*e).into());
            }
        }
        args.extend(["-o".into(), out.into(), "-x".into(), x.into(), input.into()]);
        Self {
            program: self.program.clone(),
            args,
        }
    }

    /// A copy with `extra` appended before the inputs.
    pub fn with_extra_args(&self, extra: &[&str]) -> Self {
        let mut c = self.clone();
        let at = c.input_indices().first().copied().unwrap_or(c.args.len());
        for (k, e) in extra.iter().enumerate() {
            c.args.insert(at + k, (*e).to_string());
        }
        c
    }

    /// A copy with every `-o FILE` replaced by `-o out`, before the inputs (on a cc1 line,
    /// before the `-x LANG` of the first: cc1's inputs are told by the `-x` before them).
    pub fn with_output(&self, out: &str) -> Self {
        let mut args = self.filtered(|a, _, _| !options::is_output(a));
        let mut at = self
            .input_indices()
            .first()
            .map(|_| args.len() - self.inputs().len())
            .unwrap_or(args.len());
        if self.is_cc1() && at >= 2 && args[at - 2] == "-x" {
            at -= 2;
        }
        args.insert(at, out.into());
        args.insert(at, "-o".into());
        Self {
            program: self.program.clone(),
            args,
        }
    }

    /// The output file as written in any spelling of `-o` (the last one), if any.
    pub fn output(&self) -> Option<String> {
        let mut found = None;
        for (_, opt, val) in self.options() {
            if opt == "-o" || opt == "--output" {
                found = val.map(str::to_string).or(found);
            } else if let Some(v) = opt.strip_prefix("--output=") {
                found = Some(v.to_string());
            } else if options::is_output(opt) {
                found = Some(opt[2..].to_string());
            }
        }
        found
    }

    /// A copy whose options that write files besides the output ([`options::SIDE_OUTPUTS`],
    /// also inside `-Xclang`, `-Xpreprocessor` and `-Wp,`) write into `sink` or nowhere:
    /// those that only make their file are dropped, those that may change the code stay with
    /// their file moved ([`options::Handling`]). The `-o` is left as it is
    /// ([`Self::without_build_outputs`] moves it too).
    pub fn without_side_outputs(&self, sink: &Sink<'_>) -> Self {
        let cc1 = self.is_cc1();
        let gcc = self.is_gcc();
        let units: Vec<(usize, usize, bool)> = self
            .roles()
            .into_iter()
            .map(|(i, r)| match r {
                ArgRole::Option { len } => (i, len, false),
                ArgRole::Input => (i, 1, true),
            })
            .collect();
        let mut args = Vec::with_capacity(self.args.len());
        let mut pins: Vec<&'static str> = Vec::new();
        let mut k = 0;
        while k < units.len() {
            let (i, len, input) = units[k];
            k += 1;
            let a = self.args[i].as_str();
            let val = (len == 2).then(|| self.args[i + 1].as_str());
            if input {
                args.push(a.to_string());
            } else if let Some(list) = a.strip_prefix(options::WP) {
                args.extend(wp_without_side_outputs(list));
            } else if let (true, Some(inner)) = (options::CC1_WRAPPERS.contains(&a), val) {
                let Some((o, joined)) = options::side_output(inner, true, false) else {
                    args.extend([a.to_string(), inner.to_string()]);
                    continue;
                };
                // A separate value comes in the next pair of the same wrapper.
                let separate = joined.is_none()
                    && matches!(o.spelling, Spelling::Separate | Spelling::JoinedOrSeparate);
                let next = units.get(k).and_then(|&(j, l, inp)| {
                    (separate && !inp && l == 2 && self.args[j] == a)
                        .then(|| self.args[j + 1].as_str())
                });
                if next.is_some() {
                    k += 1;
                }
                for v in rewrite(o, inner, joined.or(next), sink, None) {
                    args.extend([a.to_string(), v]);
                }
            } else {
                match options::side_output(a, cc1, gcc) {
                    None => args.extend(self.args[i..i + len].iter().cloned()),
                    Some((o, joined)) => {
                        let pin_to = (!gcc && !cc1).then_some(&mut pins);
                        args.extend(rewrite(o, a, joined.or(val), sink, pin_to));
                    }
                }
            }
        }
        let c = Self {
            program: self.program.clone(),
            args,
        };
        // The cc1 options that name the files a `/dev/null` output would have beside it:
        // clang puts `-Xclang` values after its own, and cc1 takes the last.
        let mut extra: Vec<String> = Vec::new();
        for pin in pins {
            let named = |e: &String| e == pin || (pin.ends_with('=') && e.starts_with(pin));
            if extra.iter().any(named)
                || c.args.windows(2).any(|w| w[0] == "-Xclang" && named(&w[1]))
            {
                continue;
            }
            if pin.ends_with('=') {
                extra.extend(["-Xclang".into(), format!("{pin}/dev/null")]);
            } else {
                extra.extend([
                    "-Xclang".into(),
                    pin.into(),
                    "-Xclang".into(),
                    "/dev/null".into(),
                ]);
            }
        }
        let extra: Vec<&str> = extra.iter().map(String::as_str).collect();
        c.with_extra_args(&extra)
    }

    /// A copy that writes nothing where the original would: [`Self::without_side_outputs`],
    /// and its output in `sink` (a file named like the build's output inside the directory,
    /// or `/dev/null`). For every run icepick makes of a build's command (its first run,
    /// reruns, preprocessing, probes) and for replays: none may touch the build's files or
    /// put one beside `/dev/null`.
    ///
    /// A compile for several offload arches that writes one output per arch takes no `-o`
    /// (clang refuses one for them all): a HIP one is given `--gpu-bundle-output`, which
    /// bundles them into the one file `-o` names (its device jobs run as before, a bundling
    /// step follows); CUDA has no such option, and such a compile keeps writing the outputs
    /// it names itself into its working directory.
    pub fn without_build_outputs(&self, sink: &Sink<'_>) -> Self {
        let mut kept = self.without_side_outputs(sink);
        let out = match sink {
            Sink::Dir(dir) => {
                let output = self.output();
                let name = output
                    .as_deref()
                    .and_then(file_name)
                    .filter(|n| *n != "-")
                    .unwrap_or("out");
                dir.join(name).to_string_lossy().into_owned()
            }
            Sink::Nowhere => "/dev/null".to_string(),
        };
        let several = !self.is_cc1() && self.offload_arches().len() > 1;
        if several && self.output().is_none() {
            if self.language() != Lang::Hip {
                return kept;
            }
            kept.args.retain(|a| a != "--no-gpu-bundle-output");
            if !kept.args.iter().any(|a| a == "--gpu-bundle-output") {
                kept = kept.with_extra_args(&["--gpu-bundle-output"]);
            }
        }
        kept.with_output(&out)
    }

    /// The command as one line of POSIX shell, every argument quoted where needed.
    pub fn to_shell(&self) -> String {
        shell_join(&self.argv())
    }
}

/// Where a rerun of a build's command writes: its output and every side output it keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sink<'a> {
    /// Into this directory (a fresh one in icepick's scratch, removed after the run).
    Dir(&'a std::path::Path),
    /// Nowhere: `-o /dev/null`, and each file kept beside it named `/dev/null` by its cc1
    /// option (see [`options::Handling::BesideOutput`]). For a command kept in the case and
    /// run later, when no scratch directory of this run exists any more.
    Nowhere,
}

/// The arguments that replace side output `o`, written `arg` with `value`, for `sink`. Each
/// cc1 option pinned to `/dev/null` for the output is added to `pins` (when given: the
/// clang driver).
fn rewrite(
    o: &options::SideOutput,
    arg: &str,
    value: Option<&str>,
    sink: &Sink<'_>,
    pins: Option<&mut Vec<&'static str>>,
) -> Vec<String> {
    use options::Handling;
    let respell = |new: String| -> Vec<String> {
        match (o.spelling, value) {
            (Spelling::Joined, _) => vec![format!("{}{new}", o.name)],
            (Spelling::JoinedOrSeparate, Some(v))
                if arg.len() > o.name.len() && arg.ends_with(v) =>
            {
                vec![format!("{}{new}", o.name)]
            }
            _ => vec![arg.to_string(), new],
        }
    };
    match (o.handling, sink) {
        (Handling::Remove, _) => Vec::new(),
        (Handling::Replace(_), Sink::Nowhere) => Vec::new(),
        (Handling::Replace(with), Sink::Dir(_)) => vec![with.to_string()],
        (Handling::BesideOutput { .. }, Sink::Dir(_)) => vec![arg.to_string()],
        (Handling::BesideOutput { pin }, Sink::Nowhere) => match (pin, pins) {
            (Some(p), Some(pins)) => {
                pins.push(p);
                vec![arg.to_string()]
            }
            _ => Vec::new(),
        },
        (Handling::RedirectFile | Handling::RedirectDir, _) if value.is_none() => {
            vec![arg.to_string()]
        }
        (Handling::RedirectFile, Sink::Nowhere) => respell("/dev/null".into()),
        (Handling::RedirectDir, Sink::Nowhere) => Vec::new(),
        (Handling::RedirectFile | Handling::RedirectDir, Sink::Dir(dir)) => {
            let v = value.unwrap_or_default();
            let name = file_name(v.trim_end_matches('/')).unwrap_or("side-output");
            let slash = if v.ends_with('/') { "/" } else { "" };
            respell(format!("{}{slash}", dir.join(name).display()))
        }
    }
}

/// The last component of `path`, when it names a file (not empty, `.` or `..`): what a
/// file the build names is called in the scratch directory.
fn file_name(path: &str) -> Option<&str> {
    path.rsplit('/')
        .next()
        .filter(|n| !matches!(*n, "" | "." | ".."))
}

/// A `-Wp,` argument's list without the side outputs in it (`-Wp,-MD,t.d`: the driver reads
/// it as `-MD -MF t.d`); nothing when nothing is left.
fn wp_without_side_outputs(list: &str) -> Option<String> {
    let items: Vec<&str> = list.split(',').collect();
    let mut kept = Vec::new();
    let mut i = 0;
    while i < items.len() {
        let item = items[i];
        i += 1;
        if item == "-MD" || item == "-MMD" {
            i += 1;
            continue;
        }
        match options::side_output(item, true, false) {
            Some((o, None))
                if matches!(o.spelling, Spelling::Separate | Spelling::JoinedOrSeparate) =>
            {
                i += 1;
            }
            Some(_) => {}
            None => kept.push(item),
        }
    }
    (!kept.is_empty()).then(|| format!("{}{}", options::WP, kept.join(",")))
}

/// Driver arguments that select one job.
fn job_args(job: &JobSelector) -> Vec<String> {
    match job {
        JobSelector::Whole => Vec::new(),
        JobSelector::Host => vec!["--cuda-host-only".into()],
        JobSelector::Device(arch) => {
            vec![
                "--cuda-device-only".into(),
                format!("--offload-arch={arch}"),
            ]
        }
    }
}

/// Quotes one argument for a POSIX shell (and for bash and zsh, where a pasted command line
/// ends up): the argument is one word that expands to exactly itself, whatever it holds
/// (`$(…)`, backticks, quotes, `\`, `!`, `~`, globs, spaces, newlines, the empty string).
/// Words of safe bytes stay bare, except a word starting with `=` (zsh expands `=cmd` to
/// a path) and a word that is `NAME=…` (first on a line, the shell takes it for a variable
/// assignment instead of the command). Everything else is single-quoted; a `'` inside
/// becomes `'\''`. Nothing between single quotes is special to the shell, a newline
/// included, so the result reads back as the same bytes.
pub fn shell_quote(s: &str) -> String {
    let safe_bytes = s
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b"-_./=:,+@%".contains(&b));
    if !s.is_empty() && safe_bytes && !s.starts_with('=') && !is_assignment(s) {
        return s.to_string();
    }
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// `NAME=…` with a shell variable name before the `=`.
fn is_assignment(s: &str) -> bool {
    let Some((name, _)) = s.split_once('=') else {
        return false;
    };
    let mut b = name.bytes();
    b.next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == b'_')
        && b.all(|c| c.is_ascii_alphanumeric() || c == b'_')
}

/// `cd DIR` for a shell: `DIR` quoted, and after `--` when it starts with `-` (else `cd`
/// takes it for an option).
pub fn shell_cd(dir: &str) -> String {
    if dir.starts_with('-') {
        format!("cd -- {}", shell_quote(dir))
    } else {
        format!("cd {}", shell_quote(dir))
    }
}

/// Joins arguments into one shell line.
pub fn shell_join(args: &[String]) -> String {
    args.iter()
        .map(|a| shell_quote(a))
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests;

/// `llc` or `opt` when `program` (a name or a path, `llc-19` too) is one of LLVM's tools.
pub fn llvm_tool_named(program: &str) -> Option<&'static str> {
    let name = program.rsplit('/').next().unwrap_or(program);
    let base = match name.rsplit_once('-') {
        Some((b, v)) if !v.is_empty() && v.chars().all(|c| c.is_ascii_digit()) => b,
        _ => name,
    };
    match base {
        "llc" => Some("llc"),
        "opt" => Some("opt"),
        _ => None,
    }
}
