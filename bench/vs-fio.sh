#!/usr/bin/env bash
# vs-fio.sh — compare dbio with fio on the same file, the same settings,
# alternating runs (dbio, fio, dbio, fio, …) so drift on a noisy machine hits
# both tools alike, and report medians of IOPS and of CPU time per I/O.
#
# Usage: bench/vs-fio.sh [--pairs N] [--time S] [--dbio PATH]
#                        [--cases "a b c d"] [--raw DIR]
#   --pairs N   dbio/fio pairs per case (default 5)
#   --time S    measured seconds per run (default 10); both tools also run a
#               1 s warm-up that is excluded (dbio --ramp 1, fio --ramp_time=1)
#   --dbio PATH dbio binary (default: target/release/dbio, built if missing);
#               it is copied to a temp dir first so rebuilds don't disturb us
#   --cases     which cases to run (default "a b c d")
#   --raw DIR   keep every run's JSON output in DIR
#
# Needs root (losetup, mkfs.xfs, mount, drop_caches), fio and python3.
# Prints a Markdown table and saves it to bench/results-<date>.md.
set -euo pipefail

BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$BENCH_DIR/.." && pwd)

PAIRS=5
TIME=10
RAMP=1
DBIO_SRC=""
CASES="a b c d"
RAW_DIR=""

usage() { sed -n '2,18p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }
die() { echo "vs-fio: $*" >&2; exit 1; }

while [[ $# -gt 0 ]]; do
    case "$1" in
        --pairs) PAIRS=${2:?}; shift 2 ;;
        --time) TIME=${2:?}; shift 2 ;;
        --dbio) DBIO_SRC=${2:?}; shift 2 ;;
        --cases) CASES=${2:?}; shift 2 ;;
        --raw) RAW_DIR=${2:?}; shift 2 ;;
        -h|--help) usage; exit 0 ;;
        *) usage >&2; die "unknown argument: $1" ;;
    esac
done
[[ $PAIRS =~ ^[1-9][0-9]*$ ]] || die "--pairs wants a positive integer"
[[ $TIME =~ ^[1-9][0-9]*$ ]] || die "--time wants whole seconds"
[[ $EUID -eq 0 ]] || die "run as root (loop devices, mount, drop_caches)"
for tool in fio python3 losetup mkfs.xfs mount umount; do
    command -v "$tool" >/dev/null || die "$tool not found"
done

# ---------------------------------------------------------------- cleanup ---
# Everything we create is recorded here and undone by the EXIT trap, whatever
# way the script ends (error, Ctrl-C, kill).
WORK=""        # temp dir: dbio copy, JSON outputs, helper script, mount point
SHM_DIR=""     # dbio's data directory in /dev/shm (cases a, b)
IMG=""         # loop device image in /var/tmp (cases c, d)
LOOP=""        # the loop device
MNT=""         # where the XFS filesystem on $LOOP is mounted

cleanup() {
    local rc=$?
    set +e
    if [[ -n $MNT ]] && mountpoint -q "$MNT"; then
        umount "$MNT" 2>/dev/null || { sleep 1; umount "$MNT" 2>/dev/null; } || umount -l "$MNT"
    fi
    [[ -n $LOOP ]] && losetup -d "$LOOP"
    [[ -n $IMG ]] && rm -f "$IMG"
    [[ -n $SHM_DIR ]] && rm -rf "$SHM_DIR"
    [[ -n $WORK ]] && rm -rf "$WORK"
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

WORK=$(mktemp -d /var/tmp/dbio-vs-fio.XXXXXX)
OUT_DIR=${RAW_DIR:-$WORK/out}
mkdir -p "$OUT_DIR"
cd "$WORK"   # fio and dbio leave nothing in the cwd, but keep it out of the repo

# Our own copy of dbio: another engineer may be rebuilding target/ meanwhile.
if [[ -z $DBIO_SRC ]]; then
    DBIO_SRC=$REPO/target/release/dbio
    [[ -x $DBIO_SRC ]] || (cd "$REPO" && cargo build --release)
fi
[[ -x $DBIO_SRC ]] || die "no dbio binary at $DBIO_SRC"
DBIO=$WORK/dbio
cp "$DBIO_SRC" "$DBIO"

# ---------------------------------------------------------------- helpers ---

# Extracts one number from a dbio or fio JSON document (python3; jq may be
# missing). fio numbers are summed over jobs[] so numjobs with or without
# group_reporting both work. fio's CPU: usr_cpu/sys_cpu are percentages of
# job_runtime (ms, summed over the group), post-ramp, like its total_ios.
cat >"$WORK/metric.py" <<'EOF'
import json, sys
path, what = sys.argv[1], sys.argv[2]
text = open(path).read()
doc = json.loads(text[text.index('{'):])   # fio may print notes before the JSON
def fio_sum(f):
    return sum(f(j) for j in doc['jobs'])
if what == 'dbio_iops':
    v = doc['total']['iops']
elif what == 'dbio_cpu':            # µs of CPU (user+sys, all threads) per I/O
    v = doc['cpu']['us_per_io']
elif what == 'dbio_layout_mibs':    # layout bandwidth
    lay = doc['target']['layout']
    assert not lay['reused'], 'layout was reused, not written'
    v = lay['bytes'] / lay['seconds'] / 2**20
elif what == 'dbio_layout_mib':     # MiB laid out
    v = doc['target']['layout']['bytes'] / 2**20
elif what == 'dbio_reused':
    v = int(doc['target']['layout']['reused'])
elif what == 'dbio_run_cpu_s':      # CPU of the measured window only
    v = doc['cpu']['user_s'] + doc['cpu']['sys_s']
elif what == 'fio_iops':
    v = fio_sum(lambda j: j['read']['iops'] + j['write']['iops'])
elif what == 'fio_mibs':
    v = fio_sum(lambda j: j['read']['bw_bytes'] + j['write']['bw_bytes']) / 2**20
elif what == 'fio_cpu':             # µs of CPU per I/O
    cpu_s = fio_sum(lambda j: (j['usr_cpu'] + j['sys_cpu']) / 100 * j['job_runtime'] / 1000)
    ios = fio_sum(lambda j: j['read']['total_ios'] + j['write']['total_ios'])
    v = cpu_s / ios * 1e6
elif what == 'fio_errors':
    v = fio_sum(lambda j: j['error'])
else:
    sys.exit('unknown metric ' + what)
print(v)
EOF
metric() { python3 "$WORK/metric.py" "$1" "$2"; }

# median of the numbers given as arguments
median() {
    python3 -c 'import sys, statistics
v = [float(x) for x in sys.argv[1:]]
print(statistics.median(v) if v else "nan")' "$@"
}

# fmt NUMBER DECIMALS; ratio A B (A/B with 2 decimals)
fmt() { python3 -c 'import sys; x=float(sys.argv[1]); print("n/a" if x != x else f"{x:,.{int(sys.argv[2])}f}")' "$1" "$2"; }
ratio() { python3 -c 'import sys; a,b=map(float,sys.argv[1:]); print("n/a" if a!=a or b!=b or b==0 else f"{a/b:.2f}")' "$1" "$2"; }

# Before each run of the loop-device cases: write back and drop the page
# cache so neither tool inherits the other's dirty pages or cached metadata.
drop_caches() { sync; echo 3 >/proc/sys/vm/drop_caches; }

# run_dbio OUT ARGS… — one dbio run, JSON to OUT
run_dbio() {
    local out=$1; shift
    if ! "$DBIO" run "$@" --json --quiet >"$out" 2>"$out.err"; then
        cat "$out.err" >&2
        die "dbio failed: dbio run $*"
    fi
}

# run_fio OUT ARGS… — one fio run, JSON to OUT
run_fio() {
    local out=$1; shift
    if ! fio --output-format=json --output="$out" "$@" 2>"$out.err"; then
        cat "$out.err" >&2
        die "fio failed: fio $*"
    fi
    [[ $(metric "$out" fio_errors) == 0 ]] || die "fio reported an error: fio $*"
}

# Per-run samples, keyed by row name, space-separated.
declare -A VAL CPU          # VAL: IOPS (or MiB/s for case d), CPU: µs/IO
declare -a ROWS=()          # table rows in order: "case|dbio key|fio key"
declare -A NOTE             # case -> note printed under the table
FIO_CMDS=""                 # fio command lines, for the results file

# add KEY VALUE CPU — record one run's sample (and show it)
add() {
    VAL[$1]+="$2 "; CPU[$1]+="$3 "
    printf '  %-12s %12s  %6s µs CPU/IO\n' "$1" "$(fmt "$2" 0)" "$(fmt "$3" 2)" >&2
}
row() { ROWS+=("$1|$2|$3"); }
log() { printf '%s\n' "$*" >&2; }
record_fio_cmd() { FIO_CMDS+="- ${1}: \`fio $2\`"$'\n'; }

# Common to every time-based run, so both tools measure the same window.
DBIO_TIMED=(--time "$TIME" --ramp "$RAMP")
FIO_TIMED=(--time_based --runtime="$TIME" --ramp_time="$RAMP")
# dbio picks offsets uniformly with replacement; fio by default keeps a map of
# blocks already hit in this pass ("randommap") and steers away from them,
# which is a different distribution and costs CPU: turn it off.
FIO_RANDOM=(--norandommap --randrepeat=0)

# ------------------------------------------------------------------ setup ---

# The 1 GiB, 4k-block dbio layout in /dev/shm that cases a and b share.
setup_shm() {
    [[ -n $SHM_DIR ]] && return
    SHM_DIR=$(mktemp -d /dev/shm/dbio-vs-fio.XXXXXX)
    log "laying out 1 GiB in $SHM_DIR"
    run_dbio "$OUT_DIR/shm-layout.json" --target "$SHM_DIR/data" --files 1 --size 1G --bs 4k \
        --pattern randread --sessions 1 --engine psync --io direct --time 1
}

# An XFS filesystem on a loop device (direct I/O to its image) for cases c, d.
setup_loop() {
    [[ -n $LOOP ]] && return
    IMG=$(mktemp /var/tmp/dbio-vs-fio.XXXXXX.img)
    log "writing a 3 GiB loop image $IMG"
    # Write it out fully (not sparse) so the host filesystem never allocates
    # under a measured run.
    dd if=/dev/zero of="$IMG" bs=4M count=768 oflag=direct conv=fsync status=none
    LOOP=$(losetup -f --show --direct-io=on "$IMG")
    LOOP_DIO=$(cat "/sys/block/${LOOP#/dev/}/loop/dio" 2>/dev/null || echo "?")
    [[ $LOOP_DIO == 1 ]] || log "warning: $LOOP is not in direct-io mode (dio=$LOOP_DIO)"
    mkfs.xfs -q -f "$LOOP"
    MNT=$WORK/mnt
    mkdir -p "$MNT"
    mount "$LOOP" "$MNT"
}
LOOP_DIO="-"

# ------------------------------------------------------------------ cases ---

# (a) 4k random reads, O_DIRECT, psync, 1 session, on a 1 GiB file in tmpfs.
# No device underneath: this measures the tools' own per-I/O cost (issue,
# timing, bookkeeping) on top of a ~1 µs kernel copy. Both read dbio's file.
case_a() {
    setup_shm
    local file=$SHM_DIR/data/dbio-data-0000.dat
    local common=(--filename="$file" --size=1G --rw=randread --bs=4k --direct=1
        --ioengine=psync --numjobs=1 "${FIO_RANDOM[@]}" "${FIO_TIMED[@]}")
    local lean=(--gtod_reduce=1)
    record_fio_cmd "(a)" "--name=a ${common[*]}"
    record_fio_cmd "(a) gtod_reduce" "--name=a ${common[*]} ${lean[*]}"
    local i out
    for ((i = 1; i <= PAIRS; i++)); do
        log "[$FUNCNAME] pair $i/$PAIRS"
        out=$OUT_DIR/a-$i
        run_dbio "$out-dbio.json" --target "$SHM_DIR/data" --files 1 --size 1G --bs 4k \
            --pattern randread --sessions 1 --engine psync --io direct --seed "$i" "${DBIO_TIMED[@]}"
        [[ $(metric "$out-dbio.json" dbio_reused) == 1 ]] || die "case a: dbio did not reuse the layout"
        add a.dbio "$(metric "$out-dbio.json" dbio_iops)" "$(metric "$out-dbio.json" dbio_cpu)"
        run_fio "$out-fio.json" --name=a "${common[@]}" --randseed="$i"
        add a.fio "$(metric "$out-fio.json" fio_iops)" "$(metric "$out-fio.json" fio_cpu)"
        # fio without per-I/O clock reads (no latency stats): its bare loop.
        run_fio "$out-fio-lean.json" --name=a "${common[@]}" "${lean[@]}" --randseed="$i"
        add a.fiolean "$(metric "$out-fio-lean.json" fio_iops)" "$(metric "$out-fio-lean.json" fio_cpu)"
    done
    row "(a) 4k randread direct psync 1 session, tmpfs" a.dbio a.fio
    row "(a) … vs fio --gtod_reduce=1 (no latency stats)" a.dbio a.fiolean
}

# (b) The same reads through io_uring with 32 in flight from one thread.
# fio's defaults first; then fio with --fixedbufs --registerfiles, which is
# what dbio does (registered files and buffers).
case_b() {
    setup_shm
    local file=$SHM_DIR/data/dbio-data-0000.dat
    local common=(--filename="$file" --size=1G --rw=randread --bs=4k --direct=1
        --ioengine=io_uring --iodepth=32 --numjobs=1 "${FIO_RANDOM[@]}" "${FIO_TIMED[@]}")
    local fixed=(--fixedbufs --registerfiles)
    record_fio_cmd "(b)" "--name=b ${common[*]}"
    record_fio_cmd "(b) fixed" "--name=b ${common[*]} ${fixed[*]}"
    local i out
    for ((i = 1; i <= PAIRS; i++)); do
        log "[$FUNCNAME] pair $i/$PAIRS"
        out=$OUT_DIR/b-$i
        run_dbio "$out-dbio.json" --target "$SHM_DIR/data" --files 1 --size 1G --bs 4k \
            --pattern randread --sessions 1 --engine io_uring --iodepth 32 --io direct \
            --seed "$i" "${DBIO_TIMED[@]}"
        add b.dbio "$(metric "$out-dbio.json" dbio_iops)" "$(metric "$out-dbio.json" dbio_cpu)"
        run_fio "$out-fio.json" --name=b "${common[@]}" --randseed="$i"
        add b.fio "$(metric "$out-fio.json" fio_iops)" "$(metric "$out-fio.json" fio_cpu)"
        run_fio "$out-fio-fixed.json" --name=b "${common[@]}" "${fixed[@]}" --randseed="$i"
        add b.fiofixed "$(metric "$out-fio-fixed.json" fio_iops)" "$(metric "$out-fio-fixed.json" fio_cpu)"
    done
    row "(b) 4k randread direct io_uring qd32, tmpfs" b.dbio b.fio
    row "(b) … vs fio --fixedbufs --registerfiles" b.dbio b.fiofixed
}

# (c) 8k random writes, O_DIRECT, psync, 16 sessions on one 1 GiB file on
# XFS over a direct-io loop device: concurrent overwrites through a real
# filesystem and block layer (the image lives on the host disk).
case_c() {
    setup_loop
    local dir=$MNT/c
    log "laying out 1 GiB (8k blocks) in $dir"
    run_dbio "$OUT_DIR/c-layout.json" --target "$dir" --files 1 --size 1G --bs 8k \
        --pattern randwrite --sessions 1 --engine psync --io direct --time 1
    local common=(--filename="$dir/dbio-data-0000.dat" --size=1G --rw=randwrite --bs=8k
        --direct=1 --ioengine=psync --numjobs=16 --group_reporting
        "${FIO_RANDOM[@]}" "${FIO_TIMED[@]}")
    record_fio_cmd "(c)" "--name=c ${common[*]}"
    local i out
    for ((i = 1; i <= PAIRS; i++)); do
        log "[$FUNCNAME] pair $i/$PAIRS"
        out=$OUT_DIR/c-$i
        drop_caches
        run_dbio "$out-dbio.json" --target "$dir" --files 1 --size 1G --bs 8k \
            --pattern randwrite --sessions 16 --engine psync --io direct --seed "$i" "${DBIO_TIMED[@]}"
        [[ $(metric "$out-dbio.json" dbio_reused) == 1 ]] || die "case c: dbio did not reuse the layout"
        add c.dbio "$(metric "$out-dbio.json" dbio_iops)" "$(metric "$out-dbio.json" dbio_cpu)"
        drop_caches
        run_fio "$out-fio.json" --name=c "${common[@]}" --randseed="$i"
        add c.fio "$(metric "$out-fio.json" fio_iops)" "$(metric "$out-fio.json" fio_cpu)"
    done
    rm -rf "$dir"
    row "(c) 8k randwrite direct psync 16 sessions, XFS/loop" c.dbio c.fio
}

# (d) Sequential write bandwidth of laying out a fresh 1 GiB file on XFS/loop.
# dbio: fallocate, then 4 writer threads pwrite 1 MiB O_DIRECT chunks taken
# in order from one shared counter — a single sequential stream with 4 writes
# in flight — then fsync; bandwidth = .target.layout bytes/seconds (the timer
# starts after fallocate and includes the fsync).
# fio: one job, io_uring, iodepth=4, 1 MiB O_DIRECT writes to a fresh file,
# end_fsync=1. This mirrors the *access pattern* (one stream, 4 in flight);
# numjobs=4 + offset_increment would instead write 4 separate streams at
# 4 places. fio also preallocates the new file (fallocate=native) before its
# clock starts, and its runtime includes end_fsync, like dbio's.
# CPU per I/O is per 1 MiB write. For dbio it is the process's whole CPU time
# (bash `time`) minus the CPU of the 1 s read run that follows the layout, so
# it includes generating the sealed, incompressible block contents.
case_d() {
    setup_loop
    local dir=$MNT/d file=$MNT/fio-layout.dat
    local common=(--filename="$file" --size=1G --rw=write --bs=1M --direct=1
        --ioengine=io_uring --iodepth=4 --numjobs=1 --end_fsync=1)
    record_fio_cmd "(d)" "--name=d ${common[*]}"
    local i out t_user t_sys cpu_total run_cpu mib
    for ((i = 1; i <= PAIRS; i++)); do
        log "[$FUNCNAME] pair $i/$PAIRS"
        out=$OUT_DIR/d-$i
        rm -rf "$dir" "$file"
        drop_caches
        # bash's `time` reports the child's user and system CPU seconds.
        local TIMEFORMAT='%U %S'
        if ! { time "$DBIO" run --target "$dir" --files 1 --size 1G --bs 1M --pattern seqread \
            --sessions 1 --engine psync --io direct --time 1 --seed "$i" --json --quiet \
            >"$out-dbio.json" 2>"$out-dbio.json.err"; } 2>"$out-dbio.time"; then
            cat "$out-dbio.json.err" >&2
            die "dbio failed laying out $dir"
        fi
        read -r t_user t_sys <"$out-dbio.time"
        cpu_total=$(python3 -c 'import sys; print(float(sys.argv[1]) + float(sys.argv[2]))' "$t_user" "$t_sys")
        run_cpu=$(metric "$out-dbio.json" dbio_run_cpu_s)
        mib=$(metric "$out-dbio.json" dbio_layout_mib)
        add d.dbio "$(metric "$out-dbio.json" dbio_layout_mibs)" \
            "$(python3 -c 'import sys; t,r,m=map(float,sys.argv[1:]); print((t-r)/m*1e6)' "$cpu_total" "$run_cpu" "$mib")"
        rm -rf "$dir" "$file"
        drop_caches
        run_fio "$out-fio.json" --name=d "${common[@]}"
        add d.fio "$(metric "$out-fio.json" fio_mibs)" "$(metric "$out-fio.json" fio_cpu)"
    done
    rm -rf "$dir" "$file"
    row "(d) layout 1 GiB seq write 1M, XFS/loop [MiB/s]" d.dbio d.fio
    NOTE[d]="(d): the IOPS columns hold MiB/s and CPU is µs per 1 MiB write; dbio's CPU is the whole process minus its 1 s read run (≈ layout incl. data generation)."
}

# ------------------------------------------------------------------- main ---
START=$(date +%s)
log "dbio $("$DBIO" --version 2>/dev/null | awk '{print $2}') vs $(fio --version); pairs=$PAIRS time=${TIME}s ramp=${RAMP}s; cases: $CASES"
for c in $CASES; do
    case $c in
        a|b|c|d) "case_$c" ;;
        *) die "unknown case $c" ;;
    esac
done

# ---------------------------------------------------------------- report ---
table() {
    echo "| case | dbio IOPS | fio IOPS | ratio | dbio µs CPU/IO | fio µs CPU/IO | ratio |"
    echo "|---|---:|---:|---:|---:|---:|---:|"
    local r name dk fk di fi dc fc
    for r in "${ROWS[@]}"; do
        IFS='|' read -r name dk fk <<<"$r"
        # shellcheck disable=SC2086  # word splitting of the sample lists is wanted
        di=$(median ${VAL[$dk]}); fi=$(median ${VAL[$fk]})
        # shellcheck disable=SC2086
        dc=$(median ${CPU[$dk]}); fc=$(median ${CPU[$fk]})
        echo "| $name | $(fmt "$di" 0) | $(fmt "$fi" 0) | $(ratio "$di" "$fi") | $(fmt "$dc" 2) | $(fmt "$fc" 2) | $(ratio "$dc" "$fc") |"
    done
}

samples() {
    echo "| series | IOPS (or MiB/s) per run | µs CPU/IO per run |"
    echo "|---|---|---|"
    local k
    for k in $(printf '%s\n' "${!VAL[@]}" | sort); do
        echo "| $k | $(python3 -c 'import sys; print(", ".join(f"{float(x):,.0f}" for x in sys.argv[1:]))' ${VAL[$k]}) | $(python3 -c 'import sys; print(", ".join(f"{float(x):.2f}" for x in sys.argv[1:]))' ${CPU[$k]}) |"
    done
}

RESULT=$BENCH_DIR/results-$(date +%Y-%m-%d).md
{
    echo "# dbio vs fio — $(date '+%Y-%m-%d %H:%M')"
    echo
    echo "dbio $("$DBIO" --version 2>/dev/null | awk '{print $2}'), $(fio --version), kernel $(uname -r), $(nproc) CPUs;" \
        "$PAIRS alternating pairs per case, medians; ${TIME}s measured after ${RAMP}s warm-up;" \
        "loop device dio=$LOOP_DIO; took $(( $(date +%s) - START ))s."
    echo "Ratios are dbio/fio: above 1 means dbio got more IOPS / spent more CPU per I/O."
    echo
    table
    echo
    for n in "${NOTE[@]}"; do echo "$n"; echo; done
    echo "## Every run"
    echo
    samples
    echo
    echo "## fio commands (plus --randseed=<pair>)"
    echo
    printf '%s' "$FIO_CMDS"
} >"$RESULT"

echo
table
echo
for n in "${NOTE[@]}"; do echo "$n"; done
echo "saved to $RESULT"
