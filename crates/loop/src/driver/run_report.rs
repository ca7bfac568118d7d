//! What the diagnosis and the fixes are shown of a test run (`run` in `loop/_report.j2`): the
//! tests, the script, the packages, each failure with its output and trace, and the passing
//! tests. Built one way for all three steps, so their prompts begin with the same text and a
//! provider's prompt cache serves it once.

use serde_json::{Value, json};

use crate::protocol::{FailedTest, TestOutcome};
use crate::session::Session;
use crate::steps::{FAILURE_OUTPUT_LIMIT, tail};

/// Failures shown with the values the script computed, at most this many per prompt (each
/// trace is hundreds of tokens; a small model's context holds a few).
const TRACED_FAILURES: usize = 2;

/// Characters of a trace a prompt shows (its end: the values right before the failure).
const TRACE_PROMPT_LIMIT: usize = 2_500;

/// The `run` context of `failures` with `passing`, over the session's current script, tests and
/// packages.
pub(super) fn run_report(session: &Session, failures: &[FailedTest], passing: &[String]) -> Value {
    let traces = shown_traces(failures.iter().map(|f| f.trace.as_deref()));
    let failures: Vec<Value> = failures
        .iter()
        .zip(traces)
        .map(|(f, trace)| {
            json!({
                "test_id": f.test_id,
                "outcome": outcome_name(f.outcome),
                "output": tail(&f.output, FAILURE_OUTPUT_LIMIT),
                "trace": trace,
            })
        })
        .collect();
    json!({
        "code": session.code().unwrap_or_default(),
        "tests": session.tests().unwrap_or_default(),
        "packages": session.packages(),
        "failures": failures,
        "passing": passing,
    })
}

/// The trace each failure's prompt entry shows: the first [`TRACED_FAILURES`] traces, cut.
fn shown_traces<'t>(
    traces: impl Iterator<Item = Option<&'t str>>,
) -> impl Iterator<Item = Option<String>> {
    let mut shown = 0;
    traces.map(move |trace| {
        let trace = trace.filter(|_| shown < TRACED_FAILURES)?;
        shown += 1;
        Some(tail(trace, TRACE_PROMPT_LIMIT))
    })
}

fn outcome_name(outcome: TestOutcome) -> &'static str {
    match outcome {
        TestOutcome::Passed => "passed",
        TestOutcome::Failed => "failed",
        TestOutcome::Error => "error in a fixture",
        TestOutcome::Skipped => "skipped",
        TestOutcome::XFailed => "xfailed",
        TestOutcome::XPassed => "unexpectedly passed",
        TestOutcome::CollectionError => "could not be collected",
    }
}
