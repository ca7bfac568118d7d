import argparse
import os
from pathlib import Path

OUT = Path(os.environ.get("AUTOCODER_OUTPUTS_DIR", "/var/outputs"))
import csv
from datetime import datetime

FORMATS = ("%Y-%m-%d", "%d/%m/%Y", "%d %b %Y", "%B %d, %Y")

def parse(text):
    for fmt in FORMATS:
        try:
            return datetime.strptime(text.strip(), fmt)
        except ValueError:
            pass
    raise ValueError(text)

def main():
    p = argparse.ArgumentParser()
    p.add_argument("--invoices", required=True)
    a = p.parse_args()
    totals = {}
    with open(a.invoices, newline="") as f:
        for r in csv.DictReader(f):
            m = parse(r["date"]).strftime("%Y-%m")
            totals[m] = totals.get(m, 0.0) + float(r["amount"])
    with open(OUT / "monthly.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["month", "total"])
        for m in sorted(totals):
            w.writerow([m, f"{totals[m]:.2f}"])
    (OUT / "best_month").write_text(max(sorted(totals), key=lambda m: totals[m]))

main()
