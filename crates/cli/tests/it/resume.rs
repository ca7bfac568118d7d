//! `autocoder resume`: the real binary killed by its own test hook right after each kind of
//! journal line of a three-iteration generation (plan, code, environment, tests, test run,
//! diagnosis, routes, code fix, test fix), then resumed against the scripted LLM server. Over
//! both processes the server sees each request of the uninterrupted run exactly once, and the
//! result is the uninterrupted run's, timings and paths aside.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Output;

use autocoder_testkit::{Entry, Reply, Script, ScriptedServer};
use serde_json::{Value, json};

use crate::agent::call;
use crate::scripted::autocoder_in;

const KILL_VAR: &str = "AUTOCODER_TEST_KILL_AFTER_JOURNAL_LINES";

const SALES: &str = "region,qty,price\nnorth,3,2.5\nsouth,2,4.0\nnorth,1,10.0\n";

const SCRIPT: &str = r#"import argparse
import csv
import sys


def total_revenue(path):
    with open(path, newline="") as handle:
        return sum(BUG for row in csv.DictReader(handle))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--sales", required=True)
    args = parser.parse_args()
    try:
        total = total_revenue(args.sales)
    except OSError as err:
        sys.exit(f"cannot read {args.sales}: {err}")
    with open("/var/outputs/total", "w") as handle:
        handle.write(str(total))


if __name__ == "__main__":
    main()
"#;
const GOOD: &str = r#"float(row["qty"]) * float(row["price"])"#;
const BAD: &str = r#"float(row["qty"])"#;

fn tests(expected: &str) -> String {
    format!(
        r#"import pytest


def test_total_is_revenue(run_solution):
    result = run_solution()
    assert result.returncode == 0, result.stderr
    assert result.outputs["total"] == pytest.approx({expected})


def test_missing_file_fails(run_solution, tmp_path):
    result = run_solution({{"sales": tmp_path / "missing.csv"}})
    assert result.returncode != 0
"#
    )
}

fn diagnosis(kind: &str) -> Entry {
    Entry::step(
        "diagnose",
        Reply::Json(json!({"failures": [{
            "test_id": "test_solution.py::test_total_is_revenue",
            "kind": kind,
            "evidence": "3*2.5 + 2*4 + 10 = 25.5",
            "fix": "multiply qty by price",
            "packages": [],
        }]})),
    )
}

/// A buggy script and a wrong test: run 1 fails (logic, fixed by a code edit), run 2 fails
/// (the test, fixed by a test patch), run 3 passes.
fn entries() -> Vec<Entry> {
    let fixed = "def test_total_is_revenue(run_solution):\n    result = run_solution()\n    assert result.outputs[\"total\"] == pytest.approx(25.5)\n";
    vec![
        Entry::step(
            "plan",
            Reply::Json(json!({"summary": "sum qty * price", "approach": ["read", "sum"], "edge_cases": []})),
        )
        .with_usage(100, 10),
        Entry::step(
            "code",
            Reply::Json(json!({"code": SCRIPT.replace("BUG", BAD), "packages": [], "system_packages": []})),
        )
        .with_usage(200, 20),
        Entry::step("tests", Reply::Json(json!({"tests": tests("26.0")}))).with_usage(300, 30),
        diagnosis("logic").with_usage(400, 40),
        Entry::step(
            "fix_code",
            Reply::Json(json!({"edits": [{"find": BAD, "replace": GOOD}], "packages": [], "explanation": "revenue"})),
        )
        .with_usage(500, 50),
        diagnosis("test_error").with_usage(600, 60),
        Entry::step(
            "fix_tests",
            Reply::Json(json!({"functions": [{"name": "test_total_is_revenue", "source": fixed}], "imports": []})),
        )
        .with_usage(700, 70),
    ]
}

/// A generation to kill and resume: the server's answers and the command line for its URL.
struct Scenario {
    entries: fn() -> Vec<Entry>,
    args: fn(&str) -> Vec<String>,
}

/// The pipeline's three-iteration run.
const PIPELINE: Scenario = Scenario {
    entries,
    args: generate_args,
};

/// The same task in agent mode: a wrong script and its test, a failing test run, an edit, a
/// passing run, and `finish` (which runs the tests once more).
const AGENT: Scenario = Scenario {
    entries: agent_entries,
    args: agent_args,
};

fn agent_entries() -> Vec<Entry> {
    [
        call(
            "write_file",
            json!({"path": "solution.py", "text": SCRIPT.replace("BUG", BAD)}),
        ),
        call(
            "write_file",
            json!({"path": "test_solution.py", "text": tests("25.5")}),
        ),
        call("run_tests", json!({})),
        call(
            "edit_file",
            json!({"path": "solution.py", "replace": BAD, "with": GOOD}),
        ),
        call("run_tests", json!({})),
        call("finish", json!({"summary": "qty * price, summed"})),
    ]
    .into_iter()
    .enumerate()
    .map(|(i, entry)| entry.with_usage(100 * (i as u64 + 1), 10))
    .collect()
}

/// The pipeline's run with two candidate scripts: the second sums the prices alone, so the two
/// compute different totals, both fail the test, and the first is kept and fixed as before.
fn candidates_entries() -> Vec<Entry> {
    let mut entries = entries();
    entries.insert(
        2,
        Entry::step(
            "code",
            Reply::Json(json!({"code": SCRIPT.replace("BUG", r#"float(row["price"])"#), "packages": [], "system_packages": []})),
        )
        .with_usage(250, 25),
    );
    entries
}

fn candidates_args(base: &str) -> Vec<String> {
    let mut args = generate_args(base);
    args.extend(["--candidates", "2"].map(str::to_owned));
    args
}

/// The pipeline's run with `--candidates 2`.
const CANDIDATES: Scenario = Scenario {
    entries: candidates_entries,
    args: candidates_args,
};

fn agent_args(base: &str) -> Vec<String> {
    let mut args = generate_args(base);
    args.extend(["--agent", "--tool-protocol", "native", "--max-turns", "10"].map(str::to_owned));
    args
}

/// A working directory with the sample.
fn workdir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("sales.csv"), SALES).unwrap();
    dir
}

fn autocoder(dir: &Path, args: &[&str], vars: &[(&str, &str)]) -> Output {
    autocoder_in(dir, args, vars)
}

fn generate_args(base: &str) -> Vec<String> {
    [
        "generate",
        "--prompt",
        "Total revenue (qty * price) of the sales file, written as `total`.",
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
        "--max-iterations",
        "4",
        "--out",
        "run",
        "--json",
    ]
    .map(str::to_owned)
    .to_vec()
}

async fn run_blocking(dir: PathBuf, args: Vec<String>, vars: Vec<(String, String)>) -> Output {
    tokio::task::spawn_blocking(move || {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let vars: Vec<(&str, &str)> = vars.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        autocoder(&dir, &args, &vars)
    })
    .await
    .unwrap()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Digits runs masked (pytest's timings), the work directory named `<dir>`.
fn masked(text: &str, dir: &Path) -> String {
    let text = text.replace(&dir.display().to_string(), "<dir>");
    let mut out = String::with_capacity(text.len());
    let mut in_number = false;
    for c in text.chars() {
        if c.is_ascii_digit() || (in_number && c == '.') {
            if !in_number {
                out.push('#');
            }
            in_number = true;
        } else {
            in_number = false;
            out.push(c);
        }
    }
    out
}

/// `result.json` without timings and paths.
fn normalised(result: &Value, dir: &Path) -> Value {
    let mut result = result.clone();
    result["seconds"] = json!(0);
    result["samples"] = json!(null);
    for iteration in result["iterations"].as_array_mut().unwrap() {
        iteration["seconds"] = json!(0);
    }
    for step in result["steps"].as_object_mut().unwrap().values_mut() {
        step["seconds"] = json!(0);
    }
    result["test_output"] = json!(masked(result["test_output"].as_str().unwrap(), dir));
    result
}

/// The requests a server saw, paths masked: (step, body).
fn requests(server: &ScriptedServer, dir: &Path) -> Vec<(String, String)> {
    server
        .requests()
        .iter()
        .map(|r| {
            (
                r.step.clone().unwrap_or_default(),
                r.body
                    .to_string()
                    .replace(&dir.display().to_string(), "<dir>"),
            )
        })
        .collect()
}

fn journal_lines(dir: &Path) -> Vec<Value> {
    std::fs::read_to_string(dir.join("run/journal.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// A line's kind and, for model lines, its step.
fn what(line: &Value) -> String {
    let kind = line["kind"].as_str().unwrap_or_default();
    match kind {
        "model" => format!("model {}", line["step"].as_str().unwrap_or_default()),
        // The candidates' runs on the samples and test sessions are memos of their own kind.
        "memo"
            if line["what"]
                .as_str()
                .is_some_and(|w| w.starts_with("candidate")) =>
        {
            format!("memo {}", line["what"].as_str().unwrap_or_default())
        }
        "event" => format!("event {}", line["step"].as_str().unwrap_or_default()),
        other => other.to_owned(),
    }
}

struct Uninterrupted {
    result: Value,
    requests: Vec<(String, String)>,
    journal: Vec<Value>,
}

async fn uninterrupted(scenario: &Scenario) -> Uninterrupted {
    let server = ScriptedServer::start(Script::new((scenario.entries)()))
        .await
        .unwrap();
    let dir = workdir();
    let out = run_blocking(
        dir.path().to_owned(),
        (scenario.args)(&server.base_url()),
        Vec::new(),
    )
    .await;
    assert!(out.status.success(), "{}", stderr(&out));
    let result: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(result["success"], true, "{result:#}");
    assert_eq!(result["attempts"], 3, "{result:#}");
    Uninterrupted {
        result: normalised(&result, dir.path()),
        requests: requests(&server, dir.path()),
        journal: journal_lines(dir.path()),
    }
}

/// Kills a generation after `lines` journal lines; returns the server and the directory.
async fn killed_after(scenario: &Scenario, lines: usize) -> (ScriptedServer, tempfile::TempDir) {
    let server = ScriptedServer::start(Script::new((scenario.entries)()))
        .await
        .unwrap();
    let dir = workdir();
    let out = run_blocking(
        dir.path().to_owned(),
        (scenario.args)(&server.base_url()),
        vec![(KILL_VAR.to_owned(), lines.to_string())],
    )
    .await;
    assert!(
        !out.status.success() && out.status.code().is_none(),
        "the hook kills the process after line {lines}: {}\n{}",
        out.status,
        stderr(&out)
    );
    assert_eq!(journal_lines(dir.path()).len(), lines);
    (server, dir)
}

async fn resume(dir: &Path, extra: &[&str]) -> Output {
    let mut args = vec!["resume".to_owned(), "run".to_owned(), "--json".to_owned()];
    args.extend(extra.iter().map(|s| (*s).to_owned()));
    run_blocking(dir.to_owned(), args, Vec::new()).await
}

#[tokio::test(flavor = "multi_thread")]
async fn a_run_killed_after_any_kind_of_step_resumes_without_asking_or_running_again() {
    kill_after_each_kind_and_resume(
        &PIPELINE,
        &[
            "header",
            "memo",
            "model plan",
            "model code",
            "model tests",
            "environment",
            "tests",
            "model diagnose",
            "routes",
            "model fix_code",
            "event fix code",
            "model fix_tests",
            "event fix tests",
            "finish",
        ],
    )
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_run_with_candidates_killed_after_any_kind_of_step_resumes_without_asking_or_running_again()
 {
    kill_after_each_kind_and_resume(
        &CANDIDATES,
        &[
            "model code",
            "event candidates",
            "memo candidate_run",
            "memo candidate_tests",
            "model diagnose",
            "finish",
        ],
    )
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn an_agent_run_killed_after_any_kind_of_step_resumes_without_asking_or_running_again() {
    kill_after_each_kind_and_resume(
        &AGENT,
        &["header", "model agent", "environment", "tests", "finish"],
    )
    .await;
}

/// Kills the scenario's run right after the first journal line of each kind, the second test
/// run and the last line; each resumed run asks nothing twice and ends as the uninterrupted one.
async fn kill_after_each_kind_and_resume(scenario: &Scenario, expected_kinds: &[&str]) {
    let whole = uninterrupted(scenario).await;
    let kinds: Vec<String> = whole.journal.iter().map(what).collect();
    for &expected in expected_kinds {
        assert!(
            kinds.iter().any(|k| k == expected),
            "{expected} missing from {kinds:?}"
        );
    }
    // The first line of each kind, the second test run, and the last line.
    let mut points = BTreeSet::new();
    let mut seen = BTreeSet::new();
    for (i, kind) in kinds.iter().enumerate() {
        if seen.insert(kind.clone()) {
            points.insert(i + 1);
        }
    }
    let second_run = kinds
        .iter()
        .enumerate()
        .filter(|(_, k)| *k == "tests")
        .nth(1);
    points.insert(second_run.unwrap().0 + 1);
    points.insert(kinds.len());
    for lines in points {
        let (server, dir) = killed_after(scenario, lines).await;
        let out = resume(dir.path(), &[]).await;
        let after = format!("killed after line {lines} ({})", kinds[lines - 1]);
        assert!(out.status.success(), "{after}: {}", stderr(&out));
        let result: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(
            requests(&server, dir.path()),
            whole.requests,
            "{after}: each request once over both processes"
        );
        assert_eq!(normalised(&result, dir.path()), whole.result, "{after}");
        let on_disk: Value =
            serde_json::from_slice(&std::fs::read(dir.path().join("run/result.json")).unwrap())
                .unwrap();
        assert_eq!(normalised(&on_disk, dir.path()), whole.result, "{after}");
        // Every test run and model answer writes its line: one run or call made again would
        // show as an extra line.
        let journal: Vec<String> = journal_lines(dir.path()).iter().map(what).collect();
        assert_eq!(
            journal, kinds,
            "{after}: the journal reads as the uninterrupted one's"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_cut_last_line_is_dropped_and_the_run_resumes() {
    let (server, dir) = killed_after(&PIPELINE, 3).await;
    let path = dir.path().join("run/journal.jsonl");
    let mut text = std::fs::read_to_string(&path).unwrap();
    text.push_str(r#"{"kind":"model","index":2,"step":"tes"#);
    std::fs::write(&path, text).unwrap();
    let out = resume(dir.path(), &[]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("cut off"), "{}", stderr(&out));
    assert_eq!(server.requests().len(), entries().len());
    for line in std::fs::read_to_string(&path).unwrap().lines() {
        serde_json::from_str::<Value>(line).expect("every line parses after the resume");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_journal_of_another_version_or_a_damaged_one_is_refused() {
    let (server, dir) = killed_after(&PIPELINE, 3).await;
    let path = dir.path().join("run/journal.jsonl");
    let text = std::fs::read_to_string(&path).unwrap();
    let asked = server.requests().len();
    let other = text.replacen("\"version\":1", "\"version\":99", 1);
    assert_ne!(other, text);
    std::fs::write(&path, &other).unwrap();
    let out = resume(dir.path(), &[]).await;
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("version 99"), "{}", stderr(&out));

    let mut lines: Vec<&str> = text.lines().collect();
    lines.insert(1, "{not json");
    std::fs::write(&path, format!("{}\n", lines.join("\n"))).unwrap();
    let out = resume(dir.path(), &[]).await;
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("journal.jsonl:2"), "{}", stderr(&out));
    assert_eq!(
        server.requests().len(),
        asked,
        "nothing was asked after the kill"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_finished_run_is_not_resumed_unless_forced() {
    let server = ScriptedServer::start(Script::new(entries())).await.unwrap();
    let dir = workdir();
    let out = run_blocking(
        dir.path().to_owned(),
        generate_args(&server.base_url()),
        Vec::new(),
    )
    .await;
    assert!(out.status.success(), "{}", stderr(&out));
    let out = resume(dir.path(), &[]).await;
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("already finished"),
        "{}",
        stderr(&out)
    );
    assert!(stderr(&out).contains("--force"), "{}", stderr(&out));

    let again = ScriptedServer::start(Script::new(entries())).await.unwrap();
    let out = resume(dir.path(), &["--force", "--api-base", &again.base_url()]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        again.requests().len(),
        entries().len(),
        "--force starts over"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn env_values_are_redacted_and_given_again_on_resume() {
    let server = ScriptedServer::start(Script::new(entries())).await.unwrap();
    let dir = workdir();
    let mut args = generate_args(&server.base_url());
    args.extend(["--env".to_owned(), "API_TOKEN=hunter2".to_owned()]);
    let out = run_blocking(
        dir.path().to_owned(),
        args,
        vec![(KILL_VAR.to_owned(), "2".to_owned())],
    )
    .await;
    assert!(!out.status.success());
    let journal = std::fs::read_to_string(dir.path().join("run/journal.jsonl")).unwrap();
    assert!(journal.contains("API_TOKEN"), "{journal}");
    assert!(!journal.contains("hunter2"), "{journal}");
    assert!(!journal.contains("sk-scripted"), "{journal}");

    let out = resume(dir.path(), &[]).await;
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("--env API_TOKEN=VALUE"),
        "{}",
        stderr(&out)
    );
    let out = resume(dir.path(), &["--env", "API_TOKEN=hunter2"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(server.requests().len(), entries().len());
}

#[tokio::test(flavor = "multi_thread")]
async fn max_iterations_may_only_grow_on_resume() {
    let (_server, dir) = killed_after(&PIPELINE, 1).await;
    let out = resume(dir.path(), &["--max-iterations", "2"]).await;
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("--max-iterations 2"),
        "{}",
        stderr(&out)
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_recording_killed_halfway_is_whole_after_the_resume() {
    let server = ScriptedServer::start(Script::new(entries())).await.unwrap();
    let dir = workdir();
    let mut args = generate_args(&server.base_url());
    args.extend(["--record".to_owned(), "cassette.jsonl".to_owned()]);
    let out = run_blocking(
        dir.path().to_owned(),
        args.clone(),
        vec![(KILL_VAR.to_owned(), "7".to_owned())],
    )
    .await;
    assert!(!out.status.success(), "the hook kills the run");
    let out = resume(dir.path(), &[]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(server.requests().len(), entries().len());
    let recorded = std::fs::read_to_string(dir.path().join("cassette.jsonl")).unwrap();
    assert_eq!(recorded.lines().count(), entries().len(), "{recorded}");

    // The recording alone replays the whole run: no server, no key.
    let at = args.iter().position(|a| a == "--record").unwrap();
    args[at] = "--replay".to_owned();
    let out_at = args.iter().position(|a| a == "--out").unwrap();
    args[out_at + 1] = "replayed".to_owned();
    let base_at = args.iter().position(|a| a == "--api-base").unwrap();
    args[base_at + 1] = "http://127.0.0.1:9/v1".to_owned();
    let out = run_blocking(dir.path().to_owned(), args, Vec::new()).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let result: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(result["success"], true, "{result:#}");
    assert_eq!(result["attempts"], 3, "{result:#}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_throwaway_environment_outlives_a_kill_and_is_removed_at_the_end() {
    let server = ScriptedServer::start(Script::new(entries())).await.unwrap();
    let dir = workdir();
    let mut args = generate_args(&server.base_url());
    args.extend(["--cache".to_owned(), "disable".to_owned()]);
    let whole = uninterrupted(&PIPELINE).await;
    let kinds: Vec<String> = whole.journal.iter().map(what).collect();
    let after_tests = kinds.iter().position(|k| k == "tests").unwrap() + 1;
    let out = run_blocking(
        dir.path().to_owned(),
        args,
        vec![(KILL_VAR.to_owned(), after_tests.to_string())],
    )
    .await;
    assert!(
        !out.status.success() && out.status.code().is_none(),
        "the hook kills the run: {}",
        stderr(&out)
    );
    let throwaway = dir.path().join("run/.env-cache");
    let built = std::fs::read_dir(&throwaway).map_or(0, Iterator::count);
    assert!(
        built > 0,
        "the killed run's environment is kept for the resume"
    );
    let out = run_blocking(
        dir.path().to_owned(),
        ["resume", "run", "--json"].map(str::to_owned).to_vec(),
        vec![("RUST_LOG".to_owned(), "autocoder_sandbox=debug".to_owned())],
    )
    .await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("environment cache hit")
            && !stderr(&out).contains("building a new environment"),
        "the resumed run reuses the throwaway environment:\n{}",
        stderr(&out)
    );
    let journal = journal_lines(dir.path());
    assert_eq!(
        journal.iter().filter(|l| what(l) == "environment").count(),
        1,
        "the environment line is not written twice"
    );
    assert!(
        !throwaway.exists(),
        "the throwaway environment is removed when the run ends"
    );
}
