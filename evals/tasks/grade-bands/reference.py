import argparse
import os
from pathlib import Path

OUT = Path(os.environ.get("AUTOCODER_OUTPUTS_DIR", "/var/outputs"))
import csv
import json

def grade(text):
    try:
        s = float(text)
    except ValueError:
        return "I"
    if s != s:
        return "I"
    for bound, letter in ((90, "A"), (80, "B"), (70, "C"), (60, "D")):
        if s >= bound:
            return letter
    return "F"

def main():
    p = argparse.ArgumentParser()
    p.add_argument("--scores", required=True)
    a = p.parse_args()
    counts = {}
    with open(a.scores, newline="") as f, open(OUT / "grades.csv", "w", newline="") as out:
        w = csv.writer(out)
        w.writerow(["student", "score", "grade"])
        for r in csv.DictReader(f):
            g = grade(r["score"].strip())
            counts[g] = counts.get(g, 0) + 1
            w.writerow([r["student"], r["score"], g])
    (OUT / "grade_counts.json").write_text(json.dumps(counts))

main()
