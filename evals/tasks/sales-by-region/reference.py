import argparse
import os
from pathlib import Path

OUT = Path(os.environ.get("AUTOCODER_OUTPUTS_DIR", "/var/outputs"))
import pandas as pd

def main():
    p = argparse.ArgumentParser()
    p.add_argument("--sales", required=True)
    a = p.parse_args()
    df = pd.read_csv(a.sales)
    df["revenue"] = df["quantity"].astype(float) * df["unit_price"].astype(float)
    g = df.groupby("region", as_index=False)["revenue"].sum()
    g["revenue"] = g["revenue"].round(2)
    g = g.sort_values("revenue", ascending=False)
    g[["region", "revenue"]].to_csv(OUT / "by_region.csv", index=False)
    (OUT / "total").write_text(repr(round(float(df["revenue"].sum()), 2)))

main()
