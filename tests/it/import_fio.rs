//! `dbio import fio` on output the real fio produces here (a small temp
//! file, 1 s jobs): the stored iops, bandwidth and latency percentiles are
//! exactly what fio printed; several jobs are merged (sums, and percentiles
//! of the merged json+ bins); client/server output of two fio servers on
//! localhost becomes one run with per-host numbers; and `dbio report` puts
//! fio and dbio runs in one table. Skipped (with a message) without fio.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command as Process};

use crate::common::run::dbio;
use crate::common::store::{store_path, temp_store};
use serde_json::Value;

/// Runs fio with `args` (plus a 4 MiB file in `dir`) and returns its JSON.
pub(crate) fn fio(dir: &Path, out: &str, args: &[&str]) -> (PathBuf, Value) {
    let path = dir.join(out);
    let status = Process::new("fio")
        .args([
            "--name=j",
            "--size=4M",
            "--bs=4k",
            "--time_based",
            "--runtime=1",
        ])
        .arg(format!("--filename={}", dir.join("data").display()))
        .args(args)
        .arg(format!("--output={}", path.display()))
        .status()
        .unwrap();
    assert!(status.success());
    let doc = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    (path, doc)
}

/// Imports `file` and returns the stored run's metrics by name.
pub(crate) fn import(file: &Path, extra: &[&str]) -> (i64, BTreeMap<String, f64>) {
    dbio()
        .args(["import", "fio"])
        .arg(file)
        .args(extra)
        .assert()
        .success();
    let store = dbio::store::Store::open(&store_path()).unwrap();
    let rows = store.list(&Default::default()).unwrap();
    let id = rows.last().unwrap().id;
    let run = store.get(id).unwrap();
    (id, run.metrics.into_iter().collect())
}

pub(crate) fn pname(key: &str) -> String {
    dbio::import::fio_runs::percentile_name(key.parse().unwrap())
}

/// Every number fio printed for `dir` of `job` is stored under dbio's name.
fn assert_same(m: &BTreeMap<String, f64>, job: &Value, dir: &str, lat: &str) {
    let d = &job[dir];
    let get = |k: &str| {
        *m.get(&format!("{dir}.{k}"))
            .unwrap_or_else(|| panic!("{dir}.{k}"))
    };
    if dir != "sync" {
        assert_eq!(get("iops"), d["iops"].as_f64().unwrap());
        assert_eq!(
            get("mib_per_s"),
            d["bw_bytes"].as_f64().unwrap() / 1_048_576.0
        );
        assert_eq!(get("bytes"), d["io_bytes"].as_f64().unwrap());
    }
    assert_eq!(get("requests"), d["total_ios"].as_f64().unwrap());
    let l = &d[lat];
    assert_eq!(get("latency.min_us"), l["min"].as_f64().unwrap() / 1e3);
    assert_eq!(get("latency.max_us"), l["max"].as_f64().unwrap() / 1e3);
    assert_eq!(get("latency.mean_us"), l["mean"].as_f64().unwrap() / 1e3);
    let pcts = l["percentile"].as_object().unwrap();
    assert_eq!(pcts.len(), 17);
    for (k, ns) in pcts {
        let got = get(&format!("latency.{}_us", pname(k)));
        assert_eq!(got, ns.as_f64().unwrap() / 1e3, "{dir} p{k}");
    }
}

/// The percentile `v` of `p` over merged bins: the bucket where the running
/// count first reaches p% of all samples.
fn assert_percentile_of_bins(bins: &BTreeMap<u64, u64>, p: f64, v: f64) {
    let n: u64 = bins.values().sum();
    let ns = (v * 1e3).round() as u64;
    assert!(bins.contains_key(&ns), "p{p} = {ns} ns is a bucket");
    let upto: u64 = bins.range(..=ns).map(|(_, c)| c).sum();
    let below = upto - bins[&ns];
    let need = p / 100.0 * n as f64;
    assert!(
        upto as f64 >= need * (1.0 - 1e-12) && (below as f64) < need * (1.0 + 1e-12),
        "p{p}"
    );
}

fn bins_of(job: &Value, dir: &str) -> BTreeMap<u64, u64> {
    job[dir]["clat_ns"]["bins"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.parse().unwrap(), v.as_u64().unwrap()))
        .collect()
}

fn one_job_json_plus_is_stored_as_fio_printed_it() {
    let _store = temp_store();
    let dir = tempfile::tempdir().unwrap();
    let (file, doc) = fio(
        dir.path(),
        "one.json",
        &[
            "--rw=randrw",
            "--ioengine=psync",
            "--fsync=4",
            "--output-format=json+",
        ],
    );
    let (id, m) = import(&file, &["--variable", "ext4"]);
    let job = &doc["jobs"][0];
    assert_same(&m, job, "read", "clat_ns");
    // In fsync mode fio's write latency is the write alone: stored apart
    // (write.alone.*), since dbio's write latency includes the sync.
    let alone: BTreeMap<String, f64> = m
        .iter()
        .filter(|(k, _)| !k.starts_with("write.latency."))
        .map(|(k, v)| (k.replace("write.alone.latency.", "write.latency."), *v))
        .collect();
    assert_same(&alone, job, "write", "clat_ns");
    assert_same(&m, job, "sync", "lat_ns");
    let total = m["read.iops"] + m["write.iops"];
    assert_eq!(m["total.iops"], total);
    // fio's own percentiles come back from its bins by fio's method.
    for dir in ["read", "write"] {
        let bins = bins_of(job, dir);
        for (k, ns) in job[dir]["clat_ns"]["percentile"].as_object().unwrap() {
            let p: f64 = k.parse().unwrap();
            assert_eq!(
                dbio::import::fio_hist::percentile(&bins, p),
                ns.as_u64(),
                "{dir} p{k}"
            );
        }
    }
    let store = dbio::store::Store::open(&store_path()).unwrap();
    let run = store.get(id).unwrap();
    assert_eq!(run.row.source, "fio");
    assert_eq!(run.row.pattern.as_deref(), Some("randrw"));
    assert_eq!(run.row.io_mode.as_deref(), Some("fsync"));
    assert_eq!(
        (run.row.sessions, run.row.block_size),
        (Some(1), Some(4096))
    );
    let ops: Vec<&str> = run.histograms.iter().map(|(op, _)| op.as_str()).collect();
    assert_eq!(ops, ["read", "sync", "write.alone"]);
    let h = dbio::store::decode_histogram(&run.histograms[0].1).unwrap();
    assert_eq!(h.len(), job["read"]["total_ios"].as_u64().unwrap());
    assert!(
        run.report_text.contains("percentiles as fio printed them"),
        "{}",
        run.report_text
    );
}

fn several_jobs_are_summed_and_their_bins_merged() {
    let _store = temp_store();
    let dir = tempfile::tempdir().unwrap();
    let (file, doc) = fio(
        dir.path(),
        "two.json",
        &["--rw=randread", "--numjobs=2", "--output-format=json+"],
    );
    let (_, m) = import(&file, &[]);
    let jobs = doc["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), 2);
    let sum = |k: &str| {
        jobs.iter()
            .map(|j| j["read"][k].as_f64().unwrap())
            .sum::<f64>()
    };
    assert_eq!(m["read.iops"], sum("iops"));
    assert_eq!(m["read.mib_per_s"], sum("bw_bytes") / 1_048_576.0);
    assert_eq!(m["read.requests"], sum("total_ios"));
    let mut bins = bins_of(&jobs[0], "read");
    for (k, v) in bins_of(&jobs[1], "read") {
        *bins.entry(k).or_default() += v;
    }
    for p in [1.0, 50.0, 90.0, 99.0, 99.9, 99.99] {
        let key = format!("read.latency.{}_us", pname(&format!("{p}")));
        assert_percentile_of_bins(&bins, p, m[&key]);
    }
    // group_reporting: fio's own sums and percentiles, two sessions.
    let (file, doc) = fio(
        dir.path(),
        "group.json",
        &[
            "--rw=randread",
            "--numjobs=2",
            "--group_reporting",
            "--output-format=json",
        ],
    );
    let (id, m) = import(&file, &[]);
    assert_same(&m, &doc["jobs"][0], "read", "clat_ns");
    let store = dbio::store::Store::open(&store_path()).unwrap();
    assert_eq!(store.get(id).unwrap().row.sessions, Some(2));
    // Two sections of 2 and 3 jobs: with group_reporting fio prints one
    // entry carrying only the last section's options (numjobs=3); without
    // it, five entries. Both are five sessions. (2 s: the count comes from
    // the members' summed run time over the group's, so a member held up
    // at the end by a busy machine must not look like a missing one.)
    for group in [true, false] {
        let job = dir.path().join("two.fio");
        let data = dir.path().join("data");
        std::fs::write(
            &job,
            format!(
                "[global]\nfilename={}\nsize=4M\nbs=4k\ntime_based\nruntime=2\n{}\n[a]\nrw=randread\nnumjobs=2\n[b]\nrw=randwrite\nnumjobs=3\n",
                data.display(),
                if group { "group_reporting" } else { "" }
            ),
        )
        .unwrap();
        let out = dir.path().join(format!("two-sections-{group}.json"));
        let status = Process::new("fio")
            .arg("--output-format=json+")
            .arg(format!("--output={}", out.display()))
            .arg(&job)
            .status()
            .unwrap();
        assert!(status.success());
        let doc: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
        let entries = doc["jobs"].as_array().unwrap().len();
        assert_eq!(entries, if group { 1 } else { 5 });
        let (id, _) = import(&out, &[]);
        let store = dbio::store::Store::open(&store_path()).unwrap();
        assert_eq!(
            store.get(id).unwrap().row.sessions,
            Some(5),
            "group_reporting {group}"
        );
    }
}

/// fio servers on localhost, killed (by pid) when dropped.
struct Servers(Vec<Child>);

impl Drop for Servers {
    fn drop(&mut self) {
        for c in &mut self.0 {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn client_server_output_of_two_hosts_is_one_run_with_per_host_numbers() {
    let _store = temp_store();
    let dir = tempfile::tempdir().unwrap();
    let ports = [free_port(), free_port()];
    let servers = Servers(
        ports
            .iter()
            .map(|p| {
                Process::new("fio")
                    .arg(format!("--server=ip:127.0.0.1,{p}"))
                    .stdout(std::process::Stdio::null())
                    .stderr(std::process::Stdio::null())
                    .spawn()
                    .unwrap()
            })
            .collect(),
    );
    let job = dir.path().join("job.fio");
    std::fs::write(
        &job,
        format!(
            "[j]\nfilename={}\nsize=4M\nbs=4k\nrw=randread\ntime_based\nruntime=1\n",
            dir.path().join("data").display()
        ),
    )
    .unwrap();
    let out = dir.path().join("cs.json");
    let mut ok = false;
    for _ in 0..50 {
        let mut cmd = Process::new("fio");
        for p in ports {
            cmd.arg(format!("--client=127.0.0.1,{p}")).arg(&job);
        }
        cmd.args(["--output-format=json+"])
            .arg(format!("--output={}", out.display()));
        // Both servers must have answered: fio then adds "All clients".
        if cmd.output().unwrap().status.success()
            && std::fs::read_to_string(&out).is_ok_and(|t| t.contains("All clients"))
        {
            ok = true;
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100)); // servers starting
    }
    drop(servers);
    assert!(ok, "fio client could not reach its servers");
    // fio's client may print a line (e.g. a server's hostname) before the JSON.
    let text = std::fs::read_to_string(&out).unwrap();
    let json_start = text.find("\n{").map_or(0, |i| i + 1);
    let json_start = if text.starts_with('{') { 0 } else { json_start };
    let doc: Value = serde_json::Deserializer::from_str(&text[json_start..])
        .into_iter::<Value>()
        .next()
        .expect("a JSON document")
        .unwrap_or_else(|e| panic!("{e}: {}", &text[..text.len().min(300)]));
    let (_, m) = import(&out, &["--variable", "cs"]);
    let stats = doc["client_stats"].as_array().unwrap();
    let all = stats
        .iter()
        .find(|s| s["jobname"] == "All clients")
        .unwrap();
    assert_eq!(m["read.iops"], all["read"]["iops"].as_f64().unwrap());
    assert_eq!(
        m["read.mib_per_s"],
        all["read"]["bw_bytes"].as_f64().unwrap() / 1_048_576.0
    );
    let mut bins = BTreeMap::new();
    for s in stats.iter().filter(|s| s["jobname"] != "All clients") {
        let host = format!("{}:{}", s["hostname"].as_str().unwrap(), s["port"]);
        assert_eq!(
            m[&format!("client.{host}.read.iops")],
            s["read"]["iops"].as_f64().unwrap()
        );
        for (k, v) in bins_of(s, "read") {
            *bins.entry(k).or_default() += v;
        }
    }
    assert_percentile_of_bins(&bins, 99.0, m["read.latency.p99_us"]);
}

fn one_report_table_compares_fio_and_dbio() {
    let _store = temp_store();
    let dir = tempfile::tempdir().unwrap();
    let (file, _) = fio(
        dir.path(),
        "r.json",
        &["--rw=randread", "--output-format=json"],
    );
    import(&file, &["--variable", "fio"]);
    dbio()
        .args([
            "run",
            "--pattern",
            "randread",
            "--bs",
            "4k",
            "--size",
            "4M",
            "--sessions",
            "1",
        ])
        .args(["--ops", "2000", "--quiet", "--target"])
        .arg(dir.path().join("dbio"))
        .assert()
        .success();
    let out = dbio()
        .args(["report", "--model", "reads", "--format", "csv"])
        .assert()
        .success();
    let csv = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    assert_eq!(csv.lines().next(), Some("variable,1,Overall"), "{csv}");
    assert!(csv.lines().any(|l| l.starts_with("-,")), "{csv}");
    assert!(csv.lines().any(|l| l.starts_with("fio,")), "{csv}");
}

crate::tests! {
    one_job_json_plus_is_stored_as_fio_printed_it [Tool("fio")],
    several_jobs_are_summed_and_their_bins_merged [Tool("fio")],
    client_server_output_of_two_hosts_is_one_run_with_per_host_numbers [Tool("fio")],
    one_report_table_compares_fio_and_dbio [Tool("fio")],
}
