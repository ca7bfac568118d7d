#!/usr/bin/env bash
# Two tables joined, with a float and a bool input.
cd "$(dirname "$0")"
GENERATE=(
  --prompt "Join orders with customers on customer_id. Keep orders whose total is at least min_total; unless include_inactive is true, drop orders of inactive customers. Write the joined rows (order_id, customer_id, name, country, total) sorted by order_id to joined.csv and their number as count."
  --sample orders=orders.csv --sample customers=customers.csv
  --input min_total:float --input include_inactive:bool
  --output joined.csv:file --output count:int
)
RUN=(--min_total 100 --include_inactive false)
source ../common.sh
