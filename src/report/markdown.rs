//! Markdown for text icepick did not write.
//!
//! Why this exists: `report.md` (and every Markdown section the stages add to it) is made to
//! be pasted into an issue tracker, and most of what it shows comes from the case: compiler
//! messages, `-D` values, file names, paths, version strings. Any of those may hold a line
//! break followed by a code fence or a `#`, backticks, `|`, or HTML. Put into Markdown as it
//! is, such text closes a code block early, starts a heading, breaks a table or injects
//! markup. Every piece of case text goes through one of the functions here instead:
//!
//! - [`fence`]: a fenced code block whose fence is longer than any backtick run inside, so
//!   nothing inside can close it;
//! - [`code`] / [`table_code`]: an inline code span delimited by a backtick run longer than
//!   any inside (padded with spaces where CommonMark needs it), on one line;
//! - [`text`] / [`table_text`]: plain text on one line with Markdown metacharacters and the
//!   HTML ones (`<`, `&`) backslash-escaped.

/// Line breaks and other control characters, which would end the line a span or heading is
/// on (CommonMark also breaks lines at a lone `\r`), as spaces.
fn one_line(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

/// The longest run of backticks in `s`.
fn longest_backtick_run(s: &str) -> usize {
    let (mut best, mut run) = (0, 0);
    for c in s.chars() {
        if c == '`' {
            run += 1;
            best = best.max(run);
        } else {
            run = 0;
        }
    }
    best
}

/// A fenced code block (ending with a newline) holding `content` verbatim, with `info` (a
/// language name icepick chooses, such as `sh`) after the opening fence. The fence is at
/// least three backticks and longer than any backtick run in `content`, so no line of it
/// can close the block.
pub fn fence(info: &str, content: &str) -> String {
    let ticks = "`".repeat((longest_backtick_run(content) + 1).max(3));
    let info = one_line(info).replace('`', "");
    let mut s = format!("{ticks}{info}\n{content}");
    if !content.ends_with('\n') {
        s.push('\n');
    }
    s.push_str(&ticks);
    s.push('\n');
    s
}

/// An inline code span showing `s` on one line (control characters become spaces).
pub fn code(s: &str) -> String {
    let s = one_line(s);
    if s.is_empty() {
        return "` `".into();
    }
    let ticks = "`".repeat(longest_backtick_run(&s) + 1);
    // CommonMark strips one space on each side when both are there, and a backtick next to
    // the delimiters would join them: pad in both cases.
    let pad = s.starts_with('`') || s.ends_with('`') || (s.starts_with(' ') && s.ends_with(' '));
    if pad {
        format!("{ticks} {s} {ticks}")
    } else {
        format!("{ticks}{s}{ticks}")
    }
}

/// [`code`] for a table cell: a `|` is escaped too (GitHub splits cells at it even in code).
pub fn table_code(s: &str) -> String {
    code(s).replace('|', "\\|")
}

/// The characters [`text`] escapes: those that start emphasis, code, links, images,
/// autolinks, raw HTML, entities, headings, block quotes, strikethrough, math and table
/// cells.
const SPECIAL: &[char] = &[
    '\\', '`', '*', '_', '[', ']', '<', '>', '&', '#', '|', '!', '~', '$',
];

/// `s` as plain text on one line: Markdown metacharacters and `<`, `&` are backslash-escaped
/// (CommonMark shows an escaped ASCII punctuation character as itself), control characters
/// become spaces.
pub fn text(s: &str) -> String {
    let chars: Vec<char> = one_line(s).chars().collect();
    let mut out = String::with_capacity(s.len() + s.len() / 8);
    for (i, &c) in chars.iter().enumerate() {
        // An `_` between two letters or digits can neither open nor close emphasis
        // (`x86_64`, `foo_bar`): left as it is, names stay readable.
        let inside_word = c == '_'
            && i > 0
            && chars[i - 1].is_alphanumeric()
            && chars.get(i + 1).is_some_and(|n| n.is_alphanumeric());
        if SPECIAL.contains(&c) && !inside_word {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// [`text`] for a table cell (the same: `|` is among the escaped characters).
pub fn table_text(s: &str) -> String {
    text(s)
}

/// Text icepick wrote that marks commands and names with single backticks (evidence details:
/// "`clang-19 -c x.c`: SIGSEGV in `f`"), whose marked pieces may hold case text: each marked
/// piece becomes a [`code`] span and the rest [`text`]. Every piece goes through one of those
/// two, so whatever the case text holds, nothing escapes; when the backticks do not pair up
/// (case text with a backtick of its own), the whole is [`text`].
pub fn text_with_code(s: &str) -> String {
    spans(s, code)
}

/// [`text_with_code`] for a table cell.
pub fn table_text_with_code(s: &str) -> String {
    spans(s, table_code)
}

fn spans(s: &str, code: fn(&str) -> String) -> String {
    let pieces: Vec<&str> = s.split('`').collect();
    if pieces.len() % 2 == 0 {
        return text(s);
    }
    pieces
        .iter()
        .enumerate()
        .map(|(i, p)| match (i % 2, p.is_empty()) {
            (_, true) => String::new(),
            (1, false) => code(p),
            _ => text(p),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The content of the first fenced block of `md`, and what follows its closing fence,
    /// read the way CommonMark does: the closing fence is the first line that is a run of
    /// at least as many backticks as the opening one, up to three spaces of indent, and
    /// nothing else but spaces.
    fn parse_fence(md: &str) -> (String, String) {
        let (open, rest) = md.split_once('\n').unwrap();
        let n = open.chars().take_while(|c| *c == '`').count();
        assert!(n >= 3, "{md:?}");
        let mut content = String::new();
        let mut rest = rest;
        // CommonMark line endings: \n, \r\n and a lone \r.
        loop {
            let end = rest.find(['\n', '\r']).expect("the block is closed");
            let line = &rest[..end];
            let brk = if rest[end..].starts_with("\r\n") {
                2
            } else {
                1
            };
            let t = line.trim_start_matches(' ');
            let closes = line.len() - t.len() <= 3
                && t.trim_end_matches(' ').chars().all(|c| c == '`')
                && t.trim_end_matches(' ').len() >= n;
            if closes {
                return (content, rest[end + brk..].to_string());
            }
            content.push_str(&rest[..end + brk]);
            rest = &rest[end + brk..];
        }
    }

    #[test]
    fn a_fence_outlasts_the_fences_inside() {
        let hostile = "-DX=1\n```\n# Heading\n<script>alert(1)</script>\n````";
        let md = format!("{}after\n", fence("sh", hostile));
        assert!(md.starts_with("`````sh\n"), "{md}");
        let (content, after) = parse_fence(&md);
        assert_eq!(content, format!("{hostile}\n"));
        assert_eq!(after, "after\n");
    }

    #[test]
    fn inline_code_and_text_stay_on_their_line() {
        assert_eq!(code("a`b"), "``a`b``");
        assert_eq!(code("`x"), "`` `x ``");
        assert_eq!(code("a\n# b"), "`a # b`");
        assert_eq!(text("x86_64 _a_ b_"), "x86_64 \\_a\\_ b\\_");
        assert_eq!(code(""), "` `");
        assert_eq!(table_code("a|b"), "`a\\|b`");
        assert_eq!(
            text("x\n# <img src=x onerror=alert(1)> *a* [l](u) &amp; | ~"),
            "x \\# \\<img src=x onerror=alert(1)\\> \\*a\\* \\[l\\](u) \\&amp; \\| \\~"
        );
    }

    proptest::proptest! {
        /// For any content, the block's content reads back as that content (plus the final
        /// newline the block adds) and nothing after the block is inside it.
        #[test]
        fn any_content_reads_back_from_its_fence(content in "(\\PC|[\\n\\r`~ ])*") {
            let md = format!("{}after\n", fence("c", &content));
            let (inside, after) = parse_fence(&md);
            let want = if content.ends_with('\n') { content.clone() } else { format!("{content}\n") };
            proptest::prop_assert_eq!(inside, want);
            proptest::prop_assert_eq!(after, "after\n");
        }

        /// A code span holds no line break and is delimited by a run no run inside equals.
        #[test]
        fn any_code_span_is_one_span(s in "(\\PC|[\\n\\r`| ])*") {
            let c = code(&s);
            proptest::prop_assert!(!c.contains(['\n', '\r']));
            let n = c.chars().take_while(|c| *c == '`').count();
            let inner = &c[n..c.len() - n];
            proptest::prop_assert!(longest_backtick_run(inner) < n);
            proptest::prop_assert!(c.ends_with(&"`".repeat(n)));
        }

        /// Plain text holds no line break and no unescaped metacharacter (but `_` inside a
        /// word, which is not one).
        #[test]
        fn any_text_is_escaped(s in "(\\PC|[\\n\\r])*") {
            let t = text(&s);
            proptest::prop_assert!(!t.contains(['\n', '\r']));
            let mut chars = t.chars();
            while let Some(c) = chars.next() {
                if c == '\\' {
                    let next = chars.next();
                    proptest::prop_assert!(next.is_some_and(|n| SPECIAL.contains(&n)));
                } else {
                    proptest::prop_assert!(!SPECIAL.contains(&c) || c == '_', "{:?} in {:?}", c, t);
                }
            }
        }
    }

    #[test]
    fn text_with_code_makes_marked_pieces_code_spans() {
        assert_eq!(
            text_with_code("`clang-19 -c x.c`: SIGSEGV in `f<int>`"),
            "`clang-19 -c x.c`: SIGSEGV in `f<int>`"
        );
        // Unpaired: all text, the backtick escaped.
        assert_eq!(text_with_code("a `b"), "a \\`b");
        // Case text inside a marked piece cannot end the line or the span.
        assert_eq!(text_with_code("`a\n# h`"), "`a # h`");
        assert_eq!(table_text_with_code("`a|b` c|d"), "`a\\|b` c\\|d");
    }

    proptest::proptest! {
        #[test]
        fn text_with_code_stays_on_one_line_and_escapes_table_pipes(s in proptest::prelude::any::<String>()) {
            let out = table_text_with_code(&s);
            proptest::prop_assert!(!out.contains('\n') && !out.contains('\r'));
            let bytes = out.as_bytes();
            for (i, b) in bytes.iter().enumerate() {
                if *b == b'|' {
                    proptest::prop_assert!(i > 0 && bytes[i - 1] == b'\\', "{out:?}");
                }
            }
        }
    }
}
