//! The simple dimension probes: `-O`, `-g`, `-std=`, `-mabi`, `-mrvv-vector-bits` and GPU
//! arches.
//!
//! Why this exists: each is a row a maintainer reads ("crashes at -O2, -O3, -Os; not at -O0,
//! -O1"). Each probe is planned as a list of (value, candidate argv) built from the minimal
//! command, so the caller can send every probe's candidates in one parallel batch, and is
//! finished into a [`Dimension`] with a `needed` verdict and a note. GPU arches get their
//! neighbours from a table of generations, so the row shows where the crash stops
//! (gfx600 and gfx601 crash, gfx700 does not). Pure.

use super::args::{self, Unit};
use super::ddmin::{Outcome, Tester};
use super::{needed_from, Dimension, Tried};

/// How a row reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// Several values of one setting (`-O0` … `-Oz`, `-std=`).
    Levels,
    /// GPU arches.
    Arches,
    /// Two candidates: with the flag (first) and without it (second).
    OnOff,
}

/// A planned probe.
#[derive(Debug, Clone)]
pub(crate) struct Plan {
    pub name: String,
    pub kind: Kind,
    /// (value shown, argv).
    pub candidates: Vec<(String, Vec<String>)>,
    /// Said before the verdict (e.g. "as given: -O1").
    pub given: Option<String>,
}

impl Plan {
    /// The row, from outcomes already in `t`'s cache (or run now).
    pub fn finish(self, t: &mut Tester<'_>) -> Dimension {
        let tried: Vec<Tried> = self
            .candidates
            .iter()
            .map(|(value, argv)| Tried {
                value: value.clone(),
                outcome: t.known(argv).unwrap_or_else(|| t.one(argv)),
            })
            .collect();
        let (needed, note) = match self.kind {
            Kind::OnOff => on_off_verdict(&self.name, &tried),
            Kind::Levels | Kind::Arches => {
                let word = if self.kind == Kind::Arches {
                    "on"
                } else {
                    "with"
                };
                (needed_from(&tried), levels_note(&tried, word))
            }
        };
        let note = format!("{note}{}", grain_note(&tried));
        let note = match self.given {
            Some(g) => format!("{note} (as given: {g})"),
            None => note,
        };
        Dimension {
            name: self.name,
            tried,
            needed,
            note,
        }
    }
}

fn outcomes_list(items: &[&Tried]) -> String {
    items
        .iter()
        .map(|t| format!("{} ({})", t.value, t.outcome.as_str()))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Which grain the verdict compared crashes at: exact signatures, unless a probe crashed the
/// same way only by kind, message and pass, which the note then names.
fn grain_note(tried: &[Tried]) -> String {
    let coarse: Vec<&str> = tried
        .iter()
        .filter(|t| t.outcome == Outcome::SameCrashCoarse)
        .map(|t| t.value.as_str())
        .collect();
    if coarse.is_empty() {
        String::new()
    } else {
        format!(
            "; compared by the crash's kind, message and pass (coarse grain): {} crashes that way with other frames",
            coarse.join(", ")
        )
    }
}

fn levels_note(tried: &[Tried], word: &str) -> String {
    let same: Vec<&str> = tried
        .iter()
        .filter(|t| t.outcome.is_same_coarse())
        .map(|t| t.value.as_str())
        .collect();
    let differently: Vec<&str> = tried
        .iter()
        .filter(|t| t.outcome == Outcome::OtherCrash)
        .map(|t| t.value.as_str())
        .collect();
    let other: Vec<&Tried> = tried
        .iter()
        .filter(|t| !t.outcome.is_same_coarse() && t.outcome != Outcome::OtherCrash)
        .collect();
    let mut parts = Vec::new();
    if same.is_empty() {
        parts.push("none of the values tried gives this crash".to_string());
    } else if differently.is_empty() && other.is_empty() {
        parts.push(format!(
            "crashes {word} every value tried: {}",
            same.join(", ")
        ));
    } else {
        parts.push(format!("crashes {word} {}", same.join(", ")));
    }
    if !differently.is_empty() {
        parts.push(format!(
            "crashes differently (another signature) {word} {}",
            differently.join(", ")
        ));
    }
    if !other.is_empty() {
        parts.push(format!("not {word} {}", outcomes_list(&other)));
    }
    parts.join("; ")
}

pub(crate) fn on_off_verdict(name: &str, tried: &[Tried]) -> (Option<bool>, String) {
    let (on, off) = (tried[0].outcome, tried[1].outcome);
    match (on.is_same_coarse(), off.is_same_coarse()) {
        (true, false) => (
            Some(true),
            format!(
                "needed: without {name} the crash is gone ({})",
                off.as_str()
            ),
        ),
        (_, true) => (
            Some(false),
            format!("not needed: crashes without {name} too"),
        ),
        (false, false) => (
            None,
            format!(
                "could not tell: with {name}: {}, without: {}",
                on.as_str(),
                off.as_str()
            ),
        ),
    }
}

/// True for an optimisation-level option (`-O2`, `-Os`, `-Ofast`, `-O`).
pub(crate) fn is_opt(u: &Unit) -> bool {
    let h = u.head();
    h.strip_prefix("-O").is_some_and(|r| {
        r.is_empty()
            || r == "fast"
            || (r.len() == 1 && matches!(r.as_bytes()[0], b'0'..=b'9' | b's' | b'z' | b'g'))
    })
}

/// True for a driver debug-info option (`-g`, `-g2`, `-ggdb`, `-gdwarf-5` …), or a cc1 one.
pub(crate) fn is_debug(u: &Unit, cc1: bool) -> bool {
    let h = u.head();
    if cc1 {
        return h.starts_with("-debug-info-kind=") || h.starts_with("-dwarf-version");
    }
    h == "-g"
        || [
            "-g0",
            "-g1",
            "-g2",
            "-g3",
            "-ggdb",
            "-gdwarf",
            "-gline-",
            "-gfull",
            "-gcolumn-info",
            "-gsplit-dwarf",
            "-gcodeview",
        ]
        .iter()
        .any(|p| h.starts_with(p))
}

const OPT_LEVELS: &[&str] = &["-O0", "-O1", "-O2", "-O3", "-Os", "-Oz"];

/// AMD GPU arches by generation, in order.
const AMD_GENERATIONS: &[&[&str]] = &[
    &["gfx600", "gfx601", "gfx602"],
    &["gfx700", "gfx701", "gfx702", "gfx703", "gfx704", "gfx705"],
    &["gfx801", "gfx802", "gfx803", "gfx805", "gfx810"],
    &[
        "gfx900", "gfx902", "gfx904", "gfx906", "gfx908", "gfx909", "gfx90a", "gfx90c", "gfx940",
        "gfx941", "gfx942",
    ],
    &[
        "gfx1010", "gfx1011", "gfx1012", "gfx1013", "gfx1030", "gfx1031", "gfx1032", "gfx1033",
        "gfx1034", "gfx1035", "gfx1036",
    ],
    &[
        "gfx1100", "gfx1101", "gfx1102", "gfx1103", "gfx1150", "gfx1151",
    ],
];

/// One arch per generation (two for GFX9, whose gfx90a differs most), for the neighbours.
const AMD_REPRESENTATIVES: &[&str] = &[
    "gfx600", "gfx700", "gfx803", "gfx900", "gfx90a", "gfx1030", "gfx1100",
];

const NVIDIA: &[&str] = &[
    "sm_35", "sm_50", "sm_52", "sm_60", "sm_61", "sm_70", "sm_75", "sm_80", "sm_86", "sm_89",
    "sm_90",
];

/// Arches near `arch` to try: up to two siblings of its generation and one representative
/// of every other generation (AMD), or up to three each side (NVIDIA); in table order.
pub fn neighbour_arches(arch: &str) -> Vec<String> {
    let base = arch.split(':').next().unwrap_or(arch);
    let mut out: Vec<&str> = Vec::new();
    if let Some(gen) = AMD_GENERATIONS.iter().position(|g| g.contains(&base)) {
        let g = AMD_GENERATIONS[gen];
        let pos = g.iter().position(|a| *a == base).unwrap_or(0);
        let mut sibs: Vec<(usize, &str)> = g
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != pos)
            .map(|(i, a)| (i.abs_diff(pos), *a))
            .collect();
        sibs.sort();
        let sibs: Vec<&str> = sibs.into_iter().take(2).map(|(_, a)| a).collect();
        for (i, gen_arches) in AMD_GENERATIONS.iter().enumerate() {
            for a in gen_arches.iter() {
                let rep = i != gen && AMD_REPRESENTATIVES.contains(a);
                if (sibs.contains(a) || rep) && *a != base {
                    out.push(a);
                }
            }
        }
    } else if let Some(pos) = NVIDIA.iter().position(|a| *a == base) {
        for (i, a) in NVIDIA.iter().enumerate() {
            if i != pos && i.abs_diff(pos) <= 3 {
                out.push(a);
            }
        }
    }
    out.into_iter().map(String::from).collect()
}

/// An arch unit: (how to spell a replacement, arches it names).
fn arch_of(u: &Unit, cc1: bool) -> Option<(&'static str, Vec<String>)> {
    for name in ["--offload-arch", "--cuda-gpu-arch"] {
        if let Some(v) = u.value_of(name) {
            let spell = if name == "--offload-arch" {
                "--offload-arch="
            } else {
                "--cuda-gpu-arch="
            };
            return Some((spell, v.split(',').map(String::from).collect()));
        }
    }
    let gpu = |v: &str| v.starts_with("gfx") || v.starts_with("sm_");
    if cc1 {
        if let Some(v) = u.value_of("-target-cpu").filter(|v| gpu(v)) {
            return Some(("-target-cpu", vec![v.to_string()]));
        }
    } else if let Some(v) = u.value_of("-mcpu").filter(|v| gpu(v)) {
        return Some(("-mcpu=", vec![v.to_string()]));
    }
    None
}

fn spelled(spell: &str, arch: &str) -> Vec<String> {
    if spell.ends_with('=') {
        vec![format!("{spell}{arch}")]
    } else {
        vec![spell.to_string(), arch.to_string()]
    }
}

/// Plans every simple dimension that applies to this command.
pub(crate) fn plan_all(original: &[String], minimal: &[String], cc1: bool) -> Vec<Plan> {
    let mut plans = vec![
        plan_opt(original, minimal),
        plan_debug(original, minimal, cc1),
    ];
    plans.extend(plan_std(original, minimal));
    if !cc1 {
        plans.extend(plan_driver_values(original, minimal));
    }
    plans.extend(plan_arches(original, minimal, cc1));
    plans
}

/// The original command's arguments `sel` picks, as one label (`None`: there are none).
fn given_of(original: &[String], sel: &dyn Fn(&Unit) -> bool) -> Option<String> {
    let v: Vec<String> = args::split(original)
        .iter()
        .filter(|u| sel(u))
        .map(|u| u.args.join(" "))
        .collect();
    (!v.is_empty()).then(|| v.join(" "))
}

/// `-O`: each level in place of the command's.
fn plan_opt(original: &[String], minimal: &[String]) -> Plan {
    Plan {
        name: "-O".into(),
        kind: Kind::Levels,
        candidates: OPT_LEVELS
            .iter()
            .map(|l| {
                (
                    l.to_string(),
                    args::replace_where(minimal, is_opt, &[l.to_string()]),
                )
            })
            .collect(),
        given: Some(given_of(original, &is_opt).unwrap_or_else(|| "none, i.e. -O0".into())),
    }
}

/// `-g`: debug info on (the command's own, else `-g` or cc1's equivalent) and off.
fn plan_debug(original: &[String], minimal: &[String], cc1: bool) -> Plan {
    let dbg = |u: &Unit| is_debug(u, cc1);
    let on_args: Vec<String> = if cc1 {
        vec![
            "-debug-info-kind=constructor".into(),
            "-dwarf-version=5".into(),
        ]
    } else {
        vec!["-g".into()]
    };
    let present: Vec<String> = args::split(minimal)
        .iter()
        .filter(|u| dbg(u))
        .flat_map(|u| u.args.clone())
        .collect();
    let (on_label, on) = if present.is_empty() {
        (
            on_args.join(" "),
            args::replace_where(minimal, dbg, &on_args),
        )
    } else {
        (present.join(" "), minimal.to_vec())
    };
    Plan {
        name: "-g".into(),
        kind: Kind::OnOff,
        candidates: vec![
            (on_label, on),
            ("off".into(), args::remove_where(minimal, dbg)),
        ],
        given: Some(given_of(original, &dbg).unwrap_or_else(|| "off".into())),
    }
}

/// `-std=`, when the command gives one: the given standard, the other standards of its
/// language (GNU dialects for a GNU one) and the compiler's default.
fn plan_std(original: &[String], minimal: &[String]) -> Option<Plan> {
    let is_std = |u: &Unit| u.value_of("-std").or_else(|| u.value_of("--std")).is_some();
    let u = args::find(original, is_std)?;
    let given = u
        .value_of("-std")
        .or_else(|| u.value_of("--std"))
        .unwrap_or("")
        .to_string();
    let gnu = given.starts_with("gnu");
    let alts: &[&str] = if given.contains("++") {
        &["c++11", "c++14", "c++17", "c++20"]
    } else {
        &["c99", "c11", "c17"]
    };
    let mut values = vec![given.clone()];
    for a in alts {
        let a = if gnu {
            a.replacen('c', "gnu", 1)
        } else {
            a.to_string()
        };
        if !values.contains(&a) {
            values.push(a);
        }
    }
    let mut candidates: Vec<(String, Vec<String>)> = values
        .iter()
        .map(|s| {
            (
                format!("-std={s}"),
                args::replace_where(minimal, is_std, &[format!("-std={s}")]),
            )
        })
        .collect();
    candidates.push(("default".into(), args::remove_where(minimal, is_std)));
    Some(Plan {
        name: "-std".into(),
        kind: Kind::Levels,
        candidates,
        given: Some(format!("-std={given}")),
    })
}

/// `-mabi` and `-mrvv-vector-bits` (driver; RISC-V and others), each when the command gives
/// it: as given and the default.
fn plan_driver_values(original: &[String], minimal: &[String]) -> Vec<Plan> {
    let mut plans = Vec::new();
    for name in ["-mabi", "-mrvv-vector-bits"] {
        let sel = |u: &Unit| u.value_of(name).is_some();
        if let Some(u) = args::find(original, sel) {
            let with = args::replace_where(minimal, sel, &u.args);
            plans.push(Plan {
                name: name.into(),
                kind: Kind::OnOff,
                candidates: vec![
                    (u.args.join(" "), with),
                    ("default".into(), args::remove_where(minimal, sel)),
                ],
                given: Some(u.args.join(" ")),
            });
        }
    }
    plans
}

/// GPU arches: each arch of the minimal command alone, then neighbours of the first one.
fn plan_arches(original: &[String], minimal: &[String], cc1: bool) -> Option<Plan> {
    let in_min: Vec<(&'static str, Vec<String>)> = args::split(minimal)
        .iter()
        .filter_map(|u| arch_of(u, cc1))
        .collect();
    let in_orig: Vec<Vec<String>> = args::split(original)
        .iter()
        .filter_map(|u| arch_of(u, cc1).map(|(_, a)| a))
        .collect();
    let Some(&(spell, _)) = in_min.first() else {
        // Named in the original but removed by ddmin: the arch does not matter.
        let given = in_orig.concat();
        if given.is_empty() {
            return None;
        }
        return Some(Plan {
            name: "offload arch".into(),
            kind: Kind::OnOff,
            candidates: vec![
                (given.join(","), original.to_vec()),
                ("default".into(), minimal.to_vec()),
            ],
            given: None,
        });
    };
    let mut arches: Vec<String> = in_min.iter().flat_map(|(_, a)| a.clone()).collect();
    arches.dedup();
    let neighbours = neighbour_arches(&arches[0]);
    for n in neighbours {
        if !arches.contains(&n) {
            arches.push(n);
        }
    }
    let sel = |u: &Unit| arch_of(u, cc1).is_some();
    let candidates = arches
        .iter()
        .map(|a| {
            (
                a.clone(),
                args::replace_where(minimal, sel, &spelled(spell, a)),
            )
        })
        .collect();
    Some(Plan {
        name: "offload arch".into(),
        kind: Kind::Arches,
        candidates,
        given: Some(in_orig.concat().join(",")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gfx600_neighbours_cover_every_generation() {
        assert_eq!(
            neighbour_arches("gfx600"),
            ["gfx601", "gfx602", "gfx700", "gfx803", "gfx900", "gfx90a", "gfx1030", "gfx1100"]
        );
        let n = neighbour_arches("gfx90a");
        assert!(
            n.contains(&"gfx909".to_string()) && n.contains(&"gfx90c".to_string()),
            "{n:?}"
        );
        assert!(n.contains(&"gfx600".to_string()) && !n.contains(&"gfx90a".to_string()));
        assert_eq!(
            neighbour_arches("sm_70"),
            ["sm_52", "sm_60", "sm_61", "sm_75", "sm_80", "sm_86"]
        );
        assert!(neighbour_arches("gfx9999").is_empty());
    }

    #[test]
    fn options_are_classified() {
        let u = |s: &str| Unit {
            args: vec![s.to_string()],
            pinned: false,
            input: false,
        };
        assert!(is_opt(&u("-O2")) && is_opt(&u("-Os")) && is_opt(&u("-Ofast")) && is_opt(&u("-O")));
        assert!(!is_opt(&u("-Onothing")));
        assert!(
            is_debug(&u("-g"), false)
                && is_debug(&u("-gdwarf-4"), false)
                && is_debug(&u("-ggdb3"), false)
        );
        assert!(!is_debug(&u("-gpu-max-threads-per-block=1"), false));
        assert!(is_debug(&u("-debug-info-kind=constructor"), true));
        assert!(!is_debug(&u("-debugger-tuning=gdb"), true));
    }

    #[test]
    fn on_off_verdicts() {
        let t = |a, b| {
            [
                Tried {
                    value: "-g".into(),
                    outcome: a,
                },
                Tried {
                    value: "off".into(),
                    outcome: b,
                },
            ]
        };
        assert_eq!(
            on_off_verdict("-g", &t(Outcome::SameCrash, Outcome::NoCrash)).0,
            Some(true)
        );
        assert_eq!(
            on_off_verdict("-g", &t(Outcome::SameCrash, Outcome::SameCrash)).0,
            Some(false)
        );
        assert_eq!(
            on_off_verdict("-g", &t(Outcome::Timeout, Outcome::Error)).0,
            None
        );
    }
}
