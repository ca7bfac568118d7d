//! The session's state and its two operations: [`Session::next`] and [`Session::apply`].

use std::collections::hash_map::DefaultHasher;
use std::collections::{BTreeSet, HashSet, VecDeque};
use std::hash::{Hash, Hasher};

use serde::{Deserialize, Serialize};

use super::Limits;
use crate::protocol::{Action, Event, FailedTest, Finish, Plan, RoutedFailure, TestRun};
use crate::reclassify::Reclassifier;

/// Escalations a run makes at most: new tests, a new script, new tests, a new script.
const MAX_ESCALATIONS: u32 = 4;

/// How much of the last error a new script is told about.
const DROPPED_ERROR_LIMIT: usize = 1200;

/// The first `limit` bytes of `text` (at a character boundary), marked when cut.
fn head(text: &str, limit: usize) -> String {
    if text.len() <= limit {
        return text.to_owned();
    }
    let mut cut = limit;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{}\n[... cut]", &text[..cut])
}

/// The file of the harness's contract test (the script runs on the samples and writes every
/// declared output with its type).
pub const CONTRACT_TEST_FILE: &str = "test_contract.py";

/// The file of the harness's fixtures (`run_solution`), beside the tests.
pub const CONFTEST_FILE: &str = "conftest.py";

/// What happened in one test run and the fixes that followed it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Iteration {
    /// 1-based run number.
    pub number: u32,
    /// Tests that passed.
    pub passed: usize,
    /// Tests that need a diagnosis.
    pub failed: usize,
    /// Each failure's route (diagnosis, possibly reclassified).
    pub routes: Vec<RoutedFailure>,
    /// What changed after the run, in words (for the first run, also what changed before it).
    pub changes: Vec<String>,
}

/// The loop's state. See the module documentation for the rules.
#[derive(Debug, Clone)]
pub struct Session {
    pub(super) limits: Limits,
    pub(super) plan: Planning,
    pub(super) code: Option<String>,
    pub(super) tests: Option<String>,
    pub(super) packages: BTreeSet<String>,
    /// Packages the index did not have, in the order they were found missing.
    pub(super) missing: Vec<String>,
    /// The user's base packages: never dropped.
    pub(super) base_packages: BTreeSet<String>,
    /// The packages of the last environment that was built.
    pub(super) installed: BTreeSet<String>,
    /// Requirements dropped because they could not be installed: not added again.
    pub(super) uninstallable: BTreeSet<String>,
    /// Environments that could not be built.
    pub(super) install_failures: usize,
    /// Debian packages the script asked for and the environment gets.
    pub(super) system_packages: BTreeSet<String>,
    /// Every Debian package asked for so far: a replacement is never one tried before.
    pub(super) system_tried: BTreeSet<String>,
    /// The model's replacements: one that cannot be had either is dropped, not replaced again.
    pub(super) system_replacements: BTreeSet<String>,
    /// What the run changed on its own that the user should know (dropped system packages).
    pub(super) notes: Vec<String>,
    pub(super) env_ready: bool,
    pub(super) runs: u32,
    pub(super) tokens: u64,
    pub(super) reclassifier: Reclassifier,
    pub(super) ran: HashSet<u64>,
    pub(super) last_run: Option<TestRun>,
    /// The failures of the last run sent to a diagnosis, as it was shown them: the fixes that
    /// follow are shown the same run.
    pub(super) diagnosed: Vec<FailedTest>,
    pub(super) anchors: BTreeSet<String>,
    pub(super) previous_code: Option<String>,
    pub(super) queue: VecDeque<Action>,
    pub(super) code_notes: Vec<String>,
    pub(super) test_notes: Vec<String>,
    pub(super) pending_logic: Vec<RoutedFailure>,
    pub(super) pending_tests: Vec<RoutedFailure>,
    pub(super) retried_code_fix: bool,
    pub(super) retried_test_fix: bool,
    pub(super) escalations: u32,
    pub(super) last_error: Option<String>,
    pub(super) finished: Option<Finish>,
    pub(super) history: Vec<Iteration>,
    /// Changes made before the first test run (the candidates' grouping), recorded with it.
    pub(super) changes_before_first_run: Vec<String>,
    /// Candidate scripts not chosen among yet (`--candidates`).
    pub(super) selection: Option<super::candidates::Selection>,
    /// Every script a test run ran and how it did: a failed generation hands back the best.
    pub(super) tested: Vec<super::handback::Tested>,
    /// The tries on the samples before the tests (`limits.sample_fixes`).
    pub(super) samples: super::samples::SampleTries,
}

/// Where the plan stands: the first script waits for it unless it is skipped (`--no-plan`).
#[derive(Debug, Clone)]
pub(super) enum Planning {
    /// Not asked for yet.
    Wanted,
    /// Never asked for.
    Skipped,
    /// The model's plan.
    Made(Plan),
}

impl Session {
    /// A session that starts by planning; `base_packages` are always installed.
    pub fn new(limits: Limits, base_packages: &[String]) -> Self {
        Session {
            limits,
            plan: Planning::Wanted,
            code: None,
            tests: None,
            packages: base_packages.iter().cloned().collect(),
            missing: Vec::new(),
            base_packages: base_packages.iter().cloned().collect(),
            installed: BTreeSet::new(),
            uninstallable: BTreeSet::new(),
            install_failures: 0,
            system_packages: BTreeSet::new(),
            system_tried: BTreeSet::new(),
            system_replacements: BTreeSet::new(),
            notes: Vec::new(),
            env_ready: false,
            runs: 0,
            tokens: 0,
            reclassifier: Reclassifier::new(),
            ran: HashSet::new(),
            last_run: None,
            diagnosed: Vec::new(),
            anchors: BTreeSet::new(),
            previous_code: None,
            queue: VecDeque::new(),
            code_notes: Vec::new(),
            test_notes: Vec::new(),
            pending_logic: Vec::new(),
            pending_tests: Vec::new(),
            retried_code_fix: false,
            retried_test_fix: false,
            escalations: 0,
            last_error: None,
            finished: None,
            history: Vec::new(),
            changes_before_first_run: Vec::new(),
            selection: None,
            tested: Vec::new(),
            samples: super::samples::SampleTries::default(),
        }
    }

    /// The same session, writing its first script without asking for a plan (`--no-plan`).
    #[must_use]
    pub fn without_plan(mut self) -> Self {
        self.plan = Planning::Skipped;
        self
    }

    /// The plan, once made.
    pub fn plan(&self) -> Option<&Plan> {
        match &self.plan {
            Planning::Made(plan) => Some(plan),
            Planning::Wanted | Planning::Skipped => None,
        }
    }
    /// The current script.
    pub fn code(&self) -> Option<&str> {
        self.code.as_deref()
    }
    /// The current tests.
    pub fn tests(&self) -> Option<&str> {
        self.tests.as_deref()
    }
    /// The distributions the environment has (or will have).
    pub fn packages(&self) -> Vec<String> {
        self.packages.iter().cloned().collect()
    }
    /// The Debian packages the environment has (or will have).
    pub fn system_packages(&self) -> Vec<String> {
        self.system_packages.iter().cloned().collect()
    }
    /// What the run changed on its own that the user should know, in words.
    pub fn notes(&self) -> &[String] {
        &self.notes
    }
    /// Test runs so far.
    pub fn runs(&self) -> u32 {
        self.runs
    }
    /// Tokens spent so far.
    pub fn tokens(&self) -> u64 {
        self.tokens
    }
    /// The most recent test run.
    pub fn last_run(&self) -> Option<&TestRun> {
        self.last_run.as_ref()
    }
    /// The failures of the last run sent to a diagnosis: the run its fixes answer.
    pub fn diagnosed(&self) -> &[FailedTest] {
        &self.diagnosed
    }
    /// The tests that passed in the last run and must keep passing.
    pub fn anchors(&self) -> Vec<String> {
        self.anchors.iter().cloned().collect()
    }
    /// One entry per test run.
    pub fn history(&self) -> &[Iteration] {
        &self.history
    }

    /// What to do next. Returns [`Action::Finish`] forever once finished.
    pub fn next_action(&mut self) -> Action {
        if let Some(finish) = &self.finished {
            return Action::Finish(finish.clone());
        }
        if let Some(budget) = self.limits.token_budget
            && self.tokens >= budget
        {
            return self.finish(false, format!("the token budget ({budget}) is spent"));
        }
        // After the last test run allowed, only its diagnosis is worth a call: no fix could be
        // tested.
        if self.runs >= self.limits.max_iterations
            && !matches!(self.queue.front(), Some(Action::Diagnose { .. }))
        {
            let max = self.limits.max_iterations;
            return self.finish(false, format!("max_iterations ({max}) reached"));
        }
        if let Some(action) = self.queue.pop_front() {
            return action;
        }
        if matches!(self.plan, Planning::Wanted) {
            return Action::Plan;
        }
        if self.code.is_none() {
            let notes = std::mem::take(&mut self.code_notes);
            return self.write_code(notes);
        }
        if !self.env_ready {
            return Action::PrepareEnvironment {
                packages: self.packages(),
                system_packages: self.system_packages(),
            };
        }
        if let Some(action) = self.selection_action() {
            return action;
        }
        if let Some(action) = self.sample_action() {
            return action;
        }
        if self.limits.skip_tests {
            return self.finish(true, "tests skipped on request".to_owned());
        }
        if self.tests.is_none() {
            return Action::WriteTests {
                notes: std::mem::take(&mut self.test_notes),
            };
        }
        if self.ran.contains(&self.fingerprint()) {
            return self.escalate("the fixes left code, tests and packages exactly as they were");
        }
        if self.runs >= self.limits.max_iterations {
            let max = self.limits.max_iterations;
            return self.finish(false, format!("max_iterations ({max}) reached"));
        }
        Action::RunTests
    }

    /// Ends the generation as failed: the driver could not carry out a step (for example the
    /// model's answers stayed unusable after the repair and retry rounds).
    pub fn abort(&mut self, reason: String) {
        let error = Some(reason.clone());
        self.finished = Some(Finish {
            success: false,
            reason,
            error,
        });
    }

    /// Records what the driver observed.
    pub fn apply(&mut self, event: Event) {
        match event {
            Event::Planned { plan, usage } => {
                self.tokens += usage.total();
                self.plan = Planning::Made(plan);
            }
            Event::CodeWritten {
                code,
                packages,
                system_packages,
                usage,
            } => {
                self.tokens += usage.total();
                self.code = Some(code);
                self.previous_code = None;
                self.anchors.clear();
                self.add_packages(packages);
                self.add_system_packages(&system_packages);
            }
            Event::TestsWritten { tests, usage } => {
                self.tokens += usage.total();
                self.tests = Some(tests);
                self.anchors.clear();
            }
            Event::EnvironmentReady { usage } => {
                self.tokens += usage.total();
                self.env_ready = true;
                self.installed.clone_from(&self.packages);
            }
            Event::InstallFailed { package, error } => {
                self.on_install_failed(package.as_deref(), &error);
            }
            Event::PackageMissing { package, error } => self.on_package_missing(package, error),
            Event::PackageReplaced {
                package,
                replacement,
                usage,
            } => {
                self.tokens += usage.total();
                self.on_package_replaced(&package, replacement);
            }
            Event::SystemPackagesUnusable {
                packages,
                why,
                message,
                replaceable,
                error,
            } => self.on_system_packages_unusable(&packages, why, message, replaceable, &error),
            Event::SystemPackageReplaced {
                package,
                replacement,
                why,
                usage,
            } => {
                self.tokens += usage.total();
                self.on_system_package_replaced(package, replacement, &why);
            }
            Event::CandidatesWritten { candidates, usage } => {
                self.tokens += usage.total();
                self.on_candidates_written(candidates);
            }
            Event::CandidatesRan { outputs } => self.on_candidates_ran(outputs),
            Event::SamplesTried { output } => self.on_samples_tried(&output),
            Event::CandidatesTested { runs } => self.on_candidates_tested(&runs),
            Event::TestsRan(run) => self.on_tests_ran(&run),
            Event::Diagnosed { diagnoses, usage } => {
                self.tokens += usage.total();
                self.on_diagnosed(&diagnoses);
            }
            Event::CodeEdited {
                edits,
                packages,
                usage,
            } => {
                self.tokens += usage.total();
                self.on_code_edited(&edits, packages);
            }
            Event::TestsPatched {
                functions,
                imports,
                usage,
            } => {
                self.tokens += usage.total();
                self.on_tests_patched(&functions, &imports);
            }
        }
    }

    /// Throws away the tests, then the code, when fixing in place got nowhere, twice each (the
    /// notes differ each time, so a model at a low temperature writes something new); then
    /// gives up. A new script is told how the dropped one failed.
    pub(super) fn escalate(&mut self, reason: &str) -> Action {
        self.escalations += 1;
        self.note(format!("escalation: {reason}"));
        if self.escalations > MAX_ESCALATIONS {
            return self.finish(false, format!("gave up: {reason}"));
        }
        let round = self.escalations.div_ceil(2);
        if self.escalations % 2 == 1 {
            self.tests = None;
            return Action::WriteTests {
                notes: vec![format!(
                    "the previous tests were dropped ({round} of 2): {reason}"
                )],
            };
        }
        self.code = None;
        self.previous_code = None;
        let failure = self
            .last_error
            .as_deref()
            .map(|error| format!("; it failed with:\n{}", head(error, DROPPED_ERROR_LIMIT)))
            .unwrap_or_default();
        self.write_code(vec![format!(
            "the previous script was dropped ({round} of 2): {reason}{failure}"
        )])
    }

    pub(super) fn finish(&mut self, success: bool, reason: String) -> Action {
        if !success {
            self.hand_back_best();
        }
        let finish = Finish {
            success,
            reason,
            error: if success {
                None
            } else {
                self.last_error.clone()
            },
        };
        self.finished = Some(finish.clone());
        Action::Finish(finish)
    }

    /// Records a change with the last test run; one made before the first run goes with the
    /// first.
    pub(super) fn note(&mut self, change: String) {
        match self.history.last_mut() {
            Some(iteration) => iteration.changes.push(change),
            None => self.changes_before_first_run.push(change),
        }
    }

    pub(super) fn fingerprint(&self) -> u64 {
        hash_of(&(&self.code, &self.tests, &self.packages))
    }
}

/// A hash of `value`, for telling whether something was seen before within one session.
pub(super) fn hash_of<T: Hash + ?Sized>(value: &T) -> u64 {
    let mut hasher = DefaultHasher::new();
    value.hash(&mut hasher);
    hasher.finish()
}
