//! Command lines as lists of units: an option with its value is one unit, an input is one.
//!
//! Why this exists: ddmin must never split `-o /dev/null` or `-mllvm -opt` (half of a pair
//! is a different command, usually an error, and wastes a run), and must never remove what
//! makes the command about *this* case: the input, the `-x` that names its language, the
//! output, the action (`-c`/`-S`), the offload job choice and `-fno-crash-diagnostics`
//! (without it every non-crashing candidate still writes reproducer files to /tmp). Those
//! units are *pinned*. The edit helpers here replace or insert a unit by predicate, for the
//! dimension probes. Pure.

use crate::command::CompilerCommand;

/// One argument unit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unit {
    pub args: Vec<String>,
    /// Kept in every candidate.
    pub pinned: bool,
    /// An input file.
    pub input: bool,
}

impl Unit {
    /// The option as written (first argument).
    pub fn head(&self) -> &str {
        &self.args[0]
    }

    /// The value of a `-name=value` or `-name value` unit, when it is spelled `name`.
    pub fn value_of(&self, name: &str) -> Option<&str> {
        if self.args.len() == 2 && self.args[0] == name {
            return Some(&self.args[1]);
        }
        self.args[0]
            .strip_prefix(name)
            .and_then(|r| r.strip_prefix('='))
    }
}

/// Options whose separate value may start with `-` or `+`.
const DASH_VALUE: &[&str] = &[
    "-mllvm",
    "-Xclang",
    "-target-feature",
    "-Xlinker",
    "-Xassembler",
    "-Xpreprocessor",
    "-Xoffload-linker",
    "-Xcuda-ptxas",
    "-Xcuda-fatbinary",
    "-Xopenmp-target",
    "-Xarch_device",
    "-Xarch_host",
];

fn pinned_head(a: &str) -> bool {
    matches!(
        a,
        "-o" | "-x"
            | "-c"
            | "-S"
            | "-E"
            | "-cc1"
            | "-fno-crash-diagnostics"
            | "--cuda-device-only"
            | "--offload-device-only"
            | "--cuda-host-only"
            | "--offload-host-only"
    ) || (a.starts_with("-o") && a.len() > 2)
        || (a.starts_with("-x") && a.len() > 2 && !a.starts_with("-xc-"))
}

/// Splits an argv (program first) into units. Inputs and the units listed in the module doc
/// are pinned; a pinned unit that repeats an earlier one is not (ddmin drops the copy).
pub fn split(argv: &[String]) -> Vec<Unit> {
    let Some(cmd) = CompilerCommand::from_argv(argv) else {
        return Vec::new();
    };
    let inputs = cmd.input_indices();
    let args = &cmd.args;
    let mut units: Vec<Unit> = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        if inputs.contains(&i) {
            units.push(Unit {
                args: vec![a.clone()],
                pinned: true,
                input: true,
            });
            i += 1;
            continue;
        }
        if !a.starts_with('-') {
            // A value the option table knows and we did not pair: keep it with its option.
            match units.last_mut() {
                Some(u) if !u.input => u.args.push(a.clone()),
                _ => units.push(Unit {
                    args: vec![a.clone()],
                    pinned: true,
                    input: false,
                }),
            }
            i += 1;
            continue;
        }
        let mut unit = vec![a.clone()];
        if let Some(next) = args.get(i + 1) {
            if !inputs.contains(&(i + 1))
                && (DASH_VALUE.contains(&a.as_str()) || !next.starts_with('-'))
            {
                unit.push(next.clone());
            }
        }
        i += unit.len();
        let pinned = pinned_head(a);
        units.push(Unit {
            args: unit,
            pinned,
            input: false,
        });
    }
    // A repeated pinned unit (capture adds `-fno-crash-diagnostics` to a command that may
    // have it already) is left to ddmin.
    for j in 0..units.len() {
        if units[j].pinned && !units[j].input && units[..j].iter().any(|u| u.args == units[j].args)
        {
            units[j].pinned = false;
        }
    }
    units
}

/// Program followed by the units' arguments.
pub fn join(program: &str, units: &[Unit]) -> Vec<String> {
    std::iter::once(program.to_string())
        .chain(units.iter().flat_map(|u| u.args.iter().cloned()))
        .collect()
}

/// The argv without the units `drop` selects.
pub fn remove_where(argv: &[String], drop: impl Fn(&Unit) -> bool) -> Vec<String> {
    let units: Vec<Unit> = split(argv).into_iter().filter(|u| !drop(u)).collect();
    join(&argv[0], &units)
}

/// The argv with the units `sel` selects replaced by `new` (at the first one's place), or,
/// when none is selected, `new` inserted before the `-x`/`-o`/input at the end.
pub fn replace_where(argv: &[String], sel: impl Fn(&Unit) -> bool, new: &[String]) -> Vec<String> {
    let units = split(argv);
    let new_unit = Unit {
        args: new.to_vec(),
        pinned: false,
        input: false,
    };
    let mut out: Vec<Unit> = Vec::with_capacity(units.len() + 1);
    let mut placed = false;
    for u in &units {
        if sel(u) {
            if !placed && !new.is_empty() {
                out.push(new_unit.clone());
            }
            placed = true;
        } else {
            out.push(u.clone());
        }
    }
    if !placed && !new.is_empty() {
        let at = out
            .iter()
            .position(|u| u.input || matches!(u.head(), "-x" | "-o"))
            .unwrap_or(out.len());
        out.insert(at, new_unit);
    }
    join(&argv[0], &out)
}

/// The first unit `sel` selects.
pub fn find(argv: &[String], sel: impl Fn(&Unit) -> bool) -> Option<Unit> {
    split(argv).into_iter().find(|u| sel(u))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn driver_units_pair_options_and_pin_the_job() {
        let argv = v("clang -fno-crash-diagnostics -c --target=riscv64-linux-gnu -march=rv64gcv -O1 -g -fno-crash-diagnostics -o /dev/null -x cpp-output input.i");
        let units = split(&argv);
        let shown: Vec<(String, bool)> =
            units.iter().map(|u| (u.args.join(" "), u.pinned)).collect();
        assert_eq!(
            shown,
            [
                ("-fno-crash-diagnostics", true),
                ("-c", true),
                ("--target=riscv64-linux-gnu", false),
                ("-march=rv64gcv", false),
                ("-O1", false),
                ("-g", false),
                ("-fno-crash-diagnostics", false),
                ("-o /dev/null", true),
                ("-x cpp-output", true),
                ("input.i", true),
            ]
            .map(|(a, b)| (a.to_string(), b))
        );
        assert_eq!(join("clang", &units), argv);
    }

    #[test]
    fn cc1_pairs_keep_dash_values() {
        let argv = v("clang -cc1 -triple riscv64-unknown-linux-gnu -target-feature +v -target-feature -zba -mllvm -crash-diagnostics-dir=d -O2 -x c -o /dev/null input.c");
        let units = split(&argv);
        let heads: Vec<String> = units.iter().map(|u| u.args.join(" ")).collect();
        assert_eq!(
            heads,
            [
                "-cc1",
                "-triple riscv64-unknown-linux-gnu",
                "-target-feature +v",
                "-target-feature -zba",
                "-mllvm -crash-diagnostics-dir=d",
                "-O2",
                "-x c",
                "-o /dev/null",
                "input.c"
            ]
        );
        assert!(units[8].input && units[8].pinned);
    }

    #[test]
    fn replace_and_insert() {
        let argv = v("clang -c -O2 -w -o /dev/null -x cpp-output input.i");
        let is_o = |u: &Unit| u.head().starts_with("-O");
        assert_eq!(
            replace_where(&argv, is_o, &v("-O0")),
            v("clang -c -O0 -w -o /dev/null -x cpp-output input.i")
        );
        let no_o = remove_where(&argv, is_o);
        assert_eq!(no_o, v("clang -c -w -o /dev/null -x cpp-output input.i"));
        assert_eq!(
            replace_where(&no_o, is_o, &v("-Os")),
            v("clang -c -w -Os -o /dev/null -x cpp-output input.i")
        );
        assert_eq!(
            find(&argv, |u| u.value_of("-o").is_some()).unwrap().args,
            v("-o /dev/null")
        );
        let m = split(&v("clang -march=rv64gc -mabi=lp64d x.c"));
        assert_eq!(m[0].value_of("-march"), Some("rv64gc"));
        assert_eq!(m[1].value_of("-mabi"), Some("lp64d"));
    }
}
