#!/usr/bin/env python3
"""Time `autocoder profile --format json` against DuckDB SUMMARIZE and polars on one CSV file.

Every tool runs as its own child process on a warm page cache; wall time comes from
`time.perf_counter` around the child, peak RSS from GNU time (`/usr/bin/time -f %M`).
Each tool runs `--repeat` times, round-robin; the table shows the fastest run and the largest
peak RSS. The load average before and after is printed: other processes skew the times.
Ratios are the tool's time over autocoder's (above 1 means autocoder is faster).

Usage: compare.py CSV --autocoder PATH [--repeat 3] [--json OUT]
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

GNU_TIME = "/usr/bin/time"

DUCKDB_SUMMARIZE = """
import duckdb, sys
con = duckdb.connect()
rows = con.sql("SUMMARIZE SELECT * FROM read_csv(?)", params=[sys.argv[1]]).fetchall()
print(len(rows), "columns summarized", file=sys.stderr)
"""

DUCKDB_COUNT = """
import duckdb, sys
con = duckdb.connect()
[(n,)] = con.sql("SELECT count(*) FROM read_csv(?)", params=[sys.argv[1]]).fetchall()
print(n, "rows", file=sys.stderr)
"""

POLARS_DESCRIBE = """
import polars as pl, sys
lf = pl.scan_csv(sys.argv[1], infer_schema_length=10000)
out = lf.describe() if hasattr(lf, "describe") else lf.collect().describe()
print(out.shape, "describe", file=sys.stderr)
"""

POLARS_COUNT = """
import polars as pl, sys
n = pl.scan_csv(sys.argv[1], infer_schema_length=10000).select(pl.len()).collect().item()
print(n, "rows", file=sys.stderr)
"""


def run(cmd: list[str]) -> tuple[float, int, int]:
    """Runs `cmd` under GNU time; returns (seconds, peak RSS in bytes, exit code).

    GNU time forks the tool itself, so the peak RSS is the tool's alone (a child forked from this
    Python process would start its high-water mark at this interpreter's size).
    """
    with tempfile.NamedTemporaryFile("r", suffix=".time") as report:
        start = time.perf_counter()
        proc = subprocess.run([GNU_TIME, "-f", "%M", "-o", report.name, *cmd],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
        seconds = time.perf_counter() - start
        lines = [line for line in report.read().splitlines() if line.strip()]
    if proc.returncode != 0:
        tail = proc.stderr.decode(errors="replace")[-600:]
        sys.stderr.write(f"  {cmd[0]} exited {proc.returncode}: {tail}\n")
    peak_kib = int(lines[-1]) if lines and lines[-1].isdigit() else 0
    return seconds, peak_kib * 1024, proc.returncode


def warm(path: str) -> None:
    """Reads the file once so every tool starts from the same (warm) page cache."""
    with open(path, "rb") as f:
        while f.read(1 << 24):
            pass


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("csv")
    parser.add_argument("--autocoder", required=True, help="path to the release binary")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", help="also write the results here")
    parser.add_argument("--skip-baselines", action="store_true",
                        help="skip the bare row counts (DuckDB count(*), polars len)")
    args = parser.parse_args()
    py = sys.executable
    tools = [
        ("autocoder profile --format json", [args.autocoder, "profile", "--quiet", "--format", "json", args.csv]),
        ("duckdb SUMMARIZE", [py, "-c", DUCKDB_SUMMARIZE, args.csv]),
        ("polars describe", [py, "-c", POLARS_DESCRIBE, args.csv]),
    ]
    if not args.skip_baselines:
        tools += [
            ("duckdb count(*) (bare parse)", [py, "-c", DUCKDB_COUNT, args.csv]),
            ("polars len (bare parse)", [py, "-c", POLARS_COUNT, args.csv]),
        ]
    size = os.path.getsize(args.csv)
    print(f"file: {args.csv} ({size / 2**20:.0f} MiB), cores: {os.cpu_count()}, "
          f"runs per tool: {args.repeat}, load average {os.getloadavg()[0]:.2f}", flush=True)
    warm(args.csv)
    # Round-robin over the tools, so load from other processes hits every tool alike.
    runs: dict[str, list[tuple[float, int, int]]] = {name: [] for name, _ in tools}
    for round_ in range(args.repeat):
        for name, cmd in tools:
            seconds, peak, code = run(cmd)
            runs[name].append((seconds, peak, code))
            print(f"  run {round_ + 1}: {name}: {seconds:.2f} s, peak RSS {peak / 2**20:.0f} MiB",
                  flush=True)
    results = []
    for name, _ in tools:
        times = [t for t, _, _ in runs[name]]
        results.append({"tool": name, "best_s": min(times), "times_s": times,
                        "peak_rss_mib": max(p for _, p, _ in runs[name]) / 2**20,
                        "ok": all(c == 0 for _, _, c in runs[name])})
    base = results[0]["best_s"]
    print()
    print(f"{'tool':34} {'best s':>8} {'MiB/s':>8} {'peak RSS MiB':>13} {'time / autocoder':>17}")
    for r in results:
        note = "" if r["ok"] else "  (failed)"
        print(f"{r['tool']:34} {r['best_s']:8.2f} {size / 2**20 / r['best_s']:8.0f} "
              f"{r['peak_rss_mib']:13.0f} {r['best_s'] / base:17.2f}{note}")
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"file": args.csv, "bytes": size, "results": results}, f, indent=2)
    return 0 if all(r["ok"] for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
