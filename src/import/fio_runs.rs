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
use super::fio::{DIRECTIONS, Entry, FioOutput};
pub use super::fio_agg::FIO_DEFAULT_PERCENTILES;
use super::fio_agg::{Agg, WithSync, aggregate, relabel_alone, total, with_sync};
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
    for &(p, ns) in &a.clat_percentiles {
        put(
            &format!("clat.latency.{}_us", percentile_name(p)),
            ns as f64 / 1e3,
        );
    }
}

/// How long a group ran (ms): its longest direction.
fn group_ms(entries: &[&Entry]) -> i64 {
    let ms = entries
        .iter()
        .flat_map(|e| e.dirs.iter().flatten())
        .map(|d| d.runtime_ms)
        .max()
        .unwrap_or(0);
    i64::try_from(ms).unwrap_or(i64::MAX)
}

/// (start, end) in ms since the epoch of every group. fio's `job_start`
/// (newer fio) gives the start; otherwise the groups, which ran one after
/// the other (`stonewall`), are laid end to end back from `end_ms`, when
/// fio wrote its output: the last group ends then, each earlier one where
/// the next began (fio's set-up between groups is not in its output).
fn windows(groups: &BTreeMap<i64, Vec<&Entry>>, end_ms: i64) -> BTreeMap<i64, (i64, i64)> {
    let mut out = BTreeMap::new();
    let mut end = end_ms;
    for (gid, entries) in groups.iter().rev() {
        let ms = group_ms(entries);
        let job_start = entries
            .iter()
            .filter_map(|e| e.raw.get("job_start").and_then(Value::as_i64))
            .filter(|&t| t > 0)
            .min();
        let window = match job_start {
            Some(start) => (start, start.saturating_add(ms)),
            None => (end.saturating_sub(ms), end),
        };
        end = window.0;
        out.insert(*gid, window);
    }
    out
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
    let windows = windows(&groups, out.timestamp_ms.unwrap_or(fallback_end_ms));
    let runs = groups
        .iter()
        .map(|(gid, entries)| {
            let group = Group::new(out, *gid, entries);
            group.warn(warnings);
            group.run(opts, source_file, windows[gid])
        })
        .collect();
    Ok(runs)
}

/// One fio group, aggregated: what its run is made of.
struct Group<'a> {
    out: &'a FioOutput,
    gid: i64,
    entries: &'a [&'a Entry],
    /// Client/server output's "All clients" entry of the group.
    all: Option<&'a Entry>,
    aggs: [Option<Agg>; 4],
    tot: Option<Agg>,
    bs: Option<u64>,
    /// How long it measured (s): its longest direction.
    secs: f64,
    mode: String,
    with_sync: Option<WithSync>,
}

impl<'a> Group<'a> {
    fn new(out: &'a FioOutput, gid: i64, entries: &'a [&'a Entry]) -> Group<'a> {
        let g_opts = &out.global_options;
        let all = out.all_clients.iter().find(|e| e.groupid == gid);
        let aggs: [Option<Agg>; 4] = std::array::from_fn(|i| aggregate(i, entries, all));
        let tot = total(&aggs);
        let bs = opt(entries, g_opts, "bs").and_then(|b| crate::units::parse_size(&b).ok());
        let secs = aggs[..3]
            .iter()
            .flatten()
            .map(|a| a.runtime_ms)
            .max()
            .unwrap_or(0) as f64
            / 1e3;
        let mode = io_mode(entries, g_opts);
        let with_sync = if out.write_includes_sync {
            None
        } else {
            with_sync(&mode, &aggs, tot.as_ref())
        };
        Group {
            out,
            gid,
            entries,
            all,
            aggs,
            tot,
            bs,
            secs,
            mode,
            with_sync,
        }
    }

    fn opt(&self, key: &str) -> Option<String> {
        opt(self.entries, &self.out.global_options, key)
    }

    /// Percentiles that cannot be merged, and percentiles of clat only.
    fn warn(&self, warnings: &mut Vec<String>) {
        let gid = self.gid;
        for (i, a) in self.aggs.iter().enumerate() {
            if a.as_ref().is_some_and(|a| a.percentiles.is_empty())
                && self
                    .entries
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
        for (name, a) in DIRECTIONS.iter().zip(&self.aggs) {
            if a.as_ref().is_some_and(|a| !a.clat_percentiles.is_empty()) {
                warnings.push(format!(
                    "group {gid}: fio printed {name} percentiles of clat only (completion), not of lat (submit to completion, what dbio measures); stored as {name}.clat.latency.*, none as {name}.latency.*; run fio with --lat_percentiles=1 for them"
                ));
            }
        }
    }

    /// The group as a stored run over `(started, ended)`.
    fn run(&self, opts: &Options, source_file: &str, (started, ended): (i64, i64)) -> ImportedRun {
        let jobs = self.jobs();
        let hosts = self.hosts();
        let mut metrics = self.io_metrics();
        self.cpu_metrics(&mut metrics);
        self.client_metrics(&hosts, &mut metrics);
        let config = self.config(jobs);
        let text = |k: &str| config.get(k).and_then(Value::as_str).map(str::to_string);
        let failed = self.entries.iter().any(|e| e.error != 0);
        let report_text = fio_text::render(
            self.out,
            self.gid,
            self.entries,
            &hosts,
            &self.aggs,
            self.tot.as_ref(),
            &config,
            source_file,
            self.with_sync.as_ref(),
        );
        ImportedRun {
            row: RunRow {
                started_unix_ms: started,
                ended_unix_ms: Some(ended),
                status: if failed { "failed" } else { "completed" }.into(),
                workload: Some("raw".into()),
                pattern: text("pattern"),
                sessions: Some(jobs as i64),
                block_size: self.bs.map(|b| b as i64),
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
            histograms: self.histograms(),
            environment: json!({"source": "fio", "fio_version": self.out.version, "hosts": hosts}),
            report: self.report(source_file, &hosts, config),
            report_text,
        }
    }

    /// Each direction's and the total's metrics (the write alone relabelled
    /// where fio timed the sync apart), and how long it measured.
    fn io_metrics(&self) -> Vec<(String, f64)> {
        let mut metrics = Vec::new();
        for (i, a) in self.aggs.iter().enumerate() {
            if let Some(a) = a {
                put_dir(&mut metrics, DIRECTIONS[i], a, self.bs, self.secs);
            }
        }
        if let Some(t) = &self.tot {
            put_dir(&mut metrics, "total", t, self.bs, self.secs);
        }
        if let Some(w) = &self.with_sync {
            for prefix in ["write", "total"] {
                relabel_alone(&mut metrics, prefix);
            }
            metrics.push(("write.latency.mean_us".into(), w.write_mean_us));
            metrics.push(("total.latency.mean_us".into(), w.total_mean_us));
        }
        metrics.push(("measured_s".into(), self.secs));
        metrics
    }

    /// How many jobs ran. Without group_reporting, numjobs=N gives N
    /// entries of one name; with it, one entry stands for every job of the
    /// group, possibly of several sections, and its job options are only
    /// those of the last section. fio sums the members' run times into that
    /// entry's job_runtime, so job_runtime over the entry's runtime counts them.
    fn jobs(&self) -> u64 {
        let g_opts = &self.out.global_options;
        let mut per_job: BTreeMap<(Option<&str>, &str), (u64, u64, u64)> = BTreeMap::new();
        for e in self.entries {
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
        per_job
            .values()
            .map(|&(seen, n, summed)| seen.max(n).max(summed))
            .sum()
    }

    /// CPU seconds (user, system) and per I/O.
    fn cpu_metrics(&self, metrics: &mut Vec<(String, f64)>) {
        let (user_s, sys_s) = self.entries.iter().fold((0.0, 0.0), |(u, s), e| {
            let rt = e.job_runtime_ms as f64 / 1e3;
            (
                u + e.usr_cpu_pct / 100.0 * rt,
                s + e.sys_cpu_pct / 100.0 * rt,
            )
        });
        metrics.push(("cpu.user_s".into(), user_s));
        metrics.push(("cpu.sys_s".into(), sys_s));
        if let Some(t) = self.tot.as_ref().filter(|t| t.requests > 0) {
            metrics.push((
                "cpu.us_per_io".into(),
                (user_s + sys_s) * 1e6 / t.requests as f64,
            ));
        }
    }

    /// The hosts of client/server output, sorted, once each.
    fn hosts(&self) -> Vec<String> {
        let mut h: Vec<String> = self.entries.iter().filter_map(|e| e.host.clone()).collect();
        h.dedup();
        h.sort();
        h.dedup();
        h
    }

    /// Each host's IOPS and MiB/s per direction, when there are several.
    fn client_metrics(&self, hosts: &[String], metrics: &mut Vec<(String, f64)>) {
        if hosts.len() <= 1 {
            return;
        }
        for host in hosts {
            let mine: Vec<&Entry> = self
                .entries
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

    /// The merged `json+` bins of each direction as HDR histograms.
    fn histograms(&self) -> Vec<(String, Vec<u8>)> {
        let mut histograms = Vec::new();
        for (i, a) in self.aggs.iter().enumerate() {
            let bins = a.as_ref().and_then(|a| a.bins.as_ref());
            // HDR counts are 63-bit: a merge beyond that is not a real run.
            let fits = |b: &&Bins| {
                b.values()
                    .try_fold(0u64, |s, &c| s.checked_add(c))
                    .is_some_and(|n| n < 1 << 62)
            };
            if let Some(b) = bins.filter(fits) {
                let op = match (DIRECTIONS[i], &self.with_sync) {
                    ("write", Some(_)) => "write.alone",
                    (op, _) => op,
                };
                histograms.push((op.to_string(), encode_histogram(&fio_hist::to_hdr(b))));
            }
        }
        histograms
    }

    /// The run's settings under dbio's names.
    fn config(&self, jobs: u64) -> Value {
        json!({
            "workload": "raw",
            "pattern": self.opt("rw").or_else(|| self.opt("readwrite")).map(|r| pattern(&r)),
            "read_pct": self.opt("rwmixread"),
            "sessions": jobs,
            "iodepth": self.opt("iodepth"),
            "block_size": self.bs,
            "engine": self.opt("ioengine").unwrap_or_else(|| "psync".into()),
            "io_mode": self.mode,
            "target": self.opt("filename").or_else(|| self.opt("directory")),
        })
    }

    /// The stored document: fio's own entries kept beside dbio's view.
    fn report(&self, source_file: &str, hosts: &[String], config: Value) -> Value {
        json!({
            "schema": "dbio.import.fio.v1",
            "fio_version": self.out.version,
            "source_file": source_file,
            "group": self.gid,
            "hosts": hosts,
            "write_latency": match &self.with_sync {
                Some(w) => json!({"includes_sync": true, "fio_write_alone_in": "write.alone.*", "mean_with_sync_us": w.write_mean_us}),
                None => json!({"includes_sync": !matches!(self.mode.as_str(), "fsync" | "fdatasync")}),
            },
            "latency_basis": self.aggs.iter().flatten().map(|a| (a.basis, a.percentiles_from)).next().map(|(b, f)| json!({"field": b, "percentiles_from": f})),
            "config": config,
            "global_options": Value::Object(self.out.global_options.clone()),
            "jobs": self.entries.iter().map(|e| e.raw.clone()).collect::<Vec<_>>(),
            "all_clients": self.all.map(|e| e.raw.clone()),
            "disk_util": self.out.disk_util,
        })
    }
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
}
