//! The repository stands alone on a fresh Debian 12 machine: nothing reads or cites
//! a sibling `shared` folder, and `scripts/setup`'s table names, for every package, a file that
//! package really installs (so a missing package is noticed and installed).

use std::path::Path;
use std::process::Command;

/// The folders and files a clone holds that code, tests, scripts or docs live in.
const TREES: &[&str] = &[
    "src",
    "tests",
    "reducers",
    "scripts",
    "corpus",
    "docs",
    "README.md",
];

fn text_files(path: &Path, out: &mut Vec<std::path::PathBuf>) {
    if path.is_dir() {
        for e in std::fs::read_dir(path).unwrap() {
            let p = e.unwrap().path();
            if p.file_name().is_some_and(|n| n == "target") {
                continue;
            }
            text_files(&p, out);
        }
    } else if path.is_file() {
        out.push(path.to_path_buf());
    }
}

#[test]
fn nothing_reads_or_cites_the_shared_folder_beside_the_repository() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    // Spelled in pieces so this file does not match itself.
    let needles = [format!("..{}shared", '/'), format!("/work{}shared", '/')];
    let mut files = Vec::new();
    for t in TREES {
        text_files(&root.join(t), &mut files);
    }
    assert!(files.len() > 100, "{}", files.len());
    let mut found = Vec::new();
    for f in &files {
        let Ok(bytes) = std::fs::read(f) else {
            continue;
        };
        let text = String::from_utf8_lossy(&bytes);
        for (n, line) in text.lines().enumerate() {
            if needles.iter().any(|s| line.contains(s.as_str())) {
                found.push(format!("{}:{}: {line}", f.display(), n + 1));
            }
        }
    }
    assert!(found.is_empty(), "{}", found.join("\n"));
}

/// `scripts/setup` installs a package when its file is missing: that file must be one the
/// package installs (`dpkg -S` names it), or the check passes on one machine and fails on
/// another. The `--bench` baselines are not installed for the tests and are left out.
#[test]
fn setup_checks_a_file_each_package_really_installs() {
    let setup =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/setup"))
            .unwrap();
    let table = setup
        .split_once("packages=(\n")
        .and_then(|(_, rest)| rest.split_once("\n)"))
        .expect("a packages=( … ) table in scripts/setup")
        .0;
    let rows: Vec<(&str, &str)> = table
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| l.split_once(' ').expect("package and file"))
        .collect();
    assert!(rows.len() >= 15, "{rows:?}");
    for (package, file) in rows {
        assert!(
            Path::new(file).exists(),
            "{file} ({package}) is missing: run scripts/setup"
        );
        let o = Command::new("dpkg").args(["-S", file]).output().unwrap();
        let owners = String::from_utf8_lossy(&o.stdout);
        let owners: Vec<&str> = owners
            .lines()
            .filter_map(|l| l.split_once(": "))
            .flat_map(|(pkgs, _)| pkgs.split(", "))
            .map(|p| p.split(':').next().unwrap())
            .collect();
        assert!(
            owners.contains(&package),
            "scripts/setup checks {file} for {package}, but dpkg -S says {owners:?}"
        );
    }
}
