//! What the session does with code edits and test patches.

use super::Session;
use crate::protocol::{Action, Edit, FailureKind, FunctionPatch, RoutedFailure};
use crate::pysrc::edit::apply_edits;
use crate::pysrc::splice::splice_functions;
use crate::reclassify::Signature;

impl Session {
    pub(super) fn on_code_edited(&mut self, edits: &[Edit], packages: Vec<String>) {
        let before = self.code.clone().unwrap_or_default();
        let report = apply_edits(&before, edits);
        if report.changed(&before) {
            self.previous_code = Some(before);
            self.code = Some(report.code);
            self.add_packages(packages);
            for failure in std::mem::take(&mut self.pending_logic) {
                let signature = Signature::new(&failure.test_id, &failure.output);
                self.reclassifier.record_fix(&signature, FailureKind::Logic);
            }
            let applied = report.outcomes.iter().filter(|o| o.applied()).count();
            self.note(format!("code: {applied} of {} edits applied", edits.len()));
            self.retried_code_fix = false;
        } else if !self.retried_code_fix {
            self.retried_code_fix = true;
            let whole_script = edits.len() == 1 && edits[0].find == before;
            let rejected = if whole_script || edits.is_empty() {
                vec![
                    "your answer left the script unchanged: make the change the fixes ask for"
                        .to_owned(),
                ]
            } else {
                report.problems(edits)
            };
            self.queue.push_front(Action::FixCode {
                failures: self.pending_logic.clone(),
                passing: self.anchors.iter().cloned().collect(),
                rejected,
            });
        } else {
            self.note("code: edits could not be applied".to_owned());
            self.pending_logic.clear();
        }
    }

    pub(super) fn on_tests_patched(&mut self, functions: &[FunctionPatch], imports: &[String]) {
        let before = self.tests.clone().unwrap_or_default();
        let report = splice_functions(&before, functions, imports);
        if report.source != before {
            self.tests = Some(report.source);
            for failure in std::mem::take(&mut self.pending_tests) {
                let signature = Signature::new(&failure.test_id, &failure.output);
                self.reclassifier
                    .record_fix(&signature, FailureKind::TestError);
            }
            self.note(format!("tests: rewrote {}", report.replaced.join(", ")));
            self.retried_test_fix = false;
        } else if !self.retried_test_fix {
            self.retried_test_fix = true;
            let mut rejected: Vec<String> = report
                .missing
                .iter()
                .map(|name| format!("there is no test function `{name}` in the file"))
                .collect();
            if rejected.is_empty() {
                rejected.push("the new functions were identical to the old ones".to_owned());
            }
            self.queue.push_front(Action::FixTests {
                failures: self.pending_tests.clone(),
                rejected,
            });
        } else {
            // The test fixer twice found nothing to change in the test: the test may well be
            // right. Its failures go to the code fixer, which is told the test stands; a later
            // diagnosis of the same failure as a test error is routed to the code as well.
            let moved: Vec<RoutedFailure> = std::mem::take(&mut self.pending_tests)
                .into_iter()
                .map(|failure| {
                    let signature = Signature::new(&failure.test_id, &failure.output);
                    self.reclassifier
                        .record_fix(&signature, FailureKind::TestError);
                    RoutedFailure {
                        kind: FailureKind::Logic,
                        reclassified_from: Some(FailureKind::TestError),
                        ..failure
                    }
                })
                .collect();
            self.note(
                "tests: patches could not be applied; the failures go to the code fixer".to_owned(),
            );
            self.queue_code_fix(moved);
        }
    }

    /// Queues a code fix for `failures` (none when there are none), with the passing tests as
    /// anchors.
    pub(super) fn queue_code_fix(&mut self, failures: Vec<RoutedFailure>) {
        if failures.is_empty() {
            return;
        }
        self.pending_logic.clone_from(&failures);
        self.queue.push_back(Action::FixCode {
            failures,
            passing: self.anchors.iter().cloned().collect(),
            rejected: Vec::new(),
        });
    }

    pub(super) fn last_logic_routes(&self) -> Vec<RoutedFailure> {
        let is_logic = |r: &&RoutedFailure| r.kind == FailureKind::Logic;
        self.history
            .iter()
            .rev()
            .find(|i| i.routes.iter().any(|r| is_logic(&r)))
            .map(|i| i.routes.iter().filter(is_logic).cloned().collect())
            .unwrap_or_default()
    }
}
