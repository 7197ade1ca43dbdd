//! Telemetry as a user sees it in `dbio run`: the storage chain in the
//! report, device statistics that agree with dbio's own counts and with
//! iostat -x run beside it, and the page cache's share shown for buffered
//! runs. Needs root for loop devices (skips otherwise).

use std::process::{Command, Stdio};

use crate::common::loopdev::LoopDev;
use crate::common::store::{store_path, temp_store};
use serde_json::Value;

const MIB: u64 = 1 << 20;

fn run_json(args: &[&str]) -> Value {
    let out = Command::new(assert_cmd::cargo::cargo_bin("dbio"))
        .env("DBIO_DB", store_path())
        .args(["run", "--json"])
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "dbio {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn device<'a>(r: &'a Value, name: &str) -> &'a Value {
    r["telemetry_window"]["devices"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["name"] == name)
        .unwrap_or_else(|| panic!("{name} not in {}", r["telemetry_window"]))
}

fn close(a: f64, b: f64, rel: f64) -> bool {
    (a - b).abs() <= rel * a.abs().max(b.abs())
}

fn direct_reads_reach_the_loop_device_one_for_one() {
    let _store = temp_store();
    let mut dev = LoopDev::new(512 * MIB, true);
    dev.mkfs("ext4");
    let mnt = dev.mount();
    let t = mnt.join("dbio");
    let r = run_json(&[
        "--target",
        t.to_str().unwrap(),
        "--size",
        "128M",
        "--pattern",
        "randread",
        "--sessions",
        "4",
        "--time",
        "3",
        "--ramp",
        "1",
    ]);
    let name = dev.name();
    let storage = &r["storage"]["links"];
    assert_eq!(storage[0]["type"], "filesystem");
    assert_eq!(storage[0]["fs_type"], "ext4");
    assert_eq!(storage[1]["name"], name.as_str());
    assert_eq!(storage[1]["loop_direct_io"], true);
    let asked = r["read"]["iops"].as_f64().unwrap();
    let served = device(&r, &name)["rates"]["r_per_s"].as_f64().unwrap();
    assert!(
        close(asked, served, 0.10),
        "dbio read {asked}/s, {name} served {served} r/s"
    );
    let size_kb = device(&r, &name)["rates"]["rareq_sz_kib"].as_f64().unwrap();
    assert!(
        close(size_kb, 8.0, 0.05),
        "8 KiB requests, saw {size_kb} KiB"
    );
    assert_eq!(
        r["telemetry"].as_array().unwrap().len() as f64,
        4.0,
        "one point per second of ramp + time"
    );
    dev.umount();
}

fn buffered_reads_show_what_the_page_cache_absorbed() {
    let _store = temp_store();
    let mut dev = LoopDev::new(256 * MIB, true);
    dev.mkfs("xfs");
    let mnt = dev.mount();
    let t = mnt.join("dbio");
    // 16 MiB of data stays in the page cache after the first pass.
    let r = run_json(&[
        "--target",
        t.to_str().unwrap(),
        "--size",
        "16M",
        "--pattern",
        "randread",
        "--io",
        "buffered",
        "--time",
        "2",
        "--ramp",
        "1",
    ]);
    let asked = r["read"]["iops"].as_f64().unwrap();
    let served = device(&r, &dev.name())["rates"]["r_per_s"]
        .as_f64()
        .unwrap();
    assert!(
        asked > 1000.0 && served < asked * 0.1,
        "asked {asked}/s, device {served} r/s"
    );
    dev.umount();
}

/// iostat -x beside a dbio run on a direct-io loop device that nothing else
/// uses: one 10 s iostat interval contains the whole run, so both count the
/// same I/Os — totals, awaits and busy time agree within 5%.
fn device_statistics_agree_with_iostat() {
    let _store = temp_store();
    let dev = LoopDev::new(256 * MIB, true);
    let d = dev.path.to_str().unwrap().to_string();
    let name = dev.name();
    const IOSTAT_S: f64 = 10.0;
    let iostat = Command::new("iostat")
        .args(["-x", "-d", "-y", "-o", "JSON", &name, "10", "1"])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(700));
    let r = run_json(&[
        "--target",
        &d,
        "--pattern",
        "randrw",
        "--read-pct",
        "60",
        "--sessions",
        "4",
        "--time",
        "6",
    ]);
    let out = iostat.wait_with_output().unwrap();
    let j: Value = serde_json::from_slice(&out.stdout).expect("iostat JSON");
    let theirs = &j["sysstat"]["hosts"][0]["statistics"][0]["disk"][0];
    assert_eq!(theirs["disk_device"], name.as_str());
    let ours = &device(&r, &name)["rates"];
    let secs = r["telemetry_window"]["seconds"].as_f64().unwrap();
    let total = |v: &Value, key: &str, s: f64| v[key].as_f64().unwrap() * s;
    for (t, o) in [
        ("r/s", "r_per_s"),
        ("w/s", "w_per_s"),
        ("rkB/s", "rkib_per_s"),
        ("wkB/s", "wkib_per_s"),
        ("util", "util_pct"),
        ("aqu-sz", "aqu_sz"),
    ] {
        let (a, b) = (total(theirs, t, IOSTAT_S), total(ours, o, secs));
        assert!(
            close(a, b, 0.05),
            "{t} x seconds: iostat {a:.1} vs dbio {b:.1}"
        );
    }
    for (t, o) in [("r_await", "r_await_ms"), ("w_await", "w_await_ms")] {
        let (a, b) = (theirs[t].as_f64().unwrap(), ours[o].as_f64().unwrap());
        assert!(
            close(a, b, 0.05) || (a - b).abs() <= 0.02,
            "{t}: iostat {a:.3} vs dbio {b:.3}"
        );
    }
    // And the device saw what dbio asked for.
    let asked = r["total"]["requests"].as_f64().unwrap();
    assert!(close(
        asked,
        total(ours, "r_per_s", secs) + total(ours, "w_per_s", secs),
        0.05
    ));
}

crate::tests! {
    direct_reads_reach_the_loop_device_one_for_one [Root],
    buffered_reads_show_what_the_page_cache_absorbed [Root],
    device_statistics_agree_with_iostat [Root, Tool("iostat")],
}
