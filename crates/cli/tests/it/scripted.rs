//! What the tests that drive `generate`, `run` and `resume` against the scripted LLM server
//! share: the binary, how it is started, the pipeline's three first answers and the sales task.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use autocoder_testkit::{Entry, Reply};
use serde_json::json;

/// The sales script with a `min_qty` input, and its test. It must be told where its outputs go
/// (`--outputs-dir` has no default here), so every run of it shows that the harness's tests and
/// `autocoder run` pass it; scripts that hard-wire `/var/outputs` (from before the option) are
/// the other tests' scripts.
pub(crate) const SALES_SCRIPT: &str = r#"import argparse
import csv
import os


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--sales", required=True)
    parser.add_argument("--min_qty", type=int, default=0)
    parser.add_argument("--outputs-dir", required=True)
    args = parser.parse_args()
    with open(args.sales, newline="") as handle:
        rows = [r for r in csv.DictReader(handle) if int(r["qty"]) >= args.min_qty]
    with open(os.path.join(args.outputs_dir, "total"), "w") as handle:
        handle.write(str(sum(int(r["qty"]) * float(r["price"]) for r in rows)))


if __name__ == "__main__":
    main()
"#;

/// The test of [`SALES_SCRIPT`] on the two-row sample (`north,3,2.5` and `south,2,4.0`).
pub(crate) const SALES_TESTS: &str = r#"import pytest


def test_total(run_solution):
    result = run_solution({"min_qty": 0})
    assert result.returncode == 0, result.stderr
    assert result.outputs["total"] == pytest.approx(3 * 2.5 + 2 * 4.0)
"#;

/// The binary under test: `AUTOCODER_TEST_BIN` when set (a copy taken aside while other builds
/// share the target directory), else the one cargo built.
pub(crate) fn binary() -> PathBuf {
    std::env::var_os("AUTOCODER_TEST_BIN")
        .map_or_else(|| env!("CARGO_BIN_EXE_autocoder").into(), Into::into)
}

/// The plan, code and tests answers of a run whose script is `code` and whose tests are `tests`.
pub(crate) fn pipeline(code: &str, tests: &str) -> Vec<Entry> {
    vec![
        Entry::step(
            "plan",
            Reply::Json(json!({"summary": "s", "approach": ["a"], "edge_cases": []})),
        ),
        Entry::step(
            "code",
            Reply::Json(json!({"code": code, "packages": [], "system_packages": []})),
        ),
        Entry::step("tests", Reply::Json(json!({"tests": tests}))),
    ]
}

/// Runs `autocoder ARGS` in `dir` with the scripted key (`SCRIPTED_KEY`), the environment cache
/// shared by the suite, model and outcome caches of `dir`'s own, no inherited log level, provider
/// key or kill hook, then `vars`.
pub(crate) fn autocoder_in(
    dir: &Path,
    args: &[impl AsRef<OsStr>],
    vars: &[(&str, &str)],
) -> Output {
    Command::new(binary())
        .args(args)
        .current_dir(dir)
        .env("SCRIPTED_KEY", "sk-scripted")
        .env(
            "AUTOCODER_ENV_CACHE",
            Path::new(env!("CARGO_TARGET_TMPDIR")).join("autocoder-envs"),
        )
        .env("AUTOCODER_MODEL_CACHE_DIR", dir.join("model-cache"))
        .env("AUTOCODER_OUTCOME_CACHE_DIR", dir.join("outcomes"))
        .env_remove("RUST_LOG")
        .env_remove("OPENAI_API_KEY")
        .env_remove("AUTOCODER_TEST_KILL_AFTER_JOURNAL_LINES")
        .envs(vars.iter().copied())
        .output()
        .unwrap()
}
