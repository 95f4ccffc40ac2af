//! `icepick simulate TRACE`: how a reduction would scale on more workers (a build farm),
//! predicted from the trace of one real run (`icepick reduce --trace`), by replaying the
//! driver's own speculation rules on a virtual clock (`reducers::simulate`).

use std::io::Write;
use std::path::PathBuf;

use clap::Args;
use plotters::prelude::*;
use reducers::simulate::{serial_path, simulate_policy, Phase, Phases, Policy, Prediction, Step};
use reducers::Outcome;
use serde::Deserialize;

use crate::error;

/// Arguments of `icepick simulate`.
#[derive(Debug, Args)]
pub struct SimulateArgs {
    /// A trace from `icepick reduce --trace FILE` (or a case's logs/reduce-trace.jsonl).
    #[arg(value_name = "TRACE")]
    trace: PathBuf,
    /// Worker counts to predict (tests in flight).
    #[arg(long, value_name = "N,N,…", value_delimiter = ',', default_values_t = [1, 2, 8, 32, 64, 128],
          value_parser = crate::cli::jobs_arg)]
    workers: Vec<usize>,
    /// Added to every test: a farm's cost of shipping a test and its result, in ms.
    #[arg(long, value_name = "MS", default_value_t = 0.0)]
    latency: f64,
    /// Print `{"rows": [{"workers", "wall_s", "speedup", "wasted_tests"}, …]}` and nothing else.
    #[arg(long)]
    json: bool,
    /// Also draw the speedup curve as an SVG.
    #[arg(long, value_name = "FILE")]
    svg: Option<PathBuf>,
    /// Predict for the driver's earliest policy instead (each pass run's tests ended before
    /// the next pass run started; implies --no-success), for comparison.
    #[arg(long)]
    pass_barrier: bool,
    /// Model an accepted candidate's witness and confirming runs one after the other (the
    /// earlier acceptance path) instead of side by side.
    #[arg(long)]
    sequential_acceptance: bool,
    /// Speculate on failure only (the earlier driver): no success speculation.
    #[arg(long)]
    no_success: bool,
    /// Ignore the tests' hints (a first compiler run that crashed the right way: a level
    /// opens on the test at once), as the driver did before them.
    #[arg(long)]
    no_hints: bool,
    /// Never lend a worker to a running test (so that an accepted test runs its
    /// confirming runs beside its first compiler run), as the driver did before.
    #[arg(long)]
    no_spare: bool,
}

/// The fields of a trace line the simulation needs.
#[derive(Debug, Deserialize)]
struct Line {
    seq: u64,
    #[serde(default)]
    pass: String,
    run: u64,
    base: u64,
    #[serde(default)]
    parent: Option<u64>,
    outcome: String,
    interesting: bool,
    start: f64,
    end: f64,
    #[serde(default)]
    first: Option<f64>,
    #[serde(default)]
    witness: Option<f64>,
    #[serde(default)]
    confirm: Option<f64>,
    #[serde(default)]
    rejected: Option<String>,
    /// The edit's key, in hex (traces before it have none).
    #[serde(default)]
    edit: Option<String>,
    /// A spare worker ran its checks beside its first run (a trace of a run with jobs > 1).
    #[serde(default)]
    spare: bool,
}

/// The steps of a trace file; an error names the line that is not a trace record.
fn read_trace(text: &str) -> Result<Vec<Step>, String> {
    let mut steps = Vec::new();
    for (n, l) in text.lines().enumerate() {
        if l.trim().is_empty() {
            continue;
        }
        let line: Line = serde_json::from_str(l)
            .map_err(|e| format!("line {} is not a trace record: {e}", n + 1))?;
        let cost = match line.outcome.as_str() {
            "cancelled" => continue,
            "cached" => None,
            _ => Some((line.end - line.start).max(0.0)),
        };
        // The witness runs second and the confirming runs last when the model runs them in turn
        // (a witness reject then costs no confirming run).
        let phases = line.first.map(|first| Phases {
            first,
            second: line.witness,
            third: line.confirm,
            rejected: match line.rejected.as_deref() {
                Some("first") => Some(Phase::First),
                Some("witness") => Some(Phase::Second),
                Some("confirm") => Some(Phase::Third),
                _ => None,
            },
        });
        // A test lent a spare worker took less than its phases: the model wants the time it
        // takes without one (its checks after its first run), and lends by its own rules.
        let cost = match (&phases, cost) {
            (Some(p), Some(_)) if line.spare && p.rejected != Some(Phase::First) => {
                Some(p.first + p.second.unwrap_or(0.0).max(p.third.unwrap_or(0.0)))
            }
            _ => cost,
        };
        steps.push(Step {
            seq: line.seq,
            pass: line.pass,
            pass_run: line.run,
            base: line.base,
            parent: line.parent,
            outcome: if line.interesting {
                Outcome::Interesting
            } else {
                Outcome::Uninteresting
            },
            cost,
            phases,
            edit: line.edit.and_then(|e| u64::from_str_radix(&e, 16).ok()),
        });
    }
    Ok(steps)
}

/// One row of the output.
#[derive(Debug, serde::Serialize)]
struct Row {
    workers: usize,
    wall_s: f64,
    speedup: f64,
    wasted_tests: u64,
}

fn rows(path: &[Step], workers: &[usize], latency_s: f64, policy: &Policy) -> Vec<Row> {
    let one = simulate_policy(path, 1, latency_s, policy).wall_s;
    workers
        .iter()
        .map(|&w| {
            let Prediction {
                workers,
                wall_s,
                wasted_tests,
                ..
            } = simulate_policy(path, w, latency_s, policy);
            Row {
                workers,
                wall_s: (wall_s * 100.0).round() / 100.0,
                speedup: ((one / wall_s.max(1e-9)) * 100.0).round() / 100.0,
                wasted_tests,
            }
        })
        .collect()
}

/// Draws speedup against workers (log2 axis) with the ideal line for comparison.
fn draw(rows: &[Row], title: &str) -> Result<String, String> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (640, 420)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        let max_w = rows.iter().map(|r| r.workers).max().unwrap_or(1).max(2) as f64;
        let max_s = rows.iter().map(|r| r.speedup).fold(1.0, f64::max);
        let lg = |x: f64| x.max(1.0).log2();
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 16))
            .margin(12)
            .x_label_area_size(36)
            .y_label_area_size(48)
            .build_cartesian_2d(0.0..lg(max_w), 0.0..(max_s * 1.15).max(2.0))
            .map_err(|e| e.to_string())?;
        chart
            .configure_mesh()
            .x_desc("workers")
            .y_desc("predicted speedup")
            .x_label_formatter(&|x| format!("{:.0}", 2f64.powf(*x)))
            .draw()
            .map_err(|e| e.to_string())?;
        let ideal_top = max_s * 1.15;
        chart
            .draw_series(LineSeries::new(
                [(0.0, 1.0), (lg(ideal_top.min(max_w)), ideal_top.min(max_w))],
                BLACK.mix(0.25),
            ))
            .map_err(|e| e.to_string())?
            .label("ideal")
            .legend(|(x, y)| PathElement::new([(x, y), (x + 16, y)], BLACK.mix(0.25)));
        let pts: Vec<(f64, f64)> = rows
            .iter()
            .map(|r| (lg(r.workers as f64), r.speedup))
            .collect();
        chart
            .draw_series(LineSeries::new(pts.clone(), BLUE.stroke_width(2)))
            .map_err(|e| e.to_string())?
            .label("predicted")
            .legend(|(x, y)| PathElement::new([(x, y), (x + 16, y)], BLUE.stroke_width(2)));
        chart
            .draw_series(pts.iter().map(|&p| Circle::new(p, 3, BLUE.filled())))
            .map_err(|e| e.to_string())?;
        chart
            .configure_series_labels()
            .border_style(BLACK.mix(0.3))
            .background_style(WHITE)
            .draw()
            .map_err(|e| e.to_string())?;
        root.present().map_err(|e| e.to_string())?;
    }
    Ok(svg)
}

/// Runs `icepick simulate`.
pub fn run(args: SimulateArgs) -> anyhow::Result<u8> {
    let text = match std::fs::read_to_string(&args.trace) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("icepick: cannot read {}: {e}", args.trace.display());
            return Ok(error::USAGE);
        }
    };
    let steps = match read_trace(&text) {
        Ok(s) if !s.is_empty() => s,
        Ok(_) => {
            eprintln!(
                "icepick: {} has no tests (a trace comes from `icepick reduce --trace FILE`)",
                args.trace.display()
            );
            return Ok(error::USAGE);
        }
        Err(why) => {
            eprintln!("icepick: {}: {why}", args.trace.display());
            return Ok(error::USAGE);
        }
    };
    if args.workers.contains(&0) || !(args.latency >= 0.0 && args.latency.is_finite()) {
        eprintln!("icepick: --workers must be at least 1 and --latency a number of ms >= 0");
        return Ok(error::USAGE);
    }
    let path = serial_path(&steps);
    let policy = Policy {
        pass_barrier: args.pass_barrier,
        concurrent_acceptance: !args.sequential_acceptance,
        success: !args.no_success && !args.pass_barrier,
        hints: !args.no_hints,
        spare: !args.no_spare,
    };
    let table = rows(&path, &args.workers, args.latency / 1000.0, &policy);
    if let Some(file) = &args.svg {
        let name = args
            .trace
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let svg = draw(&table, &format!("predicted speedup, {name}"))
            .map_err(|e| anyhow::anyhow!("drawing the curve: {e}"))?;
        std::fs::write(file, svg)
            .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", file.display()))?;
    }
    let mut out = crate::cli::term::stdout();
    if args.json {
        writeln!(out, "{}", serde_json::json!({ "rows": table }))?;
        return Ok(error::OK);
    }
    let tests = path.iter().filter(|s| s.cost.is_some()).count();
    writeln!(
        out,
        "{tests} tests on the serial path ({} candidates){}",
        path.len(),
        if args.latency > 0.0 {
            format!(", {} ms added to each", args.latency)
        } else {
            String::new()
        }
    )?;
    writeln!(
        out,
        "{:>8} {:>10} {:>8} {:>13}",
        "workers", "wall s", "speedup", "wasted tests"
    )?;
    for r in &table {
        writeln!(
            out,
            "{:>8} {:>10.1} {:>7.2}x {:>13}",
            r.workers, r.wall_s, r.speedup, r.wasted_tests
        )?;
    }
    Ok(error::OK)
}

#[cfg(test)]
mod tests {
    use super::*;

    const TRACE: &str = r#"{"seq":0,"pass":"lines","run":0,"base":0,"bytes":9,"outcome":"uninteresting","interesting":false,"start":0.0,"end":1.0,"worker":0}
{"seq":1,"pass":"lines","run":0,"base":0,"bytes":8,"outcome":"uninteresting","interesting":false,"start":1.0,"end":2.0,"worker":0}
{"seq":2,"pass":"lines","run":0,"base":0,"bytes":7,"outcome":"cached","interesting":false,"start":2.0,"end":2.0,"worker":null}
{"seq":3,"pass":"lines","run":0,"base":0,"bytes":7,"outcome":"interesting","interesting":true,"start":2.0,"end":3.0,"worker":0}
"#;

    #[test]
    fn a_trace_reads_and_two_workers_halve_the_failures() {
        let path = serial_path(&read_trace(TRACE).unwrap());
        let r = rows(&path, &[1, 2], 0.0, &Policy::default());
        assert_eq!(r[0].wall_s, 3.0);
        // 0 and 1 side by side, then 3.
        assert_eq!(r[1].wall_s, 2.0);
        assert_eq!(r[1].speedup, 1.5);
    }

    #[test]
    fn a_test_that_was_lent_a_spare_worker_is_read_at_its_time_without_one() {
        let line = |spare: bool, rejected: &str| {
            format!(
                r#"{{"seq":0,"pass":"lines","run":0,"base":0,"bytes":9,"outcome":"interesting","interesting":true,"start":0.0,"end":1.25,"worker":0,"first":1.0,"witness":0.25,"confirm":0.5,"rejected":{rejected},"spare":{spare},"edit":"00000000000000ff"}}"#
            )
        };
        let lent = read_trace(&line(true, "null")).unwrap();
        assert_eq!(lent[0].cost, Some(1.5));
        assert_eq!(lent[0].edit, Some(255));
        // Without a loan, or rejected by its first run (the checks were killed), as recorded.
        assert_eq!(
            read_trace(&line(false, "null")).unwrap()[0].cost,
            Some(1.25)
        );
        assert_eq!(
            read_trace(&line(true, "\"first\"")).unwrap()[0].cost,
            Some(1.25)
        );
    }

    #[test]
    fn a_line_that_is_no_record_is_named() {
        let err = read_trace("{\"seq\":0}\nnot json\n").unwrap_err();
        assert!(err.starts_with("line 1 "), "{err}");
    }

    #[test]
    fn the_curve_is_an_svg_with_the_labels() {
        let path = serial_path(&read_trace(TRACE).unwrap());
        let svg = draw(&rows(&path, &[1, 2, 8], 0.0, &Policy::default()), "t").unwrap();
        assert!(svg.starts_with("<svg"), "{}", &svg[..60.min(svg.len())]);
        assert!(svg.contains("predicted speedup"));
    }
}
