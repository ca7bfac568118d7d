import argparse
import os
from pathlib import Path

OUT = Path(os.environ.get("AUTOCODER_OUTPUTS_DIR", "/var/outputs"))
import json
import re

LINE = re.compile(r"^(\S+) \[(DEBUG|INFO|WARN|ERROR)\] ([^:\s]+): (.*)$")

def main():
    p = argparse.ArgumentParser()
    p.add_argument("--log", required=True)
    a = p.parse_args()
    entries = skipped = 0
    levels, errors, first = {}, {}, None
    with open(a.log, encoding="utf-8") as f:
        for raw in f:
            line = raw.rstrip("\n")
            m = LINE.match(line)
            if not m:
                if line.strip():
                    skipped += 1
                continue
            ts, level, service, _ = m.groups()
            entries += 1
            levels[level] = levels.get(level, 0) + 1
            if level == "ERROR":
                errors[service] = errors.get(service, 0) + 1
                if first is None or ts < first:
                    first = ts
    (OUT / "summary.json").write_text(json.dumps({"entries": entries, "skipped": skipped, "levels": levels, "errors_by_service": errors, "first_error": first}))

main()
