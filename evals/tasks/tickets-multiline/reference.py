import argparse
import os
from pathlib import Path

OUT = Path(os.environ.get("AUTOCODER_OUTPUTS_DIR", "/var/outputs"))
import csv

def main():
    p = argparse.ArgumentParser()
    p.add_argument("--tickets", required=True)
    a = p.parse_args()
    stats = {}
    with open(a.tickets, newline="", encoding="utf-8") as f:
        for r in csv.DictReader(f):
            if r["status"].strip().lower() != "open":
                continue
            pr = r["priority"].strip().lower()
            s = stats.setdefault(pr, [0, None, -1])
            s[0] += 1
            if len(r["description"]) > s[2]:
                s[1], s[2] = r["id"], len(r["description"])
    with open(OUT / "open_by_priority.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["priority", "open", "longest_id"])
        for pr in sorted(stats):
            w.writerow([pr, stats[pr][0], stats[pr][1]])
    (OUT / "open_total").write_text(str(sum(s[0] for s in stats.values())))

main()
