import argparse
import os
from pathlib import Path

OUT = Path(os.environ.get("AUTOCODER_OUTPUTS_DIR", "/var/outputs"))
import csv
from datetime import date

def main():
    p = argparse.ArgumentParser()
    p.add_argument("--payments", required=True)
    p.add_argument("--rates", required=True)
    a = p.parse_args()
    rates = {}
    with open(a.rates, newline="") as f:
        for r in csv.DictReader(f):
            rates.setdefault(r["currency"], []).append((date.fromisoformat(r["date"]), float(r["eur_per_unit"])))
    rows, left = [], 0
    with open(a.payments, newline="") as f:
        for r in csv.DictReader(f):
            d, cur, amount = date.fromisoformat(r["date"]), r["currency"], float(r["amount"])
            if cur == "EUR":
                rate = 1.0
            else:
                known = [x for x in rates.get(cur, []) if x[0] <= d]
                if not known:
                    left += 1
                    continue
                rate = max(known)[1]
            rows.append((int(r["payment_id"]), round(amount * rate, 2)))
    rows.sort()
    with open(OUT / "payments_eur.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["payment_id", "amount_eur"])
        for pid, v in rows:
            w.writerow([pid, f"{v:.2f}"])
    (OUT / "unconverted").write_text(str(left))

main()
