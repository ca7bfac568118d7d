import argparse
import os
from pathlib import Path

OUT = Path(os.environ.get("AUTOCODER_OUTPUTS_DIR", "/var/outputs"))
import pandas as pd

def main():
    p = argparse.ArgumentParser()
    p.add_argument("--events", required=True)
    p.add_argument("--tz", required=True)
    a = p.parse_args()
    df = pd.read_csv(a.events)
    local = pd.to_datetime(df["timestamp"], utc=True).dt.tz_convert(a.tz)
    days = local.dt.strftime("%Y-%m-%d")
    counts = days.value_counts().sort_index()
    out = pd.DataFrame({"date": counts.index, "events": counts.values})
    out.to_csv(OUT / "daily.csv", index=False)
    best = max(counts.values)
    (OUT / "busiest_day").write_text(min(d for d, n in counts.items() if n == best))

main()
