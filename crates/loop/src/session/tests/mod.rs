//! The loop's rules, one scenario each, driven through `next` and `apply`.

mod candidates;
mod handback;
mod install_failures;
mod samples;
mod system_packages;

use super::*;
use crate::protocol::Edit;
use crate::protocol::FailureKind;
use crate::protocol::FunctionPatch;
use crate::protocol::Plan;

const USAGE: Usage = Usage {
    input_tokens: 100,
    output_tokens: 50,
    cached_input_tokens: 0,
};
const CODE: &str = "import pandas as pd\n\ndef total(rows):\n    return sum(rows) + 1\n";
const TESTS: &str = "def test_total(run_solution):\n    assert run_solution().outputs['total'] == 6\n\n\ndef test_exit(run_solution):\n    assert run_solution().returncode == 0\n";

fn session(limits: Limits) -> Session {
    Session::new(limits, &["pytest".to_owned()])
}

/// Plans and writes code that asks for the distributions `packages` and the Debian packages
/// `system`.
fn write_code(s: &mut Session, packages: &[&str], system: &[&str]) {
    assert_eq!(s.next_action(), Action::Plan);
    s.apply(Event::Planned {
        plan: Plan::default(),
        usage: USAGE,
    });
    write_script(s, packages, system);
}

/// Writes the script (the next action) asking for `packages` and the Debian packages `system`.
fn write_script(s: &mut Session, packages: &[&str], system: &[&str]) {
    assert!(matches!(s.next_action(), Action::WriteCode { .. }));
    s.apply(Event::CodeWritten {
        code: CODE.into(),
        packages: packages.iter().map(|p| (*p).to_owned()).collect(),
        system_packages: system.iter().map(|p| (*p).to_owned()).collect(),
        usage: USAGE,
    });
}

/// Plans, writes code and tests and builds the environment; returns at the first `RunTests`.
fn up_to_first_run(s: &mut Session) {
    write_code(s, &["pandas"], &[]);
    environment_and_tests(s);
}

/// After a script asking for pandas: builds the environment and writes the tests; returns at
/// the first `RunTests`.
fn environment_and_tests(s: &mut Session) {
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
    assert!(matches!(s.next_action(), Action::WriteTests { .. }));
    s.apply(Event::TestsWritten {
        tests: TESTS.into(),
        usage: USAGE,
    });
    assert_eq!(s.next_action(), Action::RunTests);
}

fn result(id: &str, outcome: TestOutcome, output: &str) -> TestResult {
    TestResult::new(id.into(), outcome, output.into())
}

fn run(results: Vec<TestResult>) -> Event {
    Event::TestsRan(TestRun {
        results,
        output: String::new(),
    })
}

const WRONG_TOTAL: &str = "E       assert 7 == 6";

fn failing_total() -> Event {
    run(vec![
        result(
            "test_solution.py::test_total",
            TestOutcome::Failed,
            WRONG_TOTAL,
        ),
        result("test_solution.py::test_exit", TestOutcome::Passed, ""),
    ])
}

/// `test_total` fails on a module the environment lacks.
fn failing_import() -> Event {
    run(vec![
        result(
            "test_solution.py::test_total",
            TestOutcome::Failed,
            "E   ModuleNotFoundError: No module named 'pandas'",
        ),
        result("test_solution.py::test_exit", TestOutcome::Passed, ""),
    ])
}

fn all_pass() -> Event {
    run(vec![
        result("test_solution.py::test_total", TestOutcome::Passed, ""),
        result("test_solution.py::test_exit", TestOutcome::Passed, ""),
    ])
}

fn diagnosed(kind: FailureKind, packages: &[&str]) -> Event {
    Event::Diagnosed {
        diagnoses: vec![Diagnosis {
            test_id: "test_solution.py::test_total".into(),
            kind,
            evidence: "1+2+3 = 6".into(),
            fix: "drop the + 1".into(),
            packages: packages.iter().map(|p| (*p).to_owned()).collect(),
        }],
        usage: USAGE,
    }
}

fn fix_code() -> Event {
    Event::CodeEdited {
        edits: vec![Edit {
            find: "sum(rows) + 1".into(),
            replace: "sum(rows)".into(),
        }],
        packages: vec![],
        usage: USAGE,
    }
}

fn expect_finish(s: &mut Session) -> Finish {
    match s.next_action() {
        Action::Finish(finish) => finish,
        other => panic!("expected Finish, got {other:?}"),
    }
}

#[test]
fn first_try_pass() {
    let mut s = session(Limits::default());
    up_to_first_run(&mut s);
    s.apply(all_pass());
    let finish = expect_finish(&mut s);
    assert!(finish.success, "{finish:?}");
    assert_eq!(s.tokens(), 450);
    assert_eq!(s.runs(), 1);
}

#[test]
fn a_logic_error_is_fixed_by_a_code_edit() {
    let mut s = session(Limits::default());
    up_to_first_run(&mut s);
    s.apply(failing_total());
    let Action::Diagnose {
        failures, passing, ..
    } = s.next_action()
    else {
        panic!()
    };
    assert_eq!(failures.len(), 1);
    assert_eq!(passing, vec!["test_solution.py::test_exit"]);
    s.apply(diagnosed(FailureKind::Logic, &[]));
    let Action::FixCode {
        failures,
        passing,
        rejected,
    } = s.next_action()
    else {
        panic!()
    };
    assert_eq!(failures[0].kind, FailureKind::Logic);
    assert_eq!(passing.len(), 1);
    assert!(rejected.is_empty());
    s.apply(fix_code());
    assert!(s.code().unwrap().contains("return sum(rows)\n"));
    assert_eq!(s.next_action(), Action::RunTests);
    s.apply(all_pass());
    assert!(expect_finish(&mut s).success);
    assert_eq!(s.history()[0].changes, vec!["code: 1 of 1 edits applied"]);
}

#[test]
fn a_wrong_test_is_fixed_by_a_test_patch() {
    let mut s = session(Limits::default());
    up_to_first_run(&mut s);
    s.apply(failing_total());
    s.next_action();
    s.apply(diagnosed(FailureKind::TestError, &[]));
    let Action::FixTests { failures, .. } = s.next_action() else {
        panic!()
    };
    assert_eq!(failures[0].test_id, "test_solution.py::test_total");
    s.apply(Event::TestsPatched {
        functions: vec![FunctionPatch {
            name: "test_total".into(),
            source:
                "def test_total(run_solution):\n    assert run_solution().outputs['total'] == 7\n"
                    .into(),
        }],
        imports: vec![],
        usage: USAGE,
    });
    assert!(s.tests().unwrap().contains("== 7"));
    assert!(s.tests().unwrap().contains("def test_exit"));
    assert_eq!(s.next_action(), Action::RunTests);
}

#[test]
fn a_test_fix_with_nothing_to_apply_sends_the_failure_to_the_code_fixer() {
    let mut s = session(Limits::default());
    up_to_first_run(&mut s);
    s.apply(failing_total());
    s.next_action();
    s.apply(diagnosed(FailureKind::TestError, &[]));
    let elsewhere = || Event::TestsPatched {
        functions: vec![FunctionPatch {
            name: "compute_total".into(),
            source: "def compute_total(rows):\n    return sum(rows)\n".into(),
        }],
        imports: vec![],
        usage: USAGE,
    };
    assert!(matches!(s.next_action(), Action::FixTests { .. }));
    s.apply(elsewhere());
    let Action::FixTests { rejected, .. } = s.next_action() else {
        panic!("one retry with the reason")
    };
    assert!(
        rejected[0].contains("no test function `compute_total`"),
        "{rejected:?}"
    );
    s.apply(elsewhere());
    let Action::FixCode { failures, .. } = s.next_action() else {
        panic!("the code fixer takes the failure")
    };
    assert_eq!(failures[0].test_id, "test_solution.py::test_total");
    assert_eq!(failures[0].kind, FailureKind::Logic);
    assert_eq!(failures[0].reclassified_from, Some(FailureKind::TestError));
    s.apply(fix_code());
    assert_eq!(s.next_action(), Action::RunTests);
    s.apply(all_pass());
    assert!(expect_finish(&mut s).success);
}

/// `test_total` fails because the harness could not read `total` as a float.
fn total_of_the_wrong_type() -> Event {
    run(vec![
        result(
            "test_solution.py::test_total",
            TestOutcome::Failed,
            "E   ValueError: output 'total' must be one float, but solution.py wrote 2 lines starting '0    1.0'",
        ),
        result("test_solution.py::test_exit", TestOutcome::Passed, ""),
    ])
}

#[test]
fn a_script_crashing_on_an_undefined_name_goes_to_the_code_fixer_whatever_the_diagnosis() {
    let mut s = session(Limits::default());
    up_to_first_run(&mut s);
    s.apply(run(vec![
        result(
            "test_solution.py::test_total",
            TestOutcome::Failed,
            "E   AssertionError: Traceback (most recent call last):\n  File \"/var/work/solution.py\", line 60, in main\n    write_outputs(summary, error_count)\nNameError: name 'error_count' is not defined",
        ),
        result("test_solution.py::test_exit", TestOutcome::Passed, ""),
    ]));
    s.next_action();
    s.apply(diagnosed(FailureKind::TestError, &[]));
    let Action::FixCode { failures, .. } = s.next_action() else {
        panic!("must go to the code fixer")
    };
    assert_eq!(failures[0].reclassified_from, Some(FailureKind::TestError));
    // A NameError of the test file itself stays with the test fixer.
    let mut s = session(Limits::default());
    up_to_first_run(&mut s);
    s.apply(run(vec![result(
        "test_solution.py::test_total",
        TestOutcome::Failed,
        "  File \"/var/work/test_solution.py\", line 4, in test_total\nE   NameError: name 'expected' is not defined",
    )]));
    s.next_action();
    s.apply(diagnosed(FailureKind::TestError, &[]));
    assert!(matches!(s.next_action(), Action::FixTests { .. }));
}

#[test]
fn an_output_of_the_wrong_type_goes_to_the_code_fixer_whatever_the_diagnosis() {
    let mut s = session(Limits::default());
    up_to_first_run(&mut s);
    s.apply(total_of_the_wrong_type());
    s.next_action();
    s.apply(diagnosed(FailureKind::TestError, &[]));
    let Action::FixCode { failures, .. } = s.next_action() else {
        panic!("must go to the code fixer")
    };
    assert_eq!(failures[0].reclassified_from, Some(FailureKind::TestError));
    assert_eq!(failures[0].fix, "drop the + 1");
    // A code fix that does not help: the same failure still goes to the code fixer, never to
    // the test fixer (no test change can make the output a float).
    s.apply(fix_code());
    assert_eq!(s.next_action(), Action::RunTests);
    s.apply(total_of_the_wrong_type());
    s.next_action();
    s.apply(diagnosed(FailureKind::TestError, &[]));
    assert!(
        matches!(s.next_action(), Action::FixCode { .. }),
        "must stay with the code fixer"
    );
}

#[test]
fn a_diagnosis_that_keeps_failing_is_reclassified_and_routed_to_the_other_fixer() {
    let mut s = session(Limits::default());
    up_to_first_run(&mut s);
    s.apply(failing_total());
    s.next_action();
    s.apply(diagnosed(FailureKind::TestError, &[]));
    s.next_action();
    // The test fixer changes something irrelevant; the same failure comes back.
    s.apply(Event::TestsPatched {
        functions: vec![FunctionPatch {
            name: "test_total".into(),
            source: "def test_total(run_solution):\n    result = run_solution()\n    assert result.outputs['total'] == 6\n".into(),
        }],
        imports: vec![],
        usage: USAGE,
    });
    assert_eq!(s.next_action(), Action::RunTests);
    s.apply(failing_total());
    s.next_action();
    s.apply(diagnosed(FailureKind::TestError, &[]));
    let Action::FixCode { failures, .. } = s.next_action() else {
        panic!("must go to the code fixer")
    };
    assert_eq!(failures[0].reclassified_from, Some(FailureKind::TestError));
    s.apply(fix_code());
    assert_eq!(s.next_action(), Action::RunTests);
    s.apply(all_pass());
    assert!(expect_finish(&mut s).success);
}

#[test]
fn a_missing_package_is_added_and_the_environment_rebuilt() {
    let mut s = session(Limits::default());
    up_to_first_run(&mut s);
    s.apply(run(vec![result(
        "test_solution.py",
        TestOutcome::CollectionError,
        "E   ModuleNotFoundError: No module named 'scipy'",
    )]));
    let Action::Diagnose { failures, .. } = s.next_action() else {
        panic!()
    };
    assert_eq!(
        failures[0].outcome,
        TestOutcome::CollectionError,
        "collection errors are diagnosed"
    );
    s.apply(Event::Diagnosed {
        diagnoses: vec![Diagnosis {
            test_id: "test_solution.py".into(),
            kind: FailureKind::Environment,
            evidence: "No module named 'scipy'".into(),
            fix: "install scipy".into(),
            packages: vec!["scipy".into()],
        }],
        usage: USAGE,
    });
    assert_eq!(
        s.next_action(),
        Action::PrepareEnvironment {
            packages: vec!["pandas".into(), "pytest".into(), "scipy".into()],
            system_packages: Vec::new(),
        }
    );
    s.apply(Event::EnvironmentReady {
        usage: Usage::default(),
    });
    assert_eq!(s.next_action(), Action::RunTests);
}

/// Plans and writes code that needs `package`.
#[test]
fn a_nonexistent_package_is_replaced() {
    let mut s = session(Limits::default());
    write_code(&mut s, &["sklearn"], &[]);
    s.next_action();
    s.apply(Event::PackageMissing {
        package: "sklearn".into(),
        error: "not found".into(),
    });
    assert_eq!(
        s.next_action(),
        Action::ReplacePackage {
            package: "sklearn".into(),
            error: "not found".into()
        }
    );
    s.apply(Event::PackageReplaced {
        package: "sklearn".into(),
        replacement: Some("scikit-learn".into()),
        usage: USAGE,
    });
    assert_eq!(
        s.next_action(),
        Action::PrepareEnvironment {
            packages: vec!["pytest".into(), "scikit-learn".into()],
            system_packages: Vec::new(),
        }
    );
}

#[test]
fn a_replacement_that_goes_missing_again_ends_the_run() {
    let mut s = session(Limits::default());
    write_code(&mut s, &["alpha"], &[]);
    // alpha -> beta -> alpha: the second hop names a package known to be missing, so the code is
    // rewritten without it instead of asking the index for alpha again.
    let missing = |s: &mut Session, package: &str| {
        s.next_action();
        s.apply(Event::PackageMissing {
            package: package.into(),
            error: format!("no {package}"),
        });
        s.next_action()
    };
    let replaced = |s: &mut Session, package: &str, by: &str| {
        s.apply(Event::PackageReplaced {
            package: package.into(),
            replacement: Some(by.into()),
            usage: USAGE,
        });
    };
    assert!(matches!(
        missing(&mut s, "alpha"),
        Action::ReplacePackage { .. }
    ));
    replaced(&mut s, "alpha", "beta");
    assert!(matches!(
        missing(&mut s, "beta"),
        Action::ReplacePackage { .. }
    ));
    replaced(&mut s, "beta", "alpha");
    assert!(
        !s.packages().contains(&"alpha".to_owned()),
        "{:?}",
        s.packages()
    );
    assert!(matches!(s.next_action(), Action::WriteCode { .. }));
    // The new code imports alpha anyway: the run ends, naming it and what was tried.
    s.apply(Event::CodeWritten {
        code: CODE.into(),
        packages: vec!["alpha".into()],
        system_packages: Vec::new(),
        usage: USAGE,
    });
    s.next_action();
    s.apply(Event::PackageMissing {
        package: "alpha".into(),
        error: "no alpha".into(),
    });
    match s.next_action() {
        Action::Finish(finish) => {
            assert!(!finish.success);
            assert!(
                finish.reason.contains("`alpha` could not be installed"),
                "{}",
                finish.reason
            );
            assert!(finish.reason.contains("alpha, beta"), "{}", finish.reason);
        }
        other => panic!("expected the run to end, got {other:?}"),
    }
}

#[test]
fn max_iterations_ends_with_the_real_error() {
    let mut s = session(Limits {
        max_iterations: 1,
        ..Limits::default()
    });
    up_to_first_run(&mut s);
    s.apply(failing_total());
    // The last run's failure is still diagnosed (the result names its kind), but no fix is
    // asked for: it could never be tested.
    assert!(matches!(s.next_action(), Action::Diagnose { .. }));
    s.apply(diagnosed(FailureKind::Logic, &[]));
    let finish = expect_finish(&mut s);
    assert!(!finish.success);
    assert!(finish.reason.contains("max_iterations (1)"), "{finish:?}");
    assert!(finish.error.unwrap().contains("assert 7 == 6"));
}

#[test]
fn identical_code_tests_and_packages_never_run_twice() {
    let mut s = session(Limits::default());
    up_to_first_run(&mut s);
    s.apply(failing_total());
    s.next_action();
    s.apply(diagnosed(FailureKind::Logic, &[]));
    s.next_action();
    let useless = Event::CodeEdited {
        edits: vec![Edit {
            find: "not in the code".into(),
            replace: "x".into(),
        }],
        packages: vec![],
        usage: USAGE,
    };
    s.apply(useless.clone());
    let Action::FixCode { rejected, .. } = s.next_action() else {
        panic!("one retry with the reason")
    };
    assert!(rejected[0].contains("not in the script"), "{rejected:?}");
    s.apply(useless);
    let Action::WriteTests { notes } = s.next_action() else {
        panic!("escalate instead of re-running")
    };
    assert!(notes[0].contains("exactly as they were"), "{notes:?}");
}

/// From the first run: a failure diagnosed as logic, and two code fixes that change nothing,
/// so the loop must escalate.
fn up_to_an_escalation(s: &mut Session) {
    up_to_first_run(s);
    s.apply(failing_total());
    s.next_action();
    s.apply(diagnosed(FailureKind::Logic, &[]));
    s.next_action();
    let unchanged = Event::CodeEdited {
        edits: vec![],
        packages: vec![],
        usage: USAGE,
    };
    s.apply(unchanged.clone());
    s.next_action();
    s.apply(unchanged);
}

#[test]
fn escalation_rewrites_tests_then_code_twice_then_gives_up() {
    let mut s = session(Limits::default());
    up_to_an_escalation(&mut s);
    // Each rewrite comes back identical, so nothing new would run: the next escalation follows.
    let mut seen = Vec::new();
    loop {
        match s.next_action() {
            Action::WriteTests { notes } => {
                seen.push(format!("tests: {}", notes[0]));
                s.apply(Event::TestsWritten {
                    tests: TESTS.into(),
                    usage: USAGE,
                });
            }
            Action::WriteCode { notes } => {
                seen.push(format!("code: {}", notes[0]));
                s.apply(Event::CodeWritten {
                    code: CODE.into(),
                    packages: vec!["pandas".into()],
                    system_packages: Vec::new(),
                    usage: USAGE,
                });
            }
            Action::Finish(finish) => {
                assert!(!finish.success);
                assert!(finish.reason.starts_with("gave up"), "{finish:?}");
                break;
            }
            other => panic!("unexpected {other:?} after {seen:?}"),
        }
    }
    assert_eq!(seen.len(), 4, "{seen:#?}");
    assert!(seen[0].starts_with("tests: the previous tests were dropped (1 of 2)"));
    assert!(seen[1].starts_with("code: the previous script was dropped (1 of 2)"));
    assert!(
        seen[1].contains("it failed with:\n") && seen[1].contains("assert 7 == 6"),
        "{}",
        seen[1]
    );
    assert!(seen[2].starts_with("tests: the previous tests were dropped (2 of 2)"));
    assert!(seen[3].starts_with("code: the previous script was dropped (2 of 2)"));
    assert_eq!(s.runs(), 1, "nothing identical ran again");
}

#[test]
fn a_code_edit_that_breaks_a_passing_test_is_reverted() {
    let mut s = session(Limits::default());
    up_to_first_run(&mut s);
    s.apply(failing_total());
    s.next_action();
    s.apply(diagnosed(FailureKind::Logic, &[]));
    s.next_action();
    s.apply(fix_code());
    s.next_action();
    s.apply(run(vec![
        result("test_solution.py::test_total", TestOutcome::Passed, ""),
        result(
            "test_solution.py::test_exit",
            TestOutcome::Failed,
            "E   assert 1 == 0",
        ),
    ]));
    let Action::FixCode {
        rejected, failures, ..
    } = s.next_action()
    else {
        panic!()
    };
    assert!(
        rejected[0].contains("test_solution.py::test_exit"),
        "{rejected:?}"
    );
    assert_eq!(failures[0].test_id, "test_solution.py::test_total");
    assert_eq!(s.code(), Some(CODE));
}

#[test]
fn skips_are_not_passes() {
    let mut s = session(Limits::default());
    up_to_first_run(&mut s);
    s.apply(run(vec![result(
        "test_solution.py::test_total",
        TestOutcome::Skipped,
        "",
    )]));
    let Action::WriteTests { notes } = s.next_action() else {
        panic!()
    };
    assert!(notes[0].contains("skips are not passes"));
}

#[test]
fn tests_that_import_a_name_the_script_lacks_are_rewritten_not_diagnosed() {
    let mut s = session(Limits::default());
    up_to_first_run(&mut s);
    s.apply(run(vec![result(
        "test_solution.py",
        TestOutcome::CollectionError,
        "E   ImportError: cannot import name 'parse_log' from 'solution' (/sandbox/solution.py)",
    )]));
    let Action::WriteTests { notes } = s.next_action() else {
        panic!("expected new tests")
    };
    assert!(notes[0].contains("`parse_log`"), "{notes:?}");
    assert!(s.history()[0].changes[0].starts_with("tests: dropped"));
    // The script's own import error is diagnosed as before.
    s.apply(Event::TestsWritten {
        tests: format!("{TESTS}\n# written again\n"),
        usage: USAGE,
    });
    assert_eq!(s.next_action(), Action::RunTests);
    s.apply(run(vec![result(
        "test_solution.py",
        TestOutcome::CollectionError,
        "E   ImportError: cannot import name 'read_csvs' from 'pandas' (/venv/pandas/__init__.py)",
    )]));
    assert!(matches!(s.next_action(), Action::Diagnose { .. }));
}

#[test]
fn skip_tests_stops_once_the_environment_exists() {
    let mut s = session(Limits {
        skip_tests: true,
        ..Limits::default()
    });
    write_code(&mut s, &[], &[]);
    assert!(matches!(s.next_action(), Action::PrepareEnvironment { .. }));
    s.apply(Event::EnvironmentReady {
        usage: Usage::default(),
    });
    let finish = expect_finish(&mut s);
    assert!(finish.success && finish.reason.contains("skipped"));
}

#[test]
fn without_a_plan_the_first_action_is_the_script_and_no_plan_is_ever_asked_for() {
    let mut s = session(Limits::default()).without_plan();
    write_script(&mut s, &["pandas"], &[]);
    environment_and_tests(&mut s);
    s.apply(all_pass());
    assert!(expect_finish(&mut s).success);
    assert!(s.plan().is_none());
}

#[test]
fn the_token_budget_stops_the_loop() {
    let mut s = session(Limits {
        token_budget: Some(300),
        ..Limits::default()
    });
    write_code(&mut s, &[], &[]);
    let finish = expect_finish(&mut s);
    assert!(!finish.success && finish.reason.contains("token budget (300)"));
}
