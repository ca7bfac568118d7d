import argparse
import os
from pathlib import Path

OUT = Path(os.environ.get("AUTOCODER_OUTPUTS_DIR", "/var/outputs"))
import pandas as pd

def main():
    p = argparse.ArgumentParser()
    p.add_argument("--penguins", required=True)
    a = p.parse_args()
    df = pd.read_csv(a.penguins)
    df = df.dropna(subset=["sex", "body_mass_g"])
    g = df.groupby(["species", "sex"]).agg(count=("body_mass_g", "size"), mean_body_mass_g=("body_mass_g", "mean")).reset_index()
    g["mean_body_mass_g"] = g["mean_body_mass_g"].round(1)
    g.sort_values(["species", "sex"]).to_csv(OUT / "species_sex.csv", index=False)
    (OUT / "heaviest").write_text(str(df.groupby("species")["body_mass_g"].mean().idxmax()))

main()
