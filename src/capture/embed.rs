//! The files a C23 `#embed` names, carried into the case.
//!
//! `-E` replaces an `#embed` by the list of its bytes, and a crash that needs the directive
//! itself (CodeGen of an embed annotation) is lost that way; `-E -frewrite-includes` keeps
//! the directive, but the file it names is then looked up from the case directory, where it
//! is not. So the files a preprocessed input embeds are copied into the case's
//! [`EMBED_DIR`], and the replay finds them there with `--embed-dir=embed`, from the case
//! directory, wherever the case goes.

use std::path::{Path, PathBuf};
use std::sync::LazyLock;

use regex::Regex;

/// The case's subdirectory that holds embedded files, and the replay's `--embed-dir`.
pub const EMBED_DIR: &str = "embed";

/// The largest file carried into a case: an embed of a huge resource is the build's to keep.
const MAX_BYTES: u64 = 64 << 20;

static EMBED: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"(?m)^[ \t]*#[ \t]*embed[ \t]+(?:"([^"\n]+)"|<([^>\n]+)>)"#).expect("valid regex")
});

/// A file an `#embed` names: as written, and whether it was `<angled>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Named {
    pub name: String,
    pub angled: bool,
}

/// The files the `#embed` directives of a preprocessed input name, in order, once each.
pub fn named(text: &str) -> Vec<Named> {
    let mut out: Vec<Named> = Vec::new();
    for c in EMBED.captures_iter(text) {
        let n = match (c.get(1), c.get(2)) {
            (Some(q), _) => Named {
                name: q.as_str().to_string(),
                angled: false,
            },
            (_, Some(a)) => Named {
                name: a.as_str().to_string(),
                angled: true,
            },
            _ => continue,
        };
        if !out.contains(&n) {
            out.push(n);
        }
    }
    out
}

/// Where clang finds `n`: a quoted name first beside the source, then in each `--embed-dir`
/// (relative ones from `cwd`); only regular files.
pub fn resolve(n: &Named, source_dir: &Path, embed_dirs: &[String], cwd: &Path) -> Option<PathBuf> {
    let mut places = Vec::new();
    if Path::new(&n.name).is_absolute() {
        places.push(PathBuf::from(&n.name));
    } else {
        if !n.angled {
            places.push(source_dir.join(&n.name));
        }
        places.extend(embed_dirs.iter().map(|d| cwd.join(d).join(&n.name)));
    }
    places
        .into_iter()
        .find(|p| std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.len() <= MAX_BYTES))
}

/// The name a file gets inside [`EMBED_DIR`]: the name as written when it is a plain relative
/// path (so `<dir/x.bin>` still resolves), else its last component.
pub fn case_name(n: &Named) -> Option<String> {
    let p = Path::new(&n.name);
    let plain = p.is_relative()
        && p.components()
            .all(|c| matches!(c, std::path::Component::Normal(_)));
    if plain {
        Some(n.name.clone())
    } else {
        p.file_name().and_then(|f| f.to_str()).map(str::to_string)
    }
}

/// The input with each directive that names `n` naming `to` instead (`<to>`, found in the
/// embed directory): for a name the case cannot hold at the same path (`../x`, `/abs/x`).
pub fn renamed(text: &str, n: &Named, to: &str) -> String {
    let written = if n.angled {
        format!("<{}>", n.name)
    } else {
        format!("\"{}\"", n.name)
    };
    EMBED
        .replace_all(text, |c: &regex::Captures<'_>| {
            let whole = &c[0];
            if whole.ends_with(&written) {
                format!("{}<{to}>", &whole[..whole.len() - written.len()])
            } else {
                whole.to_string()
            }
        })
        .into_owned()
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_name_outside_the_case_is_renamed_in_its_directives_only() {
        let n = Named {
            name: "../x.bin".into(),
            angled: false,
        };
        let text = "#embed \"../x.bin\" limit(2)\nchar *s = \"../x.bin\";\n";
        assert_eq!(
            renamed(text, &n, "x.bin"),
            "#embed <x.bin> limit(2)\nchar *s = \"../x.bin\";\n"
        );
    }

    use super::*;

    #[test]
    fn directives_are_found_in_both_forms_once_each() {
        let text = "const char a[] = {\n#embed \"data.bin\" limit(2)\n};\n  #  embed <res/x.bin>\n#embed \"data.bin\"\n// #embed \"no.bin\"\nint embed;\n";
        assert_eq!(
            named(text),
            [
                Named {
                    name: "data.bin".into(),
                    angled: false
                },
                Named {
                    name: "res/x.bin".into(),
                    angled: true
                }
            ]
        );
        assert!(named("#include \"x.h\"\n").is_empty());
    }

    #[test]
    fn quoted_names_look_beside_the_source_first_angled_only_in_embed_dirs() {
        let tmp = tempfile::tempdir().unwrap();
        let src = tmp.path().join("src");
        let res = tmp.path().join("res");
        std::fs::create_dir_all(&src).unwrap();
        std::fs::create_dir_all(&res).unwrap();
        std::fs::write(src.join("a.bin"), "1").unwrap();
        std::fs::write(res.join("a.bin"), "2").unwrap();
        let q = Named {
            name: "a.bin".into(),
            angled: false,
        };
        let a = Named {
            name: "a.bin".into(),
            angled: true,
        };
        let dirs = ["res".to_string()];
        assert_eq!(
            resolve(&q, &src, &dirs, tmp.path()),
            Some(src.join("a.bin"))
        );
        assert_eq!(
            resolve(&a, &src, &dirs, tmp.path()),
            Some(res.join("a.bin"))
        );
        assert_eq!(resolve(&a, &src, &[], tmp.path()), None);
        // A directory or a special file is never carried.
        let d = Named {
            name: "res".into(),
            angled: false,
        };
        assert_eq!(resolve(&d, tmp.path(), &[], tmp.path()), None);
        let z = Named {
            name: "/dev/zero".into(),
            angled: false,
        };
        assert_eq!(resolve(&z, tmp.path(), &[], tmp.path()), None);
    }

    #[test]
    fn names_inside_the_case_stay_below_its_embed_dir() {
        let n = |s: &str| Named {
            name: s.into(),
            angled: false,
        };
        assert_eq!(case_name(&n("res/x.bin")).as_deref(), Some("res/x.bin"));
        assert_eq!(case_name(&n("../x.bin")).as_deref(), Some("x.bin"));
        assert_eq!(case_name(&n("/etc/passwd")).as_deref(), Some("passwd"));
        assert_eq!(case_name(&n("./x.bin")).as_deref(), Some("x.bin"));
    }
}
