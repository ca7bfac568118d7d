import argparse
import os
from pathlib import Path

OUT = Path(os.environ.get("AUTOCODER_OUTPUTS_DIR", "/var/outputs"))
import json
import re

def convert(v):
    if re.fullmatch(r"[+-]?\d+", v):
        return int(v)
    if v.lower() in ("true", "false"):
        return v.lower() == "true"
    return v

def main():
    p = argparse.ArgumentParser()
    p.add_argument("--config", required=True)
    a = p.parse_args()
    out, section = {}, None
    with open(a.config, encoding="utf-8") as f:
        for raw in f:
            line = raw.strip()
            if not line or line[0] in "#;":
                continue
            if line.startswith("[") and line.endswith("]"):
                section = line[1:-1].strip()
                out.setdefault(section, {})
                continue
            key, _, value = line.partition("=")
            out[section][key.strip()] = convert(value.strip())
    (OUT / "config.json").write_text(json.dumps(out))
    (OUT / "settings").write_text(str(sum(len(s) for s in out.values())))

main()
