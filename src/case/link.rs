//! The `link` section: the case is a crash of the linker's LTO step (full LTO, ThinLTO, a
//! device link). Such a case is an `llc`/`opt` case on the module the crashing step saw; this
//! section keeps what the user ran and how that module was got from it, for the report and
//! for the stages that go back from the IR to the link's inputs.

use serde::{Deserialize, Serialize};

/// The source reduction's test script, in the case.
pub const SOURCE_TEST: &str = "source/test.sh";

/// How a link-time crash became the case's IR command.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LinkInfo {
    /// The link command the build ran, program first.
    pub command: Vec<String>,
    /// The linker the link ran (`/usr/lib/llvm-19/bin/ld.lld`), when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub linker: Option<String>,
    /// `full` or `thin`.
    pub lto: String,
    /// Where in LTO it crashed: `codegen` (the module after LTO's optimizer, run by `llc`) or
    /// `optimizer` (the module before it, run through `opt -passes=lto<On>`).
    pub stage: String,
    /// The module's name in the link (`ld-temp.o` for full LTO, the input's name for a
    /// ThinLTO backend), from the crash's `on module` line when it had one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub module: Option<String>,
    /// The save-temps file the case's input was copied from (its name, not a path).
    pub saved_as: String,
    /// The link's own crash signature (its stack ends in the linker, the IR command's in
    /// `llc`/`opt`: the case's `signature` is the IR command's).
    pub link_signature: String,
    /// How the IR command's crash matches the link's: `same` (the exact signature), `coarse`
    /// (same kind, message, pass and top frame), `message` (same kind and message: the link
    /// printed no stack, as the gold plugin's does) or `unidentified` (the link's crash said
    /// nothing to compare, as a crash in a ThinLTO backend's thread: the IR command crashing
    /// in the same step is the evidence).
    pub signature_match: String,
    /// The link's inputs, in command-line order.
    pub inputs: Vec<LinkInput>,
    /// The bitcode inputs the link needs to crash (ddmin over them, the other inputs kept),
    /// when it had more than one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub needed_inputs: Option<Vec<String>>,
    /// Links run to find them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_tests: Option<u32>,
    /// The sources of the needed inputs, when the build's `compile_commands.json` compiles
    /// them: the way back from the IR to a source reproducer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<LinkSources>,
    /// Why the case has no `source`, when the link needed bitcode inputs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_note: Option<String>,
}

/// The needed inputs' sources, preprocessed into the case, and the commands that make the
/// link crash from them: each compiled to its object in one directory, then the link.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LinkSources {
    pub files: Vec<LinkSource>,
    /// The link, program first, writing `out`: the needed inputs named by their objects, the
    /// other inputs it kept by their full paths.
    pub link: Vec<String>,
    /// The interestingness script that `reduce --test` runs on `files`: always
    /// [`SOURCE_TEST`], written by the reduce stage (kept here for readers of the JSON).
    pub test: String,
    /// The reduction of the files, when one ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reduction: Option<SourceReduction>,
}

/// One source of a needed input.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LinkSource {
    /// The input the link names (`a.o`).
    pub input: String,
    /// The preprocessed source in the case (`source/a.i`).
    pub file: String,
    /// The object the test compiles it to (`0.o`).
    pub object: String,
    /// The compile, program first, run beside the file (its name as the input).
    pub compile: Vec<String>,
}

/// What the source reduction of a link case did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SourceReduction {
    /// `done` or `stopped`.
    pub status: String,
    pub bytes_before: u64,
    pub bytes_after: u64,
    pub tests: u64,
    pub seconds: f64,
    /// The reduced files made the link crash the same way when checked again at the end.
    pub verified: bool,
    /// Each reduced file's text, in `files` order, when all are small enough to show.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub texts: Vec<String>,
}

/// One input file of the link.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LinkInput {
    /// As the command names it.
    pub name: String,
    /// `bitcode`, `object`, `archive`, `linker-script` or `other` (`missing` when it could
    /// not be read).
    pub kind: String,
    pub bytes: u64,
    /// For an archive: its members, and how many of them are bitcode.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub members: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bitcode_members: Option<u32>,
}

impl LinkInfo {
    /// The inputs that carry bitcode (bitcode files, archives with bitcode members).
    pub fn bitcode_inputs(&self) -> impl Iterator<Item = &LinkInput> {
        self.inputs
            .iter()
            .filter(|i| i.kind == "bitcode" || i.bitcode_members.unwrap_or(0) > 0)
    }

    /// "full LTO" / "ThinLTO", as the report says it.
    pub fn lto_words(&self) -> &'static str {
        if self.lto == "thin" {
            "ThinLTO"
        } else {
            "full LTO"
        }
    }
}
