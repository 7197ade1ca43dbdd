#!/usr/bin/env bash
# slob-sessions.sh — the SLOB model against raw randrw 80/20 over a session
# sweep, for one or two dbio binaries (e.g. before and after a change),
# taking turns at every session count (raw, A, B, raw, A, B, ...) so that
# drift on a shared machine hits all of them alike; medians of the rounds.
#
#   bench/slob-sessions.sh --dir /dev/shm/sweep [--a BIN] [--b BIN]
#       [--sessions "8 32 128 512 1024"] [--cache 256M] [--time 4]
#       [--rounds 1] [--update-pct 25] [--svg FILE]
#       [--a-args "SLOB OPTIONS"] [--b-args "SLOB OPTIONS"]
#
# slob: --schemas 8 --threads-per-schema N/8 --scale 10000 (8 KiB blocks);
# below 8 sessions --schemas N --scale 80000/N (one session per schema);
# raw: --pattern randrw --read-pct 80 --sessions N on 625M (the same data
# size). Per cell: physical I/O/s (slob: session reads + DB writer writes +
# redo writes, as .total.iops), CPU µs per physical I/O (.cpu.us_per_io, all
# threads), and for slob its physical reads/s, commits/s and cache hit %.
# --a-args / --b-args add options to that binary's slob runs only (e.g. the
# same binary as A and B, B with --b-args "--db-writers 2").
# --svg FILE also draws both measures against sessions (log scale) to FILE.
# Everything it creates under --dir is removed on exit.
set -euo pipefail
A=""; B=""; A_ARGS=""; B_ARGS=""; DIR=""; SESSIONS="8 32 128 512 1024"; CACHE=256M; TIME=4; ROUNDS=1; UPD=25; SVG=""
while [ $# -gt 0 ]; do
    case $1 in
        --a) A=$2; shift 2;; --b) B=$2; shift 2;; --dir) DIR=$2; shift 2;;
        --sessions) SESSIONS=$2; shift 2;; --cache) CACHE=$2; shift 2;;
        --time) TIME=$2; shift 2;; --rounds) ROUNDS=$2; shift 2;;
        --update-pct) UPD=$2; shift 2;; --svg) SVG=$2; shift 2;;
        --a-args) A_ARGS=$2; shift 2;; --b-args) B_ARGS=$2; shift 2;;
        *) echo "slob-sessions.sh: unknown option $1" >&2; exit 2;;
    esac
done
[ -n "$DIR" ] || { echo "slob-sessions.sh: --dir DIR is required (e.g. /dev/shm/sweep)" >&2; exit 2; }
for n in $SESSIONS; do
    [[ $n =~ ^[1-9][0-9]*$ ]] && { [ "$n" -lt 8 ] || [ $((n % 8)) -eq 0 ]; } ||
        { echo "slob-sessions.sh: --sessions $n: give 1 to 7 or a multiple of 8 (8 schemas x N/8 threads)" >&2; exit 2; }
done
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
[ -n "$A" ] || A="${CARGO_TARGET_DIR:-$REPO/target}/release/dbio"
mkdir -p "$DIR"
WORK=$(mktemp -d "$DIR/slob-sessions.XXXXXX")
trap 'rm -rf "$WORK"' EXIT INT TERM
cp "$A" "$WORK/a"; [ -z "$B" ] || cp "$B" "$WORK/b"
export DBIO_DB="$WORK/store.sqlite"
tools="raw a"; [ -z "$B" ] || tools="raw a b"

run() { # tool sessions -> one JSON line summary
    local t=$1 n=$2 bin="$WORK/a" extra=$A_ARGS
    [ "$t" = b ] && { bin="$WORK/b"; extra=$B_ARGS; }
    if [ "$t" = raw ]; then
        "$WORK/a" run --json --quiet --target "$WORK/raw" --size 625M --pattern randrw --read-pct 80 \
            --sessions "$n" --time "$TIME"
    else
        local shape=(--schemas 8 --threads-per-schema $((n / 8)) --scale 10000)
        [ "$n" -ge 8 ] || shape=(--schemas "$n" --threads-per-schema 1 --scale $((80000 / n)))
        "$bin" run --json --quiet --workload slob --target "$WORK/slob" "${shape[@]}" \
            --cache "$CACHE" --update-pct "$UPD" --time "$TIME" $extra
    fi | python3 -c '
import json, sys
r = json.load(sys.stdin); s = r.get("slob"); m = r["measured_s"] or 1
out = [r["total"]["iops"], r["cpu"]["us_per_io"]]
if s:
    c = s["counters"]
    out += [c["physical_reads"] / m, c["transactions"] / m, s["cache_hit_pct"]]
print(" ".join(f"{x:.3f}" for x in out))'
}

for n in $SESSIONS; do
    for i in $(seq "$ROUNDS"); do
        for t in $tools; do
            run "$t" "$n" >> "$WORK/$t.$n" || echo "nan nan nan nan nan" >> "$WORK/$t.$n"
        done
    done
done
python3 - "$WORK" "$SESSIONS" "$tools" "$CACHE" "$TIME" "$ROUNDS" "$SVG" <<'PY'
import math, statistics, sys
work, sessions, tools, cache, t, rounds, svg = sys.argv[1:]
def med(tool, n):
    rows = [list(map(float, l.split())) for l in open(f"{work}/{tool}.{n}") if l.strip()]
    return [statistics.median(col) for col in zip(*rows)]
tools = tools.split()
print(f"cache {cache}, {t} s runs, median of {rounds}; slob cols: I/O/s, CPU us/IO, reads/s, commits/s, hit %")
head = "| sessions | raw I/O/s | raw us/IO |"
for x in tools[1:]:
    head += f" {x} I/O/s | {x} us/IO | {x} reads/s | {x} commits/s | {x} hit % | {x}/raw I/O | {x}/raw us |"
print(head)
print("|" + "---:|" * (3 + 7 * (len(tools) - 1)))
for n in sessions.split():
    raw = med("raw", n)
    line = f"| {n} | {raw[0]:,.0f} | {raw[1]:.1f} |"
    for x in tools[1:]:
        v = med(x, n)
        line += f" {v[0]:,.0f} | {v[1]:.1f} | {v[2]:,.0f} | {v[3]:,.0f} | {v[4]:.0f} | {v[0]/raw[0]:.2f} | {v[1]/raw[1]:.2f} |"
    print(line)
if svg:
    # Two panels against sessions on a log axis: physical I/O/s and CPU us
    # per physical I/O, one line per tool, points at the medians.
    ns = [int(n) for n in sessions.split()]
    colors = {"raw": "#444444", "a": "#1f77b4", "b": "#d62728"}
    W, H, L, R, T, B = 460, 300, 70, 20, 30, 45
    def panel(x0, col, title, fmt):
        vals = {x: [med(x, n)[col] for n in ns] for x in tools}
        top = max(v for vs in vals.values() for v in vs if not math.isnan(v)) * 1.1 or 1
        lx = [math.log2(n) for n in ns]
        span = (max(lx) - min(lx)) or 1
        px = lambda n: x0 + L + (math.log2(n) - min(lx)) / span * (W - L - R)
        py = lambda v: T + (1 - v / top) * (H - T - B)
        out = [f'<text x="{x0 + W/2}" y="18" text-anchor="middle" font-weight="bold">{title}</text>',
               f'<line x1="{x0+L}" y1="{H-B}" x2="{x0+W-R}" y2="{H-B}" stroke="#999"/>',
               f'<line x1="{x0+L}" y1="{T}" x2="{x0+L}" y2="{H-B}" stroke="#999"/>']
        for n in ns:
            out.append(f'<text x="{px(n):.1f}" y="{H-B+16}" text-anchor="middle">{n}</text>')
        out.append(f'<text x="{x0 + L + (W-L-R)/2}" y="{H-8}" text-anchor="middle">sessions</text>')
        for k in range(5):
            v = top * k / 4
            out.append(f'<text x="{x0+L-6}" y="{py(v)+4:.1f}" text-anchor="end">{fmt(v)}</text>')
            out.append(f'<line x1="{x0+L}" y1="{py(v):.1f}" x2="{x0+W-R}" y2="{py(v):.1f}" stroke="#eee"/>')
        for x in tools:
            pts = [(px(n), py(v)) for n, v in zip(ns, vals[x]) if not math.isnan(v)]
            c = colors.get(x, "#2ca02c")
            out.append('<polyline fill="none" stroke="%s" stroke-width="2" points="%s"/>'
                       % (c, " ".join(f"{a:.1f},{b:.1f}" for a, b in pts)))
            out += [f'<circle cx="{a:.1f}" cy="{b:.1f}" r="3" fill="{c}"/>' for a, b in pts]
        return out
    parts = panel(0, 0, "physical I/O/s", lambda v: f"{v/1000:.0f}K")
    parts += panel(W, 1, "CPU \u00b5s per physical I/O", lambda v: f"{v:.1f}")
    names = {"raw": "raw randrw 80/20", "a": "slob (a)", "b": "slob (b)"}
    for i, x in enumerate(tools):
        parts.append(f'<rect x="{L + 150*i}" y="{H+4}" width="12" height="12" fill="{colors.get(x, "#2ca02c")}"/>')
        parts.append(f'<text x="{L + 150*i + 16}" y="{H+14}">{names.get(x, x)}</text>')
    with open(svg, "w") as f:
        f.write(f'<svg xmlns="http://www.w3.org/2000/svg" width="{2*W}" height="{H+24}" '
                f'font-family="sans-serif" font-size="11">\n' + "\n".join(parts) + "\n</svg>\n")
    print(f"chart: {svg}")
PY
