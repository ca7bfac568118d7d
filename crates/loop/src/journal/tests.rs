use std::time::Duration;

use autocoder_llm::{CallKey, CallStore, LlmConfig, ModelSpec};
use autocoder_sandbox::TestReport;
use serde_json::json;

use super::*;
use crate::options::GenerateOptions;
use crate::protocol::Finish;

fn request() -> RequestRecord {
    let options = GenerateOptions {
        prompt: "p".into(),
        ..GenerateOptions::default()
    };
    RequestRecord::new(
        &options,
        &LlmConfig::new(ModelSpec::parse("openai/m").unwrap()),
    )
}

fn finish() -> Line {
    Line::Finish {
        finish: Finish {
            success: true,
            reason: "tests pass".into(),
            error: None,
        },
    }
}

fn report() -> TestReport {
    TestReport {
        tests: Vec::new(),
        collection_errors: Vec::new(),
        exit_code: Some(0),
        timed_out: false,
        memory_exceeded: false,
        stdout: "1 passed".into(),
        stderr: String::new(),
        duration: Duration::from_millis(5),
    }
}

#[test]
fn a_cut_last_line_is_dropped_and_cut_off_the_file() {
    let dir = tempfile::tempdir().unwrap();
    Journal::create(dir.path(), &request()).unwrap();
    let path = dir.path().join(JOURNAL_FILE);
    let whole = std::fs::metadata(&path).unwrap().len();
    let mut text = std::fs::read_to_string(&path).unwrap();
    text.push_str(r#"{"kind":"finish","fin"#);
    std::fs::write(&path, text).unwrap();
    let file = read(dir.path()).unwrap();
    assert!(file.dropped_partial_line);
    assert_eq!(file.valid_len, whole);
    assert!(file.lines.is_empty());
    let journal = Journal::resume(&file).unwrap();
    journal.record(&finish()).unwrap();
    let file = read(dir.path()).unwrap();
    assert!(!file.dropped_partial_line);
    assert!(file.finish().is_some());
}

#[test]
fn another_version_a_bad_line_and_no_journal_are_errors_that_say_so() {
    let dir = tempfile::tempdir().unwrap();
    let err = read(dir.path()).unwrap_err().to_string();
    assert!(err.contains("journal.jsonl does not exist"), "{err}");

    Journal::create(dir.path(), &request()).unwrap();
    let path = dir.path().join(JOURNAL_FILE);
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, text.replace("\"version\":1", "\"version\":2")).unwrap();
    let err = read(dir.path()).unwrap_err().to_string();
    assert!(
        err.contains("version 2") && err.contains("--force"),
        "{err}"
    );

    std::fs::write(&path, format!("{text}[1, 2]\n")).unwrap();
    let err = read(dir.path()).unwrap_err().to_string();
    assert!(err.contains("journal.jsonl:2"), "{err}");

    std::fs::write(&path, "{}\n").unwrap();
    let err = read(dir.path()).unwrap_err().to_string();
    assert!(err.contains("autocoder-journal"), "{err}");
}

#[test]
fn a_resumed_journal_serves_answers_and_runs_and_writes_only_what_is_new() {
    let dir = tempfile::tempdir().unwrap();
    let journal = Journal::create(dir.path(), &request()).unwrap();
    let body = json!({"model": "m"});
    let key = CallKey {
        index: 0,
        step: "plan",
        fingerprint: "f",
        occurrence: 0,
        request: &body,
    };
    let response = json!({"choices": [{"message": {"content": "hi"}}]});
    journal
        .store(
            &key,
            &autocoder_llm::Answered {
                response: &response,
                text: "hi",
                usage: autocoder_llm::Usage::default(),
                latency: Duration::from_millis(7),
                counts: true,
            },
        )
        .unwrap();
    journal.record_tests(1, "files", &report()).unwrap();
    let event = Line::Routes {
        iteration: 1,
        routes: Vec::new(),
    };
    journal.record(&event).unwrap();
    drop(journal);

    let file = read(dir.path()).unwrap();
    assert_eq!((file.model_answers(), file.test_runs()), (1, 1));
    let journal = Journal::resume(&file).unwrap();
    let served = journal.lookup(&key).unwrap();
    assert_eq!(served.response, response);
    assert!(served.counts);
    assert!(journal.lookup(&key).is_none(), "each answer is served once");
    assert_eq!(journal.test_run(1, "files"), Some(report()));
    // The routes line is there already; the second one is new.
    journal.record(&event).unwrap();
    journal.record(&event).unwrap();
    journal.record(&finish()).unwrap();
    let kinds: Vec<&str> = read(dir.path())
        .unwrap()
        .lines
        .iter()
        .map(Line::kind)
        .collect();
    assert_eq!(kinds, ["model", "tests", "routes", "routes", "finish"]);
}

#[test]
fn a_test_run_of_other_files_is_not_served_and_ends_the_replay() {
    let dir = tempfile::tempdir().unwrap();
    let journal = Journal::create(dir.path(), &request()).unwrap();
    journal.record_tests(1, "a", &report()).unwrap();
    journal.record_tests(2, "b", &report()).unwrap();
    drop(journal);
    let journal = Journal::resume(&read(dir.path()).unwrap()).unwrap();
    assert_eq!(journal.test_run(1, "other"), None);
    assert_eq!(
        journal.test_run(2, "b"),
        None,
        "nothing is served after a divergence"
    );
}
