#!/usr/bin/env bash
# memory.sh — dbio's peak resident memory per session, for one or two
# binaries (e.g. before and after a change), raw and slob, over a session
# sweep. Peak RSS is /usr/bin/time's maximum resident set of the process;
# the per-session figure is (peak RSS - the buffer cache) / sessions (the
# data is on the target, not in dbio's memory), so it includes the fixed
# cost of the process spread over the sessions.
#
#   bench/memory.sh --dir /dev/shm/mem [--a BIN] [--b BIN]
#       [--sessions "128 1024 4096"] [--cache 256M] [--time 2]
#
# slob: --schemas 8 --threads-per-schema N/8 --scale 10000 --update-pct 25;
# raw: --pattern randrw --read-pct 80 --size 625M (the same data), psync.
# Everything it creates under --dir is removed on exit.
set -euo pipefail
A=""; B=""; DIR=""; SESSIONS="128 1024 4096"; CACHE=256M; TIME=2
while [ $# -gt 0 ]; do
    case $1 in
        --a) A=$2; shift 2;; --b) B=$2; shift 2;; --dir) DIR=$2; shift 2;;
        --sessions) SESSIONS=$2; shift 2;; --cache) CACHE=$2; shift 2;;
        --time) TIME=$2; shift 2;;
        *) echo "memory.sh: unknown option $1" >&2; exit 2;;
    esac
done
[ -n "$DIR" ] || { echo "memory.sh: --dir DIR is required (e.g. /dev/shm/mem)" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "memory.sh: needs /usr/bin/time (Debian package time)" >&2; exit 2; }
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
[ -n "$A" ] || A="${CARGO_TARGET_DIR:-$REPO/target}/release/dbio"
mkdir -p "$DIR"
WORK=$(mktemp -d "$DIR/memory.XXXXXX")
trap 'rm -rf "$WORK"' EXIT INT TERM
cp "$A" "$WORK/a"; [ -z "$B" ] || cp "$B" "$WORK/b"
export DBIO_DB="$WORK/store.sqlite"
bins="a"; [ -z "$B" ] || bins="a b"
cache_kib=$(( $(numfmt --from=iec "$CACHE") / 1024 ))

peak_kib() { # bin workload sessions -> peak RSS in KiB
    local bin=$WORK/$1 w=$2 n=$3
    if [ "$w" = raw ]; then
        /usr/bin/time -f %M -o "$WORK/rss" "$bin" run --json --quiet --target "$WORK/raw" \
            --size 625M --pattern randrw --read-pct 80 --sessions "$n" --time "$TIME" > "$WORK/out"
    else
        /usr/bin/time -f %M -o "$WORK/rss" "$bin" run --json --quiet --workload slob --target "$WORK/slob" \
            --schemas 8 --threads-per-schema $((n / 8)) --scale 10000 --cache "$CACHE" \
            --update-pct 25 --time "$TIME" > "$WORK/out" 2> "$WORK/err" || { cat "$WORK/err" >&2; return 1; }
    fi
    tail -1 "$WORK/rss"
}

echo "peak RSS (MiB) and KiB per session beyond the cache ($CACHE for slob); $TIME s runs on $DIR"
echo "| workload | sessions |$(for b in $bins; do printf ' %s peak MiB | %s KiB/session |' "$b" "$b"; done)"
echo "|---|---:|$(for _ in $bins; do printf -- '---:|---:|'; done)"
for w in raw slob; do
    for n in $SESSIONS; do
        line="| $w | $n |"
        for b in $bins; do
            k=$(peak_kib "$b" "$w" "$n" || echo nan)
            c=0; [ "$w" = slob ] && c=$cache_kib
            line+=$(python3 -c "k=float('$k'); print(f' {k/1024:,.0f} | {(k-$c)/$n:,.0f} |')")
        done
        echo "$line"
    done
done
