#!/usr/bin/env bash
# slob-sessions.sh — the SLOB model against raw randrw 80/20 over a session
# sweep, for one or two dbio binaries (e.g. before and after a change),
# taking turns at every session count (raw, A, B, raw, A, B, ...) so that
# drift on a shared machine hits all of them alike; medians of the rounds.
#
#   bench/slob-sessions.sh --dir /dev/shm/sweep [--a BIN] [--b BIN]
#       [--sessions "8 32 128 512 1024"] [--cache 256M] [--time 4]
#       [--rounds 1] [--update-pct 25]
#
# slob: --schemas 8 --threads-per-schema N/8 --scale 10000 (8 KiB blocks);
# raw: --pattern randrw --read-pct 80 --sessions N on 625M (the same data
# size). Per cell: physical I/O/s (slob: session reads + DB writer writes +
# redo writes, as .total.iops), CPU µs per physical I/O (.cpu.us_per_io, all
# threads), and for slob its physical reads/s, commits/s and cache hit %.
# Everything it creates under --dir is removed on exit.
set -euo pipefail
A=""; B=""; DIR=""; SESSIONS="8 32 128 512 1024"; CACHE=256M; TIME=4; ROUNDS=1; UPD=25
while [ $# -gt 0 ]; do
    case $1 in
        --a) A=$2; shift 2;; --b) B=$2; shift 2;; --dir) DIR=$2; shift 2;;
        --sessions) SESSIONS=$2; shift 2;; --cache) CACHE=$2; shift 2;;
        --time) TIME=$2; shift 2;; --rounds) ROUNDS=$2; shift 2;;
        --update-pct) UPD=$2; shift 2;;
        *) echo "slob-sessions.sh: unknown option $1" >&2; exit 2;;
    esac
done
[ -n "$DIR" ] || { echo "slob-sessions.sh: --dir DIR is required (e.g. /dev/shm/sweep)" >&2; exit 2; }
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
[ -n "$A" ] || A="$REPO/target/release/dbio"
mkdir -p "$DIR"
WORK=$(mktemp -d "$DIR/slob-sessions.XXXXXX")
trap 'rm -rf "$WORK"' EXIT INT TERM
cp "$A" "$WORK/a"; [ -z "$B" ] || cp "$B" "$WORK/b"
export DBIO_DB="$WORK/store.sqlite"
tools="raw a"; [ -z "$B" ] || tools="raw a b"

run() { # tool sessions -> one JSON line summary
    local t=$1 n=$2 bin="$WORK/a"
    [ "$t" = b ] && bin="$WORK/b"
    if [ "$t" = raw ]; then
        "$WORK/a" run --json --quiet --target "$WORK/raw" --size 625M --pattern randrw --read-pct 80 \
            --sessions "$n" --time "$TIME"
    else
        "$bin" run --json --quiet --workload slob --target "$WORK/slob" --schemas 8 \
            --threads-per-schema $((n / 8)) --scale 10000 --cache "$CACHE" --update-pct "$UPD" --time "$TIME"
    fi | python3 -c '
import json, sys
r = json.load(sys.stdin); s = r.get("slob"); m = r["measured_s"] or 1
out = [r["total"]["iops"], r["cpu"]["us_per_io"]]
if s:
    c = s["counters"]
    out += [c["physical_reads"] / m, c["transactions"] / m, s["cache_hit_pct"]]
print(" ".join(f"{x:.3f}" for x in out))'
}

for n in $SESSIONS; do
    for i in $(seq "$ROUNDS"); do
        for t in $tools; do
            run "$t" "$n" >> "$WORK/$t.$n" || echo "nan nan nan nan nan" >> "$WORK/$t.$n"
        done
    done
done
python3 - "$WORK" "$SESSIONS" "$tools" "$CACHE" "$TIME" "$ROUNDS" <<'PY'
import statistics, sys
work, sessions, tools, cache, t, rounds = sys.argv[1:]
def med(tool, n):
    rows = [list(map(float, l.split())) for l in open(f"{work}/{tool}.{n}") if l.strip()]
    return [statistics.median(col) for col in zip(*rows)]
tools = tools.split()
print(f"cache {cache}, {t} s runs, median of {rounds}; slob cols: I/O/s, CPU us/IO, reads/s, commits/s, hit %")
head = "| sessions | raw I/O/s | raw us/IO |"
for x in tools[1:]:
    head += f" {x} I/O/s | {x} us/IO | {x} reads/s | {x} commits/s | {x} hit % | {x}/raw I/O | {x}/raw us |"
print(head)
print("|" + "---:|" * (3 + 7 * (len(tools) - 1)))
for n in sessions.split():
    raw = med("raw", n)
    line = f"| {n} | {raw[0]:,.0f} | {raw[1]:.1f} |"
    for x in tools[1:]:
        v = med(x, n)
        line += f" {v[0]:,.0f} | {v[1]:.1f} | {v[2]:,.0f} | {v[3]:,.0f} | {v[4]:.0f} | {v[0]/raw[0]:.2f} | {v[1]/raw[1]:.2f} |"
    print(line)
PY
