#!/usr/bin/env bash
# run.sh — dbio's whole performance suite in one command (issue 14, item 7).
#
#   sudo bench/run.sh [--quick] [--out DIR]
#
# 1. floor vs dbio vs fio: psync 4k random reads (vs-fio.sh case a), io_uring
#    at queue depths 1, 8, 32, 128 on tmpfs (case b) and on XFS over a
#    direct-io loop device (case f), layout bandwidth (case d);
# 2. the session sweep 1, 4, 16, 64, 256, 1024, 4096 of raw randrw 80/20 and
#    the SLOB model on tmpfs (slob-sessions.sh): I/O/s and CPU per I/O, with
#    a chart of both against sessions;
# 3. peak memory per session at 128, 1024 and 4096 sessions (memory.sh);
# 4. `dbio report` over a store of 10,000 runs (report-store.sh);
# 5. layout in one stream per core against fio --numjobs=N --refill_buffers,
#    on tmpfs and on XFS over a direct-io loop device (layout.sh).
# Every part takes turns between the tools it compares and prints medians
# and ratios; the tables and the chart go to DIR (default
# bench/suite-<date>/), one file per part. --quick runs each part short
# (a smoke test of the suite, not a measurement). Performance is never
# asserted: read the ratios, on one machine, from one run of the suite.
set -euo pipefail
BENCH=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$BENCH/.." && pwd)
QUICK=0; OUT=""
while [ $# -gt 0 ]; do
    case $1 in
        --quick) QUICK=1; shift;;
        --out) OUT=$2; shift 2;;
        -h|--help) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0;;
        *) echo "run.sh: unknown option $1 (see --help)" >&2; exit 2;;
    esac
done
[ "$EUID" -eq 0 ] || { echo "run.sh: run as root (vs-fio.sh needs loop devices and drop_caches)" >&2; exit 2; }
OUT=${OUT:-$BENCH/suite-$(date +%Y-%m-%d)}
mkdir -p "$OUT"
(cd "$REPO" && cargo build --release --quiet && cargo build --release --quiet --example floor)
BIN=${CARGO_TARGET_DIR:-$REPO/target}/release/dbio

if [ "$QUICK" = 1 ]; then
    VS=(--pairs 1 --time 2 --qd "1 32"); SWEEP=(--sessions "1 8 64" --time 1)
    MEM=(--sessions "8 64" --time 1); STORE=(--runs 500 --rounds 2)
    LAYOUT=(--pairs 1 --size 1G)
else
    VS=(--pairs 3 --time 5 --qd "1 8 32 128"); SWEEP=(--sessions "1 4 16 64 256 1024 4096" --time 4 --rounds 2)
    MEM=(--sessions "128 1024 4096"); STORE=(--runs 10000 --rounds 5)
    LAYOUT=(--pairs 5 --size 4G)
fi
say() { echo "== run.sh: $* ($(date +%H:%M:%S), load $(cut -d' ' -f1 /proc/loadavg))" >&2; }

say "1/5 floor vs dbio vs fio"
"$BENCH/vs-fio.sh" --dbio "$BIN" --cases "a b f d" "${VS[@]}" | tee "$OUT/vs-fio.md"
say "2/5 session sweep, raw and slob"
"$BENCH/slob-sessions.sh" --dir /dev/shm/dbio-suite --a "$BIN" "${SWEEP[@]}" \
    --svg "$OUT/sweep.svg" | tee "$OUT/sweep.md"
say "3/5 memory per session"
"$BENCH/memory.sh" --dir /dev/shm/dbio-suite --a "$BIN" "${MEM[@]}" | tee "$OUT/memory.md"
say "4/5 report over a large store"
"$BENCH/report-store.sh" --dbio "$BIN" "${STORE[@]}" | tee "$OUT/report-store.md"
say "5/5 layout vs fio, one stream per core"
"$BENCH/layout.sh" --dbio "$BIN" "${LAYOUT[@]}" | tee "$OUT/layout.md"
rmdir /dev/shm/dbio-suite 2>/dev/null || true
say "done: $OUT"
