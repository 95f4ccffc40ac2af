//! Validity that does not rest on line markers. A preprocessed file's `# 1 "…/arm_sve.h" 1 3`
//! makes what follows a system header, where clang lets through what it rejects in user code
//! (internal-only attributes, warnings that are errors by default). A kept-valid reduction
//! whose tests see the markers can end at a file that compiles cleanly only as a system
//! header: once the marker goes (a maintainer pastes the file into a test), it has errors and
//! no longer crashes. So when the start is valid without its markers, every candidate is
//! compiled without them too, and the result is shipped without them. Pure: no I/O.

use std::borrow::Cow;

/// True when `line` (without its newline) is a line marker: `# 12 "file" 1 3` or `#line 12`.
fn is_marker(line: &[u8]) -> bool {
    let rest = line.trim_ascii_start();
    let Some(rest) = rest.strip_prefix(b"#") else {
        return false;
    };
    let rest = rest.trim_ascii_start();
    let rest = rest
        .strip_prefix(b"line")
        .unwrap_or(rest)
        .trim_ascii_start();
    rest.first().is_some_and(u8::is_ascii_digit)
}

/// True when `text` has a line marker.
pub(super) fn has_markers(text: &[u8]) -> bool {
    text.split(|&b| b == b'\n').any(is_marker)
}

/// `text` without its line-marker lines (every other line as it was).
pub(super) fn strip(text: &[u8]) -> Cow<'_, [u8]> {
    if !has_markers(text) {
        return Cow::Borrowed(text);
    }
    let mut out = Vec::with_capacity(text.len());
    for line in text.split_inclusive(|&b| b == b'\n') {
        let body = line.strip_suffix(b"\n").unwrap_or(line);
        if !is_marker(body) {
            out.extend_from_slice(line);
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markers_go_and_other_directives_stay() {
        let text = b"# 1 \"a.c\"\n# 1 \"/usr/include/x.h\" 1 3 4\nint x;\n#pragma once\n  #  line 7 \"a.c\"\n#define N 1\nint y;# 3\n# 9 \"a.c\" 2";
        assert!(has_markers(text));
        assert_eq!(
            strip(text).as_ref(),
            b"int x;\n#pragma once\n#define N 1\nint y;# 3\n"
        );
        assert!(!has_markers(b"#pragma x\nint a;\n#include <y>\n"));
        assert!(matches!(strip(b"int a;\n"), Cow::Borrowed(_)));
    }
}
