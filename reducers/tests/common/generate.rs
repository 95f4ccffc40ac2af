//! Generated inputs that are large in the ways real translation units are: many main-file
//! declarations under line markers (an amalgamation such as sqlite3.c), and template
//! arguments nested very deep. Shared by the planning tests and `examples/plan_bench.rs`.

/// A preprocessed translation unit of about `bytes` bytes: a short header, then main-file
/// functions of a few lines each, every one calling the header's function.
pub fn main_file(bytes: usize) -> Vec<u8> {
    let mut out = String::with_capacity(bytes + 256);
    out.push_str("# 1 \"big.c\"\n# 1 \"<built-in>\" 1\n# 1 \"big.c\" 2\n");
    out.push_str("# 1 \"h.h\" 1\nstruct S { int a; };\nint helper(int);\n# 2 \"big.c\" 2\n");
    let mut k = 0usize;
    while out.len() < bytes {
        out.push_str(&format!(
            "int f{k}(int x) {{\n  int y = x + {k};\n  return helper(y);\n}}\n\n"
        ));
        k += 1;
    }
    out.push_str("int main() { return f0(1); }\n");
    out.into_bytes()
}

/// A main file whose one variable has a class template's argument nested `depth` deep
/// (`A<A<…A<int>…>> x;`, closed by `>>` tokens), and a call of a function template with an
/// argument nested as deep; a header before it declares what nothing uses.
pub fn nested_templates(depth: usize) -> Vec<u8> {
    let mut out = String::with_capacity(8 * depth + 256);
    out.push_str("# 1 \"deep.cc\"\n# 1 \"h.h\" 1\nint unused;\n# 2 \"deep.cc\" 2\n");
    out.push_str("template <class T> struct A { T t; };\n");
    out.push_str("template <class T> int f(T) { return 0; }\n");
    for call in [false, true] {
        out.push_str(if call { "int g() { return f<" } else { "" });
        out.push_str(&"A<".repeat(depth));
        out.push_str("int");
        out.push_str(&">".repeat(depth));
        out.push_str(if call { ">(0); }\n" } else { " x;\n" });
    }
    out.push_str("int main() { return g(); }\n");
    out.into_bytes()
}

/// Namespaces nested `depth` deep in a header under line markers, with a few declarations in
/// the innermost (one the main file uses, one nothing uses, and a line marker between them)
/// and a function of the main file calling the used one.
pub fn nested_namespaces(depth: usize) -> Vec<u8> {
    let mut out = String::with_capacity(16 * depth + 256);
    out.push_str("# 1 \"nest.cc\"\n# 1 \"h.h\" 1\n");
    for k in 0..depth {
        out.push_str(&format!("namespace n{k} {{\n"));
    }
    out.push_str("struct Used { int a; };\n# 7 \"h.h\"\nstruct Unused { int b; };\n");
    out.push_str("int used(Used);\n");
    out.push_str(&"}\n".repeat(depth));
    out.push_str("# 2 \"nest.cc\" 2\n");
    let path: String = (0..depth).map(|k| format!("n{k}::")).collect();
    out.push_str(&format!(
        "int main() {{ return {path}used({path}Used{{1}}); }}\n"
    ));
    out.into_bytes()
}

/// The input a benchmark argument names: `main:MB` ([`main_file`] of that many megabytes),
/// `deep:N` ([`nested_templates`]) or `nest:N` ([`nested_namespaces`]).
#[allow(dead_code)] // Used by the examples, not by every test that includes this file.
pub fn named(arg: &str) -> Option<Vec<u8>> {
    let (kind, n) = arg.split_once(':')?;
    let n: usize = n.parse().ok()?;
    match kind {
        "main" => Some(main_file(n << 20)),
        "deep" => Some(nested_templates(n)),
        "nest" => Some(nested_namespaces(n)),
        _ => None,
    }
}
