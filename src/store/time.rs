//! UTC timestamps as RFC 3339 text (`2026-05-01T12:34:56.789Z`), without a date crate: the
//! store needs "now", formatted so that text order is time order, and the dashboard reads
//! its own stamps back to place occurrences on a time axis.

use std::time::{SystemTime, UNIX_EPOCH};

/// Now, formatted.
pub fn now_utc() -> String {
    utc_string(SystemTime::now())
}

/// `t` as `YYYY-MM-DDTHH:MM:SS.mmmZ` (times before 1970 clamp to the epoch).
pub fn utc_string(t: SystemTime) -> String {
    let d = t.duration_since(UNIX_EPOCH).unwrap_or_default();
    let secs = d.as_secs();
    let (days, rem) = (secs / 86_400, secs % 86_400);
    let (y, m, day) = civil_from_days(days as i64);
    format!(
        "{y:04}-{m:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        d.subsec_millis()
    )
}

/// Seconds since the epoch of a stamp [`utc_string`] wrote (`YYYY-MM-DDTHH:MM:SS[.fff]Z`,
/// also with a space for `T` or no `Z`); `None` for anything else.
pub fn parse_utc(t: &str) -> Option<f64> {
    let b = t.as_bytes();
    if b.len() < 19 || b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b'T' | b' ') {
        return None;
    }
    let num = |r: std::ops::Range<usize>| -> Option<i64> {
        let s = t.get(r)?;
        s.bytes()
            .all(|c| c.is_ascii_digit())
            .then(|| s.parse().ok())?
    };
    let (y, m, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (hh, mm, ss) = (num(11..13)?, num(14..16)?, num(17..19)?);
    if !(1..=12).contains(&m) || !(1..=31).contains(&d) || hh > 23 || mm > 59 || ss > 60 {
        return None;
    }
    let rest = t[19..].trim_end_matches('Z');
    let frac = match rest.strip_prefix('.') {
        Some(f) if !f.is_empty() && f.bytes().all(|c| c.is_ascii_digit()) => {
            format!("0.{f}").parse::<f64>().ok()?
        }
        None if rest.is_empty() => 0.0,
        _ => return None,
    };
    let days = days_from_civil(y, m as u32, d as u32);
    Some((days * 86_400 + hh * 3600 + mm * 60 + ss) as f64 + frac)
}

/// (year, month, day) → days since 1970-01-01, the inverse of [`civil_from_days`].
fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = i64::from(if m > 2 { m - 3 } else { m + 9 });
    let doy = (153 * mp + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Days since 1970-01-01 → (year, month, day), proleptic Gregorian (Howard Hinnant's
/// `civil_from_days`).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn formats_known_instants() {
        let at = |s: u64, ms: u64| {
            utc_string(UNIX_EPOCH + Duration::from_secs(s) + Duration::from_millis(ms))
        };
        assert_eq!(at(0, 0), "1970-01-01T00:00:00.000Z");
        // `date -u -d @951782400` → 2000-02-29 00:00:00 (a leap day in a century leap year).
        assert_eq!(at(951_782_400, 5), "2000-02-29T00:00:00.005Z");
        assert_eq!(at(1_767_225_599, 999), "2025-12-31T23:59:59.999Z");
        assert_eq!(at(4_107_542_400, 0), "2100-03-01T00:00:00.000Z");
    }

    #[test]
    fn stamps_read_back_to_their_instants() {
        for (secs, ms) in [
            (0, 0),
            (951_782_400, 5),
            (1_767_225_599, 999),
            (4_107_542_400, 0),
        ] {
            let t = UNIX_EPOCH + Duration::from_secs(secs) + Duration::from_millis(ms);
            let back = parse_utc(&utc_string(t)).unwrap();
            assert!(
                (back - (secs as f64 + ms as f64 / 1000.0)).abs() < 1e-6,
                "{secs}"
            );
        }
        assert_eq!(parse_utc("2026-05-01 12:34:56"), Some(1_777_638_896.0));
        for bad in [
            "",
            "2026-05-01",
            "2026-13-01T00:00:00Z",
            "2026-05-01T00:00:00.Z",
            "x026-05-01T00:00:00Z",
            "2026-05-01T00:00:00+02",
        ] {
            assert_eq!(parse_utc(bad), None, "{bad}");
        }
    }

    #[test]
    fn text_order_is_time_order() {
        let a = utc_string(UNIX_EPOCH + Duration::from_secs(999_999_999));
        let b = utc_string(UNIX_EPOCH + Duration::from_secs(1_000_000_000));
        assert!(a < b, "{a} {b}");
    }
}
