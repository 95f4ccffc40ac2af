//! RISC-V ISA strings and `-target-feature` lists, as data.
//!
//! Why this exists: "does the crash need the vector extension?" is the first question on
//! RISC-V, and it is asked at two levels. A driver command names extensions in `-march`
//! (`rv64gcv_zba1p0`, where `g` stands for `imafd_zicsr_zifencei`); a cc1 command (a clang
//! crash reproducer) has the expanded list, one `-target-feature ±name` per known extension
//! (172 of them for `rv64gcv` on clang-19). Bisecting the cc1 list one feature at a time costs
//! a compiler run per feature, and most features are implied by others (`v` implies `zve64d`,
//! which implies `d`, `zve64f`, …): cc1 re-adds implied features, so removing one alone
//! changes nothing. This module parses and renders ISA strings, knows LLVM's implication
//! table, groups cc1 features into units "an extension with everything it implies", and maps
//! a set of kept features back to the shortest `-march` that names them. All pure.

use std::collections::BTreeSet;

/// One extension of an ISA string: its name and, when written, its version (`1p0`, `2`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ext {
    pub name: String,
    pub version: Option<String>,
}

impl Ext {
    fn new(name: &str) -> Self {
        Ext {
            name: name.to_string(),
            version: None,
        }
    }
}

/// A parsed `-march` ISA string.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Isa {
    /// 32 or 64.
    pub xlen: u32,
    /// `i` or `e`.
    pub base: char,
    /// Extensions in the order written, `g` expanded, without the base letter.
    pub exts: Vec<Ext>,
}

/// Why an ISA string could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IsaError {
    #[error("`{0}` does not start with rv32 or rv64")]
    NoBase(String),
    #[error("`{0}` has no base ISA letter (i, e or g) after rv32/rv64")]
    NoBaseLetter(String),
    #[error("`{0}`: unexpected `{1}`")]
    Unexpected(String, char),
}

/// What `g` stands for (LLVM 19: `imafd_zicsr_zifencei`).
pub const G_EXPANSION: &[&str] = &["m", "a", "f", "d", "zicsr", "zifencei"];

/// Parses an ISA string such as `rv64gcv`, `rv64imafdc_zba1p0_zbb` or `rv32e_zve32x`.
/// Case-insensitive; `g` is expanded into [`G_EXPANSION`] (duplicates dropped).
pub fn parse_march(s: &str) -> Result<Isa, IsaError> {
    let lower = s.to_ascii_lowercase();
    let rest = if let Some(r) = lower.strip_prefix("rv64") {
        (64, r)
    } else if let Some(r) = lower.strip_prefix("rv32") {
        (32, r)
    } else {
        return Err(IsaError::NoBase(s.to_string()));
    };
    let (xlen, rest) = rest;
    let chars: Vec<char> = rest.chars().collect();
    let Some(&first) = chars.first() else {
        return Err(IsaError::NoBaseLetter(s.to_string()));
    };
    let mut isa = Isa {
        xlen,
        base: 'i',
        exts: Vec::new(),
    };
    let push = |isa: &mut Isa, e: Ext| {
        if !isa.exts.iter().any(|x| x.name == e.name) {
            isa.exts.push(e);
        }
    };
    let mut i = 1;
    match first {
        'i' | 'e' => {
            isa.base = first;
            // A version on the base letter is skipped (`rv64i2p1`).
            let (_, next) = version_at(&chars, i);
            i = next;
        }
        'g' => {
            for e in G_EXPANSION {
                push(&mut isa, Ext::new(e));
            }
            let (_, next) = version_at(&chars, i);
            i = next;
        }
        _ => return Err(IsaError::NoBaseLetter(s.to_string())),
    }
    while i < chars.len() {
        let c = chars[i];
        if c == '_' {
            i += 1;
            continue;
        }
        if !c.is_ascii_lowercase() {
            return Err(IsaError::Unexpected(s.to_string(), c));
        }
        if matches!(c, 'z' | 's' | 'x') {
            // A multi-letter extension runs to the next `_` or the end.
            let end = chars[i..]
                .iter()
                .position(|&c| c == '_')
                .map_or(chars.len(), |p| i + p);
            let word: String = chars[i..end].iter().collect();
            push(&mut isa, split_version(&word));
            i = end;
            continue;
        }
        if c == 'g' {
            for e in G_EXPANSION {
                push(&mut isa, Ext::new(e));
            }
            i += 1;
            continue;
        }
        let (version, next) = version_at(&chars, i + 1);
        push(
            &mut isa,
            Ext {
                name: c.to_string(),
                version,
            },
        );
        i = next;
    }
    Ok(isa)
}

/// A version (`2`, `2p0`) starting at `i`, and the index after it.
fn version_at(chars: &[char], mut i: usize) -> (Option<String>, usize) {
    let start = i;
    while i < chars.len() && chars[i].is_ascii_digit() {
        i += 1;
    }
    if i > start && i + 1 < chars.len() && chars[i] == 'p' && chars[i + 1].is_ascii_digit() {
        i += 1;
        while i < chars.len() && chars[i].is_ascii_digit() {
            i += 1;
        }
    }
    let v: String = chars[start..i].iter().collect();
    ((!v.is_empty()).then_some(v), i)
}

/// `zba1p0` → (`zba`, `1p0`); `zvl128b` keeps its digits (they end in a letter).
fn split_version(word: &str) -> Ext {
    let b = word.as_bytes();
    let mut end = b.len();
    while end > 0 && b[end - 1].is_ascii_digit() {
        end -= 1;
    }
    if end < b.len() && end >= 2 && b[end - 1] == b'p' && b[end - 2].is_ascii_digit() {
        let mut e = end - 1;
        while e > 0 && b[e - 1].is_ascii_digit() {
            e -= 1;
        }
        if e >= 2 {
            return Ext {
                name: word[..e].to_string(),
                version: Some(word[e..].to_string()),
            };
        }
    }
    if end < b.len() && end >= 2 && b[end - 1].is_ascii_alphabetic() {
        return Ext {
            name: word[..end].to_string(),
            version: Some(word[end..].to_string()),
        };
    }
    Ext::new(word)
}

/// The canonical order of single-letter extensions after the base (LLVM's `AllStdExts`).
const STD_ORDER: &str = "mafdqlcbkjtpvnh";

fn letter_rank(c: char) -> usize {
    match c {
        'i' => 0,
        'e' => 1,
        _ => STD_ORDER.find(c).map_or(100 + c as usize, |p| p + 2),
    }
}

/// Sort key of an extension in a canonical ISA string: single letters first, then `z*` by
/// the category of their second letter, then `s*`, then `x*`, then alphabetical.
fn ext_key(name: &str) -> (usize, usize, String) {
    let mut cs = name.chars();
    let first = cs.next().unwrap_or('?');
    if name.len() == 1 {
        return (0, letter_rank(first), String::new());
    }
    let class = match first {
        'z' => 1,
        's' => 2,
        'x' => 3,
        _ => 4,
    };
    let second = if first == 'z' {
        cs.next().map_or(0, letter_rank)
    } else {
        0
    };
    (class, second, name.to_string())
}

/// Renders an ISA string in canonical order. When everything `g` stands for is in `exts` (or
/// implied by what is), writes `g` instead.
pub fn render_march(xlen: u32, base: char, exts: &[Ext]) -> String {
    let names: BTreeSet<String> = exts.iter().map(|e| e.name.clone()).collect();
    let closure = implied_closure(&names);
    let use_g = base == 'i' && G_EXPANSION.iter().all(|g| closure.contains(*g));
    let mut shown: Vec<&Ext> = exts
        .iter()
        .filter(|e| !(use_g && G_EXPANSION.contains(&e.name.as_str())))
        .collect();
    shown.sort_by_key(|e| ext_key(&e.name));
    shown.dedup_by(|a, b| a.name == b.name);
    let mut out = format!("rv{xlen}{}", if use_g { 'g' } else { base });
    let mut prev_versioned = false;
    for e in shown {
        let v = e.version.as_deref().unwrap_or("");
        if e.name.len() == 1 {
            if prev_versioned {
                out.push('_');
            }
            out.push_str(&e.name);
            out.push_str(v);
            prev_versioned = !v.is_empty();
        } else {
            out.push('_');
            out.push_str(&e.name);
            out.push_str(v);
        }
    }
    out
}

/// True for the extensions that make vector instructions available: `v`, `zve*`, `zvl*` and
/// the other `zv*` (which all imply `zve32x`).
pub fn is_vector(name: &str) -> bool {
    name == "v" || name.starts_with("zv")
}

/// What an extension implies directly (LLVM 19's RISCVFeatures.td, the part that matters for
/// grouping; unknown names imply nothing).
pub fn implies(name: &str) -> Vec<String> {
    let direct: &[&str] = match name {
        "g" => G_EXPANSION,
        "m" => &["zmmul"],
        "f" => &["zicsr"],
        "d" => &["f"],
        "q" => &["d"],
        "b" => &["zba", "zbb", "zbs"],
        "v" => &["zvl128b", "zve64d"],
        "zve64d" => &["zve64f", "d"],
        "zve64f" => &["zve64x", "zve32f"],
        "zve64x" => &["zve32x", "zvl64b"],
        "zve32f" => &["zve32x", "f"],
        "zve32x" => &["zvl32b", "zicsr"],
        "zvfh" => &["zvfhmin", "zfhmin"],
        "zvfhmin" => &["zve32f"],
        "zvfbfmin" => &["zve32f"],
        "zvfbfwma" => &["zvfbfmin", "zfbfmin"],
        "zfh" => &["zfhmin"],
        "zfhmin" | "zfbfmin" | "zfa" => &["f"],
        "zhinx" => &["zhinxmin"],
        "zhinxmin" | "zdinx" => &["zfinx"],
        "zfinx" => &["zicsr"],
        "zcd" => &["zca", "d"],
        "zcf" => &["zca", "f"],
        "zcb" | "zcmp" | "zcmt" | "zcmop" => &["zca"],
        "zce" => &["zcb", "zcmp", "zcmt"],
        "zk" => &["zkn", "zkr", "zkt"],
        "zkn" => &["zbkb", "zbkc", "zbkx", "zkne", "zknd", "zknh"],
        "zks" => &["zbkb", "zbkc", "zbkx", "zksed", "zksh"],
        "zvbb" => &["zvkb"],
        "zvkn" => &["zvkned", "zvknhb", "zvkb", "zvkt"],
        "zvknc" => &["zvkn", "zvbc"],
        "zvkng" => &["zvkn", "zvkg"],
        "zvks" => &["zvksed", "zvksh", "zvkb", "zvkt"],
        "zvksc" => &["zvks", "zvbc"],
        "zvksg" => &["zvks", "zvkg"],
        "zvbc" | "zvkb" | "zvkg" | "zvkned" | "zvknha" | "zvksed" | "zvksh" | "zvkt" => &["zve32x"],
        "zvknhb" => &["zve64x"],
        "h" => &["zicsr"],
        _ => {
            // zvl<N>b implies zvl<N/2>b down to zvl32b.
            if let Some(n) = name
                .strip_prefix("zvl")
                .and_then(|r| r.strip_suffix('b'))
                .and_then(|n| n.parse::<u32>().ok())
            {
                if n > 32 {
                    return vec![format!("zvl{}b", n / 2)];
                }
            }
            &[]
        }
    };
    direct.iter().map(|s| s.to_string()).collect()
}

/// Everything in `names` plus everything it implies, transitively.
pub fn implied_closure(names: &BTreeSet<String>) -> BTreeSet<String> {
    let mut out = names.clone();
    let mut todo: Vec<String> = names.iter().cloned().collect();
    while let Some(n) = todo.pop() {
        for m in implies(&n) {
            if out.insert(m.clone()) {
                todo.push(m);
            }
        }
    }
    out
}

/// One unit of a cc1 feature bisection: features kept or dropped together.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FeatureGroup {
    /// What the group is called: the top-level extension (`v`), or `-*` for the negative
    /// features.
    pub label: String,
    /// The `-target-feature` values in it (`+v`, `+zve64d`, …), as written.
    pub features: Vec<String>,
}

/// Groups a cc1 `-target-feature` list for bisection: all negative features together (they
/// only switch off what is not on, so they nearly always go in one run), then one group per
/// top-level positive feature (one that no other present feature implies) holding it and
/// every present feature it implies. A feature implied by two top-level ones is in both
/// groups, so it stays while either does.
pub fn group_features(features: &[String]) -> Vec<FeatureGroup> {
    let mut groups = Vec::new();
    let negatives: Vec<String> = features
        .iter()
        .filter(|f| f.starts_with('-'))
        .cloned()
        .collect();
    if !negatives.is_empty() {
        groups.push(FeatureGroup {
            label: "-*".into(),
            features: negatives,
        });
    }
    let positives: Vec<&str> = features
        .iter()
        .filter_map(|f| f.strip_prefix('+'))
        .collect();
    let plain = |f: &str| f.strip_prefix("experimental-").unwrap_or(f).to_string();
    for &p in &positives {
        let implied_by_other = positives.iter().any(|&q| {
            q != p && {
                let c = implied_closure(&[plain(q)].into_iter().collect());
                c.contains(&plain(p))
                    && !implied_closure(&[plain(p)].into_iter().collect()).contains(&plain(q))
            }
        });
        if implied_by_other {
            continue;
        }
        let closure = implied_closure(&[plain(p)].into_iter().collect());
        let members: Vec<String> = positives
            .iter()
            .filter(|&&q| closure.contains(&plain(q)))
            .map(|q| format!("+{q}"))
            .collect();
        groups.push(FeatureGroup {
            label: plain(p),
            features: members,
        });
    }
    groups
}

/// True for a feature name that is an ISA extension (not `64bit`, `relax`, `save-restore`).
pub fn is_extension_name(name: &str) -> bool {
    let name = name.strip_prefix("experimental-").unwrap_or(name);
    if name.len() == 1 {
        return name.chars().all(|c| c.is_ascii_lowercase());
    }
    matches!(name.chars().next(), Some('z' | 's' | 'x'))
        && name.chars().all(|c| c.is_ascii_alphanumeric())
}

/// The shortest `-march` that gives the positive features in `features` (a cc1
/// `-target-feature` list): only the extensions no other kept extension implies, `g` where
/// it fits. `xlen` comes from the triple; the `e` feature picks the base.
pub fn march_from_features(xlen: u32, features: &[String]) -> String {
    let kept: BTreeSet<String> = features
        .iter()
        .filter_map(|f| f.strip_prefix('+'))
        .filter(|f| is_extension_name(f))
        .map(|f| f.strip_prefix("experimental-").unwrap_or(f).to_string())
        .collect();
    let base = if kept.contains("e") && !kept.contains("i") {
        'e'
    } else {
        'i'
    };
    let top: Vec<Ext> = kept
        .iter()
        .filter(|n| *n != "i" && *n != "e")
        .filter(|n| {
            !kept.iter().any(|m| {
                m != *n && {
                    let c = implied_closure(&[m.clone()].into_iter().collect());
                    c.contains(*n)
                        && !implied_closure(&[(*n).clone()].into_iter().collect()).contains(m)
                }
            })
        })
        .map(|n| Ext::new(n))
        .collect();
    // Keep the g members that `g` would otherwise hide behind implication (rv64g needs all
    // of them named or implied).
    let mut exts = top;
    let closure = implied_closure(&kept);
    if base == 'i' && G_EXPANSION.iter().all(|g| closure.contains(*g)) {
        for g in G_EXPANSION {
            if !exts.iter().any(|e| e.name == *g) {
                exts.push(Ext::new(g));
            }
        }
    }
    render_march(xlen, base, &exts)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn names(isa: &Isa) -> Vec<&str> {
        isa.exts.iter().map(|e| e.name.as_str()).collect()
    }

    #[test]
    fn g_expands_and_single_letters_follow() {
        let isa = parse_march("rv64gcv").unwrap();
        assert_eq!(isa.xlen, 64);
        assert_eq!(isa.base, 'i');
        assert_eq!(
            names(&isa),
            ["m", "a", "f", "d", "zicsr", "zifencei", "c", "v"]
        );
    }

    #[test]
    fn multi_letter_extensions_and_versions() {
        let isa = parse_march("RV32IMAC_zba1p0_zbb_zvl256b_xtheadvector_sscofpmf").unwrap();
        assert_eq!(isa.xlen, 32);
        assert_eq!(
            names(&isa),
            [
                "m",
                "a",
                "c",
                "zba",
                "zbb",
                "zvl256b",
                "xtheadvector",
                "sscofpmf"
            ]
        );
        assert_eq!(isa.exts[3].version.as_deref(), Some("1p0"));
        assert_eq!(isa.exts[5].version, None);
        let isa = parse_march("rv64i2p1m2a_v1p0").unwrap();
        assert_eq!(names(&isa), ["m", "a", "v"]);
        assert_eq!(isa.exts[0].version.as_deref(), Some("2"));
        assert_eq!(isa.exts[2].version.as_deref(), Some("1p0"));
        let isa = parse_march("rv32e_zve32x").unwrap();
        assert_eq!(isa.base, 'e');
        assert_eq!(names(&isa), ["zve32x"]);
    }

    #[test]
    fn bad_strings_are_errors() {
        assert!(parse_march("x86-64-v2").is_err());
        assert!(parse_march("rv64").is_err());
        assert!(parse_march("rv64q").is_err());
        assert!(parse_march("rv64gc+v").is_err());
    }

    #[test]
    fn render_is_canonical_and_uses_g() {
        let isa = parse_march("rv64gcv").unwrap();
        assert_eq!(render_march(64, 'i', &isa.exts), "rv64gcv");
        let isa = parse_march("rv64i_zba_v_c_m").unwrap();
        assert_eq!(render_march(64, 'i', &isa.exts), "rv64imcv_zba");
        let exts = vec![Ext::new("v")];
        assert_eq!(render_march(64, 'i', &exts), "rv64iv");
        let exts = vec![Ext::new("zve32x"), Ext::new("zicsr"), Ext::new("zba")];
        assert_eq!(render_march(64, 'i', &exts), "rv64i_zicsr_zba_zve32x");
        let isa = parse_march("rv64imv1p0c").unwrap();
        assert_eq!(render_march(64, 'i', &isa.exts), "rv64imcv1p0");
    }

    #[test]
    fn implication_reaches_d_from_v() {
        let c = implied_closure(&["v".to_string()].into_iter().collect());
        for n in ["zve64d", "zve32x", "zvl32b", "zvl128b", "d", "f", "zicsr"] {
            assert!(c.contains(n), "{n} in {c:?}");
        }
        assert!(!c.contains("m"));
        assert!(is_vector("zve32x") && is_vector("zvl128b") && is_vector("v"));
        assert!(!is_vector("zba") && !is_vector("c"));
    }

    /// The positive part of clang-19's `-march=rv64gcv` cc1 feature list.
    fn clang19_rv64gcv() -> Vec<String> {
        "+m +a +f +d +c +v +zicsr +zifencei +zmmul +zve32f +zve32x +zve64d +zve64f +zve64x \
         +zvl128b +zvl32b +zvl64b -b -e -h -zba -zvl256b -experimental-zacas +relax"
            .split_whitespace()
            .map(String::from)
            .collect()
    }

    #[test]
    fn cc1_features_group_by_top_level_extension() {
        let groups = group_features(&clang19_rv64gcv());
        let labels: Vec<&str> = groups.iter().map(|g| g.label.as_str()).collect();
        assert_eq!(labels, ["-*", "m", "a", "c", "v", "zifencei", "relax"]);
        let v = groups.iter().find(|g| g.label == "v").unwrap();
        for f in ["+v", "+zve64d", "+zve32x", "+zvl32b", "+d", "+f", "+zicsr"] {
            assert!(v.features.contains(&f.to_string()), "{f} in {v:?}");
        }
        assert!(!v.features.contains(&"+m".to_string()));
        assert_eq!(groups[0].features.len(), 6);
    }

    #[test]
    fn features_map_back_to_march() {
        assert_eq!(march_from_features(64, &clang19_rv64gcv()), "rv64gcv");
        let v = group_features(&clang19_rv64gcv())
            .into_iter()
            .find(|g| g.label == "v")
            .unwrap();
        assert_eq!(march_from_features(64, &v.features), "rv64iv");
        let f: Vec<String> = ["+zve32x", "+zvl32b", "+zicsr", "+64bit", "+relax"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(march_from_features(32, &f), "rv32i_zve32x");
        assert_eq!(march_from_features(64, &[]), "rv64i");
    }

    fn ext_strategy() -> impl Strategy<Value = String> {
        prop_oneof![
            proptest::sample::select(vec!["m", "a", "f", "d", "c", "v", "b", "h"]),
            proptest::sample::select(vec![
                "zba", "zbb", "zbs", "zicsr", "zifencei", "zve32x", "zve64d", "zvl256b", "zfh",
                "zicond", "sscofpmf", "svinval", "xtheadba", "xsfvcp",
            ]),
        ]
        .prop_map(String::from)
    }

    proptest! {
        /// Rendering then parsing gives the same set of extensions (g compression aside),
        /// and rendering is idempotent.
        #[test]
        fn render_parse_round_trip(
            xlen in prop_oneof![Just(32u32), Just(64u32)],
            exts in proptest::collection::vec(ext_strategy(), 0..8),
        ) {
            let exts: Vec<Ext> = exts.iter().map(|n| Ext::new(n)).collect();
            let s = render_march(xlen, 'i', &exts);
            let back = parse_march(&s).unwrap();
            prop_assert_eq!(back.xlen, xlen);
            let want: BTreeSet<String> = exts.iter().map(|e| e.name.clone()).collect();
            let got: BTreeSet<String> = back.exts.iter().map(|e| e.name.clone()).collect();
            prop_assert!(want.is_subset(&got), "{} lost {:?}", s, want.difference(&got));
            prop_assert!(got.difference(&want).all(|n| G_EXPANSION.contains(&n.as_str())));
            prop_assert_eq!(render_march(xlen, 'i', &back.exts), s);
        }

        /// The march derived from a feature list implies every positive extension in it.
        #[test]
        fn derived_march_covers_the_features(
            exts in proptest::collection::vec(ext_strategy(), 0..8),
        ) {
            let feats: Vec<String> = exts.iter().map(|e| format!("+{e}")).collect();
            let m = march_from_features(64, &feats);
            let parsed = parse_march(&m).unwrap();
            let names: BTreeSet<String> = parsed.exts.iter().map(|e| e.name.clone()).collect();
            let closure = implied_closure(&names);
            for e in &exts {
                prop_assert!(closure.contains(e), "{} not implied by {}", e, m);
            }
        }
    }
}
