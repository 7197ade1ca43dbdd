//! `dbio runs show N --format fio-json`: a dbio raw run in fio 3's JSON.
//! dbio's own fio importer reads it back to the run's numbers (requests,
//! IOPS, bytes, latency summaries and percentiles, sessions, settings), and
//! fio's own `fio_jsonplus_clat2csv` reads and validates its bins. Runs
//! that are not dbio raw runs are refused in one line.

use std::collections::BTreeMap;
use std::process::Command as Process;

use serde_json::Value;

use crate::common::run::{Run, dbio};
use crate::common::store::{store_path, temp_store};

fn metrics(id: i64) -> BTreeMap<String, f64> {
    let store = dbio::store::Store::open(&store_path()).unwrap();
    store.metrics(id).unwrap().into_iter().collect()
}

fn last_id() -> i64 {
    let store = dbio::store::Store::open(&store_path()).unwrap();
    store.list(&Default::default()).unwrap().last().unwrap().id
}

fn a_raw_run_round_trips_through_fio_json() {
    let _store = temp_store();
    let dir = tempfile::tempdir().unwrap();
    for (i, args) in [
        &["--engine", "psync", "--io", "fdatasync"][..],
        &["--engine", "io_uring", "--iodepth", "4"][..],
    ]
    .iter()
    .enumerate()
    {
        let out = Run::raw(&dir.path().join(format!("data{i}")))
            .args(&["--pattern", "randrw", "--bs", "4k", "--size", "4M"])
            .args(&["--sessions", "2", "--ops", "3000", "--quiet"])
            .args(args)
            .output();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let id = last_id();
        let shown = dbio()
            .args(["runs", "show", &id.to_string(), "--format", "fio-json"])
            .assert()
            .success();
        let text = String::from_utf8(shown.get_output().stdout.clone()).unwrap();
        let doc: Value = serde_json::from_str(&text).unwrap();
        let orig = metrics(id);
        // What fio-reading tools index.
        assert!(doc["fio version"].as_str().unwrap().starts_with("dbio-"));
        let job = &doc["jobs"][0];
        assert_eq!(job["read"]["iops"].as_f64().unwrap(), orig["read.iops"]);
        assert_eq!(
            job["write"]["total_ios"].as_f64().unwrap(),
            orig["write.requests"]
        );
        assert_eq!(
            job["read"]["lat_ns"]["percentile"]["99.000000"]
                .as_f64()
                .unwrap()
                / 1e3,
            orig["read.latency.p99_us"]
        );
        let file = dir.path().join(format!("run{i}.json"));
        std::fs::write(&file, &text).unwrap();

        // fio's own json+ tool reads the bins and checks its CSV against them.
        let csv = dir.path().join(format!("run{i}.csv"));
        for extra in [&[][..], &["--validate"][..]] {
            let o = Process::new("fio_jsonplus_clat2csv")
                .arg(&file)
                .arg(&csv)
                .args(extra)
                .output()
                .unwrap();
            assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        }
        let rows = std::fs::read_to_string(dir.path().join(format!("run{i}_job0.csv"))).unwrap();
        let header: Vec<&str> = rows.lines().next().unwrap().split(", ").collect();
        let col = header
            .iter()
            .position(|h| *h == "read_lat_ns_cumulative")
            .unwrap();
        let last = rows
            .lines()
            .skip(1)
            .filter_map(|l| l.split(", ").nth(col)?.trim().parse::<f64>().ok())
            .last()
            .unwrap();
        assert_eq!(last, orig["read.requests"]);

        // dbio's importer reads it back to the same numbers.
        dbio().args(["import", "fio"]).arg(&file).assert().success();
        let back_id = last_id();
        let back = metrics(back_id);
        let mut compared = 0;
        for dir in ["read", "write", "sync"] {
            for k in [
                "requests",
                "iops",
                "bytes",
                "mib_per_s",
                "latency.min_us",
                "latency.mean_us",
                "latency.max_us",
                "latency.p50_us",
                "latency.p90_us",
                "latency.p99_us",
                "latency.p99_9_us",
                "latency.p99_99_us",
            ] {
                let name = format!("{dir}.{k}");
                if dir == "sync" && matches!(k, "bytes" | "mib_per_s" | "iops") {
                    continue;
                }
                match orig.get(&name) {
                    Some(v) => {
                        assert_eq!(back.get(&name), Some(v), "{args:?}: {name}");
                        compared += 1;
                    }
                    None => assert!(!back.contains_key(&name), "{args:?}: {name}"),
                }
            }
        }
        assert!(compared >= 24, "{args:?}: only {compared} numbers");
        for k in ["total.requests", "total.bytes"] {
            assert_eq!(back[k], orig[k], "{args:?}: {k}");
        }
        // fio has no total section: the import adds read.iops and
        // write.iops, dbio divides all requests by the window, which can
        // differ in the last bit.
        let (a, b) = (back["total.iops"], orig["total.iops"]);
        assert!((a - b).abs() <= b * 1e-12, "total.iops {a} vs {b}");
        let (a, b) = (back["total.latency.mean_us"], orig["total.latency.mean_us"]);
        assert!((a - b).abs() <= b * 1e-12, "{a} vs {b}");
        assert!(!back.keys().any(|k| k.contains(".alone.")), "{back:?}");
        let store = dbio::store::Store::open(&store_path()).unwrap();
        let (o, r) = (store.get(id).unwrap().row, store.get(back_id).unwrap().row);
        assert_eq!(
            (r.sessions, r.block_size, r.pattern, r.io_mode, r.engine),
            (o.sessions, o.block_size, o.pattern, o.io_mode, o.engine)
        );

        // An imported run is not a dbio run.
        let refused = dbio()
            .args(["runs", "show", &back_id.to_string(), "--format", "fio-json"])
            .assert()
            .code(2);
        let err = String::from_utf8_lossy(&refused.get_output().stderr).to_string();
        assert!(err.contains("was imported from fio"), "{err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    }
}

crate::tests! {
    a_raw_run_round_trips_through_fio_json [Tool("fio_jsonplus_clat2csv")],
}
