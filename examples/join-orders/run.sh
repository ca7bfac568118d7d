#!/usr/bin/env bash
# Two tables joined, with a float and a bool input.
cd "$(dirname "$0")"
GENERATE=(
  --prompt "Read both CSVs with csv.DictReader (no pandas). Index the customers: customers_by_id = {row['customer_id']: row for row in customers_rows}. The orders have no active column: an order's customer is customers_by_id[order['customer_id']], and the customer is active when customer['active'] == 'true'. Keep an order when float(order['total']) >= min_total and (include_inactive or its customer is active). Write joined.csv with csv.writer: the header order_id, customer_id, name, country, total, then one row per kept order, sorted by order_id: its order_id, customer_id, its customer's name and country, and its own total. count is the number of kept orders."
  --sample orders=orders.csv --sample customers=customers.csv
  --input min_total:float --input include_inactive:bool
  --sample-arg min_total=100 --sample-arg include_inactive=false
  --output joined.csv:file --output count:int
)
RUN=(--min_total 100 --include_inactive false)
SEED=1  # the cassette's seed (examples/README.md)
source ../common.sh
