//! `icepick inspect BINARY… [--sysroot DIR] [--json]`: the static vector scan (experiment E3,
//! `docs/classify.md`) of ELF files and, unless `--no-deps`, their `DT_NEEDED` closure resolved as the
//! loader would. Output: a table, or one JSON object (`files[]`, `verdict`, `missing[]`,
//! `errors[]`).

use std::path::PathBuf;

use anyhow::Context;
use clap::Args;
use serde::Serialize;

use crate::elf::{self, closure::Via, Counts, FileScan, Verdict};
use crate::error;

/// Arguments of `icepick inspect`.
#[derive(Debug, Args)]
pub struct InspectArgs {
    /// ELF files (executables or shared objects) to scan.
    #[arg(required = true, value_name = "BINARY")]
    binaries: Vec<PathBuf>,
    /// Resolve absolute library paths (search directories, PT_INTERP, RPATH/RUNPATH entries)
    /// inside this directory, as for a foreign system's files.
    #[arg(long, value_name = "DIR")]
    sysroot: Option<PathBuf>,
    /// Scan only the files named, not their shared libraries.
    #[arg(long)]
    no_deps: bool,
    /// Print one JSON object instead of a table.
    #[arg(long)]
    json: bool,
    /// How many individual vector instructions to list per file in the JSON (all are counted).
    #[arg(long, default_value_t = 256, value_name = "N")]
    list: usize,
}

#[derive(Debug, Serialize)]
struct Report {
    schema_version: u32,
    verdict: Verdict,
    sysroot: Option<PathBuf>,
    totals: Counts,
    files: Vec<FileReport>,
    missing: Vec<elf::closure::Missing>,
    errors: Vec<ErrorReport>,
}

#[derive(Debug, Serialize)]
struct ErrorReport {
    path: PathBuf,
    error: String,
}

#[derive(Debug, Serialize)]
struct FileReport {
    path: PathBuf,
    /// The path the loader would open (before symlinks are resolved).
    found_as: PathBuf,
    via: Via,
    needed_by: Option<PathBuf>,
    machine: String,
    class: u8,
    arch: Option<String>,
    e_flags: u32,
    riscv_flags: Option<elf::RiscvFlags>,
    #[serde(flatten)]
    counts: Counts,
    verdict: Verdict,
    code_bytes: u64,
    functions: Vec<FunctionReport>,
    /// The first `--list` vector instructions, in address order.
    instructions: Vec<elf::Hit>,
    instructions_truncated: bool,
    scan_error: Option<String>,
}

#[derive(Debug, Serialize)]
struct FunctionReport {
    /// Demangled.
    name: String,
    /// As in the symbol table.
    symbol: String,
    address: Option<u64>,
    #[serde(flatten)]
    counts: Counts,
}

/// Runs `icepick inspect`.
pub fn run(args: InspectArgs) -> anyhow::Result<u8> {
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    let sysroot = args.sysroot.as_ref().map(|s| super::absolutize(&cwd, s));
    if let Some(s) = &sysroot {
        anyhow::ensure!(s.is_dir(), "--sysroot {} is not a directory", s.display());
    }
    let roots: Vec<PathBuf> = args
        .binaries
        .iter()
        .map(|b| super::absolutize(&cwd, b))
        .collect();
    let mut closure = elf::resolve(&elf::HostFs, &roots, sysroot.as_deref());
    if args.no_deps {
        closure.files.retain(|f| f.via == Via::Argument);
        closure.missing.clear();
    }
    let bytes: Vec<&[u8]> = closure.files.iter().map(|f| f.bytes.as_slice()).collect();
    let scans = elf::scan_all(&bytes);
    let mut totals = Counts::default();
    let files: Vec<FileReport> = closure
        .files
        .iter()
        .zip(scans)
        .map(|(f, s)| {
            let (scan, scan_error) = match s {
                Ok(s) => (s, None),
                Err(e) => (empty_scan(f.header.clone()), Some(e.to_string())),
            };
            totals.add(&scan.counts);
            file_report(f, &closure, scan, scan_error, args.list)
        })
        .collect();
    let report = Report {
        schema_version: 1,
        verdict: Verdict::of(&totals),
        sysroot,
        totals,
        files,
        missing: closure.missing,
        errors: closure
            .errors
            .into_iter()
            .map(|(path, error)| ErrorReport { path, error })
            .collect(),
    };
    let out = if args.json {
        serde_json::to_string_pretty(&report)? + "\n"
    } else {
        table(&report)
    };
    emit(&out)?;
    Ok(if report.errors.is_empty() {
        error::OK
    } else {
        error::FAILED
    })
}

/// Writes to stdout; a closed pipe (`| head`) is not an error.
pub(super) fn emit(text: &str) -> anyhow::Result<()> {
    use std::io::Write;
    let mut out = crate::cli::term::stdout();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(e.into()),
        _ => Ok(()),
    }
}

fn empty_scan(header: elf::Header) -> FileScan {
    FileScan {
        header,
        arch: None,
        counts: Counts::default(),
        functions: Vec::new(),
        instructions: Vec::new(),
        code_bytes: 0,
    }
}

fn file_report(
    f: &elf::closure::Resolved,
    closure: &elf::Closure,
    scan: FileScan,
    scan_error: Option<String>,
    list: usize,
) -> FileReport {
    let truncated = scan.instructions.len() > list
        || scan.counts.vector_instructions > scan.instructions.len() as u64;
    FileReport {
        path: f.path.clone(),
        found_as: f.found_as.clone(),
        via: f.via,
        needed_by: f.needed_by.map(|i| closure.files[i].path.clone()),
        machine: scan.header.machine.clone(),
        class: scan.header.class,
        arch: scan.arch,
        e_flags: scan.header.e_flags,
        riscv_flags: scan.header.riscv_flags.clone(),
        counts: scan.counts,
        verdict: Verdict::of(&scan.counts),
        code_bytes: scan.code_bytes,
        functions: scan
            .functions
            .into_iter()
            .map(|fc| FunctionReport {
                name: crate::crash::demangle(&fc.name),
                symbol: fc.name,
                address: fc.address,
                counts: fc.counts,
            })
            .collect(),
        instructions: scan.instructions.into_iter().take(list).collect(),
        instructions_truncated: truncated,
        scan_error,
    }
}

/// The functions with vector instructions, most first (20 at most), one line each.
fn function_lines(r: &Report) -> String {
    use std::fmt::Write;
    let mut funcs: Vec<(&str, &FunctionReport)> = r
        .files
        .iter()
        .flat_map(|f| {
            let base = f.path.file_name().and_then(|n| n.to_str()).unwrap_or("?");
            f.functions.iter().map(move |fc| (base, fc))
        })
        .collect();
    funcs.sort_by(|a, b| {
        b.1.counts
            .vector_instructions
            .cmp(&a.1.counts.vector_instructions)
    });
    let mut s = String::new();
    if funcs.is_empty() {
        return s;
    }
    let _ = writeln!(s, "functions with vector instructions (most first):");
    for (file, fc) in funcs.iter().take(20) {
        let _ = writeln!(
            s,
            "  {:>6}  {file}: {} (rvv1 {}, xthead {}, csr {})",
            fc.counts.vector_instructions,
            fc.name,
            fc.counts.rvv1_only,
            fc.counts.xthead_only,
            fc.counts.vector_csr
        );
    }
    if funcs.len() > 20 {
        let _ = writeln!(s, "  … {} more (see --json)", funcs.len() - 20);
    }
    s
}

/// The human-readable table.
fn table(r: &Report) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    let names: Vec<String> = r
        .files
        .iter()
        .map(|f| f.path.display().to_string())
        .collect();
    let w = names.iter().map(String::len).max().unwrap_or(4).max(4);
    let _ = writeln!(
        s,
        "{:<w$}  {:<8} {:>6} {:>5} {:>6} {:>4}  ARCH",
        "FILE", "MACHINE", "VECTOR", "RVV1", "XTHEAD", "CSR"
    );
    for (f, name) in r.files.iter().zip(&names) {
        let _ = writeln!(
            s,
            "{:<w$}  {:<8} {:>6} {:>5} {:>6} {:>4}  {}",
            name,
            f.machine,
            f.counts.vector_instructions,
            f.counts.rvv1_only,
            f.counts.xthead_only,
            f.counts.vector_csr,
            f.arch.as_deref().unwrap_or("-"),
        );
    }
    let t = &r.totals;
    let _ = writeln!(
        s,
        "\nverdict: {} ({} vector instructions in {} file(s): {} RVV-1.0-only, {} XTheadVector-only, \
         {} vector CSR accesses)",
        r.verdict.as_str(),
        t.vector_instructions,
        r.files.len(),
        t.rvv1_only,
        t.xthead_only,
        t.vector_csr
    );
    s.push_str(&function_lines(r));
    for m in &r.missing {
        let _ = writeln!(
            s,
            "not found: {} (needed by {})",
            m.name,
            m.needed_by.display()
        );
    }
    for e in &r.errors {
        let _ = writeln!(s, "error: {}: {}", e.path.display(), e.error);
    }
    s
}
