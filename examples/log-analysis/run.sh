#!/usr/bin/env bash
# Prompt-only log analysis: no sample at generation time, a schema text describes the output.
cd "$(dirname "$0")"
GENERATE=(
  --prompt "Parse an application log file. Each line looks like '2024-07-01 12:00:01,123 ERROR [db] connection refused id=7': date, time with milliseconds, level, component in brackets, message. For each non-empty line, fields = line.split() (on whitespace, not on commas: the comma is part of the time): the level is fields[2] and the component is fields[3].strip('[]'). Count the lines per level and per component. line_count is the number of non-empty lines, error_count the number of lines whose level is ERROR, and error_rate = error_count / line_count (0.0 when line_count is 0). summary is json.dumps of the report described by the schema."
  --input log_file:file
  --schema '{"levels": {"<LEVEL>": <count>}, "components": {"<name>": <count>}, "error_rate": <float between 0 and 1>}'
  --output summary:str --output error_count:int
)
RUN=(--log_file app.log)
source ../common.sh
