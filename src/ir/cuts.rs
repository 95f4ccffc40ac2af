//! Textual cuts on the IR llvm-reduce leaves: units for ddmin, and the text a kept set gives.
//!
//! Why this exists: llvm-reduce works on the module, not on its text, and some of its
//! reductions cannot be used on every crash: its `di-metadata` pass leaves debug info the
//! verifier rejects (opt then strips all of it, and a crash that needs debug info is lost),
//! so the stage skips it when the IR has debug info. What it leaves is cut here,
//! each step kept only when the signature oracle still sees the case's crash:
//! - [`lines`]: whole lines (an unused declaration, metadata nothing refers to);
//! - [`fields`]: `key: value` fields of debug-info nodes (`!DISubprogram(…)`), most of which
//!   are optional, so a node shrinks to what the crash needs;
//! - [`tokens`]: optional words (`noundef`, `, align 4`, `, !tbaa !7`, ` #0`);
//! - [`strings`]: the contents of debug-info strings (the case's directory, clang's
//!   version), emptied when they are not needed;
//! - [`attribute_entries`]: the entries of attribute groups (`uwtable`,
//!   `"target-features"="…"`), which llvm-reduce's own attribute pass leaves when it stops
//!   early (a deadline, or a flaky crash that makes it give up); a group left empty goes
//!   with its references ([`without_empty_groups`]), as LLVM rejects an empty one;
//! - [`inline_node`]: a debug-info node used once written where it is used
//!   (`!DILocation(line: 3, scope: !4)` in the `#dbg_declare`), one line less each;
//! - [`tidy`]: blank-line runs left by the cuts, folded.
//!
//! Pure: text in, text out; the stage runs the candidates.

use std::sync::LazyLock;

use regex::Regex;

/// A text split into units: the kept units and the text between them rebuild a candidate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Units {
    /// Byte ranges of the units in the text, in order, not overlapping.
    pub spans: Vec<(usize, usize)>,
    /// The units are fields of `(…)` lists ([`fields`]): a list whose first field went
    /// loses the separator left after it (`(, b` → `(b`).
    pub fields: bool,
}

impl Units {
    pub fn len(&self) -> usize {
        self.spans.len()
    }

    pub fn is_empty(&self) -> bool {
        self.spans.is_empty()
    }

    /// The text with only the units in `kept` (sorted indices) left in it.
    pub fn keep(&self, text: &str, kept: &[usize]) -> String {
        let mut out = String::with_capacity(text.len());
        let mut at = 0;
        for (i, &(a, b)) in self.spans.iter().enumerate() {
            out.push_str(&text[at..a]);
            if kept.binary_search(&i).is_ok() {
                out.push_str(&text[a..b]);
            }
            at = b;
        }
        out.push_str(&text[at..]);
        if self.fields {
            out = out.replace("(, ", "(");
        }
        // An attribute group left empty does not parse: it goes with its references.
        without_empty_groups(&out).unwrap_or(out)
    }
}

/// Every non-empty line (its newline included) except a RUN line.
pub fn lines(text: &str) -> Units {
    let mut spans = Vec::new();
    let mut at = 0;
    for l in text.split_inclusive('\n') {
        let t = l.trim();
        if !t.is_empty() && !t.starts_with("; RUN:") {
            spans.push((at, at + l.len()));
        }
        at += l.len();
    }
    Units {
        spans,
        fields: false,
    }
}

static DI_NODE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?m)^![0-9A-Za-z._]+ = (?:distinct )?!DI[A-Za-z]+\(").expect("valid regex")
});

/// The `key: value` fields of the debug-info nodes on their own lines, each with the `, `
/// that separates it from the field before it (the first field alone: see [`Units::keep`]).
pub fn fields(text: &str) -> Units {
    let mut spans = Vec::new();
    for m in DI_NODE.find_iter(text) {
        let open = m.end();
        let Some(close) = matching_paren(text, open - 1) else {
            continue;
        };
        let parts = split_top(&text[open..close]);
        for (k, &(a, b)) in parts.iter().enumerate() {
            if k == 0 {
                spans.push((open + a, open + b));
            } else {
                // ", key: v": the separator before it and the field.
                spans.push((open + parts[k - 1].1, open + b));
            }
        }
    }
    Units {
        spans,
        fields: true,
    }
}

/// Walks `text` from `from` outside string literals, keeping the bracket depth: `visit(i, c,
/// depth)` sees each byte and the depth after it (an opening bracket counts itself, a closing
/// one is already out) and returns true to stop there. The index it stopped at, if any.
/// The one bracket scanner of the cuts ([`matching_paren`], [`split_top`]).
fn scan(text: &str, from: usize, mut visit: impl FnMut(usize, u8, i32) -> bool) -> Option<usize> {
    let b = text.as_bytes();
    let mut depth = 0i32;
    let mut in_str = false;
    let mut i = from;
    while i < b.len() {
        let c = b[i];
        if in_str {
            match c {
                b'\\' => i += 1,
                b'"' => in_str = false,
                _ => {}
            }
        } else {
            match c {
                b'"' => in_str = true,
                b'(' | b'{' | b'[' | b'<' => depth += 1,
                b')' | b'}' | b']' | b'>' => depth -= 1,
                _ => {}
            }
            if visit(i, c, depth) {
                return Some(i);
            }
        }
        i += 1;
    }
    None
}

/// The byte index of the `)` matching the `(` at `open`, brackets and strings respected;
/// `None` past the end of the line or when another bracket closes it.
fn matching_paren(text: &str, open: usize) -> Option<usize> {
    let at = scan(text, open, |_, c, depth| {
        c == b'\n' || (matches!(c, b')' | b'}' | b']' | b'>') && depth == 0)
    })?;
    (text.as_bytes()[at] == b')').then_some(at)
}

/// The top-level comma-separated parts of `s` (byte ranges, whitespace trimmed).
fn split_top(s: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let push = |a: usize, e: usize, out: &mut Vec<(usize, usize)>| {
        let part = &s[a..e];
        let lead = part.len() - part.trim_start().len();
        let trail = part.len() - part.trim_end().len();
        if lead + trail < part.len() {
            out.push((a + lead, e - trail));
        }
    };
    let mut start = 0;
    scan(s, 0, |i, c, depth| {
        if c == b',' && depth == 0 {
            push(start, i, &mut out);
            start = i + 1;
        }
        false
    });
    push(start, s.len(), &mut out);
    out
}

static TOKEN: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?x)
        ,\ align\ \d+
      | ,\ ![a-z_.]+\ !\d+
      | \ \#\d+\b
      | \ (?:noundef|dso_local|local_unnamed_addr|unnamed_addr|nonnull|noalias|nocapture
           |writeonly|readonly|readnone|immarg|nsw|nuw|inbounds|nneg|disjoint|exact|tail
           |nounwind|uwtable|mustprogress|norecurse|willreturn|nofree|nosync|signext|zeroext
           |noinline|optnone|internal|dsolocal)\b
      | \ vscale_range\(\d+,\d+\)
      | \ memory\([a-z:, ]+\)
    ",
    )
    .expect("valid regex")
});

/// Optional words outside comments, strings and metadata definitions (see the module doc).
pub fn tokens(text: &str) -> Units {
    let mut spans = Vec::new();
    let mut at = 0;
    for l in text.split_inclusive('\n') {
        let t = l.trim_start();
        let skip = [";", "!", "source_filename", "attributes"];
        if !skip.iter().any(|p| t.starts_with(p)) {
            // Stop at a comment or a string on the line.
            let end = l.find([';', '"']).unwrap_or(l.len());
            for m in TOKEN.find_iter(&l[..end]) {
                spans.push((at + m.start(), at + m.end()));
            }
        }
        at += l.len();
    }
    Units {
        spans,
        fields: false,
    }
}

static STRING: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r#""([^"\\]|\\.)+""#).expect("valid regex"));

/// The contents of the strings in debug-info nodes (file names, directories, producers):
/// a dropped one becomes `""`, and the case's paths leave the test when they can.
pub fn strings(text: &str) -> Units {
    let mut spans = Vec::new();
    for m in DI_NODE.find_iter(text) {
        let line_end = text[m.end()..]
            .find('\n')
            .map_or(text.len(), |i| m.end() + i);
        for s in STRING.find_iter(&text[m.end()..line_end]) {
            spans.push((m.end() + s.start() + 1, m.end() + s.end() - 1));
        }
    }
    Units {
        spans,
        fields: false,
    }
}

static GROUP: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?m)^attributes #\d+ = \{").expect("valid regex"));

/// One attribute: a `"key"` or `"key"="value"` string attribute, or a word with an optional
/// `(…)` argument (`uwtable(sync)`, `memory(argmem: read)`).
static ENTRY: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#""(?:[^"\\\n]|\\.)*"(?:="(?:[^"\\\n]|\\.)*")?|[\w.-]+(?:\([^)\n]*\))?"#)
        .expect("valid regex")
});

/// The entries of the attribute groups (`attributes #N = { … }`), each with the blank before
/// it: a word, a word with a `(…)` argument, or a `"key"` / `"key"="value"` string attribute.
pub fn attribute_entries(text: &str) -> Units {
    let mut spans = Vec::new();
    for m in GROUP.find_iter(text) {
        let line_end = text[m.end()..]
            .find('\n')
            .map_or(text.len(), |i| m.end() + i);
        let mut at = m.end();
        for e in ENTRY.find_iter(&text[m.end()..line_end]) {
            let end = m.end() + e.end();
            spans.push((at, end));
            at = end;
        }
    }
    Units {
        spans,
        fields: false,
    }
}

static EMPTY_GROUP: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?m)^attributes #(\d+) = \{ *\}[ \t]*\n").expect("valid regex"));

/// The text without its empty attribute groups and the ` #N` that refer to them; `None`
/// when it has none.
fn without_empty_groups(text: &str) -> Option<String> {
    let ids: Vec<String> = EMPTY_GROUP
        .captures_iter(text)
        .map(|c| c[1].to_owned())
        .collect();
    if ids.is_empty() {
        return None;
    }
    let mut out = EMPTY_GROUP.replace_all(text, "").into_owned();
    for id in ids {
        let refs = Regex::new(&format!(r" #{id}\b")).expect("valid regex");
        out = refs.replace_all(&out, "").into_owned();
    }
    Some(out)
}

/// The text without runs of blank lines (one blank line is left between parts) and with one
/// newline at its end.
pub fn tidy(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut blank = false;
    for l in text.lines() {
        if l.trim().is_empty() {
            blank = !out.is_empty();
            continue;
        }
        if blank {
            out.push('\n');
            blank = false;
        }
        out.push_str(l.trim_end());
        out.push('\n');
    }
    out
}

static DEF: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?m)^!(\d+) = (!DI[A-Za-z]+\(.*\))[ \t]*\n").expect("valid regex")
});

/// The non-distinct debug-info nodes (`!N = !DI…(…)`) referred to exactly once, not from
/// named metadata: the candidates of [`inline_node`], last first.
pub fn inlinable(text: &str) -> Vec<String> {
    let mut out: Vec<String> = DEF
        .captures_iter(text)
        .map(|c| c[1].to_owned())
        .filter(|n| {
            let uses = refs(text, n);
            uses.len() == 1 && {
                let line_start = text[..uses[0]].rfind('\n').map_or(0, |i| i + 1);
                !text[line_start..].starts_with("!llvm.") && !text[line_start..].starts_with("!\"")
            }
        })
        .collect();
    out.reverse();
    out
}

/// Byte offsets of the references to `!n` (not its definition).
fn refs(text: &str, n: &str) -> Vec<usize> {
    let pat = format!("!{n}");
    let b = text.as_bytes();
    text.match_indices(&pat)
        .map(|(i, _)| i)
        .filter(|&i| {
            let after = i + pat.len();
            let ends = after >= b.len() || !b[after].is_ascii_alphanumeric();
            let line_start = text[..i].rfind('\n').map_or(0, |j| j + 1);
            let is_def = i == line_start && text[after..].starts_with(" = ");
            ends && !is_def
        })
        .collect()
}

/// The text with node `!n` written at its one use and its definition line gone; `None` when
/// it is not such a node.
pub fn inline_node(text: &str, n: &str) -> Option<String> {
    let c = DEF.captures_iter(text).find(|c| &c[1] == n)?;
    let whole = c.get(0)?;
    let body = c[2].to_owned();
    let uses = refs(text, n);
    if uses.len() != 1 {
        return None;
    }
    let at = uses[0];
    let mut out = String::with_capacity(text.len());
    let (x, y) = (whole.start(), whole.end());
    let len = n.len() + 1;
    if at < x {
        out.push_str(&text[..at]);
        out.push_str(&body);
        out.push_str(&text[at + len..x]);
        out.push_str(&text[y..]);
    } else {
        out.push_str(&text[..x]);
        out.push_str(&text[y..at]);
        out.push_str(&body);
        out.push_str(&text[at + len..]);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const IR: &str = "; RUN: opt -passes=x < %s\n\
define void @f(ptr noundef %p) #0 {\n\
  %1 = alloca ptr, align 8\n\
    #dbg_declare(ptr %1, !3, !DIExpression(), !5)\n\
  ret void\n\
}\n\
\n\
attributes #0 = { nounwind }\n\
!llvm.dbg.cu = !{!0}\n\
!0 = distinct !DICompileUnit(language: DW_LANG_C11, file: !1, producer: \"a, b\", emissionKind: FullDebug)\n\
!1 = !DIFile(filename: \"a.c\", directory: \"\")\n\
!3 = !DILocalVariable(name: \"x\", scope: !4, type: !DIBasicType(name: \"int\", size: 32))\n\
!4 = distinct !DISubprogram(name: \"f\", unit: !0)\n\
!5 = !DILocation(line: 3, scope: !4)\n";

    #[test]
    fn lines_are_the_non_empty_ones_without_the_run_line() {
        let u = lines(IR);
        assert_eq!(u.len(), 12);
        let kept: Vec<usize> = (0..u.len()).filter(|&i| i != 5).collect();
        let t = u.keep(IR, &kept);
        assert!(!t.contains("attributes #0"));
        assert!(t.starts_with("; RUN:"));
        assert_eq!(u.keep(IR, &(0..u.len()).collect::<Vec<_>>()), IR);
    }

    #[test]
    fn fields_split_at_top_level_commas_only() {
        let u = fields(IR);
        // CU 4 (the string's comma is not a split), file 2, variable 3, subprogram 2,
        // location 2.
        assert_eq!(u.len(), 13);
        let all: Vec<usize> = (0..u.len()).collect();
        assert_eq!(u.keep(IR, &all), IR);
        // Drop the CU's producer (index 2) and the variable's type (index 8).
        let kept: Vec<usize> = all.iter().copied().filter(|&i| i != 2 && i != 8).collect();
        let t = u.keep(IR, &kept);
        assert!(t.contains(
            "!0 = distinct !DICompileUnit(language: DW_LANG_C11, file: !1, emissionKind: FullDebug)"
        ));
        assert!(t.contains("!3 = !DILocalVariable(name: \"x\", scope: !4)\n"));
        // Dropping the first field takes the separator after it.
        let kept: Vec<usize> = all.iter().copied().filter(|&i| i != 11).collect();
        assert!(u.keep(IR, &kept).contains("!5 = !DILocation(scope: !4)\n"));
    }

    #[test]
    fn tokens_skip_comments_strings_and_metadata() {
        let u = tokens(IR);
        let words: Vec<&str> = u.spans.iter().map(|&(a, b)| &IR[a..b]).collect();
        assert_eq!(words, [" noundef", " #0", ", align 8"]);
        let t = u.keep(IR, &[1]);
        assert!(t.contains("define void @f(ptr %p) #0 {"));
        assert!(t.contains("%1 = alloca ptr\n"));
    }

    #[test]
    fn strings_of_debug_info_nodes_can_be_emptied_and_blank_runs_go() {
        let u = strings(IR);
        let words: Vec<&str> = u.spans.iter().map(|&(a, b)| &IR[a..b]).collect();
        assert_eq!(words, ["a, b", "a.c", "x", "int", "f"]);
        let t = u.keep(IR, &[1, 2, 3, 4]);
        assert!(t.contains("producer: \"\", emissionKind"));
        assert_eq!(tidy("\n\na\n\n\n\nb  \n\n"), "a\n\nb\n");
    }

    #[test]
    fn attribute_entries_are_words_calls_and_string_pairs() {
        let ir = "define void @f() #0 {\n  ret void\n}\n\
                  attributes #0 = { nounwind uwtable(sync) \"a b\"=\"x=\\\"y\" \"no-value\" \"target-cpu\"=\"x86-64\" }\n";
        let u = attribute_entries(ir);
        let words: Vec<&str> = u.spans.iter().map(|&(a, b)| &ir[a..b]).collect();
        assert_eq!(
            words,
            [
                " nounwind",
                " uwtable(sync)",
                " \"a b\"=\"x=\\\"y\"",
                " \"no-value\"",
                " \"target-cpu\"=\"x86-64\""
            ]
        );
        let t = u.keep(ir, &[3]);
        assert!(t.ends_with("attributes #0 = { \"no-value\" }\n"), "{t}");
        assert_eq!(u.keep(ir, &[]), "define void @f() {\n  ret void\n}\n");
        assert_eq!(without_empty_groups(ir), None);
    }

    #[test]
    fn single_use_nodes_are_inlined_at_their_use() {
        assert_eq!(inlinable(IR), ["5", "3", "1"]);
        let t = inline_node(IR, "5").unwrap();
        assert!(t.contains("!DIExpression(), !DILocation(line: 3, scope: !4))\n"));
        assert!(!t.contains("!5 ="));
        let t = inline_node(&t, "1").unwrap();
        assert!(t.contains("file: !DIFile(filename: \"a.c\", directory: \"\"), producer"));
        assert_eq!(inline_node(&t, "4"), None, "distinct nodes stay");
        assert_eq!(lines(&t).len(), 10);
    }
}
