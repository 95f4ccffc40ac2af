//! "Zero source errors before the crash" does not see what comes after the crash: a
//! candidate cut off right after the crashing expression (`int main() { f<int>()`) crashes
//! with no error printed, yet no compiler that did not crash would accept it. So when a
//! reduction keeps a crash-on-valid valid, a candidate must also be *complete*: its brackets
//! `()[]{}` balance and nest, and it ends where a declaration can end (`;` or `}`), outside
//! comments, string and character literals and preprocessor lines. Candidates that are not
//! are rejected without running the compiler. Pure: no I/O.

/// True when `text` is complete (see the module doc). One scan with a case per token
/// class, the bracket stack and the start of a line its state.
pub(super) fn is_complete(text: &[u8]) -> bool {
    let mut stack: Vec<u8> = Vec::new();
    let mut last = None;
    let mut i = 0;
    let n = text.len();
    // At the start of a line (only whitespace since the newline): `#` starts a directive.
    let mut line_start = true;
    while i < n {
        let c = text[i];
        match c {
            b'\n' => {
                line_start = true;
                i += 1;
                continue;
            }
            b' ' | b'\t' | b'\r' | b'\x0c' | b'\x0b' => {
                i += 1;
                continue;
            }
            b'#' if line_start => {
                // A directive or line marker, with backslash continuations.
                while i < n && text[i] != b'\n' {
                    if text[i] == b'\\' && i + 1 < n && text[i + 1] == b'\n' {
                        i += 1;
                    }
                    i += 1;
                }
                continue;
            }
            _ => {}
        }
        line_start = false;
        match c {
            b'/' if text.get(i + 1) == Some(&b'/') => {
                while i < n && text[i] != b'\n' {
                    i += 1;
                }
                continue;
            }
            b'/' if text.get(i + 1) == Some(&b'*') => {
                match text[i + 2..].windows(2).position(|w| w == b"*/") {
                    Some(p) => i += 2 + p + 2,
                    None => return false,
                }
                continue;
            }
            b'"' if raw_string_prefix(text, i) => match skip_raw_string(text, i) {
                Some(end) => {
                    last = Some(b'"');
                    i = end;
                    continue;
                }
                None => return false,
            },
            // A quote after a digit or letter is a digit separator (1'000) or part of a
            // prefix (u8'x' is rare; L'x' / u'x' have the letter right before: a literal).
            b'\'' if i > 0 && text[i - 1].is_ascii_digit() => {}
            b'"' | b'\'' => {
                let mut j = i + 1;
                while j < n && text[j] != c {
                    if text[j] == b'\\' {
                        j += 1;
                    } else if text[j] == b'\n' {
                        return false;
                    }
                    j += 1;
                }
                if j >= n {
                    return false;
                }
                last = Some(c);
                i = j + 1;
                continue;
            }
            b'(' | b'[' | b'{' => stack.push(c),
            b')' | b']' | b'}' => {
                let open = match c {
                    b')' => b'(',
                    b']' => b'[',
                    _ => b'{',
                };
                if stack.pop() != Some(open) {
                    return false;
                }
            }
            _ => {}
        }
        last = Some(c);
        i += 1;
    }
    stack.is_empty() && matches!(last, None | Some(b';') | Some(b'}'))
}

/// `text[i]` is the `"` of a raw string literal: `R"`, `LR"`, `u8R"`, `uR"`, `UR"`.
fn raw_string_prefix(text: &[u8], i: usize) -> bool {
    if i == 0 || text[i - 1] != b'R' {
        return false;
    }
    // The R must start an identifier-like prefix, not end an identifier (`FOOR"x"` is not
    // valid C++ anyway; `R` alone or after L/u/U/u8).
    let before = &text[..i - 1];
    let word_start = before
        .iter()
        .rposition(|b| !(b.is_ascii_alphanumeric() || *b == b'_'))
        .map_or(0, |p| p + 1);
    matches!(&before[word_start..], b"" | b"L" | b"u" | b"U" | b"u8")
}

/// The index after the raw string literal whose `"` is at `i`; `None` when it does not end.
fn skip_raw_string(text: &[u8], i: usize) -> Option<usize> {
    let open = text[i + 1..].iter().position(|&b| b == b'(')?;
    let delim = &text[i + 1..i + 1 + open];
    if delim.len() > 16 || delim.iter().any(|b| b.is_ascii_whitespace() || *b == b'\\') {
        return None;
    }
    let mut close = Vec::with_capacity(delim.len() + 2);
    close.push(b')');
    close.extend_from_slice(delim);
    close.push(b'"');
    let body = i + 1 + open + 1;
    let p = text[body..].windows(close.len()).position(|w| w == close)?;
    Some(body + p + close.len())
}

#[cfg(test)]
mod tests {
    use super::is_complete;

    #[test]
    fn a_cut_after_the_crash_is_incomplete() {
        assert!(is_complete(b"int main() { f<int>(42); }\n"));
        assert!(!is_complete(b"int main() { f<int>()"));
        assert!(!is_complete(b"int main() { f<int>(); "));
        assert!(!is_complete(b"struct A {};\nint x"));
        assert!(!is_complete(b"void f() { (}) }"));
    }

    #[test]
    fn brackets_in_comments_literals_and_directives_do_not_count() {
        assert!(is_complete(
            b"# 1 \"a(b.h\" 3\nint x; // {\n/* ( */ char c = '{';\n"
        ));
        assert!(is_complete(b"const char *s = \"})\\\"\";\n"));
        assert!(is_complete(b"auto r = R\"x(a)\" )x\";\n"));
        assert!(is_complete(b"#define X (\\\n  1\nint y = 1'000;\n"));
        assert!(!is_complete(b"int x; /* unterminated"));
        assert!(!is_complete(b"const char *s = \"abc;\n"));
    }

    #[test]
    fn empty_and_directive_only_files_are_complete() {
        assert!(is_complete(b""));
        assert!(is_complete(b"# 1 \"x.cpp\"\n#pragma clang __debug crash\n"));
    }
}
