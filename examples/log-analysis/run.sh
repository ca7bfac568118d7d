#!/usr/bin/env bash
# Prompt-only log analysis: no sample at generation time, a schema text describes the output.
cd "$(dirname "$0")"
GENERATE=(
  --prompt "Parse an application log file. Each line looks like '2024-07-01 12:00:01,123 ERROR [db] connection refused id=7': date, time with milliseconds, level, component in brackets, message. Start with levels = {}, components = {}, line_count = 0 and error_count = 0. For each non-empty line: add 1 to line_count; fields = line.split() (on whitespace, not on commas: the comma is part of the time); level = fields[2]; component = fields[3].strip('[]'); add 1 to levels[level] and to components[component]; if level == 'ERROR', add 1 to error_count. Then error_rate = error_count / line_count (0.0 when line_count is 0), and summary = json.dumps({'levels': levels, 'components': components, 'error_rate': error_rate}), the report the schema describes."
  --input log_file:file
  --schema '{"levels": {"<LEVEL>": <count>}, "components": {"<name>": <count>}, "error_rate": <float between 0 and 1>}'
  --output summary:str --output error_count:int
)
RUN=(--log_file app.log)
SEED=3  # the seed this cassette was recorded with (examples/README.md)
source ../common.sh
