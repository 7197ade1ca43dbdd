#!/usr/bin/env python3
"""Per operation at the device: bench/model-vs-pg.sh's runs, model against PostgreSQL.

Usage: bench/model-vs-pg-device.py OUT   (OUT as the script's: its json/ is read)

For each run: operations per second; logical physical reads per operation
(PostgreSQL's blks_read, the model's physical reads); the loop device's read
and write requests and KiB per operation, and its flushes; buffers written per
operation (PostgreSQL's buffers_checkpoint + buffers_clean + buffers_backend,
the model's physical writes) and the backends' share of them. The last line
is the model's mean over PostgreSQL's mean, column by column.
"""
import glob
import json
import os
import sys


def loop_device(d):
    for x in d["telemetry_window"]["devices"]:
        if x["name"].startswith("loop"):
            return x["rates"]
    raise SystemExit("no loop device in the run's telemetry")


def row(path):
    d = json.load(open(path))
    m = d["measured_s"]
    x = loop_device(d)
    if "pg" in d:
        s = d["pg"]["server"]
        ops = d["pg"]["selects"] + d["pg"]["updates"]
        bw = s["buffers_checkpoint"] + s["buffers_clean"] + s["buffers_backend"]
        backend = s["buffers_backend"]
        reads = d["pg"]["physical_reads"]["pg_blocks"]
    else:
        c = d["slob"]["counters"]
        ops = c["executes"]
        bw = c["physical_writes"]
        backend = c.get("backend_writes", 0)
        reads = c["physical_reads"]
    per_op = lambda rate: rate * m / ops
    return {
        "run": os.path.basename(path)[:-5],
        "ops/s": ops / m,
        "reads/op": reads / ops,
        "dev r/op": per_op(x["r_per_s"]),
        "dev w/op": per_op(x["w_per_s"]),
        "dev rKiB/op": per_op(x["rkib_per_s"]),
        "dev wKiB/op": per_op(x["wkib_per_s"]),
        "dev flush/op": per_op(x["f_per_s"]),
        "buffer writes/op": bw / ops,
        "backend share": backend / max(bw, 1),
    }


rows = [row(p) for p in sorted(glob.glob(os.path.join(sys.argv[1], "json", "*.json")))]
keys = [k for k in rows[0] if k != "run"]
print("| run | " + " | ".join(keys) + " |")
print("|---" + "|---:" * len(keys) + "|")
for r in rows:
    print(f"| {r['run']} | " + " | ".join(f"{r[k]:.3g}" for k in keys) + " |")
pg = [r for r in rows if r["run"].startswith("pg-")]
model = [r for r in rows if not r["run"].startswith("pg-")]
mean = lambda rs, k: sum(r[k] for r in rs) / len(rs)
if pg and model:
    print("| model / pg | " + " | ".join(
        f"{mean(model, k) / mean(pg, k):.2f}" if mean(pg, k) else "-" for k in keys) + " |")
