#!/usr/bin/env bash
# innodb-flavor.sh — the model's `--flavor innodb` against MariaDB on the
# same storage (issue 29 item 1): XFS over a direct-io loop device, SESSIONS
# sessions (a schema each), 25% updates, 16k pages, 3,000 pages per schema
# against a 16M buffer pool / cache, O_DIRECT; the model with a data file
# per session as MariaDB has an .ibd per table (a flush batch fsyncs each
# file it wrote, so the fsyncs per batch follow the files). ROUNDS rounds, each a mysql
# run then a model run. Prints per operation, for each run and as the
# ratio of the medians (model / engine): redo bytes, device read and write
# requests, device write bytes, device flushes per commit.
#
# Usage: sudo bench/innodb-flavor.sh [TIME_S] [SESSIONS]   (default 30 8)
#   ROUNDS=3; KEEP=DIR keeps the runs' JSON; SUMMARY=DIR only sums up DIR.
set -euo pipefail
TIME=${1:-30}; SESSIONS=${2:-8}; ROUNDS=${ROUNDS:-3}
summary() {
python3 - "$1" <<'PY'
import glob, json, os, statistics, sys
out = sys.argv[1]
def dev(r):
    d = [x for x in (r.get("telemetry_window") or {}).get("devices", []) if x["name"].startswith("loop")]
    return d[0]["rates"]
def per_op(path):
    r = json.load(open(path)); t = r["measured_s"]; x = dev(r)
    if "mysql" in r and r["mysql"]:
        m = r["mysql"]; s = m["server"]
        ops = m["selects"]["count"] + m["updates"]["count"] if isinstance(m["selects"], dict) else m["selects"] + m["updates"]
        commits = m["updates"]["count"] if isinstance(m["updates"], dict) else m["updates"]
        redo = s["Innodb_os_log_written"]
    else:
        c = r["slob"]["counters"]; ops = c["executes"]; commits = c["transactions"]; redo = c["redo_bytes"]
    return {
        "redo B/op": redo / ops,
        "dev reads/op": x["r_per_s"] * t / ops,
        "dev writes/op": x["w_per_s"] * t / ops,
        "dev write KiB/op": x["wkib_per_s"] * t / ops,
        "dev flushes/commit": x["f_per_s"] * t / commits,
        "ops/s": ops / t,
    }
runs = {k: [per_op(p) for p in sorted(glob.glob(f"{out}/{k}-*.json"))] for k in ["mysql", "slob"]}
keys = list(runs["mysql"][0])
print("| metric | " + " | ".join(f"{k} {i+1}" for k in runs for i in range(len(runs[k]))) + " | model / engine (medians) |")
print("|---|" + "---:|" * (sum(len(v) for v in runs.values()) + 1))
for k in keys:
    cells = [f"{r[k]:,.2f}" for kind in runs for r in runs[kind]]
    med = {kind: statistics.median(r[k] for r in runs[kind]) for kind in runs}
    print(f"| {k} | " + " | ".join(cells) + f" | {med['slob'] / med['mysql']:.2f}x |")
PY
}
if [ -n "${SUMMARY:-}" ]; then summary "$SUMMARY"; exit; fi
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BIN=$REPO/target/release/dbio; [ -x "$BIN" ] || BIN=$REPO/target/debug/dbio
LOCK=/tmp/dbio-db-tests.lock
WORK=$(mktemp -d /var/tmp/dbio-innodb-flavor.XXXXXX)
chmod 755 "$WORK"   # the mysql user must reach the target under it
IMG=$WORK/fs.img; MNT=$WORK/mnt; DEV=; OUT=$WORK/out; mkdir -p "$OUT"
cleanup() {
    for t in "$MNT"/*; do
        [ -e "$t" ] || continue
        flock "$LOCK" "$WORK/dbio" clean --target "$t" >/dev/null 2>&1 || true
    done
    if mountpoint -q "$MNT"; then umount "$MNT"; fi
    if [ -n "$DEV" ]; then losetup -d "$DEV"; fi
    if [ -n "${KEEP:-}" ]; then mkdir -p "$KEEP"; cp "$OUT"/* "$KEEP"/ 2>/dev/null || true; fi
    rm -rf "$WORK"
}
trap cleanup EXIT INT TERM
cp "$BIN" "$WORK/dbio"
export DBIO_DB=$WORK/store.sqlite
truncate -s 4G "$IMG"
DEV=$(losetup -f --show --direct-io=on "$IMG")
mkfs.xfs -q -K "$DEV"
mkdir -p "$MNT"; mount -o noatime "$DEV" "$MNT"; chmod 755 "$MNT"
for r in $(seq 1 "$ROUNDS"); do
    echo "$(date -u +%T) round $r load $(cut -d' ' -f1 /proc/loadavg)" >&2
    # MariaDB: 6,000 rows (3,000 pages) per table, a table per session.
    flock "$LOCK" "$WORK/dbio" run --json --quiet --time "$TIME" --target "$MNT/my" \
        --workload mysql --sessions "$SESSIONS" --scale 6000 --cache 16M --update-pct 25 \
        --io direct > "$OUT/mysql-$r.json"
    "$WORK/dbio" run --json --quiet --time "$TIME" --target "$MNT/slob" --workload slob \
        --flavor innodb --sessions "$SESSIONS" --files "$SESSIONS" --scale 3000 --cache 16M \
        --update-pct 25 \
        --io direct > "$OUT/slob-$r.json"
done
summary "$OUT"
