import argparse
import os
from pathlib import Path

OUT = Path(os.environ.get("AUTOCODER_OUTPUTS_DIR", "/var/outputs"))
import pandas as pd

def main():
    p = argparse.ArgumentParser()
    p.add_argument("--flights", required=True)
    p.add_argument("--airlines", required=True)
    p.add_argument("--min_flights", type=int, required=True)
    a = p.parse_args()
    f = pd.read_csv(a.flights)
    al = pd.read_csv(a.airlines, keep_default_na=False)
    g = f.groupby("carrier").agg(flights=("carrier", "size"), mean_dep_delay=("dep_delay", "mean")).reset_index()
    g = g[g["flights"] >= a.min_flights]
    g["mean_dep_delay"] = g["mean_dep_delay"].round(2)
    g = g.merge(al, on="carrier", how="left")
    g["name"] = g["name"].fillna("")
    g = g.sort_values("mean_dep_delay", ascending=False)
    g[["carrier", "name", "flights", "mean_dep_delay"]].to_csv(OUT / "carrier_delays.csv", index=False)

main()
