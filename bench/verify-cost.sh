#!/usr/bin/env bash
# verify-cost.sh — what `dbio run --verify` (every read checked) and
# `--verify-after-write` (every write read back and checked) cost: 4k random
# I/O on tmpfs (/dev/shm: the CPU, not a device, is the limit), one build,
# the same target, plain and checked runs taking turns (plain, checked, …)
# so drift of the machine falls on both. Prints the median IOPS of each and
# checked/plain.
#
# Usage: bench/verify-cost.sh DBIO [PAIRS] [-- RUN OPTIONS…]
#   bench/verify-cost.sh target/release/dbio 5 -- --pattern randread
#   bench/verify-cost.sh target/release/dbio 5 -- --pattern randrw
#   VERIFY="--verify --verify-after-write" bench/verify-cost.sh target/release/dbio 5 -- --pattern randrw
# 256 MiB of 4k blocks, 1 session, psync, O_DIRECT, 10 s measured after a
# 1 s ramp, unless the options say otherwise. VERIFY is the checked run's
# extra options (default --verify).
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: bench/verify-cost.sh DBIO [PAIRS] [-- OPTIONS…]" >&2; exit 2; }
BIN=$1; shift
PAIRS=5
if [ $# -gt 0 ] && [ "$1" != "--" ]; then PAIRS=$1; shift; fi
[ $# -gt 0 ] && [ "$1" = "--" ] && shift
read -r -a CHECK <<< "${VERIFY:---verify}"
WORK=$(mktemp -d)
SHM=$(mktemp -d /dev/shm/verify-cost.XXXXXX)
trap 'rm -rf "$WORK" "$SHM"' EXIT INT TERM
export DBIO_DB="$WORK/store.sqlite"

run() { # extra options…
    "$BIN" run --target "$SHM/t" --size 256M --bs 4k --time 10 --ramp 1 \
        --json --quiet "$@" |
        python3 -c 'import json, sys; print(json.load(sys.stdin)["total"]["iops"])'
}

# Lay out, and leave a lost-write map for the read-only runs to judge by.
"$BIN" run --target "$SHM/t" --size 256M --bs 4k --pattern randwrite --ops 10000 --quiet > /dev/null
for i in $(seq "$PAIRS"); do
    run "$@" >> "$WORK/plain"
    run "$@" "${CHECK[@]}" >> "$WORK/checked"
done

python3 - "$WORK/plain" "$WORK/checked" "${CHECK[*]}" <<'PY'
import statistics, sys
a, b = ([float(l) for l in open(f)] for f in sys.argv[1:3])
ma, mb = statistics.median(a), statistics.median(b)
print("plain   IOPS:", " ".join(f"{v:.0f}" for v in a))
print("checked IOPS:", " ".join(f"{v:.0f}" for v in b), f"({sys.argv[3]})")
print(f"median plain {ma:.0f}  median checked {mb:.0f}  checked/plain {mb / ma:.3f}  ({len(a)} runs each, taking turns)")
PY
