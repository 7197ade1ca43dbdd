#!/usr/bin/env bash
# open-loop.sh — how precisely dbio's open loop (`--rate`) keeps its
# schedule, and dbio against fio's `--rate_iops` on the same target (issue 28
# item 6). On a tmpfs file (O_DIRECT works there; the engine, not a device,
# is the limit), alternating runs (dbio poisson, dbio uniform, fio poisson,
# then an unpaced dbio run for the ceiling), it prints per run: the rate
# asked, that fell due and achieved, the issue lateness (p50, p99, p99.9, the
# share later than 10 µs) and the service times, as a Markdown table.
# dbio's sessions share one schedule at the whole rate (a due request is
# taken by whichever session is free); fio's jobs each keep their own.
#
# With --curve instead: each round a `dbio curve --points 100` (its
# closed-loop maximum, then an open-loop run at 100% of it) and a plain
# unpaced `dbio run` of the same settings, and the 100% point's achieved
# rate against the plain run's I/O/s (issue 28 item 6: at least 0.97).
#
# Usage: bench/open-loop.sh [--pairs N] [--time S] [--rate N] [--sessions N]
#                           [--dbio PATH] [--rt] [--curve] [--no-fio]
#   --pairs N     rounds (default 3)
#   --time S      measured seconds per run after a 1 s ramp (default 10)
#   --rate N      requests per second asked in total (default 200000)
#   --sessions N  psync sessions / fio jobs sharing the rate (default 2)
#   --dbio PATH   dbio binary (default: target/release/dbio, built if missing)
#   --rt          run both tools under `chrt -f 10` (SCHED_FIFO), as on a
#                 quiet machine when other jobs load this one
#   --curve       the curve's 100% point against an unpaced run (no fio)
#   --no-fio      leave fio's rows out (A/B of two dbio builds: run the
#                 script once per build, alternately)
#
# Needs fio and python3. Writes nothing but its temp directory on /dev/shm.
set -euo pipefail

BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$BENCH_DIR/.." && pwd)
PAIRS=3
TIME=10
RATE=200000
SESSIONS=2
DBIO=""
RT=()
CURVE=""
FIO=1

usage() { sed -n '2,30p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }
die() { echo "open-loop: $*" >&2; exit 1; }

while [[ $# -gt 0 ]]; do
    case "$1" in
        --pairs) PAIRS=${2:?}; shift 2 ;;
        --time) TIME=${2:?}; shift 2 ;;
        --rate) RATE=${2:?}; shift 2 ;;
        --sessions) SESSIONS=${2:?}; shift 2 ;;
        --dbio) DBIO=${2:?}; shift 2 ;;
        --rt) RT=(chrt -f 10); shift ;;
        --curve) CURVE=1; shift ;;
        --no-fio) FIO=""; shift ;;
        -h|--help) usage; exit 0 ;;
        *) usage >&2; die "unknown argument: $1" ;;
    esac
done
for n in "$PAIRS" "$TIME" "$RATE" "$SESSIONS"; do
    [[ $n =~ ^[1-9][0-9]*$ ]] || die "--pairs, --time, --rate and --sessions want positive integers"
done
(( RATE % SESSIONS == 0 )) || die "--rate must be a multiple of --sessions (fio's rate is per job)"
[[ -z $FIO ]] || command -v fio >/dev/null || die "needs fio"
if [[ -z $DBIO ]]; then
    DBIO=$REPO/target/release/dbio
    [[ -x $DBIO ]] || (cd "$REPO" && cargo build --release --bin dbio)
fi

WORK=$(mktemp -d /dev/shm/dbio-open-loop.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
export DBIO_DB=$WORK/store.sqlite
TARGET=$WORK/data
FILE_MB=256

dbio_run() { # arrival (or "none"): prints one JSON document
    local rate=()
    [[ $1 != none ]] && rate=(--rate "$RATE" --arrival "$1")
    "${RT[@]}" "$DBIO" run --json --quiet --target "$TARGET" --size ${FILE_MB}m \
        --pattern randread --bs 4k --engine psync --sessions "$SESSIONS" \
        --time "$TIME" --ramp 1 "${rate[@]}"
}

fio_run() {
    "${RT[@]}" fio --name=ol --filename="$TARGET/dbio-data-0000.dat" --rw=randread --bs=4k \
        --direct=1 --ioengine=psync --numjobs="$SESSIONS" --rate_iops=$((RATE / SESSIONS)) \
        --rate_process=poisson --time_based --runtime="$TIME" --ramp_time=1 \
        --group_reporting --output-format=json
}

row() { # tool label < JSON
    python3 -c '
import json, sys
tool, label = sys.argv[1], sys.argv[2]
j = json.load(sys.stdin)
us = lambda v: "%.1f" % v
if tool == "fio":
    r = j["jobs"][0]["read"]; p = r["clat_ns"]["percentile"]
    print("| fio | %s | - | %.0f | - | - | - | - | - | %s | %s |" % (label, r["iops"],
          us(p["50.000000"] / 1e3), us(p["99.000000"] / 1e3)))
    sys.exit()
r = j["read"]; l = r["latency"]; o = j.get("open_loop")
if o is None:
    print("| dbio | %s | - | %.0f | - | - | - | - | - | %s | %s |" % (label, r["iops"], us(l["p50_us"]), us(l["p99_us"])))
    sys.exit()
lt = o["lateness"]["latency"]
print("| dbio | %s | %.0f | %.0f | %s | %s | %s | %s | %.1f | %s | %s |" % (label, o["due_per_s"],
      o["achieved_per_s"], us(lt["p50_us"]), us(lt["p90_us"]), us(lt["p99_us"]), us(lt["p99_9_us"]),
      o["lateness"]["late_pct"], us(l["p50_us"]), us(l["p99_us"])))
' "$@"
}

curve_rounds() { # the curve's 100% point against a plain unpaced run
    echo "curve --points 100 against an unpaced run, $SESSIONS psync sessions, 4 KiB random reads of a ${FILE_MB} MiB tmpfs file, ${TIME} s after 1 s ramp; $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
    echo
    echo "| round | curve max /s | 100% asked /s | 100% achieved /s | lateness p99 µs | unpaced /s | achieved ÷ unpaced |"
    echo "|---|---|---|---|---|---|---|"
    local i
    for ((i = 1; i <= PAIRS; i++)); do
        "${RT[@]}" "$DBIO" curve --quiet --name "c$i" --points 100 --target "$TARGET" \
            --size ${FILE_MB}m --pattern randread --bs 4k --engine psync \
            --sessions "$SESSIONS" --time "$TIME" --ramp 1 > "$WORK/curve-$i.txt"
        local ids
        ids=$(awk '$1 == "max" || $1 == "100%" { print $2 }' "$WORK/curve-$i.txt")
        set -- $ids
        [[ $# -eq 2 ]] || die "curve c$i: no max and 100% rows in $(cat "$WORK/curve-$i.txt")"
        "$DBIO" runs show --json "$1" > "$WORK/max-$i.json"
        "$DBIO" runs show --json "$2" > "$WORK/full-$i.json"
        dbio_run none > "$WORK/plain-$i.json"
        python3 - "$WORK" "$i" <<'PY'
import json, sys
w, i = sys.argv[1], sys.argv[2]
m = json.load(open(f"{w}/max-{i}.json"))
f = json.load(open(f"{w}/full-{i}.json"))
p = json.load(open(f"{w}/plain-{i}.json"))
o = f["open_loop"]
print("| %s | %.0f | %.0f | %.0f | %.1f | %.0f | %.3f |" % (i, m["total"]["iops"], o["asked_per_s"],
      o["achieved_per_s"], o["lateness"]["latency"]["p99_us"], p["total"]["iops"],
      o["achieved_per_s"] / p["total"]["iops"]))
PY
    done
    echo
    echo "load at the end $(cut -d' ' -f1-3 /proc/loadavg)"
}

# Lay the file out once (an --ops run), outside every measurement.
"$DBIO" run --quiet --target "$TARGET" --size ${FILE_MB}m --pattern randread --bs 4k --sessions 1 --ops 1 >/dev/null

if [[ -n $CURVE ]]; then
    curve_rounds
    exit
fi

echo "open loop at $RATE/s, $SESSIONS psync sessions, 4 KiB random reads of a ${FILE_MB} MiB tmpfs file, ${TIME} s after 1 s ramp; $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| tool | arrivals | fell due /s | achieved /s | lateness p50 µs | p90 µs | p99 µs | p99.9 µs | late > 10 µs % | service p50 µs | p99 µs |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
for ((i = 1; i <= PAIRS; i++)); do
    dbio_run poisson | row dbio poisson
    dbio_run uniform | row dbio uniform
    [[ -z $FIO ]] || fio_run | row fio poisson
    dbio_run none | row dbio "unpaced"
done
echo
echo "load at the end $(cut -d' ' -f1-3 /proc/loadavg)"
