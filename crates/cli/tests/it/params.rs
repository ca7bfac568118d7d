//! The run parameters of `autocoder generate` and `autocoder run` (issue 24): output order,
//! errors before any call, run names, provider parameters, secrets, sandbox retries, the CPU
//! quota, the Python version and the rows prompts show. The binary against the scripted LLM
//! server, with the real bubblewrap sandbox.

use std::fmt::Write as _;
use std::path::Path;
use std::process::Output;

use autocoder_testkit::{Entry, Reply, Script, ScriptedServer};
use serde_json::{Value, json};

use crate::scripted::{self, pipeline};

/// A script writing `zeta` before `alpha`, declared in that order too.
const TWO_OUTPUTS: &str = r#"import argparse
import csv


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--sales", required=True)
    args = parser.parse_args()
    with open(args.sales, newline="") as handle:
        rows = list(csv.DictReader(handle))
    with open("/var/outputs/zeta", "w") as handle:
        handle.write(str(len(rows)))
    with open("/var/outputs/alpha", "w") as handle:
        handle.write(rows[0]["region"])


if __name__ == "__main__":
    main()
"#;

const TWO_OUTPUT_TESTS: &str = r#"def test_outputs(run_solution):
    result = run_solution({})
    assert result.returncode == 0, result.stderr
    assert result.outputs["zeta"] == 2
"#;

fn entries(code: &str, tests: &str) -> Vec<Entry> {
    pipeline(code, tests)
}

/// Runs the binary in `dir` with the scripted key, the shared environment cache and `vars`.
fn autocoder_in(dir: &Path, args: &[&str], vars: &[(&str, &str)]) -> Output {
    scripted::autocoder_in(dir, args, vars)
}

/// A directory with `sales.csv` (two rows).
fn workdir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("sales.csv"),
        "region,qty,price\nnorth,3,2.5\nsouth,2,4.0\n",
    )
    .unwrap();
    dir
}

/// `autocoder generate` against `server` in `dir` with the sample, `extra` flags and `vars`.
async fn generate(
    server: &ScriptedServer,
    dir: &Path,
    extra: &[&str],
    vars: &[(&str, &str)],
) -> Output {
    let base = server.base_url();
    let mut args: Vec<String> = [
        "generate",
        "--prompt",
        "Count the rows and name the first region.",
        "--sample",
        "sales=sales.csv",
        "--model",
        "openai/scripted",
        "--api-base",
        &base,
        "--api-key-env",
        "SCRIPTED_KEY",
        "--json",
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .collect();
    args.extend(extra.iter().map(|s| (*s).to_owned()));
    let vars: Vec<(String, String)> = vars
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    let dir = dir.to_owned();
    tokio::task::spawn_blocking(move || {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let vars: Vec<(&str, &str)> = vars.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        autocoder_in(&dir, &args, &vars)
    })
    .await
    .unwrap()
}

fn result_of(out: &Output) -> Value {
    assert!(
        out.status.success(),
        "generate failed ({}):\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("--json prints only the result")
}

#[tokio::test(flavor = "multi_thread")]
async fn run_prints_outputs_in_declared_order() {
    let server = ScriptedServer::start(Script::new(entries(TWO_OUTPUTS, TWO_OUTPUT_TESTS)))
        .await
        .unwrap();
    let dir = workdir();
    let out = generate(
        &server,
        dir.path(),
        &[
            "--output",
            "zeta:int",
            "--output",
            "alpha:str",
            "--out",
            "run",
        ],
        &[],
    )
    .await;
    assert_eq!(result_of(&out)["success"], true);
    let text = autocoder_in(dir.path(), &["run", "run"], &[]);
    let stdout = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.status.success(),
        "{}",
        String::from_utf8_lossy(&text.stderr)
    );
    assert_eq!(stdout, "zeta = 2\nalpha = \"north\"\n");
    let json = autocoder_in(dir.path(), &["run", "run", "--json"], &[]);
    let stdout = String::from_utf8_lossy(&json.stdout);
    assert_eq!(stdout, "{\n  \"zeta\": 2,\n  \"alpha\": \"north\"\n}\n");
    let parsed: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(parsed, json!({"zeta": 2, "alpha": "north"}));
}

/// `generate` with no API key and no server: the sample's problem must be what is reported.
fn generate_offline(dir: &Path, sample: &str) -> (Option<i32>, String) {
    let out = autocoder_in(
        dir,
        &[
            "generate",
            "--prompt",
            "x",
            "--sample",
            &format!("data={sample}"),
            "--model",
            "openai/gpt-4.1",
        ],
        &[],
    );
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_bad_sample_is_reported_before_the_api_key_is_looked_up() {
    let dir = tempfile::tempdir().unwrap();
    // Without a sample problem, the missing key is the error: the check below is meaningful.
    std::fs::write(dir.path().join("good.csv"), "a\n1\n").unwrap();
    let (code, stderr) = generate_offline(dir.path(), "good.csv");
    assert_eq!(code, Some(2));
    assert!(stderr.contains("OPENAI_API_KEY"), "{stderr}");

    let (code, stderr) = generate_offline(dir.path(), "missing.csv");
    assert_eq!(code, Some(2));
    assert!(
        stderr.contains("missing.csv") && !stderr.contains("OPENAI_API_KEY"),
        "{stderr}"
    );

    std::fs::write(dir.path().join("binary.csv"), b"a,b\n1,\x002\n").unwrap();
    let (code, stderr) = generate_offline(dir.path(), "binary.csv");
    assert_eq!(code, Some(2));
    assert!(
        stderr.contains("binary.csv") && stderr.contains("NUL byte"),
        "{stderr}"
    );

    std::fs::create_dir(dir.path().join("folder.csv")).unwrap();
    let (code, stderr) = generate_offline(dir.path(), "folder.csv");
    assert_eq!(code, Some(2));
    assert!(
        stderr.contains("folder.csv") && stderr.contains("not a file"),
        "{stderr}"
    );
    assert!(
        !dir.path().join("runs").exists(),
        "no run directory is made"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_named_run_gets_its_directory_and_records_the_name() {
    let server = ScriptedServer::start(Script::new(entries(TWO_OUTPUTS, TWO_OUTPUT_TESTS)))
        .await
        .unwrap();
    let dir = workdir();
    let out = generate(
        &server,
        dir.path(),
        &[
            "--output",
            "zeta:int",
            "--output",
            "alpha:str",
            "--name",
            "sales-report",
        ],
        &[],
    )
    .await;
    let result = result_of(&out);
    assert_eq!(result["name"], "sales-report");
    let run_dir = dir.path().join("runs/sales-report");
    let stored: Value =
        serde_json::from_slice(&std::fs::read(run_dir.join("result.json")).unwrap()).unwrap();
    assert_eq!(stored["name"], "sales-report");
    let ran = autocoder_in(dir.path(), &["run", "runs/sales-report"], &[]);
    assert!(
        ran.status.success(),
        "{}",
        String::from_utf8_lossy(&ran.stderr)
    );

    // A name that is not a plain file name fails before any call.
    let calls = server.requests().len();
    let bad = generate(&server, dir.path(), &["--name", "../escape"], &[]).await;
    assert_eq!(bad.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&bad.stderr);
    assert!(stderr.contains("run name `../escape`"), "{stderr}");
    assert_eq!(server.requests().len(), calls);
}

#[tokio::test(flavor = "multi_thread")]
async fn provider_parameters_reach_every_request_body() {
    let server = ScriptedServer::start(Script::new(entries(TWO_OUTPUTS, TWO_OUTPUT_TESTS)))
        .await
        .unwrap();
    let dir = workdir();
    let out = generate(
        &server,
        dir.path(),
        &[
            "--output",
            "zeta:int",
            "--output",
            "alpha:str",
            "--param",
            "reasoning_effort=high",
            "--param",
            "top_k=40",
            "--param",
            r#"stop=["END"]"#,
            "--param",
            r#"response_format={"type": "text"}"#,
            "--out",
            "run",
        ],
        &[],
    )
    .await;
    assert_eq!(result_of(&out)["success"], true);
    let requests = server.requests();
    assert_eq!(requests.len(), 3, "plan, code, tests");
    for request in &requests {
        let body = &request.body;
        assert_eq!(body["reasoning_effort"], "high", "{body}");
        assert_eq!(body["top_k"], 40, "{body}");
        assert_eq!(body["stop"], json!(["END"]), "{body}");
        // The loop's own field wins: structured answers keep their JSON schema.
        assert_eq!(body["response_format"]["type"], "json_schema", "{body}");
    }
    let bad = generate(&server, dir.path(), &["--param", "stream=true"], &[]).await;
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("stream"));
}

/// Prints the secret on both streams and writes its length.
const PRINTS_SECRET: &str = r#"import argparse
import os
import sys


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--sales", required=True)
    parser.parse_args()
    token = os.environ.get("API_TOKEN", "")
    print("token=" + token)
    print("stderr token=" + token, file=sys.stderr)
    with open("/var/outputs/length", "w") as handle:
        handle.write(str(len(token)))


if __name__ == "__main__":
    main()
"#;

/// Fails, showing the script's stdout (and so the secret) in its report.
const SHOWS_SECRET: &str = r#"import os


def test_prints_nothing(run_solution):
    result = run_solution({})
    print("the test saw", os.environ.get("API_TOKEN"))
    assert result.stdout == ""
"#;

const TOKEN: &str = "tok-5ecret-value-1234";

/// Every file under `dir` that contains `needle`.
fn files_containing(dir: &Path, needle: &str) -> Vec<std::path::PathBuf> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            found.extend(files_containing(&path, needle));
        } else if std::fs::read(&path)
            .unwrap()
            .windows(needle.len())
            .any(|w| w == needle.as_bytes())
        {
            found.push(path);
        }
    }
    found
}

#[tokio::test(flavor = "multi_thread")]
async fn a_secret_reaches_the_script_and_is_never_written() {
    let mut script = entries(PRINTS_SECRET, SHOWS_SECRET);
    script.push(Entry::step(
        "diagnose",
        Reply::Json(json!({"failures": [{
            "test_id": "test_solution.py::test_prints_nothing",
            "kind": "test_error",
            "evidence": "the script prints a line",
            "fix": "do not expect empty output",
            "packages": [],
        }]})),
    ));
    let server = ScriptedServer::start(Script::new(script)).await.unwrap();
    let dir = workdir();
    let out = generate(
        &server,
        dir.path(),
        &[
            "--output",
            "length:int",
            "--secret",
            "API_TOKEN",
            "--max-iterations",
            "1",
            "--out",
            "run",
        ],
        &[("API_TOKEN", TOKEN)],
    )
    .await;
    // The test fails on purpose: its report shows the script's output.
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let result: Value = serde_json::from_slice(&out.stdout).unwrap();
    let test_output = result["test_output"].as_str().unwrap();
    assert!(test_output.contains("token=***"), "{test_output}");
    assert!(test_output.contains("the test saw ***"), "{test_output}");
    assert_eq!(result["environment"]["secrets"], json!(["API_TOKEN"]));
    let run_dir = dir.path().join("run");
    assert_eq!(
        files_containing(&run_dir, TOKEN),
        Vec::<std::path::PathBuf>::new()
    );
    assert!(!String::from_utf8_lossy(&out.stdout).contains(TOKEN));
    assert!(!String::from_utf8_lossy(&out.stderr).contains(TOKEN));
    let requests = server.requests();
    assert_eq!(requests.len(), 4, "plan, code, tests, diagnose");
    let diagnose = requests[3].body.to_string();
    assert!(diagnose.contains("token=***"), "{diagnose}");
    for request in &requests {
        assert!(!request.body.to_string().contains(TOKEN));
    }

    // `run` passes it too: the script sees the whole value, its output shows the mask.
    let ran = autocoder_in(
        dir.path(),
        &["run", "run", "--force", "--secret", "API_TOKEN"],
        &[("API_TOKEN", TOKEN)],
    );
    let stdout = String::from_utf8_lossy(&ran.stdout);
    assert!(
        ran.status.success(),
        "{}",
        String::from_utf8_lossy(&ran.stderr)
    );
    assert_eq!(stdout, format!("token=***\nlength = {}\n", TOKEN.len()));
    // Without --secret nothing of the host's environment gets in.
    let ran = autocoder_in(
        dir.path(),
        &["run", "run", "--force"],
        &[("API_TOKEN", TOKEN)],
    );
    assert_eq!(String::from_utf8_lossy(&ran.stdout), "token=\nlength = 0\n");
    let unset = autocoder_in(
        dir.path(),
        &["run", "run", "--force", "--secret", "NOT_SET_ANYWHERE"],
        &[],
    );
    assert_eq!(unset.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&unset.stderr).contains("NOT_SET_ANYWHERE is not set"));
}

/// A `bwrap` in front of the real one that logs each call and, while `fail-next` exists in
/// `dir`, fails the way bubblewrap does when it cannot set a sandbox up (once per marker).
fn flaky_bwrap(dir: &Path) -> String {
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let real = ["/usr/bin/bwrap", "/bin/bwrap", "/usr/local/bin/bwrap"]
        .into_iter()
        .find(|p| Path::new(p).exists())
        .expect("bubblewrap is installed");
    let script = format!(
        "#!/bin/sh\necho call >> '{log}'\nif [ -e '{marker}' ]; then\n  rm -f '{marker}'\n  echo 'bwrap: Creating new namespace failed: Resource temporarily unavailable' >&2\n  exit 1\nfi\nexec {real} \"$@\"\n",
        log = dir.join("calls").display(),
        marker = dir.join("fail-next").display(),
    );
    let path = bin.join("bwrap");
    std::fs::write(&path, script).unwrap();
    let mut permissions = std::fs::metadata(&path).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut permissions, 0o755);
    std::fs::set_permissions(&path, permissions).unwrap();
    format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    )
}

fn calls(dir: &Path) -> usize {
    std::fs::read_to_string(dir.join("calls"))
        .unwrap_or_default()
        .lines()
        .count()
}

#[tokio::test(flavor = "multi_thread")]
async fn sandbox_failures_are_retried_and_recorded_but_failing_tests_are_not() {
    let fake = tempfile::tempdir().unwrap();
    let path = flaky_bwrap(fake.path());
    let vars = [("PATH", path.as_str())];
    let outputs = ["--output", "zeta:int", "--output", "alpha:str"];

    // Without retries, the backend's failure is the run's error.
    let server = ScriptedServer::start(Script::new(entries(TWO_OUTPUTS, TWO_OUTPUT_TESTS)))
        .await
        .unwrap();
    let dir = workdir();
    std::fs::write(fake.path().join("fail-next"), "").unwrap();
    let out = generate(&server, dir.path(), &outputs, &vars).await;
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("could not start the run"), "{stderr}");
    assert_eq!(calls(fake.path()), 1);

    // With one retry, the second attempt runs the tests and the retry is recorded.
    let server = ScriptedServer::start(Script::new(entries(TWO_OUTPUTS, TWO_OUTPUT_TESTS)))
        .await
        .unwrap();
    std::fs::write(fake.path().join("fail-next"), "").unwrap();
    let mut args = outputs.to_vec();
    args.extend(["--sandbox-retries", "1", "--out", "run"]);
    let result = result_of(&generate(&server, dir.path(), &args, &vars).await);
    assert_eq!(result["success"], true);
    let retries = result["sandbox_retries"].as_array().unwrap();
    assert_eq!(retries.len(), 1, "{retries:?}");
    assert_eq!(retries[0]["step"], "run tests");
    assert_eq!(retries[0]["retry"], 1);
    assert!(
        retries[0]["error"]
            .as_str()
            .unwrap()
            .contains("Resource temporarily unavailable")
    );
    assert_eq!(calls(fake.path()), 3);

    // A failing test is an outcome, not a failure of the machinery: never run again.
    let failing = "def test_fails(run_solution):\n    result = run_solution({})\n    assert result.stdout == \"x\"\n";
    let mut script = entries(TWO_OUTPUTS, failing);
    script.push(Entry::step(
        "diagnose",
        Reply::Json(json!({"failures": [{
            "test_id": "test_solution.py::test_fails",
            "kind": "test_error",
            "evidence": "the script prints nothing",
            "fix": "expect no output",
            "packages": [],
        }]})),
    ));
    let server = ScriptedServer::start(Script::new(script)).await.unwrap();
    let mut args = outputs.to_vec();
    args.extend([
        "--sandbox-retries",
        "3",
        "--max-iterations",
        "1",
        "--out",
        "failing",
    ]);
    let out = generate(&server, dir.path(), &args, &vars).await;
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let result: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(result.get("sandbox_retries").is_none(), "{result}");
    assert_eq!(calls(fake.path()), 4, "one test run, no retry");

    // `run` retries too.
    std::fs::write(fake.path().join("fail-next"), "").unwrap();
    let ran = autocoder_in(dir.path(), &["run", "run", "--sandbox-retries", "2"], &vars);
    assert!(
        ran.status.success(),
        "{}",
        String::from_utf8_lossy(&ran.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&ran.stdout),
        "zeta = 2\nalpha = \"north\"\n"
    );
    assert_eq!(calls(fake.path()), 6);
}

const WRITES_VERSION: &str = r#"import argparse
import sys


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--sales", required=True)
    parser.parse_args()
    with open("/var/outputs/version", "w") as handle:
        handle.write("%d.%d" % sys.version_info[:2])


if __name__ == "__main__":
    main()
"#;

const VERSION_TESTS: &str = r#"def test_version(run_solution):
    result = run_solution({})
    assert result.returncode == 0, result.stderr
    assert result.outputs["version"].startswith("3.")
"#;

/// An installed interpreter version other than the default where there is one (pyenv, uv),
/// else the default's own: `--python` then still has to find it by version.
async fn another_python_version() -> String {
    for version in ["3.12", "3.13", "3.10", "3.9"] {
        if autocoder_sandbox::find_python_version(version)
            .await
            .is_ok()
        {
            return version.to_owned();
        }
    }
    let default = autocoder_sandbox::PythonSpec::Default.command();
    let interpreter = autocoder_sandbox::Interpreter::probe(&default)
        .await
        .unwrap();
    interpreter.minor_version().to_owned()
}

#[tokio::test(flavor = "multi_thread")]
async fn python_picks_the_sandbox_interpreter_by_version() {
    let version = another_python_version().await;
    let server = ScriptedServer::start(Script::new(entries(WRITES_VERSION, VERSION_TESTS)))
        .await
        .unwrap();
    let dir = workdir();
    let out = generate(
        &server,
        dir.path(),
        &[
            "--output",
            "version:str",
            "--python",
            &version,
            "--out",
            "run",
        ],
        &[],
    )
    .await;
    let result = result_of(&out);
    let id = result["environment"]["id"].as_str().unwrap();
    assert!(id.starts_with(&format!("py{version}-")), "{id}");
    assert_eq!(result["environment"]["python"], version.as_str());
    let ran = autocoder_in(dir.path(), &["run", "run", "--json"], &[]);
    assert!(
        ran.status.success(),
        "{}",
        String::from_utf8_lossy(&ran.stderr)
    );
    let outputs: Value = serde_json::from_slice(&ran.stdout).unwrap();
    assert_eq!(
        outputs["version"],
        version.as_str(),
        "run reuses the interpreter"
    );

    // A version that is not installed fails before any call, saying what uv cannot do here.
    let calls = server.requests().len();
    let missing = generate(&server, dir.path(), &["--python", "3.1"], &[]).await;
    assert_eq!(missing.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&missing.stderr);
    assert!(
        stderr.contains("Python 3.1 is not installed") && stderr.contains("uv"),
        "{stderr}"
    );
    assert_eq!(server.requests().len(), calls);
}

/// The sample rows the plan prompt shows: the count in its "Sample rows (N of M" line.
fn rows_shown(server: &ScriptedServer) -> (usize, usize, String) {
    let requests = server.requests();
    let plan = requests
        .iter()
        .find(|r| r.step.as_deref() == Some("plan"))
        .unwrap();
    let text = plan.body["messages"].to_string();
    let Some(at) = text.find("Sample rows (") else {
        return (0, 0, text);
    };
    let rest = &text[at + "Sample rows (".len()..];
    let numbers: Vec<usize> = rest
        .split(|c: char| !c.is_ascii_digit())
        .filter(|s| !s.is_empty())
        .take(2)
        .map(|s| s.parse().unwrap())
        .collect();
    (numbers[0], numbers[1], text)
}

#[tokio::test(flavor = "multi_thread")]
async fn sample_rows_govern_what_prompts_show_within_the_context_budget() {
    let dir = workdir();
    let mut rows = String::new();
    for i in 0..60 {
        let _ = writeln!(rows, "region-{i},{},{}.5", i % 7, i % 11);
    }
    std::fs::write(
        dir.path().join("sales.csv"),
        format!("region,qty,price\n{rows}"),
    )
    .unwrap();
    let outputs = [
        "--output",
        "zeta:int",
        "--output",
        "alpha:str",
        "--skip-tests",
    ];
    let mut cases = Vec::new();
    for extra in [
        vec![],
        vec!["--sample-rows", "25"],
        vec!["--sample-rows", "25", "--context-tokens", "200"],
    ] {
        let server = ScriptedServer::start(Script::new(entries(TWO_OUTPUTS, TWO_OUTPUT_TESTS)))
            .await
            .unwrap();
        let mut args = outputs.to_vec();
        args.extend(extra);
        let out = generate(&server, dir.path(), &args, &[]).await;
        assert_eq!(result_of(&out)["success"], true);
        cases.push(rows_shown(&server));
    }
    // By default, 3 of the 20 rows the profile keeps (the prompts of the recorded examples).
    assert_eq!((cases[0].0, cases[0].1), (3, 20), "{}", cases[0].2);
    assert_eq!((cases[1].0, cases[1].1), (25, 25), "{}", cases[1].2);
    // 200 tokens (800 bytes) hold the columns and only some of the rows.
    let (shown, kept, _) = cases[2];
    assert_eq!(kept, 25);
    assert!(shown > 0 && shown < 25, "{shown} rows in 200 tokens");
}
