import argparse
import os
from pathlib import Path

OUT = Path(os.environ.get("AUTOCODER_OUTPUTS_DIR", "/var/outputs"))
import json
import re
from collections import Counter

STOP = {"the", "a", "an", "and", "or", "of", "to", "in", "is", "it"}

def main():
    p = argparse.ArgumentParser()
    p.add_argument("--text", required=True)
    p.add_argument("--n", type=int, required=True)
    a = p.parse_args()
    text = open(a.text, encoding="utf-8").read().lower()
    words = [w for w in re.findall(r"[a-z]+(?:'[a-z]+)*", text) if w not in STOP]
    counts = Counter(words)
    top = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[: a.n]
    (OUT / "top_words.json").write_text(json.dumps([{"word": w, "count": c} for w, c in top]))
    (OUT / "distinct").write_text(str(len(counts)))

main()
