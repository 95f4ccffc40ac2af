//! The dashboard's pictures: occurrences over time per bucket (a sparkline on the index,
//! drawn with `plotters`), and the case's `reduction.svg` on the bucket page.
//!
//! Why here and in this shape: the pages are script-free and stand alone, so the sparkline is
//! inline SVG that icepick draws from the store's own rows (numbers only, no text from a
//! build), and the reduction picture, which is a file of the case directory (or of a case
//! archive in the database) and so hostile input, is shown only as an `<img>` of a `data:`
//! URL: an SVG loaded as an image runs no script, loads nothing and links nowhere, whatever
//! it contains. The Content-Security-Policy allows `data:` images and nothing else.

use plotters::prelude::*;

use crate::store::{parse_utc, Occurrence};

/// Bars of a sparkline: the time from the store's first occurrence to the page's generation
/// cut into this many equal spans.
pub const BINS: usize = 30;
const WIDTH: u32 = 150;
const HEIGHT: u32 = 28;

/// The time axis every sparkline of a page shares, in seconds since the epoch: from the
/// earliest occurrence of any bucket to `generated` (or the latest occurrence, if later).
/// `None` when no occurrence has a readable time.
pub fn span(all: &[&[Occurrence]], generated: &str) -> Option<(f64, f64)> {
    let times: Vec<f64> = all
        .iter()
        .flat_map(|occ| occ.iter().filter_map(|o| parse_utc(&o.time)))
        .collect();
    let start = times.iter().copied().fold(f64::INFINITY, f64::min);
    let end = times
        .iter()
        .copied()
        .chain(parse_utc(generated))
        .fold(f64::NEG_INFINITY, f64::max);
    start.is_finite().then_some((start, end))
}

/// Occurrences per span of `(start, end)` cut in [`BINS`]: a time on the end falls in the
/// last bin, one outside the span (or unreadable) in none.
pub fn counts(occ: &[Occurrence], (start, end): (f64, f64)) -> Vec<u32> {
    let mut bins = vec![0u32; BINS];
    let width = end - start;
    for t in occ.iter().filter_map(|o| parse_utc(&o.time)) {
        if t < start || t > end {
            continue;
        }
        // A span of one instant is all "now": the last bin.
        let i = if width > 0.0 {
            (((t - start) / width) * BINS as f64) as usize
        } else {
            BINS - 1
        };
        bins[i.min(BINS - 1)] += 1;
    }
    bins
}

/// The sparkline of `counts` as an `<svg>` element to put inline in a page, or `None` if
/// plotters fails. `label` (escaped here) becomes its accessible name and tooltip.
pub fn sparkline(counts: &[u32], label: &str) -> Option<String> {
    let max = counts.iter().copied().max().unwrap_or(0).max(1);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, HEIGHT)).into_drawing_area();
        let mut chart = ChartBuilder::on(&root)
            .margin(2)
            .build_cartesian_2d(0.0..counts.len().max(1) as f64, 0.0..f64::from(max))
            .ok()?;
        let colour = RGBColor(0x33, 0x66, 0x99);
        chart
            .draw_series(
                counts
                    .iter()
                    .enumerate()
                    .filter(|(_, c)| **c > 0)
                    .map(|(i, c)| {
                        let x = i as f64;
                        Rectangle::new([(x + 0.1, 0.0), (x + 0.9, f64::from(*c))], colour.filled())
                    }),
            )
            .ok()?;
        chart
            .draw_series(LineSeries::new(
                [(0.0, 0.0), (counts.len() as f64, 0.0)],
                colour.mix(0.5),
            ))
            .ok()?;
        root.present().ok()?;
    }
    let label = super::escape(label);
    // One line: the page's table rows are one line each.
    let svg = svg.replace('\n', "");
    let rest = svg.strip_prefix("<svg ")?;
    Some(format!(
        "<svg class=\"spark\" role=\"img\" aria-label=\"{label}\" {rest}"
    ))
    .map(|s| {
        // The tooltip: SVG's own <title>, first child of the root.
        match s.find('>') {
            Some(i) => format!("{}<title>{label}</title>{}", &s[..=i], &s[i + 1..]),
            None => s,
        }
    })
}

/// An `<img>` showing `svg` (any text: a case's file) from a `data:` URL.
pub fn image(svg: &str, class: &str, alt: &str) -> String {
    format!(
        "<img class=\"{}\" alt=\"{}\" src=\"data:image/svg+xml;base64,{}\">",
        super::escape(class),
        super::escape(alt),
        base64(svg.as_bytes())
    )
}

/// Standard base64 with padding (RFC 4648 §4).
pub fn base64(bytes: &[u8]) -> String {
    const ABC: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, b)| n | u32::from(*b) << (16 - 8 * i));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ABC[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn occ(time: &str) -> Occurrence {
        Occurrence {
            id: 1,
            bucket: "b".into(),
            recorded: crate::store::NewOccurrence {
                time: time.into(),
                host: "h".into(),
                user: None,
                cwd: "/".into(),
                command: vec!["cc".into()],
                source: None,
                compiler: "cc".into(),
                compiler_version: None,
                exit_code: None,
                origin: "wrap".into(),
            },
            case_dir: None,
        }
    }

    #[test]
    fn base64_matches_rfc_4648_vectors() {
        for (raw, want) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(base64(raw.as_bytes()), want, "{raw}");
        }
    }

    #[test]
    fn occurrences_fall_in_their_span_and_the_page_time_ends_the_axis() {
        let a = [
            occ("2026-05-01T00:00:00.000Z"),
            occ("2026-05-01T00:00:01.000Z"),
        ];
        let b = [occ("2026-05-01T00:29:59.000Z"), occ("garbage")];
        let s = span(&[&a, &b], "2026-05-01T00:30:00.000Z").unwrap();
        assert_eq!(s.1 - s.0, 1800.0);
        let ca = counts(&a, s);
        assert_eq!((ca[0], ca.iter().sum::<u32>()), (2, 2));
        let cb = counts(&b, s);
        assert_eq!((cb[BINS - 1], cb.iter().sum::<u32>()), (1, 1));
        assert_eq!(span(&[&b[1..]], "not a time"), None);
        // One instant only: everything in the last bin, no division by zero.
        let one = [occ("2026-05-01T00:00:00.000Z")];
        let s = span(&[&one], "2026-05-01T00:00:00.000Z").unwrap();
        assert_eq!(counts(&one, s)[BINS - 1], 1);
    }

    #[test]
    fn a_sparkline_is_one_labelled_svg_element_with_a_bar_per_busy_span() {
        let mut c = vec![0u32; BINS];
        c[3] = 2;
        c[BINS - 1] = 5;
        let svg = sparkline(&c, "7 occurrences <since> 'x'").unwrap();
        assert!(svg.starts_with("<svg class=\"spark\" role=\"img\" aria-label=\"7 occurrences &lt;since&gt; &#39;x&#39;\""), "{svg}");
        assert!(svg.contains("<title>7 occurrences &lt;since&gt;"), "{svg}");
        assert!(svg.trim_end().ends_with("</svg>"), "{svg}");
        assert_eq!(svg.matches("<svg").count(), 1);
        assert_eq!(svg.matches("<rect").count(), 2, "{svg}");
        assert!(!svg.contains("<script"));
    }

    #[test]
    fn a_hostile_svg_is_only_ever_an_image() {
        let evil = "<svg xmlns=\"http://www.w3.org/2000/svg\"><script>alert(1)</script>\"'&</svg>";
        let img = image(evil, "reduction", "a \"quoted\" <alt>");
        assert!(img.starts_with("<img class=\"reduction\" alt=\"a &quot;quoted&quot; &lt;alt&gt;\" src=\"data:image/svg+xml;base64,"), "{img}");
        assert!(!img.contains("<script") && !img.contains("<svg"), "{img}");
        assert_eq!(img.matches('"').count(), 6, "{img}");
    }
}
