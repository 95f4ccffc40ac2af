//! Prints how long passes take to plan their first candidate on large generated inputs: main
//! files of 8 MB and 22 MB under line markers (the size of an amalgamation such as sqlite3.c)
//! and template arguments nested 10^5 deep (and, when asked, namespaces nested deep).
//!
//! ```text
//! cargo run -p reducers --release --example plan_bench              # the closure pass
//! cargo run -p reducers --release --example plan_bench -- --all     # every built-in pass
//! cargo run -p reducers --release --example plan_bench -- --pass=hollow main:8
//! cargo run -p reducers --release --example plan_bench -- main:8 deep:100000
//! cargo run -p reducers --release --example plan_bench -- nest:20000
//! ```
//!
//! Inputs are `main:MB` (a main file of that many megabytes), `deep:N` (templates nested
//! `N` deep) or `nest:N` (namespaces nested `N` deep); a pass's time is that of building its plan and its first candidate.

use std::io::Write;
use std::time::Instant;

use reducers::passes::{CPass, Hints};

#[path = "../tests/common/generate.rs"]
mod generate;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let all = args.iter().any(|a| a == "--all");
    let named: Vec<&str> = args
        .iter()
        .filter_map(|a| a.strip_prefix("--pass="))
        .collect();
    let mut passes: Vec<CPass> = CPass::all();
    if !all {
        let wanted = if named.is_empty() {
            vec!["closure"]
        } else {
            named
        };
        passes.retain(|p| wanted.contains(&p.name()));
    }
    let mut inputs: Vec<String> = args
        .iter()
        .filter(|a| !a.starts_with("--"))
        .cloned()
        .collect();
    if inputs.is_empty() {
        inputs = ["main:8", "main:22", "deep:100000"]
            .map(String::from)
            .to_vec();
    }
    for input in &inputs {
        let Some(text) = generate::named(input) else {
            eprintln!("unknown input {input:?}: expected main:MB, deep:N or nest:N");
            std::process::exit(2);
        };
        for pass in &passes {
            let t = Instant::now();
            let first = pass.candidates(&text, &Hints::default()).next();
            let secs = t.elapsed().as_secs_f64();
            let got = first.map_or("none".to_string(), |c| format!("{} B", c.len()));
            println!(
                "{input:>12} {:>9} B  {:<18} {secs:8.3} s  first candidate: {got}",
                text.len(),
                pass.name()
            );
            std::io::stdout().flush().ok();
        }
    }
}
