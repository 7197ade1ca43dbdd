#!/usr/bin/env bash
# replay-speed.sh — issue 30, item 6: a trace of N requests (10M by
# default: 4 KiB reads, uniform over 64 MiB, one thread, as fio's iolog v3
# converted to dbio's format) replayed at --speed max on tmpfs against
# raw's I/O/s with the same mix, depth (psync, one session) and request
# count, the two taking turns; medians and the ratio, each run's peak RSS,
# and the trace's size. Then the memory check: the same replay of a trace
# a tenth as long, whose peak RSS should be the same.
#
# Reads by default (--read-pct 100): a raw run's writes carry dbio's block
# content (fresh data, stamps, checksums) and a replay's do not, and a
# replay's writes change the layout the next raw run checks (and lays out
# again), so with writes the two do different work per request.
#
# Usage: bench/replay-speed.sh [--requests N] [--pairs P] [--read-pct R] [--dbio BIN] [--dir DIR] [--keep]
# Needs python3. Everything it makes (the iologs, the store, the results, the
# tmpfs target, the binary's copy) is in temporary directories removed at
# exit, also after an error or Ctrl-C. The traces (about 8 bytes a request)
# go there too, unless --keep: then into DIR (default
# /var/tmp/dbio-replay-speed, made if missing), where the next --keep run
# finds them instead of making them again.
set -euo pipefail
N=10000000 PAIRS=3 READ_PCT=100 DBIO=target/release/dbio DIR=/var/tmp/dbio-replay-speed KEEP=0
while [ $# -gt 0 ]; do
    case $1 in
        --requests) N=$2; shift 2 ;;
        --pairs) PAIRS=$2; shift 2 ;;
        --read-pct) READ_PCT=$2; shift 2 ;;
        --dbio) DBIO=$2; shift 2 ;;
        --dir) DIR=$2; shift 2 ;;
        --keep) KEEP=1; shift ;;
        *) echo "replay-speed.sh: unknown option $1" >&2; exit 2 ;;
    esac
done
[ -x "$DBIO" ] || { echo "replay-speed.sh: no dbio binary at $DBIO (cargo build --release)" >&2; exit 2; }
WORK="" SHM=""
cleanup() {
    if [ -n "$SHM" ]; then rm -rf "$SHM"; fi
    if [ -n "$WORK" ]; then rm -rf "$WORK"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM
WORK=$(mktemp -d /var/tmp/dbio-replay-speed-work.XXXXXX)
SHM=$(mktemp -d /dev/shm/dbio-replay-speed.XXXXXX)
TRACES=$WORK
if [ "$KEEP" = 1 ]; then
    mkdir -p "$DIR"
    TRACES=$DIR
fi
cp "$DBIO" "$WORK/dbio"   # a rebuild meanwhile does not change what is measured
DBIO=$WORK/dbio
export DBIO_DB=$WORK/store.sqlite

# A trace of $1 requests, $READ_PCT% reads, into $TRACES/trace-$1-$READ_PCT.dbtrace.
make_trace() {
    local n=$1 log=$WORK/trace-$1-$READ_PCT.iolog out=$TRACES/trace-$1-$READ_PCT.dbtrace
    [ -f "$out" ] && return
    python3 - "$n" "$log" "$READ_PCT" <<'PY'
import random, sys
n, out, read = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]) / 100
blocks = (64 << 20) // 4096
r = random.Random(7)
with open(out, "w", buffering=1 << 20) as f:
    f.write("fio version 3 iolog\n0 data add\n0 data open\n")
    chunk = []
    for t in range(1, n + 1):
        op = "read" if r.random() < read else "write"
        chunk.append(f"{t} data {op} {r.randrange(blocks) * 4096} 4096\n")
        if len(chunk) == 100000:
            f.write("".join(chunk))
            chunk = []
    f.write("".join(chunk))
    f.write(f"{n} data close\n")
PY
    "$DBIO" trace convert "$log" --output "$out" >/dev/null
    rm -f "$log"
}

# One run's "I/O/s peak-RSS-MiB" from its JSON on stdin.
pick() {
    python3 -c '
import json, sys
d = json.load(sys.stdin)
n = sum((d.get(k) or {}).get("requests", 0) for k in ("read", "write"))
print(n / d["measured_s"], d["peak_rss_bytes"] / 2**20)'
}

raw() {
    "$DBIO" run --target "$SHM/t" --size 64M --bs 4k --pattern randrw --read-pct "$READ_PCT" \
        --sessions 1 --ops "$1" --json --quiet | pick
}
replay() {
    "$DBIO" run --workload replay --trace "$TRACES/trace-$1-$READ_PCT.dbtrace" --speed max \
        --target "$SHM/t" --size 64M --json --quiet | pick
}

make_trace "$N"
echo "trace: $N requests ($READ_PCT% reads), $(stat -c %s "$TRACES/trace-$N-$READ_PCT.dbtrace") bytes; load average $(cut -d' ' -f1-3 /proc/loadavg)"
: > "$WORK/raw" ; : > "$WORK/replay"
for i in $(seq "$PAIRS"); do
    raw "$N" | tee -a "$WORK/raw" | sed 's/^/raw    /'
    replay "$N" | tee -a "$WORK/replay" | sed 's/^/replay /'
done
SMALL=$((N / 10))
make_trace "$SMALL"
replay "$SMALL" > "$WORK/small"
python3 - "$WORK/raw" "$WORK/replay" "$WORK/small" "$N" "$SMALL" <<'PY'
import statistics, sys
rows = [[list(map(float, l.split())) for l in open(f)] for f in sys.argv[1:4]]
raw, rep, small = rows
med = lambda rs, k: statistics.median(r[k] for r in rs)
print(f"{'':<28}{'I/O/s median':>14}{'peak RSS MiB':>14}  runs (I/O/s)")
print(f"{'raw psync, 1 session':<28}{med(raw, 0):>14,.0f}{med(raw, 1):>14.1f}  {', '.join(f'{r[0]:,.0f}' for r in raw)}")
print(f"{'replay --speed max':<28}{med(rep, 0):>14,.0f}{med(rep, 1):>14.1f}  {', '.join(f'{r[0]:,.0f}' for r in rep)}")
print(f"replay / raw: {med(rep, 0) / med(raw, 0):.2f}  (pairs: {', '.join(f'{b[0] / a[0]:.2f}' for a, b in zip(raw, rep))})")
print(f"peak RSS replaying {int(sys.argv[5]):,} requests: {small[0][1]:.1f} MiB; {int(sys.argv[4]):,}: {med(rep, 1):.1f} MiB")
PY
echo "load average at the end $(cut -d' ' -f1-3 /proc/loadavg)"
