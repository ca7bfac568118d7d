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
