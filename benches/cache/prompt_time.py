#!/usr/bin/env python3
"""Prompt processing of one or more evals' runs, as llama-server reported it, per step.

Reads every `runs/<task>/seed-<n>/conversation.jsonl` under each EVAL_DIR (an `autocoder eval
--out` directory) or a single run directory, and sums, per step, the calls the server answered
(answers served from autocoder's model-call cache or a cassette carry no figures and are
counted apart), the prompt tokens, those served from the server's prompt cache and the prompt
time (`timings.prompt_n`, `cache_n`, `prompt_ms`). The first arm of a paired eval may have
answered plan, code and tests calls that the second arm then reads from the model-call cache:
compare the repair steps (`diagnose`, `fix_code`, `fix_tests`), which `--repair` selects.

Usage: prompt_time.py [--repair] [--json] DIR [DIR ...]
Standard library only.
"""

import argparse
import json
import sys
from pathlib import Path

REPAIR = {"diagnose", "fix_code", "fix_tests"}


def conversations(root):
    root = Path(root)
    if (root / "conversation.jsonl").is_file():
        return [root / "conversation.jsonl"]
    found = sorted(root.glob("runs/*/seed-*/conversation.jsonl"))
    if not found:
        sys.exit(f"{root}: no conversation.jsonl (neither a run directory nor an eval's --out)")
    return found


def figures(record):
    """(prompt tokens, cached tokens, prompt ms) of a logged answer, or None without timings."""
    response = record.get("response")
    if not isinstance(response, dict) or record.get("replayed"):
        return None
    timings = response.get("timings")
    if not isinstance(timings, dict):
        return None
    usage = response.get("usage") or {}
    prompt = usage.get("prompt_tokens")
    cached = (usage.get("prompt_tokens_details") or {}).get("cached_tokens")
    if cached is None:
        cached = timings.get("cache_n", 0)
    if prompt is None:
        prompt = timings.get("prompt_n", 0) + cached
    return prompt, cached, timings.get("prompt_ms", 0.0)


def summarize(root, repair_only):
    steps, runs = {}, 0
    for path in conversations(root):
        runs += 1
        with open(path, encoding="utf-8") as handle:
            for number, line in enumerate(handle, 1):
                if not line.strip():
                    continue
                try:
                    record = json.loads(line)
                except ValueError as error:
                    sys.exit(f"{path}:{number}: not JSON ({error})")
                step = record.get("step", "?")
                if repair_only and step not in REPAIR:
                    continue
                row = steps.setdefault(step, {"calls": 0, "not_timed": 0, "prompt_tokens": 0, "cached_tokens": 0, "prompt_ms": 0.0})
                got = figures(record)
                if got is None:
                    row["not_timed"] += 1
                    continue
                row["calls"] += 1
                row["prompt_tokens"] += got[0]
                row["cached_tokens"] += got[1]
                row["prompt_ms"] += got[2]
    total = {key: sum(row[key] for row in steps.values()) for key in ("calls", "not_timed", "prompt_tokens", "cached_tokens", "prompt_ms")}
    for row in list(steps.values()) + [total]:
        row["share"] = round(row["cached_tokens"] / max(row["prompt_tokens"], 1), 4)
        row["uncached_tokens"] = row["prompt_tokens"] - row["cached_tokens"]
        row["prompt_ms"] = round(row["prompt_ms"])
    return {"dir": str(root), "runs": runs, "steps": steps, "total": total}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("dirs", nargs="+")
    parser.add_argument("--repair", action="store_true", help="only the diagnosis and the fixes")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    results = [summarize(d, args.repair) for d in args.dirs]
    if args.json:
        print(json.dumps(results, indent=2))
        return
    print(f"{'dir':<32} {'step':<10} {'calls':>5} {'untimed':>7} {'prompt':>8} {'cached':>8} {'share':>6} {'uncached':>8} {'prompt s':>8}")
    for result in results:
        rows = sorted(result["steps"].items()) + [("all", result["total"])]
        for step, row in rows:
            print(
                f"{result['dir'][-32:]:<32} {step:<10} {row['calls']:>5} {row['not_timed']:>7} {row['prompt_tokens']:>8} "
                f"{row['cached_tokens']:>8} {row['share']:>6.1%} {row['uncached_tokens']:>8} {row['prompt_ms'] / 1000:>8.1f}"
            )


if __name__ == "__main__":
    main()
