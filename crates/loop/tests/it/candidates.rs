//! `--candidates K` end to end: the scripted server writes the scripts; the sandbox runs each
//! on the samples and the tests against each group's script for real.

use autocoder_loop::GenerateOptions;
use autocoder_loop::session::Limits;

use crate::generate::{BAD, GOOD, code, diagnosis, fixture, plan, script, test_file, tests};

fn with_candidates(
    options: GenerateOptions,
    candidates: u32,
    max_iterations: u32,
) -> GenerateOptions {
    GenerateOptions {
        limits: Limits {
            candidates,
            max_iterations,
            ..options.limits
        },
        ..options
    }
}

#[tokio::test]
async fn the_script_the_tests_pass_is_kept_among_the_candidates() {
    let f = fixture(vec![
        plan(),
        code(&script(BAD)),
        code(&script(GOOD)),
        code(&script(GOOD)),
        test_file(&tests("25.5")),
    ])
    .await;
    let options = with_candidates(f.options(), 3, 4);
    let result = f.generate(&options).await;
    assert!(result.success, "{result:#?}");
    assert_eq!(result.solution, script(GOOD));
    // One test run: the tests ran against each group's script (the two right ones agree).
    assert_eq!(result.attempts, 1);
    assert_eq!(f.steps(), ["plan", "code", "code", "code", "tests"]);
    let requests = f.server.requests();
    let temperature = |i: usize| requests[i].body["temperature"].as_f64();
    assert_eq!(
        temperature(1),
        None,
        "the first candidate is asked as one script is"
    );
    for i in [2, 3] {
        assert!(
            temperature(i).is_some_and(|t| t >= 0.7),
            "candidate {i}: {:?}",
            requests[i].body
        );
    }
    let run = f.dir.path().join("run");
    for candidate in 1..=3 {
        assert!(
            run.join(format!("candidates/1/{candidate}/solution.py"))
                .is_file()
        );
    }
    for group in 1..=2 {
        assert!(
            run.join(format!("iterations/1/group-{group}/test_output.txt"))
                .is_file()
        );
    }
    // The kept script's test output is the result's.
    assert!(
        result.test_output.contains("passed"),
        "{}",
        result.test_output
    );
}

#[tokio::test]
async fn a_failing_kept_script_is_diagnosed_with_what_the_other_candidates_computed() {
    // The tests expect 26, which neither script computes: the wrong-sum script is kept (the
    // groups tie on tests passed and size; the first is earlier) and the diagnosis sees that
    // the other script computed 25.5, with its code.
    let f = fixture(vec![
        plan(),
        code(&script(BAD)),
        code(&script(GOOD)),
        test_file(&tests("26")),
        diagnosis("test_error", &[]),
    ])
    .await;
    let options = with_candidates(f.options(), 2, 1);
    let result = f.generate(&options).await;
    assert!(!result.success, "{result:#?}");
    assert_eq!(f.steps(), ["plan", "code", "code", "tests", "diagnose"]);
    let diagnose = f.server.requests()[4].body.to_string();
    assert!(
        diagnose.contains("2 scripts were written for this task"),
        "{diagnose}"
    );
    assert!(
        diagnose.contains("total = 6.0"),
        "the tested script's output: {diagnose}"
    );
    assert!(
        diagnose.contains("total = 25.5"),
        "the other script's output: {diagnose}"
    );
    let good = serde_json::to_string(GOOD).unwrap();
    assert!(
        diagnose.contains(good.trim_matches('"')),
        "the other script's code: {diagnose}"
    );
}
