#!/usr/bin/env bash
# curve-vs-fio.sh — `dbio curve` of a really slow device beside fio's numbers
# at the same rates (issue 28's closing curve). A 64 MiB direct-I/O loop
# device (image in /var/tmp, filled with data) throttled by the block I/O
# cgroup (v1 blkio.throttle.read_iops_device; io.max under v2); every tool
# started inside that cgroup. Each repetition: `dbio curve` (4 KiB random
# psync reads, N sessions, its maximum then --points), fio at the maximum
# (closed loop) and at each point's asked rate (--rate_iops per job,
# --rate_process=poisson, as many jobs as sessions, their starts staggered:
# see fio_at), then the points above
# the maximum (--over: `dbio run --rate`, then fio at the same rate).
# Prints per point the medians over the repetitions: the rate asked, both
# tools' achieved rates, dbio's due-time and service p50/p99, fio's clat
# p50/p99 (fio times a request from its issue only: it has no due time),
# then every repetition's numbers.
#
# Usage: bench/curve-vs-fio.sh [--reps N] [--time S] [--sessions N]
#            [--throttle IOPS] [--points LIST] [--over LIST]
#            [--arrival poisson|uniform] [--rt] [--dbio PATH]
#   --reps N        repetitions (default 3)
#   --time S        seconds per run, after a 1 s ramp (default 10)
#   --sessions N    psync sessions, fio jobs (default 40)
#   --throttle N    reads/s the cgroup lets the device serve (default 400)
#   --points LIST   the curve's percentages of its maximum (default 10,50,70,80,90,100)
#   --over LIST     percentages of the maximum above it, run by `dbio run
#                   --rate` (default 110,120; "" for none)
#   --arrival A     poisson (fio --rate_process=poisson, default) or
#                   uniform (fio --rate_process=linear)
#   --rt            both tools under SCHED_FIFO 10 (chrt -f 10): on a loaded
#                   machine a thread that slept otherwise waits for a CPU,
#                   which both tools would count as latency
#   --dbio PATH     dbio binary (default target/release/dbio, else target/debug/dbio)
#
# Needs root (losetup, the cgroup), fio and python3. Writes only its temp
# directory; removes the loop device, image, cgroup and store at exit, also
# after an error or Ctrl-C.
set -euo pipefail

BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$BENCH_DIR/.." && pwd)
REPS=3
TIME=10
SESSIONS=40
THROTTLE=400
POINTS=10,50,70,80,90,100
OVER=110,120
ARRIVAL=poisson
PRIO=()
DBIO=""

usage() { sed -n '2,33p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }
die() { echo "curve-vs-fio: $*" >&2; exit 1; }

while [[ $# -gt 0 ]]; do
    case "$1" in
        --reps) REPS=${2:?}; shift 2 ;;
        --time) TIME=${2:?}; shift 2 ;;
        --sessions) SESSIONS=${2:?}; shift 2 ;;
        --throttle) THROTTLE=${2:?}; shift 2 ;;
        --points) POINTS=${2:?}; shift 2 ;;
        --over) OVER=${2?}; shift 2 ;;
        --arrival) ARRIVAL=${2:?}; shift 2 ;;
        --rt) PRIO=(chrt -f 10); shift ;;
        --dbio) DBIO=${2:?}; shift 2 ;;
        -h|--help) usage; exit 0 ;;
        *) usage >&2; die "unknown argument: $1" ;;
    esac
done
for n in "$REPS" "$TIME" "$SESSIONS" "$THROTTLE"; do
    [[ $n =~ ^[1-9][0-9]*$ ]] || die "--reps, --time, --sessions and --throttle want positive integers, not '$n'"
done
for list in "$POINTS" "$OVER"; do
    [[ -z $list || $list =~ ^[1-9][0-9]*(,[1-9][0-9]*)*$ ]] ||
        die "--points and --over want percentages separated by commas (10,50,100), not '$list'"
done
[[ -n $POINTS ]] || die "--points wants at least one percentage"
case "$ARRIVAL" in
    poisson) PROCESS=poisson ;;
    uniform) PROCESS=linear ;;
    *) die "--arrival wants poisson or uniform, not '$ARRIVAL'" ;;
esac
(( EUID == 0 )) || die "needs root (losetup, the block I/O cgroup)"
command -v fio >/dev/null || die "needs fio"
command -v python3 >/dev/null || die "needs python3"
if [[ -z $DBIO ]]; then
    DBIO=$REPO/target/release/dbio
    [[ -x $DBIO ]] || DBIO=$REPO/target/debug/dbio
fi
[[ -x $DBIO ]] || die "no dbio binary at $DBIO (cargo build, or --dbio PATH)"

# The cgroup: v1's blkio controller, else v2's io controller.
if [[ -d /sys/fs/cgroup/blkio ]]; then
    CG_VERSION=1
    CG_ROOT=/sys/fs/cgroup/blkio
elif grep -qw io /sys/fs/cgroup/cgroup.controllers 2>/dev/null; then
    CG_VERSION=2
    CG_ROOT=/sys/fs/cgroup
else
    die "needs the block I/O cgroup: /sys/fs/cgroup/blkio (v1) or the io controller in /sys/fs/cgroup (v2)"
fi

WORK=$(mktemp -d /var/tmp/dbio-curve-vs-fio.XXXXXX)
DEV=""
CG=$CG_ROOT/dbio-curve-vs-fio-$$
IO_ENABLED=""
cleanup() {
    if [[ -d $CG ]]; then
        while read -r pid; do
            echo "$pid" > "$CG_ROOT/cgroup.procs" 2>/dev/null || true
        done < "$CG/cgroup.procs"
        rmdir "$CG" || echo "curve-vs-fio: cannot remove the cgroup $CG" >&2
    fi
    if [[ -n $IO_ENABLED ]]; then
        echo "-io" > "$CG_ROOT/cgroup.subtree_control" 2>/dev/null || true
    fi
    if [[ -n $DEV ]]; then
        losetup -d "$DEV" || echo "curve-vs-fio: cannot detach $DEV" >&2
    fi
    rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# A copy of the binary: a rebuild during the bench does not change it.
cp "$DBIO" "$WORK/dbio"
DBIO=$WORK/dbio
export DBIO_DB=$WORK/store.sqlite

truncate -s 64M "$WORK/disk.img"
DEV=$(losetup -f --show --direct-io=on "$WORK/disk.img")
# Data, not holes (which the filesystem under the image answers unread).
dd if=/dev/urandom of="$DEV" bs=1M count=64 oflag=direct status=none
MM=$(stat -L -c '%t %T' "$DEV")
MM="$((16#${MM% *})):$((16#${MM#* }))"
mkdir "$CG"
if [[ $CG_VERSION == 1 ]]; then
    echo "$MM $THROTTLE" > "$CG/blkio.throttle.read_iops_device"
    echo "$MM $THROTTLE" > "$CG/blkio.throttle.write_iops_device"
else
    if ! grep -qw io "$CG_ROOT/cgroup.subtree_control"; then
        echo "+io" > "$CG_ROOT/cgroup.subtree_control"
        IO_ENABLED=1
    fi
    echo "$MM riops=$THROTTLE wiops=$THROTTLE" > "$CG/io.max"
fi

inside() { # the command inside the cgroup, at the priority asked
    sh -c 'echo $$ > "$0/cgroup.procs" && exec "$@"' "$CG" "${PRIO[@]}" "$@"
}

SHAPE=(--target "$DEV" --pattern randread --bs 4k --engine psync --sessions "$SESSIONS"
       --time "$TIME" --ramp 1)

# Paced, fio's jobs start one after another (each a job section of its own,
# --startdelay): fio's rate is per job, and each job issues its first request
# the moment its rate clock starts — at its start, and again at its first
# completion after --ramp_time (which restarts the clock) — so jobs started
# together would send the device a burst of one request each, twice. Evenly
# spaced (linear), job j starts j/rate s after the first: the jobs' schedules
# interleave into one at the whole rate, as dbio's sessions share one.
# Poisson, below the maximum they start over STAGGER_S seconds, so that the
# request each job issues beyond its rate when the ramp ends is spread over
# that time instead of reaching the throttle together. Above the maximum
# (saturated) they start j/rate apart too: jobs whose windows are seconds
# apart share the device unevenly (those still running at the end get all
# of it), which inflated fio's rate there (421/s through a 400/s throttle).
STAGGER_S=2

fio_at() { # output file, total rate (0: closed loop), seed, "spread" (Poisson below the maximum)
    local rate=() jobs=(--name=curve --numjobs="$SESSIONS")
    if (( $2 > 0 )); then
        # fio's rate is per job; at least one request per second each.
        local per=$(( ($2 + SESSIONS / 2) / SESSIONS ))
        (( per > 0 )) || per=1
        rate=(--rate_iops="$per" --rate_process="$PROCESS")
        local step_us=$(( 1000000 / (per * SESSIONS) )) j
        [[ $PROCESS == poisson && ${4:-} == spread ]] && step_us=$(( STAGGER_S * 1000000 / SESSIONS ))
        jobs=()
        for ((j = 0; j < SESSIONS; j++)); do
            jobs+=(--name="curve$j" --startdelay=$(( j * step_us ))us)
        done
    fi
    inside fio --filename="$DEV" --rw=randread --bs=4k --direct=1 \
        --ioengine=psync "${rate[@]}" --norandommap --randrepeat=0 \
        --randseed="$3" --time_based --runtime="$TIME" --ramp_time=1 \
        --group_reporting --output-format=json "${jobs[@]}" > "$1"
}

field() { # JSON file, dotted path: the number there
    python3 -c 'import json, sys
v = json.load(open(sys.argv[1]))
for k in sys.argv[2].split("."):
    v = v[k]
print(v)' "$1" "$2"
}

LABELS=(max)
IFS=, read -r -a PCTS <<< "$POINTS"
for p in "${PCTS[@]}"; do LABELS+=("$p%"); done
OVERS=()
[[ -n $OVER ]] && IFS=, read -r -a OVERS <<< "$OVER"
for p in "${OVERS[@]}"; do LABELS+=("$p%"); done

LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)
echo "curve-vs-fio: $(nproc) CPUs, load $LOAD_START, cgroup v$CG_VERSION throttle $THROTTLE reads/s, $SESSIONS sessions, ${TIME} s runs after 1 s ramp, $ARRIVAL arrivals, $REPS reps${PRIO:+, SCHED_FIFO 10}" >&2
for ((i = 1; i <= REPS; i++)); do
    echo "rep $i: dbio curve" >&2
    inside "$DBIO" curve --quiet --name "rep$i" "${SHAPE[@]}" --points "$POINTS" \
        --arrival "$ARRIVAL" --seed "$i" > "$WORK/curve-$i.txt"
    # The table's rows: point, run id, ...
    while read -r label id _; do
        "$DBIO" runs show --json "$id" > "$WORK/dbio-$i-$label.json"
    done < <(awk '$1 == "max" || $1 ~ /^[0-9]+%$/ { print $1, $2 }' "$WORK/curve-$i.txt")
    [[ -s $WORK/dbio-$i-max.json ]] || die "rep $i: no maximum in the curve's table: $(cat "$WORK/curve-$i.txt")"
    max=$(field "$WORK/dbio-$i-max.json" total.iops)
    echo "rep $i: fio at the curve's points (maximum $max/s)" >&2
    fio_at "$WORK/fio-$i-max.json" 0 "$i"
    for p in "${PCTS[@]}"; do
        f=$WORK/dbio-$i-$p%.json
        [[ -s $f ]] || continue # a point the curve left out
        asked=$(field "$f" open_loop.asked_per_s)
        fio_at "$WORK/fio-$i-$p%.json" "${asked%.*}" "$i" spread
    done
    for p in "${OVERS[@]}"; do
        rate=$(python3 -c 'import sys; print(round(float(sys.argv[1]) * int(sys.argv[2]) / 100))' "$max" "$p")
        echo "rep $i: $p% of the maximum, $rate/s: dbio run, fio" >&2
        inside "$DBIO" run --json --quiet "${SHAPE[@]}" --rate "$rate" --arrival "$ARRIVAL" \
            --seed "$i" > "$WORK/dbio-$i-$p%.json"
        fio_at "$WORK/fio-$i-$p%.json" "$rate" "$i"
    done
done
LOAD_END=$(cut -d' ' -f1-3 /proc/loadavg)

python3 - "$WORK" "$REPS" "$SESSIONS" "$TIME" "$LOAD_START" "$LOAD_END" "${LABELS[@]}" <<'PY'
import json, os, statistics, sys

work, reps, sessions, time_s = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
load_start, load_end, labels = sys.argv[5], sys.argv[6], sys.argv[7:]

def load(path):
    return json.load(open(path)) if os.path.exists(path) else None

def dbio_row(d):
    """asked, achieved, saturated, due p50/p99, service p50/p99 (µs)."""
    ol = d.get("open_loop")
    lat = d["total"]["latency"]
    if ol is None:
        return [None, d["total"]["iops"], None, None, None, lat["p50_us"], lat["p99_us"]]
    due = d["total"]["due"]
    return [ol["asked_per_s"], ol["achieved_per_s"], ol["saturated"],
            due["p50_us"], due["p99_us"], lat["p50_us"], lat["p99_us"]]

def fio_row(f):
    """asked (jobs x per-job rate), achieved, clat p50/p99 (µs)."""
    job = f["jobs"][0]
    r, p = job["read"], job["read"]["clat_ns"]["percentile"]
    # Paced, the rate is a global option (each job a section of its own).
    per = f.get("global options", {}).get("rate_iops") or job["job options"].get("rate_iops")
    asked = int(per) * sessions if per else None
    return [asked, r["iops"], p["50.000000"] / 1e3, p["99.000000"] / 1e3]

rows = {}
for label in labels:
    for i in range(1, reps + 1):
        d = load(f"{work}/dbio-{i}-{label}.json")
        f = load(f"{work}/fio-{i}-{label}.json")
        if d is not None and f is not None:
            rows.setdefault(label, []).append((i, dbio_row(d), fio_row(f)))

def med(values):
    v = [x for x in values if x is not None]
    return statistics.median(v) if v else None

def ms(us):
    return "-" if us is None else f"{us / 1e3:.2f}"

def rate(r):
    return "-" if r is None else f"{r:.0f}"

print(f"| point | asked /s | fio asked /s | dbio achieved /s | fio achieved /s | saturated | "
      f"dbio due p50 ms | dbio due p99 ms | dbio service p50 ms | dbio service p99 ms | "
      f"fio clat p50 ms | fio clat p99 ms |")
print("|---|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|")
for label in labels:
    if label not in rows:
        continue
    rs = rows[label]
    d = [med(r[1][k] for r in rs) for k in range(7)]
    f = [med(r[2][k] for r in rs) for k in range(4)]
    sat = [r[1][2] for r in rs if r[1][2] is not None]
    verdict = "-" if not sat else f"{sum(sat)} of {len(sat)}"
    print(f"| {label} | {rate(d[0])} | {rate(f[0])} | {rate(d[1])} | {rate(f[1])} | {verdict} | "
          f"{ms(d[3])} | {ms(d[4])} | {ms(d[5])} | {ms(d[6])} | {ms(f[2])} | {ms(f[3])} |")
print()
print(f"Medians of {reps} repetitions; load {load_start} at the start, {load_end} at the end.")
print("fio's clat is from each request's issue: fio has no due time. fio asked = rate_iops x jobs;")
print(f"with Poisson arrivals each job also issues one request beyond its rate when --ramp_time ends")
print(f"(its rate clock restarts): {sessions} more in the window, +{sessions / time_s:.1f}/s over {time_s:g} s.")
print()
print("| point | rep | asked /s | dbio /s | fio /s | due p50 | due p99 | service p50 | service p99 | clat p50 | clat p99 |")
print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
for label in labels:
    for i, d, f in rows.get(label, []):
        print(f"| {label} | {i} | {rate(d[0])} | {rate(d[1])} | {rate(f[1])} | {ms(d[3])} | {ms(d[4])} | "
              f"{ms(d[5])} | {ms(d[6])} | {ms(f[2])} | {ms(f[3])} |")
PY
