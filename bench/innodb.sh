#!/usr/bin/env bash
# innodb.sh — seed 001's question with a real InnoDB: on XFS and ext4, each
# over a direct-io loop device of its own, 16k pages, one table that all
# sessions share in 1 or 4 data files (mysql: --files N HASH partitions, an
# .ibd each; raw and slob: N data files), the IObench pattern (--workload
# raw: 16k random read/write, half each) beside MariaDB (--workload mysql,
# UPDATE_PCT 50) and the model (--workload slob, UPDATE_PCT 50), for flush
# methods O_DIRECT and fsync and SESSIONS sessions. 96 MiB of data against a
# 16M buffer cache.
#
# Every cell runs ROUNDS rounds, and each round takes turns between the arms
# (raw, mysql, slob, raw, mysql, slob, ...), so load drift from other work on
# the machine hits the three alike; the load average (1 min) is recorded after
# each run. Prints two Markdown tables: per cell and arm the medians over the
# rounds of the device's reads and writes per second, transactions per second
# (with the spread: (max - min) / median), the commit latency (raw: a
# write's), the top waits and the median load; then per cell the ratios
# between arms taken within each round (medians): InnoDB against the model and
# against the raw pattern; then per cell what each transaction cost InnoDB
# and the model (reads per execute, pages written, doublewrite, redo bytes).
#
# Each mysql run starts a MariaDB server, so it runs under the machine-wide
# lock /tmp/dbio-db-tests.lock (taken per run, so others' tests interleave).
#
# Usage: sudo bench/innodb.sh [TIME_S] [SESSIONS...]   (default 15 1 4)
#   FS="xfs ext4" FILES="1 4" IOS="direct fsync" ROUNDS=2 to choose the cells;
#   KEEP=DIR keeps the runs' JSON in DIR (default: removed with the rest);
#   SUMMARY=DIR prints the tables of the runs kept in DIR and runs nothing
#   (cells with missing runs are left out: a sweep cut short still sums up).
set -euo pipefail
TIME=${1:-15}; shift || true
SESSIONS=("${@:-1 4}"); read -r -a SESSIONS <<< "${SESSIONS[*]}"
read -r -a FSS <<< "${FS:-xfs ext4}"; read -r -a NFILES <<< "${FILES:-1 4}"
read -r -a IOS <<< "${IOS:-direct fsync}"; ROUNDS=${ROUNDS:-2}
summary() {
python3 - "$1" "$ROUNDS" "${FSS[*]}" "${NFILES[*]}" "${IOS[*]}" "${SESSIONS[@]}" <<'PY'
import json, os, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
fss, nfiles, ios = (a.split() for a in sys.argv[3:6]); sessions = sys.argv[6:]
med = statistics.median
def dev(r):
    d = (r.get("telemetry_window") or {}).get("devices") or [{}]
    x = d[0].get("rates") or {}
    return x.get("r_per_s", x.get("r_s", 0.0)), x.get("w_per_s", x.get("w_s", 0.0))
def one(kind, c):
    """(device r/s, device w/s, tx/s, commit ms, {wait: s per s}, load) of one run."""
    r = json.load(open(f"{out}/{kind}-{c}.json"))
    load = float(open(f"{out}/{kind}-{c}.load").read())
    rs, ws = dev(r)
    t = r["measured_s"]
    if kind == "raw":
        return rs, ws, r["write"]["iops"], r["write"]["latency"]["mean_us"] / 1e3, {}, load
    if kind == "mysql":
        m = r["mysql"]
        waits = {w["event"].split("/")[-1]: w["time_ms"] / 1e3 / t for w in m["ps_waits"]
                 if w["event"].startswith(("wait/io/file/innodb", "wait/synch/mutex/innodb",
                                           "wait/synch/rwlock/innodb", "wait/synch/sxlock/innodb"))}
        return rs, ws, m["server"]["Com_commit"] / t, m["commit"]["latency"]["mean_us"] / 1e3, waits, load
    m = r["slob"]
    ev = {e["name"]: e for e in m["events"]}
    waits = {e["name"]: e["time_s"] / t for e in m["events"]}
    return rs, ws, m["counters"]["transactions"] / t, ev.get("log file sync", {}).get("avg_ms", 0.0), waits, load
def cells():
    for fs in fss:
        for n in nfiles:
            for io in ios:
                for s in sessions:
                    if complete((fs, n, io, s)):
                        yield fs, n, io, s
def runs(kind, cell):
    return [one(kind, "-".join(cell + (str(r),))) for r in range(1, rounds + 1)
            if os.path.exists(f"{out}/{kind}-{'-'.join(cell + (str(r),))}.load")]
def complete(cell):
    return all(runs(kind, cell) for kind in ["raw", "mysql", "slob"])
def spread(xs):
    m = med(xs)
    return (max(xs) - min(xs)) / m * 100 if m else 0.0
print(f"Medians of {rounds} rounds; spread = (max - min) / median of tx/s.\n")
print("| fs | files | workload | --io | sessions | device r/s | device w/s | tx/s (raw: writes/s) | spread | commit ms (raw: write) | top waits (s per s) | load |")
print("|---|---:|---|---|---:|---:|---:|---:|---:|---:|---|---:|")
for cell in cells():
    for kind in ["raw", "mysql", "slob"]:
        rr = runs(kind, cell)
        names = {k for x in rr for k in x[4]}
        waits = sorted(((med([x[4].get(k, 0.0) for x in rr]), k) for k in names), reverse=True)[:2]
        top = ", ".join(f"{k} {v:.2f}" for v, k in waits) or "-"
        txs = [x[2] for x in rr]
        print(f"| {' | '.join(cell[:2])} | {kind} | {' | '.join(cell[2:])} | {med([x[0] for x in rr]):,.0f} "
              f"| {med([x[1] for x in rr]):,.0f} | {med(txs):,.0f} | {spread(txs):.0f}% "
              f"| {med([x[3] for x in rr]):.2f} | {top} | {med([x[5] for x in rr]):.1f} |")
print("\nRatios within a round (median over rounds; min–max):\n")
print("| fs | files | --io | sessions | mysql/slob tx | mysql/slob device r | mysql/slob device w | mysql/raw device w | mysql device w per tx | slob device w per tx |")
print("|---|---:|---|---:|---:|---:|---:|---:|---:|---:|")
def ratio(a, b):
    a, b = a[:len(b)], b[:len(a)]
    xs = [x / y if y else 0.0 for x, y in zip(a, b)]
    return f"{med(xs):.2f} ({min(xs):.2f}–{max(xs):.2f})"
for cell in cells():
    raw, my, sl = runs("raw", cell), runs("mysql", cell), runs("slob", cell)
    col = lambda rr, i: [x[i] for x in rr]
    print(f"| {' | '.join(cell)} | {ratio(col(my, 2), col(sl, 2))} | {ratio(col(my, 0), col(sl, 0))} "
          f"| {ratio(col(my, 1), col(sl, 1))} | {ratio(col(my, 1), col(raw, 1))} "
          f"| {med([w / t for w, t in zip(col(my, 1), col(my, 2)) if t]):.0f} "
          f"| {med([w / t for w, t in zip(col(sl, 1), col(sl, 2)) if t]):.0f} |")
print("\nWhat a transaction cost (medians over rounds; mysql: SHOW GLOBAL STATUS deltas, per commit; slob: the model's counters, per transaction):\n")
print("| fs | files | --io | sessions | mysql reads/execute | slob reads/execute | mysql pages written/tx | mysql doublewrite pages/tx | slob blocks written/tx | mysql redo B/tx | slob redo B/tx | mysql wait_free/s | slob free buffer waits s/s |")
print("|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
def costs(cell):
    my, sl = [], []
    for r in range(1, rounds + 1):
        c = "-".join(cell + (str(r),))
        if os.path.exists(f"{out}/mysql-{c}.load"):
            j = json.load(open(f"{out}/mysql-{c}.json")); v = j["mysql"]["server"]; t = max(v["Com_commit"], 1)
            my.append((v["Innodb_data_reads"] / max(v["Com_select"] + v["Com_update"], 1), v["Innodb_pages_written"] / t,
                       v["Innodb_dblwr_pages_written"] / t, v["Innodb_os_log_written"] / t,
                       v["Innodb_buffer_pool_wait_free"] / j["measured_s"]))
        if os.path.exists(f"{out}/slob-{c}.load"):
            j = json.load(open(f"{out}/slob-{c}.json")); k = j["slob"]["counters"]; t = max(k["transactions"], 1)
            ev = {e["name"]: e["time_s"] for e in j["slob"]["events"]}
            sl.append((k["physical_reads"] / max(k["executes"], 1), k["physical_writes"] / t, k["redo_bytes"] / t,
                       ev.get("free buffer waits", 0.0) / j["measured_s"]))
    return [med(x) for x in zip(*my)], [med(x) for x in zip(*sl)]
for cell in cells():
    m, s_ = costs(cell)
    print(f"| {' | '.join(cell)} | {m[0]:.0f} | {s_[0]:.0f} | {m[1]:.0f} | {m[2]:.0f} | {s_[1]:.0f} | {m[3]:,.0f} | {s_[2]:,.0f} | {m[4]:,.0f} | {s_[3]:.2f} |")

PY
}
if [ -n "${SUMMARY:-}" ]; then summary "$SUMMARY"; exit 0; fi
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BIN=$REPO/target/release/dbio; [ -x "$BIN" ] || BIN=$REPO/target/debug/dbio
LOCK=/tmp/dbio-db-tests.lock
WORK=$(mktemp -d /var/tmp/dbio-innodb-bench.XXXXXX)
chmod 755 "$WORK"   # the mysql user must reach the target under it
IMG=$WORK/fs.img; MNT=$WORK/mnt; DEV=; OUT=$WORK/out; mkdir -p "$OUT"
teardown() {
    for t in "$MNT"/*; do
        [ -e "$t" ] || continue
        flock "$LOCK" "$WORK/dbio" clean --target "$t" >/dev/null 2>&1 || true
    done
    if mountpoint -q "$MNT"; then umount "$MNT"; fi
    if [ -n "$DEV" ]; then losetup -d "$DEV"; DEV=; fi
    rm -f "$IMG"
}
cleanup() {
    teardown
    if [ -n "${KEEP:-}" ]; then mkdir -p "$KEEP"; cp "$OUT"/* "$KEEP"/ 2>/dev/null || true; fi
    rm -rf "$WORK"
}
trap cleanup EXIT INT TERM
cp "$BIN" "$WORK/dbio"
export DBIO_DB=$WORK/store.sqlite
# run NAME [flock] ARGS...: one run, its JSON in $OUT/NAME.json, the load
# average after it in $OUT/NAME.load.
run() {
    local name=$1; shift
    local pre=()
    if [ "$1" = flock ]; then pre=(flock "$LOCK"); shift; fi
    "${pre[@]}" "$WORK/dbio" run --json --quiet --time "$TIME" "$@" > "$OUT/$name.json"
    cut -d' ' -f1 /proc/loadavg > "$OUT/$name.load"
}
for fs in "${FSS[@]}"; do
  truncate -s 4G "$IMG"
  DEV=$(losetup -f --show --direct-io=on "$IMG")
  case $fs in
    xfs) mkfs.xfs -q -K "$DEV" ;;
    ext4) mkfs.ext4 -q -E nodiscard "$DEV" ;;
  esac
  mkdir -p "$MNT"; mount -o noatime "$DEV" "$MNT"; chmod 755 "$MNT"
  for n in "${NFILES[@]}"; do
    for io in "${IOS[@]}"; do
      for s in "${SESSIONS[@]}"; do
        for r in $(seq 1 "$ROUNDS"); do
          c=$fs-$n-$io-$s-$r
          echo "$(date -u +%T) $c load $(cut -d' ' -f1 /proc/loadavg)" >&2
          run "raw-$c" --target "$MNT/raw" --workload raw --pattern randrw --read-pct 50 \
              --bs 16k --files "$n" --size 96M --sessions "$s" --io "$io"
          "$WORK/dbio" clean --target "$MNT/raw" >/dev/null 2>&1
          # One table (6,000 pages) for all sessions, in $n .ibd files; the
          # instance and the table are reused across flush methods, sessions
          # and rounds.
          run "mysql-$c" flock --target "$MNT/my-$n" --workload mysql --schemas 1 \
              --threads-per-schema "$s" --files "$n" --scale 12000 --cache 16M \
              --update-pct 50 --io "$io"
          run "slob-$c" --target "$MNT/slob" --workload slob --schemas 1 \
              --threads-per-schema "$s" --files "$n" --scale 6000 --bs 16k --cache 16M \
              --update-pct 50 --io "$io"
          "$WORK/dbio" clean --target "$MNT/slob" >/dev/null 2>&1
        done
      done
    done
  done
  teardown
done
summary "$OUT"
