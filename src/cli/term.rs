//! What icepick prints goes to a terminal, and much of it comes from a build or a case
//! (arguments, directories, crash text, a report rendered from someone's `case.json`). A
//! terminal obeys escape sequences in it: a retitled window, a cleared screen, text hidden or
//! rewritten. So everything icepick prints on stdout, and every message on stderr, passes
//! through [`visible`]: control characters (but newline and tab) and the bidirectional
//! overrides become `\x1b`-style text. JSON needs nothing (serde escapes controls itself); the
//! progress bar, icepick's own drawing, does not go through here. `wrap` is the exception on
//! purpose: the compiler's own output passes through it untouched, colours included.

use std::borrow::Cow;
use std::io::{self, Write};

/// Whether `c` would act on a terminal (or reorder text) instead of being shown.
fn acts(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t')
        || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// `text` with every character that would act on a terminal written out as an escape.
pub(crate) fn visible(text: &str) -> Cow<'_, str> {
    if !text.chars().any(acts) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if acts(c) {
            let n = c as u32;
            if n < 0x100 {
                out.push_str(&format!("\\x{n:02x}"));
            } else {
                out.push_str(&format!("\\u{{{n:x}}}"));
            }
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// A writer that shows control characters as text ([`visible`]); bytes that are not UTF-8
/// are shown as `\xNN`. A character split across two writes is held until it is whole.
pub(crate) struct Visible<W: Write> {
    inner: W,
    pending: Vec<u8>,
}

impl<W: Write> Visible<W> {
    pub(crate) fn new(inner: W) -> Self {
        Visible {
            inner,
            pending: Vec::new(),
        }
    }

    fn emit(&mut self, at_end: bool) -> io::Result<()> {
        let mut rest: &[u8] = &self.pending;
        let mut out = String::new();
        loop {
            match std::str::from_utf8(rest) {
                Ok(s) => {
                    out.push_str(&visible(s));
                    rest = &[];
                    break;
                }
                Err(e) => {
                    let (good, bad) = rest.split_at(e.valid_up_to());
                    out.push_str(&visible(std::str::from_utf8(good).expect("checked")));
                    match e.error_len() {
                        Some(n) => {
                            for b in &bad[..n] {
                                out.push_str(&format!("\\x{b:02x}"));
                            }
                            rest = &bad[n..];
                        }
                        None if at_end => {
                            for b in bad {
                                out.push_str(&format!("\\x{b:02x}"));
                            }
                            rest = &[];
                            break;
                        }
                        None => {
                            rest = bad;
                            break;
                        }
                    }
                }
            }
        }
        let keep = rest.to_vec();
        self.pending = keep;
        self.inner.write_all(out.as_bytes())
    }
}

impl<W: Write> Write for Visible<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.pending.extend_from_slice(buf);
        self.emit(false)?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.emit(true)?;
        self.inner.flush()
    }
}

impl<W: Write> Drop for Visible<W> {
    fn drop(&mut self) {
        let _ = self.flush();
    }
}

/// Standard output, with control characters shown ([`Visible`]).
pub(crate) fn stdout() -> Visible<io::StdoutLock<'static>> {
    Visible::new(io::stdout().lock())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_become_text_and_the_rest_is_kept() {
        let hostile = "a\u{1b}]0;owned\u{7}b\u{1b}[2J\r\nc\td\u{9b}e\u{202e}f é";
        let v = visible(hostile);
        assert_eq!(
            v,
            "a\\x1b]0;owned\\x07b\\x1b[2J\\x0d\nc\td\\x9be\\u{202e}f é"
        );
        assert!(!v.chars().any(acts));
        assert!(matches!(visible("plain\ttext\n"), Cow::Borrowed(_)));
    }

    #[test]
    fn the_writer_holds_split_characters_and_shows_bad_bytes() {
        let mut w = Visible::new(Vec::new());
        let bytes = "x\u{1b}[31mé\u{9b}".as_bytes();
        for b in bytes {
            w.write_all(&[*b]).unwrap();
        }
        w.write_all(b"\xff\n").unwrap();
        w.write_all(b"\xc3").unwrap();
        w.flush().unwrap();
        assert_eq!(
            String::from_utf8(std::mem::take(&mut w.inner)).unwrap(),
            "x\\x1b[31mé\\x9b\\xff\n\\xc3"
        );
    }
}
