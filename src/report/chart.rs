//! The reduction as a picture: `reduction.svg` in the case directory, drawn from the trace
//! the reduction kept in the case (`reduction.trace`, one JSON line per test). The size of
//! every candidate tested (a dot, coloured by its pass) and of the best-so-far (a line) over
//! time on a log scale, and the tests run so far on a second axis. The report links it; the
//! dashboard's bucket page embeds it under this name.

use std::path::Path;

use plotters::prelude::*;
use serde::Deserialize;

use crate::case::{Case, CaseError};

/// The file name, in the case directory (a contract with the dashboard).
pub const SVG: &str = "reduction.svg";

/// The fields of a trace line the picture needs.
#[derive(Debug, Deserialize)]
struct Line {
    seq: u64,
    pass: String,
    base: u64,
    bytes: usize,
    outcome: String,
    interesting: bool,
    end: f64,
}

/// The trace the case names, read safely (it must be a file inside the case); `None` when
/// the case has none or it holds no test.
fn read(dir: &Path, case: &Case) -> Option<Vec<Line>> {
    let name = case.reduction_section()?.trace?;
    Case::file(dir, "reduction.trace", &name).ok()??;
    let bytes = crate::case::fileio::read(dir, &name, crate::case::fileio::cap::LOG).ok()??;
    let text = String::from_utf8_lossy(&bytes);
    let mut lines: Vec<Line> = text
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .filter(|l: &Line| l.end.is_finite() && l.end >= 0.0)
        .collect();
    lines.sort_by_key(|l| l.seq);
    (!lines.is_empty()).then_some(lines)
}

/// The best-so-far over time: `(end of the accepted test, its size)`, starting with the
/// largest candidate's base at time 0. The first interesting candidate of each `base` is
/// the one accepted (acceptance is in generation order).
fn best_line(lines: &[Line], start_bytes: usize) -> Vec<(f64, f64)> {
    let mut seen = std::collections::BTreeSet::new();
    let mut accepted: Vec<(f64, f64)> = lines
        .iter()
        .filter(|l| l.interesting && seen.insert(l.base))
        .map(|l| (l.end, l.bytes as f64))
        .collect();
    accepted.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut out = vec![(0.0, start_bytes as f64)];
    for (t, b) in accepted {
        let last = out.last().map_or(b, |p| p.1);
        out.push((t, last));
        out.push((t, b));
    }
    out
}

/// The passes of a trace, in the order they first appear.
fn passes_in_order(lines: &[Line]) -> Vec<&str> {
    let mut seen = std::collections::HashSet::new();
    lines
        .iter()
        .map(|l| l.pass.as_str())
        .filter(|p| seen.insert(*p))
        .collect()
}

/// Tests run (not cached, not cancelled) by each test's end: `(seconds, count so far)`.
fn tests_over_time(lines: &[Line]) -> Vec<(f64, f64)> {
    let mut ends: Vec<f64> = lines
        .iter()
        .filter(|l| l.outcome != "cached" && l.outcome != "cancelled")
        .map(|l| l.end)
        .collect();
    ends.sort_by(f64::total_cmp);
    ends.into_iter()
        .enumerate()
        .map(|(k, t)| (t, (k + 1) as f64))
        .collect()
}

/// The ranges the chart's axes span.
struct Axes {
    /// The last second.
    t_max: f64,
    /// The fewest and most bytes (a log scale: at least 1 and 2).
    b_min: f64,
    b_max: f64,
    /// Tests run (at least 1).
    tests: f64,
}

fn axes(lines: &[Line], start_bytes: usize) -> Axes {
    let b_max = lines
        .iter()
        .map(|l| l.bytes)
        .chain([start_bytes])
        .max()
        .unwrap_or(1)
        .max(2) as f64;
    let tests = lines
        .iter()
        .filter(|l| l.outcome != "cached" && l.outcome != "cancelled")
        .count()
        .max(1) as f64;
    Axes {
        t_max: lines.iter().map(|l| l.end).fold(1.0, f64::max),
        b_min: lines.iter().map(|l| l.bytes).min().unwrap_or(1).max(1) as f64,
        b_max,
        tests,
    }
}

/// The SVG of a trace; `start_bytes` is the size the reduction started from.
fn draw(lines: &[Line], start_bytes: usize) -> Result<String, String> {
    let err = |e: &dyn std::fmt::Display| e.to_string();
    let Axes {
        t_max,
        b_min,
        b_max,
        tests,
    } = axes(lines, start_bytes);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (760, 420)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| err(&e))?;
        let mut chart = ChartBuilder::on(&root)
            .caption(
                "reduction: candidate size and tests over time",
                ("sans-serif", 16),
            )
            .margin(12)
            .x_label_area_size(36)
            .y_label_area_size(64)
            .right_y_label_area_size(52)
            .build_cartesian_2d(
                0.0..t_max * 1.02,
                ((b_min * 0.8)..(b_max * 1.25)).log_scale(),
            )
            .map_err(|e| err(&e))?
            .set_secondary_coord(0.0..t_max * 1.02, 0.0..tests * 1.05);
        chart
            .configure_mesh()
            .x_desc("seconds")
            .y_desc("bytes (log)")
            .y_label_formatter(&|b| human(*b))
            .draw()
            .map_err(|e| err(&e))?;
        chart
            .configure_secondary_axes()
            .y_desc("tests")
            .y_label_formatter(&|n| format!("{n:.0}"))
            .draw()
            .map_err(|e| err(&e))?;
        // Passes in order of first appearance, each with its own colour.
        for (k, pass) in passes_in_order(lines).iter().enumerate() {
            let colour = Palette99::pick(k).mix(0.8);
            let dots = lines
                .iter()
                .filter(|l| l.pass == *pass && l.outcome != "cancelled")
                .map(|l| Circle::new((l.end, l.bytes as f64), 2, colour.filled()));
            chart
                .draw_series(dots)
                .map_err(|e| err(&e))?
                .label(*pass)
                .legend(move |(x, y)| Circle::new((x + 6, y), 3, colour.filled()));
        }
        let mut best = best_line(lines, start_bytes);
        if let Some(&(_, b)) = best.last() {
            best.push((t_max, b));
        }
        chart
            .draw_series(LineSeries::new(best, BLACK.stroke_width(2)))
            .map_err(|e| err(&e))?
            .label("best so far")
            .legend(|(x, y)| PathElement::new([(x, y), (x + 14, y)], BLACK.stroke_width(2)));
        chart
            .draw_secondary_series(LineSeries::new(tests_over_time(lines), BLUE.mix(0.5)))
            .map_err(|e| err(&e))?
            .label("tests (right axis)")
            .legend(|(x, y)| PathElement::new([(x, y), (x + 14, y)], BLUE.mix(0.5)));
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::MiddleRight)
            .border_style(BLACK.mix(0.3))
            .background_style(WHITE.mix(0.85))
            .draw()
            .map_err(|e| err(&e))?;
        root.present().map_err(|e| err(&e))?;
    }
    Ok(svg)
}

fn human(b: f64) -> String {
    if b >= 1048576.0 {
        format!("{:.1} MB", b / 1048576.0)
    } else if b >= 1024.0 {
        format!("{:.0} KB", b / 1024.0)
    } else {
        format!("{b:.0} B")
    }
}

/// Writes `DIR/reduction.svg` when the case's reduction kept a trace; true if it did.
pub fn write_svg(dir: &Path, case: &Case) -> Result<bool, CaseError> {
    let Some(lines) = read(dir, case) else {
        return Ok(false);
    };
    let start = case.reduction_section().map_or(0, |r| r.bytes_before);
    match draw(&lines, start) {
        Ok(svg) => {
            crate::case::fileio::write(dir, SVG, svg.as_bytes())?;
            Ok(true)
        }
        Err(_) => Ok(false),
    }
}

/// The report's line pointing at the picture, when the case has a trace to draw.
pub fn markdown_link(case: &Case) -> String {
    let has_trace = case.reduction_section().is_some_and(|r| r.trace.is_some());
    if has_trace {
        format!("The reduction over time: [{SVG}]({SVG}) (candidate sizes by pass, best so far, tests).\n\n")
    } else {
        String::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(seq: u64, pass: &str, base: u64, bytes: usize, interesting: bool, end: f64) -> Line {
        Line {
            seq,
            pass: pass.into(),
            base,
            bytes,
            outcome: if interesting {
                "interesting"
            } else {
                "uninteresting"
            }
            .into(),
            interesting,
            end,
        }
    }

    #[test]
    fn the_best_line_steps_down_at_each_acceptance() {
        let lines = vec![
            line(0, "lines", 0, 500, false, 1.0),
            line(1, "lines", 0, 400, true, 2.0),
            line(2, "lines", 0, 300, true, 2.5),
            line(3, "tokens", 1, 100, true, 3.0),
        ];
        assert_eq!(
            best_line(&lines, 1000),
            [
                (0.0, 1000.0),
                (2.0, 1000.0),
                (2.0, 400.0),
                (3.0, 400.0),
                (3.0, 100.0)
            ]
        );
    }

    #[test]
    fn the_svg_names_the_passes() {
        let lines = vec![
            line(0, "provenance", 0, 50_000, true, 1.0),
            line(1, "tokens", 1, 300, false, 2.0),
        ];
        let svg = draw(&lines, 100_000).unwrap();
        assert!(svg.starts_with("<svg"));
        for want in ["provenance", "tokens", "best so far", "tests (right axis)"] {
            assert!(svg.contains(want), "no {want}");
        }
    }
}
