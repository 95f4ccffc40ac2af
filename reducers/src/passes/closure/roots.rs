//! Where a closure starts: the declarations at the crash site, the code that instantiates
//! the crashing template, and the main file's declarations (see the parent module).

use std::cmp::Reverse;
use std::collections::{BTreeSet, BinaryHeap};

use super::callers;
use super::split::Split;
use super::Hints;
use crate::markers;

/// Where a closure starts (see the module doc).
pub(super) struct Roots<'t> {
    /// The declarations at the crash: the parser location, the templates being instantiated
    /// and the crashing function.
    pub(super) roots: Vec<usize>,
    /// Those of `roots` and `callers` that can be cut down to a few statements.
    pub(super) trimmed: Vec<(usize, callers::Trimmed<'t>)>,
    /// The same with the crash statement also cut after what the parser had read (empty
    /// when it cannot be).
    pub(super) truncated: Vec<(usize, callers::Trimmed<'t>)>,
    /// The non-template code that instantiates the crashing template.
    pub(super) callers: Vec<usize>,
    /// The main file's declarations (empty without line markers).
    pub(super) main_decls: Vec<usize>,
}

impl<'t> Roots<'t> {
    /// The roots in `s` for `hints`. Without line markers, locations are only trusted when
    /// `by_location` (the text is the one the locations were taken from).
    pub(super) fn of(s: &Split<'t>, hints: &Hints, by_location: bool) -> Self {
        // The crash site's declarations, trimmed to the statement the parser was in (and,
        // first, to the part of it the parser had read).
        let mut roots = Vec::new();
        let mut trimmed = Vec::new();
        let mut truncated = Vec::new();
        let raw_lines = hints
            .located_in
            .map_or(true, |id| id == crate::passes::text_id(s.text));
        let located = by_location && raw_lines || markers::main_file(s.text).is_some();
        if let Some((file, line)) = hints.location.as_ref().filter(|_| located) {
            if let Some(line_at) = markers::locate(s.text, file.as_bytes(), *line) {
                let at = line_at + hints.column.map_or(0, |c| c.saturating_sub(1) as usize);
                for k in containing(s, line_at) {
                    trimmed.extend(callers::trim_to_byte(s, k, at, false).map(|t| (k, t)));
                    let read = hints
                        .column
                        .and_then(|_| callers::trim_to_byte(s, k, at, true));
                    truncated.extend(read.map(|t| (k, t)));
                    roots.push(k);
                }
            }
        }
        for (file, line) in hints.sites.iter().filter(|_| located) {
            if let Some(at) = markers::locate(s.text, file.as_bytes(), *line) {
                roots.extend(containing(s, at));
            }
        }
        if let Some(name) = hints
            .function
            .as_deref()
            .and_then(crate::passes::guided::crash_name)
        {
            roots.extend(s.decls.iter().enumerate().filter_map(|(k, d)| {
                (d.children.is_empty() && d.declares.contains(&name.as_bytes())).then_some(k)
            }));
        }
        // Once the markers are gone from a cut text the parser's location is lost, but what
        // followed it was cut first (crash-cut): the crash is in the last declaration.
        if hints.location.is_some() && !located && roots.is_empty() {
            let leaf = |k: &usize| s.decls[*k].children.is_empty() && !s.decls[*k].always;
            roots.extend((0..s.decls.len()).rev().find(leaf));
        }
        roots.sort_unstable();
        roots.dedup();
        let main_decls = main_file_decls(s);
        // The code that instantiates the crashing template, trimmed to the statements naming it.
        let mut callers = Vec::new();
        if let Some(name) = hints.instantiated.as_deref() {
            let among: Vec<usize> = if main_decls.is_empty() {
                (0..s.decls.len()).collect()
            } else {
                main_decls.clone()
            };
            callers = callers::callers(s, &among, name.as_bytes());
            callers.retain(|k| !roots.contains(k));
            let trims: Vec<_> = callers
                .iter()
                .filter_map(|&k| Some((k, callers::trim_to_name(s, k, name.as_bytes())?)))
                .collect();
            // The truncated candidate, when there is one, trims the callers too.
            if !truncated.is_empty() {
                truncated.extend(trims.iter().cloned());
            }
            trimmed.extend(trims);
        }
        Roots {
            roots,
            trimmed,
            truncated,
            callers,
            main_decls,
        }
    }
}

impl Roots<'_> {
    /// Every root, the callers and the main file's declarations: where prune and hollow
    /// weigh what the closure keeps.
    pub(super) fn all(&self) -> Vec<usize> {
        [&self.roots[..], &self.callers[..], &self.main_decls[..]].concat()
    }
}

/// The main file's declarations (by line markers), in text order: for each of its lines, the
/// leaf declarations containing the line's first non-blank byte, a run of lines in one
/// declaration counted once.
pub(super) fn main_file_decls(s: &Split) -> Vec<usize> {
    let Some(main) = markers::main_file(s.text) else {
        return Vec::new();
    };
    let mut sweep = Sweep::new(s);
    let mut main_decls = Vec::new();
    for l in markers::lines(s.text) {
        if l.marker.is_none() && l.file == Some(main) {
            let body = &s.text[l.start..l.end];
            if let Some(k) = body.iter().position(|c| !c.is_ascii_whitespace()) {
                main_decls.extend(sweep.containing(l.start + k));
            }
        }
    }
    main_decls.dedup();
    main_decls
}

/// [`containing`] for byte offsets asked in increasing order, as one sweep over the leaf
/// declarations sorted by start: a main file of a million lines must not scan every
/// declaration once per line (an amalgamation such as sqlite3.c would plan for hours).
struct Sweep {
    /// The leaves as `(start, end, index)`, by start.
    leaves: Vec<(usize, usize, usize)>,
    /// How many of `leaves` have started.
    started: usize,
    /// The started leaves by end, soonest first, to retire them.
    ends: BinaryHeap<Reverse<(usize, usize)>>,
    /// The started leaves not yet ended: those containing the last offset asked.
    open: BTreeSet<usize>,
}

impl Sweep {
    fn new(s: &Split) -> Self {
        let mut leaves: Vec<_> = (s.decls.iter().enumerate())
            .filter(|(_, d)| d.children.is_empty())
            .map(|(k, d)| (d.start, d.end, k))
            .collect();
        leaves.sort_unstable();
        Sweep {
            leaves,
            started: 0,
            ends: BinaryHeap::new(),
            open: BTreeSet::new(),
        }
    }

    /// The leaves containing byte `at` (no smaller than any offset asked before), by index.
    fn containing(&mut self, at: usize) -> impl Iterator<Item = usize> + '_ {
        while let Some(&(start, end, k)) = self.leaves.get(self.started) {
            if start > at {
                break;
            }
            self.started += 1;
            self.ends.push(Reverse((end, k)));
            self.open.insert(k);
        }
        while let Some(&Reverse((end, k))) = self.ends.peek() {
            if end > at {
                break;
            }
            self.ends.pop();
            self.open.remove(&k);
        }
        self.open.iter().copied()
    }
}

/// Leaf declarations whose span contains byte `at`.
pub(super) fn containing(s: &Split, at: usize) -> Vec<usize> {
    s.decls
        .iter()
        .enumerate()
        .filter(|(_, d)| d.children.is_empty() && d.start <= at && at < d.end)
        .map(|(k, _)| k)
        .collect()
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    /// [`main_file_decls`] as it was first written: every leaf scanned once per line.
    fn main_file_decls_by_scan(s: &Split) -> Vec<usize> {
        let mut main_decls = Vec::new();
        if let Some(main) = markers::main_file(s.text) {
            for l in markers::lines(s.text) {
                if l.marker.is_none() && l.file == Some(main) {
                    let body = &s.text[l.start..l.end];
                    if let Some(k) = body.iter().position(|c| !c.is_ascii_whitespace()) {
                        main_decls.extend(containing(s, l.start + k));
                    }
                }
            }
            main_decls.dedup();
        }
        main_decls
    }

    /// Main-file and header text: declarations over several lines, blocks, markers.
    fn marked_text() -> impl Strategy<Value = Vec<u8>> {
        let frag = prop::sample::select(vec![
            "# 1 \"m.c\"\n",
            "# 1 \"h.h\" 1 3\n",
            "# 7 \"m.c\" 2\n",
            "int a;\n",
            "int f(int x) {\n  return x;\n}\n",
            "struct S {\n  int a;\n};\n",
            "namespace n {\n",
            "extern \"C\" {\n",
            "}\n",
            "template <class T>\n",
            "void g() { f(1); }",
            "\n",
            "  \n",
            "\t",
            "x",
            ";",
            "{",
            "(",
        ]);
        prop::collection::vec(frag, 0..60).prop_map(|v| v.concat().into_bytes())
    }

    proptest! {
        #[test]
        fn the_sweep_finds_what_the_scan_found(text in marked_text()) {
            let s = Split::new(&text);
            prop_assert_eq!(main_file_decls(&s), main_file_decls_by_scan(&s));
        }
    }

    #[test]
    fn a_declaration_over_many_lines_counts_once_per_run() {
        let text = b"# 1 \"m.c\"\nint f() {\n  return 1;\n}\n# 1 \"h.h\" 1\nint h;\n\
            # 5 \"m.c\" 2\nint g;\nnamespace n {\nint i;\n}\n";
        let s = Split::new(text);
        let got = main_file_decls(&s);
        assert_eq!(got, main_file_decls_by_scan(&s));
        let names: Vec<&[u8]> = got.iter().map(|&k| s.decls[k].declares[0]).collect();
        assert_eq!(names, [&b"f"[..], b"g", b"i"]);
    }
}
