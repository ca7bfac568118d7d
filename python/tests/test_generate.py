"""autocoder.generate against the scripted LLM server with a data frame sample, Result.run on
new data, generate_async and its cancellation, Ctrl-C, and errors."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import autocoder
from conftest import pipeline

# Reads the Parquet sample a data frame became, with the pyarrow every Parquet sample gets.
SCRIPT = r'''import argparse
import os

import pyarrow.parquet as pq


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--sales", required=True)
    parser.add_argument("--min_qty", type=int, default=0)
    parser.add_argument("--outputs-dir", default="/var/outputs")
    args = parser.parse_args()
    rows = [r for r in pq.read_table(args.sales).to_pylist() if r["qty"] >= args.min_qty]
    with open(os.path.join(args.outputs_dir, "total"), "w") as handle:
        handle.write(str(sum(r["qty"] * r["price"] for r in rows)))
    with open(os.path.join(args.outputs_dir, "rows"), "w") as handle:
        handle.write(str(len(rows)))
    with open(os.path.join(args.outputs_dir, "kept.csv"), "w") as handle:
        handle.write("region\n" + "".join(r["region"] + "\n" for r in rows))


if __name__ == "__main__":
    main()
'''

TESTS = '''import pytest


def test_total(run_solution):
    result = run_solution({"min_qty": 0})
    assert result.returncode == 0, result.stderr
    assert result.outputs["total"] == pytest.approx(3 * 2.5 + 2 * 4.0)
'''

SALES = pd.DataFrame({"region": ["north", "south"], "qty": [3, 2], "price": [2.5, 4.0]})


def request(base: str, run_dir: Path) -> dict[str, Any]:
    return {
        "prompt": "Total revenue of the rows with qty >= min_qty.",
        "samples": {"sales": SALES},
        "inputs": {"min_qty": int},
        "outputs": {"total": float, "rows": "int", "kept.csv": Path},
        "model": "openai/scripted",
        "api_base": base,
        "api_key_env": "SCRIPTED_KEY",
        "run_dir": run_dir,
    }


def test_generate_with_a_data_frame_then_run_on_new_data(
    tmp_path: Path, scripted_server: Callable[[list[dict[str, Any]]], str]
) -> None:
    base = scripted_server(pipeline(SCRIPT, TESTS))
    steps: list[dict[str, Any]] = []
    result = autocoder.generate(**request(base, tmp_path / "run"), progress=steps.append)
    assert result.success, result.error
    assert [s["step"] for s in steps][:3] == ["plan", "code", "environment"], steps
    passed, failed = steps[-1]["last_run"]
    assert passed >= 1 and failed == 0, steps
    assert (result.attempts, result.solution, result.tests) == (1, SCRIPT, TESTS)
    assert result.plan == {"summary": "s", "approach": ["a"], "edge_cases": []}
    assert result.tokens["input_tokens"] == 30 and result.tokens["output_tokens"] == 15
    assert result.run_dir == tmp_path / "run"
    assert "pyarrow" in " ".join(result.packages)
    # The frame became the run's Parquet sample, read back as it was.
    sample = tmp_path / "run" / "samples" / "sales.parquet"
    pd.testing.assert_frame_equal(pd.read_parquet(sample), SALES)
    document = result.to_dict()
    assert document["samples"] == {"sales": str(sample)} and document["success"] is True

    kept = tmp_path / "run" / "outputs" / "kept.csv"
    on_sample = result.run(min_qty=0)
    assert on_sample == {"total": pytest.approx(15.5), "rows": 2, "kept.csv": kept}
    assert kept.read_text() == "region\nnorth\nsouth\n"
    more = pd.DataFrame({"region": ["east", "west"], "qty": [10, 1], "price": [1.5, 100.0]})
    outputs = result.run(sales=more, min_qty=2)
    assert outputs == {"total": pytest.approx(15.0), "rows": 1, "kept.csv": kept}
    assert [type(v) for v in outputs.values()] == [float, int, type(kept)]
    assert list(outputs) == ["total", "rows", "kept.csv"]  # in their declared order
    assert kept.read_text() == "region\neast\n"
    more.to_parquet(tmp_path / "more.parquet")
    assert result.run(sales=tmp_path / "more.parquet", min_qty=0)["total"] == pytest.approx(115.0)

    csv = tmp_path / "more.csv"
    more.to_csv(csv, index=False)
    with pytest.raises(autocoder.AutocoderError, match="the script exited with 1"):
        result.run(sales=csv, min_qty=0)
    with pytest.raises(autocoder.AutocoderError, match="the script has no input `nope`"):
        result.run(nope=1)

    # The export is a folder that runs with plain python, as `autocoder export --to`.
    exported = tmp_path / "exported"
    result.export(exported)
    assert (exported / "solution.py").read_text() == SCRIPT
    assert "--outputs-dir" in (exported / "README.md").read_text()
    out = tmp_path / "plain-outputs"
    out.mkdir()
    ran = subprocess.run(
        [sys.executable, exported / "solution.py", "--sales", tmp_path / "more.parquet",
         "--min_qty", "2", "--outputs-dir", out],
        capture_output=True, text=True, check=False,
    )
    assert ran.returncode == 0, ran.stderr
    assert (out / "rows").read_text() == "1"
    with pytest.raises(autocoder.AutocoderError, match="not empty"):
        result.export(exported)


def test_generate_async_gives_the_same_result(
    tmp_path: Path, scripted_server: Callable[[list[dict[str, Any]]], str]
) -> None:
    base = scripted_server(pipeline(SCRIPT, TESTS))
    result = asyncio.run(autocoder.generate_async(**request(base, tmp_path / "run")))
    assert result.success, result.error
    assert result.solution == SCRIPT


def test_cancelling_generate_async_stops_the_run(
    tmp_path: Path, scripted_server: Callable[[list[dict[str, Any]]], str]
) -> None:
    slow = pipeline(SCRIPT, TESTS)
    slow[0]["delay_ms"] = 60_000
    base = scripted_server(slow)

    async def cancel_soon() -> float:
        task = asyncio.create_task(autocoder.generate_async(**request(base, tmp_path / "run")))
        await asyncio.sleep(1)
        started = time.monotonic()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return time.monotonic() - started

    assert asyncio.run(cancel_soon()) < 5


def descendants(pid: int) -> dict[int, str]:
    """The processes below `pid`, with their command lines."""
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            parents[int(entry)] = int(stat.rsplit(")", 1)[1].split()[1])
    found: dict[int, str] = {}
    frontier = [pid]
    while frontier:
        parent = frontier.pop()
        for child, ppid in parents.items():
            if ppid == parent and child not in found:
                try:
                    found[child] = Path(f"/proc/{child}/cmdline").read_bytes().replace(b"\0", b" ").decode()
                except OSError:
                    continue
                frontier.append(child)
    return found


def test_ctrl_c_cancels_cleanly(tmp_path: Path, scripted_server: Callable[[list[dict[str, Any]]], str]) -> None:
    hanging = SCRIPT.replace("def main():\n", "def main():\n    import time\n    time.sleep(600)\n")
    base = scripted_server(pipeline(hanging, TESTS))
    # As an interactive Python has it, also when this suite runs where SIGINT is ignored (a
    # background job of a non-interactive shell), which the child would inherit.
    program = f"""
import signal
signal.signal(signal.SIGINT, signal.default_int_handler)
import autocoder, pandas as pd
sales = pd.DataFrame({{"region": ["north", "south"], "qty": [3, 2], "price": [2.5, 4.0]}})
try:
    autocoder.generate(prompt="Total revenue.", samples={{"sales": sales}}, inputs={{"min_qty": int}},
                       outputs={{"total": float}}, model="openai/scripted", api_base={base!r},
                       api_key_env="SCRIPTED_KEY", run_dir={str(tmp_path / "run")!r})
except KeyboardInterrupt:
    print("interrupted", flush=True)
"""
    child = subprocess.Popen([sys.executable, "-c", program], stdout=subprocess.PIPE, text=True)
    sandboxed: dict[int, str] = {}
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and child.poll() is None:
        below = descendants(child.pid)
        if any("solution.py" in line or "pytest" in line for line in below.values()):
            sandboxed = below
            break
        time.sleep(0.2)
    assert sandboxed, "the test run never started in the sandbox"
    child.send_signal(signal.SIGINT)
    stdout, _ = child.communicate(timeout=60)
    assert stdout.strip() == "interrupted"
    # A killed process may take a moment to be reaped; one still there after 10 s was left.
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(alive(pid) for pid in sandboxed):
        time.sleep(0.1)
    left = [f"{pid}: {line}" for pid, line in sandboxed.items() if alive(pid)]
    assert not left, left


def alive(pid: int) -> bool:
    """Whether `pid` still runs (a zombie has finished)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def test_a_bad_request_fails_before_any_call(tmp_path: Path) -> None:
    with pytest.raises(autocoder.AutocoderError, match=r"^invalid request: .*complex"):
        autocoder.generate(
            prompt="p",
            inputs={"x": "complex"},
            model="openai/scripted",
            api_base="http://127.0.0.1:9",
            run_dir=tmp_path / "run",
        )
    with pytest.raises(autocoder.AutocoderError, match="give model="):
        autocoder.generate(prompt="p", run_dir=tmp_path / "run")
    for option, message in [
        ({"candidates": 0}, r"candidates=0: give a number of scripts from 1 to 8"),
        ({"sample_fixes": 9}, r"sample_fixes=9: give a number of fixes from 0 to 5"),
        (
            {"inputs": {"gap": int}, "sample_args": {"gap": 2.5}},
            r"sample argument `gap`: \"2.5\" is not a valid int",
        ),
    ]:
        with pytest.raises(autocoder.AutocoderError, match=message):
            autocoder.generate(
                prompt="p",
                model="openai/scripted",
                api_base="http://127.0.0.1:9",
                run_dir=tmp_path / "run",
                **option,
            )
