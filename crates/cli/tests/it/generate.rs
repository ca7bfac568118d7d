//! `autocoder generate` and `autocoder run` as a user runs them: the binary against the
//! scripted LLM server (the only stand-in), with the real sandbox.

use std::path::Path;
use std::process::Command;

use autocoder_testkit::{Entry, Script, ScriptedServer};
use serde_json::{Value, json};

use crate::scripted::{SALES_SCRIPT, SALES_TESTS, autocoder_in, pipeline};

fn entries() -> Vec<Entry> {
    pipeline(SALES_SCRIPT, SALES_TESTS)
}

fn autocoder(dir: &Path, args: &[&str]) -> std::process::Output {
    autocoder_in(dir, args, &[])
}

#[tokio::test(flavor = "multi_thread")]
async fn generate_then_run_on_new_data() {
    let server = ScriptedServer::start(Script::new(entries())).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("sales.csv"),
        "region,qty,price\nnorth,3,2.5\nsouth,2,4.0\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("more.csv"),
        "region,qty,price\neast,10,1.5\nwest,1,100\n",
    )
    .unwrap();
    let base = server.base_url();
    let workdir = dir.path().to_owned();
    let generated = tokio::task::spawn_blocking(move || {
        autocoder(
            &workdir,
            &[
                "generate",
                "--prompt",
                "Total revenue of the rows with qty >= min_qty.",
                "--sample",
                "sales=sales.csv",
                "--input",
                "min_qty:int",
                "--output",
                "total:float",
                "--model",
                "openai/scripted",
                "--api-base",
                &base,
                "--api-key-env",
                "SCRIPTED_KEY",
                "--out",
                "run",
                "--json",
            ],
        )
    })
    .await
    .unwrap();
    let stderr = String::from_utf8_lossy(&generated.stderr);
    assert!(generated.status.success(), "{stderr}");
    let result: Value =
        serde_json::from_slice(&generated.stdout).expect("--json prints only the result");
    assert_eq!(result["success"], true);
    assert_eq!(result["attempts"], 1);
    assert!(dir.path().join("run/solution.py").exists());

    let workdir = dir.path().to_owned();
    let ran = tokio::task::spawn_blocking(move || {
        autocoder(
            &workdir,
            &[
                "run",
                "run",
                "--json",
                "--",
                "--sales",
                "more.csv",
                "--min_qty",
                "5",
            ],
        )
    })
    .await
    .unwrap();
    assert!(
        ran.status.success(),
        "{}",
        String::from_utf8_lossy(&ran.stderr)
    );
    let outputs: Value = serde_json::from_slice(&ran.stdout).unwrap();
    assert_eq!(outputs, json!({"total": 15.0}));

    let workdir = dir.path().to_owned();
    let missing = tokio::task::spawn_blocking(move || {
        autocoder(&workdir, &["run", "run", "--", "--min_qty", "1"])
    })
    .await
    .unwrap();
    assert!(
        missing.status.success(),
        "the sample is the default for --sales"
    );
    let workdir = dir.path().to_owned();
    let bad = tokio::task::spawn_blocking(move || {
        autocoder(&workdir, &["run", "run", "--", "--min_qty", "many"])
    })
    .await
    .unwrap();
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("min_qty"));
}

#[test]
fn a_bad_request_fails_before_any_model_call() {
    let dir = tempfile::tempdir().unwrap();
    // Each flag set is refused with a message naming what is wrong: an output name with an
    // extension for a scalar, a value on the samples for an input that is not declared, or
    // not of its type, or not NAME=VALUE.
    for (flags, expected) in [
        (&["--output", "result.csv:float"][..], "result.csv"),
        (&["--sample-arg", "gap=30"][..], "no input `gap`"),
        (
            &["--input", "gap:int", "--sample-arg", "gap=soon"][..],
            "\"soon\" is not a valid int",
        ),
        (&["--sample-arg", "gap"][..], "write NAME=VALUE"),
    ] {
        let mut args = vec![
            "generate",
            "--prompt",
            "x",
            "--model",
            "openai/scripted",
            "--api-base",
            "http://127.0.0.1:9/v1",
            "--api-key-env",
            "SCRIPTED_KEY",
        ];
        args.extend_from_slice(flags);
        let out = autocoder(dir.path(), &args);
        assert_eq!(out.status.code(), Some(2), "{flags:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(expected), "{flags:?}: {stderr}");
    }
}

const PARQUET_SCRIPT: &str = r#"import argparse

import pandas as pd


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--sales", required=True)
    args = parser.parse_args()
    df = pd.read_parquet(args.sales)
    with open("/var/outputs/total", "w") as handle:
        handle.write(str(float((df["qty"] * df["price"]).sum())))


if __name__ == "__main__":
    main()
"#;

const PARQUET_TESTS: &str = r#"import pytest


def test_total(run_solution):
    result = run_solution()
    assert result.returncode == 0, result.stderr
    assert result.outputs["total"] == pytest.approx(3 * 2.5 + 2 * 4.0)
"#;

/// Writes `rows` of `(region, qty, price)` as Parquet with pyarrow, the writer users have.
fn write_parquet(path: &Path, rows: &str) {
    let python = std::env::var_os("AUTOCODER_TEST_PYTHON")
        .expect("AUTOCODER_TEST_PYTHON must name the test interpreter (scripts/test sets it up)");
    let code = format!(
        "import pyarrow as pa, pyarrow.parquet as pq\nrows = {rows}\n\
         pq.write_table(pa.table({{'region': [r[0] for r in rows], 'qty': [r[1] for r in rows], \
         'price': [r[2] for r in rows]}}), {path:?}, compression='zstd')\n",
        path = path.display().to_string()
    );
    let status = Command::new(python).args(["-c", &code]).status().unwrap();
    assert!(status.success());
}

/// A Parquet sample gets a data context like a CSV one, is mounted with its extension, and the
/// script's environment gets pyarrow though the model named no package; `run` then reads a new
/// Parquet file.
#[tokio::test(flavor = "multi_thread")]
async fn a_parquet_sample_generates_and_runs() {
    let server = ScriptedServer::start(Script::new(pipeline(PARQUET_SCRIPT, PARQUET_TESTS)))
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    write_parquet(
        &dir.path().join("sales.parquet"),
        "[('north', 3, 2.5), ('south', 2, 4.0)]",
    );
    write_parquet(
        &dir.path().join("more.parquet"),
        "[('east', 10, 1.5), ('west', 1, 100.0)]",
    );
    let base = server.base_url();
    let workdir = dir.path().to_owned();
    let generated = tokio::task::spawn_blocking(move || {
        autocoder(
            &workdir,
            &[
                "generate",
                "--prompt",
                "Total revenue (qty * price) of the rows.",
                "--sample",
                "sales=sales.parquet",
                "--output",
                "total:float",
                "--model",
                "openai/scripted",
                "--api-base",
                &base,
                "--api-key-env",
                "SCRIPTED_KEY",
                "--out",
                "run",
                "--json",
            ],
        )
    })
    .await
    .unwrap();
    let stderr = String::from_utf8_lossy(&generated.stderr);
    assert!(generated.status.success(), "{stderr}");
    let result: Value = serde_json::from_slice(&generated.stdout).unwrap();
    assert_eq!(result["success"], true, "{stderr}");
    let packages = result["packages"].to_string();
    assert!(packages.contains("pyarrow"), "{packages}");
    // requirements.txt holds what the script needs, pinned; pytest only the test file.
    let needs = std::fs::read_to_string(dir.path().join("run/requirements.txt")).unwrap();
    assert!(
        needs.contains("pandas==") && needs.contains("pyarrow=="),
        "{needs}"
    );
    assert!(!needs.contains("pytest"), "{needs}");
    // The plan prompt describes the Parquet file's columns and types, as for a CSV sample.
    let plan = server.requests()[0].body.to_string();
    assert!(plan.contains("sales.parquet"), "{plan}");
    for column in ["region", "qty", "price"] {
        assert!(plan.contains(column), "{column} missing from {plan}");
    }

    let workdir = dir.path().to_owned();
    let ran = tokio::task::spawn_blocking(move || {
        autocoder(
            &workdir,
            &["run", "run", "--json", "--", "--sales", "more.parquet"],
        )
    })
    .await
    .unwrap();
    assert!(
        ran.status.success(),
        "{}",
        String::from_utf8_lossy(&ran.stderr)
    );
    let outputs: Value = serde_json::from_slice(&ran.stdout).unwrap();
    assert_eq!(outputs, json!({"total": 115.0}));
}
