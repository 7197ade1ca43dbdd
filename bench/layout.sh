#!/usr/bin/env bash
# layout.sh — dbio's layout against fio writing the same bytes the same way
# (issue 14, item 5): N streams, each writing one file of SIZE/N
# sequentially in 1 MiB O_DIRECT writes, 8 in flight through io_uring,
# preallocated, fsync at the end, fresh content in every write.
#
#   sudo bench/layout.sh [--pairs 5] [--size 2G] [--streams N] [--where "tmpfs xfs"]
#                        [--dbio BIN] [--b BIN] [--b-args "OPTIONS"]
#
# dbio: `run --files N --size SIZE --load-parallel N --ops 1` on a fresh
#   directory (the layout, then one 8k read); bandwidth = the report's
#   target.layout bytes / seconds (timed after fallocate, the fsync
#   included).
# fio:  --rw=write --bs=1M --iodepth=8 --ioengine=io_uring --direct=1
#   --numjobs=N --size=SIZE/N --refill_buffers --end_fsync=1
#   --group_reporting on a fresh directory (a file per job, preallocated
#   before fio's clock starts, end_fsync inside it); bandwidth = the
#   group's write bw.
# CPU per MiB: each process's whole CPU (user + system over all its threads,
#   io_uring's io-wq workers included, from /usr/bin/time) over the MiB
#   written; dbio's also holds its start, the one read and saving the run
#   (a few ms).
# --where: tmpfs (/dev/shm: the CPU, not a device, is the limit) and/or xfs
#   (XFS on a direct-io loop device over a file in /var/tmp; page cache
#   dropped before every run). --b BIN adds a third tool (another dbio build,
#   or the same with --b-args, e.g. "--load-parallel 1": the one-stream
#   layout). Tools take turns (dbio, fio[, b], dbio, …); medians of --pairs
#   and ratios to fio. Everything it creates is removed on exit.
set -euo pipefail
BENCH=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$BENCH/.." && pwd)
PAIRS=5; SIZE=2G; STREAMS=$(nproc); WHERE="tmpfs xfs"; DBIO=""; B=""; B_ARGS=""
while [ $# -gt 0 ]; do
    case $1 in
        --pairs) PAIRS=$2; shift 2;; --size) SIZE=$2; shift 2;;
        --streams) STREAMS=$2; shift 2;; --where) WHERE=$2; shift 2;;
        --dbio) DBIO=$2; shift 2;; --b) B=$2; shift 2;; --b-args) B_ARGS=$2; shift 2;;
        -h|--help) sed -n '2,30p' "$0" | sed 's/^# \{0,1\}//'; exit 0;;
        *) echo "layout.sh: unknown option $1 (see --help)" >&2; exit 2;;
    esac
done
[ "$EUID" -eq 0 ] || { echo "layout.sh: run as root (loop device, mount, drop_caches)" >&2; exit 2; }
command -v fio >/dev/null || { echo "layout.sh: fio is not installed (apt-get install fio)" >&2; exit 2; }
[[ $SIZE =~ ^[1-9][0-9]*G$ ]] || { echo "layout.sh: --size $SIZE: give whole GiB, e.g. 2G" >&2; exit 2; }
[[ $STREAMS =~ ^[1-9][0-9]*$ ]] || { echo "layout.sh: --streams $STREAMS: give a positive number" >&2; exit 2; }
GIB=${SIZE%G}
PER_JOB=$((GIB * 1024 / STREAMS))M
[ -n "$DBIO" ] || DBIO="${CARGO_TARGET_DIR:-$REPO/target}/release/dbio"

WORK=$(mktemp -d)
IMG=""; LOOP=""; MNT=""
cleanup() {
    rm -rf /dev/shm/dbio-layout-bench
    if [ -n "$MNT" ]; then rm -rf "$MNT"/{dbio,fio,b}; umount "$MNT" 2>/dev/null || true; rmdir "$MNT"; fi
    [ -z "$LOOP" ] || losetup -d "$LOOP" 2>/dev/null || true
    [ -z "$IMG" ] || rm -f "$IMG"
    rm -rf "$WORK"
}
trap cleanup EXIT INT TERM
cp "$DBIO" "$WORK/dbio"; [ -z "$B" ] || cp "$B" "$WORK/b"
export DBIO_DB="$WORK/store.sqlite"
tools="dbio fio"; [ -z "$B" ] || tools="dbio fio b"

setup_xfs() {
    command -v mkfs.xfs >/dev/null || { echo "layout.sh: mkfs.xfs is missing (apt-get install xfsprogs)" >&2; exit 2; }
    IMG=$(mktemp /var/tmp/dbio-layout-bench.XXXXXX)
    truncate -s $((GIB + 1))G "$IMG"
    LOOP=$(losetup -f --show --direct-io=on "$IMG")
    mkfs.xfs -q -f "$LOOP"
    MNT=$(mktemp -d /var/tmp/dbio-layout-mnt.XXXXXX)
    mount "$LOOP" "$MNT"
}

one() { # tool dir -> "MiB/s cpu_s MiB"
    local t=$1 dir=$2
    rm -rf "$dir"
    [ "$where" = tmpfs ] || { sync; echo 3 > /proc/sys/vm/drop_caches; }
    case $t in
        dbio|b)
            local bin="$WORK/dbio" extra=(--load-parallel "$STREAMS")
            if [ "$t" = b ]; then
                bin="$WORK/b"; read -r -a extra <<< "$B_ARGS"
                # --b-args may name its own stream count.
                [[ " $B_ARGS " == *" --load-parallel "* ]] || extra+=(--load-parallel "$STREAMS")
            fi
            /usr/bin/time -f "%U %S" -o "$WORK/time" "$bin" run --target "$dir" --files "$STREAMS" \
                --size "$SIZE" --ops 1 --sessions 1 --pattern randread \
                --json --quiet "${extra[@]}" > "$WORK/out.json"
            python3 - "$WORK/out.json" "$WORK/time" <<'PY'
import json, sys
lay = json.load(open(sys.argv[1]))["target"]["layout"]
assert not lay["reused"], "the layout was reused, not written"
u, s = map(float, open(sys.argv[2]).read().split()[-2:])
mib = lay["bytes"] / 2**20
print(mib / lay["seconds"], u + s, mib)
PY
            ;;
        fio)
            mkdir -p "$dir"
            /usr/bin/time -f "%U %S" -o "$WORK/time" fio --name=layout --directory="$dir" \
                --rw=write --bs=1M --iodepth=8 --ioengine=io_uring --direct=1 --numjobs="$STREAMS" \
                --size="$PER_JOB" --refill_buffers --end_fsync=1 --group_reporting \
                --output-format=json --output="$WORK/out.json" > /dev/null
            python3 - "$WORK/out.json" "$WORK/time" <<'PY'
import json, sys
w = json.load(open(sys.argv[1]))["jobs"][0]["write"]
u, s = map(float, open(sys.argv[2]).read().split()[-2:])
mib = w["io_bytes"] / 2**20
print(w["bw"] / 1024, u + s, mib)
PY
            ;;
    esac
    rm -rf "$dir"
}

echo "dbio layout vs fio: $SIZE in $STREAMS streams, $PAIRS pairs; load at start $(cut -d' ' -f1-3 /proc/loadavg)"
for where in $WHERE; do
    case $where in
        tmpfs) base=/dev/shm/dbio-layout-bench; mkdir -p "$base";;
        xfs) [ -n "$MNT" ] || setup_xfs; base=$MNT;;
        *) echo "layout.sh: --where $where: tmpfs or xfs" >&2; exit 2;;
    esac
    for i in $(seq "$PAIRS"); do
        for t in $tools; do
            one "$t" "$base/$t" >> "$WORK/$where.$t"
        done
    done
done
echo "load at end $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$WORK" "$WHERE" "$tools" "$SIZE" "$STREAMS" "$PAIRS" <<'PY'
import statistics, sys
work, where, tools, size, streams, pairs = sys.argv[1:]
tools = tools.split()
print(f"\n{size} laid out in {streams} streams; medians of {pairs} (tools taking turns)\n")
print("| target | tool | MiB/s | µs CPU per MiB | MiB/s ÷ fio | CPU/MiB ÷ fio | runs (MiB/s) |")
print("|---|---|---:|---:|---:|---:|---|")
for w in where.split():
    med = {}
    runs = {}
    for t in tools:
        rows = [list(map(float, l.split())) for l in open(f"{work}/{w}.{t}") if l.strip()]
        runs[t] = rows
        med[t] = (statistics.median(r[0] for r in rows),
                  statistics.median(r[1] / r[2] * 1e6 for r in rows))
    for t in tools:
        bw, cpu = med[t]
        fb, fc = med["fio"]
        spread = ", ".join(f"{r[0]:,.0f}" for r in runs[t])
        print(f"| {w} | {t} | {bw:,.0f} | {cpu:,.0f} | {bw / fb:.2f} | {cpu / fc:.2f} | {spread} |")
PY
