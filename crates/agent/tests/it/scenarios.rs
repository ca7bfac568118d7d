//! The scenarios of the agent issue, each in both tool protocols.

use serde_json::json;

use crate::{Wire, act, escaped, fixture, write};

const BUGGY: &str = r#"import argparse
import csv


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--sales", required=True)
    args = parser.parse_args()
    with open(args.sales, newline="") as handle:
        rows = list(csv.DictReader(handle))
    total = sum(float(r["qty"]) for r in rows)
    with open("/var/outputs/total", "w") as handle:
        handle.write(str(total))


if __name__ == "__main__":
    main()
"#;

const TESTS: &str = r#"import pytest


def test_total(run_solution):
    result = run_solution({})
    assert result.returncode == 0, result.stderr
    assert result.outputs["total"] == pytest.approx(3 * 2.5 + 2 * 4.0)
"#;

const WRONG_LINE: &str = r#"    total = sum(float(r["qty"]) for r in rows)"#;
const RIGHT_LINE: &str = r#"    total = sum(float(r["qty"]) * float(r["price"]) for r in rows)"#;

/// The answers writing the buggy script and its tests.
fn script_and_tests(wire: Wire) -> Vec<autocoder_testkit::Entry> {
    vec![
        write(wire, "solution.py", BUGGY),
        write(wire, "test_solution.py", TESTS),
    ]
}

async fn writes_tests_reads_a_failure_fixes_and_passes(wire: Wire) {
    fix_in(wire, autocoder_sandbox::Backend::Bwrap).await;
}

async fn fix_in(wire: Wire, backend: autocoder_sandbox::Backend) {
    let f = fixture(
        wire,
        [
            vec![act(wire, "list_files", json!({"path": "."}))],
            script_and_tests(wire),
            vec![
                act(wire, "run_tests", json!({})),
                act(
                    wire,
                    "edit_file",
                    json!({"path": "solution.py", "replace": WRONG_LINE, "with": RIGHT_LINE}),
                ),
                act(wire, "run_tests", json!({})),
                act(
                    wire,
                    "shell",
                    json!({"command": "wc -l solution.py > lines.txt && cat lines.txt"}),
                ),
                act(wire, "finish", json!({"summary": "sums qty * price"})),
            ],
        ]
        .concat(),
    )
    .await;
    let mut options = f.options(20);
    options.generate.sandbox.backend = backend;
    let result = f.run(&options).await;
    assert!(result.success, "{result:#?}");
    assert_eq!(result.environment.backend, backend.name());
    assert!(result.solution.contains(RIGHT_LINE));
    assert_eq!(result.tests, TESTS);
    // The task names the sample where the tools find it, not where the sandbox mounts it.
    let task = f.request(0);
    assert!(task.contains("the sample is `samples/sales.csv`"), "{task}");
    assert!(!task.contains("/var/inputs"), "{task}");
    // The listing showed the sample; the failing run's report reached the next prompt.
    assert!(
        f.request(1).contains("samples/sales.csv"),
        "{}",
        f.request(1)
    );
    let after_failure = f.request(4);
    assert!(
        after_failure.contains("2 passed, 1 failed"),
        "{after_failure}"
    );
    assert!(
        after_failure.contains("FAILED test_solution.py::test_total"),
        "{after_failure}"
    );
    assert!(
        after_failure.contains("5.0"),
        "the failure shows the wrong total: {after_failure}"
    );
    let calls = result.tool_calls.as_ref().unwrap();
    let json_protocol = matches!(wire, Wire::Json | Wire::AnthropicJson);
    let protocol = if json_protocol { "json" } else { "native" };
    assert_eq!(calls.protocol, protocol);
    assert_eq!(calls.turns, 8);
    assert_eq!(calls.counts["run_tests"], 2);
    assert_eq!(calls.counts["write_file"], 2);
    assert_eq!(calls.counts["edit_file"], 1);
    assert!(calls.denials.is_empty());
    if json_protocol {
        assert_eq!(result.agent_plan.as_deref(), Some("call list_files"));
    }
    // Finish ran the tests once more: three runs in all.
    assert_eq!(result.attempts, 3);
    // The run directory is the pipeline's: `autocoder run` reads these.
    let run = f.run_dir();
    assert_eq!(
        std::fs::read_to_string(run.join("solution.py")).unwrap(),
        result.solution
    );
    assert!(run.join("conftest.py").is_file());
    assert!(run.join("test_contract.py").is_file());
    assert!(run.join("work/samples/sales.csv").is_file());
    let read = autocoder_loop::rundir::RunDir::open(&run)
        .read_result()
        .unwrap();
    assert_eq!(read.tool_calls, result.tool_calls);
    // Every tool call and its result is in the conversation log.
    let records = f.tool_records();
    assert_eq!(records.len(), 8);
    assert_eq!(records[3]["tool"], "run_tests");
    // The shell command ran in the sandbox, writing into the workspace.
    assert_eq!(records[6]["outcome"], "ok", "{}", records[6]);
    assert!(
        records[6]["result"]
            .as_str()
            .unwrap()
            .contains("solution.py")
    );
    assert!(run.join("work/lines.txt").is_file());
    assert!(records[3]["result"].as_str().unwrap().contains("1 failed"));
    assert_eq!(f.server.remaining().len(), 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn fixes_a_failing_test_openai_native() {
    writes_tests_reads_a_failure_fixes_and_passes(Wire::OpenAiNative).await;
}

/// The same in the Docker sandbox (fails without a Docker engine, like the sandbox's Docker
/// tests; skip with `-- --skip docker`).
#[tokio::test(flavor = "multi_thread")]
async fn docker_fixes_a_failing_test() {
    fix_in(Wire::OpenAiNative, autocoder_sandbox::Backend::Docker).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn fixes_a_failing_test_anthropic_native() {
    writes_tests_reads_a_failure_fixes_and_passes(Wire::AnthropicNative).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn fixes_a_failing_test_json_protocol() {
    writes_tests_reads_a_failure_fixes_and_passes(Wire::Json).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn fixes_a_failing_test_json_protocol_anthropic() {
    writes_tests_reads_a_failure_fixes_and_passes(Wire::AnthropicJson).await;
}

/// The buggy script's column read under another name, inside a `try` that stops with the
/// error's message (as the skeleton's `main` does).
const CATCHING: &str = r#"import argparse
import csv
import sys


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--sales", required=True)
    args = parser.parse_args()
    try:
        with open(args.sales, newline="") as handle:
            rows = list(csv.DictReader(handle))
        total = sum(float(r["quantity"]) * float(r["price"]) for r in rows)
    except (OSError, KeyError) as err:
        sys.exit(f"error: {err}")
    with open("/var/outputs/total", "w") as handle:
        handle.write(str(total))


if __name__ == "__main__":
    main()
"#;

/// A script that catches an exception and stops with its message shows the agent, in the test
/// run's report, the line that raised it; the run directory's harness runs the script as the
/// user does.
#[tokio::test(flavor = "multi_thread")]
async fn a_caught_exception_s_line_reaches_the_agent() {
    let wire = Wire::OpenAiNative;
    let f = fixture(
        wire,
        vec![
            write(wire, "solution.py", CATCHING),
            write(wire, "test_solution.py", TESTS),
            act(wire, "run_tests", json!({})),
            act(
                wire,
                "edit_file",
                json!({"path": "solution.py", "replace": "r[\"quantity\"]", "with": "r[\"qty\"]"}),
            ),
            act(wire, "run_tests", json!({})),
            act(wire, "finish", json!({"summary": "the column is qty"})),
        ],
    )
    .await;
    let result = f.run(&f.options(20)).await;
    assert!(result.success, "{result:#?}");
    let after_failure = f.request(3);
    assert!(
        after_failure.contains("error: 'quantity'"),
        "{after_failure}"
    );
    assert!(
        after_failure.contains("line 13, in main"),
        "the report lacks the line that raised: {after_failure}"
    );
    assert!(
        after_failure.contains("KeyError: 'quantity'"),
        "{after_failure}"
    );
    let conftest = std::fs::read_to_string(f.run_dir().join("conftest.py")).unwrap();
    assert!(!conftest.contains("_autocoder_where"), "{conftest}");
    assert_eq!(f.server.remaining().len(), 0);
}

/// `run_script` shows what `python solution.py` prints, and, for a script that stops with a
/// message while it handles an exception, the line that raised it; the runner it starts the
/// script under never shows.
#[tokio::test(flavor = "multi_thread")]
async fn run_script_shows_a_caught_exception_s_line() {
    let wire = Wire::Json;
    let uncaught = CATCHING.replace("    try:\n", "    if True:\n").replace(
        "    except (OSError, KeyError) as err:\n        sys.exit(f\"error: {err}\")\n",
        "",
    );
    let f = fixture(
        wire,
        vec![
            write(wire, "solution.py", CATCHING),
            act(wire, "run_script", json!({})),
            write(wire, "solution.py", uncaught),
            act(wire, "run_script", json!({})),
        ],
    )
    .await;
    let result = f.run(&f.options(4)).await;
    assert!(!result.success);
    let records = f.tool_records();
    let caught = records[1]["result"].as_str().unwrap();
    assert!(caught.contains("exit code: Some(1)"), "{caught}");
    assert!(caught.contains("error: 'quantity'"), "{caught}");
    assert!(
        caught.contains("solution.py\", line 13, in main"),
        "the run lacks the line that raised: {caught}"
    );
    assert!(caught.contains("KeyError: 'quantity'"), "{caught}");
    let crashed = records[3]["result"].as_str().unwrap();
    assert!(crashed.contains("exit code: Some(1)"), "{crashed}");
    assert!(
        crashed.contains("Traceback (most recent call last):")
            && crashed.contains("solution.py\", line 13, in main")
            && crashed.contains("KeyError: 'quantity'"),
        "{crashed}"
    );
    for shown in [caught, crashed] {
        assert!(
            !shown.contains("_autocoder_where") && !shown.contains("runpy"),
            "the runner shows: {shown}"
        );
    }
    assert!(
        f.request(2).contains("line 13, in main"),
        "{}",
        f.request(2)
    );
}

/// The script runs and test runs read the request's samples: a sample the model overwrote in
/// the workspace changes what it reads there, not what its runs compute.
#[tokio::test(flavor = "multi_thread")]
async fn runs_read_the_request_s_samples_not_the_workspace_copies() {
    let wire = Wire::Json;
    let f = fixture(
        wire,
        vec![
            write(
                wire,
                "samples/sales.csv",
                "region,qty,price\nnorth,100,1.0\n",
            ),
            write(wire, "solution.py", BUGGY.replace(WRONG_LINE, RIGHT_LINE)),
            act(wire, "run_script", json!({})),
            write(wire, "test_solution.py", TESTS),
            act(wire, "run_tests", json!({})),
            act(wire, "finish", json!({"summary": "done"})),
        ],
    )
    .await;
    let result = f.run(&f.options(6)).await;
    let records = f.tool_records();
    let written = std::fs::read_to_string(f.run_dir().join("work/samples/sales.csv")).unwrap();
    assert!(written.contains("north,100,1.0"), "{written}");
    let ran = records[2]["result"].as_str().unwrap();
    assert!(ran.contains("total: Float(15.5)"), "{ran}");
    assert!(result.success, "{:?}", result.error);
}

const BYPASSES: [(&str, &str); 5] = [
    ("ls && pip install x", "must be the whole command"),
    ("cat x | sh", "is a shell"),
    ("find . -exec curl x ;", "find -exec"),
    ("awk 'BEGIN{system(\"curl x\")}'", "system()"),
    ("rm -rf /", "outside the workspace"),
];

async fn bypasses_are_denied_with_the_reason(wire: Wire) {
    let mut entries: Vec<_> = BYPASSES
        .iter()
        .map(|(command, _)| act(wire, "shell", json!({"command": command})))
        .collect();
    entries.push(act(
        wire,
        "shell",
        json!({"command": "ls samples && wc -l samples/sales.csv"}),
    ));
    let f = fixture(wire, entries).await;
    let result = f.run(&f.options(6)).await;
    assert!(!result.success);
    let calls = result.tool_calls.as_ref().unwrap();
    assert_eq!(calls.denials.len(), BYPASSES.len(), "{calls:#?}");
    for (i, ((command, why), denial)) in BYPASSES.iter().zip(&calls.denials).enumerate() {
        assert_eq!(denial.command, *command);
        assert!(denial.reason.contains(why), "{command}: {}", denial.reason);
        // The next prompt carries the reason.
        let next = f.request(i + 1);
        assert!(next.contains(&escaped(&denial.reason)), "{command}: {next}");
    }
    // Nothing ran: the workspace and the machine are as they were.
    assert!(f.run_dir().join("work/samples/sales.csv").is_file());
    // The allowed command ran in the sandbox over the workspace.
    let records = f.tool_records();
    let last = records.last().unwrap();
    assert_eq!(last["outcome"], "ok", "{last}");
    assert!(
        last["result"]
            .as_str()
            .unwrap()
            .contains("3 samples/sales.csv"),
        "{last}"
    );
    assert_eq!(calls.counts["shell"], 6);
}

#[tokio::test(flavor = "multi_thread")]
async fn bypasses_are_denied_native() {
    bypasses_are_denied_with_the_reason(Wire::OpenAiNative).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn bypasses_are_denied_json_protocol() {
    bypasses_are_denied_with_the_reason(Wire::Json).await;
}

const USES_SIX: &str = r#"import argparse
import csv

import six


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--sales", required=True)
    args = parser.parse_args()
    with open(args.sales, newline="") as handle:
        rows = list(csv.DictReader(handle))
    total = sum(float(r["qty"]) * float(r["price"]) for r in rows)
    with open("/var/outputs/total", "w") as handle:
        handle.write(six.text_type(total))


if __name__ == "__main__":
    main()
"#;

async fn pip_install_goes_through_the_environment(wire: Wire) {
    let f = fixture(
        wire,
        vec![
            write(wire, "solution.py", USES_SIX),
            act(wire, "run_script", json!({})),
            act(wire, "shell", json!({"command": "pip install six"})),
            act(wire, "run_script", json!({})),
            write(wire, "test_solution.py", TESTS),
            act(wire, "shell", json!({"command": "pytest -q"})),
            act(wire, "finish", json!({"summary": "done"})),
        ],
    )
    .await;
    let result = f.run(&f.options(10)).await;
    assert!(result.success, "{result:#?}");
    // Without the package the script fails; the model saw that.
    assert!(f.request(2).contains("No module named"), "{}", f.request(2));
    // `pip install six` became set_packages, and the environment has it.
    let calls = result.tool_calls.as_ref().unwrap();
    assert_eq!(calls.interceptions.len(), 2, "{calls:#?}");
    assert_eq!(calls.interceptions[0].command, "pip install six");
    assert_eq!(calls.interceptions[0].became, "set_packages pip six");
    assert_eq!(calls.interceptions[1].became, "run_tests -q");
    assert!(
        f.request(3).contains("environment ready"),
        "{}",
        f.request(3)
    );
    assert!(
        f.request(4).contains("total: Float(15.5)"),
        "{}",
        f.request(4)
    );
    assert_eq!(result.packages, ["six"]);
    assert!(
        result
            .environment
            .resolved
            .iter()
            .any(|(name, _)| name == "six")
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn pip_install_is_intercepted_native() {
    pip_install_goes_through_the_environment(Wire::OpenAiNative).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn pip_install_is_intercepted_json_protocol() {
    pip_install_goes_through_the_environment(Wire::Json).await;
}

async fn writes_outside_the_workspace_are_refused(wire: Wire) {
    let f = fixture(
        wire,
        vec![
            write(wire, "../escaped.py", "x"),
            write(wire, "/tmp/escaped.py", "x"),
            write(wire, "link/escaped.py", "x"),
            act(wire, "read_file", json!({"path": "link/secret.txt"})),
            act(
                wire,
                "edit_file",
                json!({"path": "samples/../../result.json", "replace": "a", "with": "b"}),
            ),
        ],
    )
    .await;
    // A link into another directory, as sandboxed code could have left in the workspace.
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret.txt"), "secret").unwrap();
    std::fs::create_dir_all(f.run_dir().join("work")).unwrap();
    std::os::unix::fs::symlink(outside.path(), f.run_dir().join("work/link")).unwrap();
    let result = f.run(&f.options(5)).await;
    assert!(!result.success);
    let refused = &result.tool_calls.as_ref().unwrap().refused_paths;
    assert_eq!(refused.len(), 5, "{refused:#?}");
    assert!(
        refused[0].reason.contains("leaves the workspace"),
        "{refused:#?}"
    );
    assert!(refused[1].reason.contains("absolute path"), "{refused:#?}");
    assert!(refused[2].reason.contains("symbolic link"), "{refused:#?}");
    assert!(
        refused[3].reason.contains("outside the workspace"),
        "{refused:#?}"
    );
    assert!(!f.run_dir().join("escaped.py").exists());
    assert!(!std::path::Path::new("/tmp/escaped.py").exists());
    assert!(!outside.path().join("escaped.py").exists());
    // The refusal reached the model, and the secret did not.
    assert!(f.request(1).contains("refused"), "{}", f.request(1));
    assert!(!f.request(4).contains("\"secret\""));
}

#[tokio::test(flavor = "multi_thread")]
async fn writes_outside_are_refused_native() {
    writes_outside_the_workspace_are_refused(Wire::OpenAiNative).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn writes_outside_are_refused_json_protocol() {
    writes_outside_the_workspace_are_refused(Wire::Json).await;
}

async fn loops_until_max_turns(wire: Wire) {
    let entries = (0..10)
        .map(|_| act(wire, "list_files", json!({})))
        .collect();
    let f = fixture(wire, entries).await;
    let result = f.run(&f.options(3)).await;
    assert!(!result.success);
    assert_eq!(result.reason, "reached --max-turns (3) without finishing");
    let error = result.error.as_deref().unwrap();
    assert!(error.contains("all 3 turns"), "{error}");
    assert!(error.contains("no test run happened"), "{error}");
    assert_eq!(f.server.requests().len(), 3);
    assert_eq!(result.tool_calls.as_ref().unwrap().turns, 3);
    // Nothing was written: the script is the skeleton the workspace started with (the
    // scripted model gets the `guarded` profile, which asks for one).
    assert!(
        result.solution.contains("def compute(sales, outputs_dir):")
            && result.solution.contains("...  # the task")
            && result
                .solution
                .contains("parser.add_argument(\"--outputs-dir\""),
        "{}",
        result.solution
    );
    assert!(
        f.request(0)
            .contains("already holds a skeleton of the script"),
        "the task says so"
    );
}

/// A capable model's profile asks for no skeleton: the workspace starts with the samples only.
#[tokio::test(flavor = "multi_thread")]
async fn a_capable_model_starts_without_a_skeleton() {
    let wire = Wire::Json;
    let f = fixture(wire, vec![act(wire, "list_files", json!({}))]).await;
    let mut options = f.options(1);
    options.generate.prompting.model_profile = Some(autocoder_loop::ProfileName::Capable);
    let result = f.run(&options).await;
    assert!(!result.success);
    assert!(result.solution.is_empty(), "{}", result.solution);
    assert!(!f.request(0).contains("skeleton"));
    let listed = f.tool_records()[0]["result"].as_str().unwrap().to_owned();
    assert!(!listed.contains("solution.py"), "{listed}");
}

#[tokio::test(flavor = "multi_thread")]
async fn stops_at_max_turns_native() {
    loops_until_max_turns(Wire::OpenAiNative).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn stops_at_max_turns_json_protocol() {
    loops_until_max_turns(Wire::Json).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn old_turns_are_dropped_to_fit_a_small_context_window() {
    let wire = Wire::Json;
    let big = "x = 1\n".repeat(400);
    let mut entries = vec![write(wire, "big.py", big)];
    entries.extend((0..6).map(|_| act(wire, "read_file", json!({"path": "big.py"}))));
    let f = fixture(wire, entries).await;
    let mut options = f.options(7);
    options.context_tokens = 3_000;
    options.tool_output_chars = 1_000;
    let result = f.run(&options).await;
    assert_eq!(result.tool_calls.as_ref().unwrap().turns, 7);
    let requests = f.server.requests();
    // Each tool result was cut to its bound.
    let second = f.request(2);
    assert!(second.contains("characters cut"), "{second}");
    // Later prompts stay inside the window: the oldest turns gave way to one-line notes.
    let last = f.request(requests.len() - 1);
    assert!(last.contains("Earlier turns were dropped"), "{last}");
    assert!(last.contains("turn 1: write_file"), "{last}");
    let messages = requests.last().unwrap().body["messages"]
        .as_array()
        .unwrap()
        .clone();
    let all_turns = 2 + 2 * 6;
    assert!(messages.len() < all_turns, "{} messages", messages.len());
    let sizes: Vec<usize> = messages
        .iter()
        .map(|m| m["content"].as_str().unwrap_or_default().len())
        .collect();
    let chars: usize = sizes.iter().sum();
    // The system prompt and the task take most of this small window: the newest turn stays.
    assert!(chars / 3 < 3_000, "{chars} characters: {sizes:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_token_budget_stops_the_run() {
    let wire = Wire::OpenAiNative;
    let entries = (0..5)
        .map(|_| act(wire, "list_files", json!({})).with_usage(400, 100))
        .collect();
    let f = fixture(wire, entries).await;
    let mut options = f.options(10);
    options.generate.limits.token_budget = Some(1_200);
    let result = f.run(&options).await;
    assert!(!result.success);
    assert_eq!(result.reason, "token budget exhausted");
    assert_eq!(f.server.requests().len(), 3);
    assert_eq!(
        result.tokens.input_tokens + result.tokens.output_tokens,
        1_500
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_plan_in_words_is_recorded_and_the_model_is_asked_for_a_tool() {
    let wire = Wire::OpenAiNative;
    let f = fixture(
        wire,
        vec![
            autocoder_testkit::Entry::step(
                "agent",
                autocoder_testkit::Reply::Text("Plan: read the sample, write the script.".into()),
            ),
            act(wire, "list_files", json!({})),
        ],
    )
    .await;
    let result = f.run(&f.options(2)).await;
    assert_eq!(
        result.agent_plan.as_deref(),
        Some("Plan: read the sample, write the script.")
    );
    assert!(
        f.request(1).contains("Continue by calling a tool"),
        "{}",
        f.request(1)
    );
    assert_eq!(result.tool_calls.as_ref().unwrap().counts["list_files"], 1);
}

/// `run_tests` with arguments that select no test says so, instead of asking for tests that
/// are there (the local model copied `["-k", "name"]` from the tool's description every time).
#[tokio::test(flavor = "multi_thread")]
async fn arguments_that_select_no_test_are_named() {
    let wire = Wire::Json;
    let f = fixture(
        wire,
        [
            script_and_tests(wire),
            vec![
                act(wire, "run_tests", json!({"args": ["-k", "name"]})),
                act(
                    wire,
                    "run_tests",
                    json!({"args": ["--sales", "samples/sales.csv"]}),
                ),
            ],
        ]
        .concat(),
    )
    .await;
    let result = f.run(&f.options(4)).await;
    assert!(!result.success);
    let ran = f.tool_records()[2]["result"].as_str().unwrap().to_owned();
    assert!(
        ran.contains(r#"no test ran: the arguments ["-k", "name"] selected none (run_tests without arguments runs them all)"#),
        "{ran}"
    );
    // The script's arguments given to pytest: a usage error, named as such.
    let ran = f.tool_records()[3]["result"].as_str().unwrap().to_owned();
    assert!(
        ran.contains(r#"pytest refused the arguments ["--sales", "samples/sales.csv"]: they go to pytest, not to the script"#)
            && ran.contains("pytest did not run (exit code 4)"),
        "{ran}"
    );
}

/// The same call twice in a row is not run again; the model is told the step the work is at
/// (here: the tests are missing).
#[tokio::test(flavor = "multi_thread")]
async fn a_call_repeated_word_for_word_is_not_run_again() {
    for wire in [Wire::Json, Wire::OpenAiNative] {
        // Each of the two writes made twice in a row.
        let answers = script_and_tests(wire)
            .into_iter()
            .flat_map(|answer| [answer.clone(), answer])
            .collect();
        let f = fixture(wire, answers).await;
        let result = f.run(&f.options(4)).await;
        assert!(!result.success);
        let records = f.tool_records();
        assert_eq!(records[0]["outcome"], "ok");
        assert_eq!(records[1]["outcome"], "repeated");
        let note = records[1]["result"].as_str().unwrap();
        assert!(
            note.contains("the same call as turn 1")
                && note.contains("Next: write its pytest tests to `test_solution.py`"),
            "{note}"
        );
        let note = records[3]["result"].as_str().unwrap();
        assert!(
            note.contains("the same call as turn 3")
                && note.contains("Next: run the tests with `run_tests`"),
            "{note}"
        );
    }
}

/// A refused call repeated: the note says again why it was refused.
#[tokio::test(flavor = "multi_thread")]
async fn a_refused_call_repeated_is_refused_again_with_the_reason() {
    let wire = Wire::Json;
    let refused = || write(wire, "/var/outputs/test_solution.py", TESTS);
    let f = fixture(wire, vec![refused(), refused()]).await;
    let result = f.run(&f.options(2)).await;
    assert!(!result.success);
    let records = f.tool_records();
    assert_eq!(records[0]["outcome"], "refused");
    assert_eq!(records[1]["outcome"], "repeated");
    let note = records[1]["result"].as_str().unwrap();
    assert!(
        note.contains(
            "It did not happen then: refused: /var/outputs/test_solution.py is an absolute path"
        ) && note.contains("`test_solution.py`, not `/var/outputs/test_solution.py`"),
        "{note}"
    );
}

/// The buggy script's rows kept from `--min_qty` on, and its total right.
fn filtered() -> String {
    BUGGY
        .replace(
            "    args = parser.parse_args()\n",
            "    parser.add_argument(\"--min_qty\", type=int, required=True)\n    args = parser.parse_args()\n",
        )
        .replace(
            "rows = list(csv.DictReader(handle))",
            "rows = [r for r in csv.DictReader(handle) if int(r[\"qty\"]) >= args.min_qty]",
        )
        .replace(WRONG_LINE, RIGHT_LINE)
}

/// A required non-file input with a `--sample-arg` value: the agent's script runs on the samples
/// get it, and so do the tests' runs and the harness's contract test.
#[tokio::test(flavor = "multi_thread")]
async fn a_sample_arg_reaches_the_agents_runs() {
    let wire = Wire::Json;
    let f = fixture(
        wire,
        vec![
            write(wire, "solution.py", filtered()),
            act(wire, "run_script", json!({"args": []})),
            write(
                wire,
                "test_solution.py",
                TESTS.replace("3 * 2.5 + 2 * 4.0", "3 * 2.5"),
            ),
            act(wire, "run_tests", json!({})),
            act(wire, "finish", json!({"summary": "the rows kept"})),
        ],
    )
    .await;
    let mut options = f.options(5);
    options.generate.inputs.push("min_qty:int".parse().unwrap());
    options
        .generate
        .sample_args
        .insert("min_qty".into(), "3".into());
    let result = f.run(&options).await;
    let ran = f.tool_records()[1]["result"].as_str().unwrap().to_owned();
    assert!(
        ran.contains("exit code: Some(0)") && ran.contains("7.5"),
        "{ran}"
    );
    assert!(result.success, "{:?}", result.error);
    // The harness's contract test is written only when every input has a value on the
    // samples, and it passed (the run succeeded); the tests' runs default to the value.
    assert!(f.run_dir().join("test_contract.py").is_file());
    let conftest = std::fs::read_to_string(f.run_dir().join("conftest.py")).unwrap();
    assert!(conftest.contains(r#""min_qty": "3""#), "{conftest}");
}

/// A `--sample-arg` of the wrong type is refused before any model call.
#[tokio::test(flavor = "multi_thread")]
async fn a_bad_sample_arg_is_refused_before_the_agent_starts() {
    let wire = Wire::Json;
    let f = fixture(wire, vec![act(wire, "list_files", json!({}))]).await;
    let mut options = f.options(1);
    options.generate.inputs.push("min_qty:int".parse().unwrap());
    options
        .generate
        .sample_args
        .insert("min_qty".into(), "three".into());
    let err = autocoder_agent::generate_agent(&options, &f.client(), &|_| {})
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("min_qty") && err.contains("three"), "{err}");
    assert!(f.server.requests().is_empty());
}
