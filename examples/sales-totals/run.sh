#!/usr/bin/env bash
# Sales totals from a CSV (the reference docs' first scenario).
cd "$(dirname "$0")"
GENERATE=(
  --prompt "Read the CSV and compute total_revenue (units * unit_price over all rows), total_units and row_count."
  --sample sales=sales.csv
  --output total_revenue:float --output total_units:int --output row_count:int
)
RUN=()
source ../common.sh
