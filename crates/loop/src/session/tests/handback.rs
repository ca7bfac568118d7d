//! A failed generation hands back the best script its tests saw, not merely the last.

use super::*;

const OTHER: &str = "def total(rows):\n    return 0\n";

fn contract(outcome: TestOutcome) -> TestResult {
    result(
        "test_contract.py::test_runs_on_the_samples",
        outcome,
        "E   boom",
    )
}

fn model(name: &str, outcome: TestOutcome) -> TestResult {
    result(
        &format!("test_solution.py::{name}"),
        outcome,
        "E   assert 7 == 6",
    )
}

fn test_run(results: Vec<TestResult>) -> TestRun {
    TestRun {
        results,
        output: String::new(),
    }
}

/// A session whose test runs ran `scripts` in order, each with its results.
fn tested(scripts: Vec<(&str, Vec<TestResult>)>) -> Session {
    let mut s = session(Limits::default());
    for (code, results) in scripts {
        s.code = Some(code.to_owned());
        s.runs += 1;
        s.record_tested(&test_run(results));
    }
    s
}

#[test]
fn a_run_that_got_worse_hands_back_the_earlier_script() {
    let mut s = session(Limits {
        max_iterations: 2,
        ..Limits::default()
    });
    up_to_an_escalation(&mut s);
    // Nothing changed, so the loop escalates: the same tests again, then a new script.
    assert!(matches!(s.next_action(), Action::WriteTests { .. }));
    s.apply(Event::TestsWritten {
        tests: TESTS.into(),
        usage: USAGE,
    });
    assert!(matches!(s.next_action(), Action::WriteCode { .. }));
    s.apply(Event::CodeWritten {
        code: OTHER.into(),
        packages: vec!["pandas".into()],
        system_packages: Vec::new(),
        usage: USAGE,
    });
    assert_eq!(s.next_action(), Action::RunTests);
    s.apply(run(vec![
        model("test_total", TestOutcome::Failed),
        model("test_exit", TestOutcome::Failed),
    ]));
    assert!(matches!(s.next_action(), Action::Diagnose { .. }));
    s.apply(diagnosed(FailureKind::Logic, &[]));
    let finish = expect_finish(&mut s);
    assert!(!finish.success);
    assert_eq!(
        s.code(),
        Some(CODE),
        "run 1's script passed a test, run 2's none"
    );
    assert!(
        s.notes()[0].starts_with("code: handed back the script of test run 1"),
        "{:?}",
        s.notes()
    );
    assert!(s.notes()[0].contains("test run 2"), "{:?}", s.notes());
}

#[test]
fn the_contract_test_outranks_the_models_tests() {
    let mut s = tested(vec![
        (
            "a",
            vec![
                contract(TestOutcome::Passed),
                model("t1", TestOutcome::Failed),
                model("t2", TestOutcome::Failed),
            ],
        ),
        (
            "b",
            vec![
                contract(TestOutcome::Failed),
                model("t1", TestOutcome::Passed),
                model("t2", TestOutcome::Passed),
            ],
        ),
    ]);
    s.finish(false, "max_iterations (2) reached".into());
    assert_eq!(s.code(), Some("a"));
    assert!(
        s.notes()[0].contains("broke the contract"),
        "{:?}",
        s.notes()
    );
}

#[test]
fn a_tie_keeps_the_last_script_and_a_success_keeps_its_own() {
    let runs = || {
        vec![
            (
                "a",
                vec![
                    model("t1", TestOutcome::Passed),
                    model("t2", TestOutcome::Failed),
                ],
            ),
            (
                "b",
                vec![
                    model("t1", TestOutcome::Failed),
                    model("t2", TestOutcome::Passed),
                ],
            ),
        ]
    };
    let mut tie = tested(runs());
    tie.finish(false, "max_iterations (2) reached".into());
    assert_eq!(tie.code(), Some("b"));
    assert!(tie.notes().is_empty(), "{:?}", tie.notes());

    let mut better_first = tested(runs());
    better_first.code = Some("c".into());
    better_first.finish(true, "tests skipped on request".into());
    assert_eq!(
        better_first.code(),
        Some("c"),
        "only a failed run is handed back"
    );
}

#[test]
fn an_untested_last_script_gives_way_to_a_tested_one_with_the_same_packages() {
    let mut s = tested(vec![("a", vec![model("t1", TestOutcome::Failed)])]);
    s.code = Some("never tested".into());
    s.finish(false, "the token budget (10) is spent".into());
    assert_eq!(s.code(), Some("a"));
    assert!(s.notes()[0].contains("never tested"), "{:?}", s.notes());

    let mut other_packages = tested(vec![("a", vec![model("t1", TestOutcome::Passed)])]);
    other_packages.code = Some("b".into());
    other_packages.packages.insert("polars".into());
    other_packages.finish(false, "the token budget (10) is spent".into());
    assert_eq!(
        other_packages.code(),
        Some("b"),
        "a script tested in another environment is not handed back"
    );
}
