//! Dimensions confounded by preprocessing, probed again on the original command.
//!
//! Why this exists: the probes run on the case's preprocessed input, which
//! was made for the command's own `-std`, `-O`, `-march`, GPU arch … (libstdc++ headers
//! preprocessed for C++17 do not compile as C++11; `__OPTIMIZE__`, `__riscv_vector` and
//! `__gfx906__` are already expanded). A value that loses the crash there may only have lost
//! the input, so "`-std` is needed" was a false claim on a crash that also crashes with
//! `-std=c++11`. Such rows are probed again on the original command in its build directory
//! (when its sources are still there and it still crashes there), or reported as "not
//! testable on preprocessed input", never as needed. `-g` changes no predefined macro and
//! is not confounded. Pure: the caller's [`Tester`] runs the original command in its
//! directory.

use super::ddmin::Tester;
use super::{dims, riscv, Dimension, Flags};

/// Rows whose values change what the preprocessor produces (predefined macros, headers).
pub(crate) fn is_confounded(name: &str) -> bool {
    matches!(
        name,
        "-O" | "-std"
            | "-march"
            | "vector extension"
            | "-mabi"
            | "-mrvv-vector-bits"
            | "offload arch"
    )
}

/// Replaces (or qualifies) the confounded rows of `flags`. `base`: the original command,
/// ready to run in its build directory (`-o /dev/null`, no crash diagnostics), or why there
/// is none; `t` runs it there. Rows are re-probed only when the original command still gives
/// the case's crash.
pub(crate) fn recheck(flags: &mut Flags, base: Result<&[String], String>, t: &mut Tester<'_>) {
    if !flags.reproduced {
        return;
    }
    let confounded: Vec<usize> = (0..flags.dimensions.len())
        .filter(|&i| is_confounded(&flags.dimensions[i].name))
        .collect();
    if confounded.is_empty() {
        return;
    }
    let base = base.and_then(|b| {
        let o = t.one(b);
        if o.is_same() {
            Ok(b)
        } else {
            Err(format!(
                "the original command no longer gives this crash in its build directory ({})",
                o.as_str()
            ))
        }
    });
    let b = match base {
        Ok(b) => b,
        Err(why) => {
            for &i in &confounded {
                untestable(&mut flags.dimensions[i], &why);
                if flags.dimensions[i].name == "vector extension" {
                    flags.vector_needed = flags.dimensions[i].needed;
                }
            }
            flags.original_note = Some(why);
            return;
        }
    };
    let wanted = |name: &str| confounded.iter().any(|&i| flags.dimensions[i].name == name);
    let plans: Vec<dims::Plan> = dims::plan_all(b, b, false)
        .into_iter()
        .filter(|p| wanted(&p.name))
        .collect();
    let all: Vec<Vec<String>> = plans
        .iter()
        .flat_map(|p| p.candidates.iter().map(|(_, argv)| argv.clone()))
        .collect();
    t.batch(&all);
    let mut rows: Vec<Dimension> = plans.into_iter().map(|p| p.finish(t)).collect();
    let mut vector_needed = None;
    if wanted("-march") || wanted("vector extension") {
        if let Some(rv) = riscv::driver_march(b, b, t) {
            vector_needed = Some(rv.vector_needed);
            rows.extend(rv.dimensions);
        }
    }
    for &i in &confounded {
        let name = flags.dimensions[i].name.clone();
        match rows.iter().find(|r| r.name == name) {
            Some(r) => {
                let mut r = r.clone();
                r.note = format!(
                    "{}; probed on the original command in its build directory",
                    r.note
                );
                flags.dimensions[i] = r;
                flags.on_original.push(name);
            }
            None => untestable(
                &mut flags.dimensions[i],
                "the original command has no such option to vary",
            ),
        }
    }
    if let Some(v) = vector_needed {
        flags.vector_needed = v;
    }
}

/// A row probed only on preprocessed input: a value that lost the crash there says nothing
/// about the source, so the row claims nothing is needed; what it saw stays, qualified.
fn untestable(d: &mut Dimension, why: &str) {
    if d.tried.iter().any(|t| !t.outcome.is_same()) || d.needed == Some(true) {
        d.needed = None;
        d.note = format!(
            "not testable on preprocessed input ({why}); on the preprocessed input: {}",
            d.note
        );
    } else {
        d.note = format!("{} (on the preprocessed input)", d.note);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::flags::{analyse, Outcome};

    fn v(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    /// Input preprocessed for C++17: every other -std gives errors. The original source
    /// crashes with every -std (as the destructor-lookup case does).
    fn preprocessed(cands: &[Vec<String>]) -> Vec<Outcome> {
        cands
            .iter()
            .map(|c| {
                let std = c.iter().find_map(|a| a.strip_prefix("-std="));
                match std {
                    None | Some("c++17") | Some("c++20") => Outcome::SameCrash,
                    _ => Outcome::Error,
                }
            })
            .collect()
    }

    fn original(cands: &[Vec<String>]) -> Vec<Outcome> {
        vec![Outcome::SameCrash; cands.len()]
    }

    fn std_row(f: &Flags) -> &Dimension {
        f.dimensions.iter().find(|d| d.name == "-std").unwrap()
    }

    #[test]
    fn a_std_that_fails_only_on_preprocessed_input_is_not_needed() {
        let replay = v("clang++ -std=c++17 -c -o /dev/null -x c++-cpp-output input.ii");
        let oracle = preprocessed;
        let mut t = Tester::new(&oracle);
        let mut f = analyse(&replay, &mut t);
        assert_eq!(std_row(&f).needed, Some(true), "the confounded answer");
        let base = v("clang++ -std=c++17 -O1 -c -o /dev/null src/widget.cpp");
        let orig = original;
        let mut t2 = Tester::new(&orig);
        recheck(&mut f, Ok(&base), &mut t2);
        let r = std_row(&f);
        assert_eq!(r.needed, Some(false), "{r:#?}");
        assert!(
            r.note
                .ends_with("; probed on the original command in its build directory"),
            "{}",
            r.note
        );
        assert!(f.on_original.contains(&"-std".to_string()));
        assert!(t2.runs() > 1);
    }

    #[test]
    fn without_the_original_a_confounded_row_is_never_needed() {
        let replay = v("clang++ -std=c++17 -c -o /dev/null -x c++-cpp-output input.ii");
        let oracle = preprocessed;
        let mut t = Tester::new(&oracle);
        let mut f = analyse(&replay, &mut t);
        let none = |c: &[Vec<String>]| vec![Outcome::NoCrash; c.len()];
        let mut t2 = Tester::new(&none);
        let base = v("clang++ -std=c++17 -c -o /dev/null src/widget.cpp");
        recheck(&mut f, Ok(&base), &mut t2);
        let r = std_row(&f);
        assert_eq!(r.needed, None);
        assert!(
            r.note.starts_with("not testable on preprocessed input (the original command no longer gives this crash"),
            "{}",
            r.note
        );
        assert_eq!(t2.runs(), 1);
        // -g is not confounded: its row stays as probed.
        let g = f.dimensions.iter().find(|d| d.name == "-g").unwrap();
        assert!(!g.note.contains("preprocessed"), "{}", g.note);
        let mut f = analyse(&replay, &mut Tester::new(&oracle));
        recheck(&mut f, Err("the source is gone".into()), &mut t2);
        assert_eq!(std_row(&f).needed, None);
        assert_eq!(f.original_note.as_deref(), Some("the source is gone"));
    }
}
