import argparse
import os
from pathlib import Path

OUT = Path(os.environ.get("AUTOCODER_OUTPUTS_DIR", "/var/outputs"))
import pandas as pd

def main():
    p = argparse.ArgumentParser()
    p.add_argument("--orders", required=True)
    p.add_argument("--items", required=True)
    p.add_argument("--products", required=True)
    a = p.parse_args()
    orders = pd.read_csv(a.orders, dtype=str)
    items = pd.read_csv(a.items, dtype={"order_id": str, "product_id": str})
    products = pd.read_csv(a.products, dtype={"product_id": str})
    done = orders[orders["status"].str.strip().str.lower() == "completed"]
    m = items.merge(done[["order_id"]], on="order_id").merge(products, on="product_id")
    m["revenue"] = m["qty"] * m["price"]
    g = m.groupby("category").agg(orders=("order_id", "nunique"), revenue=("revenue", "sum")).reset_index()
    g["revenue"] = g["revenue"].round(2)
    g.sort_values("category").to_csv(OUT / "category_revenue.csv", index=False)

main()
