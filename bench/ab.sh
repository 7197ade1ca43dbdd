#!/usr/bin/env bash
# ab.sh — one dbio build against another on the same slob run: the two
# binaries take turns (A, B, A, B, …) so drift of the machine falls on both,
# and the medians and B/A ratios of executes/s (operations), transactions/s,
# logical and physical reads/s, physical writes/s, session CPU µs per
# execute and the share of DB time spent in "log file switch (checkpoint
# incomplete)" are printed.
#
# Usage: bench/ab.sh DBIO_A DBIO_B [PAIRS] -- SLOB OPTIONS…
#   bench/ab.sh /tmp/dbio-old target/release/dbio 3 -- --target /dev/shm/ab \
#       --sessions 2 --scale 300000 --cache 2G --update-pct 50 \
#       --redo-file-size 16M --time 15
# The target is laid out by the first run and reused by the rest.
set -euo pipefail
[ $# -ge 3 ] || { echo "usage: bench/ab.sh DBIO_A DBIO_B [PAIRS] -- SLOB OPTIONS…" >&2; exit 2; }
A=$1 B=$2; shift 2
PAIRS=3
if [ "$1" != "--" ]; then PAIRS=$1; shift; fi
[ "${1:-}" = "--" ] || { echo "ab.sh: put -- before the slob options" >&2; exit 2; }
shift
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT INT TERM
# A store per build: a newer build migrates its store past what an older reads.

pick() {
    python3 -c '
import json, sys
s = json.load(sys.stdin)["slob"]
lp = {p["name"]: p["per_second"] for p in s["load_profile"]}
ex = lp["Executes (SQL)"]
ck = sum(e["pct_db_time"] for e in s["events"]
         if e["name"] == "log file switch (checkpoint incomplete)")
cpu_us = s["db_cpu_s"] / s["elapsed_s"] / ex * 1e6 if ex else float("nan")
print(ex, lp["Transactions"], lp["Logical read (blocks)"],
      lp["Physical read (blocks)"], lp["Physical write (blocks)"], cpu_us, ck)'
}

for i in $(seq "$PAIRS"); do
    DBIO_DB="$WORK/a.sqlite" "$A" run --workload slob --json --quiet "$@" | pick >> "$WORK/a"
    DBIO_DB="$WORK/b.sqlite" "$B" run --workload slob --json --quiet "$@" | pick >> "$WORK/b"
done

python3 - "$WORK/a" "$WORK/b" <<'PY'
import statistics, sys
rows = [[list(map(float, l.split())) for l in open(f)] for f in sys.argv[1:3]]
names = ["executes/s", "transactions/s", "logical reads/s",
         "physical reads/s", "physical writes/s",
         "session CPU us/execute", "% DB time ckpt incomplete"]
print(f"{'metric':<30}{'A median':>14}{'B median':>14}{'B/A':>8}")
for k, name in enumerate(names):
    a = statistics.median(r[k] for r in rows[0])
    b = statistics.median(r[k] for r in rows[1])
    ratio = f"{b / a:.2f}" if a else "-"
    print(f"{name:<30}{a:>14.1f}{b:>14.1f}{ratio:>8}")
print(f"({len(rows[0])} runs each, taking turns)")
PY
