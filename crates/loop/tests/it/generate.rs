//! `generate` end to end: the scripted LLM server stands in for the model; the sandbox, the
//! environments, pytest and the harness are real. Each scenario is one of the loop's promises.

use std::path::{Path, PathBuf};
use std::time::Duration;

use autocoder_llm::{LlmClient, LlmConfig, ModelSpec, RetryPolicy};
use autocoder_loop::request::{Declaration, Sample};
use autocoder_loop::run::{RunOptions, run};
use autocoder_loop::rundir::GenerationResult;
use autocoder_loop::session::Limits;
use autocoder_loop::{GenerateOptions, SandboxOptions, generate};
use autocoder_sandbox::Value;
use autocoder_testkit::{Entry, Reply, Script, ScriptedServer};
use serde_json::json;

const SALES: &str = "region,qty,price\nnorth,3,2.5\nsouth,2,4.0\nnorth,1,10.0\n";
const REVENUE: f64 = 3.0 * 2.5 + 2.0 * 4.0 + 10.0;

/// A correct script, with `BUG` standing for the revenue expression.
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

pub(crate) const GOOD: &str = r#"float(row["qty"]) * float(row["price"])"#;
pub(crate) const BAD: &str = r#"float(row["qty"])"#;

pub(crate) fn script(expression: &str) -> String {
    SCRIPT.replace("BUG", expression)
}

pub(crate) fn tests(expected: &str) -> String {
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

pub(crate) fn plan() -> Entry {
    Entry::step(
        "plan",
        Reply::Json(
            json!({"summary": "sum qty * price", "approach": ["read", "sum", "write"], "edge_cases": []}),
        ),
    )
}

pub(crate) fn code(source: &str) -> Entry {
    Entry::step(
        "code",
        Reply::Json(json!({"code": source, "packages": [], "system_packages": []})),
    )
}

pub(crate) fn test_file(source: &str) -> Entry {
    Entry::step("tests", Reply::Json(json!({"tests": source})))
}

pub(crate) fn diagnosis(kind: &str, packages: &[&str]) -> Entry {
    Entry::step(
        "diagnose",
        Reply::Json(json!({"failures": [{
            "test_id": "test_solution.py::test_total_is_revenue",
            "kind": kind,
            "evidence": "3*2.5 + 2*4 + 10 = 25.5",
            "fix": "multiply qty by price",
            "packages": packages,
        }]})),
    )
}

/// A diagnosis calling the failure of `test_id` a test error, which the harness's own checks
/// overrule.
pub(crate) fn test_error_verdict(test_id: &str) -> Entry {
    Entry::step(
        "diagnose",
        Reply::Json(json!({"failures": [{
            "test_id": test_id,
            "kind": "test_error",
            "evidence": "the output looks right",
            "fix": "accept it",
            "packages": [],
        }]})),
    )
}

/// A code fix replacing `find` by `replace`.
pub(crate) fn edit_fix(find: &str, replace: &str) -> Entry {
    Entry::step(
        "fix_code",
        Reply::Json(json!({
            "edits": [{"find": find, "replace": replace}],
            "packages": [],
            "explanation": "fix the script",
        })),
    )
}

fn code_fix() -> Entry {
    Entry::step(
        "fix_code",
        Reply::Json(
            json!({"edits": [{"find": BAD, "replace": GOOD}], "packages": [], "explanation": "revenue"}),
        ),
    )
}

/// The model's answers up to a logic diagnosis of the buggy script, then `fixes`.
fn up_to_a_code_fix(fixes: Vec<Entry>) -> Vec<Entry> {
    let mut entries = vec![
        plan(),
        code(&script(BAD)),
        test_file(&tests("25.5")),
        diagnosis("logic", &[]),
    ];
    entries.extend(fixes);
    entries
}

pub(crate) struct Fixture {
    pub(crate) server: ScriptedServer,
    pub(crate) dir: tempfile::TempDir,
    sample: PathBuf,
}

pub(crate) async fn fixture(entries: Vec<Entry>) -> Fixture {
    let server = ScriptedServer::start(Script::new(entries)).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let sample = dir.path().join("sales.csv");
    std::fs::write(&sample, SALES).unwrap();
    Fixture {
        server,
        dir,
        sample,
    }
}

fn cache_dir() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join("autocoder-envs")
}

impl Fixture {
    fn client(&self) -> LlmClient {
        self.client_of("openai/scripted")
    }

    /// A client of the scripted server speaking `model`'s provider's wire format.
    fn client_of(&self, model: &str) -> LlmClient {
        let mut config = LlmConfig::new(ModelSpec::parse(model).unwrap());
        config.api_base = Some(self.server.base_url());
        config.conversation_log = Some(self.dir.path().join("run/conversation.jsonl"));
        config.retry = RetryPolicy {
            max_retries: 2,
            initial_backoff: Duration::from_millis(5),
            max_backoff: Duration::from_millis(20),
            max_retry_after: Duration::from_secs(2),
        };
        LlmClient::new_with_env(config, |_| Some("sk-scripted".to_owned())).unwrap()
    }

    pub(crate) fn options(&self) -> GenerateOptions {
        GenerateOptions {
            prompt: "Total revenue (qty * price) of the sales file, written as `total`.".into(),
            samples: vec![Sample {
                name: "sales".into(),
                path: self.sample.clone(),
            }],
            outputs: vec!["total:float".parse::<Declaration>().unwrap()],
            sample_rows: 10,
            limits: Limits {
                max_iterations: 4,
                ..Limits::default()
            },
            out_dir: self.dir.path().join("run"),
            sandbox: SandboxOptions {
                cache_dir: Some(cache_dir()),
                ..SandboxOptions::default()
            },
            model: "openai/scripted".into(),
            ..GenerateOptions::default()
        }
    }

    pub(crate) async fn generate(&self, options: &GenerateOptions) -> GenerationResult {
        generate(options, &self.client(), &|_| {}).await.unwrap()
    }

    /// [`Fixture::generate`] with code and tests asked for in Markdown blocks.
    async fn generate_fenced(&self) -> GenerationResult {
        let mut options = self.options();
        options.prompting.code_in_fences = true;
        self.generate(&options).await
    }

    /// Asserts that request `index` (0-based) carries `text`, e.g. the note asking again.
    pub(crate) fn assert_request_says(&self, index: usize, text: &str) {
        let body = self.server.requests()[index].body.to_string();
        assert!(
            body.contains(text),
            "request {index} lacks {text:?}: {body}"
        );
    }

    /// Asserts that the first request of `step` (e.g. `tests/retry`) carries `text`.
    pub(crate) fn assert_step_says(&self, step: &str, text: &str) {
        let body = self
            .server
            .requests()
            .into_iter()
            .find(|r| r.step.as_deref() == Some(step))
            .unwrap_or_else(|| panic!("no {step} request"))
            .body
            .to_string();
        assert!(body.contains(text), "{step} lacks {text:?}: {body}");
    }

    pub(crate) fn steps(&self) -> Vec<String> {
        self.server
            .requests()
            .iter()
            .filter_map(|r| r.step.clone())
            .collect()
    }
}

#[tokio::test]
async fn first_try_pass_writes_a_complete_run_directory() {
    let f = fixture(vec![plan(), code(&script(GOOD)), test_file(&tests("25.5"))]).await;
    let result = f.generate(&f.options()).await;
    assert!(result.success, "{result:#?}");
    assert_eq!(result.attempts, 1);
    assert_eq!(f.steps(), ["plan", "code", "tests"]);
    let run_dir = f.dir.path().join("run");
    for file in [
        "result.json",
        "solution.py",
        "test_solution.py",
        "conftest.py",
        "requirements.txt",
        "requirements-test.txt",
        "conversation.jsonl",
        "profiles/sales.json",
        "report.html",
        "iterations/1/test_output.txt",
    ] {
        assert!(run_dir.join(file).exists(), "{file} missing");
    }
    let report = std::fs::read_to_string(run_dir.join("report.html")).unwrap();
    assert!(
        report.contains("<h2>sales</h2>") && report.contains("<svg"),
        "the report names the sample and draws its charts"
    );
    // A standard-library script requires nothing; pytest is a test requirement.
    let script_requirements = std::fs::read_to_string(run_dir.join("requirements.txt")).unwrap();
    assert!(
        script_requirements.contains("only the Python standard library"),
        "{script_requirements}"
    );
    assert!(
        !script_requirements.contains("pytest"),
        "{script_requirements}"
    );
    assert!(
        std::fs::read_to_string(run_dir.join("requirements-test.txt"))
            .unwrap()
            .contains("pytest==")
    );
    // The tests never saw the code: the tests prompt has no solution in it.
    let tests_request = &f.server.requests()[2];
    assert!(!tests_request.body.to_string().contains("total_revenue"));

    // The result runs on new data, with the sample as default and an override.
    let other = f.dir.path().join("other.csv");
    std::fs::write(&other, "region,qty,price\neast,4,0.5\n").unwrap();
    let options = RunOptions {
        overrides: [("sales".to_owned(), other.display().to_string())].into(),
        sandbox: SandboxOptions {
            cache_dir: Some(cache_dir()),
            ..SandboxOptions::default()
        },
        ..RunOptions::default()
    };
    let (_, outcome) = run(&run_dir, &options).await.unwrap();
    assert_eq!(outcome.outputs.unwrap()["total"], Value::Float(2.0));
    let (_, outcome) = run(
        &run_dir,
        &RunOptions {
            overrides: std::collections::BTreeMap::default(),
            ..options
        },
    )
    .await
    .unwrap();
    assert_eq!(outcome.outputs.unwrap()["total"], Value::Float(REVENUE));
}

#[tokio::test]
async fn a_logic_error_is_fixed_by_a_code_edit() {
    let f = fixture(up_to_a_code_fix(vec![code_fix()])).await;
    let result = f.generate(&f.options()).await;
    assert!(result.success, "{result:#?}");
    assert_eq!(result.attempts, 2);
    assert_eq!(
        result.iterations[0].error_types["test_solution.py::test_total_is_revenue"],
        "logic"
    );
    assert!(result.solution.contains(GOOD));
    assert_eq!(f.steps(), ["plan", "code", "tests", "diagnose", "fix_code"]);
    let diagnose = f.server.requests()[3].body.to_string();
    assert!(
        !diagnose.contains("computed during this test"),
        "values are traced only when asked: {diagnose}"
    );
}

/// The user message of request `index`, as the OpenAI wire sent it.
fn user_text(f: &Fixture, index: usize) -> String {
    let body = &f.server.requests()[index].body;
    body["messages"][1]["content"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn a_diagnosis_and_its_fix_begin_alike_so_the_fix_is_read_from_the_prompt_cache() {
    let f = fixture(up_to_a_code_fix(vec![code_fix()])).await;
    let result = f.generate(&f.options()).await;
    assert!(result.success, "{result:#?}");
    assert_eq!(f.steps()[3..], ["diagnose", "fix_code"]);
    let (diagnose, fix) = (user_text(&f, 3), user_text(&f, 4));
    let shared = diagnose
        .bytes()
        .zip(fix.bytes())
        .take_while(|(a, b)| a == b)
        .count();
    // Everything before the diagnosis's own request is the fix's beginning too: the task, the
    // tests, the script, the failures with pytest's output.
    let own = diagnose.find("Diagnose every failing test").unwrap();
    assert!(
        shared >= own,
        "shared {shared} of {own}:\n{}",
        &diagnose[..own]
    );
    assert!(diagnose[..shared].contains("def test_total_is_revenue"));
    assert!(diagnose[..shared].contains("AssertionError"));
    assert!(
        shared * 10 >= fix.len() * 7,
        "{shared} of the fix's {} bytes are shared",
        fix.len()
    );
    // Every step's prompt begins with the task: the plan's beginning is the diagnosis's.
    let plan = user_text(&f, 0);
    let task_end = plan.find("Before any code is written").unwrap();
    assert_eq!(plan[..task_end], diagnose[..task_end]);
}

#[tokio::test]
async fn anthropic_requests_mark_the_task_and_the_report_for_the_prompt_cache() {
    let f = fixture(up_to_a_code_fix(vec![code_fix()])).await;
    let options = GenerateOptions {
        model: "anthropic/scripted".into(),
        ..f.options()
    };
    let result = generate(&options, &f.client_of("anthropic/scripted"), &|_| {})
        .await
        .unwrap();
    assert!(result.success, "{result:#?}");
    let requests = f.server.requests();
    let blocks = |index: usize| -> Vec<(String, bool)> {
        requests[index].body["messages"][0]["content"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| {
                let text = b["text"].as_str().unwrap_or_default().to_owned();
                (text, b.get("cache_control").is_some())
            })
            .collect()
    };
    let plan = blocks(0);
    assert_eq!(plan.len(), 2, "the task, then the plan's request: {plan:?}");
    assert!(plan[0].1 && !plan[1].1);
    let (diagnose, fix) = (blocks(3), blocks(4));
    assert_eq!(diagnose.len(), 3, "task, report, request");
    let marked: Vec<bool> = diagnose.iter().map(|(_, marked)| *marked).collect();
    assert_eq!(marked, [true, true, false]);
    assert_eq!(diagnose[0].0, plan[0].0, "one task block for every step");
    assert!(
        diagnose[1].0.contains("AssertionError"),
        "{:?}",
        diagnose[1]
    );
    assert_eq!(fix[..2], diagnose[..2], "the fix reads the same two blocks");
}

#[tokio::test]
async fn failing_tests_show_the_values_the_script_computed_when_traced() {
    let f = fixture(up_to_a_code_fix(vec![code_fix()])).await;
    let mut options = f.options();
    options.prompting.trace_values = true;
    let result = f.generate(&options).await;
    assert!(result.success, "{result:#?}");
    assert_eq!(f.steps(), ["plan", "code", "tests", "diagnose", "fix_code"]);
    // The buggy script sums the quantities alone: 3 + 2 + 1. The diagnosis and the fix see the
    // value each line produced, not only the assertion that compared it.
    for (index, step) in [(3, "diagnose"), (4, "fix_code")] {
        let body = f.server.requests()[index].body.to_string();
        assert!(
            body.contains("computed during this test"),
            "{step} lacks the trace: {body}"
        );
        assert!(
            body.contains("(main): total = float 6.0"),
            "{step} lacks the value of `total`: {body}"
        );
        assert!(
            body.contains("(total_revenue): returned float 6.0"),
            "{step} lacks what total_revenue returned: {body}"
        );
    }
    // The harness handed to the user runs the script directly: the tracer is the loop's own.
    let conftest = std::fs::read_to_string(f.dir.path().join("run/conftest.py")).unwrap();
    assert!(!conftest.contains("_autocoder_trace"), "{conftest}");
    assert!(!f.dir.path().join("run/_autocoder_trace.py").exists());
}

/// A script that catches an exception and stops with a message (`sys.exit(f"...: {err}")`, as
/// the skeleton's `main` does) shows the diagnosis the line that raised it, not only the
/// message; the harness handed to the user still runs `python solution.py`.
#[tokio::test]
async fn a_caught_exception_s_line_reaches_the_diagnosis() {
    let catching = script(r#"float(row["quantity"]) * float(row["price"])"#).replace(
        "except OSError as err:",
        "except (OSError, KeyError) as err:",
    );
    let fix = Entry::step(
        "fix_code",
        Reply::Json(json!({
            "edits": [{"find": r#"row["quantity"]"#, "replace": r#"row["qty"]"#}],
            "packages": [],
            "explanation": "the column is qty",
        })),
    );
    let f = fixture(vec![
        plan(),
        code(&catching),
        test_file(&tests("25.5")),
        diagnosis("logic", &[]),
        fix,
    ])
    .await;
    let result = f.generate(&f.options()).await;
    assert!(result.success, "{result:#?}");
    assert_eq!(f.steps(), ["plan", "code", "tests", "diagnose", "fix_code"]);
    let diagnose = user_text(&f, 3);
    assert!(diagnose.contains(": 'quantity'"), "{diagnose}");
    assert!(
        diagnose.contains("solution.py\", line 8, in total_revenue"),
        "the diagnosis lacks the line that raised: {diagnose}"
    );
    assert!(diagnose.contains("KeyError: 'quantity'"), "{diagnose}");
    let conftest = std::fs::read_to_string(f.dir.path().join("run/conftest.py")).unwrap();
    assert!(!conftest.contains("_autocoder_where"), "{conftest}");
    assert!(!f.dir.path().join("run/_autocoder_where.py").exists());
}

#[tokio::test]
async fn a_short_script_is_fixed_by_a_whole_new_version() {
    let whole = Entry::step(
        "fix_code",
        Reply::Json(json!({
            "edits": [],
            "code": format!("```python\n{}```", script(GOOD)),
            "packages": [],
            "explanation": "revenue is qty * price",
        })),
    );
    let f = fixture(up_to_a_code_fix(vec![whole])).await;
    let result = f.generate(&f.options()).await;
    assert!(result.success, "{result:#?}");
    assert_eq!(result.solution, script(GOOD));
    // The prompt asked for the whole script, not for edits.
    f.assert_request_says(4, "the whole corrected");
}

#[tokio::test]
async fn a_stub_offered_as_the_whole_script_is_sent_back() {
    let stub = Entry::step(
        "fix_code",
        Reply::Json(
            json!({"edits": [], "code": "from solution import main\nmain()", "packages": []}),
        ),
    );
    let whole = Entry::step(
        "fix_code",
        Reply::Json(json!({"edits": [], "code": script(GOOD), "packages": []})),
    );
    let f = fixture(up_to_a_code_fix(vec![stub, whole])).await;
    let result = f.generate(&f.options()).await;
    assert!(result.success, "{result:#?}");
    assert_eq!(result.attempts, 2, "the stub never reached the sandbox");
    f.assert_request_says(5, "not the whole script: it imports `solution`");
    // The answer asked again is sampled more widely; the first one at the user's temperature.
    let requests = f.server.requests();
    assert_eq!(requests[4].body.get("temperature"), None);
    assert_eq!(requests[5].body["temperature"], 0.8);
}

#[tokio::test]
async fn a_fix_that_breaks_the_syntax_is_asked_again_before_a_test_run() {
    let broken = Entry::step(
        "fix_code",
        Reply::Json(json!({
            "edits": [{"find": BAD, "replace": "float(row[\"qty\"] *"}],
            "code": null,
            "packages": [],
            "explanation": "revenue",
        })),
    );
    let f = fixture(up_to_a_code_fix(vec![broken, code_fix()])).await;
    let result = f.generate(&f.options()).await;
    assert!(result.success, "{result:#?}");
    // Two runs only: the broken fix never reached the sandbox.
    assert_eq!(result.attempts, 2);
    assert_eq!(
        f.steps(),
        ["plan", "code", "tests", "diagnose", "fix_code", "fix_code"]
    );
    f.assert_request_says(5, "not valid Python after your change");
    assert_eq!(result.steps["fix_code"].calls, 2);
}

#[tokio::test]
async fn a_test_file_that_does_not_compile_is_asked_for_again_before_a_run() {
    // What a small model writes: a JSON "\n" inside a Python string literal.
    let broken = "import pytest\n\n\ndef test_total(run_solution):\n    x = 'a\nb'\n";
    let f = fixture(vec![
        plan(),
        code(&script(GOOD)),
        test_file(broken),
        test_file(&tests("25.5")),
    ])
    .await;
    let result = f.generate(&f.options()).await;
    assert!(result.success, "{result:#?}");
    assert_eq!(result.attempts, 1);
    assert_eq!(f.steps(), ["plan", "code", "tests", "tests"]);
    f.assert_request_says(3, "the test file was not valid Python");
    assert_eq!(result.steps["tests"].calls, 2);
}

#[tokio::test]
async fn expected_values_written_as_numbers_are_asked_for_again_computed_once() {
    // The test shape asks for expected values computed from the rows; a bare number is sent
    // back once (the tests then run), and a second one is kept.
    let by_hand = tests("25.5").replace(
        "    result = run_solution()\n",
        "    result = run_solution()\n    expected_total = 25.5\n",
    );
    let computed = tests("sum(float(r['qty']) * float(r['price']) for r in sales_rows)").replace(
        "    result = run_solution()\n",
        "    sales_rows = list(csv.DictReader(io.StringIO('qty,price\\n3,2.5\\n2,4.0\\n1,10.0\\n')))\n    result = run_solution()\n",
    ).replace("import pytest\n", "import csv\nimport io\nimport pytest\n");
    let f = fixture(vec![
        plan(),
        code(&script(GOOD)),
        test_file(&by_hand),
        test_file(&computed),
    ])
    .await;
    let result = f.generate(&f.options()).await;
    assert!(result.success, "{result:#?}");
    assert_eq!(f.steps(), ["plan", "code", "tests", "tests"]);
    f.assert_request_says(3, "these lines write an expected value as a number");
    f.assert_request_says(3, "`expected_total = 25.5`");
    assert!(
        result.tests.contains("for r in sales_rows"),
        "{}",
        result.tests
    );

    // Asked once only: a second answer with numbers is kept.
    let f = fixture(vec![
        plan(),
        code(&script(GOOD)),
        test_file(&by_hand),
        test_file(&by_hand),
    ])
    .await;
    let result = f.generate(&f.options()).await;
    assert!(result.success, "{result:#?}");
    assert_eq!(f.steps(), ["plan", "code", "tests", "tests"]);
}

#[tokio::test]
async fn tokens_are_booked_per_step_and_per_iteration() {
    let f = fixture(vec![
        plan().with_usage(100, 10),
        code(&script(BAD)).with_usage(200, 20),
        test_file(&tests("25.5")).with_usage(300, 30),
        diagnosis("logic", &[]).with_usage(400, 40),
        code_fix().with_usage(500, 50),
    ])
    .await;
    let result = f.generate(&f.options()).await;
    assert!(result.success, "{result:#?}");
    let per_step: Vec<(&str, u64, u64, u64)> = result
        .steps
        .iter()
        .map(|(step, u)| (step.as_str(), u.calls, u.input_tokens, u.output_tokens))
        .collect();
    assert_eq!(
        per_step,
        [
            ("code", 1, 200, 20),
            ("diagnose", 1, 400, 40),
            ("fix_code", 1, 500, 50),
            ("plan", 1, 100, 10),
            ("tests", 1, 300, 30),
        ]
    );
    assert_eq!(result.tokens.input_tokens, 1_500);
    assert_eq!(result.tokens.output_tokens, 150);
    // Run 1 was followed by the diagnosis and the code fix; run 2 passed and cost nothing.
    let per_run: Vec<u64> = result.iterations.iter().map(|i| i.tokens).collect();
    assert_eq!(per_run, [400 + 40 + 500 + 50, 0]);
}

#[tokio::test]
async fn the_test_writer_sees_the_code_only_when_asked() {
    let f = fixture(vec![plan(), code(&script(GOOD)), test_file(&tests("25.5"))]).await;
    let mut options = f.options();
    options.prompting.tests_see_code = true;
    let result = f.generate(&options).await;
    assert!(result.success, "{result:#?}");
    let tests_request = f.server.requests()[2].body.to_string();
    assert!(
        tests_request.contains("total_revenue"),
        "the tests prompt carries the script"
    );
}

/// Writes the revenue as a text that is not a number (like a pandas Series' repr).
const NOT_A_NUMBER: &str = r#"f"rows: {float(row['qty'])}""#;

#[tokio::test]
async fn weak_model_tests_cannot_pass_a_script_that_breaks_the_contract() {
    // The model's only test checks the exit code; the harness's contract test reads `total`
    // back as a float, fails, and a "test_error" verdict on it still goes to the code fixer.
    let weak = "import pytest\n\n\ndef test_runs(run_solution):\n    assert run_solution().returncode == 0\n";
    let sent = SCRIPT
        .replace("sum(BUG for row", "\"\".join(BUG for row")
        .replace("BUG", NOT_A_NUMBER);
    let fixed = script(GOOD);
    let line = |text: &str| text.lines().nth(7).unwrap().to_owned();
    let diagnosis = Entry::step(
        "diagnose",
        Reply::Json(json!({"failures": [{
            "test_id": "test_contract.py::test_runs_on_the_samples_and_writes_every_output",
            "kind": "test_error",
            "evidence": "the output is text",
            "fix": "accept text",
            "packages": [],
        }]})),
    );
    let fix = Entry::step(
        "fix_code",
        Reply::Json(
            json!({"edits": [{"find": line(&sent), "replace": line(&fixed)}], "packages": [], "explanation": "sum numbers"}),
        ),
    );
    let f = fixture(vec![plan(), code(&sent), test_file(weak), diagnosis, fix]).await;
    let result = f.generate(&f.options()).await;
    assert!(result.success, "{result:#?}");
    assert_eq!(result.attempts, 2);
    let contract = "test_contract.py::test_runs_on_the_samples_and_writes_every_output";
    assert_eq!(result.iterations[0].error_types[contract], "logic");
    assert_eq!(f.steps(), ["plan", "code", "tests", "diagnose", "fix_code"]);
    let first_run =
        std::fs::read_to_string(f.dir.path().join("run/iterations/1/test_output.txt")).unwrap();
    assert!(
        first_run.contains("output 'total' must be one float, but solution.py wrote"),
        "{first_run}"
    );
    assert!(f.dir.path().join("run/test_contract.py").exists());
}

#[tokio::test]
async fn run_solution_refuses_arguments_that_are_not_inputs() {
    let wrong = "import pytest\n\n\ndef test_runs(run_solution):\n    assert run_solution({\"name\": \"sales\"}).returncode == 0\n";
    let right = "def test_runs(run_solution):\n    assert run_solution().returncode == 0\n";
    let f = fixture(vec![
        plan(),
        code(&script(GOOD)),
        test_file(wrong),
        Entry::step(
            "diagnose",
            Reply::Json(json!({"failures": [{
                "test_id": "test_solution.py::test_runs", "kind": "test_error",
                "evidence": "`name` is not an input", "fix": "drop it", "packages": [],
            }]})),
        ),
        Entry::step(
            "fix_tests",
            Reply::Json(
                json!({"functions": [{"name": "test_runs", "source": right}], "imports": []}),
            ),
        ),
    ])
    .await;
    let result = f.generate(&f.options()).await;
    assert!(result.success, "{result:#?}");
    let first_run =
        std::fs::read_to_string(f.dir.path().join("run/iterations/1/test_output.txt")).unwrap();
    assert!(
        first_run.contains(
            "run_solution got ['name'], which are not inputs of solution.py; its inputs are ['sales']"
        ),
        "{first_run}"
    );
}

#[tokio::test]
async fn a_script_that_does_not_compile_is_asked_for_again_before_any_test_run() {
    // Where the 1.5B model's JSON string ended early: at the double quote of `print(f"`.
    let broken = script(GOOD).replace("if __name__", "print(f\nif __name__");
    let f = fixture(vec![
        plan(),
        code(&broken),
        code(&script(GOOD)),
        test_file(&tests("25.5")),
    ])
    .await;
    let result = f.generate(&f.options()).await;
    assert!(result.success, "{result:#?}");
    assert_eq!(result.attempts, 1);
    assert_eq!(f.steps(), ["plan", "code", "code", "tests"]);
    f.assert_request_says(2, "the script was not valid Python");
}

#[tokio::test]
async fn code_in_fences_takes_code_and_tests_from_markdown_blocks() {
    let fenced = |text: &str| format!("Here is the file:\n\n```python\n{text}```\n");
    let f = fixture(vec![
        plan(),
        Entry::step("code", Reply::Text(fenced(&script(BAD)))),
        // Cut at the token limit: no closing fence; asked for again.
        Entry::step(
            "tests",
            Reply::Text("```python\nimport pytest\n\ndef test_".into()),
        ),
        Entry::step("tests", Reply::Text(fenced(&tests("25.5")))),
        diagnosis("logic", &[]),
        Entry::step("fix_code", Reply::Text(fenced(&script(GOOD)))),
    ])
    .await;
    let result = f.generate_fenced().await;
    assert!(result.success, "{result:#?}");
    assert_eq!(result.attempts, 2);
    assert_eq!(result.solution, script(GOOD));
    assert_eq!(
        f.steps(),
        ["plan", "code", "tests", "tests", "diagnose", "fix_code"]
    );
    let requests = f.server.requests();
    assert!(
        requests[0].body.get("response_format").is_some(),
        "the plan stays JSON"
    );
    for index in [1, 2, 5] {
        assert!(
            requests[index].body.get("response_format").is_none(),
            "request {index} asks for a code block, not JSON"
        );
    }
    f.assert_request_says(3, "no complete ```python code block");
}

#[tokio::test]
async fn a_fenced_code_fix_may_hold_only_the_changed_function() {
    let fenced =
        |text: &str| format!("The revenue multiplies qty by price.\n\n```python\n{text}```\n");
    let function = |expression: &str| {
        format!(
            "def total_revenue(path):\n    with open(path, newline=\"\") as handle:\n        return sum({expression} for row in csv.DictReader(handle))\n"
        )
    };
    let f = fixture(vec![
        plan(),
        Entry::step("code", Reply::Text(fenced(&script(BAD)))),
        Entry::step("tests", Reply::Text(fenced(&tests("25.5")))),
        diagnosis("logic", &[]),
        // Lines, not a function: nothing to merge; sent back with the reason.
        Entry::step("fix_code", Reply::Text(fenced("total = qty * price\n"))),
        Entry::step(
            "fix_code",
            Reply::Text(fenced(&format!("import math\n\n\n{}", function(GOOD)))),
        ),
    ])
    .await;
    let result = f.generate_fenced().await;
    assert!(result.success, "{result:#?}");
    assert_eq!(result.attempts, 2, "{result:#?}");
    assert_eq!(
        result.solution,
        script(GOOD).replace("import sys\n", "import sys\nimport math\n")
    );
    assert_eq!(
        f.steps(),
        ["plan", "code", "tests", "diagnose", "fix_code", "fix_code"]
    );
    f.assert_request_says(4, "copied exactly in one block");
    f.assert_request_says(
        5,
        "could not be merged into the script: it has no whole function",
    );
}

#[tokio::test]
async fn a_fenced_code_fix_may_quote_the_wrong_line_then_correct_it() {
    let fenced = |text: &str| format!("```python\n{text}```\n");
    let line =
        |expression: &str| format!("return sum({expression} for row in csv.DictReader(handle))\n");
    let answer = format!(
        "The line that is wrong is:\n```python\n{}```\nIt should be:\n```python\n{}```\n",
        line(BAD),
        line(GOOD)
    );
    let f = fixture(vec![
        plan(),
        Entry::step("code", Reply::Text(fenced(&script(BAD)))),
        Entry::step("tests", Reply::Text(fenced(&tests("25.5")))),
        diagnosis("logic", &[]),
        Entry::step("fix_code", Reply::Text(answer)),
    ])
    .await;
    let result = f.generate_fenced().await;
    assert!(result.success, "{result:#?}");
    assert_eq!(result.attempts, 2);
    assert_eq!(result.solution, script(GOOD));
}

#[tokio::test]
async fn an_eif_keyword_slip_is_repaired_without_asking_again() {
    let slipped = script(GOOD).replace("if __name__", "eif __name__");
    let f = fixture(vec![plan(), code(&slipped), test_file(&tests("25.5"))]).await;
    let result = f.generate(&f.options()).await;
    assert!(result.success, "{result:#?}");
    assert_eq!(result.attempts, 1);
    assert_eq!(f.steps(), ["plan", "code", "tests"]);
    assert_eq!(result.solution, script(GOOD));
}

#[tokio::test]
async fn a_forgotten_import_sys_is_added_to_the_script() {
    // The 1.5B model's scripts call sys.exit without importing sys; the missing-file test
    // passes either way (a NameError exits non-zero too), so only the repair catches it.
    let forgetful = script(GOOD).replace("import sys\n", "");
    let f = fixture(vec![plan(), code(&forgetful), test_file(&tests("25.5"))]).await;
    let result = f.generate(&f.options()).await;
    assert!(result.success, "{result:#?}");
    assert_eq!(
        result.solution,
        script(GOOD)
            .replace("import sys\n", "")
            .replace("import argparse\n", "import sys\nimport argparse\n")
    );
}

#[tokio::test]
async fn the_tests_own_run_solution_import_or_definition_is_dropped() {
    // The 1.5B model's tests began with this import (a collection error before any test ran),
    // and its log-analysis tests defined a fixture of that name returning None.
    let tests = tests("25.5").replace(
        "import pytest\n",
        "import pytest\nfrom solution import run_solution\n\n@pytest.fixture\ndef run_solution():\n    pass\n",
    );
    assert!(tests.contains("from solution import run_solution"));
    let f = fixture(vec![plan(), code(&script(GOOD)), test_file(&tests)]).await;
    let result = f.generate(&f.options()).await;
    assert!(result.success, "{result:#?}");
    assert_eq!(result.attempts, 1);
    assert!(
        !result.tests.contains("from solution import")
            && !result.tests.contains("def run_solution"),
        "{}",
        result.tests
    );
}

#[tokio::test]
async fn a_wrong_test_is_fixed_by_a_test_patch() {
    let fixed = "def test_total_is_revenue(run_solution):\n    result = run_solution()\n    assert result.outputs[\"total\"] == pytest.approx(25.5)\n";
    let f = fixture(vec![
        plan(),
        code(&script(GOOD)),
        test_file(&tests("26.0")),
        diagnosis("test_error", &[]),
        Entry::step("fix_tests", Reply::Json(json!({"functions": [{"name": "test_total_is_revenue", "source": fixed}], "imports": []}))),
    ])
    .await;
    let result = f.generate(&f.options()).await;
    assert!(result.success, "{result:#?}");
    assert!(
        result.tests.contains("approx(25.5)") && result.tests.contains("test_missing_file_fails")
    );
    assert_eq!(result.solution, script(GOOD), "the code was not touched");
}

#[tokio::test]
async fn a_fenced_test_fix_is_taken_from_its_code_block() {
    let fenced = |text: &str| format!("The expected total is wrong.\n\n```python\n{text}```\n");
    // First the script's function (what the 1.5B model wrote), then the test.
    let script_function = "def compute(path):\n    return 25.5\n";
    let fixed = "import math\n\n\ndef test_total_is_revenue(run_solution):\n    result = run_solution()\n    assert math.isclose(result.outputs[\"total\"], 25.5)\n";
    let f = fixture(vec![
        plan(),
        Entry::step("code", Reply::Text(fenced(&script(GOOD)))),
        Entry::step("tests", Reply::Text(fenced(&tests("26.0")))),
        diagnosis("test_error", &[]),
        Entry::step("fix_tests", Reply::Text(fenced(script_function))),
        Entry::step("fix_tests", Reply::Text(fenced(fixed))),
    ])
    .await;
    let result = f.generate_fenced().await;
    assert!(result.success, "{result:#?}");
    assert_eq!(
        f.steps(),
        [
            "plan",
            "code",
            "tests",
            "diagnose",
            "fix_tests",
            "fix_tests"
        ]
    );
    f.assert_request_says(4, "def test_total_is_revenue(run_solution):");
    f.assert_request_says(5, "there is no test function `compute` in the file");
    assert!(f.server.requests()[4].body.get("response_format").is_none());
    assert!(
        result.tests.contains("math.isclose(result.outputs")
            && result.tests.contains("import math")
            && result.tests.contains("test_missing_file_fails"),
        "{}",
        result.tests
    );
    assert_eq!(result.solution, script(GOOD), "the code was not touched");
}

#[tokio::test]
async fn a_persisting_wrong_diagnosis_is_reclassified_to_the_code_fixer() {
    // The model blames the test twice; the test fix changes nothing that matters.
    let same = "def test_total_is_revenue(run_solution):\n    result = run_solution()\n    assert result.returncode == 0\n    assert result.outputs[\"total\"] == pytest.approx(25.5)\n";
    let f = fixture(vec![
        plan(),
        code(&script(BAD)),
        test_file(&tests("25.5")),
        diagnosis("test_error", &[]),
        Entry::step("fix_tests", Reply::Json(json!({"functions": [{"name": "test_total_is_revenue", "source": same}], "imports": []}))),
        diagnosis("test_error", &[]),
        code_fix(),
    ])
    .await;
    let result = f.generate(&f.options()).await;
    assert!(result.success, "{result:#?}");
    assert_eq!(
        f.steps(),
        [
            "plan",
            "code",
            "tests",
            "diagnose",
            "fix_tests",
            "diagnose",
            "fix_code"
        ]
    );
    assert_eq!(
        result.iterations[1].error_types["test_solution.py::test_total_is_revenue"],
        "logic"
    );
    // The code fixer is told the test stands, not handed the fix meant for the test.
    f.assert_request_says(6, "The test stands as written: the script is wrong here");
}

#[tokio::test]
async fn a_test_whose_own_file_lacks_the_samples_columns_goes_to_the_test_fixer() {
    // The test writes a sales file without `price`; the (right) script fails on it. The
    // diagnosis blames the script, but the harness checked the test's file against the sample:
    // the test is what must change, and its fixer is told why.
    let one_row = |header: &str, row: &str, expected: &str| {
        format!(
            "def test_one_row(run_solution, tmp_path):\n    data = tmp_path / \"one.csv\"\n    data.write_text(\"{header}\\n{row}\\n\")\n    result = run_solution({{\"sales\": data}})\n    assert result.returncode == 0, result.stderr\n    assert result.outputs[\"total\"] == pytest.approx({expected})\n"
        )
    };
    let off = format!(
        "{}\n\n{}",
        tests(&REVENUE.to_string()),
        one_row("region,qty", "north,2", "2.0")
    );
    let f = fixture(vec![
        plan(),
        code(&script(GOOD)),
        test_file(&off),
        Entry::step(
            "diagnose",
            Reply::Json(json!({"failures": [{
                "test_id": "test_solution.py::test_one_row",
                "kind": "logic",
                "evidence": "KeyError: 'price'",
                "fix": "treat a missing price as 1",
                "packages": [],
            }]})),
        ),
        Entry::step(
            "fix_tests",
            Reply::Json(json!({"functions": [{
                "name": "test_one_row",
                "source": one_row("region,qty,price", "north,2,1.5", "3.0"),
            }], "imports": []})),
        ),
    ])
    .await;
    let result = f.generate(&f.options()).await;
    assert!(result.success, "{result:#?}");
    assert_eq!(
        f.steps(),
        ["plan", "code", "tests", "diagnose", "fix_tests"]
    );
    assert_eq!(
        result.iterations[0].error_types["test_solution.py::test_one_row"],
        "test_error"
    );
    // The diagnosis and the fixer see what the harness found; the fixer is not told the
    // failure survived fixes of the script (none was made).
    f.assert_step_says("diagnose", "without ['price'] of the task's `sales`");
    f.assert_request_says(4, "those files are not the task's data");
    let fix = f.server.requests()[4].body.to_string();
    assert!(!fix.contains("it survived\nfixes of the script"), "{fix}");
}

#[tokio::test]
async fn a_collection_error_in_the_solution_is_diagnosed_not_answered_with_new_tests() {
    let broken = script(GOOD).replace("import csv\n", "import csv\nfrom csv import DictReaderr\n");
    let tests_importing = format!("from solution import total_revenue\n{}", tests("25.5"));
    let f = fixture(vec![
        plan(),
        code(&broken),
        // Blind tests importing the script are sent back once; the second answer is kept.
        test_file(&tests_importing),
        test_file(&tests_importing),
        diagnosis("logic", &[]),
        Entry::step("fix_code", Reply::Json(json!({"edits": [{"find": "from csv import DictReaderr\n", "replace": ""}], "packages": [], "explanation": "typo"}))),
    ])
    .await;
    let result = f.generate(&f.options()).await;
    assert!(result.success, "{result:#?}");
    // The import error reached the diagnosis.
    f.assert_step_says("diagnose", "DictReaderr");
}

#[tokio::test]
async fn blind_tests_that_import_the_script_are_sent_back_then_rewritten() {
    // Written without the script, the tests guess a function name: asked once before a run,
    // and when the guess reaches a run anyway, new tests are written instead of a diagnosis
    // (no code fixer is asked to add the guessed function).
    let guessing = format!(
        "from solution import parse_sales\n{}\n\ndef test_parse_sales(sales):\n    assert len(parse_sales(sales)) == 3\n",
        tests("25.5")
    );
    let f = fixture(vec![
        plan(),
        code(&script(GOOD)),
        test_file(&guessing),
        test_file(&guessing),
        test_file(&tests("25.5")),
    ])
    .await;
    let result = f.generate(&f.options()).await;
    assert!(result.success, "{result:#?}");
    assert_eq!(f.steps(), ["plan", "code", "tests", "tests", "tests"]);
    f.assert_request_says(3, "these lines import from `solution`");
    f.assert_request_says(3, "`from solution import parse_sales`");
    f.assert_request_says(4, "the tests used `parse_sales` from `solution`");
    assert_eq!(result.attempts, 2);
    assert!(
        result.iterations[0].changes[0].starts_with("tests: dropped"),
        "{:?}",
        result.iterations
    );
}

#[tokio::test]
async fn max_iterations_ends_with_the_real_error() {
    let f = fixture(up_to_a_code_fix(vec![code_fix()])).await;
    let mut options = f.options();
    options.limits.max_iterations = 1;
    let result = f.generate(&options).await;
    assert!(!result.success);
    assert!(
        result.reason.contains("max_iterations (1)"),
        "{}",
        result.reason
    );
    let error = result.error.unwrap();
    assert!(error.contains("25.5") && error.contains("6.0"), "{error}");
    // The last run's failure is diagnosed; no fix is asked for, since none could be tested.
    assert_eq!(f.steps(), ["plan", "code", "tests", "diagnose"]);
    assert_eq!(
        result.iterations[0].error_types.len(),
        1,
        "{:?}",
        result.iterations
    );
    let saved: GenerationResult =
        serde_json::from_slice(&std::fs::read(f.dir.path().join("run/result.json")).unwrap())
            .unwrap();
    assert!(!saved.success);
}

#[tokio::test]
async fn skip_tests_stops_after_the_environment() {
    let f = fixture(vec![plan(), code(&script(GOOD))]).await;
    let mut options = f.options();
    options.limits.skip_tests = true;
    let result = f.generate(&options).await;
    assert!(
        result.success && result.tests.is_empty() && result.attempts == 0,
        "{result:#?}"
    );
    assert_eq!(f.steps(), ["plan", "code"]);
}

/// `--no-plan`: the first call is the code step, its prompt has no plan, the run goes on as
/// usual and `result.json` has no plan.
#[tokio::test]
async fn without_a_plan_the_first_call_writes_the_script() {
    let f = fixture(vec![code(&script(GOOD)), test_file(&tests("25.5"))]).await;
    let mut options = f.options();
    options.prompting.no_plan = true;
    let result = f.generate(&options).await;
    assert!(result.success, "{result:#?}");
    assert_eq!(f.steps(), ["code", "tests"]);
    let prompt = f.server.requests()[0].body.to_string();
    assert!(!prompt.contains("Plan to follow"), "{prompt}");
    assert!(result.plan.is_none(), "{result:#?}");
}

/// `--sample-fixes`: a script that crashes on the samples is fixed from the crash before the
/// tests are written, and the fix prompt shows the crash, not tests.
#[tokio::test]
async fn a_script_crashing_on_the_samples_is_fixed_before_the_tests_are_written() {
    let crashing = r#"float(row["quantity"]) * float(row["price"])"#;
    let f = fixture(vec![
        plan(),
        code(&script(crashing)),
        edit_fix(r#"row["quantity"]"#, r#"row["qty"]"#),
        test_file(&tests("25.5")),
    ])
    .await;
    let mut options = f.options();
    options.limits.sample_fixes = 2;
    let result = f.generate(&options).await;
    assert!(result.success, "{result:#?}");
    assert_eq!(f.steps(), ["plan", "code", "fix_code", "tests"]);
    assert_eq!(result.iterations.len(), 1, "{result:#?}");
    let fix = f.server.requests()[2].body.to_string();
    assert!(fix.contains("No test has been written yet"), "{fix}");
    assert!(fix.contains("KeyError"), "{fix}");
    assert!(!fix.contains("The tests (`test_solution.py`)"), "{fix}");
    // Each try ran in a directory of its own, the crashing script first.
    let tried = |k: u32| {
        std::fs::read_to_string(f.dir.path().join(format!("run/samples/{k}/solution.py")))
            .unwrap_or_default()
    };
    assert!(tried(1).contains("quantity"), "{}", tried(1));
    assert!(!tried(2).contains("quantity"), "{}", tried(2));
}

/// With `--units`, a crash on the samples is fixed in the function it was raised in alone: the
/// fix prompt names that function, and a fix that also rewrites `main` keeps `main` as it was.
#[tokio::test]
async fn with_units_a_crash_on_the_samples_is_fixed_in_its_function_alone() {
    let crashing = r#"float(row["quantity"]) * float(row["price"])"#;
    let fix = Entry::step(
        "fix_code",
        Reply::Json(json!({
            "edits": [
                {"find": r#"row["quantity"]"#, "replace": r#"row["qty"]"#},
                {
                    "find": r#"parser.add_argument("--sales", required=True)"#,
                    "replace": r#"parser.add_argument("--sales", default="sales.csv")"#,
                },
            ],
            "packages": [],
            "explanation": "the column is qty",
        })),
    );
    let f = fixture(vec![
        plan(),
        code(&script(crashing)),
        fix,
        test_file(&tests("25.5")),
    ])
    .await;
    let mut options = f.options();
    options.limits.sample_fixes = 1;
    options.prompting.units = true;
    let result = f.generate(&options).await;
    assert!(result.success, "{result:#?}");
    assert_eq!(f.steps(), ["plan", "code", "fix_code", "tests"]);
    let fix = f.server.requests()[2].body.to_string();
    assert!(fix.contains("It failed in `total_revenue`"), "{fix}");
    assert!(
        result
            .solution
            .contains(r#"float(row["qty"]) * float(row["price"])"#)
            && result
                .solution
                .contains(r#"parser.add_argument("--sales", required=True)"#),
        "{}",
        result.solution
    );
}

#[tokio::test]
async fn invalid_json_from_the_model_is_repaired() {
    let f = fixture(vec![
        Entry::step(
            "plan",
            Reply::Text("Sure! Here is the plan: {\"summary\": \"sum".into()),
        ),
        Entry::step(
            "plan/repair",
            Reply::Json(json!({"summary": "sum", "approach": [], "edge_cases": []})),
        ),
        code(&script(GOOD)),
        test_file(&tests("25.5")),
    ])
    .await;
    let result = f.generate(&f.options()).await;
    assert!(result.success, "{result:#?}");
    assert_eq!(f.steps()[..2], ["plan", "plan/repair"]);
}

#[tokio::test]
async fn a_test_file_cut_at_the_token_limit_is_asked_for_again_not_the_end() {
    let looping = json!({"tests": format!("import pytest\n{}", "# again\n".repeat(200))});
    let cut = || Reply::Truncated {
        json: looping.clone(),
        keep_chars: 500,
    };
    let f = fixture(vec![
        plan(),
        code(&script(GOOD)),
        Entry::step("tests", cut()),
        Entry::step("tests/repair", cut()),
        test_file(&tests("25.5")),
    ])
    .await;
    let result = f.generate(&f.options()).await;
    assert!(result.success, "{result:#?}");
    assert_eq!(
        f.steps(),
        ["plan", "code", "tests", "tests/repair", "tests"]
    );
    f.assert_request_says(4, "your previous answer was unusable");
    f.assert_request_says(4, "token limit");
}

#[tokio::test]
async fn a_bad_request_fails_before_any_model_call() {
    let f = fixture(vec![]).await;
    let mut options = f.options();
    options.outputs = vec!["exit_code:int".parse().unwrap()];
    let err = generate(&options, &f.client(), &|_| {})
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("reserved"), "{err}");
    assert!(f.server.requests().is_empty());
}

#[tokio::test]
async fn standard_library_modules_and_prose_in_a_diagnosis_are_not_installed() {
    // The 1.5B model's diagnoses named `os`, `solution` and a sentence as packages: nothing is
    // left to install, so the failure goes to the code fixer, with no environment rebuild and
    // no replacement question.
    let f = fixture(vec![
        plan(),
        code(&script(BAD)),
        test_file(&tests("25.5")),
        diagnosis(
            "environment",
            &[
                "os",
                "solution.py",
                "None",
                "none beyond the standard library and pytest",
            ],
        ),
        code_fix(),
    ])
    .await;
    let result = f.generate(&f.options()).await;
    assert!(result.success, "{result:#?}");
    assert_eq!(f.steps(), ["plan", "code", "tests", "diagnose", "fix_code"]);
    assert!(
        !result.packages.iter().any(|p| p == "os" || p == "solution"),
        "{:?}",
        result.packages
    );
}

#[tokio::test]
async fn a_missing_package_is_diagnosed_as_environment_and_installed() {
    // The import is dynamic, so the import analysis cannot see it: the run fails, the diagnosis
    // names the distribution, the environment is rebuilt with it.
    let dynamic = script(GOOD).replace(
        "def main():\n",
        "def main():\n    __import__(\"importlib\").import_module(\"six\")\n",
    );
    let f = fixture(vec![
        plan(),
        code(&dynamic),
        test_file(&tests("25.5")),
        Entry::step(
            "diagnose",
            Reply::Json(json!({"failures": [{
                "test_id": "test_solution.py::test_total_is_revenue",
                "kind": "environment",
                "evidence": "ModuleNotFoundError: No module named 'six'",
                "fix": "install six",
                "packages": ["six"],
            }, {
                // The harness's contract test fails the same way.
                "test_id": "test_contract.py::test_runs_on_the_samples_and_writes_every_output",
                "kind": "environment",
                "evidence": "ModuleNotFoundError: No module named 'six'",
                "fix": "install six",
                "packages": ["six"],
            }]})),
        ),
    ])
    .await;
    let result = f.generate(&f.options()).await;
    assert!(result.success, "{result:#?}");
    assert!(
        result.packages.contains(&"six".to_owned()),
        "{:?}",
        result.packages
    );
    assert!(
        result
            .environment
            .resolved
            .iter()
            .any(|(name, _)| name == "six")
    );
    assert_eq!(
        result.iterations[0].error_types["test_solution.py::test_total_is_revenue"],
        "environment"
    );
}

#[tokio::test]
async fn a_package_that_does_not_exist_is_replaced_or_dropped() {
    let importing = script(GOOD).replace(
        "import csv\n",
        "import csv\nimport autocoder_no_such_distribution_zz9\n",
    );
    let f = fixture(vec![
        plan(),
        code(&importing),
        Entry::step(
            "replace_package",
            Reply::Json(json!({"replacement": null, "reason": "the import is not needed"})),
        ),
        code(&script(GOOD)),
        test_file(&tests("25.5")),
    ])
    .await;
    let result = f.generate(&f.options()).await;
    assert!(result.success, "{result:#?}");
    assert_eq!(
        f.steps(),
        ["plan", "code", "replace_package", "code", "tests"]
    );
    let second_code = &f.server.requests()[3];
    let body = second_code.body.to_string();
    assert!(
        body.contains("zz9") && body.contains("does not exist"),
        "the note reached the model: {body}"
    );
    assert!(!result.packages.iter().any(|p| p.contains("zz9")));
}

#[tokio::test]
async fn a_file_name_instead_of_tests_is_sent_back_with_the_reason() {
    // What the 1.5B local model really answered once.
    let f = fixture(vec![
        plan(),
        code(&script(GOOD)),
        Entry::step(
            "tests",
            Reply::Json(json!({"tests": "tests/test_solution.py"})),
        ),
        Entry::step("tests/retry", Reply::Json(json!({"tests": tests("25.5")}))),
    ])
    .await;
    let result = f.generate(&f.options()).await;
    assert!(result.success, "{result:#?}");
    // The reason was quoted.
    f.assert_step_says("tests/retry", "not a file name");
}

#[tokio::test]
async fn answers_that_stay_unusable_end_the_run_as_a_failure_with_the_reason() {
    let f = fixture(vec![
        plan(),
        code(&script(GOOD)),
        Entry::step("tests", Reply::Json(json!({"tests": "test_solution.py"}))),
        Entry::step(
            "tests/retry",
            Reply::Json(json!({"tests": "test_solution.py"})),
        ),
    ])
    .await;
    let result = f.generate(&f.options()).await;
    assert!(!result.success);
    assert!(
        result.reason.contains("not a file name"),
        "{}",
        result.reason
    );
    assert!(f.dir.path().join("run/result.json").exists());
}

#[tokio::test]
async fn a_json_schema_text_spells_the_expected_report_with_its_keys() {
    let script = SCRIPT.replace("BUG", GOOD).replace(
        r#"open("/var/outputs/total", "w") as handle:
        handle.write(str(total))"#,
        r#"open("/var/outputs/summary", "w") as handle:
        handle.write('{"total": ' + str(total) + '}')"#,
    );
    let tests = "import json\n\n\ndef test_summary(run_solution):\n    result = run_solution()\n    assert json.loads(result.outputs['summary']) == {'total': 25.5}\n";
    let f = fixture(vec![plan(), code(&script), test_file(tests)]).await;
    let options = GenerateOptions {
        outputs: vec!["summary:str".parse::<Declaration>().unwrap()],
        schema_text: Some(r#"{"total": <float>, "by_region": {"<region>": <float>}}"#.into()),
        ..f.options()
    };
    let result = f.generate(&options).await;
    assert!(result.success, "{result:#?}");
    f.assert_request_says(
        2,
        r#"expected_summary = {\"total\": ..., \"by_region\": ...}"#,
    );
}

/// `--sample-arg`: a required non-file input given a value on the samples lets the script be
/// tried there (here it crashes, and is fixed before any test), the prompts say the value,
/// and the tests' runs default to it.
#[tokio::test]
async fn a_sample_arg_lets_a_script_with_a_scalar_input_run_on_the_samples() {
    let with_factor = |expression: &str| {
        script(expression)
            .replace(
                r#"parser.add_argument("--sales", required=True)"#,
                "parser.add_argument(\"--sales\", required=True)\n    parser.add_argument(\"--factor\", type=float, required=True)",
            )
            .replace("str(total)", "str(total * args.factor)")
    };
    let crashing = r#"float(row["quantity"]) * float(row["price"])"#;
    let f = fixture(vec![
        plan(),
        code(&with_factor(crashing)),
        edit_fix(r#"row["quantity"]"#, r#"row["qty"]"#),
        test_file(&tests("51.0")),
    ])
    .await;
    let mut options = f.options();
    options.inputs = vec!["factor:float".parse::<Declaration>().unwrap()];
    options.sample_args = [("factor".to_owned(), "2".to_owned())].into();
    options.limits.sample_fixes = 1;
    let result = f.generate(&options).await;
    assert!(result.success, "{result:#?}");
    // Without the value the try would be "not runnable" and ask for no fix.
    assert_eq!(f.steps(), ["plan", "code", "fix_code", "tests"]);
    let code_prompt = f.server.requests()[1].body.to_string();
    assert!(
        code_prompt.contains("With the samples it is `2`."),
        "{code_prompt}"
    );
    // The harness's own contract test ran too (every input has something to default to),
    // beside the two tests of `test_solution.py`.
    assert!(f.dir.path().join("run/test_contract.py").exists());
    assert!(result.iterations[0].passed > 2, "{result:#?}");
}
