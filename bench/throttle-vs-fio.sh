#!/usr/bin/env bash
# throttle-vs-fio.sh — dbio's open loop against fio's `--rate_iops` below a
# blkio throttle (issue 28 item 5): on a 64 MiB direct-I/O loop device
# throttled to 400 reads/s by a blkio cgroup (v1), one session / one job of
# 4 KiB random psync reads at --rate evenly spaced (dbio `--arrival
# uniform`, fio `--rate_process=linear`), the tools taking turns, each
# started inside the cgroup at the CPU priority asked. Prints per pair the
# rate, service p50/p99/mean of both and dbio's issue lateness, then the
# medians and their ratios (dbio / fio).
#
# Usage: bench/throttle-vs-fio.sh [--pairs N] [--time S] [--rate N]
#                                 [--cpu nice|fifo] [--no-throttle] [--dbio PATH]
#   --pairs N      alternating pairs (default 5)
#   --time S       seconds per run (default 8)
#   --rate N       requests per second asked (default 200, half the throttle)
#   --cpu nice     both tools at nice -15 (the tests' default), or
#         fifo     both under SCHED_FIFO 10 (chrt -f 10; default)
#   --no-throttle  the same device without the cgroup's limit
#   --dbio PATH    dbio binary (default: target/release/dbio, else target/debug/dbio)
#
# Needs root (losetup, the blkio cgroup), fio and python3. Removes its loop
# device, image, cgroup and store at exit, also after an error or Ctrl-C.
set -euo pipefail

BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$BENCH_DIR/.." && pwd)
PAIRS=5
TIME=8
RATE=200
CPU=fifo
THROTTLE=400
DBIO=""

usage() { sed -n '2,22p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }
die() { echo "throttle-vs-fio: $*" >&2; exit 1; }

while [[ $# -gt 0 ]]; do
    case "$1" in
        --pairs) PAIRS=${2:?}; shift 2 ;;
        --time) TIME=${2:?}; shift 2 ;;
        --rate) RATE=${2:?}; shift 2 ;;
        --cpu) CPU=${2:?}; shift 2 ;;
        --no-throttle) THROTTLE=""; shift ;;
        --dbio) DBIO=${2:?}; shift 2 ;;
        -h|--help) usage; exit 0 ;;
        *) usage >&2; die "unknown argument: $1" ;;
    esac
done
for n in "$PAIRS" "$TIME" "$RATE"; do
    [[ $n =~ ^[1-9][0-9]*$ ]] || die "--pairs, --time and --rate want positive integers"
done
case "$CPU" in
    nice) PRIO=(nice -n -15) ;;
    fifo) PRIO=(chrt -f 10) ;;
    *) die "--cpu wants nice or fifo, not $CPU" ;;
esac
(( EUID == 0 )) || die "needs root (losetup, the blkio cgroup)"
command -v fio >/dev/null || die "needs fio"
CG_ROOT=/sys/fs/cgroup/blkio
[[ -d $CG_ROOT ]] || die "needs the blkio cgroup (v1) at $CG_ROOT"
if [[ -z $DBIO ]]; then
    DBIO=$REPO/target/release/dbio
    [[ -x $DBIO ]] || DBIO=$REPO/target/debug/dbio
fi
[[ -x $DBIO ]] || die "no dbio binary at $DBIO (cargo build, or --dbio PATH)"

WORK=$(mktemp -d /var/tmp/dbio-throttle.XXXXXX)
DEV=""
CG=$CG_ROOT/dbio-bench-$$
cleanup() {
    if [[ -d $CG ]]; then
        while read -r pid; do echo "$pid" > "$CG_ROOT/cgroup.procs" 2>/dev/null || true; done < "$CG/cgroup.procs"
        rmdir "$CG" || true
    fi
    [[ -n $DEV ]] && losetup -d "$DEV"
    rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

truncate -s 64M "$WORK/disk.img"
DEV=$(losetup -f --show --direct-io=on "$WORK/disk.img")
# Data, not holes (which the filesystem under the image answers unread).
dd if=/dev/urandom of="$DEV" bs=1M count=64 oflag=direct status=none
mkdir "$CG"
if [[ -n $THROTTLE ]]; then
    MM=$(stat -L -c '%t %T' "$DEV")
    MM="$((16#${MM% *})):$((16#${MM#* }))"
    echo "$MM $THROTTLE" > "$CG/blkio.throttle.read_iops_device"
    echo "$MM $THROTTLE" > "$CG/blkio.throttle.write_iops_device"
fi
export DBIO_DB=$WORK/store.sqlite

inside() { # the command inside the cgroup at the priority asked
    sh -c 'echo $$ > "$0/cgroup.procs" && exec "$@"' "$CG" "${PRIO[@]}" "$@"
}

echo "# throttle-vs-fio: ${THROTTLE:-no} throttle, $RATE/s, $TIME s, $PAIRS pairs, cpu $CPU; load $(cut -d' ' -f1-3 /proc/loadavg)"
for i in $(seq "$PAIRS"); do
    inside "$DBIO" run --json --quiet --target "$DEV" --pattern randread --bs 4k \
        --engine psync --sessions 1 --time "$TIME" --rate "$RATE" --arrival uniform \
        --seed "$i" > "$WORK/dbio-$i.json"
    inside fio --name=ol --filename="$DEV" --rw=randread --bs=4k --direct=1 \
        --ioengine=psync --numjobs=1 --rate_iops="$RATE" --rate_process=linear \
        --time_based --runtime="$TIME" --randseed="$i" --output-format=json > "$WORK/fio-$i.json"
done
echo "# load at the end $(cut -d' ' -f1-3 /proc/loadavg)"

python3 - "$WORK" "$PAIRS" <<'PY'
import json, statistics, sys
work, pairs = sys.argv[1], int(sys.argv[2])
rows = []
print("| pair | dbio /s | fio /s | dbio p50 µs | fio p50 µs | dbio p99 µs | fio p99 µs | dbio mean µs | fio mean µs | dbio late % | dbio lateness p50 µs |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
for i in range(1, pairs + 1):
    d = json.load(open(f"{work}/dbio-{i}.json"))
    f = json.load(open(f"{work}/fio-{i}.json"))["jobs"][0]["read"]
    lat, ol, p = d["read"]["latency"], d["open_loop"], f["clat_ns"]["percentile"]
    row = (ol["achieved_per_s"], f["iops"], lat["p50_us"], p["50.000000"] / 1e3,
           lat["p99_us"], p["99.000000"] / 1e3, lat["mean_us"], f["clat_ns"]["mean"] / 1e3)
    rows.append(row)
    cells = " | ".join(f"{v:.1f}" for v in row)
    print(f"| {i} | {cells} | {ol['lateness']['late_pct']:.1f} | {ol['lateness']['latency']['p50_us']:.1f} |")
med = [statistics.median(r[k] for r in rows) for k in range(8)]
print()
print("| median | dbio | fio | dbio / fio |")
print("|---|---|---|---|")
for name, k in [("rate /s", 0), ("service p50 µs", 2), ("service p99 µs", 4), ("service mean µs", 6)]:
    print(f"| {name} | {med[k]:.1f} | {med[k + 1]:.1f} | {med[k] / med[k + 1]:.2f} |")
PY
