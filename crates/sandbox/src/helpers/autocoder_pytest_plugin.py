# A pytest plugin that writes one JSON line per test phase and per failed collection to the file
# named by AUTOCODER_PYTEST_REPORT, so skips, xfails and errors stay apart.
import json
import os

_path = os.environ.get("AUTOCODER_PYTEST_REPORT")


def _write(record):
    if _path:
        with open(_path, "a", encoding="utf-8") as f:
            f.write(json.dumps(record) + "\n")


def _text(report):
    try:
        return report.longreprtext or ""
    except Exception:
        return str(report.longrepr or "")


def _properties(report, key):
    """The values the harness's conftest recorded under `key` in this test, in order."""
    try:
        return [str(v) for k, v in report.user_properties if k == key]
    except Exception:
        return []


def pytest_sessionstart(session):
    _write({"kind": "start"})


def pytest_runtest_logreport(report):
    _write({
        "kind": "test",
        "nodeid": report.nodeid,
        "when": report.when,
        "outcome": report.outcome,
        "wasxfail": hasattr(report, "wasxfail"),
        "xfail_reason": getattr(report, "wasxfail", None),
        "duration": report.duration,
        "longrepr": _text(report),
        # What the harness's tracer recorded of solution.py's runs in this test.
        "traces": _properties(report, "autocoder_trace"),
        # What the harness found wrong with the input files the test gave the script.
        "input_notes": _properties(report, "autocoder_input"),
    })


def pytest_collectreport(report):
    if report.failed:
        _write({"kind": "collect", "nodeid": report.nodeid, "longrepr": _text(report)})
