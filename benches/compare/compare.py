#!/usr/bin/env python3
"""Time `autocoder profile --format json` against DuckDB SUMMARIZE and polars on one CSV file
(or one Parquet file: a `.parquet` path is read with `read_parquet` / `scan_parquet`).

Every tool runs as its own child process on a warm page cache; wall time comes from
`time.perf_counter` around the child, peak RSS from GNU time (`/usr/bin/time -f %M`).
Each tool runs `--repeat` times, round-robin; the table shows the fastest run and the largest
peak RSS. The load average before and after is printed: other processes skew the times.
Ratios are the tool's wall time (and CPU time, user + system, which other load skews less)
over autocoder's: above 1 means autocoder is faster.

Usage: compare.py FILE --autocoder PATH [--repeat 3] [--json OUT] [--skip-polars]
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


def run(cmd: list[str]) -> tuple[float, int, int, float]:
    """Runs `cmd` under GNU time; returns (seconds, peak RSS in bytes, exit code, CPU seconds).

    GNU time forks the tool itself, so the peak RSS is the tool's alone (a child forked from this
    Python process would start its high-water mark at this interpreter's size).
    """
    with tempfile.NamedTemporaryFile("r", suffix=".time") as report:
        start = time.perf_counter()
        proc = subprocess.run([GNU_TIME, "-f", "%M %U %S", "-o", report.name, *cmd],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
        seconds = time.perf_counter() - start
        lines = [line for line in report.read().splitlines() if line.strip()]
    if proc.returncode != 0:
        tail = proc.stderr.decode(errors="replace")[-600:]
        sys.stderr.write(f"  {cmd[0]} exited {proc.returncode}: {tail}\n")
    fields = lines[-1].split() if lines else []
    try:
        peak_kib, cpu = int(fields[0]), float(fields[1]) + float(fields[2])
    except (IndexError, ValueError):
        peak_kib, cpu = 0, 0.0
    return seconds, peak_kib * 1024, proc.returncode, cpu


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
    parser.add_argument("--skip-polars", action="store_true", help="leave polars out")
    args = parser.parse_args()
    py = sys.executable
    if args.csv.endswith(".parquet"):
        global DUCKDB_SUMMARIZE, DUCKDB_COUNT, POLARS_DESCRIBE, POLARS_COUNT
        DUCKDB_SUMMARIZE, DUCKDB_COUNT = (q.replace("read_csv", "read_parquet")
                                          for q in (DUCKDB_SUMMARIZE, DUCKDB_COUNT))
        POLARS_DESCRIBE, POLARS_COUNT = (q.replace("scan_csv(sys.argv[1], infer_schema_length=10000)",
                                                   "scan_parquet(sys.argv[1])")
                                         for q in (POLARS_DESCRIBE, POLARS_COUNT))
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
    if args.skip_polars:
        tools = [t for t in tools if not t[0].startswith("polars")]
    size = os.path.getsize(args.csv)
    print(f"file: {args.csv} ({size / 2**20:.0f} MiB), cores: {os.cpu_count()}, "
          f"runs per tool: {args.repeat}, load average {os.getloadavg()[0]:.2f}", flush=True)
    warm(args.csv)
    # Round-robin over the tools, so load from other processes hits every tool alike.
    runs: dict[str, list[tuple[float, int, int, float]]] = {name: [] for name, _ in tools}
    for round_ in range(args.repeat):
        for name, cmd in tools:
            seconds, peak, code, cpu = run(cmd)
            runs[name].append((seconds, peak, code, cpu))
            print(f"  run {round_ + 1}: {name}: {seconds:.2f} s ({cpu:.2f} s CPU), "
                  f"peak RSS {peak / 2**20:.0f} MiB", flush=True)
    results = []
    for name, _ in tools:
        times = [t for t, _, _, _ in runs[name]]
        results.append({"tool": name, "best_s": min(times), "times_s": times,
                        "cpu_s": min(c for _, _, _, c in runs[name]),
                        "peak_rss_mib": max(p for _, p, _, _ in runs[name]) / 2**20,
                        "ok": all(c == 0 for _, _, c, _ in runs[name])})
    base = results[0]["best_s"]
    print()
    base_cpu = results[0]["cpu_s"] or 1.0
    print(f"{'tool':34} {'best s':>8} {'MiB/s':>8} {'CPU s':>8} {'peak RSS MiB':>13} "
          f"{'time / autocoder':>17} {'CPU / autocoder':>16}")
    for r in results:
        note = "" if r["ok"] else "  (failed)"
        print(f"{r['tool']:34} {r['best_s']:8.2f} {size / 2**20 / r['best_s']:8.0f} "
              f"{r['cpu_s']:8.2f} {r['peak_rss_mib']:13.0f} {r['best_s'] / base:17.2f} "
              f"{r['cpu_s'] / base_cpu:16.2f}{note}")
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"file": args.csv, "bytes": size, "results": results}, f, indent=2)
    return 0 if all(r["ok"] for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
