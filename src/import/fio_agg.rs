//! One I/O direction of a fio group, over its job entries ([`Agg`]): sums,
//! merged latency summaries, percentiles (fio's printed ones for a single
//! entry, else of the merged json+ bins, exactly as fio computes them),
//! dbio's `total`; and the latencies in dbio's meaning where fio's differs
//! (a write with its sync, [`WithSync`]).

use super::fio::{Dir, Entry, Lat};
use super::fio_hist::{self, Bins};

/// The percentiles fio prints by default, for merged bins without a list.
pub const FIO_DEFAULT_PERCENTILES: [f64; 17] = [
    1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95,
    99.99,
];

/// One direction over a group's entries.
#[derive(Clone, Debug, Default)]
pub struct Agg {
    pub requests: u64,
    pub bytes: u64,
    pub iops: f64,
    pub bw_bytes: f64,
    pub runtime_ms: u64,
    pub basis: &'static str,
    pub lat: Lat,
    pub percentiles: Vec<(f64, u64)>,
    /// "fio" (as printed) or "json+ bins" (merged here).
    pub percentiles_from: &'static str,
    pub bins: Option<Bins>,
    /// An asynchronous engine's completion-only percentiles when fio printed
    /// none of `lat` ([`Dir::clat_percentiles`]).
    pub clat_percentiles: Vec<(f64, u64)>,
}

pub(super) fn merge_lat(lats: &[&Lat]) -> Lat {
    let n: u64 = lats.iter().map(|l| l.n).sum();
    let live: Vec<&&Lat> = lats.iter().filter(|l| l.n > 0).collect();
    Lat {
        min: live.iter().map(|l| l.min).fold(f64::INFINITY, f64::min),
        max: live.iter().map(|l| l.max).fold(0.0, f64::max),
        // One job keeps fio's printed mean: mean × n / n need not round-trip.
        mean: match live.as_slice() {
            [] => 0.0,
            [one] => one.mean,
            _ => live.iter().map(|l| l.mean * l.n as f64).sum::<f64>() / n as f64,
        },
        n,
    }
}

/// The percentiles of one direction over `dirs`, from what `pick` gives of
/// each (printed percentiles, json+ bins): fio's printed ones for a single
/// entry, else those of the merged bins (None if a direction that did I/O
/// has none: a randwrite job's empty read side has none to give).
fn merged(
    dirs: &[&Dir],
    pick: impl Fn(&Dir) -> (&[(f64, u64)], Option<&Bins>),
) -> (Vec<(f64, u64)>, &'static str, Option<Bins>) {
    let mut all = Some(Bins::new());
    for d in dirs.iter().filter(|d| d.total_ios > 0) {
        match (all.as_mut(), pick(d).1) {
            (Some(a), Some(b)) => fio_hist::merge(a, b),
            _ => all = None,
        }
    }
    let Some(first) = dirs.first().map(|d| pick(d).0) else {
        return (Vec::new(), "", None);
    };
    if dirs.len() == 1 {
        return (first.to_vec(), "fio", all);
    }
    let Some(b) = &all else {
        return (Vec::new(), "", None);
    };
    let list: Vec<f64> = if first.is_empty() {
        FIO_DEFAULT_PERCENTILES.to_vec()
    } else {
        first.iter().map(|p| p.0).collect()
    };
    (from_bins(b, &list), "json+ bins", all)
}

fn from_bins(bins: &Bins, list: &[f64]) -> Vec<(f64, u64)> {
    list.iter()
        .filter_map(|&p| fio_hist::percentile(bins, p).map(|v| (p, v)))
        .collect()
}

/// Direction `i` over `entries` (`all`: fio's "All clients" entry).
pub(super) fn aggregate(i: usize, entries: &[&Entry], all: Option<&Entry>) -> Option<Agg> {
    let dirs: Vec<&Dir> = entries.iter().filter_map(|e| e.dirs[i].as_ref()).collect();
    let first = dirs.first()?;
    let mut a = match all.and_then(|e| e.dirs[i].as_ref()) {
        Some(d) => Agg {
            requests: d.total_ios,
            bytes: d.io_bytes,
            iops: d.iops,
            bw_bytes: d.bw_bytes,
            runtime_ms: d.runtime_ms,
            lat: d.lat.clone(),
            ..Default::default()
        },
        None => Agg {
            requests: dirs.iter().map(|d| d.total_ios).sum(),
            bytes: dirs.iter().map(|d| d.io_bytes).sum(),
            iops: dirs.iter().map(|d| d.iops).sum(),
            bw_bytes: dirs.iter().map(|d| d.bw_bytes).sum(),
            runtime_ms: dirs.iter().map(|d| d.runtime_ms).max().unwrap_or(0),
            lat: merge_lat(&dirs.iter().map(|d| &d.lat).collect::<Vec<_>>()),
            ..Default::default()
        },
    };
    a.basis = first.basis;
    (a.percentiles, a.percentiles_from, a.bins) =
        merged(&dirs, |d| (&d.percentiles, d.bins.as_ref()));
    a.clat_percentiles = merged(&dirs, |d| (&d.clat_percentiles, d.clat_bins.as_ref())).0;
    (a.requests > 0).then_some(a)
}

/// Read, write and trim together (dbio's `total`).
pub(super) fn total(aggs: &[Option<Agg>; 4]) -> Option<Agg> {
    let io: Vec<&Agg> = aggs[..3].iter().flatten().collect();
    match io.as_slice() {
        [] => None,
        [one] => Some((*one).clone()),
        many => {
            let bins = many
                .iter()
                .map(|a| a.bins.as_ref())
                .collect::<Option<Vec<_>>>()
                .map(|bs| {
                    let mut all = Bins::new();
                    bs.into_iter().for_each(|b| fio_hist::merge(&mut all, b));
                    all
                });
            let list: Vec<f64> = many[0].percentiles.iter().map(|p| p.0).collect();
            let list = if list.is_empty() {
                FIO_DEFAULT_PERCENTILES.to_vec()
            } else {
                list
            };
            Some(Agg {
                requests: many.iter().map(|a| a.requests).sum(),
                bytes: many.iter().map(|a| a.bytes).sum(),
                iops: many.iter().map(|a| a.iops).sum(),
                bw_bytes: many.iter().map(|a| a.bw_bytes).sum(),
                runtime_ms: many.iter().map(|a| a.runtime_ms).max().unwrap_or(0),
                basis: many[0].basis,
                lat: merge_lat(&many.iter().map(|a| &a.lat).collect::<Vec<_>>()),
                percentiles: bins
                    .as_ref()
                    .map(|b| from_bins(b, &list))
                    .unwrap_or_default(),
                percentiles_from: if bins.is_some() { "json+ bins" } else { "" },
                bins,
                clat_percentiles: Vec::new(),
            })
        }
    }
}

/// dbio's write latency in fsync/fdatasync mode includes the sync that
/// follows the write; fio's excludes it and times the sync apart. Where fio
/// gives both, the means in dbio's meaning are exact (every write's time and
/// every sync's time, per write); fio's write-alone numbers keep their
/// values under `write.alone.*` and `total.alone.*`, since percentiles of
/// write + sync cannot be had from fio's summaries.
#[derive(Clone, Debug, PartialEq)]
pub struct WithSync {
    pub write_mean_us: f64,
    pub total_mean_us: f64,
}

pub(super) fn with_sync(
    mode: &str,
    aggs: &[Option<Agg>; 4],
    total: Option<&Agg>,
) -> Option<WithSync> {
    if !matches!(mode, "fsync" | "fdatasync") {
        return None;
    }
    let (w, s, t) = (aggs[1].as_ref()?, aggs[3].as_ref()?, total?);
    if w.lat.n == 0 || s.lat.n == 0 || t.lat.n == 0 {
        return None;
    }
    let sync_ns = s.lat.mean * s.lat.n as f64;
    let per = |a: &Agg| (a.lat.mean * a.lat.n as f64 + sync_ns) / a.lat.n as f64 / 1e3;
    Some(WithSync {
        write_mean_us: per(w),
        total_mean_us: per(t),
    })
}

/// `write.latency.p99_us` → `write.alone.latency.p99_us` (and `clat`).
pub(super) fn relabel_alone(metrics: &mut [(String, f64)], prefix: &str) {
    for (name, _) in metrics.iter_mut() {
        if let Some(rest) = name.strip_prefix(prefix).and_then(|r| r.strip_prefix('.'))
            && (rest.starts_with("latency.") || rest.starts_with("clat."))
        {
            *name = format!("{prefix}.alone.{rest}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_job_keeps_its_printed_mean_and_two_are_weighted() {
        let lat = |mean, n| Lat {
            min: 1.0,
            max: 9.0,
            mean,
            n,
        };
        // mean × n / n does not round-trip for every n (CI saw 4391.857549).
        for n in 1..5000 {
            let one = lat(4391.857549, n);
            assert_eq!(merge_lat(&[&one]).mean, 4391.857549, "n = {n}");
        }
        let (a, b, idle) = (lat(10.0, 1), lat(40.0, 3), lat(0.0, 0));
        let m = merge_lat(&[&a, &b, &idle]);
        assert_eq!((m.mean, m.n, m.min, m.max), (32.5, 4, 1.0, 9.0));
    }
}
