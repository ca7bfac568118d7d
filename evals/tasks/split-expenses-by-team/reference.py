import argparse
import os
from pathlib import Path

OUT = Path(os.environ.get("AUTOCODER_OUTPUTS_DIR", "/var/outputs"))
import csv

def main():
    p = argparse.ArgumentParser()
    p.add_argument("--expenses", required=True)
    a = p.parse_args()
    teams = {}
    with open(a.expenses, newline="") as f:
        for row in csv.DictReader(f):
            teams.setdefault(row["team"].strip(), []).append(row)
    out = OUT / "by_team"
    out.mkdir(parents=True, exist_ok=True)
    for team, rows in teams.items():
        with open(out / (team.lower().replace(" ", "_") + ".csv"), "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["date", "description", "amount"])
            for r in rows:
                w.writerow([r["date"], r["description"], r["amount"]])
    (OUT / "teams").write_text(str(len(teams)))

main()
