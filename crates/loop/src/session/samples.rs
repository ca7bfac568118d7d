//! The script tried on the samples before any test is written (`limits.sample_fixes`): a
//! script that crashes there, or writes an output that is not of its declared type, is wrong
//! whatever a test would expect, so it is fixed from what the run printed before a test is
//! written or a test run spent on it. Scripts are tried until the tests are written (not with
//! candidates, which run on the samples anyway); after `sample_fixes` fixes the tests take
//! over.

use super::Session;
use super::state::hash_of;
use crate::protocol::{
    Action, CandidateOutput, FailedTest, FailureKind, RoutedFailure, TestOutcome,
};

/// The id the failure of a run on the samples goes by in the fix prompt and the history.
pub const SAMPLE_RUN_ID: &str = "solution.py run on the samples";

/// The functions the units skeleton writes itself (`templates/loop/_units.j2` and
/// `_skeleton_io.j2`), which the model is told to keep: a failure raised in one of them is not
/// fixed there alone (its cause is what a unit returned).
pub const SKELETON_FUNCTIONS: [&str; 4] =
    ["main", "write_rows", "default_outputs_dir", "parse_bool"];

/// Where the tries on the samples stand.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct SampleTries {
    /// The script last tried (its hash).
    tried: Option<u64>,
    /// Tries so far.
    tries: u32,
    /// Fixes asked for so far.
    fixes: u32,
    /// A failure is fixed in the function it was raised in alone (the script's units, with
    /// `--units`): the fix may not change the rest of the script.
    pub(super) in_units: bool,
}

impl Session {
    /// The same session, fixing a failure on the samples in the function it was raised in
    /// alone (`--units`: a unit is fixed on its own, the rest of the script kept as it is).
    #[must_use]
    pub fn fixing_units(mut self) -> Self {
        self.samples.in_units = true;
        self
    }

    /// Times a script was run on the samples before the tests.
    pub fn sample_tries(&self) -> u32 {
        self.samples.tries
    }

    /// The next try on the samples, if one is due: sample fixes asked for, no test written or
    /// run yet, no candidates still being chosen among, and the current script not tried yet.
    pub(super) fn sample_action(&self) -> Option<Action> {
        if self.limits.sample_fixes == 0
            || self.runs > 0
            || self.tests.is_some()
            || self.selection.is_some()
        {
            return None;
        }
        let code = self.code.as_ref()?;
        if self.samples.tried == Some(hash_of(code)) {
            return None;
        }
        Some(Action::TrySamples {
            script: code.clone(),
        })
    }

    pub(super) fn on_samples_tried(&mut self, output: &CandidateOutput) {
        let Some(code) = &self.code else { return };
        self.samples.tried = Some(hash_of(code));
        self.samples.tries += 1;
        if output.ok || output.not_runnable {
            return;
        }
        self.last_error = Some(output.summary.clone());
        if self.samples.fixes >= self.limits.sample_fixes {
            self.note(format!(
                "samples: the script still fails on them after {} fixes; the tests take over",
                self.samples.fixes
            ));
            return;
        }
        self.samples.fixes += 1;
        self.note(format!(
            "samples: the script failed on them; code fix {} of {}",
            self.samples.fixes, self.limits.sample_fixes
        ));
        self.diagnosed = vec![FailedTest {
            test_id: SAMPLE_RUN_ID.to_owned(),
            outcome: TestOutcome::Failed,
            output: output.summary.clone(),
            trace: None,
            input_notes: Vec::new(),
        }];
        // What to fix is the template's to say (`fix_code.j2`, by the id): nothing was
        // diagnosed.
        self.queue_code_fix(vec![RoutedFailure {
            test_id: SAMPLE_RUN_ID.to_owned(),
            output: output.summary.clone(),
            evidence: String::new(),
            fix: String::new(),
            kind: FailureKind::Logic,
            reclassified_from: None,
            trace: None,
            function: output
                .failed_in
                .clone()
                .filter(|f| self.samples.in_units && !SKELETON_FUNCTIONS.contains(&f.as_str())),
            input_notes: Vec::new(),
        }]);
    }
}
