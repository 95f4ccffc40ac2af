//! The RISC-V probes: the minimal `-march` extension set, and whether a vector extension is
//! needed.
//!
//! Why this exists: on RISC-V the question "is it the vector extension?" decides who looks
//! at a crash. For a driver command this bisects the `-march` extensions (with `g`
//! expanded); for a cc1 command (a clang reproducer) it bisects `-target-feature` groups
//! (see [`super::isa::group_features`]) instead of single features, and maps the kept set
//! back to a `-march`. Then it tries the minimal set without any vector extension, and with
//! only `zve32x`, so the row can say plainly which vector support the crash needs. Pure.

use std::cell::RefCell;

use super::args::{self, Unit};
use super::ddmin::{minimize, Outcome, Tester};
use super::isa::{self, Ext};
use super::{Dimension, Tried};

/// What the RISC-V probes found.
#[derive(Debug, Clone, Default)]
pub(crate) struct RvResult {
    /// A smaller command than the one given (fewer features), if any.
    pub minimal_command: Option<Vec<String>>,
    pub minimal_march: Option<String>,
    pub vector_needed: Option<bool>,
    pub dimensions: Vec<Dimension>,
}

fn is_march(u: &Unit) -> bool {
    u.value_of("-march").is_some()
}

fn target_of(argv: &[String]) -> Option<String> {
    let units = args::split(argv);
    units.iter().rev().find_map(|u| {
        u.value_of("--target")
            .or_else(|| u.value_of("-target"))
            .or_else(|| u.value_of("-triple"))
            .map(String::from)
    })
}

/// Driver commands: bisect the extensions of `-march`.
pub(crate) fn driver_march(
    original: &[String],
    minimal: &[String],
    t: &mut Tester<'_>,
) -> Option<RvResult> {
    let given = args::find(original, is_march)?;
    let given_march = given.value_of("-march")?.to_string();
    let target = target_of(original).unwrap_or_default();
    if !given_march.starts_with("rv") && !target.starts_with("riscv") {
        return None;
    }
    let Ok(isa) = isa::parse_march(&given_march) else {
        return Some(RvResult {
            dimensions: vec![Dimension {
                name: "-march".into(),
                tried: Vec::new(),
                needed: None,
                note: format!("could not parse -march={given_march}"),
            }],
            ..RvResult::default()
        });
    };
    if args::find(minimal, is_march).is_none() {
        return Some(march_not_needed(&isa, &given_march, minimal, t));
    }
    let mut res = RvResult::default();
    let with_march = |exts: &[Ext]| -> (String, Vec<String>) {
        let m = isa::render_march(isa.xlen, isa.base, exts);
        let argv = args::replace_where(minimal, is_march, &[format!("-march={m}")]);
        (m, argv)
    };
    let seen: RefCell<Vec<(String, Vec<String>)>> = RefCell::new(Vec::new());
    let build = |kept: &[usize]| -> Vec<String> {
        let exts: Vec<Ext> = kept.iter().map(|&i| isa.exts[i].clone()).collect();
        let (m, argv) = with_march(&exts);
        let mut s = seen.borrow_mut();
        if !s.iter().any(|(x, _)| *x == m) {
            s.push((m, argv.clone()));
        }
        argv
    };
    let kept = minimize(isa.exts.len(), &build, t);
    let kept_exts: Vec<Ext> = kept.iter().map(|&i| isa.exts[i].clone()).collect();
    let (min_march, min_argv) = with_march(&kept_exts);
    let mut tried = tried_marches(
        given_march.clone(),
        seen.into_inner(),
        |m, _| m == given_march,
        t,
    );
    let without = args::remove_where(minimal, is_march);
    let removal = t.one(&without);
    tried.push(Tried {
        value: "default".into(),
        outcome: removal,
    });
    res.dimensions.push(Dimension {
        name: "-march".into(),
        tried,
        needed: Some(!removal.is_same()),
        note: format!("minimal extension set: {min_march} (from {given_march})"),
    });
    let vector_row = vector_row(&isa, &kept_exts, &min_march, &given_march, &with_march, t);
    res.vector_needed = vector_row.needed;
    res.minimal_march = Some(min_march);
    res.dimensions.push(vector_row);
    if min_argv != minimal {
        res.minimal_command = Some(min_argv);
    }
    Some(res)
}

/// The result when ddmin removed `-march`: the target's default ISA crashes too, so neither
/// the extensions nor the vector ones are needed.
fn march_not_needed(
    isa: &isa::Isa,
    given_march: &str,
    minimal: &[String],
    t: &mut Tester<'_>,
) -> RvResult {
    let had_vector = isa.exts.iter().any(|e| isa::is_vector(&e.name));
    RvResult {
        vector_needed: Some(false),
        dimensions: vec![
            Dimension {
                name: "-march".into(),
                tried: vec![Tried {
                    value: "default".into(),
                    outcome: t.one(minimal),
                }],
                needed: Some(false),
                note: format!(
                    "not needed: crashes without -march={given_march} (the target's default)"
                ),
            },
            vector_row_without_march(had_vector),
        ],
        ..RvResult::default()
    }
}

/// The `-march` values tried: `given` (the case's own, its crash), then each one the bisection
/// ran (`seen`: the value and its command) that `is_given` does not call the given one again,
/// with its known outcome.
fn tried_marches(
    given: String,
    seen: Vec<(String, Vec<String>)>,
    is_given: impl Fn(&str, &[String]) -> bool,
    t: &mut Tester<'_>,
) -> Vec<Tried> {
    let mut tried = vec![Tried {
        value: given,
        outcome: Outcome::SameCrash,
    }];
    for (m, argv) in seen {
        if is_given(&m, &argv) {
            continue;
        }
        if let Some(o) = t.known(&argv) {
            tried.push(Tried {
                value: m,
                outcome: o,
            });
        }
    }
    tried
}

/// A `-march` of the given extensions, and the minimal command with it.
type WithMarch<'a> = dyn Fn(&[Ext]) -> (String, Vec<String>) + 'a;

/// The vector row of a driver command whose minimal `-march` is `min_march` (extensions
/// `kept`): not needed when it has no vector extension; else the minimal `-march` without its
/// vector extensions, and with `zve32x` in their place, each run once.
fn vector_row(
    isa: &isa::Isa,
    kept: &[Ext],
    min_march: &str,
    given_march: &str,
    with_march: &WithMarch,
    t: &mut Tester<'_>,
) -> Dimension {
    let vec_exts: Vec<&Ext> = kept.iter().filter(|e| isa::is_vector(&e.name)).collect();
    if vec_exts.is_empty() {
        let had = isa.exts.iter().any(|e| isa::is_vector(&e.name));
        return vector_not_needed(
            min_march,
            had,
            format!("no: -march={given_march} has no vector extension"),
        );
    }
    let no_vec: Vec<Ext> = kept
        .iter()
        .filter(|e| !isa::is_vector(&e.name))
        .cloned()
        .collect();
    let (nv_march, nv_argv) = with_march(&no_vec);
    let mut zve = no_vec.clone();
    zve.push(Ext {
        name: "zve32x".into(),
        version: None,
    });
    let (z_march, z_argv) = with_march(&zve);
    let mut probes = vec![(nv_march.clone(), nv_argv)];
    if z_march != min_march {
        probes.push((z_march.clone(), z_argv));
    }
    let outs = t.batch(&probes.iter().map(|(_, a)| a.clone()).collect::<Vec<_>>());
    let mut tried = vec![Tried {
        value: min_march.to_string(),
        outcome: Outcome::SameCrash,
    }];
    tried.extend(probes.iter().zip(&outs).map(|((m, _), o)| Tried {
        value: m.clone(),
        outcome: *o,
    }));
    vector_verdict(
        min_march,
        &vec_exts,
        &nv_march,
        outs[0],
        outs.get(1).map(|o| (z_march.as_str(), *o)),
        tried,
    )
}

/// The vector row when the minimal `-march` (which still crashes) has no vector extension:
/// not needed. `had`: the command named one (dropped by the minimisation); else `absent`.
fn vector_not_needed(min_march: &str, had: bool, absent: String) -> Dimension {
    Dimension {
        name: "vector extension".into(),
        tried: vec![Tried {
            value: min_march.to_string(),
            outcome: Outcome::SameCrash,
        }],
        needed: Some(false),
        note: if had {
            format!("no: crashes without any vector extension ({min_march})")
        } else {
            absent
        },
    }
}

fn vector_row_without_march(had_vector: bool) -> Dimension {
    Dimension {
        name: "vector extension".into(),
        tried: Vec::new(),
        needed: Some(false),
        note: if had_vector {
            "no: crashes with the target's default -march, without the vector extension given"
                .into()
        } else {
            "no: the command names no vector extension".into()
        },
    }
}

fn vector_verdict(
    min_march: &str,
    vec_exts: &[&Ext],
    nv_march: &str,
    no_vector: Outcome,
    zve: Option<(&str, Outcome)>,
    tried: Vec<Tried>,
) -> Dimension {
    let names: Vec<&str> = vec_exts.iter().map(|e| e.name.as_str()).collect();
    let (needed, mut note) = if no_vector.is_same() {
        (
            Some(false),
            format!("no: {nv_march} (no vector extension) crashes too"),
        )
    } else {
        (
            Some(true),
            format!(
                "yes: the crash needs a vector extension ({} in {min_march}); without it ({nv_march}): {}",
                names.join(", "),
                no_vector.as_str()
            ),
        )
    };
    if let (Some(true), Some((z, o))) = (needed, zve) {
        if o.is_same() {
            note.push_str(&format!("; zve32x is enough ({z} crashes)"));
        } else {
            note.push_str(&format!(
                "; zve32x alone is not enough ({z}: {})",
                o.as_str()
            ));
        }
    }
    Dimension {
        name: "vector extension".into(),
        tried,
        needed,
        note,
    }
}

fn is_feature(u: &Unit) -> bool {
    u.head() == "-target-feature" && u.args.len() == 2
}

/// cc1 commands: bisect `-target-feature` groups; the result's command keeps only the
/// features of the kept groups.
pub(crate) fn cc1_features(minimal: &[String], t: &mut Tester<'_>) -> Option<RvResult> {
    let triple = target_of(minimal)?;
    if !triple.starts_with("riscv") {
        return None;
    }
    let xlen = if triple.starts_with("riscv32") {
        32
    } else {
        64
    };
    let units = args::split(minimal);
    let features: Vec<String> = units
        .iter()
        .filter(|u| is_feature(u))
        .map(|u| u.args[1].clone())
        .collect();
    if features.is_empty() {
        return None;
    }
    let groups = isa::group_features(&features);
    let with_features = |kept_feats: &[String]| -> Vec<String> {
        let chosen: Vec<Unit> = units
            .iter()
            .filter(|u| !is_feature(u) || kept_feats.contains(&u.args[1]))
            .cloned()
            .collect();
        args::join(&minimal[0], &chosen)
    };
    let feats_of = |kept: &[usize]| -> Vec<String> {
        kept.iter()
            .flat_map(|&i| groups[i].features.clone())
            .collect()
    };
    let seen: RefCell<Vec<(String, Vec<String>)>> = RefCell::new(Vec::new());
    let build = |kept: &[usize]| -> Vec<String> {
        let f = feats_of(kept);
        let argv = with_features(&f);
        let m = isa::march_from_features(xlen, &f);
        let label = if kept.iter().any(|&i| groups[i].label == "-*") {
            format!("{m} (with the - features)")
        } else {
            m
        };
        let mut s = seen.borrow_mut();
        if !s.iter().any(|(x, _)| *x == label) {
            s.push((label, argv.clone()));
        }
        argv
    };
    let kept = minimize(groups.len(), &build, t);
    let kept_feats = feats_of(&kept);
    let min_argv = with_features(&kept_feats);
    let min_march = isa::march_from_features(xlen, &kept_feats);
    let kept_labels: Vec<&str> = kept.iter().map(|&i| groups[i].label.as_str()).collect();
    let kept_set = Cc1Kept {
        xlen,
        groups: &groups,
        kept: &kept,
        kept_labels: &kept_labels,
        min_march: &min_march,
        features: &features,
    };
    let mut res = RvResult {
        minimal_march: Some(min_march.clone()),
        ..RvResult::default()
    };
    res.dimensions
        .push(cc1_march_row(&kept_set, seen.into_inner(), minimal, t));
    let vector_row = cc1_vector_row(&kept_set, &with_features, t);
    res.vector_needed = vector_row.needed;
    res.dimensions.push(vector_row);
    if min_argv != minimal {
        res.minimal_command = Some(min_argv);
    }
    Some(res)
}

/// The `-march` row of a cc1 command: the features as given, then each `-march` the
/// bisection tried (`seen`: its label and command) with its known outcome.
fn cc1_march_row(
    k: &Cc1Kept<'_>,
    seen: Vec<(String, Vec<String>)>,
    minimal: &[String],
    t: &mut Tester<'_>,
) -> Dimension {
    let given_march = isa::march_from_features(k.xlen, k.features);
    let given = format!(
        "{given_march} (as given, {} -target-feature)",
        k.features.len()
    );
    let tried = tried_marches(given, seen, |_, argv| argv == minimal, t);
    Dimension {
        name: "-march".into(),
        tried,
        needed: Some(
            k.kept_labels
                .iter()
                .any(|l| *l != "-*" && isa::is_extension_name(l)),
        ),
        note: format!(
            "minimal -march: {} (bisected {} -target-feature in {} groups; kept: {})",
            k.min_march,
            k.features.len(),
            k.groups.len(),
            if k.kept_labels.is_empty() {
                "none".to_string()
            } else {
                k.kept_labels.join(", ")
            }
        ),
    }
}

/// What the vector row of a cc1 command needs of the minimisation's result.
struct Cc1Kept<'a> {
    xlen: u32,
    groups: &'a [isa::FeatureGroup],
    /// The kept groups.
    kept: &'a [usize],
    kept_labels: &'a [&'a str],
    min_march: &'a str,
    /// The command's features, as given.
    features: &'a [String],
}

impl Cc1Kept<'_> {
    fn feats_of(&self, groups: &[usize]) -> Vec<String> {
        groups
            .iter()
            .flat_map(|&i| self.groups[i].features.clone())
            .collect()
    }
}

/// `features` and `argv` with `zve32x` and what it implies, added as new `-target-feature`
/// arguments where missing.
fn with_zve32x(features: &[String], argv: &[String]) -> (Vec<String>, Vec<String>) {
    let mut z_feats = features.to_vec();
    let mut z_argv = argv.to_vec();
    for f in ["+zve32x", "+zvl32b", "+zicsr"] {
        if !z_feats.iter().any(|x| x == f) {
            z_feats.push(f.to_string());
            z_argv = args::replace_where(
                &z_argv,
                |_| false,
                &["-target-feature".to_string(), f.to_string()],
            );
        }
    }
    (z_feats, z_argv)
}

/// The vector extensions among `vec_feats` (`+v`, `+zve64x`) that a `-march` can spell.
fn vector_extensions(k: &Cc1Kept<'_>, vec_feats: &[&String]) -> Vec<Ext> {
    vec_feats
        .iter()
        .filter_map(|f| f.strip_prefix('+'))
        .filter(|n| isa::march_from_features(k.xlen, &[format!("+{n}")]).contains(*n))
        .map(|n| Ext {
            name: n.to_string(),
            version: None,
        })
        .collect()
}

/// Of `names`, those the kept groups are labelled with; all of them when none is.
fn kept_first<'e>(k: &Cc1Kept<'_>, names: &'e [Ext]) -> Vec<&'e Ext> {
    let refs: Vec<&Ext> = names
        .iter()
        .filter(|e| k.kept_labels.contains(&e.name.as_str()))
        .collect();
    if refs.is_empty() {
        names.iter().collect()
    } else {
        refs
    }
}

/// The vector row of a cc1 command: not needed when the kept groups have no vector feature;
/// else the kept groups without the vector ones, and with only `zve32x` (and what it
/// implies), each run once.
fn cc1_vector_row(
    k: &Cc1Kept<'_>,
    with_features: &dyn Fn(&[String]) -> Vec<String>,
    t: &mut Tester<'_>,
) -> Dimension {
    let is_vec_feat = |f: &str| f.strip_prefix('+').is_some_and(isa::is_vector);
    let kept_feats = k.feats_of(k.kept);
    let vec_feats: Vec<&String> = kept_feats.iter().filter(|f| is_vec_feat(f)).collect();
    if vec_feats.is_empty() {
        let had = k.features.iter().any(|f| is_vec_feat(f));
        return vector_not_needed(
            k.min_march,
            had,
            "no: the command has no vector extension".into(),
        );
    }
    let rest: Vec<usize> = k
        .kept
        .iter()
        .copied()
        .filter(|&i| !k.groups[i].features.iter().any(|f| is_vec_feat(f)))
        .collect();
    let nv_feats = k.feats_of(&rest);
    let nv_argv = with_features(&nv_feats);
    let nv_march = isa::march_from_features(k.xlen, &nv_feats);
    let (z_feats, z_argv) = with_zve32x(&nv_feats, &nv_argv);
    let z_march = isa::march_from_features(k.xlen, &z_feats);
    let outs = t.batch(&[nv_argv, z_argv]);
    let tried = vec![
        Tried {
            value: k.min_march.to_string(),
            outcome: Outcome::SameCrash,
        },
        Tried {
            value: nv_march.clone(),
            outcome: outs[0],
        },
        Tried {
            value: z_march.clone(),
            outcome: outs[1],
        },
    ];
    let names = vector_extensions(k, &vec_feats);
    let refs = kept_first(k, &names);
    vector_verdict(
        k.min_march,
        &refs,
        &nv_march,
        outs[0],
        Some((&z_march, outs[1])),
        tried,
    )
}
