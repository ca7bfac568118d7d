import argparse
import os
from pathlib import Path

OUT = Path(os.environ.get("AUTOCODER_OUTPUTS_DIR", "/var/outputs"))
import csv
from datetime import datetime

def main():
    p = argparse.ArgumentParser()
    p.add_argument("--transactions", required=True)
    p.add_argument("--since", required=True)
    p.add_argument("--include_refunds", required=True)
    a = p.parse_args()
    since = datetime.fromisoformat(a.since)
    refunds = a.include_refunds.strip().lower() in ("true", "1", "yes")
    total, count = 0.0, 0
    with open(a.transactions, newline="") as f:
        for row in csv.DictReader(f):
            if datetime.fromisoformat(row["timestamp"]) < since:
                continue
            kind = row["type"].strip().lower()
            if kind == "sale":
                total += float(row["amount"]); count += 1
            elif kind == "refund" and refunds:
                total -= float(row["amount"]); count += 1
    (OUT / "total").write_text(f"{total:.2f}")
    (OUT / "count").write_text(str(count))

main()
