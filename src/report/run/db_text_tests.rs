//! The pg and mysql reports rendered from fixed measurements: text and
//! JSON snapshots, so a change to the shared sections shows in every
//! server's report at once.

use std::collections::BTreeMap;

use crate::config::WorkloadConfig;
use crate::document::Report;
use crate::document::db::Setup;
use crate::options::slob::SlobArgs;
use crate::workload::db::DbPart;
use crate::workload::db::ServerConfig;
use crate::workload::slob::SlobConfig;

fn slob() -> SlobConfig {
    SlobArgs {
        update_pct: Some(20),
        ..SlobArgs::default()
    }
    .into_config(
        Some(4),
        8192,
        1,
        None,
        Some(std::path::Path::new("/mnt/xfs/dbio")),
    )
    .expect("valid")
}

/// Four sessions' operations and the sampler's waits and edges.
fn parts<S: Default + Clone>(edges: (S, S)) -> Vec<DbPart<S>> {
    let mut out = Vec::new();
    for s in 0..4u64 {
        let mut p = DbPart::<S>::default();
        for i in 0..800 {
            p.select.record(200_000 + i * 97 + s, 0);
        }
        for i in 0..200 {
            p.update.record(300_000 + i * 113, 0);
            p.commit.record(900_000 + i * 1_009, 0);
        }
        p.rows = 64_000;
        out.push(p);
    }
    let mut sampler = DbPart::<S> {
        samples: 100,
        ..DbPart::default()
    };
    let mut waits = BTreeMap::new();
    waits.insert("IO:DataFileRead".to_string(), 180);
    waits.insert("CPU".to_string(), 120);
    waits.insert("IO:WALSync".to_string(), 60);
    set_waits(&mut sampler, waits);
    sampler.edges = Some((edges.0, edges.1, 10.0));
    out.push(sampler);
    out
}

fn pg_report() -> Report {
    use crate::document::pg::PgSummary;
    use crate::workload::pg::PgConfig;
    use crate::workload::pg::stats::COLUMNS;
    let mut r = super::super::tests::sample();
    r.config.workload = WorkloadConfig::Pg(PgConfig {
        slob: slob(),
        wal_dir: None,
        autovacuum: false,
        server: ServerConfig {
            bin: None,
            set: vec![("wal_compression".into(), "on".into())],
            memory_bytes: Some(256 << 20),
            url: None,
            url_redacted: None,
            window: crate::workload::db::cycle::CycleWindow::Cycles(2),
        },
    });
    let a = pg_snapshot(vec![0.0; COLUMNS.len()]);
    let b = pg_snapshot((0..COLUMNS.len()).map(|i| (i * 1000 + 7) as f64).collect());
    let facts = pg_facts();
    let s = PgSummary::new(
        facts,
        &parts((a, b)),
        10.0,
        0.5,
        r.telemetry_window.as_ref(),
    );
    r.pg = Some(s);
    r
}

fn mysql_report() -> Report {
    use crate::document::mysql::MysqlSummary;
    use crate::workload::mysql::MysqlConfig;
    let mut r = super::super::tests::sample();
    r.config.workload = WorkloadConfig::Mysql(MysqlConfig {
        slob: slob(),
        page_size: 16384,
        files: 1,
        flush_method: "O_DIRECT",
        redo_dir: None,
        server: ServerConfig {
            bin: None,
            set: vec![("innodb_io_capacity".into(), "2000".into())],
            memory_bytes: None,
            url: None,
            url_redacted: Some("mysql://bench:***@db1:3306/".into()),
            window: Default::default(),
        },
    });
    let status = |k: f64| {
        let mut m = BTreeMap::new();
        for (i, n) in [
            "Com_commit",
            "Innodb_buffer_pool_read_requests",
            "Innodb_buffer_pool_reads",
            "Innodb_data_reads",
            "Innodb_data_read",
            "Innodb_os_log_written",
            "Innodb_pages_written",
            "Innodb_dblwr_pages_written",
            "Handler_update",
        ]
        .iter()
        .enumerate()
        {
            m.insert(n.to_string(), k * (i as f64 + 1.0) * 350.0);
        }
        m
    };
    let (a, b) = mysql_snapshots(status(1.0), status(3.0));
    let facts = mysql_facts();
    let s = MysqlSummary::new(
        facts,
        &parts((a, b)),
        10.0,
        0.5,
        r.telemetry_window.as_ref(),
    );
    r.mysql = Some(s);
    r
}

#[test]
fn pg_text_snapshot() {
    insta::assert_snapshot!(crate::report::text::render(&pg_report()));
}

#[test]
fn pg_json_snapshot() {
    let mut v = serde_json::to_value(pg_report()).unwrap();
    v["series"].as_array_mut().unwrap().truncate(1);
    insta::assert_json_snapshot!(v["pg"].clone());
    insta::assert_json_snapshot!(v["config"].clone());
}

#[test]
fn mysql_text_snapshot() {
    insta::assert_snapshot!(crate::report::text::render(&mysql_report()));
}

#[test]
fn mysql_json_snapshot() {
    let v = serde_json::to_value(mysql_report()).unwrap();
    insta::assert_json_snapshot!(v["mysql"].clone());
    insta::assert_json_snapshot!(v["config"].clone());
}

// What differs between versions of the types.

fn set_waits<S>(p: &mut DbPart<S>, w: BTreeMap<String, u64>) {
    p.waits.sessions = w;
}

fn pg_snapshot(v: Vec<f64>) -> crate::workload::pg::stats::Snapshot {
    crate::workload::pg::stats::Snapshot(v, Vec::new(), None)
}

fn pg_facts() -> crate::document::pg::ServerFacts {
    crate::document::pg::ServerFacts {
        version: "PostgreSQL 15.20 (Debian 15.20-0+deb12u1)".into(),
        bin_dir: "/usr/lib/postgresql/15/bin".into(),
        data_dir: "/mnt/xfs/dbio/dbio-pg/data".into(),
        wal_dir: "/mnt/xfs/dbio/dbio-pg/data/pg_wal".into(),
        cluster_reused: true,
        setup: Setup {
            settings: vec![
                ("shared_buffers".into(), "128MB".into()),
                ("wal_compression".into(), "on".into()),
                ("port".into(), "5432".into()),
            ],
            memory_limit_bytes: Some(256 << 20),
            cgroup: Some("/sys/fs/cgroup/memory/dbio-pg-1 (v1)".into()),
            load: load(),
            departures: crate::workload::pg::server::departures(
                &[("wal_compression".into(), "on".into())],
                true,
                false,
            ),
        },
        window: crate::workload::db::cycle::CycleWindow::Cycles(2),
    }
}

fn mysql_snapshots(
    a: BTreeMap<String, f64>,
    b: BTreeMap<String, f64>,
) -> (
    crate::workload::mysql::stats::Snapshot,
    crate::workload::mysql::stats::Snapshot,
) {
    use crate::workload::mysql::stats::Snapshot;
    (
        Snapshot {
            status: a,
            waits: [(
                "wait/io/file/innodb/innodb_data_file".to_string(),
                (100.0, 1e9),
            )]
            .into(),
            position: None,
        },
        Snapshot {
            status: b,
            waits: [(
                "wait/io/file/innodb/innodb_data_file".to_string(),
                (400.0, 5e9),
            )]
            .into(),
            position: None,
        },
    )
}

fn mysql_facts() -> crate::document::mysql::ServerFacts {
    crate::document::mysql::ServerFacts {
        version: "10.11.19-MariaDB-0+deb12u1".into(),
        data_dir: "/var/lib/mysql".into(),
        redo_dir: "/var/lib/mysql".into(),
        instance_reused: true,
        setup: Setup {
            settings: vec![
                ("innodb_flush_method".into(), "O_DIRECT".into()),
                ("innodb_io_capacity".into(), "2000".into()),
                ("max_connections".into(), "151".into()),
            ],
            memory_limit_bytes: None,
            cgroup: None,
            load: load(),
            departures: Vec::new(),
        },
        page_size: 16384,
        direct: true,
        window: Default::default(),
    }
}

fn load() -> crate::workload::db::data::LoadReport {
    crate::workload::db::data::LoadReport {
        reused: false,
        tables: 4,
        rows_per_table: 10_000,
        bytes: 330 << 20,
        seconds: 2.5,
        mib_per_s: 132.0,
    }
}

/// A PostgreSQL 16+ run: pg_stat_io by backend type, its reads beside
/// blks_read, and the background processes' sampled waits.
#[test]
fn pg_16_text_shows_io_by_backend_and_background_events() {
    use crate::document::pg::PgSummary;
    use crate::workload::pg::stats::{COLUMNS, IO_COLUMNS, Snapshot};
    let mut r = pg_report();
    let io = |k: f64| {
        vec![
            (
                "checkpointer".to_string(),
                vec![
                    0.0,
                    0.0,
                    k * 900.0,
                    k * 10.0,
                    k * 900.0,
                    0.0,
                    0.0,
                    0.0,
                    k * 40.0,
                    k,
                ],
            ),
            (
                "client backend".to_string(),
                vec![
                    k * 2000.0,
                    k * 5.0,
                    k * 10.0,
                    0.0,
                    0.0,
                    0.0,
                    k * 5e4,
                    k * 2000.0,
                    0.0,
                    0.0,
                ],
            ),
        ]
    };
    assert!(io(1.0).iter().all(|(_, v)| v.len() == IO_COLUMNS.len()));
    let a = Snapshot(vec![0.0; COLUMNS.len()], io(1.0), None);
    let b = Snapshot(vec![10.0; COLUMNS.len()], io(3.0), None);
    let mut parts = parts((a, b));
    let sampler = parts.last_mut().unwrap();
    sampler
        .waits
        .background
        .insert("checkpointer Timeout:CheckpointWriteDelay".into(), 40);
    sampler
        .waits
        .background
        .insert("walwriter IO:WALWrite".into(), 10);
    let s = PgSummary::new(pg_facts(), &parts, 10.0, 0.5, r.telemetry_window.as_ref());
    assert_eq!(s.physical_reads.pg_stat_io_reads, Some(4000.0));
    assert_eq!(s.ops.background_waits[0].pct, 80.0);
    assert_eq!(s.ops.background_waits[0].aas, 0.4);
    r.pg = Some(s);
    let text = crate::report::text::render(&r);
    for line in [
        "Background Events (the server's own processes)          samples   %samples   avg active",
        "  checkpointer Timeout:CheckpointWriteDelay                  40      80.0%        0.40",
        "I/O by backend type (pg_stat_io, data files)",
        "  pg_stat_io (all backends)            400 /s",
    ] {
        assert!(text.contains(line), "{line:?} missing:\n{text}");
    }
    let v = serde_json::to_value(&r).unwrap();
    assert_eq!(v["pg"]["server"]["io"][0]["backend_type"], "checkpointer");
    assert_eq!(v["pg"]["server"]["io"][0]["writes"], 1800.0);
    assert_eq!(
        v["pg"]["background_waits"][1]["event"],
        "walwriter IO:WALWrite"
    );
}

/// A pg and a mysql run's documents read back into the same types: the
/// servers' sections (flattened setup, counters, waits) survive the trip.
#[test]
fn server_documents_read_back_as_written() {
    for r in [pg_report(), mysql_report()] {
        let written = serde_json::to_value(&r).unwrap();
        let back = Report::from_stored(&written).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(serde_json::to_value(&back).unwrap(), written);
        assert_eq!(
            super::super::text::render(&back),
            super::super::text::render(&r)
        );
    }
}
