//! UTC timestamps as the store prints and reads them: ISO 8601 with a `Z`
//! (never local time, so listings compare across machines), and `--since`
//! values (a UTC date/time or an age such as `12h`).

/// Milliseconds since the epoch as `2026-11-22T10:15:03Z` (whole seconds).
pub fn fmt_utc(unix_ms: i64) -> String {
    let secs = unix_ms.div_euclid(1000);
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// A `--since` value that is neither a date nor an age.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "'{0}' is not a time: use a UTC date or date-time (2026-11-22, \
     2026-11-22T10:15:00Z) or an age (90s, 30m, 12h, 7d, 2w)"
)]
pub struct NotATime(pub String);

/// Parses a `--since` value into milliseconds since the epoch: a UTC date or
/// date-time (`2026-11-22`, `2026-11-22T10:15`, `2026-11-22 10:15:03Z`) or an
/// age counted back from `now_unix_ms` (`90s`, `30m`, `12h`, `7d`, `2w`).
pub fn parse_since(text: &str, now_unix_ms: i64) -> Result<i64, NotATime> {
    let t = text.trim();
    let bad = || NotATime(text.to_string());
    if let Some(unit) = t.chars().last().filter(|c| "smhdw".contains(*c)) {
        let secs = match unit {
            's' => 1,
            'm' => 60,
            'h' => 3600,
            'd' => 86_400,
            _ => 7 * 86_400,
        };
        let n: u32 = t[..t.len() - 1].parse().map_err(|_| bad())?;
        return Ok(now_unix_ms - i64::from(n) * secs * 1000);
    }
    let t = t.strip_suffix('Z').unwrap_or(t);
    let (date, time) = match t.split_once(['T', ' ']) {
        Some((d, tm)) => (d, Some(tm)),
        None => (t, None),
    };
    let fields = |s: &str, n: usize| -> Option<Vec<i64>> {
        let v: Vec<i64> = s
            .split(['-', ':'])
            .map(|p| p.parse().ok())
            .collect::<Option<_>>()?;
        (v.len() == n).then_some(v)
    };
    let ymd = fields(date, 3).ok_or_else(bad)?;
    let (y, m, d) = (ymd[0], ymd[1], ymd[2]);
    if !(1..=12).contains(&m) || d < 1 || d > days_in_month(y, m) {
        return Err(bad());
    }
    let (hh, mm, ss) = match time {
        None => (0, 0, 0),
        Some(tm) => {
            let v = fields(tm, 3).or_else(|| fields(tm, 2)).ok_or_else(bad)?;
            (v[0], v[1], v.get(2).copied().unwrap_or(0))
        }
    };
    if !(0..24).contains(&hh) || !(0..60).contains(&mm) || !(0..60).contains(&ss) {
        return Err(bad());
    }
    let secs = days_from_civil(y, m, d) * 86_400 + hh * 3600 + mm * 60 + ss;
    Ok(secs * 1000)
}

fn days_in_month(y: i64, m: i64) -> i64 {
    match m {
        2 if y % 4 == 0 && (y % 100 != 0 || y % 400 == 0) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days since 1970-01-01 → (year, month, day), proleptic Gregorian
/// (H. Hinnant's algorithm).
fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

/// (year, month, day) → days since 1970-01-01.
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = y - i64::from(m <= 2);
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_known_instants() {
        assert_eq!(fmt_utc(0), "1970-01-01T00:00:00Z");
        assert_eq!(fmt_utc(1_790_000_000_000), "2026-09-21T14:13:20Z");
        assert_eq!(fmt_utc(951_782_400_999), "2000-02-29T00:00:00Z");
        assert_eq!(fmt_utc(-1000), "1969-12-31T23:59:59Z");
    }

    #[test]
    fn days_round_trip_over_four_centuries() {
        for days in (-200_000..200_000).step_by(7) {
            let (y, m, d) = civil_from_days(days);
            assert!((1..=12).contains(&m) && d >= 1 && d <= days_in_month(y, m));
            assert_eq!(days_from_civil(y, m, d), days, "{y}-{m}-{d}");
        }
    }

    #[test]
    fn since_accepts_dates_and_ages() {
        let now = 1_790_000_000_000;
        assert_eq!(parse_since("2026-09-21", now), Ok(1_789_948_800_000));
        assert_eq!(parse_since("2026-09-21T14:13:20Z", now), Ok(now));
        assert_eq!(parse_since("2026-09-21 14:13", now), Ok(now - 20_000));
        assert_eq!(parse_since("90s", now), Ok(now - 90_000));
        assert_eq!(parse_since("12h", now), Ok(now - 12 * 3_600_000));
        assert_eq!(parse_since("7d", now), Ok(now - 7 * 86_400_000));
        assert_eq!(parse_since("2w", now), Ok(now - 14 * 86_400_000));
        for bad in [
            "",
            "yesterday",
            "2026-02-30",
            "2026-13-01",
            "2026-09-21T25:00",
            "-5d",
            "5y",
        ] {
            assert!(parse_since(bad, now).is_err(), "{bad}");
        }
        assert!(
            parse_since("soon", now)
                .unwrap_err()
                .to_string()
                .contains("'soon'")
        );
    }
}
