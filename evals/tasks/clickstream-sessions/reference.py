import argparse
import os
from pathlib import Path

OUT = Path(os.environ.get("AUTOCODER_OUTPUTS_DIR", "/var/outputs"))
import csv
from datetime import datetime

def main():
    p = argparse.ArgumentParser()
    p.add_argument("--clicks", required=True)
    p.add_argument("--gap", required=True)
    a = p.parse_args()
    gap = float(a.gap)
    by_user = {}
    with open(a.clicks, newline="") as f:
        for row in csv.DictReader(f):
            by_user.setdefault(row["user"], []).append(datetime.fromisoformat(row["time"]))
    rows, total = [], 0
    for user in sorted(by_user):
        times = sorted(by_user[user])
        n = 1
        for prev, cur in zip(times, times[1:]):
            if (cur - prev).total_seconds() > gap:
                n += 1
        rows.append([user, n, len(times)])
        total += n
    with open(OUT / "sessions.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["user", "sessions", "clicks"])
        w.writerows(rows)
    (OUT / "total_sessions").write_text(str(total))

main()
