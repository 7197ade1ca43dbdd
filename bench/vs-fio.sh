#!/usr/bin/env bash
# vs-fio.sh — compare dbio with fio on the same file with the same settings,
# alternating runs (dbio, fio, dbio, fio, …) so drift on a noisy machine hits
# both tools alike, and report medians of IOPS and of CPU time per I/O.
#
# Usage: bench/vs-fio.sh [--pairs N] [--time S] [--dbio PATH]
#                        [--cases "a b c d"] [--raw DIR] [--qd "1 8 32 128"]
#                        [--uring-args "--register-ring true"] [--rt]
#   --pairs N   dbio/fio rounds per case (default 5)
#   --time S    measured seconds per run (default 10); both tools also run a
#               1 s warm-up that is excluded (dbio --ramp 1, fio --ramp_time=1)
#   --dbio PATH dbio binary (default: target/release/dbio, built if missing);
#               it is copied to a temp dir first so rebuilds don't disturb us
#   --cases     which cases to run (default "a b c d e f")
#   --raw DIR   keep every run's JSON output in DIR
#   --qd "N …"  io_uring queue depths for cases b and f (default "32")
#   --uring-args "…"  extra dbio options for its io_uring runs (cases b, f),
#               e.g. "--register-ring true" or "--sqthread-poll 1000"
#   --rt        run every tool under `chrt -f 10` (SCHED_FIFO; io-wq workers
#               inherit it): on a machine loaded by other jobs, the tools
#               then get the CPUs as on a quiet one (not the same scheduler)
#
# Needs root (losetup, mkfs.xfs, mount, drop_caches), fio and python3.
# Prints Markdown tables and saves them to bench/results-<date>.md (or
# results-<date>-N.md: an earlier file is never overwritten).
set -euo pipefail

BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$BENCH_DIR/.." && pwd)

PAIRS=5
TIME=10
RAMP=1
DBIO_SRC=""
CASES="a b c d e f"
RAW_DIR=""
QDS="32"
URING_ARGS=""
RT=()

usage() { sed -n '2,24p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }
die() { echo "vs-fio: $*" >&2; exit 1; }

while [[ $# -gt 0 ]]; do
    case "$1" in
        --pairs) PAIRS=${2:?}; shift 2 ;;
        --time) TIME=${2:?}; shift 2 ;;
        --dbio) DBIO_SRC=${2:?}; shift 2 ;;
        --cases) CASES=${2:?}; shift 2 ;;
        --raw) RAW_DIR=${2:?}; shift 2 ;;
        --qd) QDS=${2:?}; shift 2 ;;
        --uring-args) URING_ARGS=${2:?}; shift 2 ;;
        --rt) RT=(chrt -f 10); shift ;;
        -h|--help) usage; exit 0 ;;
        *) usage >&2; die "unknown argument: $1" ;;
    esac
done
[[ $PAIRS =~ ^[1-9][0-9]*$ ]] || die "--pairs wants a positive integer"
[[ $TIME =~ ^[1-9][0-9]*$ ]] || die "--time wants whole seconds"
for qd in $QDS; do [[ $qd =~ ^[1-9][0-9]*$ ]] || die "--qd wants positive integers, e.g. \"1 8 32 128\""; done
[[ $EUID -eq 0 ]] || die "run as root (loop devices, mount, drop_caches)"
for tool in fio python3 losetup mkfs.xfs mount umount mountpoint; do
    command -v "$tool" >/dev/null || die "$tool not found"
done
# The interpreter itself, not a shim (pyenv's costs ~0.5 s per call).
PY=$(python3 -c 'import sys; print(sys.executable)')

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
        umount "$MNT" 2>/dev/null || { sleep 2; umount "$MNT" 2>/dev/null; } || umount -l "$MNT"
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
# dbio saves every run in its results store: keep the benchmark's runs out of the user's.
export DBIO_DB="$WORK/store.sqlite"
OUT_DIR=${RAW_DIR:-$WORK/out}
mkdir -p "$OUT_DIR"
cd "$WORK"   # fio and dbio leave nothing in the cwd, but keep it out of the repo

# Our own copy of dbio: another engineer may be rebuilding target/ meanwhile.
if [[ -z $DBIO_SRC ]]; then
    DBIO_SRC=${CARGO_TARGET_DIR:-$REPO/target}/release/dbio
    [[ -x $DBIO_SRC ]] || (cd "$REPO" && cargo build --release)
fi
[[ -x $DBIO_SRC ]] || die "no dbio binary at $DBIO_SRC"
DBIO=$WORK/dbio
cp "$DBIO_SRC" "$DBIO"
# The floor (bench/floor.rs): bare pread / io_uring loops with no timing per
# I/O, the machine's limit for one thread, in cases a and b.
(cd "$REPO" && cargo build --release --quiet --example floor)
FLOOR=$WORK/floor
cp "${CARGO_TARGET_DIR:-$REPO/target}/release/examples/floor" "$FLOOR"

# ---------------------------------------------------------------- helpers ---

# metric FILE WHAT [ARGS] — one number from a dbio or fio JSON document
# (python3: jq may be missing). fio numbers are summed over jobs[], so
# numjobs with or without group_reporting both work.
#
# Two CPU measures:
#  - "cpu": each tool's own report. dbio: .cpu.us_per_io (getrusage
#    RUSAGE_SELF over the measured window: every thread of the process).
#    fio: usr_cpu/sys_cpu are percentages of job_runtime (ms, summed over a
#    group), post-ramp, like total_ios; but fio takes them with
#    getrusage(RUSAGE_THREAD), i.e. the job thread only — CPU burnt in
#    io_uring's io-wq worker threads (iou-wrk-*) is NOT counted.
#  - "proc": the whole process tree from bash's `time` (wait4 rusage of all
#    threads, setup and warm-up included) over the measured I/Os scaled up by
#    (time+ramp)/time for the warm-up; the same method for both tools.
cat >"$WORK/metric.py" <<'EOF'
import json, sys
path, what, args = sys.argv[1], sys.argv[2], [float(a) for a in sys.argv[3:]]
text = open(path).read()
doc = json.loads(text[text.index('{'):])   # fio may print notes before the JSON

def fio_sum(f):
    return sum(f(j) for j in doc['jobs'])

def proc_cpu_s():                           # user+sys from `time`, in path.time
    user, system = open(path + '.time').read().split()
    return float(user) + float(system)

def fio_ios():
    return fio_sum(lambda j: j['read']['total_ios'] + j['write']['total_ios'])

if what == 'dbio_iops':
    v = doc['total']['iops']
elif what == 'dbio_cpu':                    # µs CPU per I/O, measured window
    v = doc['cpu']['us_per_io']
elif what == 'dbio_proc_cpu':               # args: time ramp
    t, r = args
    v = proc_cpu_s() / (doc['total']['requests'] * (t + r) / t) * 1e6
elif what == 'dbio_layout_mibs':            # layout bandwidth
    lay = doc['target']['layout']
    assert not lay['reused'], 'layout was reused, not written'
    v = lay['bytes'] / lay['seconds'] / 2**20
elif what == 'dbio_layout_cpu':             # µs CPU per MiB laid out: the
    lay = doc['target']['layout']           # whole process minus its run
    run_s = doc['cpu']['user_s'] + doc['cpu']['sys_s']
    v = (proc_cpu_s() - run_s) / (lay['bytes'] / 2**20) * 1e6
elif what == 'dbio_reused':
    v = int(doc['target']['layout']['reused'])
elif what == 'fio_iops':
    v = fio_sum(lambda j: j['read']['iops'] + j['write']['iops'])
elif what == 'fio_mibs':
    v = fio_sum(lambda j: j['read']['bw_bytes'] + j['write']['bw_bytes']) / 2**20
elif what == 'fio_cpu':                     # µs CPU per I/O, job threads only
    cpu_s = fio_sum(lambda j: (j['usr_cpu'] + j['sys_cpu']) / 100 * j['job_runtime'] / 1000)
    v = cpu_s / fio_ios() * 1e6
elif what == 'fio_proc_cpu':                # args: time ramp
    t, r = args
    v = proc_cpu_s() / (fio_ios() * (t + r) / t) * 1e6
elif what == 'fio_errors':
    v = fio_sum(lambda j: j['error'])
else:
    sys.exit('unknown metric ' + what)
print(v)
EOF
metric() { "$PY" "$WORK/metric.py" "$@"; }

# median of the numbers given as arguments
median() {
    "$PY" -c 'import sys, statistics
v = [float(x) for x in sys.argv[1:]]
print(statistics.median(v) if v else "nan")' "$@"
}

# fmt NUMBER DECIMALS; ratio A B (A/B with 2 decimals)
fmt() { "$PY" -c 'import sys; x=float(sys.argv[1]); print("n/a" if x != x else f"{x:,.{int(sys.argv[2])}f}")' "$1" "$2"; }
ratio() { "$PY" -c 'import sys; a,b=map(float,sys.argv[1:]); print("n/a" if a!=a or b!=b or b==0 else f"{a/b:.2f}")' "$1" "$2"; }

# Before each run of the loop-device cases: write back and drop the page
# cache so neither tool inherits the other's dirty pages or cached metadata.
drop_caches() { sync; echo 3 >/proc/sys/vm/drop_caches; }

# run_dbio OUT ARGS… — one dbio run: JSON to OUT, and the process's user and
# system CPU seconds (all threads, from bash's `time`) to OUT.time
run_dbio() {
    local out=$1; shift
    local TIMEFORMAT='%U %S'
    if ! { time "${RT[@]}" "$DBIO" run "$@" --json --quiet >"$out" 2>"$out.err"; } 2>"$out.time"; then
        cat "$out.err" >&2
        die "dbio failed: dbio run $*"
    fi
}

# run_fio OUT ARGS… — one fio run, likewise
run_fio() {
    local out=$1; shift
    local TIMEFORMAT='%U %S'
    if ! { time "${RT[@]}" fio --output-format=json --output="$out" "$@" 2>"$out.err"; } 2>"$out.time"; then
        cat "$out.err" >&2
        die "fio failed: fio $*"
    fi
    [[ $(metric "$out" fio_errors) == 0 ]] || die "fio reported an error: fio $*"
}

# run_floor OUT FILE ENGINE DEPTH — one floor run (its JSON has the keys of
# dbio's report that the dbio metrics read), likewise
run_floor() {
    local out=$1; shift
    local TIMEFORMAT='%U %S'
    if ! { time "${RT[@]}" "$FLOOR" "$1" "$2" "$3" 4096 "$TIME" "$RAMP" >"$out" 2>"$out.err"; } 2>"$out.time"; then
        cat "$out.err" >&2
        die "floor failed: floor $*"
    fi
}

# Per-run samples, keyed by series name ("a.dbio", "a.fio", …), as
# space-separated lists.
declare -A VAL CPU PCPU     # IOPS (MiB/s in case d); µs CPU/IO; same, whole process
declare -a ROWS=()          # table rows in order: "label|dbio series|fio series"
declare -a NOTES=()         # printed under the tables
FIO_CMDS=""                 # fio command lines, for the results file

log() { printf '%s\n' "$*" >&2; }

# add SERIES VALUE CPU PROC_CPU — record one run (and show it)
add() {
    VAL[$1]+="$2 "; CPU[$1]+="$3 "; PCPU[$1]+="$4 "
    printf '  %-13s %12s   %6s µs CPU/IO  (whole process %6s)\n' \
        "$1" "$(fmt "$2" 0)" "$(fmt "$3" 2)" "$(fmt "$4" 2)" >&2
}
# add_dbio SERIES OUT / add_fio SERIES OUT — a time-based run's numbers
add_dbio() {
    add "$1" "$(metric "$2" dbio_iops)" "$(metric "$2" dbio_cpu)" "$(metric "$2" dbio_proc_cpu "$TIME" "$RAMP")"
}
add_fio() {
    add "$1" "$(metric "$2" fio_iops)" "$(metric "$2" fio_cpu)" "$(metric "$2" fio_proc_cpu "$TIME" "$RAMP")"
}
row() { ROWS+=("$1|$2|$3"); }
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
LOOP_DIO="-"
setup_loop() {
    [[ -n $LOOP ]] && return
    IMG=$(mktemp /var/tmp/dbio-vs-fio.XXXXXX.img)
    log "writing a 3 GiB loop image $IMG"
    # Written out fully (not sparse) so the host filesystem never allocates
    # blocks under a measured run.
    dd if=/dev/zero of="$IMG" bs=4M count=768 oflag=direct conv=fsync status=none
    LOOP=$(losetup -f --show --direct-io=on "$IMG")
    LOOP_DIO=$(cat "/sys/block/${LOOP#/dev/}/loop/dio" 2>/dev/null || echo "?")
    [[ $LOOP_DIO == 1 ]] || log "warning: $LOOP is not in direct-io mode (dio=$LOOP_DIO)"
    mkfs.xfs -q -f "$LOOP"
    MNT=$WORK/mnt
    mkdir -p "$MNT"
    mount "$LOOP" "$MNT"
}

# ------------------------------------------------------------------ cases ---

# (a) 4k random reads, O_DIRECT, psync, 1 session, on a 1 GiB file in tmpfs.
# No device underneath: this measures the tools' own per-I/O cost (issue,
# timing, bookkeeping) on top of a ~1 µs kernel copy. Both read dbio's file.
# A second fio series runs with --gtod_reduce=1 (no per-I/O clock reads, no
# latency statistics) to show how much of fio's cost is its timekeeping.
case_a() {
    setup_shm
    local file=$SHM_DIR/data/dbio-data-0000.dat
    local common=(--filename="$file" --size=1G --rw=randread --bs=4k --direct=1
        --ioengine=psync --numjobs=1 "${FIO_RANDOM[@]}" "${FIO_TIMED[@]}")
    local lean=(--gtod_reduce=1)
    record_fio_cmd "(a)" "--name=a ${common[*]}"
    record_fio_cmd "(a) lean" "--name=a ${common[*]} ${lean[*]}"
    local i out
    for ((i = 1; i <= PAIRS; i++)); do
        log "[a] round $i/$PAIRS"
        out=$OUT_DIR/a-$i
        run_dbio "$out-dbio.json" --target "$SHM_DIR/data" --files 1 --size 1G --bs 4k \
            --pattern randread --sessions 1 --engine psync --io direct --seed "$i" "${DBIO_TIMED[@]}"
        [[ $(metric "$out-dbio.json" dbio_reused) == 1 ]] || die "case a: dbio did not reuse the layout"
        add_dbio a.dbio "$out-dbio.json"
        run_fio "$out-fio.json" --name=a "${common[@]}" --randseed="$i"
        add_fio a.fio "$out-fio.json"
        run_fio "$out-fio-lean.json" --name=a "${common[@]}" "${lean[@]}" --randseed="$i"
        add_fio a.fio-gtod "$out-fio-lean.json"
        run_floor "$out-floor.json" "$file" psync 1
        add_dbio a.floor "$out-floor.json"
    done
    row "(a) 4k randread direct psync 1 session, tmpfs" a.dbio a.fio
    row "(a) … vs fio --gtod_reduce=1" a.dbio a.fio-gtod
    row "(a) … vs the floor (bare pread loop)" a.dbio a.floor
}

# (b) The same reads through io_uring from one thread, at each queue depth
# of --qd (default 32). fio's defaults first; then fio with --fixedbufs
# --registerfiles, which is what dbio does (registered files and buffers).
case_b() {
    setup_shm
    local file=$SHM_DIR/data/dbio-data-0000.dat
    local fixed=(--fixedbufs --registerfiles --hipri=0)
    local qd i out k
    # shellcheck disable=SC2206  # options, split on purpose
    local uring=($URING_ARGS)
    for qd in $QDS; do
        k=b$qd
        local common=(--filename="$file" --size=1G --rw=randread --bs=4k --direct=1
            --ioengine=io_uring --iodepth="$qd" --numjobs=1 "${FIO_RANDOM[@]}" "${FIO_TIMED[@]}")
        record_fio_cmd "(b) qd$qd" "--name=b ${common[*]}"
        record_fio_cmd "(b) qd$qd fixed" "--name=b ${common[*]} ${fixed[*]}"
        for ((i = 1; i <= PAIRS; i++)); do
            log "[b] qd$qd round $i/$PAIRS"
            out=$OUT_DIR/$k-$i
            run_dbio "$out-dbio.json" --target "$SHM_DIR/data" --files 1 --size 1G --bs 4k \
                --pattern randread --sessions 1 --engine io_uring --iodepth "$qd" --io direct \
                --seed "$i" "${uring[@]}" "${DBIO_TIMED[@]}"
            add_dbio "$k.dbio" "$out-dbio.json"
            run_fio "$out-fio.json" --name=b "${common[@]}" --randseed="$i"
            add_fio "$k.fio" "$out-fio.json"
            run_fio "$out-fio-fixed.json" --name=b "${common[@]}" "${fixed[@]}" --randseed="$i"
            add_fio "$k.fio-fixed" "$out-fio-fixed.json"
            run_floor "$out-floor.json" "$file" io_uring "$qd"
            add_dbio "$k.floor" "$out-floor.json"
        done
        row "(b) 4k randread direct io_uring qd$qd, tmpfs" "$k.dbio" "$k.fio"
        row "(b) … vs fio --fixedbufs --registerfiles" "$k.dbio" "$k.fio-fixed"
        row "(b) … vs the floor (bare io_uring loop)" "$k.dbio" "$k.floor"
    done
    NOTES+=("(b): on tmpfs io_uring hands O_DIRECT reads to io-wq worker threads (iou-wrk-*). dbio's CPU counts them (RUSAGE_SELF); fio's own usr/sys_cpu does not (RUSAGE_THREAD), so compare the whole-process table for this case.")
}

# (f) Case b's io_uring reads on XFS over the direct-io loop device: a real
# filesystem and block layer, where O_DIRECT reads are issued inline rather
# than handed to io-wq as on tmpfs. dbio against fio --fixedbufs
# --registerfiles (what dbio does by default) and the floor, page cache
# dropped before each run.
case_f() {
    setup_loop
    local dir=$MNT/f
    log "laying out 1 GiB (4k blocks) in $dir"
    run_dbio "$OUT_DIR/f-layout.json" --target "$dir" --files 1 --size 1G --bs 4k \
        --pattern randread --sessions 1 --engine psync --io direct --time 1
    local file=$dir/dbio-data-0000.dat
    local qd i out k
    # shellcheck disable=SC2206  # options, split on purpose
    local uring=($URING_ARGS)
    for qd in $QDS; do
        k=f$qd
        local common=(--filename="$file" --size=1G --rw=randread --bs=4k --direct=1
            --ioengine=io_uring --iodepth="$qd" --numjobs=1 --fixedbufs --registerfiles --hipri=0
            "${FIO_RANDOM[@]}" "${FIO_TIMED[@]}")
        record_fio_cmd "(f) qd$qd" "--name=f ${common[*]}"
        for ((i = 1; i <= PAIRS; i++)); do
            log "[f] qd$qd round $i/$PAIRS"
            out=$OUT_DIR/$k-$i
            drop_caches
            run_dbio "$out-dbio.json" --target "$dir" --files 1 --size 1G --bs 4k \
                --pattern randread --sessions 1 --engine io_uring --iodepth "$qd" --io direct \
                --seed "$i" "${uring[@]}" "${DBIO_TIMED[@]}"
            add_dbio "$k.dbio" "$out-dbio.json"
            drop_caches
            run_fio "$out-fio.json" --name=f "${common[@]}" --randseed="$i"
            add_fio "$k.fio" "$out-fio.json"
            drop_caches
            run_floor "$out-floor.json" "$file" io_uring "$qd"
            add_dbio "$k.floor" "$out-floor.json"
        done
        row "(f) 4k randread direct io_uring qd$qd, XFS/loop, vs fio --fixedbufs --registerfiles" "$k.dbio" "$k.fio"
        row "(f) … vs the floor (bare io_uring loop)" "$k.dbio" "$k.floor"
    done
    rm -rf "$dir"
}

# (c) 8k random writes, O_DIRECT, psync, 16 sessions on one 1 GiB file on
# XFS over a direct-io loop device: concurrent overwrites through a real
# filesystem and block layer (the image lives on the host disk). dbio writes
# a freshly generated, checksummed block each time; fio by default rewrites
# the same buffer contents, so a second fio series uses --refill_buffers
# (new random data for every write).
case_c() {
    setup_loop
    local dir=$MNT/c
    log "laying out 1 GiB (8k blocks) in $dir"
    run_dbio "$OUT_DIR/c-layout.json" --target "$dir" --files 1 --size 1G --bs 8k \
        --pattern randwrite --sessions 1 --engine psync --io direct --time 1
    local common=(--filename="$dir/dbio-data-0000.dat" --size=1G --rw=randwrite --bs=8k
        --direct=1 --ioengine=psync --numjobs=16 --group_reporting
        "${FIO_RANDOM[@]}" "${FIO_TIMED[@]}")
    local refill=(--refill_buffers)
    record_fio_cmd "(c)" "--name=c ${common[*]}"
    record_fio_cmd "(c) refill" "--name=c ${common[*]} ${refill[*]}"
    local i out
    for ((i = 1; i <= PAIRS; i++)); do
        log "[c] round $i/$PAIRS"
        out=$OUT_DIR/c-$i
        drop_caches
        run_dbio "$out-dbio.json" --target "$dir" --files 1 --size 1G --bs 8k \
            --pattern randwrite --sessions 16 --engine psync --io direct --seed "$i" "${DBIO_TIMED[@]}"
        [[ $(metric "$out-dbio.json" dbio_reused) == 1 ]] || die "case c: dbio did not reuse the layout"
        add_dbio c.dbio "$out-dbio.json"
        drop_caches
        run_fio "$out-fio.json" --name=c "${common[@]}" --randseed="$i"
        add_fio c.fio "$out-fio.json"
        drop_caches
        run_fio "$out-fio-refill.json" --name=c "${common[@]}" "${refill[@]}" --randseed="$i"
        add_fio c.fio-refill "$out-fio-refill.json"
    done
    rm -rf "$dir"
    row "(c) 8k randwrite direct psync 16 sessions, XFS/loop" c.dbio c.fio
    row "(c) … vs fio --refill_buffers" c.dbio c.fio-refill
}

# (d) Sequential write bandwidth of laying out a fresh 1 GiB file on XFS/loop.
# dbio: fallocate, then one io_uring keeps 8 writes of 1 MiB O_DIRECT chunks
# in flight, taken in order — a single sequential stream (--load-parallel 1;
# bench/layout.sh compares N streams with fio --numjobs=N) — then fsync; bandwidth = .target.layout bytes/seconds (the timer
# starts after fallocate and includes the fsync). The run after the layout is
# a token 1 s of reads.
# fio: one job, io_uring, iodepth=8, 1 MiB O_DIRECT writes to a fresh file,
# end_fsync=1. This mirrors dbio's *access pattern* (one stream, 8 in flight);
# numjobs=8 + offset_increment would instead write 8 separate streams at
# 8 places in the file. fio also preallocates a new file (fallocate=native)
# before its clock starts, and its runtime includes end_fsync, like dbio's.
# Again a second fio series writes fresh random data (--refill_buffers), as
# dbio does. CPU per I/O is per 1 MiB write; dbio's is the whole process's
# CPU minus that of the 1 s read run (so it includes making the data).
case_d() {
    setup_loop
    local dir=$MNT/d file=$MNT/fio-layout.dat
    local common=(--filename="$file" --size=1G --rw=write --bs=1M --direct=1
        --ioengine=io_uring --iodepth=8 --numjobs=1 --end_fsync=1)
    local refill=(--refill_buffers)
    record_fio_cmd "(d)" "--name=d ${common[*]}"
    record_fio_cmd "(d) refill" "--name=d ${common[*]} ${refill[*]}"
    local i out layout_cpu
    for ((i = 1; i <= PAIRS; i++)); do
        log "[d] round $i/$PAIRS"
        out=$OUT_DIR/d-$i
        rm -rf "$dir" "$file"
        drop_caches
        run_dbio "$out-dbio.json" --target "$dir" --files 1 --size 1G --bs 1M --pattern seqread \
            --sessions 1 --engine psync --io direct --time 1 --seed "$i" --load-parallel 1
        layout_cpu=$(metric "$out-dbio.json" dbio_layout_cpu)
        add d.dbio "$(metric "$out-dbio.json" dbio_layout_mibs)" "$layout_cpu" "$layout_cpu"
        rm -rf "$dir" "$file"
        drop_caches
        run_fio "$out-fio.json" --name=d "${common[@]}"
        add d.fio "$(metric "$out-fio.json" fio_mibs)" "$(metric "$out-fio.json" fio_cpu)" \
            "$(metric "$out-fio.json" fio_proc_cpu 1 0)"
        rm -f "$file"
        drop_caches
        run_fio "$out-fio-refill.json" --name=d "${common[@]}" "${refill[@]}"
        add d.fio-refill "$(metric "$out-fio-refill.json" fio_mibs)" "$(metric "$out-fio-refill.json" fio_cpu)" \
            "$(metric "$out-fio-refill.json" fio_proc_cpu 1 0)"
    done
    rm -rf "$dir" "$file"
    row "(d) layout 1 GiB seq write 1M, XFS/loop [MiB/s]" d.dbio d.fio
    row "(d) … vs fio --refill_buffers [MiB/s]" d.dbio d.fio-refill
    NOTES+=("(d): the IOPS columns hold MiB/s and CPU is µs per 1 MiB write; dbio's CPU is its whole process minus its 1 s read run (≈ the layout, including generating the data).")
}

# (e) What watching a run costs: a near-idle dbio run (--rate 1: one 8k read
# a second, 20 s) on the XFS loop device, sampling device and host telemetry
# every second (--interval 1) and, alternately, effectively never
# (--interval 3600). dbio's whole-process CPU over the run as % of one core;
# the difference is the cost of sampling (/proc/diskstats, stat, loadavg,
# meminfo) at 1 s. No fio counterpart: reported as a note.
case_e() {
    setup_loop
    local i iv out u s t=20 on="" off=""
    for ((i = 1; i <= PAIRS; i++)); do
        log "[e] round $i/$PAIRS"
        for iv in 1 3600; do
            out=$OUT_DIR/e-$i-$iv.json
            run_dbio "$out" --target "$MNT/e" --size 64M --pattern randread --sessions 1 \
                --rate 1 --time "$t" --interval "$iv"
            read -r u s <"$out.time"
            if [[ $iv == 1 ]]; then on+=" $("$PY" -c "print(($u+$s)/$t*100)")"
            else off+=" $("$PY" -c "print(($u+$s)/$t*100)")"; fi
        done
    done
    # shellcheck disable=SC2086
    local mon moff
    mon=$(median $on); moff=$(median $off)
    NOTES+=("(e) telemetry sampling: a near-idle 20 s run used $(fmt "$mon" 3)% of a core with --interval 1 and $(fmt "$moff" 3)% with --interval 3600 (medians of $PAIRS); sampling once a second costs $("$PY" -c "print(f'{$mon-$moff:.3f}')")% of a core.")
}

# ------------------------------------------------------------------- main ---
START=$(date +%s)
LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)
DBIO_VERSION=$("$DBIO" --version 2>/dev/null | awk '{print $NF}')
log "dbio $DBIO_VERSION vs $(fio --version); rounds=$PAIRS time=${TIME}s ramp=${RAMP}s; cases: $CASES"
for c in $CASES; do
    case $c in
        a|b|c|d|e|f) "case_$c" ;;
        *) die "unknown case $c" ;;
    esac
done

# ---------------------------------------------------------------- report ---
# shellcheck disable=SC2086  # the sample lists are meant to be split
table() {
    echo "| case | dbio IOPS | fio IOPS | ratio | dbio µs CPU/IO | fio µs CPU/IO | ratio |"
    echo "|---|---:|---:|---:|---:|---:|---:|"
    local r name dk fk dv fv dc fc
    for r in "${ROWS[@]}"; do
        IFS='|' read -r name dk fk <<<"$r"
        dv=$(median ${VAL[$dk]}); fv=$(median ${VAL[$fk]})
        dc=$(median ${CPU[$dk]}); fc=$(median ${CPU[$fk]})
        echo "| $name | $(fmt "$dv" 0) | $(fmt "$fv" 0) | $(ratio "$dv" "$fv") | $(fmt "$dc" 2) | $(fmt "$fc" 2) | $(ratio "$dc" "$fc") |"
    done
}

# shellcheck disable=SC2086
proc_table() {
    echo "| case | dbio µs CPU/IO | fio µs CPU/IO | ratio |"
    echo "|---|---:|---:|---:|"
    local r name dk fk dc fc
    for r in "${ROWS[@]}"; do
        IFS='|' read -r name dk fk <<<"$r"
        dc=$(median ${PCPU[$dk]}); fc=$(median ${PCPU[$fk]})
        echo "| $name | $(fmt "$dc" 2) | $(fmt "$fc" 2) | $(ratio "$dc" "$fc") |"
    done
}

# shellcheck disable=SC2086
samples() {
    echo "| series | IOPS (MiB/s for d) per run | µs CPU/IO per run | whole process |"
    echo "|---|---|---|---|"
    local k
    for k in $(printf '%s\n' "${!VAL[@]}" | sort); do
        echo "| $k | $("$PY" -c 'import sys; print(", ".join(f"{float(x):,.0f}" for x in sys.argv[1:]))' ${VAL[$k]})" \
            "| $("$PY" -c 'import sys; print(", ".join(f"{float(x):.2f}" for x in sys.argv[1:]))' ${CPU[$k]})" \
            "| $("$PY" -c 'import sys; print(", ".join(f"{float(x):.2f}" for x in sys.argv[1:]))' ${PCPU[$k]}) |"
    done
}

notes() { local n; for n in "${NOTES[@]}"; do echo "$n"; echo; done; }

[[ ${#ROWS[@]} -gt 0 ]] || { notes; exit 0; }
# A new file every time: an earlier result of the same day is kept.
RESULT=$BENCH_DIR/results-$(date +%Y-%m-%d).md
n=2
while [[ -e $RESULT ]]; do RESULT=$BENCH_DIR/results-$(date +%Y-%m-%d)-$n.md; n=$((n + 1)); done
{
    echo "# dbio vs fio — $(date '+%Y-%m-%d %H:%M')"
    echo
    echo "dbio $DBIO_VERSION, $(fio --version), kernel $(uname -r), $(nproc) CPUs;" \
        "$PAIRS alternating rounds per case, medians; ${TIME}s measured after ${RAMP}s warm-up;" \
        "loop device dio=$LOOP_DIO; took $(( $(date +%s) - START ))s;" \
        "load average $LOAD_START at the start, $(cut -d' ' -f1-3 /proc/loadavg) at the end."
    echo "Ratios are dbio/fio: above 1 means dbio got more IOPS, or spent more CPU per I/O."
    echo
    table
    echo
    echo "CPU per I/O counted over each whole process (all threads incl. io_uring workers, setup and warm-up; bash \`time\`):"
    echo
    proc_table
    echo
    notes
    echo "## Every run"
    echo
    samples
    echo
    echo "## fio commands (plus --randseed=<round> for the random cases)"
    echo
    printf '%s' "$FIO_CMDS"
} >"$RESULT"

echo
table
echo
echo "CPU per I/O counted over each whole process:"
echo
proc_table
echo
notes
echo "saved to $RESULT"
