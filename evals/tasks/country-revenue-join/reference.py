import argparse
import os
from pathlib import Path

OUT = Path(os.environ.get("AUTOCODER_OUTPUTS_DIR", "/var/outputs"))
import pandas as pd

def main():
    p = argparse.ArgumentParser()
    p.add_argument("--orders", required=True)
    p.add_argument("--customers", required=True)
    a = p.parse_args()
    orders = pd.read_csv(a.orders, dtype={"customer_id": str})
    customers = pd.read_csv(a.customers, dtype={"customer_id": str})
    m = orders.merge(customers[["customer_id", "country"]], on="customer_id", how="left")
    unmatched = int(m["country"].isna().sum())
    m["country"] = m["country"].fillna("Unknown")
    g = m.groupby("country").agg(customers=("customer_id", "nunique"), revenue=("amount", "sum")).reset_index()
    g["revenue"] = g["revenue"].round(2)
    g.sort_values("revenue", ascending=False).to_csv(OUT / "revenue_by_country.csv", index=False)
    (OUT / "unmatched").write_text(str(unmatched))

main()
