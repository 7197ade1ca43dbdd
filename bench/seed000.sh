#!/usr/bin/env bash
# Seed 000's experiment with dbio's SLOB model: ext4 vs XFS on two loop
# devices with direct I/O (so I/O reaches the real disk), 16 sessions,
# UPDATE_PCT 20, WORK_UNIT 256, REDO_STRESS HEAVY, SCALE 10000, a 16M buffer
# cache, 120 s per run after a 10 s ramp, 3 repeats, with ONE datafile and
# with 8 datafiles. Everything it creates (images, loop devices, mounts)
# lives under $WORK and is removed at exit, even on failure or Ctrl-C.
#
#   bench/seed000.sh [TIME_S] [REPEATS]     (needs root, mkfs.xfs)
#   ENGINE=psync bench/seed000.sh           (the DB writer writes one block at a
#                                            time; default io_uring: batches in
#                                            flight at once, as Oracle's async I/O)
set -euo pipefail
TIME=${1:-120}
REPEATS=${2:-3}
DBIO=${DBIO:-$(dirname "$0")/../target/release/dbio}
WORK=${WORK:-/var/tmp/dbio-seed000}
export DBIO_DB=${DBIO_DB:-$WORK/results.sqlite}
IMG_SIZE=${IMG_SIZE:-6G}
ENGINE=${ENGINE:-io_uring}
PLAN=seed000-slob-$ENGINE

mkdir -p "$WORK"
LOOPS=()
cleanup() {
    for fs in ext4 xfs; do mountpoint -q "$WORK/$fs" && umount "$WORK/$fs"; done
    for l in "${LOOPS[@]}"; do losetup -d "$l" 2>/dev/null || true; done
    rm -f "$WORK"/ext4.img "$WORK"/xfs.img
}
trap cleanup EXIT INT TERM

for fs in ext4 xfs; do
    truncate -s "$IMG_SIZE" "$WORK/$fs.img"
    dev=$(losetup -f --show --direct-io=on "$WORK/$fs.img")
    LOOPS+=("$dev")
    if [ "$fs" = ext4 ]; then mkfs.ext4 -q -F "$dev"; else mkfs.xfs -q -f "$dev"; fi
    mkdir -p "$WORK/$fs"
    mount -o noatime "$dev" "$WORK/$fs"
done

cat > "$WORK/seed000.toml" <<TOML
name = "$PLAN"
description = "SLOB UPDATE_PCT 20 on one vs 8 datafiles, ext4 vs XFS on direct-io loop devices"
repeats = $REPEATS
warmup = 0

[workload]
workload = "slob"
dbwr_engine = "$ENGINE"
time = $TIME
ramp = 10
sessions = 16
scale = "10000"
work_unit = 256
redo_stress = "heavy"
update_pct = 20
cache = "16M"

[variables]
EXT4-1df = { target = "$WORK/ext4/d1", files = 1 }
XFS-1df = { target = "$WORK/xfs/d1", files = 1 }
EXT4-8df = { target = "$WORK/ext4/d8", files = 8 }
XFS-8df = { target = "$WORK/xfs/d8", files = 8 }

[steps]
before_run = "sync; echo 3 > /proc/sys/vm/drop_caches"
TOML

"$DBIO" plan run "$WORK/seed000.toml"
for m in db.physical_reads_s db.physical_writes_s event.db_file_sequential_read.avg_ms event.log_file_sync.avg_ms db.redo_mbs event.free_buffer_waits.avg_ms; do
    echo "## $m"
    "$DBIO" report --plan "$PLAN" --metric "$m" --format markdown --stats 2>/dev/null ||
        "$DBIO" report --plan "$PLAN" --metric "$m" --format markdown
done
