"""What the package's tests share: the scripted LLM server (the workspace's
`autocoder-llm-server` binary, the only stand-in: everything else is real) and caches kept in
each test's own directory."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest


def server_binary() -> Path:
    """`AUTOCODER_LLM_SERVER`, set by scripts/test to the binary cargo built."""
    path = os.environ.get("AUTOCODER_LLM_SERVER")
    assert path, "AUTOCODER_LLM_SERVER is not set: run the tests with scripts/test"
    assert Path(path).is_file(), f"{path} does not exist: build it with cargo build -p autocoder-testkit"
    return Path(path)


def pipeline(code: str, tests: str) -> list[dict[str, Any]]:
    """The plan, code and tests answers of a run whose script is `code` (as in the CLI's
    tests, crates/cli/tests/it/scripted.rs)."""
    return [
        {"step": "plan", "reply": {"json": {"summary": "s", "approach": ["a"], "edge_cases": []}}},
        {"step": "code", "reply": {"json": {"code": code, "packages": [], "system_packages": []}}},
        {"step": "tests", "reply": {"json": {"tests": tests}}},
    ]


@pytest.fixture(autouse=True)
def own_caches(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Model and outcome caches of the test's own; no provider key from the host."""
    monkeypatch.setenv("AUTOCODER_MODEL_CACHE_DIR", str(tmp_path / "model-cache"))
    monkeypatch.setenv("AUTOCODER_OUTCOME_CACHE_DIR", str(tmp_path / "outcomes"))
    monkeypatch.setenv("SCRIPTED_KEY", "sk-scripted")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("AUTOCODER_MODEL", raising=False)
    monkeypatch.delenv("AUTOCODER_API_BASE", raising=False)


@pytest.fixture
def scripted_server(tmp_path: Path) -> Iterator[Callable[[list[dict[str, Any]]], str]]:
    """Starts the scripted server on a script; gives its API base URL."""
    started: list[subprocess.Popen[str]] = []

    def start(entries: list[dict[str, Any]]) -> str:
        script = tmp_path / f"script-{len(started)}.json"
        script.write_text(json.dumps({"entries": entries}))
        server = subprocess.Popen(
            [str(server_binary()), "--script", str(script)],
            stdout=subprocess.PIPE,
            text=True,
        )
        started.append(server)
        assert server.stdout is not None
        return server.stdout.readline().strip()

    yield start
    for server in started:
        server.terminate()
        server.wait(timeout=10)
