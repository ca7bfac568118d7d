import argparse
import os
from pathlib import Path

OUT = Path(os.environ.get("AUTOCODER_OUTPUTS_DIR", "/var/outputs"))
import pandas as pd

def main():
    p = argparse.ArgumentParser()
    p.add_argument("--sessions", required=True)
    a = p.parse_args()
    df = pd.read_csv(a.sessions)
    start = pd.to_datetime(df["start"], utc=True, format="ISO8601")
    end = pd.to_datetime(df["end"], utc=True, format="ISO8601")
    df["minutes"] = (end - start).dt.total_seconds() / 60
    g = df.groupby("user").agg(sessions=("minutes", "size"), total_minutes=("minutes", "sum")).reset_index()
    g["total_minutes"] = g["total_minutes"].round(1)
    g.sort_values("user").to_csv(OUT / "user_minutes.csv", index=False)
    (OUT / "longest").write_text(str(float((end - start).max().total_seconds())))

main()
