//! Passes guided by what we know about the crash and the file, tried before any blind search.
//!
//! One candidate built from the line markers ("keep only the main file") can take a
//! preprocessed TU of megabytes to a few KB in one test, where blind ddmin spends minutes on a
//! tenth of it. The crash location and the crashing function give similar one-shot cuts. Each pass
//! here therefore offers its boldest candidate first and falls back to finer ones.

use std::borrow::Cow;

use super::structure::chunk_spans;
use super::Hints;
use crate::lex::{self, Kind, Tok};
use crate::markers::{self, Marker};
use crate::plan::{Ddmin, Edit, Empty, Item, List, Plan, Unit, DEL};

/// Frontend crash at a parser location: everything after it is probably irrelevant.
/// Candidates: with the column, keep the statement at it and, of every block around it, only
/// the closing brace (`statement_cut`); cut after the line; cut after it and close the open
/// braces; cut after the enclosing top-level declaration.
pub(crate) fn crash_cut(text: &[u8], hints: &Hints) -> Box<dyn Plan> {
    let Some((file, line)) = &hints.location else {
        return Box::new(Empty);
    };
    if lex::too_big(text) {
        return Box::new(Empty);
    }
    let Some(at) = markers::locate(text, file.as_bytes(), *line) else {
        return Box::new(Empty);
    };
    let cut = (lex::line_end(text, at) + 1).min(text.len());
    let mut items = Vec::new();
    if let Some(edits) = hints.column.and_then(|c| statement_cut(text, at, c)) {
        items.push(edits);
    }
    items.push(vec![Edit::delete(cut, text.len())]);
    let prefix = &text[..cut];
    let toks = lex::lex(prefix);
    let open = lex::structure(prefix, &toks)
        .mate
        .iter()
        .zip(&toks)
        .filter(|(m, t)| **m == u32::MAX && t.is(prefix, b"{"))
        .count();
    if open > 0 {
        let mut close = vec![b'}'; open];
        close.push(b'\n');
        items.push(vec![Edit {
            start: cut,
            end: text.len(),
            with: Cow::Owned(close),
        }]);
    }
    let toks = lex::lex(text);
    let st = lex::structure(text, &toks);
    if let Some(&(_, end)) = chunk_spans(text, &toks, &st, 0)
        .iter()
        .find(|&&(a, b)| a <= at && at < b)
    {
        items.push(vec![Edit::delete(end, text.len())]);
    }
    let n = items.len();
    Box::new(List {
        items: items
            .into_iter()
            .enumerate()
            .map(|(i, edits)| Item {
                edits,
                on_success: (i + 1).min(n),
            })
            .collect(),
    })
}

/// The cut after the crash statement: the parser stood at `column` of the line starting at
/// `at`. Keeps the text up to the end of the statement there (its `;`, or the end of its
/// block) and, of each enclosing `{}` block, the text up to the end of the statement that
/// holds the inner block, then its closing brace; deletes everything after the outermost.
/// On llvm-project#200682 inside 2 MB of headers this removes `return app::run_app();` after
/// the crashing call, the one use of the headers, so the closure cut can drop them all.
/// `None` when the column lies beyond the line or nothing would be cut.
fn statement_cut(text: &[u8], at: usize, column: u32) -> Option<Vec<Edit>> {
    let pos = at + (column as usize).checked_sub(1)?;
    if pos > lex::line_end(text, at) {
        return None;
    }
    let toks = lex::lex(text);
    let st = lex::structure(text, &toks);
    let first = toks.partition_point(|t| (t.end as usize) <= pos);
    let blocks = enclosing_blocks(text, &toks, &st, first);
    let statement_end = |from: usize, limit: usize| statement_end(text, &toks, &st, from, limit);
    let ends_statement = |open: usize, close: usize| ends_statement(text, &toks, open, close);
    let mut edits = Vec::new();
    let mut from = first;
    let mut inner: Option<(usize, usize)> = None;
    for &(open, close) in &blocks {
        let end = match inner {
            Some((o, c)) if ends_statement(o, c) => toks[c].end as usize,
            _ => statement_end(from, close),
        };
        let brace = toks[close].start as usize;
        if end < brace {
            edits.push(Edit::delete(end, brace));
        }
        from = close + 1;
        inner = Some((open, close));
    }
    let end = match inner {
        Some((o, c)) if ends_statement(o, c) => toks[c].end as usize,
        _ => statement_end(from, toks.len()),
    };
    if end < text.len() {
        edits.push(Edit::delete(end, text.len()));
    }
    (!edits.is_empty()).then_some(edits)
}

/// The `{}` blocks enclosing token `first`, innermost first, as (open, close) token indices.
fn enclosing_blocks(
    text: &[u8],
    toks: &[lex::Tok],
    st: &lex::Structure,
    first: usize,
) -> Vec<(usize, usize)> {
    let mut blocks = Vec::new();
    let mut j = first;
    while j > 0 {
        j -= 1;
        match st.mate_of(j) {
            Some(m) if m < j => j = m,
            Some(m) if m >= first && toks[j].is(text, b"{") => blocks.push((j, m)),
            _ => {}
        }
    }
    blocks
}

/// The end (byte offset) of the statement from token `from` on, before token `limit`.
fn statement_end(
    text: &[u8],
    toks: &[lex::Tok],
    st: &lex::Structure,
    from: usize,
    limit: usize,
) -> usize {
    let mut k = from;
    while k < limit {
        let t = &toks[k];
        if t.is(text, b";") {
            return t.end as usize;
        }
        match st.mate_of(k) {
            Some(m) if m > k && m < limit => k = m + 1,
            Some(m) if m > k => break,
            _ => k += 1,
        }
    }
    toks.get(limit).map_or(text.len(), |t| t.start as usize)
}

/// True when the block `open..=close` ends its statement: a namespace, `extern "C"`,
/// function, `if`, `for`, `while`, `try` or `else` body followed by another declaration or
/// statement (not a lambda's, whose call goes on).
fn ends_statement(text: &[u8], toks: &[lex::Tok], open: usize, close: usize) -> bool {
    let before = |n: usize| open.checked_sub(n).map(|k| &toks[k]);
    let word = |t: Option<&lex::Tok>, w: &[&[u8]]| {
        t.is_some_and(|t| t.kind == Kind::Ident && w.contains(&t.bytes(text)))
    };
    let body = before(1).is_some_and(|t| t.is(text, b")") || t.kind == Kind::Str)
        || word(
            before(1),
            &[
                b"const",
                b"noexcept",
                b"override",
                b"final",
                b"mutable",
                b"try",
                b"else",
                b"namespace",
            ],
        )
        || word(before(2), &[b"namespace"]);
    body && toks.get(close + 1).map_or(true, |t| {
        matches!(t.kind, Kind::Ident | Kind::Directive) || t.is(text, b"}")
    })
}

/// Provenance from line markers. First candidate: keep only the main file's lines (no markers,
/// nothing from any header); second: the use-def closure of the crash site (`closure.rs`),
/// which a test that requires valid code accepts where it rejects the first. Then ddmin over
/// units that are either one top-level `#include`'s worth of header text (markers included) or
/// one top-level declaration of the main file; the first two are retried after each success.
pub(crate) fn provenance(text: &[u8], hints: &Hints) -> Box<dyn Plan> {
    let Some(main) = markers::main_file(text) else {
        return Box::new(Empty);
    };
    if lex::too_big(text) {
        return Box::new(Empty);
    }
    let (units, header_units) = units_by_file(text, main);
    let drop_headers = header_edits(&units, &header_units);
    let mut plan = Ddmin::new(units, usize::MAX);
    if !drop_headers.is_empty() {
        plan.prelude.push(drop_headers);
        if let Some(cut) = super::closure::first_cut(text, hints) {
            plan.prelude.push(cut);
        }
    }
    Box::new(plan)
}

/// ddmin over the main file's statements and members at every brace depth from 1 to 6
/// (nested spans are units too, outer ones first): the user's code is a small part of a
/// preprocessed file, and what it stops using (a `std::string` member) the closure can then
/// drop from the headers in one test. Runs while the line markers still say which lines are
/// the main file's.
pub(crate) fn main_chunks(text: &[u8]) -> Box<dyn Plan> {
    let Some(main) = MainText::of(text) else {
        return Box::new(Empty);
    };
    let mut spans: Vec<(usize, usize)> = (1..=6)
        .flat_map(|level| chunk_spans(text, &main.toks, &main.st, level))
        .filter(|&(a, b)| b > a && main.inside(a, b))
        .filter(|&(a, b)| !text[a..b].starts_with(b"#"))
        .collect();
    spans.sort_by_key(|&(a, b)| (a, std::cmp::Reverse(b)));
    spans.dedup();
    let units = spans
        .into_iter()
        .map(|(a, b)| Unit::new(a, b, DEL))
        .collect();
    Box::new(Ddmin::new(units, usize::MAX))
}

/// A preprocessed text's tokens and the byte ranges of its main file's lines: where the passes
/// that work on the user's code alone start.
pub(super) struct MainText {
    pub(super) toks: Vec<Tok>,
    pub(super) st: lex::Structure,
    ranges: Vec<(usize, usize)>,
}

impl MainText {
    /// `None` when no line marker names a main file, or the text is too big to lex.
    pub(super) fn of(text: &[u8]) -> Option<Self> {
        let main = markers::main_file(text)?;
        if lex::too_big(text) {
            return None;
        }
        let toks = lex::lex(text);
        let st = lex::structure(text, &toks);
        Some(MainText {
            ranges: main_ranges(text, main),
            toks,
            st,
        })
    }

    /// True when bytes `a..b` lie within the main file's lines.
    pub(super) fn inside(&self, a: usize, b: usize) -> bool {
        self.ranges.iter().any(|&(x, y)| x <= a && b <= y + 1)
    }
}

/// The byte ranges of the main file's lines (line markers excluded), adjacent lines merged.
fn main_ranges(text: &[u8], main: &[u8]) -> Vec<(usize, usize)> {
    let mut ranges: Vec<(usize, usize)> = Vec::new();
    for l in markers::lines(text) {
        if l.marker.is_none() && l.file == Some(main) {
            match ranges.last_mut() {
                Some(r) if r.1 >= l.start => r.1 = l.end.max(r.1),
                _ => ranges.push((l.start, l.end)),
            }
        }
    }
    ranges
}

/// Provenance's first candidate alone: every header's text deleted, the main file's kept. One
/// candidate, or none without line markers or headers.
pub(crate) fn main_only(text: &[u8]) -> Box<dyn Plan> {
    let Some(main) = markers::main_file(text) else {
        return Box::new(Empty);
    };
    let (units, header_units) = units_by_file(text, main);
    let edits = header_edits(&units, &header_units);
    if edits.is_empty() {
        return Box::new(Empty);
    }
    Box::new(List {
        items: vec![Item {
            edits,
            on_success: 1,
        }],
    })
}

fn header_edits(units: &[Unit], header_units: &[usize]) -> Vec<Edit> {
    header_units
        .iter()
        .map(|&i| Edit::delete(units[i].start as usize, units[i].end as usize))
        .collect()
}

/// The units of [`provenance`]'s ddmin, in text order: one per top-level `#include`'s worth of
/// header text (markers included) and one per top-level declaration of the main file; and the
/// indices of the header units.
fn units_by_file(text: &[u8], main: &[u8]) -> (Vec<Unit>, Vec<usize>) {
    let mut units: Vec<Unit> = Vec::new();
    let mut header_units = Vec::new();
    let mut run: Option<(usize, usize)> = None; // non-main lines
    let mut seg: Option<(usize, usize)> = None; // main lines
    let mut prev_main = false;
    let flush_seg = |seg: &mut Option<(usize, usize)>, units: &mut Vec<Unit>| {
        if let Some((a, b)) = seg.take() {
            let body = &text[a..b];
            let toks = lex::lex(body);
            let st = lex::structure(body, &toks);
            units.extend(
                chunk_spans(body, &toks, &st, 0)
                    .into_iter()
                    .map(|(x, y)| Unit::new(a + x, a + y, DEL)),
            );
        }
    };
    let flush_run =
        |run: &mut Option<(usize, usize)>, units: &mut Vec<Unit>, header_units: &mut Vec<usize>| {
            if let Some((a, b)) = run.take() {
                header_units.push(units.len());
                units.push(Unit::new(a, b, DEL));
            }
        };
    for (k, l) in markers::lines(text).enumerate() {
        // The first marker names the main file; keep it so later plans agree on the main file.
        if k == 0 && l.marker.is_some_and(|m| m.file == Some(main)) {
            continue;
        }
        let is_main = l.marker.is_none() && l.file.is_some_and(|f| f == main);
        if is_main {
            flush_run(&mut run, &mut units, &mut header_units);
            seg = Some((seg.map_or(l.start, |s| s.0), l.end));
        } else {
            flush_seg(&mut seg, &mut units);
            let new_include = matches!(l.marker, Some(Marker { enter: true, .. })) && prev_main;
            if new_include {
                flush_run(&mut run, &mut units, &mut header_units);
            }
            run = Some((run.map_or(l.start, |r| r.0), l.end));
        }
        prev_main = match l.marker {
            Some(m) => m.file.map_or(prev_main, |f| f == main),
            None => is_main,
        };
    }
    flush_run(&mut run, &mut units, &mut header_units);
    flush_seg(&mut seg, &mut units);
    (units, header_units)
}

/// The source-level name of the crashing function from a hint such as
/// `@_ZN7GH594461fEP1XIiE`, `_Z23complex_stack_operationiPf` or `GH59446::f(int)`.
pub(crate) fn crash_name(hint: &str) -> Option<&str> {
    let h = hint
        .trim()
        .trim_start_matches('@')
        .trim_matches(|c| c == '\'' || c == '"');
    if let Some(rest) = h.strip_prefix("_Z") {
        let (nested, mut rest) = match rest.strip_prefix('N') {
            Some(r) => (true, r),
            None => (false, rest),
        };
        let mut last = None;
        // Skip cv-qualifiers and substitutions before the names of a nested name.
        rest = rest.trim_start_matches(['K', 'V', 'r']);
        while let Some(d) = rest.find(|c: char| !c.is_ascii_digit()).filter(|&d| d > 0) {
            let len: usize = rest[..d].parse().ok()?;
            let name = rest.get(d..d + len)?;
            last = Some(name);
            rest = &rest[d + len..];
            if !nested {
                break;
            }
            if rest.starts_with('I') || rest.starts_with('E') {
                break;
            }
        }
        return last;
    }
    let h = h.split('(').next()?;
    let h = h.split('<').next()?;
    let name = h.rsplit("::").next()?.trim();
    (!name.is_empty()).then_some(name)
}

/// Backend crash in one function: every other function body is a first candidate. All other
/// bodies become `;` (declarations), then `{}`, then halves, quarters and eighths of them
/// become `{}` (largest bodies first). No one-at-a-time tail: removing bodies singly cost one
/// test each, a few tests per percent of a big TU, and the main phase's
/// declaration ddmin does that job better.
pub(crate) fn function_focus(text: &[u8], hints: &Hints) -> Box<dyn Plan> {
    let Some(name) = hints.function.as_deref().and_then(crash_name) else {
        return Box::new(Empty);
    };
    let bodies = function_bodies(text, name.as_bytes());
    let found = bodies.iter().any(|b| b.2);
    if !found {
        return Box::new(Empty);
    }
    let others: Vec<(usize, usize)> = bodies
        .iter()
        .filter(|b| !b.2 && b.1 - b.0 > 2)
        .map(|b| (b.0, b.1))
        .collect();
    let all = |with: &'static [u8]| {
        others
            .iter()
            .map(|&(a, b)| Edit::replace(a, b, with))
            .collect::<Vec<_>>()
    };
    let mut items = vec![
        Item {
            edits: all(b";"),
            on_success: 2,
        },
        Item {
            edits: all(b"{}"),
            on_success: 2,
        },
    ];
    let mut by_size = others.clone();
    by_size.sort_by(|x, y| (y.1 - y.0).cmp(&(x.1 - x.0)).then(x.0.cmp(&y.0)));
    for parts in [2usize, 4, 8] {
        if by_size.len() < parts {
            break;
        }
        let per = by_size.len().div_ceil(parts);
        for chunk in by_size.chunks(per) {
            let mut edits: Vec<Edit> = chunk
                .iter()
                .map(|&(a, b)| Edit::replace(a, b, b"{}"))
                .collect();
            edits.sort_by_key(|e| e.start);
            let at = items.len();
            items.push(Item {
                edits,
                on_success: at,
            });
        }
    }
    Box::new(List { items })
}

/// Byte spans of the function bodies (outermost only) with whether the function is the one
/// named `name`: a `{}` after a parameter list's `)` (and qualifiers), whose name before the
/// `(` is no keyword.
fn function_bodies(text: &[u8], name: &[u8]) -> Vec<(usize, usize, bool)> {
    let toks = lex::lex(text);
    let st = lex::structure(text, &toks);
    let mut bodies = Vec::new();
    let mut skip_until = 0usize;
    for (i, t) in toks.iter().enumerate() {
        if i < skip_until || !t.is(text, b"{") || i == 0 {
            continue;
        }
        let Some(j) = st.mate_of(i).filter(|&j| j > i) else {
            continue;
        };
        // A body follows the parameter list, possibly after qualifiers or a ctor-initialiser;
        // find the `)` that closes the declarator.
        let mut k = i - 1;
        while k > 0
            && toks[k].kind == Kind::Ident
            && matches!(
                toks[k].bytes(text),
                b"const" | b"override" | b"final" | b"noexcept" | b"volatile" | b"mutable"
            )
        {
            k -= 1;
        }
        if !toks[k].is(text, b")") {
            continue;
        }
        let Some(open) = st.mate_of(k).filter(|&o| o > 0 && o < k) else {
            continue;
        };
        let fname = toks[open - 1];
        if fname.kind != Kind::Ident
            || matches!(
                fname.bytes(text),
                b"if" | b"for" | b"while" | b"switch" | b"catch" | b"return" | b"sizeof"
            )
        {
            continue;
        }
        bodies.push((
            t.start as usize,
            toks[j].end as usize,
            fname.bytes(text) == name,
        ));
        skip_until = j + 1;
    }
    bodies
}

/// Line markers and blank lines: both at once, then the markers alone, then [`main_only`]'s
/// cut (the headers' text and every marker but the first), then the blank lines alone; then
/// ddmin over the markers that place nothing (see [`redundant_markers`]).
///
/// `main_only` runs once, first, and the other passes keep every marker before code (it
/// places the hints' locations), so without the last two stages a marker made redundant by
/// later cuts would stay, and a second reduction of the result would take it.
pub(crate) fn markers(text: &[u8]) -> Box<dyn Plan> {
    let mut marks = Vec::new();
    let mut blanks = Vec::new();
    let mut both = Vec::new();
    for l in markers::lines(text) {
        let body = &text[l.start..l.end];
        let edit = Edit::delete(l.start, l.end);
        if l.marker.is_some() {
            marks.push(edit.clone());
            both.push(edit);
        } else if body.iter().all(u8::is_ascii_whitespace) {
            blanks.push(edit.clone());
            both.push(edit);
        }
    }
    let headers = markers::main_file(text).map_or_else(Vec::new, |main| {
        let (units, header_units) = units_by_file(text, main);
        header_edits(&units, &header_units)
    });
    let mut plan = Ddmin::new(redundant_markers(text), usize::MAX);
    // The four cuts are a first stage: retrying them after every redundant marker is
    // deleted would cost tests they fail again.
    plan.prelude = vec![both, marks, headers, blanks];
    plan.retry_prelude = false;
    Box::new(plan)
}

/// The marker lines that place no line: each is followed by another marker of the same file,
/// with nothing but blank lines between. Deleting them moves no location, and the main file
/// stays the file [`markers::main_file`] names.
fn redundant_markers(text: &[u8]) -> Vec<Unit> {
    let mut units = Vec::new();
    let mut pending: Option<(usize, usize, Option<&[u8]>)> = None;
    for l in markers::lines(text) {
        match l.marker {
            Some(m) => {
                if let Some((a, b, _)) = pending.filter(|p| p.2 == m.file) {
                    units.push(Unit::new(a, b, DEL));
                }
                pending = Some((l.start, l.end, m.file));
            }
            None if text[l.start..l.end].iter().all(u8::is_ascii_whitespace) => {}
            None => pending = None,
        }
    }
    units
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_marker_right_before_another_of_its_file_is_redundant() {
        let text = b"# 1 \"a.c\"\n# 2 \"a.c\"\r\n# 1 \"h.h\" 1\nint a;\n# 3 \"a.c\" 2\n\n# 5 \"a.c\"\nint b;\n";
        let spans: Vec<&[u8]> = redundant_markers(text)
            .iter()
            .map(|u| &text[u.start as usize..u.end as usize])
            .collect();
        assert_eq!(spans, [&b"# 1 \"a.c\"\n"[..], b"# 3 \"a.c\" 2\n"]);
    }

    #[test]
    fn crash_names() {
        assert_eq!(
            crash_name("@_Z23complex_stack_operationiPf"),
            Some("complex_stack_operation")
        );
        assert_eq!(crash_name("_ZN7GH594461fEP1XIiE"), Some("f"));
        assert_eq!(crash_name("_ZNK1A3getEv"), Some("get"));
        assert_eq!(crash_name("'GH59446::f'"), Some("f"));
        assert_eq!(crash_name("ns::g<int>(int)"), Some("g"));
        assert_eq!(crash_name("_Z999x"), None);
    }

    fn cut(text: &str, line: u32, column: u32) -> String {
        let at = markers::locate(text.as_bytes(), b"m.cpp", line).unwrap();
        let edits = statement_cut(text.as_bytes(), at, column).unwrap();
        String::from_utf8(crate::plan::apply(text.as_bytes(), &edits)).unwrap()
    }

    #[test]
    fn the_statement_cut_keeps_the_crash_statement_and_the_closing_braces() {
        // llvm-project#200682 in big-gh200682: clang stopped at the `)` of `f<int>(42)`.
        let text = "namespace N {\nint h();\ninline int g() { f<int>(42); return h(); }\nint k;\n}\nint z;\n";
        assert_eq!(
            cut(text, 3, 26),
            "namespace N {\nint h();\ninline int g() { f<int>(42);}}"
        );
        // Inside the parentheses of the statement, the statement still ends at its `;`; a
        // lambda's block keeps its closing brace, and the call around it its `);`.
        let text = "void g() {\n  run([] { a(1, 2); b(); });\n  c();\n}\nint z;\n";
        assert_eq!(cut(text, 2, 15), "void g() {\n  run([] { a(1, 2);});}");
        // At namespace scope: the declaration, then nothing.
        assert_eq!(
            cut("int a;\nint b = f(1);\nint c;\n", 2, 11),
            "int a;\nint b = f(1);"
        );
    }

    #[test]
    fn the_statement_cut_needs_a_column_on_the_line_and_something_to_cut() {
        let t = b"int a;\nint b;\n";
        assert!(statement_cut(t, 7, 40).is_none());
        assert!(statement_cut(t, 7, 0).is_none());
        assert!(statement_cut(b"int a;", 0, 1).is_none());
    }
}
