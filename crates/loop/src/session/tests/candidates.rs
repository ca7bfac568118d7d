//! `--candidates K`: several scripts per plan, grouped by what they computed on the samples,
//! the one passing the most tests kept, and the other groups shown to the diagnosis.

use super::*;
use crate::protocol::{Candidate, CandidateOutput};

fn candidate(code: &str, packages: &[&str]) -> Candidate {
    Candidate {
        code: code.to_owned(),
        packages: packages.iter().map(|p| (*p).to_owned()).collect(),
        system_packages: Vec::new(),
    }
}

fn output(digest: &str) -> CandidateOutput {
    CandidateOutput {
        ok: true,
        digest: digest.to_owned(),
        summary: format!("total = {digest}"),
        not_runnable: false,
        cells: Vec::new(),
        failed_in: None,
    }
}

/// A candidate that wrote `out.csv` with these lines.
fn wrote(digest: &str, lines: &[&str]) -> CandidateOutput {
    CandidateOutput {
        cells: crate::agreement::cells("out.csv", &lines.join("\n")),
        ..output(digest)
    }
}

fn crashed() -> CandidateOutput {
    CandidateOutput {
        ok: false,
        digest: String::new(),
        summary: "exit 1: ZeroDivisionError".to_owned(),
        not_runnable: false,
        cells: Vec::new(),
        failed_in: None,
    }
}

fn not_runnable() -> CandidateOutput {
    CandidateOutput {
        ok: false,
        digest: String::new(),
        summary: "not run: input `tz` has no sample".to_owned(),
        not_runnable: true,
        cells: Vec::new(),
        failed_in: None,
    }
}

fn limits(candidates: u32) -> Limits {
    Limits {
        candidates,
        ..Limits::default()
    }
}

/// Plans and writes `scripts` as candidates; returns at the environment's preparation.
fn up_to_candidates(s: &mut Session, scripts: Vec<Candidate>) -> Action {
    assert_eq!(s.next_action(), Action::Plan);
    s.apply(Event::Planned {
        plan: Plan::default(),
        usage: USAGE,
    });
    let count = u32::try_from(scripts.len()).unwrap();
    assert_eq!(
        s.next_action(),
        Action::WriteCandidates {
            notes: Vec::new(),
            count
        }
    );
    s.apply(Event::CandidatesWritten {
        candidates: scripts,
        usage: USAGE,
    });
    s.next_action()
}

/// Builds the environment and runs the candidates on the samples with these outcomes.
fn ran_on_the_samples(s: &mut Session, outputs: Vec<CandidateOutput>) {
    s.apply(Event::EnvironmentReady {
        usage: Usage::default(),
    });
    assert!(matches!(s.next_action(), Action::RunCandidates { .. }));
    s.apply(Event::CandidatesRan { outputs });
}

/// A session with three candidates written (scripts returning 7, 6 and 5), at the
/// environment's preparation.
fn three_candidates() -> Session {
    let mut s = session(limits(3));
    up_to_candidates(
        &mut s,
        vec![
            candidate(&code_of(7), &["pandas"]),
            candidate(&code_of(6), &["pandas"]),
            candidate(&code_of(5), &["pandas"]),
        ],
    );
    s
}

fn code_of(n: u32) -> String {
    format!("def total():\n    return {n}\n")
}

/// A run of two tests, `test_total` (failing with [`WRONG_TOTAL`]) and `test_exit`.
fn two_tests(total: TestOutcome, exit: TestOutcome) -> TestRun {
    let total_says = if total == TestOutcome::Failed {
        WRONG_TOTAL
    } else {
        ""
    };
    TestRun {
        results: vec![
            result("test_solution.py::test_total", total, total_says),
            result("test_solution.py::test_exit", exit, ""),
        ],
        output: String::new(),
    }
}

fn tests_written(s: &mut Session) {
    assert!(matches!(s.next_action(), Action::WriteTests { .. }));
    s.apply(Event::TestsWritten {
        tests: TESTS.into(),
        usage: USAGE,
    });
}

#[test]
fn one_candidate_writes_one_script_as_before() {
    let mut s = session(limits(1));
    s.next_action();
    s.apply(Event::Planned {
        plan: Plan::default(),
        usage: USAGE,
    });
    assert!(matches!(s.next_action(), Action::WriteCode { .. }));
}

#[test]
fn candidates_run_on_the_samples_and_the_tests_pick_among_the_groups() {
    let mut s = session(limits(3));
    let prepare = up_to_candidates(
        &mut s,
        vec![
            candidate(&code_of(7), &["pandas"]),
            candidate(&code_of(6), &["numpy"]),
            candidate(&code_of(6), &["numpy"]),
        ],
    );
    // The environment can run every candidate.
    assert_eq!(
        prepare,
        Action::PrepareEnvironment {
            packages: vec!["numpy".into(), "pandas".into(), "pytest".into()],
            system_packages: Vec::new(),
        }
    );
    s.apply(Event::EnvironmentReady {
        usage: Usage::default(),
    });
    assert_eq!(
        s.next_action(),
        Action::RunCandidates {
            scripts: vec![code_of(7), code_of(6), code_of(6)]
        }
    );
    s.apply(Event::CandidatesRan {
        outputs: vec![output("7"), output("6"), output("6")],
    });
    tests_written(&mut s);
    // One script per group, the larger group first.
    assert_eq!(
        s.next_action(),
        Action::TestCandidates {
            scripts: vec![code_of(6), code_of(7)]
        }
    );
    s.apply(Event::CandidatesTested {
        runs: vec![
            two_tests(TestOutcome::Passed, TestOutcome::Passed),
            two_tests(TestOutcome::Failed, TestOutcome::Passed),
        ],
    });
    // The passing script is kept, in the environment it passed in.
    assert_eq!(s.code(), Some(code_of(6).as_str()));
    assert_eq!(s.runs(), 1);
    assert_eq!(
        s.history()[0].changes,
        [
            "code: 3 candidates ran on the samples: 2 group(s) of equal outputs (2, 1), 0 failed",
            "code: kept candidate 2 (tests passed per group's script: 2: 2 of 2, 1: 1 of 2)"
        ]
    );
    assert_eq!(s.packages(), ["numpy", "pandas", "pytest"]);
    let finish = expect_finish(&mut s);
    assert!(finish.success, "{finish:?}");
}

#[test]
fn the_diagnosis_sees_what_the_other_groups_computed_when_the_kept_script_fails() {
    let mut s = three_candidates();
    ran_on_the_samples(&mut s, vec![output("7"), output("6"), crashed()]);
    tests_written(&mut s);
    let Action::TestCandidates { scripts } = s.next_action() else {
        panic!("expected the groups' scripts to be tested");
    };
    assert_eq!(scripts, [code_of(7), code_of(6)]);
    // The second group's script passes one test more; neither passes all.
    s.apply(Event::CandidatesTested {
        runs: vec![
            two_tests(TestOutcome::Failed, TestOutcome::Failed),
            two_tests(TestOutcome::Failed, TestOutcome::Passed),
        ],
    });
    assert_eq!(s.code(), Some(code_of(6).as_str()));
    let Action::Diagnose {
        failures,
        disagreement: Some(disagreement),
        ..
    } = s.next_action()
    else {
        panic!("expected a diagnosis that sees the other group");
    };
    assert_eq!(failures.len(), 1);
    assert_eq!(disagreement.written, 3);
    assert_eq!(disagreement.agreeing, 1);
    assert_eq!(disagreement.tested, "total = 6");
    assert_eq!(disagreement.others.len(), 1);
    let other = &disagreement.others[0];
    assert_eq!(
        (other.count, other.outputs.as_str(), other.code.as_str()),
        (1, "total = 7", code_of(7).as_str())
    );
    assert_eq!((other.passed, other.tests), (0, 2));
}

#[test]
fn candidates_that_all_agree_need_no_selection_run() {
    let mut s = session(limits(2));
    up_to_candidates(
        &mut s,
        vec![
            candidate(&code_of(6), &["pandas"]),
            candidate(&code_of(60), &["pandas", "numpy"]),
        ],
    );
    s.apply(Event::EnvironmentReady {
        usage: Usage::default(),
    });
    assert!(matches!(s.next_action(), Action::RunCandidates { .. }));
    // The second crashed: the first is kept, without the second's numpy.
    s.apply(Event::CandidatesRan {
        outputs: vec![output("6"), crashed()],
    });
    assert_eq!(s.code(), Some(code_of(6).as_str()));
    assert_eq!(
        s.next_action(),
        Action::PrepareEnvironment {
            packages: vec!["pandas".into(), "pytest".into()],
            system_packages: Vec::new(),
        }
    );
    s.apply(Event::EnvironmentReady {
        usage: Usage::default(),
    });
    tests_written(&mut s);
    assert_eq!(s.next_action(), Action::RunTests);
    s.apply(failing_total());
    // A plain run's diagnosis has nothing to compare with.
    assert!(matches!(
        s.next_action(),
        Action::Diagnose {
            disagreement: None,
            ..
        }
    ));
}

#[test]
fn without_tests_the_largest_group_is_kept() {
    let mut s = session(Limits {
        skip_tests: true,
        ..limits(3)
    });
    up_to_candidates(
        &mut s,
        vec![
            candidate(&code_of(7), &["pandas"]),
            candidate(&code_of(6), &["pandas"]),
            candidate(&code_of(6), &["pandas"]),
        ],
    );
    ran_on_the_samples(&mut s, vec![output("7"), output("6"), output("6")]);
    assert_eq!(s.code(), Some(code_of(6).as_str()));
    let finish = expect_finish(&mut s);
    assert!(finish.success, "{finish:?}");
}

#[test]
fn a_new_script_after_escalation_is_several_candidates_again() {
    let mut s = session(limits(2));
    up_to_candidates(
        &mut s,
        vec![
            candidate(&code_of(6), &["pandas"]),
            candidate(&code_of(6), &["pandas"]),
        ],
    );
    ran_on_the_samples(&mut s, vec![output("6"), output("6")]);
    tests_written(&mut s);
    assert_eq!(s.next_action(), Action::RunTests);
    s.apply(failing_total());
    s.next_action();
    s.apply(diagnosed(FailureKind::Logic, &[]));
    // Nothing changes: the same run again escalates, tests first, then the code.
    assert!(matches!(s.next_action(), Action::FixCode { .. }));
    s.apply(Event::CodeEdited {
        edits: Vec::new(),
        packages: Vec::new(),
        usage: USAGE,
    });
    let mut actions = Vec::new();
    for _ in 0..6 {
        let action = s.next_action();
        let done = matches!(action, Action::WriteCandidates { .. });
        actions.push(action);
        if done {
            break;
        }
        match actions.last() {
            Some(Action::WriteTests { .. }) => s.apply(Event::TestsWritten {
                tests: TESTS.into(),
                usage: USAGE,
            }),
            Some(Action::RunTests) => s.apply(failing_total()),
            Some(Action::Diagnose { .. }) => s.apply(diagnosed(FailureKind::Logic, &[])),
            Some(Action::FixCode { .. }) => s.apply(Event::CodeEdited {
                edits: Vec::new(),
                packages: Vec::new(),
                usage: USAGE,
            }),
            other => panic!("unexpected {other:?}"),
        }
    }
    assert!(
        matches!(
            actions.last(),
            Some(Action::WriteCandidates { count: 2, .. })
        ),
        "{actions:?}"
    );
}

#[test]
fn candidates_that_cannot_run_on_the_samples_are_each_tested() {
    let mut s = three_candidates();
    ran_on_the_samples(&mut s, vec![not_runnable(), not_runnable(), not_runnable()]);
    tests_written(&mut s);
    assert_eq!(
        s.next_action(),
        Action::TestCandidates {
            scripts: vec![code_of(7), code_of(6), code_of(5)]
        }
    );
    let passing = |n: usize| TestRun {
        results: (0..2)
            .map(|i| {
                let outcome = if i < n {
                    TestOutcome::Passed
                } else {
                    TestOutcome::Failed
                };
                result(&format!("test_solution.py::test_{i}"), outcome, "")
            })
            .collect(),
        output: String::new(),
    };
    s.apply(Event::CandidatesTested {
        runs: vec![passing(0), passing(1), passing(0)],
    });
    assert_eq!(s.code(), Some(code_of(6).as_str()));
    assert_eq!(
        s.history()[0].changes[0],
        "code: 3 of 3 candidates could not be run on the samples (an input has no sample): the tests choose"
    );
    // Nothing is known of what the others computed: the diagnosis is a plain one.
    assert!(matches!(
        s.next_action(),
        Action::Diagnose {
            disagreement: None,
            ..
        }
    ));
}

#[test]
fn among_scripts_the_tests_cannot_tell_apart_the_one_agreeing_most_with_the_others_is_kept() {
    let mut s = three_candidates();
    // Three different tables: the third shares the header and two rows with the first, the
    // header and a row with the second; those two share only the header.
    ran_on_the_samples(
        &mut s,
        vec![
            wrote("a", &["k,v", "a,1", "b,2", "c,9"]),
            wrote("b", &["k,v", "a,8", "b,7", "c,3"]),
            wrote("c", &["k,v", "a,1", "b,2", "c,3"]),
        ],
    );
    tests_written(&mut s);
    // The groups (one script each) go to the tests in that order.
    assert_eq!(
        s.next_action(),
        Action::TestCandidates {
            scripts: vec![code_of(5), code_of(7), code_of(6)]
        }
    );
    let tied = || two_tests(TestOutcome::Failed, TestOutcome::Passed);
    s.apply(Event::CandidatesTested {
        runs: vec![tied(), tied(), tied()],
    });
    assert_eq!(s.code(), Some(code_of(5).as_str()));
    assert_eq!(
        s.history()[0].changes[1],
        "code: kept candidate 3 (tests passed per group's script: 3: 1 of 2, 1: 1 of 2, 2: 1 of 2)"
    );
}

#[test]
fn a_larger_group_still_comes_before_a_script_that_agrees_more() {
    let mut s = session(Limits {
        skip_tests: true,
        ..limits(5)
    });
    up_to_candidates(
        &mut s,
        vec![
            candidate(&code_of(7), &["pandas"]),
            candidate(&code_of(7), &["pandas"]),
            candidate(&code_of(6), &["pandas"]),
            candidate(&code_of(5), &["pandas"]),
            candidate(&code_of(4), &["pandas"]),
        ],
    );
    // The pair agrees with itself only (1.0); each of the three others shares three of five
    // rows with the other two (1.2).
    let far = ["total", "99"];
    ran_on_the_samples(
        &mut s,
        vec![
            wrote("far", &far),
            wrote("far", &far),
            wrote("c", &["k,v", "a,1", "b,2", "c,3"]),
            wrote("d", &["k,v", "a,1", "b,2", "c,4"]),
            wrote("e", &["k,v", "a,1", "b,2", "c,5"]),
        ],
    );
    assert_eq!(s.code(), Some(code_of(7).as_str()));
}
