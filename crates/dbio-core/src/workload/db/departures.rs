//! The settings dbio gives a server that differ from the stock server's
//! defaults, for the report: made from the same list dbio gives the
//! server (so it cannot go stale), compared with the server's documented
//! defaults ([`Stock`]). A setting without a known default (a
//! `--pg-set`/`--mysql-set` of any other name) is listed as a departure
//! with its default unknown.

use serde::{Deserialize, Serialize};

/// A server's documented default of each setting dbio may give it.
pub(crate) type Stock = [(&'static str, &'static str)];

/// One setting dbio changes from the stock server's.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Departure {
    pub name: String,
    /// What dbio set.
    pub value: String,
    /// The stock server's default, when known.
    pub default: Option<String>,
}

/// Each of `settings` whose value is not `stock`'s default for it, in order.
pub fn departures(settings: &[(String, String)], stock: &Stock) -> Vec<Departure> {
    settings
        .iter()
        .filter_map(|(name, value)| {
            let default = stock.iter().find(|(n, _)| n == name).map(|(_, d)| *d);
            match default {
                Some(d) if same(d, value) => None,
                _ => Some(Departure {
                    name: name.clone(),
                    value: value.clone(),
                    default: default.map(str::to_string),
                }),
            }
        })
        .collect()
}

/// Two values of a setting alike: equal ignoring case, the same size in
/// kB/MB/GB (`1GB` = `1024MB`), or the same switch (`ON` = `1`).
fn same(a: &str, b: &str) -> bool {
    let flag = |v: &str| match v.to_ascii_lowercase().as_str() {
        "on" | "1" | "true" => Some(true),
        "off" | "0" | "false" => Some(false),
        _ => None,
    };
    a.eq_ignore_ascii_case(b)
        || matches!((kib(a), kib(b)), (Some(x), Some(y)) if x == y)
        || matches!((flag(a), flag(b)), (Some(x), Some(y)) if x == y)
}

/// A size with a unit (`128kB`, `16MB`, `1GB`) in KiB.
fn kib(v: &str) -> Option<u64> {
    let v = v.trim();
    let split = v.find(|c: char| !c.is_ascii_digit())?;
    let (n, unit) = v.split_at(split);
    let n: u64 = n.parse().ok()?;
    let mult = match unit.trim().to_ascii_lowercase().as_str() {
        "kb" | "k" => 1,
        "mb" | "m" => 1 << 10,
        "gb" | "g" => 1 << 20,
        _ => return None,
    };
    n.checked_mul(mult)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_what_differs_from_the_stock_default_is_listed() {
        let stock: &Stock = &[("fsync", "on"), ("max_wal_size", "1GB"), ("port", "5432")];
        let s = |k: &str, v: &str| (k.to_string(), v.to_string());
        let d = departures(
            &[
                s("fsync", "ON"),
                s("max_wal_size", "1024MB"),
                s("port", "5433"),
                s("wal_compression", "on"),
            ],
            stock,
        );
        assert_eq!(
            d,
            vec![
                Departure {
                    name: "port".into(),
                    value: "5433".into(),
                    default: Some("5432".into())
                },
                Departure {
                    name: "wal_compression".into(),
                    value: "on".into(),
                    default: None
                },
            ]
        );
        assert_eq!(kib("16MB"), Some(16 << 10));
        assert_eq!(kib("on"), None);
        assert!(same("ON", "1") && same("off", "0") && !same("on", "0"));
    }
}
