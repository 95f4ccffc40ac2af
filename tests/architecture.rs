//! The module layering of `src/` and of the `reducers` crate, checked on the source text.
//!
//! Each top-level module may name (through `crate::`, in code or in a doc link) only the
//! modules its layer may use (docs/architecture.md, "Module map: who may use whom"), and no two
//! modules may depend on each other, directly or round a longer cycle. The matrix is data
//! below; a dependency the matrix refuses fails with the file and the module it names. The few
//! arrows that point the wrong way today are listed in `EXCEPTIONS` with the reason they stay.
//!
//! Plain `//` comments do not count (they are prose), `///` and `//!` doc links do (rustdoc
//! resolves them, so they are references like any other).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The layers of `src/`, from the bottom, and the modules in each.
const SRC_LAYERS: &[(&str, &[&str])] = &[
    (
        "leaves",
        &[
            "exec",
            "crash",
            "command",
            "elf",
            "host",
            "error",
            "interrupt",
        ],
    ),
    ("case", &["case"]),
    // Search algorithms over case data (ddmin's outcomes are the flags section's).
    ("algorithms", &["ddmin"]),
    ("executors", &["executor"]),
    (
        "stages",
        &["capture", "flags", "reduce", "versions", "classify", "ir"],
    ),
    ("report", &["report"]),
    ("consumers", &["store", "scanlog", "dashboard"]),
    ("pipeline", &["pipeline"]),
    ("cli", &["cli"]),
];

/// Which layers a layer's modules may name (their own layer only where listed).
const SRC_MAY_USE: &[(&str, &[&str])] = &[
    ("leaves", &["leaves"]),
    // The case model names only pure leaves (`crash`, `command`, the exit codes in `error`).
    ("case", &["leaves"]),
    ("algorithms", &["leaves", "case"]),
    ("executors", &["leaves", "case"]),
    ("stages", &["leaves", "case", "algorithms", "executors"]),
    ("report", &["leaves", "case"]),
    (
        "consumers",
        &[
            "leaves",
            "case",
            "algorithms",
            "executors",
            "stages",
            "report",
        ],
    ),
    (
        "pipeline",
        &[
            "leaves",
            "case",
            "algorithms",
            "executors",
            "stages",
            "report",
        ],
    ),
    (
        "cli",
        &[
            "leaves",
            "case",
            "algorithms",
            "executors",
            "stages",
            "report",
            "consumers",
            "pipeline",
        ],
    ),
];

/// Single arrows the layers alone would refuse or allow wrongly: `(from, to, allowed)`.
/// `allowed = false` narrows a layer rule, `true` widens it.
const SRC_PAIRS: &[(&str, &str, bool, &str)] = &[
    // The case model is built on the pure models only.
    ("case", "crash", true, "the case holds the parsed crash"),
    ("case", "command", true, "the case holds commands"),
    // Pure leaves: text in, values out.
    ("crash", "exec", false, "crash parsing is pure"),
    ("crash", "elf", false, "crash parsing is pure"),
    ("command", "exec", false, "command parsing is pure"),
    // Stage-to-stage helpers (docs/architecture.md): the crash's exit status, a version's major.
    ("classify", "capture", true, "capture::exit_info"),
    ("flags", "capture", true, "capture::exit_info"),
    ("ir", "capture", true, "capture::exit_info"),
    ("reduce", "capture", true, "capture::exit_info"),
    ("versions", "capture", true, "capture::exit_info"),
    ("classify", "versions", true, "versions::major_of"),
    (
        "ir",
        "flags",
        true,
        "the ir stage reuses the flags stage's argument ddmin",
    ),
    // A consumer of the store.
    (
        "dashboard",
        "store",
        true,
        "the dashboard shows the store's buckets",
    ),
];

/// The modules of the `reducers` crate and what each may name: the engine (`driver`, `engine`,
/// `pool`, `schedule`, `speculate`, `window`, `simulate`, `types`) sees passes only through the
/// `pass` trait and never the C/C++ passes (`passes`, `lex`, `markers`).
const REDUCERS: &[(&str, &[&str])] = &[
    ("newline", &[]),
    ("lex", &["newline"]),
    ("plan", &["newline"]),
    ("markers", &["lex", "newline"]),
    ("pass", &["plan"]),
    ("passes", &["lex", "markers", "newline", "pass", "plan"]),
    ("types", &["pass"]),
    ("pool", &["types"]),
    ("window", &["types"]),
    ("schedule", &["pass", "plan"]),
    ("speculate", &["types", "window"]),
    ("simulate", &["speculate", "types", "window"]),
    (
        "engine",
        &[
            "pass",
            "plan",
            "pool",
            "schedule",
            "speculate",
            "types",
            "window",
        ],
    ),
    ("driver", &["engine", "pool", "speculate", "types"]),
];

/// Dependencies that break the rules and stay, each with its reason: `(file under the source
/// root, module it names, why)`. A listed file that no longer names the module fails the test,
/// so the list cannot go stale.
const EXCEPTIONS: &[(&str, &str, &str)] = &[
    (
        "exec/mod.rs",
        "interrupt",
        "exec's run loop must see an interrupt to kill its child; interrupt's handler in turn \
         calls exec::shutdown to kill what is left (a cycle between two leaves: breaking it \
         needs a shutdown hook registered at start-up, not worth it for two small modules)",
    ),
    (
        "crash/symbolize_tests.rs",
        "exec",
        "the symbolizer tests run real clang and llvm-symbolizer (system tier)",
    ),
    (
        "crash/symbolize_tests.rs",
        "elf",
        "the symbolizer tests read the real clang's ELF to find its libraries (system tier)",
    ),
];

/// Files that name modules in strings on purpose (checks of the layering).
const SKIP: &[&str] = &[];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let entries = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The text without plain `//` comment lines (doc comments stay).
fn code_and_docs(text: &str) -> String {
    text.lines()
        .filter(|l| {
            let t = l.trim_start();
            !t.starts_with("//") || t.starts_with("///") || t.starts_with("//!")
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Every name a source names right after `crate::` (paths, `use crate::{a, b}` groups and doc
/// links alike).
fn crate_names(text: &str) -> BTreeSet<String> {
    let ident = |s: &str| -> String {
        s.trim_start()
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect()
    };
    let marker = ["crate", "::"].concat();
    let mut found = BTreeSet::new();
    for (i, _) in text.match_indices(&marker) {
        // `some_crate::` is another crate.
        let before = text[..i].chars().next_back();
        if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_') {
            continue;
        }
        let rest = &text[i + marker.len()..];
        let Some(group) = rest.strip_prefix('{') else {
            found.insert(ident(rest));
            continue;
        };
        let (mut depth, mut item_start) = (1, true);
        for (j, c) in group.char_indices() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                }
                ',' if depth == 1 => item_start = true,
                _ if item_start && depth == 1 && !c.is_whitespace() => {
                    found.insert(ident(&group[j..]));
                    item_start = false;
                }
                _ => {}
            }
        }
    }
    found.retain(|m| !m.is_empty());
    found
}

/// One dependency: a file of module `from` names module `to`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Dep {
    from: String,
    to: String,
    file: String,
}

/// Every dependency between top-level modules under `root` (the crate root files `lib.rs` and
/// `main.rs` and the binaries in `bin/` are not modules). Names that are not modules (items
/// re-exported at the crate root) are ignored.
fn deps(root: &Path) -> Vec<Dep> {
    let mut files = Vec::new();
    rust_files(root, &mut files);
    let module_of = |f: &Path| -> Option<String> {
        let rel = f.strip_prefix(root).ok()?;
        let first = rel.components().next()?.as_os_str().to_str()?;
        let name = first.strip_suffix(".rs").unwrap_or(first);
        (!["lib", "main", "bin"].contains(&name)).then(|| name.to_string())
    };
    let modules: BTreeSet<String> = files.iter().filter_map(|f| module_of(f)).collect();
    let mut out = Vec::new();
    for f in &files {
        let Some(from) = module_of(f) else { continue };
        let rel = f.strip_prefix(root).unwrap().display().to_string();
        if SKIP.contains(&rel.as_str()) {
            continue;
        }
        let text = std::fs::read_to_string(f).unwrap_or_else(|e| panic!("{rel}: {e}"));
        for to in crate_names(&code_and_docs(&text)) {
            if to != from && modules.contains(&to) {
                out.push(Dep {
                    from: from.clone(),
                    to,
                    file: rel.clone(),
                });
            }
        }
    }
    out.sort();
    out
}

fn manifest_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn excepted(d: &Dep) -> bool {
    EXCEPTIONS
        .iter()
        .any(|&(file, to, _)| file == d.file && to == d.to)
}

/// May `from` name `to` under the layers and pairs of `src/`? `None` when `from` or `to` is in
/// no layer.
fn src_allows(from: &str, to: &str) -> Option<bool> {
    if let Some(&(_, _, allowed, _)) = SRC_PAIRS.iter().find(|p| p.0 == from && p.1 == to) {
        return Some(allowed);
    }
    let layer = |m: &str| {
        SRC_LAYERS
            .iter()
            .find(|(_, ms)| ms.contains(&m))
            .map(|l| l.0)
    };
    let (lf, lt) = (layer(from)?, layer(to)?);
    let may = SRC_MAY_USE.iter().find(|(l, _)| *l == lf)?.1;
    Some(may.contains(&lt))
}

fn reducers_allows(from: &str, to: &str) -> Option<bool> {
    REDUCERS
        .iter()
        .find(|(m, _)| *m == from)
        .map(|(_, may)| may.contains(&to))
}

/// The messages for every dependency `allows` refuses (or cannot place) and no exception
/// covers.
fn refused(deps: &[Dep], root: &str, allows: impl Fn(&str, &str) -> Option<bool>) -> Vec<String> {
    deps.iter()
        .filter(|d| !excepted(d))
        .filter_map(|d| match allows(&d.from, &d.to) {
            Some(true) => None,
            Some(false) => Some(format!(
                "{root}/{} names `{}`: module `{}` may not use `{}`",
                d.file,
                ["crate::", &d.to].concat(),
                d.from,
                d.to
            )),
            None => Some(format!(
                "{root}/{}: `{}` or `{}` is in no layer of the table in tests/architecture.rs",
                d.file, d.from, d.to
            )),
        })
        .collect()
}

/// Every cycle among modules (`a -> b -> … -> a`), ignoring the excepted dependencies; each
/// cycle is named once, from its smallest module, with a file for each of its arrows.
fn cycles(deps: &[Dep]) -> Vec<String> {
    let mut graph: BTreeMap<&str, BTreeMap<&str, &str>> = BTreeMap::new();
    for d in deps.iter().filter(|d| !excepted(d)) {
        graph
            .entry(&d.from)
            .or_default()
            .entry(&d.to)
            .or_insert(&d.file);
    }
    let mut found = BTreeSet::new();
    // A depth-first walk from every module that only visits larger modules finds each simple
    // cycle from its smallest member.
    fn walk<'a>(
        graph: &BTreeMap<&'a str, BTreeMap<&'a str, &'a str>>,
        start: &'a str,
        path: &mut Vec<(&'a str, &'a str)>,
        at: &'a str,
        found: &mut BTreeSet<String>,
    ) {
        for (&next, &file) in graph.get(at).into_iter().flatten() {
            if next == start {
                let mut arrows: Vec<String> =
                    path.iter().map(|(m, f)| format!("{m} ({f})")).collect();
                arrows.push(format!("{at} ({file})"));
                found.insert(format!("{} -> {start}", arrows.join(" -> ")));
            } else if next > start && !path.iter().any(|(m, _)| *m == next) && next != at {
                path.push((at, file));
                walk(graph, start, path, next, found);
                path.pop();
            }
        }
    }
    for &start in graph.keys() {
        walk(&graph, start, &mut Vec::new(), start, &mut found);
    }
    found.into_iter().collect()
}

#[test]
fn src_modules_use_only_the_layers_below_them() {
    let deps = deps(&manifest_dir().join("src"));
    let bad = refused(&deps, "src", src_allows);
    assert!(
        bad.is_empty(),
        "module layering of src/ (docs/architecture.md, \"Module map\"):\n{}",
        bad.join("\n")
    );
}

#[test]
fn reducers_modules_follow_the_engine_and_passes_split() {
    let deps = deps(&manifest_dir().join("reducers/src"));
    let bad = refused(&deps, "reducers/src", reducers_allows);
    assert!(
        bad.is_empty(),
        "module layering of the reducers crate:\n{}",
        bad.join("\n")
    );
}

#[test]
fn no_modules_depend_on_each_other() {
    for root in ["src", "reducers/src"] {
        let found = cycles(&deps(&manifest_dir().join(root)));
        assert!(
            found.is_empty(),
            "import cycles among the modules of {root}/:\n{}",
            found.join("\n")
        );
    }
}

#[test]
fn every_exception_is_still_needed() {
    let mut all = deps(&manifest_dir().join("src"));
    all.extend(deps(&manifest_dir().join("reducers/src")));
    for &(file, to, why) in EXCEPTIONS {
        assert!(
            all.iter().any(|d| d.file == file && d.to == to),
            "the exception ({file} names `{to}`: {why}) is no longer needed: remove it"
        );
    }
}

#[test]
fn every_module_is_in_the_tables() {
    let src = deps(&manifest_dir().join("src"));
    let src_modules: BTreeSet<&str> = SRC_LAYERS
        .iter()
        .flat_map(|l| l.1.iter().copied())
        .collect();
    let reducers_modules: BTreeSet<&str> = REDUCERS.iter().map(|l| l.0).collect();
    let on_disk = |root: &str| -> BTreeSet<String> {
        let dir = manifest_dir().join(root);
        std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .flatten()
            .filter_map(|e| {
                let name = e.file_name().into_string().ok()?;
                let name = name.strip_suffix(".rs").map(str::to_string).unwrap_or(name);
                (!["lib", "main", "bin"].contains(&name.as_str())).then_some(name)
            })
            .collect()
    };
    for m in on_disk("src") {
        assert!(
            src_modules.contains(m.as_str()),
            "src/{m} is in no layer of SRC_LAYERS"
        );
    }
    for m in on_disk("reducers/src") {
        assert!(
            reducers_modules.contains(m.as_str()),
            "reducers/src/{m} is not in REDUCERS"
        );
    }
    // The checks above would pass vacuously on a moved tree.
    assert!(
        src.iter().any(|d| d.from == "cli" && d.to == "report"),
        "{src:?}"
    );
}

#[test]
fn the_checks_catch_a_wrong_arrow_and_a_cycle() {
    let dep = |from: &str, to: &str| Dep {
        from: from.into(),
        to: to.into(),
        file: format!("{from}/mod.rs"),
    };
    let bad = refused(&[dep("report", "capture")], "src", src_allows);
    assert_eq!(
        bad,
        ["src/report/mod.rs names `crate::capture`: module `report` may not use `capture`"]
    );
    assert!(refused(&[dep("engine", "passes")], "reducers/src", reducers_allows).len() == 1);
    let found = cycles(&[dep("a", "b"), dep("b", "c"), dep("c", "a"), dep("c", "d")]);
    assert_eq!(found, ["a (a/mod.rs) -> b (b/mod.rs) -> c (c/mod.rs) -> a"]);
    let names = crate_names(&code_and_docs(
        "use crate::{case::{Case, X}, exec};\n// crate::cli in prose\n/// [`crate::ir::f`]\n",
    ));
    assert_eq!(
        names.into_iter().collect::<Vec<_>>(),
        ["case", "exec", "ir"]
    );
}
