//! Sizes and durations as people type them (`8k`, `4G`, `1MiB`, `2.5s`) and as
//! reports print them (`8 KiB`, `4.00 GiB`).
//!
//! Size suffixes are binary (K = 1024), as in fio and SLOB's SCALE.

/// Why a size or a duration could not be read; each says what to type instead.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UnitError {
    #[error("'{0}' is not a size (expected e.g. 8k, 4G, 1.5G, 1048576)")]
    NotASize(String),
    #[error("'{0}' has an unknown suffix (use K, M, G or T, e.g. 8k, 4G)")]
    UnknownSuffix(String),
    #[error("'{0}' is too large")]
    TooLarge(String),
    #[error("'{0}' is not a whole number of bytes; give e.g. 1.5G or the size in a smaller unit")]
    NotWholeBytes(String),
    #[error("'{0}' is not a duration (expected e.g. 60, 2.5s, 5m)")]
    NotADuration(String),
    #[error("'{0}' must be a non-negative duration")]
    NegativeDuration(String),
}

impl From<UnitError> for String {
    fn from(e: UnitError) -> String {
        e.to_string()
    }
}

/// Parses a byte size: a number with an optional K/M/G/T suffix (binary
/// multiples; `k`, `KB`, `KiB` all mean 1024). `"8k"` → 8192, `"1.5G"` →
/// 1610612736; a decimal must come to whole bytes.
pub fn parse_size(text: &str) -> Result<u64, UnitError> {
    let t = text.trim();
    let split = t
        .find(|c: char| !c.is_ascii_digit() && c != '.')
        .unwrap_or(t.len());
    let (number, suffix) = t.split_at(split);
    let (whole, frac) = number.split_once('.').unwrap_or((number, ""));
    if whole.is_empty() && frac.is_empty() || frac.contains('.') {
        return Err(UnitError::NotASize(text.into()));
    }
    let shift = match suffix.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kb" | "kib" => 10,
        "m" | "mb" | "mib" => 20,
        "g" | "gb" | "gib" => 30,
        "t" | "tb" | "tib" => 40,
        "p" | "pb" | "pib" => 50,
        _ => {
            return Err(UnitError::UnknownSuffix(text.into()));
        }
    };
    let too_large = || UnitError::TooLarge(text.into());
    if whole.len() > 20 || frac.len() > 18 {
        return Err(too_large());
    }
    let unit = 1u128 << shift;
    let whole: u128 = if whole.is_empty() {
        0
    } else {
        whole.parse().map_err(|_| too_large())?
    };
    let mut bytes = whole * unit;
    if !frac.is_empty() {
        let scale = 10u128.pow(frac.len() as u32);
        let f: u128 = frac.parse().map_err(|_| too_large())?;
        if !(f * unit).is_multiple_of(scale) {
            return Err(UnitError::NotWholeBytes(text.into()));
        }
        bytes += f * unit / scale;
    }
    u64::try_from(bytes).map_err(|_| too_large())
}

/// Parses a duration in seconds: `60`, `2.5`, `90s`, `5m`, `1h`.
pub fn parse_seconds(text: &str) -> Result<f64, UnitError> {
    let t = text.trim();
    let (num, mult) = if let Some(n) = t.strip_suffix('h') {
        (n, 3600.0)
    } else if let Some(n) = t.strip_suffix("ms") {
        (n, 0.001)
    } else if let Some(n) = t.strip_suffix('m') {
        (n, 60.0)
    } else if let Some(n) = t.strip_suffix('s') {
        (n, 1.0)
    } else {
        (t, 1.0)
    };
    let v: f64 = num
        .trim()
        .parse()
        .map_err(|_| UnitError::NotADuration(text.into()))?;
    if !v.is_finite() || v < 0.0 {
        return Err(UnitError::NegativeDuration(text.into()));
    }
    Ok(v * mult)
}

/// Formats a byte count with a binary unit: `8 KiB`, `4.00 GiB`, `512 B`.
pub fn fmt_size(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = bytes as f64;
    let mut unit = 0;
    while v >= 1024.0 && unit < UNITS.len() - 1 {
        v /= 1024.0;
        unit += 1;
    }
    if unit == 0 || v.fract() == 0.0 {
        format!("{v:.0} {}", UNITS[unit])
    } else {
        format!("{v:.2} {}", UNITS[unit])
    }
}

/// Formats a count compactly for tables: `950`, `12.3K`, `4.56M`.
pub fn fmt_count(v: f64) -> String {
    if v >= 1e9 {
        format!("{:.2}G", v / 1e9)
    } else if v >= 1e6 {
        format!("{:.2}M", v / 1e6)
    } else if v >= 1e4 {
        format!("{:.1}K", v / 1e3)
    } else if v >= 100.0 || v == 0.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

/// Formats a latency given in nanoseconds with a readable unit.
pub fn fmt_latency_ns(ns: f64) -> String {
    if ns >= 1e9 {
        format!("{:.2}s", ns / 1e9)
    } else if ns >= 1e6 {
        format!("{:.2}ms", ns / 1e6)
    } else if ns >= 1e3 {
        format!("{:.1}us", ns / 1e3)
    } else {
        format!("{ns:.0}ns")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_with_binary_suffixes() {
        assert_eq!(parse_size("512"), Ok(512));
        assert_eq!(parse_size("8k"), Ok(8192));
        assert_eq!(parse_size("8KiB"), Ok(8192));
        assert_eq!(parse_size("4G"), Ok(4 << 30));
        assert_eq!(parse_size("1 MB"), Ok(1 << 20));
        assert!(parse_size("k").is_err());
        assert!(parse_size("8q").is_err());
        assert!(parse_size("-1").is_err());
        assert!(parse_size("99999999999T").is_err());
        assert_eq!(parse_size("1.5G"), Ok(3 << 29));
        assert_eq!(parse_size("0.5k"), Ok(512));
        assert_eq!(parse_size(".5M"), Ok(1 << 19));
        assert_eq!(
            parse_size("1.1"),
            Err(UnitError::NotWholeBytes("1.1".into()))
        );
        assert!(
            parse_size("1.1")
                .unwrap_err()
                .to_string()
                .contains("whole number of bytes")
        );
        assert!(parse_size("1.2.3G").is_err());
        assert!(parse_size(".").is_err());
        assert!(parse_size("1e9").is_err());
        assert!(matches!(
            parse_size("99999999999999999999999999"),
            Err(UnitError::TooLarge(_))
        ));
    }

    #[test]
    fn durations_parse() {
        assert_eq!(parse_seconds("60"), Ok(60.0));
        assert_eq!(parse_seconds("2.5s"), Ok(2.5));
        assert_eq!(parse_seconds("5m"), Ok(300.0));
        assert_eq!(parse_seconds("250ms"), Ok(0.25));
        assert!(parse_seconds("-3").is_err());
        assert!(parse_seconds("soon").is_err());
    }

    #[test]
    fn sizes_format() {
        assert_eq!(fmt_size(512), "512 B");
        assert_eq!(fmt_size(8192), "8 KiB");
        assert_eq!(fmt_size(3 << 29), "1.50 GiB");
        assert_eq!(fmt_latency_ns(1500.0), "1.5us");
        assert_eq!(fmt_latency_ns(2_500_000.0), "2.50ms");
        assert_eq!(fmt_count(12345.0), "12.3K");
    }
}
