#!/usr/bin/env bash
# capture-cost.sh — issue 30, item 6: what `--capture` costs the run it
# captures. The same raw run on a direct-io loop device (XFS on a file in
# /var/tmp) without and with --capture, taking turns (the order rotating
# from round to round), medians of I/O/s, their ratio, the median of the
# rounds' ratios and their mean with a 95% interval; dbio's CPU per I/O
# (all its threads, the capture's reader included: a cost that a busy
# host's noise hides less than the I/O/s); each captured run's requests
# and lost events as it said them,
# and the reader's CPU per request. With --vs OLD, each round also runs
# OLD with --capture (another build's capture against this one's on the
# same device, in turn).
#
# Usage: bench/capture-cost.sh [--pairs P] [--time S] [--dbio BIN] [--vs OLD] [-- RAW OPTIONS…]
#   default raw options: --pattern randread --bs 4k --sessions 2 --size 256M
# Needs root (losetup, mkfs.xfs, mount, tracefs). Everything it makes (image,
# loop device, mount, store) is removed at exit, also after an error or Ctrl-C.
set -euo pipefail
PAIRS=5 TIME=10 DBIO=target/release/dbio VS=""
ARGS=(--pattern randread --bs 4k --sessions 2 --size 256M)
while [ $# -gt 0 ]; do
    case $1 in
        --pairs) PAIRS=$2; shift 2 ;;
        --time) TIME=$2; shift 2 ;;
        --dbio) DBIO=$2; shift 2 ;;
        --vs) VS=$2; shift 2 ;;
        --) shift; ARGS=("$@"); break ;;
        *) echo "capture-cost.sh: unknown option $1" >&2; exit 2 ;;
    esac
done
[ -x "$DBIO" ] || { echo "capture-cost.sh: no dbio binary at $DBIO (cargo build --release)" >&2; exit 2; }
[ -z "$VS" ] || [ -x "$VS" ] || { echo "capture-cost.sh: --vs $VS is not an executable" >&2; exit 2; }
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
cp "$DBIO" "$WORK/dbio"   # a rebuild meanwhile does not change what is measured
DBIO=$WORK/dbio
if [ -n "$VS" ]; then cp "$VS" "$WORK/vs"; VS=$WORK/vs; fi
truncate -s 1G "$WORK/img"
LOOP=$(losetup -f --show --direct-io=on "$WORK/img")
mkfs.xfs -q "$LOOP"
mkdir -p "$MNT"
mount "$LOOP" "$MNT"

# One run's "I/O/s CPU-us-per-I/O reader-us-per-request" from its JSON in
# $WORK/out and what it said on stderr in $WORK/err (the capture's line:
# its requests and its reader's CPU; "nan" without --capture).
pick() {
    python3 - "$WORK/out" "$WORK/err" <<'PY'
import json, re, sys
d = json.load(open(sys.argv[1]))
n = sum((d.get(k) or {}).get("requests", 0) for k in ("read", "write"))
m = re.search(r"^captured (\d+) requests.*reader used ([0-9.]+) s of CPU", open(sys.argv[2]).read(), re.M)
reader = float(m[2]) * 1e6 / int(m[1]) if m and int(m[1]) else float("nan")
print(n / d["measured_s"], d["cpu"]["us_per_io"], reader)
PY
}
# run BIN STORE [OPTIONS…]: one raw run, its line.
run() {
    local bin=$1 store=$2
    shift 2
    DBIO_DB=$WORK/$store "$bin" run --target "$MNT/t" --time "$TIME" --json --quiet "${ARGS[@]}" "$@" \
        >"$WORK/out" 2>"$WORK/err"
    pick
}
said() { grep -h "^captured" "$WORK/err" | sed 's/^/  /' || true; }

echo "raw ${ARGS[*]} --time $TIME on XFS over $LOOP (direct-io); load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "each line: I/O/s, dbio's CPU µs per I/O, the capture's reader's CPU µs per request"
run "$DBIO" store.sqlite > /dev/null   # lays the target out
: > "$WORK/r-off"; : > "$WORK/r-on"; : > "$WORK/r-vs"
# One round's run of KIND (off, on or vs), its line added to $WORK/r-KIND.
one() {
    case $1 in
        off) run "$DBIO" store.sqlite | tee -a "$WORK/r-off" | sed 's/^/without capture /' ;;
        on) run "$DBIO" store.sqlite --capture | tee -a "$WORK/r-on" | sed 's/^/with capture    /'; said ;;
        vs) run "$VS" store-vs.sqlite --capture | tee -a "$WORK/r-vs" | sed 's/^/--vs, capture   /'; said ;;
    esac
}
KINDS=(off on)
if [ -n "$VS" ]; then KINDS+=(vs); fi
for i in $(seq "$PAIRS"); do
    for k in $(seq 0 $((${#KINDS[@]} - 1))); do   # rotated: no kind always first
        one "${KINDS[$(((i + k) % ${#KINDS[@]}))]}"
    done
done
python3 - "$WORK/r-off" "$WORK/r-on" "$WORK/r-vs" <<'PY'
import statistics, sys
off, on, vs = ([list(map(float, l.split())) for l in open(f)] for f in sys.argv[1:4])
med = lambda rows, k: statistics.median(r[k] for r in rows)
a = med(off, 0)
for name, rows in (("with --capture", on), ("--vs with --capture", vs)):
    if not rows:
        continue
    b = med(rows, 0)
    print(f"median I/O/s without --capture {a:,.0f}, {name} {b:,.0f}: {b / a:.3f} (cost {100 * (1 - b / a):.1f}%)")
    pairs = [y[0] / x[0] for x, y in zip(off, rows)]
    print(f"  rounds' ratios: {', '.join(f'{r:.3f}' for r in pairs)}; their median {statistics.median(pairs):.3f}")
    if len(pairs) > 2:
        # Student's t for a 95% interval (Cornish-Fisher from the normal's 1.96).
        n, z = len(pairs) - 1, 1.959964
        t = z + (z**3 + z) / (4 * n) + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * n * n)
        m, half = statistics.mean(pairs), t * statistics.stdev(pairs) / len(pairs) ** 0.5
        print(f"  their mean {m:.3f}, 95% interval [{m - half:.3f}, {m + half:.3f}] (cost {100 * (1 - m):.1f}%)")
    print(f"  CPU per I/O: {med(off, 1):.2f} µs without, {med(rows, 1):.2f} µs with "
          f"({med(rows, 1) - med(off, 1):+.2f} µs; pairs "
          + ", ".join(f"{y[1] - x[1]:+.2f}" for x, y in zip(off, rows)) + ")")
    print(f"  the capture's reader: {med(rows, 2):.2f} µs of CPU per request (runs "
          + ", ".join(f"{y[2]:.2f}" for y in rows) + ")")
PY
echo "load average at the end $(cut -d' ' -f1-3 /proc/loadavg)"
