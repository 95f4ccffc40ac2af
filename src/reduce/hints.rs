//! What a crash tells the reducer: where the parser was (frontend crashes) and which function
//! was being compiled (backend crashes), taken from clang's pretty stack.

use std::sync::LazyLock;

use icepick_reducers::Hints;
use regex::Regex;

use crate::crash::Crash;

static LOCATION: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^(.+?):(\d+):(\d+): ").expect("valid regex"));
static ON_FUNCTION: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r#"on function ['"]@?([^'"]+)['"]"#).expect("valid regex"));
static FUNCTION_BODY: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"parsing function body '([^']+)'").expect("valid regex"));

/// Hints for the reducer from a crash's pretty stack: the innermost source location and the
/// function being compiled or parsed.
pub fn hints_for(crash: &Crash) -> Hints {
    let located = |e: &&crate::crash::PrettyEntry| {
        let c = LOCATION.captures(&e.text)?;
        Some((
            c[1].to_string(),
            c[2].parse::<u32>().ok()?,
            c[3].parse::<u32>().ok(),
        ))
    };
    let at = crash.pretty_stack.iter().rev().find_map(|e| located(&e));
    // The column: where the parser's current token is when that is on the same line (more
    // precise than "in compound statement" at the block's `{`), else the innermost entry's.
    let token = crash
        .pretty_stack
        .iter()
        .filter(|e| e.text.contains("current parser token"))
        .find_map(|e| located(&e));
    let parser_column = match (&at, token) {
        (Some((f, l, _)), Some((tf, tl, Some(c)))) if *f == tf && *l == tl => Some(c),
        _ => at.as_ref().and_then(|a| a.2),
    };
    let parser_location = at.map(|(file, line, _)| (file, line));
    let crash_function = crash.pretty_stack.iter().rev().find_map(|e| {
        ON_FUNCTION
            .captures(&e.text)
            .or_else(|| FUNCTION_BODY.captures(&e.text))
            .map(|c| c[1].to_string())
    });
    Hints {
        parser_location,
        parser_column,
        crash_function,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crash::{parse, ExitInfo};

    fn corpus_crash(name: &str) -> Crash {
        let dir = format!("{}/corpus/{name}", env!("CARGO_MANIFEST_DIR"));
        let text = std::fs::read_to_string(format!("{dir}/stderr.txt")).unwrap();
        let rc: i32 = std::fs::read_to_string(format!("{dir}/rc.txt"))
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        parse(
            &text,
            ExitInfo {
                code: Some(rc),
                signal: None,
            },
        )
        .unwrap()
    }

    #[test]
    fn frontend_crash_gives_the_parser_location_and_function() {
        let h = hints_for(&corpus_crash("fe-gh59446"));
        let (file, line) = h.parser_location.unwrap();
        assert!(file.ends_with("GH59446.cpp"), "{file}");
        assert!(line >= 5, "{line}");
        assert!(h.parser_column.is_some_and(|c| c > 0));
        assert_eq!(h.crash_function.as_deref(), Some("GH59446::f"));
    }

    #[test]
    fn backend_crash_gives_the_function() {
        let h = hints_for(&corpus_crash("amdgpu-si-flat"));
        assert_eq!(
            h.crash_function.as_deref(),
            Some("_Z23complex_stack_operationiPf")
        );
    }

    #[test]
    fn the_column_is_the_current_parser_tokens_on_the_crash_line() {
        // big-gh200682: "77:27: current parser token ')'" and, innermost, "77:16: in compound
        // statement ('{}')": the line is the innermost's, the column the token's.
        let dir = format!("{}/corpus/big-gh200682", env!("CARGO_MANIFEST_DIR"));
        let text = std::fs::read_to_string(format!("{dir}/stderr.txt")).unwrap();
        let exit = ExitInfo {
            code: Some(139),
            signal: None,
        };
        let h = hints_for(&parse(&text, exit).unwrap());
        assert_eq!(
            h.parser_location,
            Some(("big_gh200682.cpp".to_string(), 77))
        );
        assert_eq!(h.parser_column, Some(27));
    }
}
