//! The caches. The model-call cache of `autocoder generate`: a second identical generation
//! sends no HTTP request and spends no token; a changed sampling parameter or `--model-cache
//! refresh` asks again; `cache clean` empties it and `sandbox doctor` shows its size. The
//! outcome cache (`--reuse`): an identical test run or `autocoder run` is served from it and
//! says so; other input bytes miss.

use std::path::Path;
use std::process::Output;

use autocoder_testkit::{Entry, Script, ScriptedServer};
use serde_json::{Value, json};

use crate::scripted::{self, pipeline};

const SCRIPT: &str = r#"import argparse
import csv


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--sales", required=True)
    args = parser.parse_args()
    with open(args.sales, newline="") as handle:
        total = sum(int(r["qty"]) * float(r["price"]) for r in csv.DictReader(handle))
    with open("/var/outputs/total", "w") as handle:
        handle.write(str(total))


if __name__ == "__main__":
    main()
"#;

const TESTS: &str = r#"import pytest


def test_total(run_solution):
    result = run_solution()
    assert result.returncode == 0, result.stderr
    assert result.outputs["total"] == pytest.approx(3 * 2.5 + 2 * 4.0)
"#;

fn entries() -> Vec<Entry> {
    pipeline(SCRIPT, TESTS)
        .into_iter()
        .zip([(10, 1), (20, 2), (30, 3)])
        .map(|(entry, (input, output))| entry.with_usage(input, output))
        .collect()
}

fn autocoder(dir: &Path, args: &[String]) -> Output {
    scripted::autocoder_in(dir, args, &[])
}

async fn generate(dir: &Path, base: &str, out: &str, extra: &[&str]) -> Value {
    let mut args: Vec<String> = [
        "generate",
        "--prompt",
        "Total revenue of the sales file.",
        "--sample",
        "sales=sales.csv",
        "--output",
        "total:float",
        "--model",
        "openai/scripted",
        "--api-base",
        base,
        "--api-key-env",
        "SCRIPTED_KEY",
        "--out",
        out,
        "--json",
    ]
    .map(str::to_owned)
    .to_vec();
    args.extend(extra.iter().map(|s| (*s).to_owned()));
    let dir = dir.to_owned();
    let out = tokio::task::spawn_blocking(move || autocoder(&dir, &args))
        .await
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn an_identical_generation_is_answered_from_the_cache() {
    let server = ScriptedServer::start(Script::new(entries())).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("sales.csv"),
        "region,qty,price\nnorth,3,2.5\nsouth,2,4.0\n",
    )
    .unwrap();
    let base = server.base_url();
    let first = generate(dir.path(), &base, "run1", &[]).await;
    assert_eq!(first["model_calls"], 3);
    assert_eq!(server.requests().len(), 3);

    let second = generate(dir.path(), &base, "run2", &[]).await;
    assert_eq!(
        server.requests().len(),
        3,
        "no HTTP request the second time"
    );
    assert_eq!(second["success"], true);
    assert_eq!(second["model_calls"], 0);
    assert_eq!(second["tokens"]["input_tokens"], 0);
    assert_eq!(second["tokens"]["output_tokens"], 0);
    assert_eq!(second["solution"], first["solution"]);

    for entry in entries() {
        server.push(entry);
    }
    generate(dir.path(), &base, "run3", &["--temperature", "0.3"]).await;
    assert_eq!(server.requests().len(), 6, "another temperature misses");

    for entry in entries() {
        server.push(entry);
    }
    let refreshed = generate(dir.path(), &base, "run4", &["--model-cache", "refresh"]).await;
    assert_eq!(server.requests().len(), 9, "refresh asks again");
    assert_eq!(refreshed["model_calls"], 3);
    for entry in entries() {
        server.push(entry);
    }
    generate(dir.path(), &base, "run5", &["--model-cache", "off"]).await;
    assert_eq!(server.requests().len(), 12, "off asks, and keeps nothing");

    let doctor = tokio::task::spawn_blocking({
        let dir = dir.path().to_owned();
        move || autocoder(&dir, &["sandbox".into(), "doctor".into(), "--json".into()])
    })
    .await
    .unwrap();
    let findings: Value = serde_json::from_slice(&doctor.stdout).unwrap();
    let models = findings
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["name"] == "models")
        .expect("the doctor reports the model cache");
    assert!(
        models["detail"].as_str().unwrap().contains("6 answer(s)"),
        "{models}"
    );

    let clean = tokio::task::spawn_blocking({
        let dir = dir.path().to_owned();
        move || autocoder(&dir, &["cache".into(), "clean".into(), "--all".into()])
    })
    .await
    .unwrap();
    let text = String::from_utf8_lossy(&clean.stdout);
    assert!(text.contains("removed 6 answer(s), kept 0"), "{text}");
}

/// The binary under test: `$AUTOCODER_TEST_BIN` when set (a copy kept apart from a target
/// directory that other worktrees build into), else cargo's.
/// Runs `autocoder ARGS` in `dir` on a blocking thread.
fn autocoder_in(dir: &Path, args: &[&str]) -> impl Future<Output = Output> + use<> {
    let dir = dir.to_owned();
    let args: Vec<String> = args.iter().map(|s| (*s).to_owned()).collect();
    async move {
        tokio::task::spawn_blocking(move || autocoder(&dir, &args))
            .await
            .unwrap()
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn reuse_serves_identical_sandbox_runs_from_the_outcome_cache() {
    let server = ScriptedServer::start(Script::new(entries())).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("sales.csv"),
        "region,qty,price\nnorth,3,2.5\nsouth,2,4.0\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("more.csv"),
        "region,qty,price\neast,10,1.5\n",
    )
    .unwrap();
    let base = server.base_url();
    let generate = |out: &'static str| {
        let args = [
            "generate",
            "--prompt",
            "Total revenue of the sales file.",
            "--sample",
            "sales=sales.csv",
            "--output",
            "total:float",
            "--model",
            "openai/scripted",
            "--api-base",
            &base,
            "--api-key-env",
            "SCRIPTED_KEY",
            "--out",
            out,
            "--reuse",
        ];
        autocoder_in(dir.path(), &args)
    };
    let first = generate("run1").await;
    let said = |out: &Output| String::from_utf8_lossy(&out.stderr).contains("--reuse:");
    assert!(
        first.status.success(),
        "{}",
        String::from_utf8_lossy(&first.stderr)
    );
    assert!(!said(&first), "nothing to reuse yet");
    let second = generate("run2").await;
    assert!(
        second.status.success(),
        "{}",
        String::from_utf8_lossy(&second.stderr)
    );
    assert!(said(&second), "{}", String::from_utf8_lossy(&second.stderr));
    assert!(dir.path().join("run2/result.json").exists());

    let run = |extra: &[&str]| {
        let mut args = vec!["run", "run1", "--json", "--reuse"];
        args.extend_from_slice(extra);
        autocoder_in(dir.path(), &args)
    };
    let ran = run(&[]).await;
    assert!(
        ran.status.success(),
        "{}",
        String::from_utf8_lossy(&ran.stderr)
    );
    assert!(!said(&ran));
    let again = run(&[]).await;
    assert!(said(&again), "{}", String::from_utf8_lossy(&again.stderr));
    assert_eq!(again.stdout, ran.stdout, "the same outputs");
    let other = run(&["--", "--sales", "more.csv"]).await;
    assert!(
        other.status.success(),
        "{}",
        String::from_utf8_lossy(&other.stderr)
    );
    assert!(!said(&other), "other input bytes miss");
    let outputs: Value = serde_json::from_slice(&other.stdout).unwrap();
    assert_eq!(outputs, json!({"total": 15.0}));

    // `run --cache disable` builds the environment in a throwaway cache: it still runs.
    let throwaway =
        autocoder_in(dir.path(), &["run", "run1", "--json", "--cache", "disable"]).await;
    assert!(
        throwaway.status.success(),
        "{}",
        String::from_utf8_lossy(&throwaway.stderr)
    );
    assert_eq!(throwaway.stdout, ran.stdout);
}
