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

/// Entries of clang's pretty stack that name where a template was *defined*, not where the
/// parser stands: "instantiating function definition 'std::count<…>'" points into a header
/// the parser left long ago, so cutting after it would cut off the code being parsed.
fn is_instantiation(entry: &crate::crash::PrettyEntry) -> bool {
    entry.text.contains(": instantiating ")
}

/// Hints for the reducer from a crash's pretty stack: where the parser stood (the current
/// token's entry, else the innermost entry that is not a template instantiation) and the
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
    // The current token is where the parser stands; without one (a crash after parsing), the
    // innermost entry the parser left.
    let at = crash
        .pretty_stack
        .iter()
        .filter(|e| e.text.contains("current parser token"))
        .find_map(|e| located(&e))
        .or_else(|| {
            crash
                .pretty_stack
                .iter()
                .rev()
                .filter(|e| !is_instantiation(e))
                .find_map(|e| located(&e))
        });
    let parser_column = at.as_ref().and_then(|a| a.2);
    let parser_location = at.map(|(file, line, _)| (file, line));
    let crash_function = crash.pretty_stack.iter().rev().find_map(|e| {
        ON_FUNCTION
            .captures(&e.text)
            .or_else(|| FUNCTION_BODY.captures(&e.text))
            .map(|c| c[1].to_string())
    });
    let instantiations = crash.pretty_stack.iter().filter(|e| is_instantiation(e));
    let sites = instantiations
        .clone()
        .filter_map(|e| located(&e).map(|(file, line, _)| (file, line)))
        .collect();
    let instantiated = instantiations
        .clone()
        .next()
        .and_then(|e| instantiated_name(&e.text));
    Hints {
        location: parser_location,
        column: parser_column,
        function: crash_function,
        sites,
        instantiated,
        located_in: None,
    }
}

/// The unqualified name an "instantiating … 'ns::name<args>'" entry names, when it is a plain
/// identifier (not a lambda's `operator()`, not an operator).
fn instantiated_name(entry: &str) -> Option<String> {
    let quoted = entry.split_once(" '")?.1.strip_suffix('\'')?;
    let mut depth = 0usize;
    let mut plain = String::new();
    for c in quoted.chars() {
        match c {
            '<' => depth += 1,
            '>' => depth = depth.checked_sub(1)?,
            _ if depth == 0 => plain.push(c),
            _ => {}
        }
    }
    let name = plain.rsplit("::").next()?;
    let ident = name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    (ident && name != "operator").then(|| name.to_string())
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

    fn corpus_crash_rc(name: &str, rc: i32) -> Crash {
        let dir = format!("{}/corpus/{name}", env!("CARGO_MANIFEST_DIR"));
        let text = std::fs::read_to_string(format!("{dir}/stderr.txt")).unwrap();
        let exit = ExitInfo {
            code: Some(rc),
            signal: None,
        };
        parse(&text, exit).unwrap()
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
        // statement ('{}')": the token's.
        let h = hints_for(&corpus_crash_rc("big-gh200682", 139));
        assert_eq!(h.location, Some(("big_gh200682.cpp".to_string(), 77)));
        assert_eq!(h.column, Some(27));
    }

    #[test]
    fn a_crash_inside_an_instantiation_gives_where_the_parser_stood() {
        // llvm-project#171509 reached through std::count: the innermost entries name the
        // headers' template definitions, the parser is in the user's function.
        let stack = "Stack dump:
0.\tProgram arguments: /usr/lib/llvm-19/bin/clang -std=c++20 -c v3.ii
1.\tv3.cpp:91:77: current parser token ')'
2.\tv3.cpp:89:1: parsing namespace 'nav'
3.\tv3.cpp:90:75: parsing function body 'nav::count_north'
4.\tv3.cpp:90:75: in compound statement ('{}')
5.\t/usr/include/c++/12/bits/stl_algo.h:4026:5: instantiating function definition 'std::count<int *, int>'
6.\t/usr/include/c++/12/bits/predefined_ops.h:269:2: instantiating function definition 'f'
 #0 0x00007ff8d88bfcc8 (/usr/lib/llvm-19/bin/../lib/libclang-cpp.so.19.1+0x1cbfcc8)
";
        let exit = ExitInfo {
            code: Some(139),
            signal: None,
        };
        let h = hints_for(&parse(stack, exit).unwrap());
        assert_eq!(h.location, Some(("v3.cpp".to_string(), 91)));
        assert_eq!(h.column, Some(77));
        assert_eq!(h.function.as_deref(), Some("nav::count_north"));
        assert_eq!(
            h.sites,
            [
                ("/usr/include/c++/12/bits/stl_algo.h".to_string(), 4026),
                ("/usr/include/c++/12/bits/predefined_ops.h".to_string(), 269)
            ]
        );
        assert_eq!(h.instantiated.as_deref(), Some("count"));
    }

    #[test]
    fn a_crash_in_an_instantiation_at_the_end_of_the_file_names_the_templates() {
        // big-gh45969: the parser is at `<eof>`; the stack names where f, apply and the
        // lambda are defined, outermost first.
        let h = hints_for(&corpus_crash_rc("big-gh45969", 139));
        assert_eq!(h.location, None);
        let lines: Vec<u32> = h.sites.iter().map(|s| s.1).collect();
        assert_eq!(lines, [67, 62, 69]);
        assert!(h.sites.iter().all(|s| s.0 == "big_gh45969.cpp"));
        assert_eq!(h.instantiated.as_deref(), Some("f"));
        let h = hints_for(&corpus_crash_rc("big-gh122417", 139));
        assert_eq!(h.instantiated.as_deref(), Some("parseRequestVariant"));
    }

    #[test]
    fn only_plain_names_are_instantiated_names() {
        let name = |e: &str| instantiated_name(e);
        assert_eq!(
            name("a.cpp:3:1: instantiating function definition 'ns::g<std::vector<int>>'")
                .as_deref(),
            Some("g")
        );
        assert_eq!(
            name("a.cpp:3:1: instantiating function definition 'f()::(anonymous class)::operator()<>'"),
            None
        );
        assert_eq!(
            name("a.cpp:3:1: instantiating class definition 'S<1>'").as_deref(),
            Some("S")
        );
        assert_eq!(
            name("a.cpp:3:1: instantiating function definition 'operator+<int>'"),
            None
        );
        assert_eq!(name("no quote"), None);
    }
}
