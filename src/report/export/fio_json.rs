//! A dbio raw run written as fio 3 writes `--output-format=json`
//! (`dbio runs show N --format fio-json`), for tools that read fio's JSON
//! (`jobs[].read.iops`, `…lat_ns.percentile`): one job standing for the
//! run's sessions, read/write/trim/sync sections with fio's field names
//! and units (ns, bytes, KiB/s, ms), percentiles from the stored histogram
//! computed as dbio computes them and its buckets as json+ `bins` (so
//! fio's own `fio_jsonplus_clat2csv` reads it too). `dbio import fio` reads it back to the
//! run's numbers (docs/import.md).
//!
//! dbio times a request from submission to reap, fio's `lat_ns`, which
//! carries the percentiles; `clat_ns` repeats it for a synchronous engine
//! (psync: completion is the system call) and is empty otherwise. In
//! fsync/fdatasync mode dbio's write latency includes its sync: the
//! document says so (`dbio.write_latency_includes_sync`), and dbio's
//! importer keeps it that way.

use hdrhistogram::Histogram;
use serde_json::{Map, Value, json};

use super::Exporter;
use crate::document::Report;
use crate::import::fio_runs::FIO_DEFAULT_PERCENTILES;
use crate::store::{StoreError, StoredRun, decode_histogram, fmt_utc};

/// fio 3's `--output-format=json`.
pub struct FioJson;

impl Exporter<StoredRun> for FioJson {
    type Error = StoreError;
    fn write(&self, run: &StoredRun, out: &mut dyn std::io::Write) -> Result<(), StoreError> {
        let text = serde_json::to_string_pretty(&fio_json(run)?).expect("JSON values serialize");
        writeln!(out, "{text}").map_err(|source| StoreError::Output { source })
    }
}

/// Why a run has no fio form.
fn refuse(run: &StoredRun, why: &str) -> StoreError {
    StoreError::Selection {
        msg: format!(
            "run {} {why}; --format fio-json writes runs dbio measured with --workload raw",
            run.row.id
        ),
    }
}

/// `x` (µs) in ns such that dividing it by 1e3 gives `x` back exactly.
fn ns(us: f64) -> f64 {
    let mut v = us * 1e3;
    for _ in 0..4 {
        match (v / 1e3).partial_cmp(&us) {
            Some(std::cmp::Ordering::Less) => v = v.next_up(),
            Some(std::cmp::Ordering::Greater) => v = v.next_down(),
            _ => break,
        }
    }
    v
}

fn pct_key(p: f64) -> String {
    format!("{p:.6}")
}

struct Metrics<'a>(&'a [(String, f64)]);

impl Metrics<'_> {
    fn get(&self, name: &str) -> Option<f64> {
        self.0
            .binary_search_by(|(n, _)| n.as_str().cmp(name))
            .ok()
            .map(|i| self.0[i].1)
    }
    fn or0(&self, name: &str) -> f64 {
        self.get(name).unwrap_or(0.0)
    }
}

/// fio's latency object of direction `dir` (min, max, mean, stddev, N and
/// percentiles), from the metrics and the stored histogram.
fn latency(m: &Metrics, dir: &str, hist: Option<&Histogram<u64>>) -> Value {
    let n = m.or0(&format!("{dir}.requests")) as u64;
    let l = |k: &str| m.get(&format!("{dir}.latency.{k}_us"));
    let (Some(min), Some(max), Some(mean)) = (l("min"), l("max"), l("mean")) else {
        return json!({"min": 0, "max": 0, "mean": 0.0, "stddev": 0.0, "N": 0});
    };
    let (min_ns, max_ns) = ((min * 1e3).round() as u64, (max * 1e3).round() as u64);
    let mut pcts = Map::new();
    let mut bins = Map::new();
    match hist.filter(|h| !h.is_empty()) {
        // As dbio's report computes them (measure::stats::quantile_ns).
        Some(h) => {
            for p in FIO_DEFAULT_PERCENTILES {
                let v = h.value_at_quantile(p / 100.0).clamp(min_ns, max_ns);
                pcts.insert(pct_key(p), v.into());
            }
            // json+ bins: each bucket's highest value, as fio keys its own.
            for v in h.iter_recorded() {
                let at = v.value_iterated_to().clamp(min_ns, max_ns);
                bins.insert(at.to_string(), v.count_at_value().into());
            }
        }
        None => {
            for (p, name) in [
                (50.0, "p50"),
                (90.0, "p90"),
                (99.0, "p99"),
                (99.9, "p99_9"),
                (99.99, "p99_99"),
            ] {
                if let Some(us) = l(name) {
                    pcts.insert(pct_key(p), ((us * 1e3).round() as u64).into());
                }
            }
        }
    }
    let mut out = json!({
        "min": min_ns,
        "max": max_ns,
        "mean": ns(mean),
        "stddev": hist.map_or(0.0, |h| h.stdev()),
        "N": n,
        "percentile": pcts,
    });
    if !bins.is_empty() {
        out["bins"] = Value::Object(bins);
    }
    out
}

fn empty_lat() -> Value {
    json!({"min": 0, "max": 0, "mean": 0.0, "stddev": 0.0, "N": 0})
}

/// The read, write or trim section.
fn section(
    m: &Metrics,
    dir: &str,
    runtime_ms: u64,
    hist: Option<&Histogram<u64>>,
    sync_engine: bool,
) -> Value {
    let bytes = m.or0(&format!("{dir}.bytes"));
    let mib = m.or0(&format!("{dir}.mib_per_s"));
    let lat = latency(m, dir, hist);
    let clat = if sync_engine {
        lat.clone()
    } else {
        empty_lat()
    };
    json!({
        "io_bytes": bytes as u64,
        "io_kbytes": bytes as u64 / 1024,
        "bw_bytes": mib * 1_048_576.0,
        "bw": (mib * 1024.0).round() as u64,
        "iops": m.or0(&format!("{dir}.iops")),
        "runtime": if bytes > 0.0 { runtime_ms } else { 0 },
        "total_ios": m.or0(&format!("{dir}.requests")) as u64,
        "short_ios": 0,
        "drop_ios": 0,
        "slat_ns": empty_lat(),
        "clat_ns": clat,
        "lat_ns": lat,
    })
}

fn fio_rw(pattern: &str) -> &str {
    match pattern {
        "seqread" => "read",
        "seqwrite" => "write",
        "seqrw" => "rw",
        other => other,
    }
}

/// The fio-3-shaped JSON document of a stored dbio raw run.
pub fn fio_json(run: &StoredRun) -> Result<Value, StoreError> {
    let r = &run.row;
    if r.source != "dbio" {
        return Err(refuse(run, &format!("was imported from {}", r.source)));
    }
    if r.workload.as_deref() != Some("raw") {
        return Err(refuse(
            run,
            &format!("is a {} run", r.workload.as_deref().unwrap_or("?")),
        ));
    }
    let m = Metrics(&run.metrics);
    let mut hists = std::collections::BTreeMap::new();
    for (op, bytes) in &run.histograms {
        hists.insert(op.as_str(), decode_histogram(bytes)?);
    }
    let doc = Report::from_stored(&run.report)
        .map_err(|e| refuse(run, &format!("has a document that {e}")))?;
    let cfg = &doc.config;
    let engine = cfg.engine.name().to_string();
    let sync_engine = engine == "psync";
    let sessions = r.sessions.unwrap_or(1).max(1) as u64;
    let runtime_ms = (m.or0("measured_s") * 1e3).round() as u64;
    let mut opts = Map::new();
    let mut opt = |k: &str, v: String| {
        opts.insert(k.into(), Value::String(v));
    };
    let raw = cfg.workload.raw();
    if let Some(p) = raw.map(|r| r.pattern.name()).or(r.pattern.as_deref()) {
        opt("rw", fio_rw(p).to_string());
        if let Some(pct) = raw.map(|r| r.read_pct)
            && p.ends_with("rw")
        {
            opt("rwmixread", pct.to_string());
        }
    }
    if let Some(bs) = r.block_size {
        opt("bs", bs.to_string());
    }
    opt("ioengine", engine.clone());
    opt("iodepth", cfg.iodepth.to_string());
    opt("numjobs", sessions.to_string());
    if let Some(s) = cfg.size_bytes {
        opt("size", s.to_string());
    }
    if let Some(t) = &r.target {
        opt("filename", t.clone());
    }
    let mode = r.io_mode.as_deref().unwrap_or("");
    match mode {
        "fsync" => opt("fsync", "1".into()),
        "fdatasync" => opt("fdatasync", "1".into()),
        "dsync" => opt("sync", "1".into()),
        "direct" => opt("direct", "1".into()),
        _ => {}
    }
    let secs = runtime_ms as f64 / 1e3 * sessions as f64;
    let cpu_pct = |k: &str| {
        if secs > 0.0 {
            m.or0(k) / secs * 100.0
        } else {
            0.0
        }
    };
    let job = json!({
        "jobname": format!("dbio-run-{}", r.id),
        "groupid": 0,
        "error": 0,
        "job options": opts,
        "job_runtime": runtime_ms * sessions,
        "usr_cpu": cpu_pct("cpu.user_s"),
        "sys_cpu": cpu_pct("cpu.sys_s"),
        "read": section(&m, "read", runtime_ms, hists.get("read"), sync_engine),
        "write": section(&m, "write", runtime_ms, hists.get("write"), sync_engine),
        "trim": section(&m, "trim", 0, None, sync_engine),
        "sync": {
            "total_ios": m.or0("sync.requests") as u64,
            "lat_ns": latency(&m, "sync", hists.get("sync")),
        },
    });
    let ended = r
        .ended_unix_ms
        .unwrap_or(r.started_unix_ms + runtime_ms as i64);
    Ok(json!({
        "fio version": format!("dbio-{}", r.dbio_version.as_deref().unwrap_or(env!("CARGO_PKG_VERSION"))),
        "timestamp": ended / 1000,
        "timestamp_ms": ended,
        "time": fmt_utc(ended),
        "global options": {},
        "jobs": [job],
        "dbio": {
            "run": r.id,
            "latency": "submit to reap (fio's lat_ns)",
            "write_latency_includes_sync": matches!(mode, "fsync" | "fdatasync"),
        },
    }))
}
