import argparse
import os
from pathlib import Path

OUT = Path(os.environ.get("AUTOCODER_OUTPUTS_DIR", "/var/outputs"))
import csv

MISSING = {"", "na", "n/a", "-", "null", "?", "missing"}

def main():
    p = argparse.ArgumentParser()
    p.add_argument("--readings", required=True)
    a = p.parse_args()
    stats = {}
    with open(a.readings, newline="") as f:
        for row in csv.DictReader(f):
            s = stats.setdefault(row["sensor"].strip(), [0, 0, 0.0])
            v = (row["reading"] or "").strip()
            if v.lower() in MISSING:
                s[1] += 1
            else:
                s[0] += 1
                s[2] += float(v)
    with open(OUT / "sensor_stats.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["sensor", "valid", "missing", "mean"])
        for name in sorted(stats):
            valid, missing, total = stats[name]
            w.writerow([name, valid, missing, f"{total / valid:.2f}" if valid else ""])
    (OUT / "missing_total").write_text(str(sum(s[1] for s in stats.values())))

main()
