import argparse
import os
from pathlib import Path

OUT = Path(os.environ.get("AUTOCODER_OUTPUTS_DIR", "/var/outputs"))
import csv
import re

VALID = re.compile(r"^[A-Za-z0-9._+-]+@([A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+)$")

def main():
    p = argparse.ArgumentParser()
    p.add_argument("--signups", required=True)
    a = p.parse_args()
    counts, invalid = {}, 0
    with open(a.signups, newline="") as f:
        for r in csv.DictReader(f):
            m = VALID.match(r["email"].strip())
            if not m:
                invalid += 1
                continue
            d = m.group(1).lower()
            counts[d] = counts.get(d, 0) + 1
    with open(OUT / "domains.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["domain", "signups"])
        for d, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
            w.writerow([d, n])
    (OUT / "invalid").write_text(str(invalid))

main()
