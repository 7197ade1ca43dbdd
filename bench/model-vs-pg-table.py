#!/usr/bin/env python3
"""The model-vs-PostgreSQL table from bench/model-vs-pg.sh's store.

Usage: bench/model-vs-pg-table.py OUT [DBIO]   (OUT as the script's; DBIO the binary)

The numbers come from `dbio runs export --format json` (the stored metrics
of every run tagged model-vs-pg); the top waits, which are not stored
metrics, from each run's JSON in OUT/json. A cell's value is the median over
its repeats (n in the table). Ratios are pg / model.
"""
import json
import statistics
import subprocess
import sys
from collections import defaultdict

out = sys.argv[1]
dbio = sys.argv[2] if len(sys.argv) > 2 else "dbio"
rows = json.loads(
    subprocess.check_output(
        [dbio, "runs", "export", "--db", f"{out}/store.sqlite", "--tag", "model-vs-pg",
         "--format", "json", "--metrics", "db.*,pg.*,event.log_file_sync.*"]
    )
)


def tag(r, prefix, kinds):
    for t in r["tags"]:
        if t.startswith(prefix) and t[len(prefix):] in kinds:
            return t[len(prefix):]
    return None


def top_waits(path, measured=None):
    try:
        r = json.load(open(path))
    except (OSError, ValueError):
        return "-"
    if "pg" in r:
        w = r["pg"].get("waits") or []
        return ", ".join(f'{x["event"]} {x["pct"]:.0f}%' for x in w[:2])
    s = r.get("slob") or {}
    ev = sorted(s.get("events") or [], key=lambda e: -e.get("pct_db_time", 0.0))
    fg = [e for e in ev if e.get("pct_db_time")]
    return ", ".join(f'{e["name"]} {e["pct_db_time"]:.0f}%' for e in fg[:2])


cells = defaultdict(list)
for r in rows:
    if r["status"] != "completed":
        continue
    tags = r["tags"]
    fs = next(t for t in tags if t in ("xfs", "ext4"))
    wl = r["workload"]
    flav = next(t[len("flavor-"):] for t in tags if t.startswith("flavor-"))
    u = int(tag(r, "u", ("0", "20", "50", "100")))
    rep = tag(r, "rep", [str(i) for i in range(1, 20)])
    upd_s = r.get("db.executes_per_s", 0.0) * u / 100
    redo_s = r.get("db.redo_bytes_per_s", 0.0)
    cells[(fs, u, r["sessions"], flav)].append({
        "reads": r.get("db.physical_reads_per_s", 0.0),
        "dev_reads": r.get("pg.device_reads_per_s", r.get("db.physical_reads_per_s", 0.0)),
        "writes": r.get("db.physical_writes_per_s", 0.0),
        "redo_per_upd": redo_s / upd_s if upd_s > 0 else None,
        "redo_s": redo_s,
        "commit_ms": r.get("event.log_file_sync.avg_ms"),
        "executes": r.get("db.executes_per_s", 0.0),
        "reads_per_exec": r.get("db.physical_reads_per_s", 0.0) / max(r.get("db.executes_per_s", 0.0), 1e-9),
        "writes_per_upd": r.get("db.physical_writes_per_s", 0.0) / upd_s if upd_s > 0 else None,
        "fpi_per_upd": r.get("pg.wal_fpi_per_s", 0.0) / upd_s if upd_s > 0 and wl == "pg" else None,
        "absorbed": r.get("pg.absorbed_pct"),
        "waits": top_waits(f'{out}/json/{wl}-{flav}-{fs}-u{u}-s{r["sessions"]}-rep{rep}.json'),
    })


def med(xs, k):
    v = [x[k] for x in xs if x[k] is not None]
    return statistics.median(v) if v else None


def f(x, d=0):
    if x is None:
        return "-"
    return f"{x:,.{d}f}"


def ratio(a, b):
    if a is None or b is None or b == 0:
        return "-"
    return f"{a / b:.2f}"


flavors = sorted({k[3] for k in cells if k[3] != "pg"})
for flav in flavors:
    print(f"\n### pg against the model, --flavor {flav}\n")
    print("| fs | UPD% | sess | n pg/model | pg reads/s (blks_read) | pg device r/s | absorbed | "
          "model reads/s | reads pg/model (device) | pg writes/s | model writes/s | writes pg/model | "
          "pg WAL B/update | model redo B/update | redo pg/model | pg commit ms | model commit ms | "
          "commit pg/model | pg executes/s | model executes/s | pg top waits | model top waits |")
    print("|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|")
    for key in sorted(k for k in cells if k[3] == "pg"):
        fs, u, s, _ = key
        p, m = cells[key], cells.get((fs, u, s, flav), [])
        if not m:
            continue
        pr, pd, mr = med(p, "reads"), med(p, "dev_reads"), med(m, "reads")
        pw, mw = med(p, "writes"), med(m, "writes")
        pre, mre = med(p, "redo_per_upd"), med(m, "redo_per_upd")
        pc, mc = med(p, "commit_ms"), med(m, "commit_ms")
        print(f"| {fs} | {u} | {s} | {len(p)}/{len(m)} | {f(pr)} | {f(pd)} | {f(med(p, 'absorbed'))}% | "
              f"{f(mr)} | {ratio(pr, mr)} ({ratio(pd, mr)}) | {f(pw)} | {f(mw)} | {ratio(pw, mw)} | "
              f"{f(pre)} | {f(mre)} | {ratio(pre, mre)} | {f(pc, 2)} | {f(mc, 2)} | {ratio(pc, mc)} | "
              f"{f(med(p, 'executes'))} | {f(med(m, 'executes'))} | {p[-1]['waits']} | {m[-1]['waits']} |")

    print(f"\n#### Per operation (the same runs), --flavor {flav}\n")
    print("| fs | UPD% | sess | pg executes/s | model executes/s | executes pg/model | pg reads/execute | "
          "model reads/execute | pg writes/update | model writes/update | pg FPI/update | "
          "pg WAL B/update | model redo B/update |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for key in sorted(k for k in cells if k[3] == "pg"):
        fs, u, s, _ = key
        p, m = cells[key], cells.get((fs, u, s, flav), [])
        if not m:
            continue
        pe, me = med(p, "executes"), med(m, "executes")
        print(f"| {fs} | {u} | {s} | {f(pe)} | {f(me)} | {ratio(pe, me)} | {f(med(p, 'reads_per_exec'), 1)} | "
              f"{f(med(m, 'reads_per_exec'), 1)} | {f(med(p, 'writes_per_upd'), 1)} | {f(med(m, 'writes_per_upd'), 1)} | "
              f"{f(med(p, 'fpi_per_upd'), 1)} | {f(med(p, 'redo_per_upd'))} | {f(med(m, 'redo_per_upd'))} |")
