//! `autocoder eval`: bad suites and bad flags are clear errors (exit code 2) before any model
//! call. Scoring itself is tested in `autocoder-eval` against the scripted server.

use crate::autocoder;

fn error_of(args: &[&str]) -> String {
    let out = autocoder(args);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(out.stdout.is_empty(), "stdout is data only");
    stderr
}

#[test]
fn a_suite_without_a_manifest_names_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let suite = dir.path().display().to_string();
    let stderr = error_of(&[
        "eval",
        &suite,
        "--model",
        "openai/x",
        "--api-base",
        "http://127.0.0.1:9",
    ]);
    assert!(stderr.contains("suite.json"), "{stderr}");
}

#[test]
fn a_task_with_an_unknown_field_names_the_file_and_field() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("suite.json"),
        r#"{"tasks": [{"name": "t", "split": "dev"}]}"#,
    )
    .unwrap();
    std::fs::create_dir_all(dir.path().join("tasks/t")).unwrap();
    std::fs::write(
        dir.path().join("tasks/t/task.json"),
        r#"{"prompt": "p", "outputs": ["n:int"], "cases": [], "promt": 1}"#,
    )
    .unwrap();
    let suite = dir.path().display().to_string();
    let stderr = error_of(&[
        "eval",
        &suite,
        "--model",
        "openai/x",
        "--api-base",
        "http://127.0.0.1:9",
    ]);
    assert!(stderr.contains("tasks/t/task.json"), "{stderr}");
    assert!(stderr.contains("promt"), "{stderr}");
}

#[test]
fn an_unknown_task_and_a_single_seed_flag_are_refused() {
    let suite = concat!(env!("CARGO_MANIFEST_DIR"), "/../../evals");
    let base = [
        "eval",
        suite,
        "--model",
        "openai/x",
        "--api-base",
        "http://127.0.0.1:9",
    ];
    let stderr = error_of(&[&base[..], &["--tasks", "no-such-task"]].concat());
    assert!(
        stderr.contains("no task `no-such-task`") && stderr.contains("sales-by-region"),
        "{stderr}"
    );
    let stderr = error_of(&[&base[..], &["--seed", "3"]].concat());
    assert!(stderr.contains("--seeds"), "{stderr}");
}

/// A model server that cannot be reached is not the model's failure: the eval stops with the
/// error and keeps no record, so running it again (once the server is up) runs the task.
#[test]
fn an_unreachable_model_server_stops_the_eval_and_records_nothing() {
    let suite = concat!(env!("CARGO_MANIFEST_DIR"), "/../../evals");
    let out = tempfile::tempdir().unwrap();
    let out_dir = out.path().join("eval");
    let out_arg = out_dir.display().to_string();
    let stderr = error_of(&[
        "eval",
        suite,
        "--tasks",
        "sales-by-region",
        "--model",
        "openai/x",
        "--api-base",
        "http://127.0.0.1:9/v1",
        "--api-key-env",
        "PATH",
        "--out",
        &out_arg,
        "-q",
    ]);
    assert!(stderr.contains("127.0.0.1:9"), "{stderr}");
    let records = out_dir.join("records");
    let kept = std::fs::read_dir(&records).map_or(0, Iterator::count);
    assert_eq!(kept, 0, "a record was kept in {}", records.display());
}

/// An `eval.json` of one test-half run of `task` seed 1, right on `right` of two held-out cases.
fn eval_json(candidates: u32, task: &str, right: usize) -> String {
    let cases: Vec<serde_json::Value> = (0..2)
        .map(|i| serde_json::json!({"name": format!("h{i}"), "correct": i < right, "detail": null}))
        .collect();
    serde_json::json!({
        "format_version": 1,
        "settings": {"candidates": candidates},
        "runs": [{
            "task": task, "split": "test", "seed": 1, "generated": right == 2,
            "reason": "", "timed_out": false, "test_runs": 2, "model_calls": 7,
            "input_tokens": 4000, "output_tokens": 1000, "cached_tokens": 3000,
            "seconds": 250.0, "cases": cases,
        }],
        "summary": {},
    })
    .to_string()
}

#[test]
fn eval_diff_pairs_two_evals_by_task_and_seed() {
    let dir = tempfile::tempdir().unwrap();
    let before = dir.path().join("before");
    std::fs::create_dir_all(&before).unwrap();
    std::fs::write(before.join("eval.json"), eval_json(1, "grades", 1)).unwrap();
    let after = dir.path().join("after.json");
    std::fs::write(&after, eval_json(3, "grades", 2)).unwrap();
    let out = autocoder(&[
        "eval-diff",
        &before.display().to_string(),
        &after.display().to_string(),
    ]);
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{table}");
    assert!(table.contains("grades (test)"), "{table}");
    assert!(table.contains("wrong 1/2, tests fail"), "{table}");
    assert!(table.contains("right 2/2, tests pass"), "{table}");
    assert!(table.contains("right after only: grades seed 1"), "{table}");
    assert!(table.contains("setting candidates: 1 -> 3"), "{table}");
    assert!(table.contains("75.0% cached"), "{table}");
}

#[test]
fn eval_diff_of_a_directory_without_a_report_says_what_to_give() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().display().to_string();
    let stderr = error_of(&["eval-diff", &empty, &empty]);
    assert!(stderr.contains("eval.json"), "{stderr}");
    assert!(stderr.contains("--out"), "{stderr}");
    let bad = dir.path().join("eval.json");
    std::fs::write(&bad, "{\"runs\": 3}").unwrap();
    let stderr = error_of(&["eval-diff", &empty, &empty]);
    assert!(stderr.contains("is not an eval report"), "{stderr}");
}
