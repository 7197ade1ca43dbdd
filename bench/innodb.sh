#!/usr/bin/env bash
# innodb.sh — seed 001's question with a real InnoDB: on XFS and ext4, each
# over a direct-io loop device of its own, 16k pages, one table that all
# sessions share in 1 or 4 data files (mysql: --files N HASH partitions, an
# .ibd each; raw and slob: N data files), the IObench pattern (--workload
# raw: 16k random read/write, half each) beside MariaDB (--workload mysql,
# UPDATE_PCT 50) and the model (--workload slob, UPDATE_PCT 50), for flush
# methods O_DIRECT and fsync and SESSIONS sessions. 96 MiB of data against a
# 16M buffer cache. Prints a Markdown table: the device's reads and writes
# per second, transactions per second, the commit latency (raw: a write's),
# and the top waits.
#
# Usage: sudo bench/innodb.sh [TIME_S] [SESSIONS...]   (default 15 1 4)
#   FS="xfs ext4" FILES="1 4" to choose filesystems and data-file counts.
set -euo pipefail
TIME=${1:-15}; shift || true
SESSIONS=("${@:-1 4}"); read -r -a SESSIONS <<< "${SESSIONS[*]}"
read -r -a FSS <<< "${FS:-xfs ext4}"; read -r -a NFILES <<< "${FILES:-1 4}"
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BIN=$REPO/target/release/dbio; [ -x "$BIN" ] || BIN=$REPO/target/debug/dbio
WORK=$(mktemp -d /var/tmp/dbio-innodb.XXXXXX)
chmod 755 "$WORK"   # the mysql user must reach the target under it
IMG=$WORK/fs.img; MNT=$WORK/mnt; DEV=
teardown() {
    for t in "$MNT"/*; do "$WORK/dbio" clean --target "$t" >/dev/null 2>&1 || true; done
    if mountpoint -q "$MNT"; then umount "$MNT"; fi
    if [ -n "$DEV" ]; then losetup -d "$DEV"; DEV=; fi
    rm -f "$IMG"
}
cleanup() { teardown; rm -rf "$WORK"; }
trap cleanup EXIT INT TERM
cp "$BIN" "$WORK/dbio"
export DBIO_DB=$WORK/store.sqlite
run() { "$WORK/dbio" run --json --quiet --time "$TIME" "$@"; }
for fs in "${FSS[@]}"; do
  truncate -s 4G "$IMG"
  DEV=$(losetup -f --show --direct-io=on "$IMG")
  case $fs in
    xfs) mkfs.xfs -q -K "$DEV" ;;
    ext4) mkfs.ext4 -q -E nodiscard "$DEV" ;;
  esac
  mkdir -p "$MNT"; mount -o noatime "$DEV" "$MNT"; chmod 755 "$MNT"
  for n in "${NFILES[@]}"; do
    for io in direct fsync; do
      for s in "${SESSIONS[@]}"; do
        c=$fs-$n-$io-$s
        run --target "$MNT/raw" --workload raw --pattern randrw --read-pct 50 --bs 16k \
            --files "$n" --size 96M --sessions "$s" --io "$io" > "$WORK/raw-$c.json"
        "$WORK/dbio" clean --target "$MNT/raw" >/dev/null 2>&1
        # One table (6,000 pages) for all sessions, in $n .ibd files; the
        # instance and the table are reused across flush methods and sessions.
        run --target "$MNT/my-$n" --workload mysql --schemas 1 --threads-per-schema "$s" \
            --files "$n" --scale 12000 --cache 16M --update-pct 50 \
            --io "$io" > "$WORK/mysql-$c.json"
        run --target "$MNT/slob" --workload slob --schemas 1 --threads-per-schema "$s" \
            --files "$n" --scale 6000 --bs 16k --cache 16M --update-pct 50 \
            --io "$io" > "$WORK/slob-$c.json"
        "$WORK/dbio" clean --target "$MNT/slob" >/dev/null 2>&1
      done
    done
  done
  teardown
done
python3 - "$WORK" "${FSS[*]}" "${NFILES[*]}" "${SESSIONS[@]}" <<'PY'
import json, sys
work, fss, nfiles, sessions = sys.argv[1], sys.argv[2].split(), sys.argv[3].split(), sys.argv[4:]
def dev(r):
    d = (r.get("telemetry_window") or {}).get("devices") or [{}]
    x = d[0].get("rates") or {}
    return x.get("r_per_s", x.get("r_s", 0.0)), x.get("w_per_s", x.get("w_s", 0.0))
def row(kind, fs, n, io, s):
    r = json.load(open(f"{work}/{kind}-{fs}-{n}-{io}-{s}.json"))
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
    return f"| {fs} | {n} | {kind} | {io} | {s} | {rs:,.0f} | {ws:,.0f} | {tx:,.0f} | {lat:.2f} | {top} |"
print(f"| fs | files | workload | --io | sessions | device r/s | device w/s | tx/s (raw: writes/s) | commit ms (raw: write) | top waits (s per s) |")
print("|---|---:|---|---|---:|---:|---:|---:|---:|---|")
for fs in fss:
    for n in nfiles:
        for io in ["direct", "fsync"]:
            for s in sessions:
                for kind in ["raw", "mysql", "slob"]:
                    print(row(kind, fs, n, io, s))
PY
