//! `dbio import fio` keeps fio's latencies in dbio's meaning, checked on
//! output the real fio produces here: fdatasync's sync latencies (which fio
//! prints with `sync.total_ios` 0) are stored as fio measured them; a write
//! in fsync/fdatasync mode is timed with its sync as dbio times it (the
//! write alone kept apart); asynchronous engines are measured submit to
//! completion (fio's `lat`, not `clat`); stonewalled groups get the times
//! they ran, one after the other.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command as Process;

use serde_json::Value;

use crate::common::run::dbio;
use crate::common::store::{store_path, temp_store};
use crate::import_fio::{fio, import, pname};

fn stored(id: i64) -> dbio::store::StoredRun {
    dbio::store::Store::open(&store_path())
        .unwrap()
        .get(id)
        .unwrap()
}

/// fio's summary and percentiles of `lat` under `prefix` (µs).
fn assert_lat(m: &BTreeMap<String, f64>, prefix: &str, l: &Value) {
    let get = |k: &str| {
        *m.get(&format!("{prefix}.{k}"))
            .unwrap_or_else(|| panic!("{prefix}.{k} in {:?}", m.keys()))
    };
    assert_eq!(get("latency.min_us"), l["min"].as_f64().unwrap() / 1e3);
    assert_eq!(get("latency.max_us"), l["max"].as_f64().unwrap() / 1e3);
    assert_eq!(get("latency.mean_us"), l["mean"].as_f64().unwrap() / 1e3);
    let pcts = l["percentile"].as_object().unwrap();
    assert_eq!(pcts.len(), 17);
    for (k, ns) in pcts {
        let got = get(&format!("latency.{}_us", pname(k)));
        assert_eq!(got, ns.as_f64().unwrap() / 1e3, "{prefix} p{k}");
    }
}

fn fdatasync_sync_latency_is_stored_and_writes_include_it() {
    let _store = temp_store();
    let dir = tempfile::tempdir().unwrap();
    for (engine, format) in [
        ("psync", "json"),
        ("psync", "json+"),
        ("io_uring", "json"),
        ("io_uring", "json+"),
    ] {
        let out = format!("{engine}-{format}.json");
        let engine_arg = format!("--ioengine={engine}");
        let format_arg = format!("--output-format={format}");
        let (file, doc) = fio(
            dir.path(),
            &out,
            &[
                "--rw=randwrite",
                "--fdatasync=1",
                "--iodepth=4",
                &engine_arg,
                &format_arg,
            ],
        );
        let job = &doc["jobs"][0];
        let sync = &job["sync"];
        assert_eq!(sync["total_ios"], 0, "fio counts fdatasync apart");
        let n = sync["lat_ns"]["N"].as_f64().unwrap();
        assert!(n > 0.0);
        let (id, m) = import(&file, &[]);
        let what = format!("{engine} {format}");
        assert_eq!(m["sync.requests"], n, "{what}");
        assert_lat(&m, "sync", &sync["lat_ns"]);
        // fio's write alone, under its own name, in fio's basis for the engine.
        let w = &job["write"];
        let basis = if engine == "psync" {
            "clat_ns"
        } else {
            "lat_ns"
        };
        let alone = &w[basis];
        assert_eq!(
            m["write.alone.latency.min_us"],
            alone["min"].as_f64().unwrap() / 1e3,
            "{what}"
        );
        // dbio's write latency includes the sync: exact mean, no percentile
        // of write + sync (fio's summaries cannot give one).
        let wn = alone["N"].as_f64().unwrap();
        let with_sync = (alone["mean"].as_f64().unwrap() * wn
            + sync["lat_ns"]["mean"].as_f64().unwrap() * n)
            / wn
            / 1e3;
        assert!(
            (m["write.latency.mean_us"] - with_sync).abs() <= with_sync * 1e-12,
            "{what}: {} vs {with_sync}",
            m["write.latency.mean_us"]
        );
        assert!(m["write.latency.mean_us"] > m["write.alone.latency.mean_us"]);
        for k in [
            "write.latency.p99_us",
            "write.latency.min_us",
            "total.latency.p99_us",
        ] {
            assert!(!m.contains_key(k), "{what}: {k} would be the write alone");
        }
        let run = stored(id);
        let ops: Vec<&str> = run.histograms.iter().map(|(o, _)| o.as_str()).collect();
        if format == "json+" {
            assert!(ops.contains(&"sync"), "{what}: {ops:?}");
            let (_, bytes) = run.histograms.iter().find(|(o, _)| o == "sync").unwrap();
            let h = dbio::store::decode_histogram(bytes).unwrap();
            assert_eq!(h.len() as f64, n, "{what}");
        }
        assert!(!ops.contains(&"write"), "{what}: {ops:?}");
        assert_eq!(run.report["write_latency"]["includes_sync"], true);
        let shown = dbio()
            .args(["runs", "show", &id.to_string()])
            .assert()
            .success();
        let text = String::from_utf8_lossy(&shown.get_output().stdout).to_string();
        let row = text
            .lines()
            .find(|l| l.starts_with("sync "))
            .unwrap_or_else(|| panic!("{what}: no sync row in\n{text}"));
        assert!(row.contains(&format!(" {n} ")), "{row}");
        assert!(text.contains("write*"), "{text}");
        assert!(
            text.contains("with its sync, as dbio times a write"),
            "{text}"
        );
    }
}

fn async_engines_are_measured_submit_to_completion() {
    let _store = temp_store();
    let dir = tempfile::tempdir().unwrap();
    let base = [
        "--rw=randread",
        "--ioengine=io_uring",
        "--iodepth=8",
        "--direct=0",
        "--output-format=json+",
    ];
    let (file, doc) = fio(dir.path(), "clat.json", &base);
    let r = &doc["jobs"][0]["read"];
    let out = dbio().args(["import", "fio"]).arg(&file).assert().success();
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(stderr.contains("--lat_percentiles=1"), "{stderr}");
    let store = dbio::store::Store::open(&store_path()).unwrap();
    let id = store.list(&Default::default()).unwrap().last().unwrap().id;
    let m: BTreeMap<String, f64> = store.get(id).unwrap().metrics.into_iter().collect();
    let lat = &r["lat_ns"];
    assert_eq!(m["read.latency.min_us"], lat["min"].as_f64().unwrap() / 1e3);
    assert_eq!(
        m["read.latency.mean_us"],
        lat["mean"].as_f64().unwrap() / 1e3
    );
    assert!(m["read.latency.min_us"] > r["clat_ns"]["min"].as_f64().unwrap() / 1e3);
    assert!(!m.contains_key("read.latency.p99_us"), "clat is not lat");
    assert_eq!(
        m["read.clat.latency.p99_us"],
        r["clat_ns"]["percentile"]["99.000000"].as_f64().unwrap() / 1e3
    );
    // With lat percentiles, they are the ones stored.
    let mut args = base.to_vec();
    args.push("--lat_percentiles=1");
    let (file, doc) = fio(dir.path(), "lat.json", &args);
    let (id, m) = import(&file, &[]);
    assert_lat(&m, "read", &doc["jobs"][0]["read"]["lat_ns"]);
    let h = stored(id);
    let (_, bytes) = h.histograms.iter().find(|(o, _)| o == "read").unwrap();
    assert_eq!(
        dbio::store::decode_histogram(bytes).unwrap().len(),
        doc["jobs"][0]["read"]["lat_ns"]["N"].as_u64().unwrap()
    );
}

fn stonewalled_groups_get_successive_times() {
    let _store = temp_store();
    let dir = tempfile::tempdir().unwrap();
    let job = dir.path().join("sw.fio");
    std::fs::write(
        &job,
        format!(
            "[global]\nfilename={}\nsize=4M\nbs=4k\ntime_based\nruntime=1\n[a]\nrw=randread\n[b]\nstonewall\nrw=randwrite\n[c]\nstonewall\nrw=randread\n",
            dir.path().join("data").display()
        ),
    )
    .unwrap();
    let out = dir.path().join("sw.json");
    let status = Process::new("fio")
        .arg("--output-format=json")
        .arg(format!("--output={}", out.display()))
        .arg(&job)
        .status()
        .unwrap();
    assert!(status.success());
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    import_file(&out);
    let store = dbio::store::Store::open(&store_path()).unwrap();
    let rows = store.list(&Default::default()).unwrap();
    assert_eq!(rows.len(), 3);
    let end = doc["timestamp_ms"].as_i64().unwrap();
    assert_eq!(rows[2].ended_unix_ms, Some(end));
    for (i, r) in rows.iter().enumerate() {
        let job = &doc["jobs"][i];
        let ms = ["read", "write"]
            .iter()
            .map(|d| job[d]["runtime"].as_i64().unwrap())
            .max()
            .unwrap();
        assert_eq!(
            r.ended_unix_ms.unwrap() - r.started_unix_ms,
            ms,
            "group {i}"
        );
        if i > 0 {
            assert!(
                rows[i - 1].ended_unix_ms.unwrap() <= r.started_unix_ms,
                "group {} ends after group {i} starts",
                i - 1
            );
        }
    }
}

fn import_file(file: &Path) {
    dbio().args(["import", "fio"]).arg(file).assert().success();
}

crate::tests! {
    fdatasync_sync_latency_is_stored_and_writes_include_it [Tool("fio")],
    async_engines_are_measured_submit_to_completion [Tool("fio")],
    stonewalled_groups_get_successive_times [Tool("fio")],
}
