#!/usr/bin/env bash
# pg-replay.sh — the walk-through of docs/replay.md: a PostgreSQL run
# captured on XFS, replayed on ext4. Two 2 GiB direct-io loop devices (XFS
# on A, ext4 on B); `dbio run --workload pg --capture` on A (the server's
# page cache bounded with --pg-memory so that its reads reach the device);
# the stored trace replayed on a directory of B with io_uring at the
# captured times; each device's /proc/diskstats over its run, and the
# replay's text report with its faithfulness section.
#
# Usage: bench/pg-replay.sh [--dbio BIN] [--time S] [-- PG OPTIONS…]
#   default pg options: --sessions 4 --scale 6000 --cache 16M --pg-memory 96M --update-pct 30
# Needs root, PostgreSQL (Debian's postgresql-15), mkfs.xfs, mkfs.ext4.
# Everything it makes (images, loop devices, mounts, the store) is removed
# at exit, also after an error or Ctrl-C.
set -euo pipefail
DBIO=target/release/dbio TIME=10
PG=(--sessions 4 --scale 6000 --cache 16M --pg-memory 96M --update-pct 30)
while [ $# -gt 0 ]; do
    case $1 in
        --dbio) DBIO=$2; shift 2 ;;
        --time) TIME=$2; shift 2 ;;
        --) shift; PG=("$@"); break ;;
        *) echo "pg-replay.sh: unknown option $1" >&2; exit 2 ;;
    esac
done
[ -x "$DBIO" ] || { echo "pg-replay.sh: no dbio binary at $DBIO (cargo build --release)" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "pg-replay.sh: needs root (loop devices, mounts, tracefs)" >&2; exit 2; }
WORK=$(mktemp -d /var/tmp/dbio-pg-replay.XXXXXX)
chmod 755 "$WORK"
LOOPS=()
cleanup() {
    for m in "$WORK"/a "$WORK"/b; do
        [ -d "$m/pg" ] && "$WORK/dbio" clean --target "$m/pg" >/dev/null 2>&1 || true
        mountpoint -q "$m" && umount "$m"
    done
    for l in "${LOOPS[@]}"; do losetup -d "$l"; done
    rm -rf "$WORK"
}
trap cleanup EXIT INT TERM
cp "$DBIO" "$WORK/dbio"
DBIO=$WORK/dbio
export DBIO_DB=$WORK/store.sqlite
for side in a b; do
    truncate -s 2G "$WORK/$side.img"
    l=$(losetup -f --show --direct-io=on "$WORK/$side.img")
    LOOPS+=("$l")
    if [ $side = a ]; then mkfs.xfs -q "$l"; else mkfs.ext4 -q "$l"; fi
    mkdir "$WORK/$side"
    mount "$l" "$WORK/$side"
    chmod 755 "$WORK/$side"
done
A=${LOOPS[0]} B=${LOOPS[1]}

# reads writes read-sectors write-sectors flushes of device $1
stats() { awk -v d="${1#/dev/}" '$3 == d { print $4, $8, $6, $10, $19 }' /proc/diskstats; }
# The difference of two stats lines, as the walk-through's table.
delta() {
    python3 - "$1" "$2" <<'PY'
import sys
a, b = (list(map(int, s.split())) for s in sys.argv[1:3])
d = [y - x for x, y in zip(a, b)]
r, w, rs, ws, f = d
print(f"reads {r}, writes {w}, mean read {rs * 512 / max(r, 1):,.0f} B, mean write {ws * 512 / max(w, 1):,.0f} B, flushes {f}")
PY
}

echo "== A: XFS on $A; pg ${PG[*]} --time $TIME --capture"
"$DBIO" run --workload pg --target "$WORK/a/pg" --time "$TIME" --capture --json "${PG[@]}" \
    > "$WORK/pg.json" 2> "$WORK/pg.err"
grep -E "^captured|warning" "$WORK/pg.err" || true
ID=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["run_id"])' "$WORK/pg.json")
"$DBIO" trace convert "$ID" --output "$WORK/pg.dbtrace" >/dev/null
"$DBIO" trace show "$WORK/pg.dbtrace"

echo "== B: ext4 on $B; replay of run $ID with io_uring"
# The replay's data files laid out first (a raw run of one request), so
# that B's counters over the replay hold the replay alone.
"$DBIO" run --target "$WORK/b/replay" --size 1536M --sessions 1 --ops 1 --quiet >/dev/null
before=$(stats "$B")
"$DBIO" run --workload replay --trace "$ID" --target "$WORK/b/replay" --engine io_uring \
    --size 1536M --map scale
after=$(stats "$B")
echo "== B's /proc/diskstats over the replay (its layout before is not counted)"
delta "$before" "$after"
