#!/usr/bin/env bash
# stamp-cost.sh — what per-sector stamps and the block generation map cost
# raw writes: 4k random writes on tmpfs (/dev/shm: the engine and the CPU,
# not a device, are the limit), one build against another, taking turns
# (A, B, A, B, …) so drift of the machine falls on both. Prints the median
# IOPS of each and B/A.
#
# Usage: bench/stamp-cost.sh DBIO_A DBIO_B [PAIRS] [-- EXTRA RUN OPTIONS…]
#   bench/stamp-cost.sh /tmp/dbio-main target/release/dbio 7
#   bench/stamp-cost.sh A B 5 -- --engine io_uring --iodepth 16
# Each build gets its own target (laid out once, then reused): 256 MiB of
# 4k blocks, 1 session, psync, O_DIRECT, 10 s measured after a 1 s ramp.
# Also the CPU per write from the same runs (the report's cpu section:
# user-space µs per I/O, where stamping happens, and user+sys), which
# depends less on the machine's load than IOPS. (Instruction counts are
# not to be had here: this VM has no PMU for perf, and valgrind crashes in
# rustix's vDSO setup.)
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: bench/stamp-cost.sh DBIO_A DBIO_B [PAIRS] [-- OPTIONS…]" >&2; exit 2; }
A=$1 B=$2; shift 2
PAIRS=5
if [ $# -gt 0 ] && [ "$1" != "--" ]; then PAIRS=$1; shift; fi
[ $# -gt 0 ] && [ "$1" = "--" ] && shift
WORK=$(mktemp -d)
SHM=$(mktemp -d /dev/shm/stamp-cost.XXXXXX)
trap 'rm -rf "$WORK" "$SHM"' EXIT INT TERM
export DBIO_DB="$WORK/store.sqlite"

run() { # binary, target
    "$1" run --target "$2" --size 256M --bs 4k --pattern randwrite \
        --sessions 1 --time 10 --ramp 1 --json --quiet "${@:3}" |
        python3 -c 'import json, sys; d = json.load(sys.stdin); c = d["cpu"]
print(d["total"]["iops"], 1e6 * c["user_s"] / d["total"]["requests"], c["us_per_io"])'
}

for i in $(seq "$PAIRS"); do
    run "$A" "$SHM/a" "$@" >> "$WORK/a"
    run "$B" "$SHM/b" "$@" >> "$WORK/b"
done

python3 - "$WORK/a" "$WORK/b" <<'PY'
import statistics, sys
a, b = ([[float(v) for v in l.split()] for l in open(f)] for f in sys.argv[1:3])
for i, (name, fmt) in enumerate([("IOPS", ".0f"), ("user µs/IO", ".3f"), ("cpu µs/IO", ".3f")]):
    xa, xb = [r[i] for r in a], [r[i] for r in b]
    ma, mb = statistics.median(xa), statistics.median(xb)
    print(f"A {name}:", " ".join(f"{v:{fmt}}" for v in xa))
    print(f"B {name}:", " ".join(f"{v:{fmt}}" for v in xb))
    print(f"{name}: median A {ma:{fmt}}  median B {mb:{fmt}}  B/A {mb / ma:.3f}  ({len(xa)} runs each, taking turns)")
PY
