#!/usr/bin/env bash
# Sales totals from a CSV (the reference docs' first scenario).
cd "$(dirname "$0")"
GENERATE=(
  --prompt "Read the sales CSV with Python's csv module and compute total_revenue (units * unit_price of each row, summed over all rows: one number), total_units (the sum of units) and row_count (the number of rows)."
  --sample sales=sales.csv
  --output total_revenue:float --output total_units:int --output row_count:int
)
RUN=()
source ../common.sh
