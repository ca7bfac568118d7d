#!/usr/bin/env bash
# IoT sensor analysis with business rules and a file output.
cd "$(dirname "$0")"
GENERATE=(
  --prompt "Read the readings CSV with csv.DictReader (no pandas); its values are text and an empty string means missing. Group the rows by sensor_id. For each sensor: temps = the float of each of its non-empty temperature values, hums = the float of each of its non-empty humidity values, warnings = the number of its rows whose status is 'warning'. Write report.csv with csv.writer: the header sensor_id, avg_temp, min_temp, max_temp, avg_humidity, warnings, then one row per sensor_id, sorted by sensor_id: sensor_id, sum(temps) / len(temps), min(temps), max(temps), sum(hums) / len(hums), warnings. total_anomalies counts rows, not sensors: the number of rows whose temperature is non-empty and outside -40..60, or whose humidity is non-empty and outside 0..100. Anomalous rows still count in the statistics."
  --sample readings=readings.csv
  --constraint "Temperature values must be between -40 and 60 Celsius"
  --constraint "Humidity values must be between 0 and 100 percent"
  --constraint "Output report must have one row per unique sensor_id"
  --output report.csv:file --output total_anomalies:int
)
RUN=()
SEED=15  # the seed its cassette was recorded with (examples/README.md lists the seeds tried)
source ../common.sh
