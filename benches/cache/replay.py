#!/usr/bin/env python3
"""Replay a run's model requests against a llama-server and report its prompt-cache share.

The requests come from a cassette (`examples/*/cassette.jsonl`) or a run's
`conversation.jsonl`: each record's `request.messages`, in order, and its recorded answer.
Each request is sent again with `max_tokens: 1`, so the server only reads the prompt. Where a
later prompt holds an answer (the layouts with turns), the recorded answer is sent as the last
assistant message (a prefill), so that the server's slot holds the prompt and the answer as
after the real call; its tokens are not counted as prompt. The table gives, per step, the
server's own figures: prompt tokens, tokens served from its cache, and prompt time.

`--layout` rewrites the requests before sending them, to measure another arrangement of the
same text without running the model again:
  recorded      the requests as they were sent
  notes-last    a dropped attempt's notes ("A previous attempt was dropped: ...") moved from
                after the task to just before the answer's form in the code and tests
                prompts, as `templates/loop/code.j2` and `tests.j2` place them since 2026-12-02
  rules-first   the diagnosis's instructions (all but its answer's form) between the task and
                the report, and each fix the diagnosis's next turn: the diagnosis's prompt,
                its answer, then the fix's own part (its prompt after the report)
  steady-first  notes-last, and the report ordered steadiest first (tried 2026-12-06, not kept:
                docs/notes/prompt-cache.md): the diagnosis's rules (how a failure is judged)
                before the tests in the diagnosis and both fixes alike, the packages after the
                tests, and the script after the failures
  failures-first  the repair steps' report with the packages, the failures and the passing
                tests before the script instead of after it; the diagnosis's rules stay after
                the report, next to its question
  conversation  the repair steps as one growing conversation: a fix is the next turn after
                its diagnosis (only the fix's own part is new), the next diagnosis the next
                turn after the fix (the report's text after the task is new); a conversation
                starts again when its prompt would pass --budget tokens.

`--floor` sends nothing to be answered: it splits each prompt into sections (the task, each
test and script function, each failure, each block of rules), counts each section's tokens
with the server's tokenizer, and reports how many are new to the run (in no earlier prompt):
no order of the same text can serve those from a cache.

Usage: replay.py CASSETTE [--api-base URL] [--layout recorded|notes-last|rules-first|steady-first|failures-first|conversation]
                 [--budget N] [--cold] [--floor]
Standard library only. Run one replay at a time: the server has one slot.
"""

import argparse
import json
import re
import sys
import urllib.request

REPAIR = {"diagnose", "fix_code", "fix_tests"}
REPORT_MARKERS = ("\nThe tests (`test_solution.py`):", "\nThe script (`solution.py`):")


def load(path):
    records = []
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            line = line.strip()
            if not line:
                continue
            try:
                record = json.loads(line)
                messages = record["request"]["messages"]
                answer = record["response"]["choices"][0]["message"].get("content") or ""
                answer_tokens = (record["response"].get("usage") or {}).get("completion_tokens", 0)
            except (ValueError, KeyError, IndexError, TypeError) as error:
                sys.exit(f"{path}:{number}: not a request/response record ({error})")
            records.append(
                {"step": record.get("step", "?"), "messages": messages, "answer": answer, "answer_tokens": answer_tokens}
            )
    if not records:
        sys.exit(f"{path}: no records")
    return records


def report_start(text):
    """Where the run's report begins after the task (the tests or the script heading)."""
    starts = [text.find(marker) for marker in REPORT_MARKERS if marker in text]
    return min(starts) if starts else None


def common_prefix(a, b):
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


def conversation_layout(records, budget_chars):
    """The repair steps as growing conversations; other steps as recorded."""
    out = []
    turns = None  # the current conversation's messages, ending with an assistant turn
    last_diagnosis = None
    for record in records:
        step, messages = record["step"], record["messages"]
        user = messages[-1]["content"]
        if step not in REPAIR:
            turns = None
            out.append(record)
            continue
        if step == "diagnose":
            start = report_start(user)
            if turns is None or start is None:
                new = messages
            else:
                new_turn = user[start:].lstrip("\n")
                size = sum(len(m["content"]) for m in turns) + len(new_turn)
                new = messages if size > budget_chars else turns + [{"role": "user", "content": new_turn}]
            last_diagnosis = user
        else:
            if turns is None or last_diagnosis is None:
                new = messages
            else:
                # The fix's own part: its prompt after the report it shares with the diagnosis.
                own = user[common_prefix(last_diagnosis, user) :]
                size = sum(len(m["content"]) for m in turns) + len(own)
                new = messages if size > budget_chars else turns + [{"role": "user", "content": own}]
        turns = new + [{"role": "assistant", "content": record["answer"]}]
        out.append(dict(record, messages=new))
    return out


NOTES = "A previous attempt was dropped:\n"
ANSWER_FORMS = ("\nAnswer with the full test file", "\nWrite the complete script", "\nAnswer with JSON")


def with_text(record, text):
    """`record` with its last message's text replaced by `text`."""
    messages = [dict(m) for m in record["messages"]]
    messages[-1]["content"] = text
    return dict(record, messages=messages)


def notes_last_layout(records):
    """The code and tests prompts with a dropped attempt's notes just before the answer's form."""
    out = []
    for record in records:
        text = record["messages"][-1]["content"]
        start = text.find(NOTES)
        if record["step"] not in {"code", "tests"} or start < 0:
            out.append(record)
            continue
        end = text.find("\n\n", start)
        block = text[start : end + 2]
        rest = text[:start] + text[end + 2 :]
        forms = [rest.rfind(form) for form in ANSWER_FORMS if form in rest]
        at = max(forms) + 1 if forms else len(rest)
        out.append(with_text(record, rest[:at] + block + rest[at:]))
    return out


TESTS_FILE = re.compile(r"The tests \(`test_solution.py`\):\n```python\n(.*?)\n```", re.S)


def echo_cut_layout(records):
    """The failures without the test file's own lines that pytest's traceback echoes (the
    prompt shows the file just above): `loop::driver::run_report::without_echoed_tests`."""
    out = []
    for record in records:
        messages = [dict(m) for m in record["messages"]]
        for message in messages:
            text = message["content"]
            tests = TESTS_FILE.search(text)
            failures = text.find("\n### `")
            if tests is None or failures < 0:
                continue
            lines = {line for line in tests.group(1).split("\n") if line.strip()}
            kept = [
                line
                for line in text[failures:].split("\n")
                if not (line.startswith("    ") and line[4:] in lines)
            ]
            message["content"] = text[:failures] + "\n".join(kept)
        out.append(dict(record, messages=messages))
    return out


DIAGNOSIS_RULES = "\nDiagnose every failing test on its own."
DIAGNOSIS_FORM = "\nAnswer with JSON: `failures`"


def diagnosis_rules(text):
    """Where a diagnosis prompt's rules begin and its answer's form begins, or None."""
    start, form = text.find(DIAGNOSIS_RULES), text.find(DIAGNOSIS_FORM)
    return (start, form) if 0 <= start < form else None


def rules_first_layout(records):
    """The diagnosis's rules before the report; a fix as the next turn of its diagnosis."""
    out = []
    diagnosis = None  # the last diagnosis: its original text, its new messages and its answer
    for record in records:
        step, text = record["step"], record["messages"][-1]["content"]
        if step == "diagnose":
            start, span = report_start(text), diagnosis_rules(text)
            if start is None or span is None:
                diagnosis = None
                out.append(record)
                continue
            rules, form = span
            moved = with_text(record, text[:start] + text[rules:form] + "\n" + text[start:rules] + text[form:])
            diagnosis = (text, moved["messages"], record["answer"])
            out.append(moved)
        elif step in REPAIR and diagnosis is not None:
            original, messages, answer = diagnosis
            own = text[common_prefix(original, text) :]
            turns = messages + [{"role": "assistant", "content": answer}, {"role": "user", "content": own}]
            out.append(dict(record, messages=turns))
        else:
            if step not in REPAIR:
                diagnosis = None
            out.append(record)
    return out


SCRIPT_HEADING = "\nThe script (`solution.py`):"
PACKAGES_HEADING = "\nInstalled packages:"
FAILURES_HEADINGS = ("\nThese tests did not pass:", "\nWhat failed:")
FAILURES_END = ("\nEarlier rounds", DIAGNOSIS_RULES, "\nThe diagnosis found", DIAGNOSIS_FORM)


def failures_before_script(text):
    """The packages, the failures and the passing tests moved from after the script to before it."""
    script, packages = text.find(SCRIPT_HEADING), text.find(PACKAGES_HEADING)
    failures = max((at for at in map(text.find, FAILURES_HEADINGS) if at > packages), default=-1)
    if not 0 <= script < packages < failures:
        return text
    ends = [at for at in (text.find(m, failures) for m in FAILURES_END) if at >= 0]
    end = min(ends, default=len(text))
    return text[:script] + text[packages:end] + "\n" + text[script:packages] + text[end:]


def failures_first_layout(records):
    """The repair steps' report with the failures before the script; the rules stay last."""
    out = []
    for record in records:
        if record["step"] in REPAIR:
            record = with_text(record, failures_before_script(record["messages"][-1]["content"]))
        out.append(record)
    return out


def steady_first_layout(records):
    """The report ordered steadiest first: the diagnosis's rules between the task and the tests
    in the diagnosis and both fixes, then the tests, the packages, the failures and the passing
    tests, and the script last."""
    rules = None
    for record in records:
        text = record["messages"][-1]["content"]
        span = diagnosis_rules(text)
        if record["step"] == "diagnose" and span is not None:
            rules = text[span[0] : span[1]]
            break
    out = []
    for record in records:
        text = record["messages"][-1]["content"]
        if record["step"] not in REPAIR:
            out.append(record)
            continue
        text = failures_before_script(text)
        if rules is not None:
            span = diagnosis_rules(text)
            if record["step"] == "diagnose" and span is not None:
                text = text[: span[0]] + text[span[1] :]
            at = report_start(text)
            if at is not None:
                text = text[:at] + rules + "\n" + text[at:]
        out.append(with_text(record, text))
    return out


SECTION = re.compile(
    r"\n(?=def |### |The tests \(|The script \(|These tests|Installed packages|Diagnose every"
    r"|Answer with|A previous|Earlier rounds|The diagnosis found|Write |Rules for|How tests run"
    r"|The test file has)"
)


def post(url, body):
    request = urllib.request.Request(url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=3600) as response:
        return json.load(response)


def floor(api_base, records):
    """Tokens of the run's prompts, and those in a section no earlier prompt had."""
    tokenize = api_base.rstrip("/").removesuffix("/v1") + "/tokenize"
    seen, total, new = set(), 0, 0
    for record in records:
        for message in record["messages"]:
            for section in SECTION.split(message["content"]):
                count = len(post(tokenize, {"content": section, "add_special": False})["tokens"])
                total += count
                if section not in seen:
                    new += count
                    seen.add(section)
    return {"prompt_tokens": total, "new_tokens": new, "most_a_cache_can_serve": round(1 - new / max(total, 1), 4)}


def send(api_base, messages, answer=None, answer_tokens=0):
    """The server's prompt tokens, cached tokens and prompt time for one request. With an
    answer, it is sent as a prefill so that the slot holds it afterwards; its tokens are not
    counted as prompt."""
    body = {
        "messages": messages + ([{"role": "assistant", "content": answer}] if answer is not None else []),
        "max_tokens": 1,
        "temperature": 0,
        "cache_prompt": True,
    }
    reply = post(api_base.rstrip("/") + "/chat/completions", body)
    timings = reply.get("timings", {})
    usage = reply.get("usage", {})
    prompt = usage.get("prompt_tokens", 0)
    cached = (usage.get("prompt_tokens_details") or {}).get("cached_tokens")
    if cached is None:
        cached = timings.get("cache_n", 0)
    ms = timings.get("prompt_ms", 0.0)
    if answer is not None and prompt > 0:
        # The prefill's tokens were processed as prompt; take them (and their share of the time) out.
        kept = max(prompt - answer_tokens, cached)
        ms *= max(kept - cached, 0) / max(prompt - cached, 1)
        prompt = kept
    return prompt, cached, ms


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("cassette")
    parser.add_argument("--api-base", default="http://127.0.0.1:8089/v1")
    parser.add_argument("--layout", choices=["recorded", "notes-last", "rules-first", "steady-first", "failures-first", "conversation"], default="recorded")
    parser.add_argument("--budget", type=int, default=5000, help="conversation: prompt tokens before starting again")
    parser.add_argument("--echo-cut", action="store_true", help="failures without the test lines pytest echoes")
    parser.add_argument("--cold", action="store_true", help="clear the slot first with an unrelated request")
    parser.add_argument("--floor", action="store_true", help="count the tokens new to the run instead")
    args = parser.parse_args()

    records = load(args.cassette)
    if args.echo_cut:
        records = echo_cut_layout(records)
    if args.floor:
        print(json.dumps(floor(args.api_base, records), indent=2))
        return
    if args.layout == "notes-last":
        records = notes_last_layout(records)
    if args.layout == "rules-first":
        records = rules_first_layout(notes_last_layout(records))
    if args.layout == "failures-first":
        records = failures_first_layout(records)
    if args.layout == "steady-first":
        records = steady_first_layout(notes_last_layout(records))
    if args.layout == "conversation":
        # About 3.4 characters per token for this text with Qwen2.5's tokenizer.
        records = conversation_layout(records, int(args.budget * 3.4))
    if args.cold:
        send(args.api_base, [{"role": "user", "content": "cold start"}])

    per_step = {}
    total = [0, 0, 0.0]
    print(f"{'#':>3} {'step':<10} {'prompt':>7} {'cached':>7} {'share':>6} {'ms':>8}", file=sys.stderr)
    for index, record in enumerate(records):
        # The answer matters only where a later prompt holds it (a conversation's next turn).
        answer = record["answer"] if args.layout in {"conversation", "rules-first"} else None
        prompt, cached, ms = send(args.api_base, record["messages"], answer, record["answer_tokens"])
        print(f"{index:>3} {record['step']:<10} {prompt:>7} {cached:>7} {cached / max(prompt, 1):>6.1%} {ms:>8.0f}", file=sys.stderr)
        row = per_step.setdefault(record["step"], [0, 0, 0, 0.0])
        row[0] += 1
        row[1] += prompt
        row[2] += cached
        row[3] += ms
        total[0] += prompt
        total[1] += cached
        total[2] += ms
    result = {
        "cassette": args.cassette,
        "layout": args.layout + (" + echo-cut" if args.echo_cut else ""),
        "steps": {step: {"calls": r[0], "prompt_tokens": r[1], "cached_tokens": r[2], "prompt_ms": round(r[3])} for step, r in per_step.items()},
        "prompt_tokens": total[0],
        "cached_tokens": total[1],
        "share": round(total[1] / max(total[0], 1), 4),
        "uncached_tokens": total[0] - total[1],
        "prompt_ms": round(total[2]),
    }
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
