import argparse
import os
from pathlib import Path

OUT = Path(os.environ.get("AUTOCODER_OUTPUTS_DIR", "/var/outputs"))
import csv
import re

EXT = re.compile(r"\s*(?:x|ext\.?)\s*\d+\s*$", re.IGNORECASE)

def normalize(text):
    digits = re.sub(r"\D", "", EXT.sub("", text))
    if len(digits) == 11 and digits.startswith("1"):
        digits = digits[1:]
    return "+1" + digits if len(digits) == 10 else ""

def main():
    p = argparse.ArgumentParser()
    p.add_argument("--contacts", required=True)
    a = p.parse_args()
    invalid = 0
    with open(a.contacts, newline="") as f, open(OUT / "phones.csv", "w", newline="") as out:
        w = csv.writer(out)
        w.writerow(["name", "phone"])
        for r in csv.DictReader(f):
            phone = normalize(r["phone"])
            invalid += phone == ""
            w.writerow([r["name"], phone])
    (OUT / "invalid").write_text(str(invalid))

main()
