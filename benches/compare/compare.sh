#!/usr/bin/env bash
# Times `autocoder profile --format json` against DuckDB SUMMARIZE and polars on a ~1 GB mixed CSV.
#
#   benches/compare/compare.sh [--size-mb N] [--repeat N] [--data DIR] [--parquet]
#
# Builds autocoder in release mode, creates a venv with the pinned duckdb and polars
# (benches/compare/requirements.txt) under target/bench-python, writes the CSV once with
# gen_csv.py into DIR (default target/bench-data, never committed), then runs compare.py.
# --parquet writes a mixed Parquet file with gen_parquet.py instead (pyarrow, numpy).
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
source "$HERE/../../scripts/bootstrap.sh"

size_mb=1024
repeat=3
data_dir="$ROOT/target/bench-data"
parquet=0
while [ $# -gt 0 ]; do
  case "$1" in
    --size-mb) size_mb="$2"; shift 2 ;;
    --repeat) repeat="$2"; shift 2 ;;
    --data) data_dir="$2"; shift 2 ;;
    --parquet) parquet=1; shift ;;
    *) say "unknown argument: $1"; exit 2 ;;
  esac
done

ensure_system_packages
ensure_rust
cd "$ROOT"
if [ ! -x /usr/bin/time ]; then   # GNU time measures each tool's peak RSS
  say "installing GNU time"
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends time >/dev/null
fi

venv="$ROOT/target/bench-python"
req="$HERE/requirements.txt"
if [ ! -x "$venv/bin/python" ]; then
  say "creating the benchmark Python at $venv"
  python3 -m venv "$venv"
fi
if ! cmp -s "$req" "$venv/.requirements"; then
  say "installing duckdb and polars ($req)"
  "$venv/bin/python" -m pip install -q --disable-pip-version-check -r "$req"
  cp "$req" "$venv/.requirements"
fi

say "building autocoder and the stage breakdown (release)"
cargo build --release --quiet -p autocoder
cargo build --release --quiet -p autocoder-benches --example stages
bin="${CARGO_TARGET_DIR:-$ROOT/target}/release/autocoder"
stages="${CARGO_TARGET_DIR:-$ROOT/target}/release/examples/stages"

mkdir -p "$data_dir"
if [ "$parquet" = 1 ]; then
  file="$data_dir/mixed-${size_mb}m.parquet"
  if [ ! -s "$file" ]; then
    say "writing $file"
    "$venv/bin/python" "$HERE/gen_parquet.py" "$file" --size-mb "$size_mb"
  fi
  "$venv/bin/python" "$HERE/compare.py" "$file" --autocoder "$bin" --repeat "$repeat" \
    --json "$data_dir/compare-${size_mb}m-parquet.json"
  exit 0
fi
csv="$data_dir/mixed-${size_mb}m.csv"
if [ ! -s "$csv" ]; then
  say "writing $csv"
  python3 "$HERE/gen_csv.py" "$csv" --size-mb "$size_mb"
fi

"$venv/bin/python" "$HERE/compare.py" "$csv" --autocoder "$bin" --repeat "$repeat" \
  --json "$data_dir/compare-${size_mb}m.json"

say "where autocoder's time goes (parse, type inference, sketches, merge)"
"$stages" "$csv" 0 --json "$data_dir/stages-${size_mb}m.json"
