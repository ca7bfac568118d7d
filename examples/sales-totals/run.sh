#!/usr/bin/env bash
# Sales totals from a CSV (the reference docs' first scenario).
cd "$(dirname "$0")"
GENERATE=(
  --prompt "Read the sales CSV and compute total_revenue (the sum over all rows of units * unit_price, one number), total_units (the sum of units) and row_count (the number of rows)."
  --sample sales=sales.csv
  --output total_revenue:float --output total_units:int --output row_count:int
)
RUN=()
source ../common.sh
