#!/usr/bin/env bash
# report-store.sh — how long `dbio report` takes over a large results store.
#
#   bench/report-store.sh [--runs 10000] [--rounds 5] [--dbio BIN] [--dir DIR]
#
# Makes a store in DIR (default /var/tmp) from two real runs of a small plan
# (two arms, sessions 1 and 2), copied in SQL to --runs runs of one plan
# "big" (4 arms x 4 session counts, every copy with the two runs' report
# documents and metrics), then times `dbio report --plan big` and
# `dbio report --plan big --stats` (--rounds each, medians, min and max)
# and `dbio runs list` for scale. Everything it makes is removed on exit.
set -euo pipefail
RUNS=10000; ROUNDS=5; BIN=""; DIR=/var/tmp
while [ $# -gt 0 ]; do
    case $1 in
        --runs) RUNS=$2; shift 2;; --rounds) ROUNDS=$2; shift 2;;
        --dbio) BIN=$2; shift 2;; --dir) DIR=$2; shift 2;;
        -h|--help) sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit 0;;
        *) echo "report-store.sh: unknown option $1 (see --help)" >&2; exit 2;;
    esac
done
[[ $RUNS =~ ^[1-9][0-9]*$ ]] || { echo "report-store.sh: --runs wants a positive integer" >&2; exit 2; }
[[ $ROUNDS =~ ^[1-9][0-9]*$ ]] || { echo "report-store.sh: --rounds wants a positive integer" >&2; exit 2; }
command -v sqlite3 >/dev/null || { echo "report-store.sh: needs the sqlite3 shell (apt-get install sqlite3)" >&2; exit 2; }
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
if [ -z "$BIN" ]; then
    BIN=${CARGO_TARGET_DIR:-$REPO/target}/release/dbio
    [ -x "$BIN" ] || (cd "$REPO" && cargo build --release --quiet)
fi
WORK=$(mktemp -d "$DIR/dbio-report-store.XXXXXX")
trap 'rm -rf "$WORK"' EXIT INT TERM
cp "$BIN" "$WORK/dbio"
export DBIO_DB="$WORK/store.sqlite"

cat >"$WORK/seed.toml" <<EOF
name = "seed"
repeats = 1
[workload]
size = "4M"
pattern = "randrw"
io = "buffered"
ops = 2000
[sweep]
sessions = [1, 2]
[variables]
A = { target = "$WORK/a" }
EOF
"$WORK/dbio" plan run "$WORK/seed.toml" >/dev/null 2>&1

# Copies of the two seed runs into plan "big": arm V0..V3, sessions 1, 2, 4, 8.
cols=$(sqlite3 "$DBIO_DB" "select group_concat(name, ', ') from pragma_table_info('runs') where name not in ('id','plan','variable','sessions','cell_key')")
{
    echo "BEGIN;"
    for ((i = 0; i < RUNS; i++)); do
        src=$((1 + i % 2)); arm=$((i % 4)); s=$((1 << ((i / 4) % 4)))
        echo "INSERT INTO runs ($cols, plan, variable, sessions, cell_key)" \
             "SELECT $cols, 'big', 'V$arm', $s, 'V$arm|sessions=$s|rep=$i' FROM runs WHERE id = $src;"
        echo "INSERT INTO metrics SELECT last_insert_rowid(), name, value FROM metrics WHERE run_id = $src;"
    done
    echo "COMMIT;"
} | sqlite3 "$DBIO_DB"
size=$(du -m "$DBIO_DB" | cut -f1)
metrics=$(sqlite3 "$DBIO_DB" "select count(*) from metrics")

timed() { # rounds of one command -> "median min max" seconds
    local i t0 t1
    for ((i = 0; i < ROUNDS; i++)); do
        t0=$(date +%s.%N); "$@" >/dev/null; t1=$(date +%s.%N)
        awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.4f\n", b - a }'
    done | sort -g | awk '{v[NR]=$1} END {printf "%.2f %.2f %.2f\n", v[int((NR+1)/2)], v[1], v[NR]}'
}
echo "store: $RUNS copied runs of plan big (+2 seed runs), $metrics metric rows, ${size} MB; $ROUNDS rounds, seconds"
echo "| command | median s | min s | max s |"
echo "|---|---:|---:|---:|"
read -r m lo hi < <(timed "$WORK/dbio" report --plan big)
echo "| dbio report --plan big | $m | $lo | $hi |"
read -r m lo hi < <(timed "$WORK/dbio" report --plan big --stats)
echo "| dbio report --plan big --stats | $m | $lo | $hi |"
read -r m lo hi < <(timed "$WORK/dbio" runs list)
echo "| dbio runs list | $m | $lo | $hi |"
