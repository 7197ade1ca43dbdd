//! Where a `--workload pg` window sits in the checkpoint cycle, against
//! real PostgreSQL: a window opened after dbio's CHECKPOINT starts at the
//! cycle's start and a later one reports the updates run since; whole
//! cycles (`--window cycles:N`) hold a completed checkpoint; the report
//! lists what dbio changed from the stock server (autovacuum when
//! `--pg-autovacuum off`, not when on); bad values are refused in one line.

use serde_json::Value;

use crate::common::run::refused_in_one_line;
use crate::common::server::{dbio, json};
use crate::common::store::temp_store;
use crate::pg::{ONE_AT_A_TIME, OtherServer, PgDir, assert_nothing_left, f};

/// The checkpoint cycle section of a run's pg summary.
fn cycle(r: &Value) -> &Value {
    let c = &r["pg"]["checkpoint_cycle"];
    assert!(c.is_object(), "no checkpoint_cycle in {}", r["pg"]);
    c
}

/// The names dbio lists as changed from the stock server.
fn departures(r: &Value) -> Vec<String> {
    r["pg"]["departures"]
        .as_array()
        .unwrap_or_else(|| panic!("no departures in {}", r["pg"]))
        .iter()
        .map(|d| d["name"].as_str().unwrap().to_string())
        .collect()
}

/// The reloptions of dbio's first table on the test's own server.
fn reloptions(srv: &OtherServer) -> String {
    let mut c = srv.client("bench");
    let r = c
        .query_one(
            "SELECT coalesce(array_to_string(reloptions, ','), '') FROM pg_class \
             WHERE relname = 'dbio_t0' AND relnamespace = 'dbio'::regnamespace",
            &[],
        )
        .unwrap();
    r.get(0)
}

/// On one server that stays up between runs (--pg-url): the run after
/// dbio's CHECKPOINT opens at the cycle's start (no transactions, almost
/// no WAL since it), with a full-page image for most updated pages; the
/// next run, without one, opens after the first run's updates and logs
/// far fewer images per update.
fn a_window_after_a_checkpoint_starts_the_cycle_and_the_next_reports_the_updates_since() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let _store = temp_store();
    let srv = OtherServer::start();
    let run = |extra: &[&str]| {
        let out = dbio()
            .args(["run", "--workload", "pg", "--json", "--pg-url"])
            .arg(srv.url("bench"))
            .args(["--sessions", "2", "--scale", "200", "--work-unit", "4"])
            .args(["--update-pct", "100", "--work-loop", "100"])
            .args(extra)
            .output()
            .unwrap();
        json(&out)
    };
    let first = run(&["--window", "after-checkpoint", "--pg-autovacuum", "off"]);
    let c1 = cycle(&first);
    assert_eq!(c1["window"], "after-checkpoint");
    assert_eq!(first["config"]["pg"]["window"], "after_checkpoint");
    assert!(f(c1, "open_transactions_since") <= 1.0, "{c1}");
    assert!(f(c1, "open_log_bytes_since") < 16384.0, "{c1}");
    assert!(f(c1, "open_seconds_since") < 30.0, "{c1}");
    let updates = f(&first["pg"], "updates");
    assert_eq!(updates, 200.0);
    assert!(reloptions(&srv).contains("autovacuum_enabled=off"));
    assert!(departures(&first).contains(&"autovacuum_enabled".to_string()));

    let second = run(&[]);
    let c2 = cycle(&second);
    assert_eq!(c2["window"], "any");
    let since = f(c2, "open_transactions_since");
    // The first run's 200 update transactions, and the few of dbio's own
    // statements between the runs (autovacuum's setting).
    assert!((updates..=updates + 20.0).contains(&since), "{c2}");
    assert!(
        f(c2, "open_log_bytes_since") >= 0.9 * f(&first["pg"], "server.wal_bytes"),
        "{c2} after {}",
        first["pg"]["server"]
    );
    assert_eq!(f(c2, "checkpoints_completed"), 0.0, "{c2}");
    let (share1, share2) = (f(c1, "first_change_share"), f(c2, "first_change_share"));
    assert!(
        share1 > 0.3 && share1 > 3.0 * share2,
        "{share1} vs {share2}"
    );
    // Autovacuum back to the stock server's default, and off the list.
    assert!(reloptions(&srv).contains("autovacuum_enabled=on"));
    assert!(departures(&second).is_empty(), "{:?}", departures(&second));
}

/// `--window cycles:1`: the window opens right after dbio's checkpoint and
/// closes when the next completes (WAL fills max_wal_size), well before
/// `--time`; the terminal report says where the window sat.
fn whole_cycles_hold_a_completed_checkpoint_and_start_after_one() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let _store = temp_store();
    let d = PgDir::on_tmpfs();
    let args = [
        "--sessions",
        "4",
        "--scale",
        "4000",
        "--cache",
        "64M",
        "--update-pct",
        "100",
        "--time",
        "120",
        "--window",
        "cycles:1",
        "--pg-set",
        "min_wal_size=32MB",
        "--pg-set",
        "max_wal_size=32MB",
    ];
    let r = json(&d.run(&args));
    let c = cycle(&r);
    assert_eq!(c["window"], "cycles:1");
    assert!(f(c, "checkpoints_completed") >= 1.0, "{c}");
    assert!(f(c, "checkpoints_begun") >= 1.0, "{c}");
    assert!(f(c, "open_transactions_since") <= 1.0, "{c}");
    assert!(f(c, "open_log_bytes_since") < 16384.0, "{c}");
    assert_eq!(r["status"], "completed", "{}", r["error"]);
    assert!(
        f(&r, "measured_s") < 110.0,
        "ended by --time, not the cycle"
    );
    assert_nothing_left(&d);
}

/// `--window after-checkpoint` after a ramp of updates: the window's
/// counters are read just before dbio's `CHECKPOINT`, so its writes are
/// inside the window (as the sessions' operations and the device's counts
/// already were, and as the model's checkpoint at its open is), the window
/// opens at its redo point (0 WAL, transactions and seconds since), and it
/// is not counted as begun inside the window. Before, the counters were
/// read once it had completed: none of its writes, and the WAL written
/// while it ran before the open.
fn the_window_opens_at_dbios_checkpoint_with_its_writes_inside() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let _store = temp_store();
    let d = PgDir::on_tmpfs();
    let args = [
        "--sessions",
        "4",
        "--scale",
        "4000",
        "--cache",
        "16M",
        "--update-pct",
        "100",
        "--ramp",
        "3",
        "--time",
        "2",
        "--window",
        "after-checkpoint",
    ];
    let r = json(&d.run(&args));
    assert_eq!(r["status"], "completed", "{}", r["error"]);
    let c = cycle(&r);
    for k in [
        "open_log_bytes_since",
        "open_transactions_since",
        "open_seconds_since",
    ] {
        assert_eq!(f(c, k), 0.0, "{k}: {c}");
    }
    assert_eq!(f(c, "checkpoints_begun"), 0.0, "{c}");
    assert_eq!(f(c, "checkpoints_completed"), 0.0, "{c}");
    // No other checkpoint in 2 s (max_wal_size is dbio's 4GB): every
    // checkpoint write is dbio's, of the 2048 buffers dirtied by the ramp.
    let ckpt = f(&r["pg"], "server.buffers_checkpoint");
    assert!(
        ckpt >= 200.0,
        "{ckpt} buffers written by the checkpoint, {}",
        r["pg"]["server"]
    );
    assert_nothing_left(&d);
}

/// `--pg-autovacuum`: the stock default (on) is not a departure and the
/// report says so; off is listed beside dbio's other changes.
fn departures_list_autovacuum_when_off_and_not_when_on() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let _store = temp_store();
    let d = PgDir::on_tmpfs();
    let base = ["--sessions", "1", "--scale", "200", "--work-loop", "5"];
    let off = json(&d.run(&[&base[..], &["--pg-autovacuum", "off"]].concat()));
    let names = departures(&off);
    for want in [
        "autovacuum_enabled",
        "track_io_timing",
        "listen_addresses",
        "data_checksums",
    ] {
        assert!(names.iter().any(|n| n == want), "{want} not in {names:?}");
    }
    assert!(!names.iter().any(|n| n == "fsync"), "{names:?}");
    assert_eq!(off["config"]["pg"]["autovacuum"], false);
    let on = json(&d.run(&base));
    let names = departures(&on);
    assert!(
        !names.iter().any(|n| n == "autovacuum_enabled"),
        "{names:?}"
    );
    assert!(names.iter().any(|n| n == "track_io_timing"), "{names:?}");
    assert_eq!(on["config"]["pg"]["autovacuum"], true);
    // The terminal report says which.
    let out = dbio()
        .args(["run", "--workload", "pg", "--target"])
        .arg(&d.target)
        .args(["--pg-autovacuum", "off"])
        .args(base)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("autovacuum off on dbio's tables"), "{text}");
    let departs = text
        .lines()
        .find(|l| l.starts_with("departs "))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(
        departs.contains("autovacuum_enabled=off (default on)"),
        "{departs}"
    );
    assert!(
        text.lines().any(|l| l.starts_with("cycle    window any")),
        "{text}"
    );
    assert_nothing_left(&d);
}

/// Bad values are one line and exit 2, before anything starts.
fn bad_cycle_options_are_refused_in_one_line() {
    let _store = temp_store();
    for (args, says) in [
        (
            &["--workload", "pg", "--pg-autovacuum", "maybe"][..],
            "--pg-autovacuum",
        ),
        (
            &["--workload", "pg", "--window", "cycles:0"][..],
            "cycles:N",
        ),
        (&["--workload", "raw", "--window", "any"][..], "--window"),
        (
            &["--workload", "slob", "--pg-autovacuum", "on"][..],
            "--pg-autovacuum",
        ),
        (
            &[
                "--workload",
                "pg",
                "--window",
                "cycles:2",
                "--work-loop",
                "5",
            ][..],
            "--time",
        ),
    ] {
        let out = dbio()
            .args(["run", "--target", "/nonexistent/dbio-cycle"])
            .args(args)
            .output()
            .unwrap();
        refused_in_one_line(&out, &format!("{args:?}"), says);
    }
}

crate::tests! {
    a_window_after_a_checkpoint_starts_the_cycle_and_the_next_reports_the_updates_since [Root, Postgres],
    whole_cycles_hold_a_completed_checkpoint_and_start_after_one [Root, Postgres],
    the_window_opens_at_dbios_checkpoint_with_its_writes_inside [Root, Postgres],
    departures_list_autovacuum_when_off_and_not_when_on [Root, Postgres],
    bad_cycle_options_are_refused_in_one_line,
}
