//! Line ends as a compiler reads them: `\n`, `\r\n`, and a lone `\r` (old Mac text). Every
//! place that splits text into lines (the lexer's directives, comments and splices, line
//! markers, the line pass) asks here, so a text with lone `\r` line ends has lines too instead
//! of being one line that no line-level pass can cut.
//!
//! A line's break is found by its last byte: the `\n` (also of `\r\n`, whose `\r` stays in
//! the line's text as it always has), or a lone `\r`.

/// True if byte `i` ends a line: a `\n`, or a `\r` not followed by `\n`.
pub(crate) fn ends_line(text: &[u8], i: usize) -> bool {
    match text.get(i) {
        Some(b'\n') => true,
        Some(b'\r') => text.get(i + 1) != Some(&b'\n'),
        _ => false,
    }
}

/// True if `i` starts a line: the text's start, or just after a line's end.
pub(crate) fn starts_line(text: &[u8], i: usize) -> bool {
    i == 0 || ends_line(text, i - 1)
}

/// The length of the line break that starts at byte `i`: 2 for `\r\n`, 1 for `\n` or a lone
/// `\r`, 0 for anything else.
pub(crate) fn break_len(text: &[u8], i: usize) -> usize {
    match text.get(i) {
        Some(b'\n') => 1,
        Some(b'\r') if text.get(i + 1) == Some(&b'\n') => 2,
        Some(b'\r') => 1,
        _ => 0,
    }
}

/// The first byte at or after `from` that ends a line (see [`ends_line`]), if any.
pub(crate) fn next_end(text: &[u8], from: usize) -> Option<usize> {
    let k = from
        + text
            .get(from..)?
            .iter()
            .position(|&c| c == b'\n' || c == b'\r')?;
    Some(if text[k] == b'\r' && text.get(k + 1) == Some(&b'\n') {
        k + 1
    } else {
        k
    })
}

/// True if `bytes` hold a line break of any kind.
pub(crate) fn has_break(bytes: &[u8]) -> bool {
    bytes.iter().any(|&c| c == b'\n' || c == b'\r')
}

/// The physical lines of `text` as `(start, end)`, `end` past the line's break if it has one.
pub(crate) fn lines(text: &[u8]) -> impl Iterator<Item = (usize, usize)> + '_ {
    let mut at = 0;
    std::iter::from_fn(move || {
        if at >= text.len() {
            return None;
        }
        let start = at;
        at = next_end(text, at).map_or(text.len(), |e| e + 1);
        Some((start, at))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spans(text: &[u8]) -> Vec<&[u8]> {
        lines(text).map(|(a, b)| &text[a..b]).collect()
    }

    #[test]
    fn every_kind_of_line_end_ends_a_line() {
        assert_eq!(
            spans(b"a\nb\r\nc\rd"),
            [&b"a\n"[..], b"b\r\n", b"c\r", b"d"]
        );
        assert_eq!(spans(b"\r\r\n\n"), [&b"\r"[..], b"\r\n", b"\n"]);
        assert!(spans(b"").is_empty());
        assert!(ends_line(b"\r", 0) && !ends_line(b"\r\n", 0) && ends_line(b"\r\n", 1));
        assert!(starts_line(b"a\rb", 2) && !starts_line(b"a\r\nb", 2) && starts_line(b"x", 0));
        assert_eq!(
            [b"\n".as_slice(), b"\r\n", b"\r", b"x"].map(|t| break_len(t, 0)),
            [1, 2, 1, 0]
        );
        assert_eq!(next_end(b"ab\r\ncd", 0), Some(3));
        assert_eq!(next_end(b"ab", 0), None);
        assert_eq!(next_end(b"ab", 5), None);
    }
}
