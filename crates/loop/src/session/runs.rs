//! What the session does with a test run and with the diagnosis of its failures.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use super::state::Iteration;
use super::{CONTRACT_TEST_FILE, Session};
use crate::protocol::{
    Action, Diagnosis, FailedTest, FailureKind, Fault, Finish, RoutedFailure, TestOutcome,
    TestResult, TestRun,
};
use crate::reclassify::{Decision, Signature};

/// Bytes of failure output kept as the "last error".
const LAST_ERROR_LIMIT: usize = 8_000;

impl Session {
    pub(super) fn on_tests_ran(&mut self, run: &TestRun) {
        self.runs += 1;
        self.ran.insert(self.fingerprint());
        let passed: BTreeSet<String> = run.passed().map(|r| r.id.clone()).collect();
        let failures: Vec<FailedTest> = run
            .failures()
            .map(|r| FailedTest {
                test_id: r.id.clone(),
                outcome: r.outcome,
                output: r.output.clone(),
                trace: r.trace.clone(),
                input_notes: r.input_notes(),
            })
            .collect();
        self.history.push(Iteration {
            number: self.runs,
            passed: passed.len(),
            failed: failures.len(),
            changes: std::mem::take(&mut self.changes_before_first_run),
            ..Iteration::default()
        });
        self.last_error = summarise(&failures, run);
        self.last_run = Some(run.clone());
        self.record_tested(run);
        if run.succeeded() {
            self.last_error = None;
            self.finished = Some(Finish {
                success: true,
                reason: format!("{} tests passed", passed.len()),
                error: None,
            });
            return;
        }
        // A code edit that breaks a test that passed before is undone.
        if let Some(previous) = self.previous_code.take() {
            let names: Vec<String> = self.anchors.difference(&passed).cloned().collect();
            if !names.is_empty() {
                self.code = Some(previous);
                self.note(format!(
                    "code: reverted an edit that broke {}",
                    names.join(", ")
                ));
                self.queue.push_back(Action::FixCode {
                    failures: self.last_logic_routes(),
                    passing: self.anchors.iter().cloned().collect(),
                    rejected: vec![format!(
                        "your last edits made these passing tests fail, so they were undone: {}",
                        names.join(", ")
                    )],
                });
                return;
            }
        }
        // Tests that call a function the script does not define test a guess, not the contract:
        // no code fix should add the function, so new tests are written instead.
        let guessed: BTreeSet<String> = run
            .failures()
            .flat_map(|failure| &failure.faults)
            .filter_map(|fault| match fault {
                Fault::MissingFromSolution { name } => Some(name.clone()),
                _ => None,
            })
            .collect();
        if !guessed.is_empty() {
            let names: Vec<String> = guessed.iter().map(|name| format!("`{name}`")).collect();
            let why = format!(
                "the tests used {} from `solution`, which does not define it: test only what the contract promises, running the script through `run_solution`",
                names.join(", ")
            );
            self.note(format!("tests: dropped; {why}"));
            self.tests = None;
            self.test_notes.push(why);
            return;
        }
        if failures.is_empty() {
            let why = if run.results.is_empty() {
                "no test ran: the file must define pytest test functions".to_owned()
            } else {
                "every test was skipped or xfailed; skips are not passes".to_owned()
            };
            self.last_error = Some(why.clone());
            self.tests = None;
            self.test_notes.push(why);
            return;
        }
        self.anchors = passed;
        self.diagnosed.clone_from(&failures);
        self.queue.push_back(Action::Diagnose {
            failures,
            passing: self.anchors.iter().cloned().collect(),
            disagreement: None,
        });
    }

    pub(super) fn on_diagnosed(&mut self, verdicts: &[Diagnosis]) {
        let Some(run) = &self.last_run else { return };
        let mut logic = Vec::new();
        let mut tests = Vec::new();
        let mut new_packages = Vec::new();
        let mut exhausted = Vec::new();
        for failure in run.failures() {
            let base = |id: &str| id.split('[').next().unwrap_or(id).to_owned();
            let verdict = verdicts
                .iter()
                .find(|d| base(&d.test_id) == base(&failure.id) || failure.id.ends_with(&d.test_id))
                .cloned()
                .unwrap_or_else(|| Diagnosis {
                    test_id: failure.id.clone(),
                    kind: FailureKind::Logic,
                    evidence: "the diagnosis did not cover this test".to_owned(),
                    fix: "make the script do what the test checks, if the task asks for it"
                        .to_owned(),
                    packages: Vec::new(),
                });
            let adds: Vec<String> = verdict
                .packages
                .iter()
                .filter(|p| !self.packages.contains(*p))
                .cloned()
                .collect();
            let script_at_fault = script_at_fault(failure);
            let kind = fixer_of(failure, verdict.kind, adds.is_empty(), script_at_fault);
            let input_notes = failure.input_notes();
            let signature = Signature::new(&failure.id, &failure.output);
            let route = match self.reclassifier.route(&signature, kind) {
                Decision::Fix(mut route)
                    if script_at_fault && route.kind == FailureKind::TestError =>
                {
                    route.kind = FailureKind::Logic;
                    route
                }
                Decision::Fix(route) => route,
                Decision::Exhausted { .. } => {
                    exhausted.push(failure.id.clone());
                    continue;
                }
            };
            let routed = RoutedFailure {
                test_id: failure.id.clone(),
                output: failure.output.clone(),
                evidence: verdict.evidence.clone(),
                fix: verdict.fix.clone(),
                kind: route.kind,
                reclassified_from: route
                    .reclassified_from
                    .or((kind != verdict.kind).then_some(verdict.kind)),
                trace: failure.trace.clone(),
                function: None,
                input_notes,
            };
            match route.kind {
                FailureKind::Environment => {
                    self.reclassifier
                        .record_fix(&signature, FailureKind::Environment);
                    new_packages.extend(adds);
                }
                FailureKind::Logic => logic.push(routed.clone()),
                FailureKind::TestError => tests.push(routed.clone()),
            }
            if let Some(iteration) = self.history.last_mut() {
                iteration.routes.push(routed);
            }
        }
        if !new_packages.is_empty() {
            self.note(format!("environment: added {}", new_packages.join(", ")));
            self.add_packages(new_packages);
        }
        self.queue_code_fix(logic);
        if !tests.is_empty() {
            self.pending_tests.clone_from(&tests);
            self.queue.push_back(Action::FixTests {
                failures: tests,
                rejected: Vec::new(),
            });
        }
        if !exhausted.is_empty() && self.queue.is_empty() && self.env_ready {
            let reason = format!(
                "{} still fail after both code and test fixes",
                exhausted.join(", ")
            );
            let action = self.escalate(&reason);
            self.queue.push_back(action);
        }
    }
}

/// The contract test failed, or the harness could not read an output as its declared type, or
/// the script crashed on a name it never defined: whatever a test expects, the script is at
/// fault, and no test fix can change that, so such a failure never goes to the test fixer.
fn script_at_fault(failure: &TestResult) -> bool {
    failure.id.starts_with(CONTRACT_TEST_FILE)
        || failure
            .faults
            .iter()
            .any(|f| matches!(f, Fault::OutputType | Fault::UndefinedName))
}

/// The fixer a failure the model diagnosed as `diagnosed` goes to by what its report shows,
/// before the reclassifier weighs the fixes it has survived.
fn fixer_of(
    failure: &TestResult,
    diagnosed: FailureKind,
    nothing_to_add: bool,
    script_at_fault: bool,
) -> FailureKind {
    let mut kind = diagnosed;
    // Nothing to install (the import itself is wrong), or nothing missing: packages cannot
    // change a wrong value or a crash of the script's own making, and a test run spent on them
    // (a pin to an old pandas for an `AttributeError`) is lost.
    if kind == FailureKind::Environment
        && (nothing_to_add || !failure.faults.contains(&Fault::MissingDependency))
    {
        kind = FailureKind::Logic;
    }
    if script_at_fault && kind == FailureKind::TestError {
        kind = FailureKind::Logic;
    }
    // The script failed on files the test wrote off the task's data (the harness checked them
    // against the samples): the test is what must change, whatever the diagnosis read into the
    // crash.
    if !script_at_fault
        && failure
            .faults
            .iter()
            .any(|f| matches!(f, Fault::TestInput { .. }))
    {
        kind = FailureKind::TestError;
    }
    kind
}

fn summarise(failures: &[FailedTest], run: &TestRun) -> Option<String> {
    let mut text = String::new();
    for failure in failures {
        let outcome = match failure.outcome {
            TestOutcome::CollectionError => "collection error",
            TestOutcome::Error => "error",
            TestOutcome::XPassed => "unexpected pass",
            _ => "failed",
        };
        let _ = writeln!(
            text,
            "{} ({outcome}):\n{}",
            failure.test_id,
            failure.output.trim_end()
        );
    }
    if text.is_empty() {
        text.clone_from(&run.output);
    }
    if text.len() > LAST_ERROR_LIMIT {
        let mut cut = text.len() - LAST_ERROR_LIMIT;
        while !text.is_char_boundary(cut) {
            cut += 1;
        }
        text = format!("[... {cut} bytes cut]\n{}", &text[cut..]);
    }
    (!text.trim().is_empty()).then_some(text)
}
