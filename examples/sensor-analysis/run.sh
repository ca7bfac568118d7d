#!/usr/bin/env bash
# IoT sensor analysis with business rules and a file output.
cd "$(dirname "$0")"
GENERATE=(
  --prompt "Analyze IoT sensor readings. For each sensor, calculate mean, min and max temperature, mean humidity and the number of warnings (status == 'warning'). Write a summary CSV with one row per sensor_id (columns sensor_id, avg_temp, min_temp, max_temp, avg_humidity, warnings) and, as total_anomalies, the number of readings whose temperature or humidity is outside its allowed range (a missing value is not an anomaly)."
  --sample readings=readings.csv
  --constraint "Temperature values must be between -40 and 60 Celsius"
  --constraint "Humidity values must be between 0 and 100 percent"
  --constraint "Output report must have one row per unique sensor_id"
  --output report.csv:file --output total_anomalies:int
)
RUN=()
source ../common.sh
