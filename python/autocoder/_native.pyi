"""Type stubs of the native module (python/src/*.rs); checked by the tests with mypy --strict
and mypy's stubtest against the built module."""

import os
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, final

from pandera.api.pandas.container import DataFrameSchema

from ._types import Data, IoTypeName, OutputValue

__all__ = ["AutocoderError", "Cancel", "Profile", "Result", "generate", "profile"]

class AutocoderError(Exception):
    """An autocoder call failed; the message is the command line's."""

@final
class Cancel:
    """A flag that stops a running call."""

    def __new__(cls) -> Cancel: ...
    def set(self) -> None: ...
    def is_set(self) -> bool: ...

@final
class Profile:
    """The profile of one table."""

    @property
    def source(self) -> str: ...
    @property
    def rows(self) -> int: ...
    @property
    def columns(self) -> list[str]: ...
    def to_dict(self) -> dict[str, Any]: ...
    def pandera_module(self) -> str: ...
    def schema(self) -> DataFrameSchema: ...
    def html(self) -> str: ...
    def _repr_html_(self) -> str: ...

@final
class Result:
    """A finished generation and its run directory."""

    @property
    def success(self) -> bool: ...
    @property
    def reason(self) -> str: ...
    @property
    def error(self) -> str | None: ...
    @property
    def solution(self) -> str: ...
    @property
    def tests(self) -> str: ...
    @property
    def plan(self) -> dict[str, Any] | None: ...
    @property
    def attempts(self) -> int: ...
    @property
    def tokens(self) -> dict[str, int]: ...
    @property
    def packages(self) -> list[str]: ...
    @property
    def run_dir(self) -> Path: ...
    def to_dict(self) -> dict[str, Any]: ...
    def run(self, **inputs: Data | str | int | float | bool | datetime | timedelta) -> dict[str, OutputValue]: ...
    def export(self, dir: str | os.PathLike[str]) -> None: ...

def profile(data: Data, /, *, name: str | None = None) -> Profile: ...
def generate(
    prompt: str,
    *,
    samples: dict[str, Data] | None = None,
    sample_args: dict[str, object] | None = None,
    inputs: dict[str, IoTypeName] | None = None,
    outputs: dict[str, IoTypeName] | None = None,
    constraints: Sequence[str] | None = None,
    model: str | None = None,
    api_base: str | None = None,
    api_key_env: str | None = None,
    temperature: float | None = None,
    max_tokens: int | None = None,
    seed: int | None = None,
    request_timeout: int = 600,
    model_cache: str = "auto",
    run_dir: str | os.PathLike[str] | None = None,
    name: str | None = None,
    max_iterations: int = 10,
    token_budget: int | None = None,
    skip_tests: bool = False,
    candidates: int = 1,
    sample_fixes: int = 0,
    sandbox: str = "bwrap",
    memory_mb: int = 4096,
    cpu_seconds: int = 120,
    timeout: int = 180,
    network: bool = False,
    env: dict[str, str] | None = None,
    python: str | None = None,
    reuse: bool = False,
    code_in_fences: bool = False,
    tests_see_code: bool = False,
    trace_values: bool = False,
    units: bool = False,
    queries: bool | None = None,
    no_plan: bool = False,
    base_packages: Sequence[str] | None = None,
    system_prompt: str | None = None,
    schema: str | None = None,
    progress: Callable[[dict[str, Any]], object] | None = None,
    cancel: Cancel | None = None,
) -> Result: ...
