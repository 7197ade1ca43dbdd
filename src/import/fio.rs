//! fio 3.x `--output-format=json` and `json+` output, read into typed job
//! entries: per job (or per group with `group_reporting`), per host in
//! client/server mode (`client_stats`, with fio's "All clients" sums kept
//! apart). [`super::fio_runs`] turns them into stored runs.
//!
//! Text before the JSON document (fio's warnings, `--output-format=normal,json`)
//! is skipped; anything after it is ignored.

use serde_json::{Map, Value};

use super::ImportError;
use super::fio_hist::Bins;

/// The I/O directions fio reports, in dbio's order (dbio has no trim).
pub const DIRECTIONS: [&str; 4] = ["read", "write", "trim", "sync"];

/// The largest count a json+ bin may hold (2^53: far beyond any run, and
/// thousands of merged bins still fit a histogram's 63-bit counts).
pub const MAX_BIN_COUNT: u64 = 1 << 53;

/// A latency summary in ns.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Lat {
    pub min: f64,
    pub max: f64,
    pub mean: f64,
    pub n: u64,
}

/// One direction of one job entry.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Dir {
    pub io_bytes: u64,
    pub bw_bytes: f64,
    pub iops: f64,
    /// ms (0 for `sync`, which fio reports without one).
    pub runtime_ms: u64,
    /// For `sync`: the syncs fio timed (`lat_ns.N`), since fio leaves
    /// `total_ios` at 0 for fdatasync (it counts those in a direction it
    /// does not print).
    pub total_ios: u64,
    /// What dbio measures is submit to reap, fio's `lat_ns`: the basis is
    /// `lat_ns` when fio printed its percentiles (`lat_percentiles=1`),
    /// for `sync`, and for an asynchronous engine (one with submission
    /// latency, `slat_ns.N > 0`); otherwise (a synchronous engine, whose
    /// clat is the system call) `clat_ns`, as fio prints percentiles of it.
    pub basis: &'static str,
    pub lat: Lat,
    /// fio's printed percentiles of `basis`: (percent, ns), ascending.
    pub percentiles: Vec<(f64, u64)>,
    /// `json+` bins of `basis`.
    pub bins: Option<Bins>,
    /// An asynchronous engine's `clat_ns` percentiles and bins when `lat_ns`
    /// has none: completion only, not what dbio measures, kept under names
    /// of their own (`read.clat.latency.p99_us`).
    pub clat_percentiles: Vec<(f64, u64)>,
    pub clat_bins: Option<Bins>,
}

/// One element of `jobs` or `client_stats`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Entry {
    /// Its JSON path, for messages: `jobs[2]`.
    pub path: String,
    pub jobname: String,
    pub groupid: i64,
    pub error: i64,
    /// `hostname:port` in client/server output.
    pub host: Option<String>,
    pub options: Map<String, Value>,
    /// read, write, trim, sync (see [`DIRECTIONS`]); None when absent.
    pub dirs: [Option<Dir>; 4],
    pub usr_cpu_pct: f64,
    pub sys_cpu_pct: f64,
    pub job_runtime_ms: u64,
    /// The entry as fio printed it.
    pub raw: Value,
}

/// A whole fio output file.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FioOutput {
    pub version: String,
    /// When fio wrote the output (its end), ms since the epoch.
    pub timestamp_ms: Option<i64>,
    pub global_options: Map<String, Value>,
    pub entries: Vec<Entry>,
    /// Client/server: fio's "All clients" entries (one per group).
    pub all_clients: Vec<Entry>,
    /// True for `client_stats` output.
    pub client_server: bool,
    pub disk_util: Value,
    /// Written by `dbio runs show --format fio-json` from a run whose write
    /// latency includes its sync (dbio's meaning), so nothing to add.
    pub write_includes_sync: bool,
}

fn at<'a>(obj: &'a Value, key: &str) -> Option<&'a Value> {
    obj.get(key).filter(|v| !v.is_null())
}

fn num(obj: &Value, path: &str, key: &str) -> Result<f64, ImportError> {
    let v = at(obj, key).ok_or_else(|| {
        ImportError::field(
            format!("{path}.{key}"),
            "missing; is this fio 3.x --output-format=json output?",
        )
    })?;
    v.as_f64()
        .filter(|x| x.is_finite() && *x >= 0.0)
        .ok_or_else(|| {
            ImportError::field(
                format!("{path}.{key}"),
                format!("{v} is not a non-negative number"),
            )
        })
}

fn count(obj: &Value, path: &str, key: &str) -> Result<u64, ImportError> {
    let x = num(obj, path, key)?;
    if x.fract() != 0.0 || x > 9.0e18 {
        return Err(ImportError::field(
            format!("{path}.{key}"),
            format!("{x} is not a count"),
        ));
    }
    Ok(x as u64)
}

fn lat(obj: &Value, path: &str) -> Result<Lat, ImportError> {
    Ok(Lat {
        min: num(obj, path, "min")?,
        max: num(obj, path, "max")?,
        mean: num(obj, path, "mean")?,
        n: count(obj, path, "N")?,
    })
}

fn percentiles(obj: &Value, path: &str) -> Result<Vec<(f64, u64)>, ImportError> {
    let Some(p) = at(obj, "percentile") else {
        return Ok(Vec::new());
    };
    let map = p
        .as_object()
        .ok_or_else(|| ImportError::field(format!("{path}.percentile"), "is not an object"))?;
    let mut out = Vec::with_capacity(map.len());
    for (k, v) in map {
        let here = format!("{path}.percentile.{k}");
        let pct = k
            .trim()
            .parse::<f64>()
            .ok()
            .filter(|p| (0.0..=100.0).contains(p))
            .ok_or_else(|| ImportError::field(&here, "the key is not a percentage"))?;
        let ns = v
            .as_u64()
            .or_else(|| {
                v.as_f64()
                    .filter(|x| *x >= 0.0 && x.fract() == 0.0)
                    .map(|x| x as u64)
            })
            .ok_or_else(|| ImportError::field(&here, format!("{v} is not a latency in ns")))?;
        out.push((pct, ns));
    }
    out.sort_by(|a, b| a.0.total_cmp(&b.0));
    Ok(out)
}

fn bins(obj: &Value, path: &str) -> Result<Option<Bins>, ImportError> {
    let Some(b) = at(obj, "bins") else {
        return Ok(None);
    };
    let map = b
        .as_object()
        .ok_or_else(|| ImportError::field(format!("{path}.bins"), "is not an object"))?;
    let mut out = Bins::new();
    for (k, v) in map {
        let here = format!("{path}.bins.{k}");
        let ns: u64 = k
            .trim()
            .parse()
            .map_err(|_| ImportError::field(&here, "the key is not a latency in ns"))?;
        let n = v
            .as_u64()
            .filter(|&n| n <= MAX_BIN_COUNT)
            .ok_or_else(|| ImportError::field(&here, format!("{v} is not a sample count")))?;
        let c = out.entry(ns).or_insert(0);
        *c = c.saturating_add(n);
    }
    Ok(Some(out))
}

fn dir(obj: &Value, path: &str, sync: bool) -> Result<Dir, ImportError> {
    let (lat_ns, clat_ns) = (at(obj, "lat_ns"), at(obj, "clat_ns"));
    let asynchronous = at(obj, "slat_ns")
        .and_then(|s| at(s, "N"))
        .and_then(Value::as_u64)
        .is_some_and(|n| n > 0);
    let (basis, src) = match (lat_ns, clat_ns) {
        (Some(l), _) if sync || asynchronous || at(l, "percentile").is_some() => ("lat_ns", l),
        (_, Some(c)) => ("clat_ns", c),
        (Some(l), None) => ("lat_ns", l),
        (None, None) => {
            return Err(ImportError::field(
                path,
                "has neither lat_ns nor clat_ns; is this fio 3.x output (fio 2 printed lat in µs)?",
            ));
        }
    };
    let lpath = format!("{path}.{basis}");
    let mut d = Dir {
        total_ios: count(obj, path, "total_ios")?,
        basis,
        lat: lat(src, &lpath)?,
        percentiles: percentiles(src, &lpath)?,
        bins: bins(src, &lpath)?,
        ..Default::default()
    };
    if let Some(c) = clat_ns.filter(|_| basis == "lat_ns" && d.percentiles.is_empty()) {
        let cpath = format!("{path}.clat_ns");
        d.clat_percentiles = percentiles(c, &cpath)?;
        d.clat_bins = bins(c, &cpath)?;
    }
    if sync {
        d.total_ios = d.total_ios.max(d.lat.n);
    } else {
        d.io_bytes = count(obj, path, "io_bytes")?;
        d.bw_bytes = num(obj, path, "bw_bytes")?;
        d.iops = num(obj, path, "iops")?;
        d.runtime_ms = count(obj, path, "runtime")?;
    }
    Ok(d)
}

fn entry(v: &Value, path: String, client_server: bool) -> Result<Entry, ImportError> {
    if !v.is_object() {
        return Err(ImportError::field(path, "is not an object"));
    }
    let text = |k: &str| at(v, k).and_then(Value::as_str).unwrap_or("").to_string();
    let int = |k: &str| at(v, k).and_then(Value::as_i64).unwrap_or(0);
    let mut dirs: [Option<Dir>; 4] = Default::default();
    for (i, name) in DIRECTIONS.iter().enumerate() {
        if let Some(d) = at(v, name) {
            dirs[i] = Some(dir(d, &format!("{path}.{name}"), *name == "sync")?);
        }
    }
    if dirs[0].is_none() && dirs[1].is_none() {
        return Err(ImportError::field(
            path,
            "has no read or write section; is this fio 3.x --output-format=json output?",
        ));
    }
    let host = client_server.then(|| {
        let port = at(v, "port").and_then(Value::as_i64);
        match port {
            Some(p) => format!("{}:{p}", text("hostname")),
            None => text("hostname"),
        }
    });
    Ok(Entry {
        jobname: text("jobname"),
        groupid: int("groupid"),
        error: int("error"),
        host,
        options: at(v, "job options")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default(),
        dirs,
        usr_cpu_pct: at(v, "usr_cpu").and_then(Value::as_f64).unwrap_or(0.0),
        sys_cpu_pct: at(v, "sys_cpu").and_then(Value::as_f64).unwrap_or(0.0),
        job_runtime_ms: at(v, "job_runtime").and_then(Value::as_u64).unwrap_or(0),
        raw: v.clone(),
        path,
    })
}

/// Parses fio's JSON output; errors name the line (syntax) or the JSON path.
pub fn parse(text: &str) -> Result<FioOutput, ImportError> {
    // Skip whatever fio printed before the document.
    let skipped = text
        .lines()
        .take_while(|l| !l.trim_start().starts_with('{'))
        .count();
    let start: usize = text.split_inclusive('\n').take(skipped).map(str::len).sum();
    let rest = &text[start..];
    if rest.trim().is_empty() {
        return Err(ImportError::whole(
            "no JSON document in the file; run fio with --output-format=json (or json+)",
        ));
    }
    let mut stream = serde_json::Deserializer::from_str(rest).into_iter::<Value>();
    let doc = match stream.next() {
        Some(Ok(v)) => v,
        Some(Err(e)) => {
            return Err(ImportError::line(
                e.line() + skipped,
                format!("not valid JSON: {e}; was the file cut short?").replace(
                    &format!(" at line {} column {}", e.line(), e.column()),
                    &format!(" (column {})", e.column()),
                ),
            ));
        }
        None => return Err(ImportError::whole("no JSON document in the file")),
    };
    let (list, key, client_server) = match (at(&doc, "jobs"), at(&doc, "client_stats")) {
        (Some(j), _) => (j, "jobs", false),
        (None, Some(c)) => (c, "client_stats", true),
        (None, None) => {
            return Err(ImportError::whole(
                "no \"jobs\" or \"client_stats\" in the JSON; is this fio --output-format=json output?",
            ));
        }
    };
    let list = list
        .as_array()
        .ok_or_else(|| ImportError::field(key, "is not an array"))?;
    let mut out = FioOutput {
        version: at(&doc, "fio version")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string(),
        timestamp_ms: at(&doc, "timestamp_ms")
            .and_then(Value::as_i64)
            .or_else(|| {
                at(&doc, "timestamp")
                    .and_then(Value::as_i64)
                    .map(|s| s * 1000)
            }),
        global_options: at(&doc, "global options")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default(),
        client_server,
        disk_util: at(&doc, "disk_util").cloned().unwrap_or(Value::Null),
        write_includes_sync: at(&doc, "dbio")
            .and_then(|d| at(d, "write_latency_includes_sync"))
            .and_then(Value::as_bool)
            .unwrap_or(false),
        ..Default::default()
    };
    for (i, v) in list.iter().enumerate() {
        let e = entry(v, format!("{key}[{i}]"), client_server)?;
        if client_server && e.jobname == "All clients" {
            out.all_clients.push(e);
        } else {
            out.entries.push(e);
        }
    }
    if out.entries.is_empty() {
        return Err(ImportError::field(key, "is empty: fio ran no job"));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MINI: &str = r#"fio: some warning first
{"fio version": "fio-3.33", "timestamp": 1700000000, "timestamp_ms": 1700000000123,
 "jobs": [{"jobname": "a", "groupid": 0, "error": 0, "job options": {"rw": "randread", "bs": "4k"},
   "read": {"io_bytes": 4096, "bw_bytes": 4096, "iops": 1.0, "runtime": 1000, "total_ios": 1,
            "clat_ns": {"min": 10, "max": 10, "mean": 10.0, "N": 1,
                        "percentile": {"50.000000": 10, "99.000000": 10}, "bins": {"10": 1}},
            "lat_ns": {"min": 11, "max": 11, "mean": 11.0, "N": 1}},
   "write": {"io_bytes": 0, "bw_bytes": 0, "iops": 0.0, "runtime": 0, "total_ios": 0,
            "clat_ns": {"min": 0, "max": 0, "mean": 0.0, "N": 0},
            "lat_ns": {"min": 0, "max": 0, "mean": 0.0, "N": 0}},
   "sync": {"total_ios": 0, "lat_ns": {"min": 0, "max": 0, "mean": 0.0, "N": 0}}}]}
trailing normal output"#;

    #[test]
    fn reads_jobs_after_leading_text() {
        let o = parse(MINI).unwrap();
        assert_eq!(o.version, "fio-3.33");
        assert_eq!(o.timestamp_ms, Some(1_700_000_000_123));
        let r = o.entries[0].dirs[0].as_ref().unwrap();
        assert_eq!((r.iops, r.total_ios, r.basis), (1.0, 1, "clat_ns"));
        assert_eq!(r.percentiles, vec![(50.0, 10), (99.0, 10)]);
        assert_eq!(r.bins.as_ref().unwrap().get(&10), Some(&1));
        assert!(o.entries[0].dirs[2].is_none());
        assert_eq!(o.entries[0].dirs[3].as_ref().unwrap().basis, "lat_ns");
    }

    #[test]
    fn errors_name_the_line_or_the_field() {
        let cut = &MINI[..300];
        let e = parse(cut).unwrap_err().to_string();
        assert!(e.starts_with("line "), "{e}");
        let e = parse(&MINI.replace("\"iops\": 1.0", "\"iops\": \"x\"")).unwrap_err();
        assert_eq!(e.field.as_deref(), Some("jobs[0].read.iops"), "{e}");
        let e = parse(&MINI.replace("\"total_ios\": 1,", "")).unwrap_err();
        assert_eq!(
            e.to_string(),
            "jobs[0].read.total_ios: missing; is this fio 3.x --output-format=json output?"
        );
        let e = parse("{\"x\": 1}").unwrap_err().to_string();
        assert!(e.contains("no \"jobs\""), "{e}");
        assert!(
            parse("hello\n")
                .unwrap_err()
                .to_string()
                .contains("no JSON document")
        );
        let e = parse(&MINI.replace("\"10\": 1", "\"ten\": 1")).unwrap_err();
        assert_eq!(e.field.as_deref(), Some("jobs[0].read.clat_ns.bins.ten"));
    }
}
