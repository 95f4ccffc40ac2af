//! Line markers: which file every line of a preprocessed translation unit came from.
//!
//! The single most valuable fact for reducing preprocessed text is provenance: text
//! that came from system headers is rarely needed, and clang reports crash locations
//! (`file:line:col: current parser token …`) as seen *through* the markers. Both need the same
//! walk over `# N "file" flags` lines (and `#line N "file"`), which lives here. Pure text
//! processing, linear in the input.

/// A parsed line marker.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Marker<'t> {
    /// Line number of the line after the marker.
    pub line: u32,
    /// The file name between the quotes, escapes left as written.
    pub file: Option<&'t [u8]>,
    /// `1` enter an include, `2` return to a file; bit 3 (system header) is `system`.
    pub enter: bool,
    pub system: bool,
}

/// Parses one line (without its newline) as a line marker.
pub(crate) fn parse_marker(line: &[u8]) -> Option<Marker<'_>> {
    let mut rest = line.strip_prefix(b"#")?;
    rest = trim_start(rest);
    if let Some(r) = rest.strip_prefix(b"line") {
        rest = trim_start(r);
    }
    let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
    if digits == 0 || digits > 9 {
        return None;
    }
    let num: u32 = std::str::from_utf8(&rest[..digits]).ok()?.parse().ok()?;
    rest = &rest[digits..];
    if rest.first().is_some_and(|b| !b.is_ascii_whitespace()) {
        return None;
    }
    rest = trim_start(rest);
    let mut file = None;
    if let Some(r) = rest.strip_prefix(b"\"") {
        let mut i = 0;
        while i < r.len() && r[i] != b'"' {
            i += if r[i] == b'\\' { 2 } else { 1 };
        }
        let i = i.min(r.len());
        file = Some(&r[..i]);
        rest = r.get(i + 1..).unwrap_or(b"");
    }
    let mut m = Marker {
        line: num,
        file,
        enter: false,
        system: false,
    };
    for flag in rest.split(|b| b.is_ascii_whitespace()) {
        match flag {
            b"1" => m.enter = true,
            b"3" => m.system = true,
            _ => {}
        }
    }
    Some(m)
}

fn trim_start(s: &[u8]) -> &[u8] {
    let k = s.iter().take_while(|b| **b == b' ' || **b == b'\t').count();
    &s[k..]
}

/// A physical line: `text[start..end]`, `end` past the newline if there is one (any line end
/// counts: see `newline.rs`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Line<'t> {
    pub start: usize,
    pub end: usize,
    pub marker: Option<Marker<'t>>,
    /// The file this line belongs to (for a marker: the file it switches to).
    pub file: Option<&'t [u8]>,
    /// Its line number in that file (meaningless for markers).
    pub number: u32,
}

/// Iterates the physical lines with their presumed file and line number.
pub(crate) fn lines(text: &[u8]) -> impl Iterator<Item = Line<'_>> + '_ {
    let mut at = 0;
    let mut file: Option<&[u8]> = None;
    let mut number = 1u32;
    std::iter::from_fn(move || {
        if at >= text.len() {
            return None;
        }
        let start = at;
        let nl = crate::newline::next_end(text, at).unwrap_or(text.len());
        let end = (nl + 1).min(text.len());
        at = end;
        let body = &text[start..nl];
        let marker = if body.first() == Some(&b'#') {
            parse_marker(body)
        } else {
            None
        };
        let line = match marker {
            Some(m) => {
                if m.file.is_some() {
                    file = m.file;
                }
                number = m.line;
                Line {
                    start,
                    end,
                    marker,
                    file,
                    number,
                }
            }
            None => {
                let l = Line {
                    start,
                    end,
                    marker,
                    file,
                    number,
                };
                number = number.wrapping_add(1);
                l
            }
        };
        Some(line)
    })
}

/// The main file: the last top-level file started (a `# 1 "name"` marker with no flags)
/// before the first real include. Usually that is the first marker; but `-E` of a file that
/// was itself preprocessed starts with the carrier (`# 1 "x.hipi"`) and only then, after the
/// built-in preamble, the original main file (`# 1 "x.hip"`), whose text is what matters.
pub(crate) fn main_file(text: &[u8]) -> Option<&[u8]> {
    let mut main = None;
    for l in lines(text).take(4096) {
        let Some(m) = l.marker else { continue };
        let Some(name) = m.file else { continue };
        let builtin = name.starts_with(b"<");
        if m.enter && !builtin {
            break;
        }
        let body = &text[l.start..l.end];
        let after_name = body
            .iter()
            .rposition(|b| *b == b'"')
            .map_or(&b""[..], |q| &body[q + 1..]);
        let flagless = after_name.iter().all(|b| b.is_ascii_whitespace());
        if flagless && m.line == 1 && !builtin {
            main = Some(name);
        }
        if main.is_none() && !builtin {
            main = Some(name);
        }
    }
    main.or_else(|| {
        lines(text)
            .take(64)
            .find_map(|l| l.marker.and_then(|m| m.file))
    })
}

#[cfg(test)]
mod main_file_tests {
    use super::main_file;

    #[test]
    fn the_main_file_of_plain_and_re_preprocessed_output() {
        let plain = b"# 1 \"x.cpp\"\n# 1 \"<built-in>\" 1\n# 1 \"<built-in>\" 3\n# 1 \"x.cpp\" 2\n# 1 \"/usr/include/vector\" 1 3\nint v;\n# 3 \"x.cpp\" 2\nint x;\n";
        assert_eq!(main_file(plain), Some(&b"x.cpp"[..]));
        let again = b"# 1 \"x.hipi\"\n# 1 \"<built-in>\" 1\n# 1 \"x.hipi\" 2\n# 1 \"x.hip\"\n# 1 \"<built-in>\" 1\n# 1 \"x.hip\" 2\n# 1 \"/usr/include/vector\" 1 3\nint v;\n# 3 \"x.hip\" 2\nint x;\n";
        assert_eq!(main_file(again), Some(&b"x.hip"[..]));
    }
}

/// Same file as printed in a diagnostic? Exact, or one is a `/`-suffix of the other.
pub(crate) fn same_file(a: &[u8], b: &[u8]) -> bool {
    let suffix = |long: &[u8], short: &[u8]| {
        long.len() > short.len()
            && long.ends_with(short)
            && long[long.len() - short.len() - 1] == b'/'
    };
    !a.is_empty() && !b.is_empty() && (a == b || suffix(a, b) || suffix(b, a))
}

/// Byte offset of the start of `file:line` as clang would report it, following the markers.
/// Without any marker in the text the physical line number is used.
pub(crate) fn locate(text: &[u8], file: &[u8], line: u32) -> Option<usize> {
    let mut any_marker = false;
    for l in lines(text) {
        if l.marker.is_some() {
            any_marker = true;
            continue;
        }
        if l.number == line && l.file.is_some_and(|f| same_file(f, file)) {
            return Some(l.start);
        }
    }
    if any_marker {
        return None;
    }
    lines(text)
        .nth(line.checked_sub(1)? as usize)
        .map(|l| l.start)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_markers() {
        let m = parse_marker(b"# 12 \"/usr/include/x.h\" 1 3 4").unwrap();
        assert_eq!(
            (m.line, m.file, m.enter, m.system),
            (12, Some(&b"/usr/include/x.h"[..]), true, true)
        );
        let m = parse_marker(b"#line 7 \"a\\\"b.c\"").unwrap();
        assert_eq!((m.line, m.file), (7, Some(&b"a\\\"b.c"[..])));
        assert!(parse_marker(b"#pragma once").is_none());
        assert!(parse_marker(b"# 12x").is_none());
        assert!(parse_marker(b"# 12 \"unterminated").is_some());
    }

    #[test]
    fn locates_through_markers() {
        let t = b"# 1 \"m.c\"\n# 1 \"h.h\" 1 3\nint h;\n# 2 \"m.c\" 2\nint a;\nint b;\n";
        assert_eq!(main_file(t), Some(&b"m.c"[..]));
        let at = locate(t, b"m.c", 3).unwrap();
        assert_eq!(&t[at..at + 6], b"int b;");
        assert_eq!(
            locate(t, b"dir/m.c", 2).map(|a| &t[a..a + 6]),
            Some(&b"int a;"[..])
        );
        assert_eq!(
            locate(t, b"h.h", 1).map(|a| &t[a..a + 6]),
            Some(&b"int h;"[..])
        );
        assert_eq!(locate(b"a\nb\n", b"x.c", 2), Some(2));
    }

    #[test]
    fn lone_carriage_returns_end_marker_lines() {
        let t = b"# 1 \"m.c\"\r# 1 \"h.h\" 1 3\rint h;\r# 2 \"m.c\" 2\rint a;\rint b;\r";
        assert_eq!(main_file(t), Some(&b"m.c"[..]));
        let at = locate(t, b"m.c", 3).unwrap();
        assert_eq!(&t[at..at + 6], b"int b;");
    }
}
