import argparse
import os
from pathlib import Path

OUT = Path(os.environ.get("AUTOCODER_OUTPUTS_DIR", "/var/outputs"))
import pandas as pd

def main():
    p = argparse.ArgumentParser()
    p.add_argument("--flights", required=True)
    p.add_argument("--airports", required=True)
    p.add_argument("--top", type=int, required=True)
    a = p.parse_args()
    f = pd.read_csv(a.flights)
    ap = pd.read_csv(a.airports, keep_default_na=False)
    names = dict(zip(ap["faa"], ap["name"]))
    g = f.groupby(["origin", "dest"]).agg(flights=("flight", "size"), mean_air_time=("air_time", "mean")).reset_index()
    g["mean_air_time"] = g["mean_air_time"].round(1)
    g = g.sort_values(["flights", "origin", "dest"], ascending=[False, True, True]).head(a.top)
    g["origin_name"] = g["origin"].map(lambda c: names.get(c, c))
    g["dest_name"] = g["dest"].map(lambda c: names.get(c, c))
    g[["origin", "dest", "origin_name", "dest_name", "flights", "mean_air_time"]].to_csv(OUT / "routes.csv", index=False)

main()
