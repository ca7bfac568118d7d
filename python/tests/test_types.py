"""The package's types: its sources and a typical use type-check under mypy --strict against the
stubs, and mypy's stubtest finds the stubs true to the built native module."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

# A notebook's use of the package, as a user would write it.
USE = '''
from datetime import timedelta
from pathlib import Path

import pandera.pandas as pa

import autocoder


def report(path: Path) -> tuple[int, pa.DataFrameSchema, str]:
    profile = autocoder.profile(path)
    return profile.rows, profile.schema(), profile._repr_html_()


async def totals(frame: autocoder.ArrowStreamExportable) -> float:
    result = await autocoder.generate_async(
        "Total revenue", samples={"sales": frame}, outputs={"total": float}, model="openai/x"
    )
    made = autocoder.generate(
        prompt="Gaps", samples={"log": "app.log"}, inputs={"gap": timedelta}, model="openai/x"
    )
    assert made.success and made.plan is not None and made.tokens["input_tokens"] >= 0
    total = result.run(sales=frame, min_qty=2)["total"]
    assert isinstance(total, float)
    return total
'''


def mypy(*args: str, cwd: Path) -> None:
    done = subprocess.run([sys.executable, "-m", *args], cwd=cwd, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_package_and_its_use_type_check_strictly(tmp_path: Path) -> None:
    package = Path(__file__).resolve().parents[1] / "autocoder"
    (tmp_path / "use.py").write_text(USE)
    mypy("mypy", "--strict", "--no-incremental", str(package), "use.py", cwd=tmp_path)


def test_the_stubs_match_the_native_module(tmp_path: Path) -> None:
    mypy("mypy.stubtest", "autocoder._native", cwd=tmp_path)
