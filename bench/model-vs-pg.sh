#!/usr/bin/env bash
# model-vs-pg.sh — issue 15's question: does the SLOB model (--workload slob)
# do the I/O PostgreSQL does (--workload pg) for SLOB's mix? On XFS and ext4,
# each over a direct-io loop device of its own (made as bench/innodb.sh makes
# them), the same SCALE, WORK_UNIT, UPDATE_PCT and sessions against both, the
# same buffer cache (--cache: the model's own cache, read with O_DIRECT;
# PostgreSQL's shared_buffers) and the data 16x the cache, PostgreSQL's page
# cache bounded with --pg-memory (PGMEM_MB + 2 MiB per session: shared_buffers,
# the backends and what is left for the page cache). One table/schema that
# all sessions share.
# The pg and model runs of a cell run back to back (an A/B pair), and every
# pg run holds the machine-wide database lock only while it runs, so other
# users of PostgreSQL/MariaDB interleave.
#
# Every run is stored in $OUT/store.sqlite, tagged (fs, workload, flavor,
# u<UPDATE_PCT>, s<sessions>, rep<N>), its JSON in $OUT/json; the table is made
# from `dbio runs export` by bench/model-vs-pg-table.py.
#
# Usage: sudo bench/model-vs-pg.sh [TIME_S] [SESSIONS...]   (default 8 1 4 16 64)
#   FS="xfs ext4"  UPD="0 20 50"  REPEATS=1  WORKLOADS="pg slob"
#   FLAVORS="-" (model flavors: "oracle postgres"; "-" = no --flavor option)
#   FLAVOR_TAG="" (appended to the flavor's tag, to tell builds of a flavor apart)
#   SCALE=65536 CACHE=32M PGMEM_MB=128 WORK_UNIT=64 OUT=/var/tmp/dbio-model-vs-pg
#   MODEL_ARGS="" (more options for the model's runs, e.g. "--memory 512M")
set -euo pipefail
TIME=${1:-8}; shift || true
SESSIONS=("${@:-1 4 16 64}"); read -r -a SESSIONS <<< "${SESSIONS[*]}"
read -r -a FSS <<< "${FS:-xfs ext4}"; read -r -a UPDS <<< "${UPD:-0 20 50}"
read -r -a WLS <<< "${WORKLOADS:-pg slob}"; read -r -a FLAVS <<< "${FLAVORS:--}"
REPEATS=${REPEATS:-1}; SCALE=${SCALE:-65536}; CACHE=${CACHE:-32M}; PGMEM_MB=${PGMEM_MB:-128}
WORK_UNIT=${WORK_UNIT:-64}
OUT=${OUT:-/var/tmp/dbio-model-vs-pg}; LOCK=/tmp/dbio-db-tests.lock
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BIN=$REPO/target/release/dbio; [ -x "$BIN" ] || BIN=$REPO/target/debug/dbio
WORK=$(mktemp -d /var/tmp/dbio-mvp.XXXXXX)
chmod 755 "$WORK"   # the postgres user must reach the target under it
IMG=$WORK/fs.img; MNT=$WORK/mnt; DEV=
mkdir -p "$OUT/json"
teardown() {
    if [ -d "$MNT/pg" ]; then flock "$LOCK" "$WORK/dbio" clean --target "$MNT/pg" >/dev/null 2>&1 || true; fi
    if [ -d "$MNT/slob" ]; then "$WORK/dbio" clean --target "$MNT/slob" >/dev/null 2>&1 || true; fi
    if mountpoint -q "$MNT"; then umount "$MNT"; fi
    if [ -n "$DEV" ]; then losetup -d "$DEV"; DEV=; fi
    rm -f "$IMG"
}
cleanup() { teardown; rm -rf "$WORK"; }
trap cleanup EXIT INT TERM
cp "$BIN" "$WORK/dbio"
export DBIO_DB=$OUT/store.sqlite
# One run; a pg run under the lock. Tags say which cell it is.
run() {
    local wl=$1 fs=$2 u=$3 s=$4 rep=$5 flav=$6; shift 6
    local name="$wl-$flav-$fs-u$u-s$s-rep$rep" lock=()
    [ "$wl" = pg ] && lock=(flock "$LOCK")
    echo "$(date -u +%T) $name load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
    "${lock[@]}" "$WORK/dbio" run --json --quiet --time "$TIME" --workload "$wl" \
        --target "$MNT/$wl" --schemas 1 --threads-per-schema "$s" --scale "$SCALE" \
        --work-unit "$WORK_UNIT" --update-pct "$u" --cache "$CACHE" \
        --tag "$fs" --tag "$wl" --tag "flavor-$flav" --tag "u$u" --tag "s$s" --tag "rep$rep" \
        --tag model-vs-pg "$@" > "$OUT/json/$name.json" \
        || echo "$(date -u +%T) $name FAILED (exit $?)" >&2
}
for fs in "${FSS[@]}"; do
  truncate -s 6G "$IMG"
  DEV=$(losetup -f --show --direct-io=on "$IMG")
  case $fs in
    xfs) mkfs.xfs -q -K "$DEV" ;;
    ext4) mkfs.ext4 -q -E nodiscard "$DEV" ;;
  esac
  mkdir -p "$MNT"; mount -o noatime "$DEV" "$MNT"; chmod 755 "$MNT"
  # UPDATE_PCT outermost: the select-only runs see the freshly loaded tables
  # (a select after updates prunes and sets hint bits, which writes WAL).
  for u in "${UPDS[@]}"; do
    for rep in $(seq "$REPEATS"); do
      for s in "${SESSIONS[@]}"; do
        for wl in "${WLS[@]}"; do
          if [ "$wl" = pg ]; then
            # The server's memory: PGMEM_MB plus 2 MiB per backend (its
            # private memory is charged to the cgroup too).
            run pg "$fs" "$u" "$s" "$rep" pg --pg-memory "$((PGMEM_MB + 2 * s))M"
          else
            for f in "${FLAVS[@]}"; do
              read -r -a margs <<< "${MODEL_ARGS:-}"
              if [ "$f" = - ]; then run slob "$fs" "$u" "$s" "$rep" oracle "${margs[@]}"
              else run slob "$fs" "$u" "$s" "$rep" "$f${FLAVOR_TAG:-}" --flavor "$f" "${margs[@]}"; fi
            done
          fi
        done
      done
    done
  done
  teardown
done
echo "$(date -u +%T) done, load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
