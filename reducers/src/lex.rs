//! A forgiving C/C++/HIP lexer and bracket matcher.
//!
//! Every structural pass needs the same three facts about the current text: where the tokens are,
//! which brackets pair up, and how deep in `{}` each token sits. Getting them from one linear scan
//! keeps candidate generation O(n), which matters because the driver's own CPU per test must stay
//! a small fraction of the compiler's. The lexer never fails: unterminated strings end at the line
//! end, unknown bytes become one-byte tokens, and non-ASCII bytes count as identifier characters,
//! so arbitrary (non-UTF-8) input is handled without panics.

use crate::newline;

/// What a token is; only as fine-grained as the passes need.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Ident,
    Number,
    Str,
    Char,
    Punct,
    /// A whole preprocessor line (`# 12 "a.h" 3`, `#pragma …`), continuation lines included.
    Directive,
    /// Any other byte.
    Other,
}

/// A token: `text[start..end]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Tok {
    pub start: u32,
    pub end: u32,
    pub kind: Kind,
}

impl Tok {
    pub fn bytes<'t>(&self, text: &'t [u8]) -> &'t [u8] {
        &text[self.start as usize..self.end as usize]
    }
    pub fn is(&self, text: &[u8], s: &[u8]) -> bool {
        self.kind == Kind::Punct && self.bytes(text) == s
    }
}

/// Longest-first punctuators; anything else is a one-byte `Punct`.
const PUNCT3: [&[u8]; 5] = [b">>=", b"<<=", b"<=>", b"...", b"->*"];
const PUNCT2: [&[u8]; 21] = [
    b"::", b"->", b"++", b"--", b"<<", b">>", b"<=", b">=", b"==", b"!=", b"&&", b"||", b"+=",
    b"-=", b"*=", b"/=", b"%=", b"&=", b"|=", b"^=", b".*",
];

fn is_ident_start(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_' || b == b'$' || b >= 0x80
}
fn is_ident_cont(b: u8) -> bool {
    is_ident_start(b) || b.is_ascii_digit()
}

/// The keywords that end a type (`int *p`, `const T &r`, `unsigned size()`): a name or
/// declarator after one is declared there.
pub(crate) const TYPE_WORDS: &[&[u8]] = &[
    b"void",
    b"bool",
    b"char",
    b"char8_t",
    b"char16_t",
    b"char32_t",
    b"wchar_t",
    b"short",
    b"int",
    b"long",
    b"signed",
    b"unsigned",
    b"float",
    b"double",
    b"auto",
    b"const",
    b"volatile",
    b"_Bool",
];

/// True if the text cannot be addressed with `u32` offsets; passes then produce nothing.
pub(crate) fn too_big(text: &[u8]) -> bool {
    text.len() >= u32::MAX as usize
}

/// Splits `text` into tokens, skipping whitespace and comments. O(n).
pub(crate) fn lex(text: &[u8]) -> Vec<Tok> {
    lex_from(text, true)
}

/// [`lex`] for text that does not start a line (the rest of a directive line): a `#` at its
/// start is punctuation, not a directive.
pub(crate) fn lex_inline(text: &[u8]) -> Vec<Tok> {
    lex_from(text, false)
}

/// The lexer: one loop with a case per token class, the start of a line its only state.
fn lex_from(text: &[u8], at_line_start: bool) -> Vec<Tok> {
    let mut toks = Vec::with_capacity(text.len() / 5);
    if too_big(text) {
        return toks;
    }
    let n = text.len();
    let mut i = 0;
    let mut line_start = at_line_start; // only whitespace seen since the last newline
    while i < n {
        let b = text[i];
        if newline::ends_line(text, i) {
            line_start = true;
            i += 1;
            continue;
        }
        // (A `\r` here is that of a `\r\n`.)
        if b == b' ' || b == b'\t' || b == b'\r' || b == 0x0b || b == 0x0c {
            i += 1;
            continue;
        }
        let splice = if b == b'\\' {
            newline::break_len(text, i + 1)
        } else {
            0
        };
        if splice > 0 {
            i += 1 + splice;
            continue;
        }
        if b == b'/' && text.get(i + 1) == Some(&b'/') {
            i = line_end(text, i);
            continue;
        }
        if b == b'/' && text.get(i + 1) == Some(&b'*') {
            i = match find(&text[i + 2..], b"*/") {
                Some(k) => i + 2 + k + 2,
                None => n,
            };
            continue;
        }
        let start = i;
        let kind;
        if b == b'#' && line_start {
            i = line_end(text, i);
            kind = Kind::Directive;
        } else if is_ident_start(b) {
            while i < n && is_ident_cont(text[i]) {
                i += 1;
            }
            let word = &text[start..i];
            match text.get(i) {
                Some(b'"') if matches!(word, b"R" | b"u8R" | b"uR" | b"UR" | b"LR") => {
                    i = raw_string_end(text, i);
                    kind = Kind::Str;
                }
                Some(&q @ (b'"' | b'\'')) if matches!(word, b"u8" | b"u" | b"U" | b"L") => {
                    i = quoted_end(text, i, q);
                    kind = if q == b'"' { Kind::Str } else { Kind::Char };
                }
                _ => kind = Kind::Ident,
            }
        } else if b.is_ascii_digit()
            || (b == b'.' && text.get(i + 1).is_some_and(u8::is_ascii_digit))
        {
            i += 1;
            while i < n {
                let c = text[i];
                let sign =
                    (c == b'+' || c == b'-') && matches!(text[i - 1], b'e' | b'E' | b'p' | b'P');
                if sign || is_ident_cont(c) || c == b'.' || c == b'\'' {
                    i += 1;
                } else {
                    break;
                }
            }
            kind = Kind::Number;
        } else if b == b'"' || b == b'\'' {
            i = quoted_end(text, i, b);
            kind = if b == b'"' { Kind::Str } else { Kind::Char };
        } else if b.is_ascii_punctuation() {
            let rest = &text[i..];
            let len = if PUNCT3.iter().any(|p| rest.starts_with(p)) {
                3
            } else if PUNCT2.iter().any(|p| rest.starts_with(p)) {
                2
            } else {
                1
            };
            i += len;
            kind = Kind::Punct;
        } else {
            i += 1;
            kind = Kind::Other;
        }
        line_start = false;
        toks.push(Tok {
            start: start as u32,
            end: i as u32,
            kind,
        });
    }
    toks
}

/// Index of the byte ending the line that contains `i` (a `\n` or a lone `\r`, see
/// `newline.rs`; continuations followed), or `text.len()`.
pub(crate) fn line_end(text: &[u8], mut i: usize) -> usize {
    while let Some(end) = newline::next_end(text, i) {
        // Where the break starts: a `\r\n` is spliced by a `\\` before its `\r`.
        let crlf = text[end] == b'\n' && end > 0 && text[end - 1] == b'\r';
        let brk = if crlf { end - 1 } else { end };
        if brk > 0 && text[brk - 1] == b'\\' {
            i = end + 1;
        } else {
            return end;
        }
    }
    text.len()
}

/// Position of the first `b` in `hay`.
pub(crate) fn find_byte(b: u8, hay: &[u8]) -> Option<usize> {
    hay.iter().position(|&c| c == b)
}

/// Position of the first occurrence of a non-empty `needle` in `hay`.
fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    let (&first, rest) = needle.split_first()?;
    let mut at = 0;
    while let Some(k) = find_byte(first, &hay[at..]) {
        let i = at + k;
        if hay[i + 1..].starts_with(rest) {
            return Some(i);
        }
        at = i + 1;
    }
    None
}

/// End of a `"…"` or `'…'` literal starting at `i` (the quote); stops at an unescaped newline.
fn quoted_end(text: &[u8], mut i: usize, q: u8) -> usize {
    i += 1;
    while i < text.len() {
        match text[i] {
            b'\\' => i += 2,
            c if c == q => return i + 1,
            _ if newline::ends_line(text, i) => return i,
            _ => i += 1,
        }
    }
    text.len()
}

/// End of a raw string `"delim( … )delim"` whose opening quote is at `i`.
fn raw_string_end(text: &[u8], i: usize) -> usize {
    let open = i + 1;
    let paren = text[open..]
        .iter()
        .take(17)
        .position(|&c| c == b'(' || c == b'"' || c == b'\n' || c == b'\r' || c == b' ');
    match paren {
        Some(k) if text[open + k] == b'(' => {
            let mut close = Vec::with_capacity(k + 2);
            close.push(b')');
            close.extend_from_slice(&text[open..open + k]);
            close.push(b'"');
            match find(&text[open + k..], &close) {
                Some(m) => open + k + m + close.len(),
                None => text.len(),
            }
        }
        _ => quoted_end(text, i, b'"'),
    }
}

/// Bracket structure of a token list.
pub(crate) struct Structure {
    /// For each token, the index of its matching bracket (`u32::MAX` if none).
    pub mate: Vec<u32>,
    /// For each token, the number of enclosing matched `{}` pairs; a brace itself counts as
    /// outside its own pair.
    pub depth: Vec<u32>,
}

const NONE: u32 = u32::MAX;

/// Matches `()`, `[]` and `{}`; a closer that does not match the innermost opener closes the
/// nearest matching one further out (leaving the ones in between unmatched), or is ignored.
pub(crate) fn structure(text: &[u8], toks: &[Tok]) -> Structure {
    let mut mate = vec![NONE; toks.len()];
    let mut depth = vec![0u32; toks.len()];
    let mut stack: Vec<(u8, u32)> = Vec::new();
    let mut braces = 0u32;
    for (i, t) in toks.iter().enumerate() {
        depth[i] = braces;
        if t.kind != Kind::Punct || t.end - t.start != 1 {
            continue;
        }
        let c = text[t.start as usize];
        match c {
            b'(' | b'[' | b'{' => {
                stack.push((c, i as u32));
                if c == b'{' {
                    braces += 1;
                }
            }
            b')' | b']' | b'}' => {
                let open = match c {
                    b')' => b'(',
                    b']' => b'[',
                    _ => b'{',
                };
                if let Some(pos) = stack.iter().rposition(|&(o, _)| o == open) {
                    for &(o, _) in &stack[pos + 1..] {
                        if o == b'{' {
                            braces -= 1;
                        }
                    }
                    let (_, j) = stack[pos];
                    stack.truncate(pos);
                    mate[i] = j;
                    mate[j as usize] = i as u32;
                    if c == b'}' {
                        braces -= 1;
                        depth[i] = braces;
                    }
                }
            }
            _ => {}
        }
    }
    Structure { mate, depth }
}

impl Structure {
    pub fn mate_of(&self, i: usize) -> Option<usize> {
        match self.mate[i] {
            NONE => None,
            j => Some(j as usize),
        }
    }
}

/// True when the `{` at token `open` starts the body of a requires-expression (`requires { … }`,
/// or `requires (params) { … }` where `requires` stands in an expression): that `}` ends an
/// expression, never a declaration. libstdc++'s C++20 headers put such bodies in the
/// requires-clauses of templates (`template<…> requires requires { … } struct S<…>`), and
/// splitting there separates a specialisation from its template head.
pub(crate) fn opens_requires_body(text: &[u8], toks: &[Tok], mate: &[u32], open: usize) -> bool {
    let word = |k: usize, w: &[u8]| toks[k].kind == Kind::Ident && toks[k].bytes(text) == w;
    let Some(prev) = open.checked_sub(1) else {
        return false;
    };
    if word(prev, b"requires") {
        return true;
    }
    if !toks[prev].is(text, b")") {
        return false;
    }
    let Some(req) = (mate[prev] as usize).checked_sub(1).filter(|&r| r < prev) else {
        return false;
    };
    if !word(req, b"requires") {
        return false;
    }
    // A trailing requires-clause `f() requires (C<T>) { body }` is followed by a function
    // body; a requires-expression stands where an expression starts.
    req.checked_sub(1).is_some_and(|b| {
        word(b, b"requires")
            || word(b, b"return")
            || [&b"="[..], b"&&", b"||", b"!", b"(", b",", b"?", b":"]
                .iter()
                .any(|p| toks[b].is(text, p))
    })
}

/// True when token `close` is the `]` of a lambda introducer: its `[` (found within a bounded
/// look back) starts an expression, so it is no subscript (`a[i] < b`, `f()[0] < b`).
fn closes_lambda_introducer(text: &[u8], toks: &[Tok], close: usize) -> bool {
    const MAX_BACK: usize = 32;
    if !toks[close].is(text, b"]") {
        return false;
    }
    let mut depth = 0usize;
    for k in (close.saturating_sub(MAX_BACK)..close).rev() {
        if toks[k].is(text, b"]") {
            depth += 1;
        } else if toks[k].is(text, b"[") {
            if depth > 0 {
                depth -= 1;
                continue;
            }
            let Some(before) = k.checked_sub(1) else {
                return true;
            };
            let b = &toks[before];
            return match b.kind {
                Kind::Ident => b.bytes(text) == b"return",
                Kind::Number | Kind::Str | Kind::Char => false,
                _ => !(b.is(text, b")") || b.is(text, b"]") || b.is(text, b"[")),
            };
        }
    }
    false
}

/// Template-looking `<…>` pairs as byte spans `[start of <, end of >)`: a `<` after an identifier
/// (or after a lambda's `[…]`, its template parameters) whose `>` is found before anything that
/// cannot appear in a template argument list at its nesting level. A `>>` token may close one or
/// two lists. The search is bounded so the whole scan stays linear.
pub(crate) fn angle_spans(text: &[u8], toks: &[Tok]) -> Vec<(usize, usize)> {
    const MAX_SCAN: usize = 256;
    let mut out = Vec::new();
    for i in 1..toks.len() {
        let opens = toks[i - 1].kind == Kind::Ident || closes_lambda_introducer(text, toks, i - 1);
        if !toks[i].is(text, b"<") || !opens {
            continue;
        }
        let mut parens = 0i32;
        let mut angles = 0i32;
        for (j, t) in toks.iter().enumerate().skip(i + 1).take(MAX_SCAN) {
            if t.kind != Kind::Punct {
                continue;
            }
            let end = match t.bytes(text) {
                // A lambda's body may stand in a template argument (`B<[](auto) {}>`).
                b"(" | b"[" | b"{" => {
                    parens += 1;
                    None
                }
                b")" | b"]" | b"}" => {
                    parens -= 1;
                    if parens < 0 {
                        break;
                    }
                    None
                }
                b";" | b"&&" | b"||" if parens == 0 => break,
                b"<" if parens == 0 && toks[j - 1].kind == Kind::Ident => {
                    angles += 1;
                    None
                }
                b">" if parens == 0 => {
                    angles -= 1;
                    (angles < 0).then_some(t.end as usize)
                }
                b">>" if parens == 0 => {
                    angles -= 2;
                    match angles {
                        -2 => Some(t.start as usize + 1),
                        -1 => Some(t.end as usize),
                        _ => None,
                    }
                }
                _ => None,
            };
            if let Some(end) = end {
                out.push((toks[i].start as usize, end));
                break;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        lex(s.as_bytes())
            .iter()
            .map(|t| String::from_utf8_lossy(t.bytes(s.as_bytes())).into_owned())
            .collect()
    }

    #[test]
    fn lexes_cpp() {
        assert_eq!(
            words(
                "# 1 \"a.h\" 3\nint x = 0x1p-3; // c\nauto s = u8\"a\\\"b\" R\"x(})x\";a->*b>>=c"
            ),
            [
                "# 1 \"a.h\" 3",
                "int",
                "x",
                "=",
                "0x1p-3",
                ";",
                "auto",
                "s",
                "=",
                "u8\"a\\\"b\"",
                "R\"x(})x\"",
                ";",
                "a",
                "->*",
                "b",
                ">>=",
                "c"
            ]
        );
    }

    #[test]
    fn lone_carriage_returns_end_directives_comments_and_splices() {
        assert_eq!(
            words("#include <a.h>\r// c\rint x;\r#define A \\\r 1\rint y;"),
            [
                "#include <a.h>",
                "int",
                "x",
                ";",
                "#define A \\\r 1",
                "int",
                "y",
                ";"
            ]
        );
        assert_eq!(words("a \\\r\nb \"s\rt\""), ["a", "b", "\"s", "t", "\""]);
    }

    #[test]
    fn matches_brackets_and_depth() {
        let s = b"a { b ( ] ) { c } } }";
        let toks = lex(s);
        let st = structure(s, &toks);
        assert_eq!(st.mate_of(1), Some(9));
        assert_eq!(st.mate_of(3), Some(5));
        assert_eq!(st.mate_of(4), None);
        assert_eq!(st.depth, [0, 0, 1, 1, 1, 1, 1, 2, 1, 0, 0]);
    }

    /// The text of each template-looking `<…>` of `s`.
    fn angles_of(s: &[u8]) -> Vec<&str> {
        angle_spans(s, &lex(s))
            .iter()
            .map(|&(a, b)| std::str::from_utf8(&s[a..b]).unwrap())
            .collect()
    }

    #[test]
    fn finds_template_angles() {
        let s = b"std::map<int, vector<x>> m; if (a < b) c();";
        let spans = angles_of(s);
        assert_eq!(spans, ["<int, vector<x>>", "<x>"]);
    }

    #[test]
    fn a_lambda_in_a_template_argument_stays_inside_the_angles() {
        let s = b"bool v = A<>::B<[](auto x) { return c<x>; }>; if (a < b) { d; }";
        let spans = angles_of(s);
        assert_eq!(spans, ["<>", "<[](auto x) { return c<x>; }>", "<x>"]);
    }

    #[test]
    fn a_lambdas_template_parameters_are_angles_a_subscript_compared_is_not() {
        let s = b"f([]<long... g>(a<g...>) {}); return [&x]<class T>(T) {}; \
            v[i] < w > (y); f()[0] < b > c;";
        let spans = angles_of(s);
        assert_eq!(spans, ["<long... g>", "<g...>", "<class T>"]);
    }
}
