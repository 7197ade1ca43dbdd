#!/usr/bin/env bash
# capture-cost.sh — issue 30, item 6: what `--capture` costs the run it
# captures. The same raw run on a direct-io loop device (XFS on a file in
# /var/tmp) without and with --capture, taking turns (without, with, …),
# medians of I/O/s and the ratio; each captured run's requests and lost
# events as it said them.
#
# Usage: bench/capture-cost.sh [--pairs P] [--time S] [--dbio BIN] [-- RAW OPTIONS…]
#   default raw options: --pattern randread --bs 4k --sessions 2 --size 256M
# Needs root (losetup, mkfs.xfs, mount, tracefs). Everything it makes (image,
# loop device, mount, store) is removed at exit, also after an error or Ctrl-C.
set -euo pipefail
PAIRS=5 TIME=10 DBIO=target/release/dbio
ARGS=(--pattern randread --bs 4k --sessions 2 --size 256M)
while [ $# -gt 0 ]; do
    case $1 in
        --pairs) PAIRS=$2; shift 2 ;;
        --time) TIME=$2; shift 2 ;;
        --dbio) DBIO=$2; shift 2 ;;
        --) shift; ARGS=("$@"); break ;;
        *) echo "capture-cost.sh: unknown option $1" >&2; exit 2 ;;
    esac
done
[ -x "$DBIO" ] || { echo "capture-cost.sh: no dbio binary at $DBIO (cargo build --release)" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "capture-cost.sh: needs root (loop device, mount, tracefs)" >&2; exit 2; }
WORK="" LOOP=""
cleanup() {
    [ -n "$WORK" ] || return 0
    if mountpoint -q "$WORK/mnt"; then umount "$WORK/mnt"; fi
    if [ -n "$LOOP" ]; then losetup -d "$LOOP"; fi
    rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
WORK=$(mktemp -d /var/tmp/dbio-capture-cost.XXXXXX)
MNT=$WORK/mnt
cp "$DBIO" "$WORK/dbio"
DBIO=$WORK/dbio
export DBIO_DB=$WORK/store.sqlite
truncate -s 1G "$WORK/img"
LOOP=$(losetup -f --show --direct-io=on "$WORK/img")
mkfs.xfs -q "$LOOP"
mkdir -p "$MNT"
mount "$LOOP" "$MNT"

# One run's I/O/s from its JSON on stdin.
iops() {
    python3 -c '
import json, sys
d = json.load(sys.stdin)
print((sum((d.get(k) or {}).get("requests", 0) for k in ("read", "write"))) / d["measured_s"])'
}
run() {
    "$DBIO" run --target "$MNT/t" --time "$TIME" --json --quiet "${ARGS[@]}" "$@" 2>"$WORK/err" | iops
}

echo "raw ${ARGS[*]} --time $TIME on XFS over $LOOP (direct-io); load average $(cut -d' ' -f1-3 /proc/loadavg)"
run > /dev/null   # lays the target out
: > "$WORK/off"; : > "$WORK/on"
for i in $(seq "$PAIRS"); do
    run | tee -a "$WORK/off" | sed 's/^/without capture /'
    run --capture | tee -a "$WORK/on" | sed 's/^/with capture    /'
    grep -h "^captured" "$WORK/err" | sed 's/^/  /' || true
done
python3 - "$WORK/off" "$WORK/on" <<'PY'
import statistics, sys
off, on = ([float(l) for l in open(f)] for f in sys.argv[1:3])
a, b = statistics.median(off), statistics.median(on)
print(f"median I/O/s without --capture {a:,.0f}, with {b:,.0f}: with / without {b / a:.3f} (cost {100 * (1 - b / a):.1f}%)")
print("pairs:", ", ".join(f"{y / x:.3f}" for x, y in zip(off, on)))
PY
echo "load average at the end $(cut -d' ' -f1-3 /proc/loadavg)"
