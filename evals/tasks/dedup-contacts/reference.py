import argparse
import os
from pathlib import Path

OUT = Path(os.environ.get("AUTOCODER_OUTPUTS_DIR", "/var/outputs"))
import pandas as pd

def main():
    p = argparse.ArgumentParser()
    p.add_argument("--contacts", required=True)
    a = p.parse_args()
    df = pd.read_csv(a.contacts, dtype=str, keep_default_na=False)
    df["email"] = df["email"].str.strip().str.lower()
    df["_t"] = pd.to_datetime(df["updated_at"])
    df["_id"] = df["id"].astype(int)
    kept = df.sort_values(["email", "_t", "_id"]).groupby("email").tail(1)
    kept = kept.sort_values("_id")
    kept[["id", "name", "email", "updated_at"]].to_csv(OUT / "deduped.csv", index=False)
    (OUT / "removed").write_text(str(len(df) - len(kept)))

main()
