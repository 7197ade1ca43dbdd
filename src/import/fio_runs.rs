//! fio job entries as stored runs, with the metric names dbio's own raw runs
//! use (`read.iops`, `write.mib_per_s`, `total.latency.p99_us`, …), so one
//! `dbio report` table compares fio and dbio.
//!
//! One run per fio group (`groupid`: jobs that ran at the same time; groups
//! separated by `stonewall` ran one after the other), over all its jobs and,
//! in client/server output, all its hosts. Sums are fio's where fio printed
//! them (a single entry, `group_reporting`, "All clients"); percentiles are
//! fio's printed ones for a single entry, and otherwise computed from the
//! merged `json+` bins exactly as fio computes them ([`super::fio_hist`]).

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::ImportError;
use super::fio::{DIRECTIONS, Dir, Entry, FioOutput, Lat};
use super::fio_hist::{self, Bins};
use super::fio_text;
use crate::store::{ImportedRun, RunRow, encode_histogram};

/// How the entries become runs.
#[derive(Clone, Debug, Default)]
pub struct Options {
    pub plan: Option<String>,
    pub variable: Option<String>,
    pub tags: Vec<String>,
}

/// The percentiles fio prints by default, for merged bins without a list.
const FIO_DEFAULT_PERCENTILES: [f64; 17] = [
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
}

/// `p99_9` for 99.9: the metric name of a percentile (dbio's spelling).
pub fn percentile_name(p: f64) -> String {
    let s = format!("{p:.6}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    format!("p{}", s.replace('.', "_"))
}

/// How many jobs one entry stands for, from its summed run time: 1 for a
/// job of its own, the group's size for a `group_reporting` entry.
fn members(e: &Entry) -> u64 {
    let runtime = e
        .dirs
        .iter()
        .flatten()
        .map(|d| d.runtime_ms)
        .max()
        .unwrap_or(0);
    if runtime == 0 {
        return 1;
    }
    ((e.job_runtime_ms as f64 / runtime as f64).round() as u64).max(1)
}

fn merge_lat(lats: &[&Lat]) -> Lat {
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

/// The bins of every direction that did I/O (a randwrite job's empty read
/// side has none to give); None if one that did I/O has no bins.
fn merged_bins<'a>(dirs: impl Iterator<Item = &'a Dir>) -> Option<Bins> {
    let mut all = Bins::new();
    for d in dirs.filter(|d| d.total_ios > 0) {
        fio_hist::merge(&mut all, d.bins.as_ref()?);
    }
    Some(all)
}

fn from_bins(bins: &Bins, list: &[f64]) -> Vec<(f64, u64)> {
    list.iter()
        .filter_map(|&p| fio_hist::percentile(bins, p).map(|v| (p, v)))
        .collect()
}

/// Direction `i` over `entries` (`all`: fio's "All clients" entry).
fn aggregate(i: usize, entries: &[&Entry], all: Option<&Entry>) -> Option<Agg> {
    let dirs: Vec<&Dir> = entries.iter().filter_map(|e| e.dirs[i].as_ref()).collect();
    let first = dirs.first()?;
    let bins = merged_bins(dirs.iter().copied());
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
    if dirs.len() == 1 {
        a.percentiles = first.percentiles.clone();
        a.percentiles_from = "fio";
    } else if let Some(b) = &bins {
        let list: Vec<f64> = if first.percentiles.is_empty() {
            FIO_DEFAULT_PERCENTILES.to_vec()
        } else {
            first.percentiles.iter().map(|p| p.0).collect()
        };
        a.percentiles = from_bins(b, &list);
        a.percentiles_from = "json+ bins";
    }
    a.bins = bins;
    (a.requests > 0).then_some(a)
}

fn opt(entries: &[&Entry], global: &serde_json::Map<String, Value>, key: &str) -> Option<String> {
    let v = entries
        .first()
        .and_then(|e| e.options.get(key))
        .or_else(|| global.get(key))?;
    Some(match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    })
}

fn pattern(rw: &str) -> String {
    let rw = rw.split(':').next().unwrap_or(rw).trim();
    match rw {
        "read" => "seqread".into(),
        "write" => "seqwrite".into(),
        "rw" | "readwrite" => "seqrw".into(),
        other => other.into(),
    }
}

fn io_mode(entries: &[&Entry], global: &serde_json::Map<String, Value>) -> String {
    let on = |k: &str| {
        opt(entries, global, k).is_some_and(|v| !matches!(v.trim(), "" | "0" | "false" | "none"))
    };
    if on("fsync") {
        "fsync".into()
    } else if on("fdatasync") {
        "fdatasync".into()
    } else if on("sync") {
        "dsync".into()
    } else if on("direct") {
        "direct".into()
    } else {
        "buffered".into()
    }
}

/// Metrics of one direction (`prefix` = read, write, trim, sync, total).
fn put_dir(m: &mut Vec<(String, f64)>, prefix: &str, a: &Agg, bs: Option<u64>, secs: f64) {
    let mut put = |k: &str, v: f64| m.push((format!("{prefix}.{k}"), v));
    put("requests", a.requests as f64);
    if prefix != "sync" {
        put("bytes", a.bytes as f64);
        if let Some(bs) = bs.filter(|b| *b > 0) {
            put("blocks", (a.bytes / bs) as f64);
        }
        put("iops", a.iops);
        put("mib_per_s", a.bw_bytes / 1_048_576.0);
    } else if secs > 0.0 {
        put("iops", a.requests as f64 / secs);
    }
    if a.lat.n > 0 {
        put("latency.min_us", a.lat.min / 1e3);
        put("latency.mean_us", a.lat.mean / 1e3);
        put("latency.max_us", a.lat.max / 1e3);
    }
    for &(p, ns) in &a.percentiles {
        put(
            &format!("latency.{}_us", percentile_name(p)),
            ns as f64 / 1e3,
        );
    }
}

/// Read, write and trim together (dbio's `total`).
fn total(aggs: &[Option<Agg>; 4]) -> Option<Agg> {
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
            })
        }
    }
}

/// One run per group; `warnings` gets what the user should know.
pub fn runs(
    out: &FioOutput,
    opts: &Options,
    source_file: &str,
    fallback_end_ms: i64,
    warnings: &mut Vec<String>,
) -> Result<Vec<ImportedRun>, ImportError> {
    let mut groups: BTreeMap<i64, Vec<&Entry>> = BTreeMap::new();
    for e in &out.entries {
        groups.entry(e.groupid).or_default().push(e);
    }
    let g_opts = &out.global_options;
    let mut runs = Vec::with_capacity(groups.len());
    for (gid, entries) in &groups {
        let all = out.all_clients.iter().find(|e| e.groupid == *gid);
        let aggs: [Option<Agg>; 4] = std::array::from_fn(|i| aggregate(i, entries, all));
        for (i, a) in aggs.iter().enumerate() {
            if a.as_ref().is_some_and(|a| a.percentiles.is_empty())
                && entries
                    .iter()
                    .filter(|e| e.dirs[i].as_ref().is_some_and(|d| d.total_ios > 0))
                    .count()
                    > 1
            {
                warnings.push(format!(
                    "group {gid}: {} latency percentiles of several jobs cannot be merged without bins; run fio with --output-format=json+ or --group_reporting",
                    DIRECTIONS[i]
                ));
            }
        }
        let tot = total(&aggs);
        let bs = opt(entries, g_opts, "bs").and_then(|b| crate::units::parse_size(&b).ok());
        let secs = aggs[..3]
            .iter()
            .flatten()
            .map(|a| a.runtime_ms)
            .max()
            .unwrap_or(0) as f64
            / 1e3;
        let mut metrics = Vec::new();
        for (i, a) in aggs.iter().enumerate() {
            if let Some(a) = a {
                put_dir(&mut metrics, DIRECTIONS[i], a, bs, secs);
            }
        }
        if let Some(t) = &tot {
            put_dir(&mut metrics, "total", t, bs, secs);
        }
        metrics.push(("measured_s".into(), secs));
        // Without group_reporting, numjobs=N gives N entries of one name;
        // with it, one entry stands for every job of the group, possibly of
        // several sections, and its job options are only those of the last
        // section. fio sums the members' run times into that entry's
        // job_runtime, so job_runtime over the entry's runtime counts them.
        let mut per_job: BTreeMap<(Option<&str>, &str), (u64, u64, u64)> = BTreeMap::new();
        for e in entries {
            let n = e.options.get("numjobs").or_else(|| g_opts.get("numjobs"));
            let n = n
                .and_then(|v| {
                    v.as_str()
                        .and_then(|s| s.trim().parse().ok())
                        .or(v.as_u64())
                })
                .unwrap_or(1)
                .max(1);
            let slot = per_job
                .entry((e.host.as_deref(), e.jobname.as_str()))
                .or_insert((0, n, 0));
            slot.0 += 1;
            slot.2 += members(e);
        }
        let jobs: u64 = per_job
            .values()
            .map(|&(seen, n, summed)| seen.max(n).max(summed))
            .sum();
        let (user_s, sys_s) = entries.iter().fold((0.0, 0.0), |(u, s), e| {
            let rt = e.job_runtime_ms as f64 / 1e3;
            (
                u + e.usr_cpu_pct / 100.0 * rt,
                s + e.sys_cpu_pct / 100.0 * rt,
            )
        });
        metrics.push(("cpu.user_s".into(), user_s));
        metrics.push(("cpu.sys_s".into(), sys_s));
        if let Some(t) = tot.as_ref().filter(|t| t.requests > 0) {
            metrics.push((
                "cpu.us_per_io".into(),
                (user_s + sys_s) * 1e6 / t.requests as f64,
            ));
        }
        let hosts: Vec<String> = {
            let mut h: Vec<String> = entries.iter().filter_map(|e| e.host.clone()).collect();
            h.dedup();
            h.sort();
            h.dedup();
            h
        };
        if hosts.len() > 1 {
            for host in &hosts {
                let mine: Vec<&Entry> = entries
                    .iter()
                    .copied()
                    .filter(|e| e.host.as_ref() == Some(host))
                    .collect();
                for (i, name) in DIRECTIONS[..3].iter().enumerate() {
                    if let Some(a) = aggregate(i, &mine, None) {
                        metrics.push((format!("client.{host}.{name}.iops"), a.iops));
                        metrics.push((
                            format!("client.{host}.{name}.mib_per_s"),
                            a.bw_bytes / 1_048_576.0,
                        ));
                    }
                }
            }
        }
        let mut histograms = Vec::new();
        for (i, a) in aggs.iter().enumerate() {
            let bins = a.as_ref().and_then(|a| a.bins.as_ref());
            // HDR counts are 63-bit: a merge beyond that is not a real run.
            let fits = |b: &&Bins| {
                b.values()
                    .try_fold(0u64, |s, &c| s.checked_add(c))
                    .is_some_and(|n| n < 1 << 62)
            };
            if let Some(b) = bins.filter(fits) {
                histograms.push((
                    DIRECTIONS[i].to_string(),
                    encode_histogram(&fio_hist::to_hdr(b)),
                ));
            }
        }
        let ended = out.timestamp_ms.unwrap_or(fallback_end_ms);
        let config = json!({
            "workload": "raw",
            "pattern": opt(entries, g_opts, "rw").or_else(|| opt(entries, g_opts, "readwrite")).map(|r| pattern(&r)),
            "read_pct": opt(entries, g_opts, "rwmixread"),
            "sessions": jobs,
            "iodepth": opt(entries, g_opts, "iodepth"),
            "block_size": bs,
            "engine": opt(entries, g_opts, "ioengine").unwrap_or_else(|| "psync".into()),
            "io_mode": io_mode(entries, g_opts),
            "target": opt(entries, g_opts, "filename").or_else(|| opt(entries, g_opts, "directory")),
        });
        let text = |k: &str| config.get(k).and_then(Value::as_str).map(str::to_string);
        let failed = entries.iter().any(|e| e.error != 0);
        let report = json!({
            "schema": "dbio.import.fio.v1",
            "fio_version": out.version,
            "source_file": source_file,
            "group": gid,
            "hosts": hosts,
            "latency_basis": aggs.iter().flatten().map(|a| (a.basis, a.percentiles_from)).next().map(|(b, f)| json!({"field": b, "percentiles_from": f})),
            "config": config,
            "global_options": Value::Object(g_opts.clone()),
            "jobs": entries.iter().map(|e| e.raw.clone()).collect::<Vec<_>>(),
            "all_clients": all.map(|e| e.raw.clone()),
            "disk_util": out.disk_util,
        });
        let report_text = fio_text::render(
            out,
            *gid,
            entries,
            &hosts,
            &aggs,
            tot.as_ref(),
            &config,
            source_file,
        );
        runs.push(ImportedRun {
            row: RunRow {
                started_unix_ms: ended.saturating_sub((secs * 1e3) as i64),
                ended_unix_ms: Some(ended),
                status: if failed { "failed" } else { "completed" }.into(),
                workload: Some("raw".into()),
                pattern: text("pattern"),
                sessions: Some(jobs as i64),
                block_size: bs.map(|b| b as i64),
                engine: text("engine"),
                io_mode: text("io_mode"),
                target: text("target"),
                plan: opts.plan.clone(),
                variable: opts.variable.clone(),
                tags: opts.tags.clone(),
                source: "fio".into(),
                source_file: Some(source_file.to_string()),
                ..Default::default()
            },
            metrics,
            histograms,
            report,
            report_text,
            environment: json!({"source": "fio", "fio_version": out.version, "hosts": hosts}),
        });
    }
    Ok(runs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentile_names_follow_dbio() {
        assert_eq!(percentile_name(50.0), "p50");
        assert_eq!(percentile_name(99.9), "p99_9");
        assert_eq!(percentile_name(99.99), "p99_99");
        assert_eq!(percentile_name(99.95), "p99_95");
        assert_eq!(percentile_name(1.0), "p1");
    }

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
