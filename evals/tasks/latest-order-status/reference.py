import argparse
import os
from pathlib import Path

OUT = Path(os.environ.get("AUTOCODER_OUTPUTS_DIR", "/var/outputs"))
import csv
import json

def main():
    p = argparse.ArgumentParser()
    p.add_argument("--log", required=True)
    a = p.parse_args()
    seen = set()
    orders = {}
    with open(a.log, newline="") as f:
        for r in csv.DictReader(f):
            key = tuple(r.values())
            if key in seen:
                continue
            seen.add(key)
            o = orders.setdefault(r["order_id"], [])
            o.append((int(r["seq"]), r["status"]))
    counts = {}
    with open(OUT / "current_status.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["order_id", "status", "changes"])
        for oid in sorted(orders, key=lambda x: int(x)):
            status = max(orders[oid])[1]
            counts[status] = counts.get(status, 0) + 1
            w.writerow([oid, status, len(orders[oid])])
    (OUT / "status_counts.json").write_text(json.dumps(counts))

main()
