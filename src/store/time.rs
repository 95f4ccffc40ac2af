//! UTC timestamps as RFC 3339 text (`2026-05-01T12:34:56.789Z`), without a date crate: the
//! store only needs "now", formatted so that text order is time order.

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
    fn text_order_is_time_order() {
        let a = utc_string(UNIX_EPOCH + Duration::from_secs(999_999_999));
        let b = utc_string(UNIX_EPOCH + Duration::from_secs(1_000_000_000));
        assert!(a < b, "{a} {b}");
    }
}
