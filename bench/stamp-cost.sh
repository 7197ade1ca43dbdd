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
# Then, load-independent: user-space instructions per write of each build
# (valgrind's callgrind; the difference between runs of 2N and N --ops, so
# the start and the layout check cancel out), N = $OPS (default 20000).
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
        --time 10 --ramp 1 --json --quiet "${@:3}" |
        python3 -c 'import json, sys; print(json.load(sys.stdin)["total"]["iops"])'
}

for i in $(seq "$PAIRS"); do
    run "$A" "$SHM/a" "$@" >> "$WORK/a"
    run "$B" "$SHM/b" "$@" >> "$WORK/b"
done

OPS=${OPS:-20000}
instr() { # binary, target, ops → user-space instructions (callgrind: this VM has no PMU for perf)
    valgrind --tool=callgrind --callgrind-out-file="$WORK/cg" \
        "$1" run --target "$2" --size 256M --bs 4k --pattern randwrite \
        --ops "$3" --quiet "${@:4}" > /dev/null 2> "$WORK/cg.err"
    awk '/^(summary|totals):/ { print $2; exit }' "$WORK/cg"
}
if command -v valgrind > /dev/null; then
    for x in a b; do
        bin=$A; [ $x = b ] && bin=$B
        echo "$(instr "$bin" "$SHM/$x" "$OPS" "$@") $(instr "$bin" "$SHM/$x" $((2 * OPS)) "$@")" >> "$WORK/i$x"
    done
    python3 - "$WORK/ia" "$WORK/ib" "$OPS" <<'PY'
import sys
ops = int(sys.argv[3])
def per_op(f):
    n, n2 = (float(v) for v in open(f).read().split())
    return (n2 - n) / ops
a, b = per_op(sys.argv[1]), per_op(sys.argv[2])
print(f"user instructions per write (callgrind, {2 * ops} minus {ops} ops): A {a:.0f}  B {b:.0f}  B/A {b / a:.3f}")
PY
fi

python3 - "$WORK/a" "$WORK/b" <<'PY'
import statistics, sys
a, b = ([float(l) for l in open(f)] for f in sys.argv[1:3])
ma, mb = statistics.median(a), statistics.median(b)
print("A IOPS:", " ".join(f"{v:.0f}" for v in a))
print("B IOPS:", " ".join(f"{v:.0f}" for v in b))
print(f"median A {ma:.0f}  median B {mb:.0f}  B/A {mb / ma:.3f}  ({len(a)} runs each, taking turns)")
PY
