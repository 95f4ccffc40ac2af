//! Bounded capture of a child's output that keeps what matters: the first half of the cap and
//! the last half, with one marker line between them saying how many bytes were dropped.
//!
//! A compiler's crash report comes at the *end* of its output (after the diagnostics that led
//! to it), and the command and first errors at the start: a clang crash after 12 MB of
//! warnings must still be seen as a crash, so a plain "first N bytes" cap is wrong. Also the
//! one-line cut ([`one_line`]) used for reasons and details that end up in `case.json`.

/// Collects a stream: the first `head_cap` bytes, and a moving window over the last
/// `tail_cap` bytes (amortised O(1) per byte: the window is compacted when it doubles).
#[derive(Debug)]
pub(crate) struct HeadTail {
    head_cap: usize,
    tail_cap: usize,
    head: Vec<u8>,
    tail: Vec<u8>,
    /// Bytes already cut from the front of `tail`.
    cut: u64,
}

/// How far into the tail [`HeadTail::finish`] looks for a line start to begin it at.
const ALIGN_WINDOW: usize = 4096;

impl HeadTail {
    /// Keeps at most `cap` bytes (plus the marker line): half at the start, half at the end.
    pub(crate) fn new(cap: usize) -> Self {
        let head_cap = cap / 2;
        HeadTail {
            head_cap,
            tail_cap: cap - head_cap,
            head: Vec::new(),
            tail: Vec::new(),
            cut: 0,
        }
    }

    pub(crate) fn push(&mut self, mut chunk: &[u8]) {
        if self.head.len() < self.head_cap {
            let take = (self.head_cap - self.head.len()).min(chunk.len());
            self.head.extend_from_slice(&chunk[..take]);
            chunk = &chunk[take..];
        }
        if chunk.is_empty() {
            return;
        }
        self.tail.extend_from_slice(chunk);
        if self.tail.len() > self.tail_cap.saturating_mul(2).max(ALIGN_WINDOW) {
            let excess = self.tail.len() - self.tail_cap;
            self.tail.drain(..excess);
            self.cut += excess as u64;
        }
    }

    /// The kept bytes and the number dropped from the middle. When something was dropped, the
    /// tail starts at a line start (when one is near) and a marker line
    /// `[icepick: N bytes of output dropped here]` separates head and tail.
    pub(crate) fn finish(mut self) -> (Vec<u8>, u64) {
        if self.tail.len() > self.tail_cap {
            let excess = self.tail.len() - self.tail_cap;
            self.tail.drain(..excess);
            self.cut += excess as u64;
        }
        let mut out = self.head;
        if self.cut == 0 {
            out.extend_from_slice(&self.tail);
            return (out, 0);
        }
        let window = &self.tail[..self.tail.len().min(ALIGN_WINDOW)];
        let skip = window.iter().position(|&b| b == b'\n').map_or(0, |i| i + 1);
        let dropped = self.cut + skip as u64;
        if !out.is_empty() && !out.ends_with(b"\n") {
            out.push(b'\n');
        }
        out.extend_from_slice(marker(dropped).as_bytes());
        out.extend_from_slice(&self.tail[skip..]);
        (out, dropped)
    }
}

/// The line put where output was dropped.
pub fn marker(dropped: u64) -> String {
    format!("[icepick: {dropped} bytes of output dropped here]\n")
}

/// Longest [`one_line`] text icepick writes into a reason or a `status_detail`.
pub const ONE_LINE_MAX: usize = 300;

/// `text` as one line of at most `max` bytes: runs of whitespace (newlines included) become
/// one space, control characters are dropped, and a cut text ends with `…` (cut at a
/// character boundary; the `…` counts towards `max`).
pub fn one_line(text: &str, max: usize) -> String {
    let mut out = String::with_capacity(text.len().min(max));
    let mut space = false;
    let ellipsis = "…";
    for c in text.trim().chars() {
        if c.is_whitespace() {
            space = true;
            continue;
        }
        if c.is_control() {
            continue;
        }
        let sep = space && !out.is_empty();
        let need = c.len_utf8() + usize::from(sep);
        if out.len() + need > max {
            while out.len() + ellipsis.len() > max {
                if out.pop().is_none() {
                    break;
                }
            }
            if ellipsis.len() <= max {
                out.push_str(ellipsis);
            }
            return out;
        }
        if sep {
            out.push(' ');
        }
        space = false;
        out.push(c);
    }
    out
}
