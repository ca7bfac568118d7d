#!/usr/bin/env bash
# Two tables joined, with a float and a bool input.
cd "$(dirname "$0")"
GENERATE=(
  --prompt "Read both CSVs with csv.DictReader (no pandas). A customer is active when its active column is 'true'. Keep an order when float(total) >= min_total and (include_inactive is true or its customer is active). Write joined.csv with csv.writer: the header order_id, customer_id, name, country, total, then one row per kept order with its customer's name and country, sorted by order_id. count is the number of kept orders."
  --sample orders=orders.csv --sample customers=customers.csv
  --input min_total:float --input include_inactive:bool
  --output joined.csv:file --output count:int
)
RUN=(--min_total 100 --include_inactive false)
source ../common.sh
