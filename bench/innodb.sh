#!/usr/bin/env bash
# innodb.sh — seed 001's question with a real InnoDB: on XFS over a
# direct-io loop device, one data file per table, 16k pages, the IObench
# pattern (--workload raw: 16k random read/write, half each, one file) beside
# MariaDB (--workload mysql, UPDATE_PCT 50) and the model (--workload slob,
# UPDATE_PCT 50), for flush methods O_DIRECT and fsync and SESSIONS sessions.
# Prints a Markdown table: the device's reads and writes per second, the
# commit latency (raw: a write's), and the top waits.
#
# Usage: sudo bench/innodb.sh [TIME_S] [SESSIONS...]   (default 15 1 4)
set -euo pipefail
TIME=${1:-15}; shift || true
SESSIONS=("${@:-1 4}"); read -r -a SESSIONS <<< "${SESSIONS[*]}"
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BIN=$REPO/target/release/dbio; [ -x "$BIN" ] || BIN=$REPO/target/debug/dbio
WORK=$(mktemp -d /var/tmp/dbio-innodb.XXXXXX)
chmod 755 "$WORK"   # the mysql user must reach the target under it
IMG=$WORK/xfs.img; MNT=$WORK/mnt; DEV=
cleanup() {
    "$WORK/dbio" clean --target "$MNT/t" >/dev/null 2>&1 || true
    mountpoint -q "$MNT" && umount "$MNT"
    [ -n "$DEV" ] && losetup -d "$DEV"
    rm -rf "$WORK"
}
trap cleanup EXIT INT TERM
cp "$BIN" "$WORK/dbio"
export DBIO_DB=$WORK/store.sqlite
truncate -s 4G "$IMG"
DEV=$(losetup -f --show --direct-io=on "$IMG")
mkfs.xfs -q "$DEV"; mkdir -p "$MNT"; mount "$DEV" "$MNT"; chmod 755 "$MNT"
run() { "$WORK/dbio" run --json --quiet --target "$MNT/t" --time "$TIME" "$@"; }
for io in direct fsync; do
  for s in "${SESSIONS[@]}"; do
    # About 48 MiB of table per session against a 16M buffer cache.
    run --workload raw --pattern randrw --read-pct 50 --bs 16k --files 1 \
        --size "$((48 * s))M" --sessions "$s" --io "$io" > "$WORK/raw-$io-$s.json"
    "$WORK/dbio" clean --target "$MNT/t" >/dev/null 2>&1
    run --workload mysql --scale 6000 --sessions "$s" --cache 16M --update-pct 50 \
        --io "$io" > "$WORK/mysql-$io-$s.json"
    "$WORK/dbio" clean --target "$MNT/t" >/dev/null 2>&1
    run --workload slob --scale 3000 --bs 16k --sessions "$s" --cache 16M --update-pct 50 \
        --io "$io" > "$WORK/slob-$io-$s.json"
    "$WORK/dbio" clean --target "$MNT/t" >/dev/null 2>&1
  done
done
python3 - "$WORK" "$TIME" "${SESSIONS[@]}" <<'PY'
import json, sys
work, t, sessions = sys.argv[1], sys.argv[2], sys.argv[3:]
def dev(r):
    d = (r.get("telemetry_window") or {}).get("devices") or [{}]
    x = d[0].get("rates") or {}
    return x.get("r_s", 0.0), x.get("w_s", 0.0)
def row(kind, io, s):
    r = json.load(open(f"{work}/{kind}-{io}-{s}.json"))
    rs, ws = dev(r)
    if kind == "raw":
        lat = r["write"]["latency"]["mean_us"] / 1e3
        top = "-"
        tx = r["write"]["iops"]
    elif kind == "mysql":
        m = r["mysql"]
        lat = m["commit"]["latency"]["mean_us"] / 1e3
        tx = m["server"]["Com_commit"] / r["measured_s"]
        ws_ = [w for w in m["ps_waits"] if w["event"].startswith(("wait/io/file/innodb", "wait/synch/mutex/innodb", "wait/synch/rwlock/innodb", "wait/synch/sxlock/innodb"))]
        top = ", ".join(f'{w["event"].split("/")[-1]} {w["time_ms"]/1e3/r["measured_s"]:.2f}' for w in ws_[:2])
    else:
        m = r["slob"]
        ev = {e["name"]: e for e in m["events"]}
        lat = ev.get("log file sync", {}).get("avg_ms", 0.0)
        tx = m["counters"]["transactions"] / r["measured_s"]
        top = ", ".join(f'{e["name"]} {e["time_s"]/r["measured_s"]:.2f}' for e in sorted(m["events"], key=lambda e: -e["time_s"])[:2])
    return f"| {kind} | {io} | {s} | {rs:,.0f} | {ws:,.0f} | {tx:,.0f} | {lat:.2f} | {top} |"
print(f"| workload | --io | sessions | device r/s | device w/s | tx/s (raw: writes/s) | commit ms (raw: write) | top waits (s per s) |")
print("|---|---|---:|---:|---:|---:|---:|---|")
for io in ["direct", "fsync"]:
    for s in sessions:
        for kind in ["raw", "mysql", "slob"]:
            print(row(kind, io, s))
PY
