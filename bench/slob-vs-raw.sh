#!/usr/bin/env bash
# slob-vs-raw.sh — what the SLOB model costs over plain I/O. On a RAM target
# (tmpfs, O_DIRECT; no device in the way) dbio runs the same sessions with
# --workload raw and with --workload slob, taking turns, and reports the
# median physical I/O rate of each and the CPU time per physical I/O.
#
#   (r) reads: raw randread vs slob UPDATE_PCT 0 with a 16M cache
#       (almost every logical read is a physical read)
#   (w) 20% updates: raw randrw (80% reads) vs slob UPDATE_PCT 20; slob's
#       physical I/O = sessions' reads + DB writer writes + log writes
#
# Everything is psync, the DB writer too (--dbwr-engine psync; its default,
# io_uring, costs more CPU per write on a RAM target), so the difference is
# the model's own cost.
#
# Usage: bench/slob-vs-raw.sh [PAIRS] [TIME_S] [SESSIONS]   (default 5 10 4)
set -euo pipefail
PAIRS=${1:-5}
TIME=${2:-10}
SESSIONS=${3:-4}
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
WORK=$(mktemp -d /dev/shm/dbio-slob-vs-raw.XXXXXX)
trap 'rm -rf "$WORK"' EXIT INT TERM
[ -x "${CARGO_TARGET_DIR:-$REPO/target}/release/dbio" ] || (cd "$REPO" && cargo build --release -q)
cp "${CARGO_TARGET_DIR:-$REPO/target}/release/dbio" "$WORK/dbio"
export DBIO_DB="$WORK/store.sqlite"
SCALE_MB=$((1024 / SESSIONS))

raw() { "$WORK/dbio" run --json --quiet --target "$WORK/raw" --size 1G --bs 8k --sessions "$SESSIONS" \
          --time "$TIME" --ramp 1 --io direct "$@"; }
slob() { "$WORK/dbio" run --json --quiet --workload slob --target "$WORK/slob" --scale "${SCALE_MB}M" \
          --sessions "$SESSIONS" --cache 16M --time "$TIME" --ramp 1 --io direct \
          --dbwr-engine psync "$@"; }
# physical I/O per second and CPU us per physical I/O from a report
pick() { python3 -c 'import json,sys; r=json.load(sys.stdin); print(r["total"]["iops"], r["cpu"]["us_per_io"])'; }

for c in r w; do
    : > "$WORK/$c.raw"; : > "$WORK/$c.slob"
    for i in $(seq "$PAIRS"); do
        if [ "$c" = r ]; then
            raw --pattern randread | pick >> "$WORK/$c.raw"
            slob --update-pct 0 | pick >> "$WORK/$c.slob"
        else
            raw --pattern randrw --read-pct 80 | pick >> "$WORK/$c.raw"
            slob --update-pct 20 | pick >> "$WORK/$c.slob"
        fi
    done
done
python3 - "$WORK" "$PAIRS" "$TIME" "$SESSIONS" <<'PY'
import statistics, sys
work, pairs, t, s = sys.argv[1:]
def load(p):
    rows = [tuple(map(float, l.split())) for l in open(p) if l.strip()]
    return statistics.median(r[0] for r in rows), statistics.median(r[1] for r in rows)
print(f"| case ({s} sessions, {pairs} pairs of {t} s, tmpfs O_DIRECT, psync) | raw I/O/s | slob I/O/s | slob/raw | raw CPU us/IO | slob CPU us/IO | slob/raw |")
print("|---|---:|---:|---:|---:|---:|---:|")
for c, name in [("r", "reads: randread vs UPDATE_PCT 0"), ("w", "20% writes: randrw 80/20 vs UPDATE_PCT 20")]:
    ri, rc = load(f"{work}/{c}.raw"); si, sc = load(f"{work}/{c}.slob")
    print(f"| {name} | {ri:,.0f} | {si:,.0f} | {si/ri:.2f} | {rc:.1f} | {sc:.1f} | {sc/rc:.2f} |")
PY
