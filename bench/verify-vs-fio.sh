#!/usr/bin/env bash
# verify-vs-fio.sh — `dbio verify` against fio reading the same file
# sequentially (--rw=read --bs=1M --direct=1 --iodepth=8, io_uring so the
# depth is real) on a 4 GiB data file on XFS on a loop device with direct
# I/O, taking turns (verify, fio, fio, verify, …) with the page cache
# dropped before each, so drift of the machine falls on both. Prints every
# pair (MiB/s, verify/fio, load average), the medians and the median of the
# ratios. Also times the lost-write map's sync point at the end of a writing
# run on the same target (data files fsynced, 1 MiB map replaced), median of
# the runs. FILES=N lays the 4 GiB out as N data files (fio then reads them
# all, one job, --filename a:b:…, file_service_type=sequential: one file
# after another, as verify reads them).
#
# Usage: [FILES=N] bench/verify-vs-fio.sh DBIO [PAIRS] [IMAGE_DIR]
#   bench/verify-vs-fio.sh target/release/dbio 5 /var/tmp
# Needs root (losetup, mkfs.xfs, mount, drop_caches), fio, python3, and
# about 4.2 GiB free in IMAGE_DIR (default /var/tmp).
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: bench/verify-vs-fio.sh DBIO [PAIRS] [IMAGE_DIR]" >&2; exit 2; }
DBIO=$(realpath "$1")
PAIRS=${2:-5}
FILES=${FILES:-1}
IMAGE_DIR=${3:-/var/tmp}
WORK=$(mktemp -d)
IMG="$IMAGE_DIR/dbio-verify-bench.img"
MNT="$WORK/mnt"
LOOP=""
cleanup() {
    mountpoint -q "$MNT" && umount "$MNT"
    [ -n "$LOOP" ] && losetup -d "$LOOP"
    rm -f "$IMG"
    rm -rf "$WORK"
}
trap cleanup EXIT INT TERM
export DBIO_DB="$WORK/store.sqlite"

truncate -s 4400M "$IMG"
LOOP=$(losetup -f --show --direct-io=on "$IMG")
mkfs.xfs -q "$LOOP"
mkdir "$MNT"
mount "$LOOP" "$MNT"
T="$MNT/t"
# Lay out 4 GiB, then a short writing run (its end is a sync point).
"$DBIO" run --target "$T" --size 4G --files "$FILES" --pattern randwrite --ops 20000 --quiet > /dev/null
FILE=$(ls "$T"/dbio-data-*.dat | paste -sd:)

drop() { sync; echo 3 > /proc/sys/vm/drop_caches; }
run_verify() {
    drop
    "$DBIO" verify --target "$T" --json --quiet |
        python3 -c 'import json, sys; r = json.load(sys.stdin)["read"]; print(r["bytes"] / 1048576 / r["seconds"])' >> "$WORK/verify"
}
run_fio() {
    drop
    fio --name=read --filename="$FILE" --rw=read --bs=1M --direct=1 --iodepth=8 \
        --ioengine=io_uring --file_service_type=sequential --output-format=json |
        python3 -c 'import json, sys; print(json.load(sys.stdin)["jobs"][0]["read"]["bw"] / 1024)' >> "$WORK/fio"
}
for i in $(seq "$PAIRS"); do
    # Who goes first alternates: a device that reads faster the second time
    # favours neither.
    if [ $((i % 2)) -eq 1 ]; then run_verify; run_fio; else run_fio; run_verify; fi
    cut -d' ' -f1 /proc/loadavg >> "$WORK/load"
    # The map's sync point at the end of a writing run (stderr line).
    "$DBIO" run --target "$T" --size 4G --files "$FILES" --pattern randwrite --ops 2000 2>&1 >/dev/null |
        sed -n 's/.*lost-write map saved at sync point [0-9]* (\([0-9.]*\) ms.*/\1/p' >> "$WORK/sync"
done

python3 - "$WORK/verify" "$WORK/fio" "$WORK/sync" "$WORK/load" "$FILES" <<'PY'
import statistics, sys
v, f, s, load = ([float(l) for l in open(p) if l.strip()] for p in sys.argv[1:5])
for i, (a, b, l) in enumerate(zip(v, f, load), 1):
    print(f"pair {i}: verify {a:.0f} MiB/s  fio {b:.0f} MiB/s  verify/fio {a / b:.2f}  load {l:.1f}")
mv, mf = statistics.median(v), statistics.median(f)
mr = statistics.median(a / b for a, b in zip(v, f))
print(f"{sys.argv[5]} file(s): median verify {mv:.0f} MiB/s  median fio {mf:.0f} MiB/s  "
      f"verify/fio {mv / mf:.2f} (median of ratios {mr:.2f}; {len(v)} pairs, taking turns; "
      f"load {min(load):.1f}-{max(load):.1f})")
print("map sync point ms:", " ".join(f"{x:.1f}" for x in s), f" median {statistics.median(s):.1f}")
PY
