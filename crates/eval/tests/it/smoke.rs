//! `run_suite` end to end on two tasks of the real suite, with the scripted LLM server standing
//! in for the model (the loop, the sandbox, pytest and the scoring are real): a right answer
//! scores correct, a wrong one that passes the loop's own tests scores incorrect on the held-out
//! data, a finished eval is not run again, and changed settings are refused.

use std::time::Duration;

use autocoder_agent::ToolProtocol;
use autocoder_eval::{AgentSettings, EvalError, EvalEvent, EvalOptions, Suite, run_suite};
use autocoder_llm::{LlmConfig, ModelCacheMode, ModelSpec};
use autocoder_loop::Prompting;
use autocoder_testkit::{Entry, Reply, Script, ScriptedServer};
use serde_json::json;

use crate::suite;

/// `country-revenue-join` written with an inner join: right on the samples (every customer is
/// known there), wrong on the held-out orders of unknown customers.
const INNER_JOIN: &str = r#"import argparse
import os
from pathlib import Path

import pandas as pd

OUT = Path(os.environ.get("AUTOCODER_OUTPUTS_DIR", "/var/outputs"))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--orders", required=True)
    parser.add_argument("--customers", required=True)
    args = parser.parse_args()
    orders = pd.read_csv(args.orders)
    customers = pd.read_csv(args.customers)
    merged = orders.merge(customers, on="customer_id")
    report = merged.groupby("country").agg(
        customers=("customer_id", "nunique"), revenue=("amount", "sum")
    ).reset_index()
    report["revenue"] = report["revenue"].round(2)
    report.sort_values("revenue", ascending=False).to_csv(OUT / "revenue_by_country.csv", index=False)
    (OUT / "unmatched").write_text(str(len(orders) - len(merged)))


if __name__ == "__main__":
    main()
"#;

const TESTS: &str = r"def test_runs_on_the_samples(run_solution):
    result = run_solution()
    assert result.returncode == 0, result.stderr
";

fn answers(code: &str) -> Vec<Entry> {
    vec![
        Entry::step(
            "plan",
            Reply::Json(json!({"summary": "s", "approach": ["read", "write"], "edge_cases": []})),
        ),
        Entry::step(
            "code",
            Reply::Json(json!({"code": code, "packages": ["pandas"], "system_packages": []})),
        ),
        Entry::step("tests", Reply::Json(json!({"tests": TESTS}))),
    ]
}

fn options(server: &ScriptedServer, out: &std::path::Path) -> EvalOptions {
    let mut llm = LlmConfig::new(ModelSpec::parse("openai/scripted").unwrap());
    llm.api_base = Some(server.base_url());
    EvalOptions {
        llm,
        model: "openai/scripted".into(),
        seeds: vec![7],
        tasks: vec!["sales-by-region".into(), "country-revenue-join".into()],
        max_iterations: 2,
        skip_tests: false,
        token_budget: None,
        task_timeout: Duration::from_secs(600),
        out_dir: out.to_path_buf(),
        sandbox: suite::sandbox(),
        prompting: Prompting::default(),
        candidates: 1,
        sample_fixes: 0,
        sample_rows: 10,
        prompts_dir: None,
        agent: None,
        model_cache: ModelCacheMode::Off,
        model_cache_dir: None,
    }
}

/// [`options`] for `country-revenue-join` alone.
fn join_only(server: &ScriptedServer, out: &std::path::Path) -> EvalOptions {
    EvalOptions {
        tasks: vec!["country-revenue-join".into()],
        ..options(server, out)
    }
}

/// `--skip-tests`: the run asks for a plan and a script only (the server has no tests to give),
/// and the script it wrote is the one scored, on the samples and the held-out data.
#[tokio::test]
async fn skipping_tests_scores_the_first_script_without_writing_tests() {
    let suite = Suite::load(&suite::suite_dir()).unwrap();
    let mut entries = answers(INNER_JOIN);
    entries.retain(|e| e.step.as_deref() != Some("tests"));
    let server = ScriptedServer::start(Script::new(entries)).await.unwrap();
    let out = tempfile::tempdir().unwrap();
    let options = EvalOptions {
        skip_tests: true,
        ..join_only(&server, out.path())
    };

    let report = run_suite(&suite, &options, &|_| {}).await.unwrap();
    let join = &report.runs[0];
    assert_eq!(join.test_runs, 0, "{join:#?}");
    assert_eq!(join.model_calls, 2, "{join:#?}");
    assert_eq!(join.sample_correct(), Some(true), "{join:#?}");
    assert!(!join.heldout_correct(), "{join:#?}");
    let steps: Vec<String> = server
        .requests()
        .iter()
        .filter_map(|r| r.step.clone())
        .collect();
    assert_eq!(steps, ["plan", "code"]);
    let written: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.path().join("eval.json")).unwrap())
            .unwrap();
    assert_eq!(written["settings"]["skip_tests"], true);
}

#[tokio::test]
async fn a_right_script_scores_correct_and_a_wrong_one_incorrect() {
    let suite = Suite::load(&suite::suite_dir()).unwrap();
    let reference =
        std::fs::read_to_string(suite.dir.join("tasks/sales-by-region/reference.py")).unwrap();
    let mut entries = answers(&reference);
    entries.extend(answers(INNER_JOIN));
    let server = ScriptedServer::start(Script::new(entries)).await.unwrap();
    let out = tempfile::tempdir().unwrap();
    let options = options(&server, out.path());

    let report = run_suite(&suite, &options, &|_| {}).await.unwrap();
    assert_eq!(report.runs.len(), 2);
    let sales = report
        .runs
        .iter()
        .find(|r| r.task == "sales-by-region")
        .unwrap();
    assert!(sales.generated, "{sales:#?}");
    assert!(sales.heldout_correct(), "{sales:#?}");
    assert_eq!(sales.heldout_counts(), (2, 2));
    assert_eq!(sales.test_runs, 1);
    assert!(sales.tokens() > 0);
    let join = report
        .runs
        .iter()
        .find(|r| r.task == "country-revenue-join")
        .unwrap();
    assert!(join.generated, "the loop's own weak tests pass: {join:#?}");
    assert_eq!(join.sample_correct(), Some(true), "{join:#?}");
    assert!(!join.heldout_correct(), "{join:#?}");
    let detail = join.cases[1].detail.clone().unwrap_or_default();
    assert!(detail.contains("revenue_by_country.csv"), "{detail}");
    assert_eq!(report.summary["dev"].heldout_correct, 1);
    assert_eq!(report.summary["test"].heldout_correct, 0);
    let written: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.path().join("eval.json")).unwrap())
            .unwrap();
    assert_eq!(written["runs"].as_array().unwrap().len(), 2);

    // Resumed: nothing runs again (the server has no answers left), the report is the same.
    let requests = server.requests().len();
    let kept = std::sync::Mutex::new(0);
    let again = run_suite(&suite, &options, &|e| {
        if matches!(e, EvalEvent::Kept(_)) {
            *kept.lock().unwrap() += 1;
        }
    })
    .await
    .unwrap();
    assert_eq!(server.requests().len(), requests);
    assert_eq!(*kept.lock().unwrap(), 2);
    assert_eq!(again.runs, report.runs);

    // Other settings in the same directory are refused rather than mixed.
    let changed = EvalOptions {
        max_iterations: 5,
        ..options
    };
    let err = run_suite(&suite, &changed, &|_| {}).await.unwrap_err();
    assert!(matches!(err, EvalError::SettingsChanged { .. }), "{err}");
    assert!(err.to_string().contains("max_iterations"), "{err}");
}

/// `--model-cache auto`: a second eval (another `--out`, as a change's other arm) that makes
/// the first one's requests word for word is answered from the cache, not by the model, and
/// scores the same; `off` (the default) asks the model every time.
#[tokio::test]
async fn two_evals_sharing_the_model_cache_ask_the_model_once() {
    let suite = Suite::load(&suite::suite_dir()).unwrap();
    let server = ScriptedServer::start(Script::new(answers(INNER_JOIN)))
        .await
        .unwrap();
    let cache = tempfile::tempdir().unwrap();
    let (before, after) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let cached = |out: &std::path::Path| EvalOptions {
        model_cache: ModelCacheMode::Auto,
        model_cache_dir: Some(cache.path().to_path_buf()),
        ..join_only(&server, out)
    };

    let first = run_suite(&suite, &cached(before.path()), &|_| {})
        .await
        .unwrap();
    let asked = server.requests().len();
    assert_eq!(asked, 3, "plan, code and tests");
    let second = run_suite(&suite, &cached(after.path()), &|_| {})
        .await
        .unwrap();
    assert_eq!(
        server.requests().len(),
        asked,
        "the second eval asked the model"
    );
    assert_eq!(second.runs[0].cases, first.runs[0].cases);
    // What the cache answered cost no call and no token.
    assert_eq!(first.runs[0].model_calls, 3);
    assert_eq!(second.runs[0].model_calls, 0);
    let written: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(after.path().join("eval.json")).unwrap())
            .unwrap();
    assert_eq!(written["settings"]["model_cache"], "auto");

    // Without the cache the same eval asks the model again (whose script has run out).
    let uncached = tempfile::tempdir().unwrap();
    let report = run_suite(&suite, &join_only(&server, uncached.path()), &|_| {})
        .await
        .unwrap();
    assert!(server.requests().len() > asked);
    assert!(!report.runs[0].generated, "{:#?}", report.runs[0]);
}

/// The loop can test a right script and keep a wrong one: here the model's test expects 5
/// unknown-customer orders, the diagnosis blames the (right) reference script and the code fix
/// hard-codes 5. Every tested script is scored, so the report shows that a right one was tried.
#[tokio::test]
async fn a_right_script_the_loop_tried_and_dropped_is_scored() {
    let suite = Suite::load(&suite::suite_dir()).unwrap();
    let reference =
        std::fs::read_to_string(suite.dir.join("tasks/country-revenue-join/reference.py")).unwrap();
    let wrong_test = "def test_unmatched(run_solution):\n    result = run_solution()\n    assert result.outputs[\"unmatched\"] == 5\n";
    let counted = r#"unmatched = int(m["country"].isna().sum())"#;
    let mut entries = answers(&reference);
    entries[2] = Entry::step("tests", Reply::Json(json!({"tests": wrong_test})));
    entries.push(Entry::step(
        "diagnose",
        Reply::Json(json!({"failures": [{
            "test_id": "test_solution.py::test_unmatched",
            "kind": "logic",
            "evidence": "unmatched is 0, the test expects 5",
            "fix": "write 5",
            "packages": [],
        }]})),
    ));
    entries.push(Entry::step(
        "fix_code",
        Reply::Json(json!({
            "edits": [{"find": counted, "replace": "unmatched = 5"}],
            "packages": [],
            "explanation": "five",
        })),
    ));
    let server = ScriptedServer::start(Script::new(entries)).await.unwrap();
    let out = tempfile::tempdir().unwrap();
    let options = join_only(&server, out.path());
    let report = run_suite(&suite, &options, &|_| {}).await.unwrap();
    let run = &report.runs[0];
    assert!(
        run.generated,
        "the test passes once 5 is hard-coded: {run:#?}"
    );
    assert_eq!(run.test_runs, 2, "{run:#?}");
    assert!(!run.heldout_correct(), "{run:#?}");
    let scripts: Vec<&str> = run.tried.iter().map(|t| t.script.as_str()).collect();
    assert_eq!(
        scripts,
        ["iterations/1/solution.py", "iterations/2/solution.py"],
        "{run:#?}"
    );
    assert!(run.tried[0].heldout_correct(), "the reference: {run:#?}");
    assert_eq!(run.tried[1].cases, run.cases, "the kept script: {run:#?}");
    assert!(run.some_script_correct());
    assert_eq!(report.summary["test"].some_script_correct, 1);
    let first = out
        .path()
        .join("runs/country-revenue-join/seed-7/iterations/1/solution.py");
    assert_eq!(std::fs::read_to_string(first).unwrap(), reference);
    // The diagnosis blamed the script for a test the reference fails too.
    let verdicts: Vec<(u32, &str, &str, Option<bool>)> = run
        .verdicts
        .iter()
        .map(|v| {
            (
                v.iteration,
                v.test_id.as_str(),
                v.diagnosed.as_str(),
                v.reference_passed,
            )
        })
        .collect();
    assert_eq!(
        verdicts,
        [(1, "test_solution.py::test_unmatched", "logic", Some(false))],
        "{run:#?}"
    );
    assert_eq!(run.verdict_counts(), (0, 0, 1));
}

/// The harness's test of `sales-by-region`'s declared columns.
const COLUMNS_TEST: &str = "test_contract.py::test_by_region_csv_has_the_columns_the_task_lists";

/// A `sales-by-region` run whose first test run fails three tests and whose diagnosis blames
/// each test: the script writes the units (35 on the samples) as the total and names the region
/// column `area`; `test_total` expects the right total, `test_rounded_total` a wrong one, and the
/// harness's own test the declared columns. The fixes make every test pass at the second run.
fn misdiagnosed_sales(reference: &str) -> Vec<Entry> {
    let revenue = r#"round(float(df["revenue"].sum()), 2)"#;
    let columns = r#"g[["region", "revenue"]]"#;
    assert!(reference.contains(revenue) && reference.contains(columns));
    let renamed = r#"g.rename(columns={"region": "area"})[["area", "revenue"]]"#;
    let wrong = reference
        .replace(revenue, r#"float(df["quantity"].sum())"#)
        .replace(columns, renamed);
    let tests = "import pytest\n\n\ndef test_total(run_solution):\n    assert run_solution().outputs[\"total\"] == pytest.approx(990.39)\n\n\ndef test_rounded_total(run_solution):\n    assert run_solution().outputs[\"total\"] == 990.0\n";
    let mut entries = answers(&wrong);
    entries[2] = Entry::step("tests", Reply::Json(json!({"tests": tests})));
    let blamed = |test: &str| json!({"test_id": test, "kind": "test_error", "evidence": "the total", "fix": "expect what the script wrote", "packages": []});
    let tests_ids = [
        "test_solution.py::test_total",
        "test_solution.py::test_rounded_total",
        COLUMNS_TEST,
    ];
    entries.push(Entry::step(
        "diagnose",
        Reply::Json(json!({"failures": tests_ids.map(blamed)})),
    ));
    let expect_35 = |name: &str| json!({"name": name, "source": format!("def {name}(run_solution):\n    assert run_solution().outputs[\"total\"] == 35.0\n")});
    entries.push(Entry::step(
        "fix_tests",
        Reply::Json(json!({"functions": [expect_35("test_total"), expect_35("test_rounded_total")], "imports": []})),
    ));
    entries.push(Entry::step(
        "fix_code",
        Reply::Json(json!({"edits": [{"find": renamed, "replace": columns}], "packages": [], "explanation": "the declared columns"})),
    ));
    entries
}

/// Each diagnosed failure is run again with the reference solution in the script's place: a
/// test the reference passes was failed by the script, one it fails too is the test's fault,
/// and the summary counts the diagnoses that said so.
#[tokio::test]
async fn diagnoses_are_checked_against_the_reference_solution() {
    let suite = Suite::load(&suite::suite_dir()).unwrap();
    let reference =
        std::fs::read_to_string(suite.dir.join("tasks/sales-by-region/reference.py")).unwrap();
    let server = ScriptedServer::start(Script::new(misdiagnosed_sales(&reference)))
        .await
        .unwrap();
    let out = tempfile::tempdir().unwrap();
    let options = EvalOptions {
        tasks: vec!["sales-by-region".into()],
        ..options(&server, out.path())
    };
    let report = run_suite(&suite, &options, &|_| {}).await.unwrap();
    let run = &report.runs[0];
    assert!(run.generated, "the tests pass at the second run: {run:#?}");
    assert!(!run.heldout_correct(), "{run:#?}");
    // test, diagnosed -> routed, whether the reference passed, diagnosis right, route right
    let mut verdicts: Vec<String> = run
        .verdicts
        .iter()
        .map(|v| {
            format!(
                "{} {}->{} {:?} {:?} {:?}",
                v.test_id,
                v.diagnosed,
                v.routed,
                v.reference_passed,
                v.diagnosis_right(),
                v.route_right()
            )
        })
        .collect();
    verdicts.sort_unstable();
    assert_eq!(
        verdicts,
        [
            // The loop overrules a test error on its own test: the route is right.
            format!("{COLUMNS_TEST} test_error->logic Some(true) Some(false) Some(true)"),
            "test_solution.py::test_rounded_total test_error->test_error Some(false) Some(true) Some(true)".to_owned(),
            "test_solution.py::test_total test_error->test_error Some(true) Some(false) Some(false)".to_owned(),
        ],
        "{run:#?}"
    );
    assert!(run.verdicts.iter().all(|v| v.iteration == 1));
    let dev = &report.summary["dev"];
    assert_eq!(
        (
            dev.verdicts,
            dev.diagnoses_right,
            dev.routes_right,
            dev.tests_at_fault
        ),
        (3, 1, 2, 1)
    );
    let table = autocoder_eval::render_table(&report);
    assert!(
        table.contains(
            "diagnoses right 1/3 (the loop acted right on 2; the test was at fault in 1)"
        ),
        "{table}"
    );
}

/// A generation that ends in an error still reports what it spent: its model calls and tokens
/// come from its journal (they were recorded as 0, which hid the cost of failed runs).
#[tokio::test]
async fn a_run_that_ends_in_an_error_reports_the_calls_it_made() {
    let suite = Suite::load(&suite::suite_dir()).unwrap();
    let mut entries = answers(INNER_JOIN);
    entries.truncate(2);
    entries.push(Entry::step(
        "tests",
        Reply::HttpError {
            status: 400,
            retry_after: None,
            message: "this model's maximum context length is 8192 tokens".into(),
        },
    ));
    let server = ScriptedServer::start(Script::new(entries)).await.unwrap();
    let out = tempfile::tempdir().unwrap();
    let options = join_only(&server, out.path());
    let report = run_suite(&suite, &options, &|_| {}).await.unwrap();
    let run = &report.runs[0];
    assert!(run.reason.starts_with("error:"), "{run:?}");
    assert!(run.reason.contains("maximum context length"), "{run:?}");
    assert_eq!(run.model_calls, 2, "plan and code were answered: {run:?}");
    assert!(run.input_tokens > 0 && run.output_tokens > 0, "{run:?}");
    assert_eq!(run.test_runs, 0);
}

#[tokio::test]
async fn a_second_eval_into_the_same_directory_is_refused_while_the_first_runs() {
    let suite = Suite::load(&suite::suite_dir()).unwrap();
    // The first eval waits inside its first model call until the second has been refused.
    let server = ScriptedServer::start(Script::new(vec![
        Entry::step(
            "plan",
            Reply::Json(json!({"summary": "s", "approach": ["read"], "edge_cases": []})),
        )
        .with_delay_ms(3000),
    ]))
    .await
    .unwrap();
    let out = tempfile::tempdir().unwrap();
    let options = options(&server, out.path());
    let first = run_suite(&suite, &options, &|_| {});
    let second = async {
        while server.requests().is_empty() {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        run_suite(&suite, &options, &|_| {}).await
    };
    let (_, second) = tokio::join!(first, second);
    let err = second.unwrap_err();
    assert!(matches!(err, EvalError::Busy { .. }), "{err}");
    assert!(
        err.to_string()
            .contains("another `autocoder eval` is writing into")
            && err.to_string().contains("--out"),
        "{err}"
    );
    // Once the first has ended, the directory is free again (and resumes its runs).
    let third = run_suite(&suite, &options, &|_| {}).await;
    assert!(!matches!(third, Err(EvalError::Busy { .. })), "{third:?}");
}

/// The agent's answer calling `tool` with `arguments` (native tool calls).
fn call(tool: &str, arguments: serde_json::Value) -> Entry {
    Entry::tool_call("agent", tool, arguments)
}

/// `--agent`: the tool-using agent generates (it writes the reference script and a test, asks
/// for pandas, runs the tests, finishes), and its script is scored on the held-out cases like the pipeline's;
/// the agent's settings are part of the eval's, so a pipeline eval cannot resume into it.
#[tokio::test]
async fn the_agent_generates_and_its_script_is_scored_on_held_out_data() {
    let suite = Suite::load(&suite::suite_dir()).unwrap();
    let reference =
        std::fs::read_to_string(suite.dir.join("tasks/sales-by-region/reference.py")).unwrap();
    let server = ScriptedServer::start(Script::new([
        call(
            "write_file",
            json!({"path": "solution.py", "text": reference}),
        ),
        call(
            "write_file",
            json!({"path": "test_solution.py", "text": TESTS}),
        ),
        call("set_packages", json!({"packages": ["pandas"]})),
        call("run_tests", json!({})),
        call("finish", json!({"summary": "revenue by region"})),
    ]))
    .await
    .unwrap();
    let out = tempfile::tempdir().unwrap();
    let options = EvalOptions {
        tasks: vec!["sales-by-region".into()],
        agent: Some(AgentSettings {
            max_turns: 8,
            protocol: Some(ToolProtocol::Native),
        }),
        ..options(&server, out.path())
    };
    let report = run_suite(&suite, &options, &|_| {}).await.unwrap();
    let run = &report.runs[0];
    assert!(run.generated, "{run:#?}");
    assert!(run.heldout_correct(), "{run:#?}");
    assert_eq!(run.heldout_counts(), (2, 2));
    // `run_tests`, and the run `finish` makes before it accepts.
    assert_eq!(run.test_runs, 2, "{run:#?}");
    assert_eq!(run.model_calls, 5, "{run:#?}");
    assert_eq!(server.requests().len(), 5);
    assert!(
        server.requests().iter().all(|r| r.body["tools"].is_array()),
        "every request offers the agent's tools"
    );
    assert_eq!(report.settings["agent"]["max_turns"], 8);
    assert_eq!(report.settings["agent"]["protocol"], "native");

    let pipeline = EvalOptions {
        agent: None,
        ..options
    };
    let err = run_suite(&suite, &pipeline, &|_| {}).await.unwrap_err();
    assert!(matches!(err, EvalError::SettingsChanged { .. }), "{err}");
    assert!(err.to_string().contains("agent"), "{err}");
}
