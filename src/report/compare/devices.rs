//! The devices of two sides of `dbio compare` paired with each other: the
//! same device by name, then the rest in storage-chain order, so that the
//! loop device under one lab arm faces the one under the other
//! (`loop0/loop1`), and their settings compare under one name.

use std::collections::BTreeMap;

use super::Side;

/// A side's devices in the order they were first seen.
pub(super) fn device_names(s: &Side) -> Vec<String> {
    let mut v: Vec<String> = Vec::new();
    for (d, _, _) in &s.devices {
        if !v.contains(d) {
            v.push(d.clone());
        }
    }
    v
}

/// `loop0/loop1` for two devices paired across the sides, else the one name.
pub(super) fn pair_label(a: Option<&str>, b: Option<&str>) -> Option<String> {
    match (a, b) {
        (Some(x), Some(y)) if x != y => Some(format!("{x}/{y}")),
        (Some(x), _) | (None, Some(x)) => Some(x.to_string()),
        (None, None) => None,
    }
}

/// A side's settings with `device NAME …` keys renamed to the pair's label.
pub(super) fn paired_settings(
    settings: &BTreeMap<String, String>,
    pairs: &[(Option<&str>, Option<&str>)],
    first: bool,
) -> BTreeMap<String, String> {
    settings
        .iter()
        .map(|(k, v)| {
            let renamed = k.strip_prefix("device ").and_then(|rest| {
                pairs.iter().find_map(|&(da, db)| {
                    let mine = if first { da } else { db }?;
                    let what = rest.strip_prefix(mine)?.strip_prefix(' ')?;
                    Some(format!("device {} {what}", pair_label(da, db)?))
                })
            });
            (renamed.unwrap_or_else(|| k.clone()), v.clone())
        })
        .collect()
}

/// Pairs the devices of two sides: the same device by name first, then the
/// rest in the order of their storage chains, so that a lab's loop0 under
/// one arm faces loop1 under the other. Unpaired devices stand alone.
pub(super) fn pair_devices<'a>(
    a: &'a [String],
    b: &'a [String],
) -> Vec<(Option<&'a str>, Option<&'a str>)> {
    let mut rest_b: Vec<&str> = b
        .iter()
        .map(String::as_str)
        .filter(|d| !a.iter().any(|x| x == d))
        .collect();
    rest_b.reverse();
    let mut out = Vec::new();
    for d in a {
        if b.contains(d) {
            out.push((Some(d.as_str()), Some(d.as_str())));
        } else {
            out.push((Some(d.as_str()), rest_b.pop()));
        }
    }
    out.extend(rest_b.into_iter().rev().map(|d| (None, Some(d))));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn devices_pair_by_name_then_by_chain_order() {
        let (a, b) = (names(&["loop0", "vda"]), names(&["loop1", "vda"]));
        assert_eq!(
            pair_devices(&a, &b),
            [(Some("loop0"), Some("loop1")), (Some("vda"), Some("vda"))]
        );
        // The root filesystem against a loop device on the same disk.
        let (a, b) = (names(&["vda"]), names(&["loop3", "vda"]));
        assert_eq!(
            pair_devices(&a, &b),
            [(Some("vda"), Some("vda")), (None, Some("loop3"))]
        );
        let (a, b) = (names(&["sdb", "sdc"]), names(&[]));
        assert_eq!(
            pair_devices(&a, &b),
            [(Some("sdb"), None), (Some("sdc"), None)]
        );
    }
}
