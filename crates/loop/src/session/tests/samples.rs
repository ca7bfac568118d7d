//! `sample_fixes`: the script runs on the samples before any test is written, and a crash there
//! is fixed from what the run printed.

use super::*;
use crate::protocol::CandidateOutput;

const CRASH: &str = "it exited with 1:\nKeyError: 'revenue'";

fn with_fixes(fixes: u32) -> Session {
    session(Limits {
        sample_fixes: fixes,
        ..Limits::default()
    })
}

/// Plans, writes the script and builds its environment; returns at the try on the samples.
fn up_to_the_samples(s: &mut Session) {
    write_code(s, &["pandas"], &[]);
    assert!(matches!(s.next_action(), Action::PrepareEnvironment { .. }));
    s.apply(Event::EnvironmentReady {
        usage: Usage::default(),
    });
    assert_eq!(
        s.next_action(),
        Action::TrySamples {
            script: CODE.into()
        }
    );
}

fn tried(ok: bool, summary: &str) -> Event {
    Event::SamplesTried {
        output: CandidateOutput {
            ok,
            digest: String::new(),
            summary: summary.into(),
            not_runnable: false,
            cells: Vec::new(),
            failed_in: None,
        },
    }
}

#[test]
fn a_script_that_crashes_on_the_samples_is_fixed_before_any_test_is_written() {
    let mut s = with_fixes(2);
    up_to_the_samples(&mut s);
    s.apply(tried(false, CRASH));
    let Action::FixCode {
        failures, passing, ..
    } = s.next_action()
    else {
        panic!("expected a code fix");
    };
    assert_eq!(failures.len(), 1);
    assert_eq!(failures[0].test_id, SAMPLE_RUN_ID);
    assert_eq!(failures[0].kind, FailureKind::Logic);
    assert_eq!(failures[0].output, CRASH);
    assert!(passing.is_empty());
    // The fix prompt's report shows the run as the failure.
    assert_eq!(s.diagnosed().len(), 1);
    assert_eq!(s.diagnosed()[0].output, CRASH);
    s.apply(fix_code());
    let fixed = CODE.replace("sum(rows) + 1", "sum(rows)");
    assert_eq!(s.next_action(), Action::TrySamples { script: fixed });
    s.apply(tried(true, "total = 6"));
    assert!(matches!(s.next_action(), Action::WriteTests { .. }));
    assert_eq!(s.sample_tries(), 2);
    assert_eq!(s.runs(), 0, "no test run was spent on the crash");
}

#[test]
fn after_its_fixes_a_script_still_failing_on_the_samples_goes_to_the_tests() {
    let mut s = with_fixes(1);
    up_to_the_samples(&mut s);
    s.apply(tried(false, CRASH));
    assert!(matches!(s.next_action(), Action::FixCode { .. }));
    s.apply(fix_code());
    assert!(matches!(s.next_action(), Action::TrySamples { .. }));
    s.apply(tried(false, CRASH));
    assert!(matches!(s.next_action(), Action::WriteTests { .. }));
    s.apply(Event::TestsWritten {
        tests: TESTS.into(),
        usage: USAGE,
    });
    assert_eq!(s.next_action(), Action::RunTests);
    s.apply(failing_total());
    let notes = &s.history()[0].changes;
    assert!(
        notes.iter().any(|n| n.contains("code fix 1 of 1")),
        "{notes:?}"
    );
    assert!(notes.iter().any(|n| n.contains("still fails")), "{notes:?}");
}

#[test]
fn a_fix_that_changes_nothing_does_not_try_the_same_script_again() {
    let mut s = with_fixes(3);
    up_to_the_samples(&mut s);
    s.apply(tried(false, CRASH));
    let unchanged = || Event::CodeEdited {
        edits: Vec::new(),
        packages: Vec::new(),
        usage: USAGE,
    };
    assert!(matches!(s.next_action(), Action::FixCode { .. }));
    s.apply(unchanged());
    // Sent back once with the reason, then given up on: the same script is not run again.
    let Action::FixCode { rejected, .. } = s.next_action() else {
        panic!("expected the fix to be asked again");
    };
    assert!(!rejected.is_empty());
    s.apply(unchanged());
    assert!(matches!(s.next_action(), Action::WriteTests { .. }));
}

#[test]
fn a_script_that_runs_or_cannot_run_on_the_samples_goes_straight_to_the_tests() {
    let mut s = with_fixes(2);
    up_to_the_samples(&mut s);
    s.apply(tried(true, "total = 6"));
    assert!(matches!(s.next_action(), Action::WriteTests { .. }));

    let mut s = with_fixes(2);
    up_to_the_samples(&mut s);
    let Event::SamplesTried { mut output } = tried(false, "not run: input `sales` has no sample")
    else {
        unreachable!()
    };
    output.not_runnable = true;
    s.apply(Event::SamplesTried { output });
    assert!(matches!(s.next_action(), Action::WriteTests { .. }));
}

#[test]
fn without_sample_fixes_the_tests_come_right_after_the_environment() {
    let mut s = session(Limits::default());
    up_to_first_run(&mut s);
    assert_eq!(s.sample_tries(), 0);
}

#[test]
fn skipping_tests_still_fixes_a_crash_on_the_samples_first() {
    let mut s = session(Limits {
        sample_fixes: 1,
        skip_tests: true,
        ..Limits::default()
    });
    up_to_the_samples(&mut s);
    s.apply(tried(false, CRASH));
    assert!(matches!(s.next_action(), Action::FixCode { .. }));
    s.apply(fix_code());
    assert!(matches!(s.next_action(), Action::TrySamples { .. }));
    s.apply(tried(true, "total = 6"));
    let finish = expect_finish(&mut s);
    assert!(finish.success, "{finish:?}");
}

/// With units, a crash on the samples is fixed in the unit it was raised in alone; one raised in
/// the skeleton's own functions, or without units, names no function.
#[test]
fn with_units_a_crash_names_the_unit_the_fix_may_change() {
    let fix_of = |units: bool, raised: Option<&str>| {
        let mut s = with_fixes(1);
        if units {
            s = s.fixing_units();
        }
        up_to_the_samples(&mut s);
        let Event::SamplesTried { mut output } = tried(false, CRASH) else {
            unreachable!()
        };
        output.failed_in = raised.map(str::to_owned);
        s.apply(Event::SamplesTried { output });
        let Action::FixCode { failures, .. } = s.next_action() else {
            panic!("expected a code fix");
        };
        failures[0].function.clone()
    };
    assert_eq!(
        fix_of(true, Some("compute_total")).as_deref(),
        Some("compute_total")
    );
    assert_eq!(fix_of(true, Some("main")), None);
    assert_eq!(fix_of(true, Some("write_rows")), None);
    assert_eq!(fix_of(true, None), None);
    assert_eq!(fix_of(false, Some("compute_total")), None);
}
