import argparse
import os
from pathlib import Path

OUT = Path(os.environ.get("AUTOCODER_OUTPUTS_DIR", "/var/outputs"))
import csv

def main():
    p = argparse.ArgumentParser()
    p.add_argument("--inventory", required=True)
    a = p.parse_args()
    rows = []
    with open(a.inventory, newline="") as f:
        for r in csv.DictReader(f):
            if r["discontinued"].strip().lower() == "yes":
                continue
            if int(r["stock"]) <= int(r["reorder_level"]):
                rows.append([r["sku"], r["name"], int(r["max_stock"]) - int(r["stock"])])
    rows.sort(key=lambda r: r[0])
    with open(OUT / "reorder.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["sku", "name", "order_qty"])
        w.writerows(rows)
    (OUT / "total_qty").write_text(str(sum(r[2] for r in rows)))

main()
