#!/usr/bin/env python3
"""Prompt processing of a paired eval: the same tasks and seeds run by a before and an after
build (`autocoder eval ... --model-cache auto --out BEFORE`, then the same with the change and
`--out AFTER`), as llama-server reported it.

With `--model-cache auto` the after arm reads from autocoder's model-call cache every request
the before arm made with the same prompt, so the two runs of a task share their calls up to the
first prompt the change alters. Such a call carries no server figures in the after arm: it is
counted with the before arm's figures for the same request (matched by its messages), since a
user running the after build alone would have paid for it. `--timed DIR` adds another eval's
calls to look such figures up in (an after arm that followed a third one). Calls whose request
none of them timed are counted apart (`untimed`).

For each task and seed finished in both arms it prints, per arm, the calls from the run's first
diagnosis on (where a change to the repair steps parts the arms) and over the whole run: calls,
prompt tokens, tokens served from the server's prompt cache, tokens not from it, prompt time;
and the run's test runs and held-out cases right (from `eval.json`). Then the totals.

Usage: pair.py [--json] [--timed DIR]... BEFORE_DIR AFTER_DIR
Standard library only.
"""

import argparse
import hashlib
import json
import sys
from pathlib import Path

from prompt_time import figures  # the same directory: a logged answer's server figures

FIELDS = ("calls", "untimed", "prompt_tokens", "cached_tokens", "prompt_ms")


def runs(root):
    path = Path(root) / "eval.json"
    try:
        report = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        sys.exit(f"{path}: cannot read the eval's record ({error}); is {root} an eval's --out?")
    return {(run["task"], run["seed"]): run for run in report.get("runs", [])}


def key(record):
    """The request's fingerprint for matching across arms: its messages."""
    messages = (record.get("request") or {}).get("messages")
    return hashlib.sha256(json.dumps(messages, sort_keys=True).encode()).hexdigest()


def calls(root, task, seed):
    """The run's calls in order: (step, request key, figures or None)."""
    path = Path(root) / "runs" / task / f"seed-{seed}" / "conversation.jsonl"
    found = []
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as error:
        sys.exit(f"{path}: cannot read ({error})")
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError as error:
            sys.exit(f"{path}:{number}: not JSON ({error})")
        found.append((record.get("step", "?"), key(record), figures(record)))
    return found


def total(rows, timed_elsewhere):
    out = dict.fromkeys(FIELDS, 0)
    for _step, request, got in rows:
        got = got or timed_elsewhere.get(request)
        if got is None:
            out["untimed"] += 1
            continue
        out["calls"] += 1
        out["prompt_tokens"] += got[0]
        out["cached_tokens"] += got[1]
        out["prompt_ms"] += got[2]
    return out


def from_first_diagnosis(rows):
    start = next((i for i, (step, _, _) in enumerate(rows) if step == "diagnose"), len(rows))
    return rows[start:]


def add(into, row):
    for field in FIELDS:
        into[field] += row[field]


def line(label, row):
    prompt, cached = row["prompt_tokens"], row["cached_tokens"]
    share = cached / prompt if prompt else 0.0
    untimed = f", {row['untimed']} untimed" if row["untimed"] else ""
    return (
        f"  {label:<22} {row['calls']:>3} calls{untimed}, {prompt:>7,} prompt tokens, "
        f"{prompt - cached:>6,} not from the cache ({share:.1%} from it), {row['prompt_ms'] / 1000:>6.0f} s"
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("before")
    parser.add_argument("after")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--timed", action="append", default=[], metavar="DIR",
                        help="another eval whose timed calls count for calls answered from the model-call cache")
    args = parser.parse_args()
    before_runs, after_runs = runs(args.before), runs(args.after)
    others = [(other, runs(other)) for other in args.timed]
    pairs = sorted(set(before_runs) & set(after_runs))
    if not pairs:
        sys.exit(f"no task and seed finished in both {args.before} and {args.after}")
    sums = {name: dict.fromkeys(FIELDS, 0) for name in ("before_repair", "after_repair", "before_run", "after_run")}
    rows = []
    for task, seed in pairs:
        before = calls(args.before, task, seed)
        after = calls(args.after, task, seed)
        timed = {request: got for _, request, got in before if got is not None}
        for other, other_runs in others:
            if (task, seed) in other_runs:
                timed.update({request: got for _, request, got in calls(other, task, seed) if got is not None})
        row = {
            "task": task,
            "seed": seed,
            "before_repair": total(from_first_diagnosis(before), {}),
            "after_repair": total(from_first_diagnosis(after), timed),
            "before_run": total(before, {}),
            "after_run": total(after, timed),
        }
        for arm, run in (("before", before_runs[(task, seed)]), ("after", after_runs[(task, seed)])):
            cases = run.get("cases") or []
            row[f"{arm}_cases"] = [sum(1 for case in cases if case.get("correct")), len(cases)]
            row[f"{arm}_test_runs"] = run.get("test_runs", 0)
            row[f"{arm}_tests_passed"] = bool(run.get("generated"))
        for name in sums:
            add(sums[name], row[name])
        rows.append(row)
    if args.json:
        print(json.dumps({"pairs": rows, "totals": sums}, indent=2))
        return
    for row in rows:
        print(f"{row['task']} seed {row['seed']}")
        for arm in ("before", "after"):
            right, cases = row[f"{arm}_cases"]
            passed = "tests passed" if row[f"{arm}_tests_passed"] else "tests failing"
            print(f"  {arm}: {row[f'{arm}_test_runs']} test runs, {passed}, held-out {right}/{cases} cases")
            print(line(f"{arm}, from diagnosis", row[f"{arm}_repair"]))
            print(line(f"{arm}, whole run", row[f"{arm}_run"]))
    print(f"{len(rows)} pairs")
    for name in sums:
        print(line(name.replace("_repair", ", from diagnosis").replace("_run", ", whole runs"), sums[name]))


if __name__ == "__main__":
    main()
