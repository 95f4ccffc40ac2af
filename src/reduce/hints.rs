//! What a crash tells the reducer: where the parser was (frontend crashes) and which function
//! was being compiled (backend crashes), taken from clang's pretty stack.

use std::sync::LazyLock;

use reducers::passes::Hints;
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
        location: parser_location,
        column: parser_column,
        function: crash_function,
    }
}

static DEFINE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"(?m)^define [^@\n]*@(?:"([^"]+)"|([-A-Za-z0-9$._]+))\("#).expect("valid regex")
});

/// The function a verified IR reproducer (the case's `ir` section) kept, when it kept exactly
/// one: the function the crash needs. A backend crash in a module pass (`declare-to-assign`)
/// names no function in its pretty stack, so this is the reducer's only hint for
/// function-focus and the closure cut on a big TU.
pub fn ir_function(ir: &serde_json::Value) -> Option<String> {
    if ir["verified"].as_bool() != Some(true) {
        return None;
    }
    let text = ir["text"].as_str()?;
    let mut names = DEFINE
        .captures_iter(text)
        .filter_map(|c| c.get(1).or(c.get(2)).map(|m| m.as_str().to_string()));
    let first = names.next()?;
    names.next().is_none().then_some(first)
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
        let (file, line) = h.location.unwrap();
        assert!(file.ends_with("GH59446.cpp"), "{file}");
        assert!(line >= 5, "{line}");
        assert!(h.column.is_some_and(|c| c > 0));
        assert_eq!(h.function.as_deref(), Some("GH59446::f"));
    }

    #[test]
    fn a_verified_ir_reproducer_with_one_function_names_it() {
        // What `icepick ir` kept of corpus/big-hip-rv-gh75010 (declare-to-assign names no
        // function in the pretty stack).
        let text = "; RUN: opt -mtriple=riscv64 -passes='declare-to-assign' -disable-output < %s\n\
define <vscale x 2 x i32> @_Z9copy_tailu15__rvv_int32m1_tPv() {\n\
  call void @llvm.memcpy.p0.p0.i64(ptr null, ptr null, i64 0, i1 false)\n\
  ret <vscale x 2 x i32> zeroinitializer\n\
}\n\
declare void @llvm.memcpy.p0.p0.i64(ptr, ptr, i64, i1)\n";
        let ir = serde_json::json!({"verified": true, "text": text});
        assert_eq!(
            ir_function(&ir).as_deref(),
            Some("_Z9copy_tailu15__rvv_int32m1_tPv")
        );
        let quoted = serde_json::json!({"verified": true, "text": "define void @\"a b\"() {\n}\n"});
        assert_eq!(ir_function(&quoted).as_deref(), Some("a b"));
        // Not verified, or two functions: no hint.
        let unverified = serde_json::json!({"verified": false, "text": text});
        assert_eq!(ir_function(&unverified), None);
        let two = format!("{text}define void @g() {{\n  ret void\n}}\n");
        assert_eq!(
            ir_function(&serde_json::json!({"verified": true, "text": two})),
            None
        );
    }

    #[test]
    fn backend_crash_gives_the_function() {
        let h = hints_for(&corpus_crash("amdgpu-si-flat"));
        assert_eq!(
            h.function.as_deref(),
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
        assert_eq!(h.location, Some(("big_gh200682.cpp".to_string(), 77)));
        assert_eq!(h.column, Some(27));
    }
}
