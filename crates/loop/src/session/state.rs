//! The session's state and its two operations: [`Session::next`] and [`Session::apply`].

use std::collections::hash_map::DefaultHasher;
use std::collections::{BTreeSet, HashSet, VecDeque};
use std::fmt::Write as _;
use std::hash::{Hash, Hasher};

use serde::{Deserialize, Serialize};

use super::types::{
    Action, Diagnosis, Event, FailedTest, Finish, Limits, RoutedFailure, TestOutcome, TestRun,
};
use crate::edit::{Edit, apply_edits};
use crate::prompt::Plan;
use crate::reclassify::{Decision, FailureKind, Reclassifier, Signature};
use crate::solution_imports::name_missing_from_solution;
use crate::splice::{FunctionPatch, splice_functions};

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

/// Missing packages a run replaces at most; each replacement costs a model call and a rebuild.
const MAX_MISSING_PACKAGES: usize = 3;

/// What the harness (`templates/harness/conftest.py.j2`) says when the script wrote an output
/// that is not of its declared type, such as a pandas Series where one float belongs.
pub(crate) const OUTPUT_TYPE_ERROR: &str = "but solution.py wrote";

/// Whether a test's report shows the script itself crashing on a name it never defined
/// (`NameError`, `UnboundLocalError` raised in `solution.py`): a defect of the script whatever
/// input the test gave it, so no test fix can help.
fn undefined_name_in_the_script(output: &str) -> bool {
    // `/solution.py"` or `"solution.py"`: not `test_solution.py"`.
    (output.contains("/solution.py\"") || output.contains("\"solution.py\""))
        && ["NameError: name '", "UnboundLocalError: "]
            .iter()
            .any(|error| output.contains(error))
}

/// The file of the harness's contract test (the script runs on the samples and writes every
/// declared output with its type).
pub const CONTRACT_TEST_FILE: &str = "test_contract.py";

/// Bytes of failure output kept as the "last error".
const LAST_ERROR_LIMIT: usize = 8_000;

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
    /// What changed after the run, in words.
    pub changes: Vec<String>,
}

/// The loop's state. See the module documentation for the rules.
#[derive(Debug, Clone)]
pub struct Session {
    limits: Limits,
    plan: Option<Plan>,
    code: Option<String>,
    tests: Option<String>,
    packages: BTreeSet<String>,
    /// Packages the index did not have, in the order they were found missing.
    missing: Vec<String>,
    env_ready: bool,
    runs: u32,
    tokens: u64,
    reclassifier: Reclassifier,
    ran: HashSet<u64>,
    last_run: Option<TestRun>,
    anchors: BTreeSet<String>,
    previous_code: Option<String>,
    queue: VecDeque<Action>,
    code_notes: Vec<String>,
    test_notes: Vec<String>,
    pending_logic: Vec<RoutedFailure>,
    pending_tests: Vec<RoutedFailure>,
    retried_code_fix: bool,
    retried_test_fix: bool,
    escalations: u32,
    last_error: Option<String>,
    finished: Option<Finish>,
    history: Vec<Iteration>,
}

impl Session {
    /// A session that starts by planning; `base_packages` are always installed.
    pub fn new(limits: Limits, base_packages: &[String]) -> Self {
        Session {
            limits,
            plan: None,
            code: None,
            tests: None,
            packages: base_packages.iter().cloned().collect(),
            missing: Vec::new(),
            env_ready: false,
            runs: 0,
            tokens: 0,
            reclassifier: Reclassifier::new(),
            ran: HashSet::new(),
            last_run: None,
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
        }
    }

    /// The plan, once made.
    pub fn plan(&self) -> Option<&Plan> {
        self.plan.as_ref()
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
        if self.plan.is_none() {
            return Action::Plan;
        }
        if self.code.is_none() {
            return Action::WriteCode {
                notes: std::mem::take(&mut self.code_notes),
            };
        }
        if !self.env_ready {
            return Action::PrepareEnvironment {
                packages: self.packages(),
            };
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
                self.plan = Some(plan);
            }
            Event::CodeWritten {
                code,
                packages,
                usage,
            } => {
                self.tokens += usage.total();
                self.code = Some(code);
                self.previous_code = None;
                self.anchors.clear();
                self.add_packages(packages);
            }
            Event::TestsWritten { tests, usage } => {
                self.tokens += usage.total();
                self.tests = Some(tests);
                self.anchors.clear();
            }
            Event::EnvironmentReady { usage } => {
                self.tokens += usage.total();
                self.env_ready = true;
            }
            Event::PackageMissing { package, error } => self.on_package_missing(package, error),
            Event::PackageReplaced {
                package,
                replacement,
                usage,
            } => {
                self.tokens += usage.total();
                self.packages.remove(&package);
                self.env_ready = false;
                match replacement {
                    Some(other) if other != package && !self.missing.contains(&other) => {
                        self.note(format!("replaced missing package {package} with {other}"));
                        self.packages.insert(other);
                    }
                    _ => {
                        self.code = None;
                        self.code_notes.push(format!(
                            "the package `{package}` does not exist and has no replacement: write the script without it"
                        ));
                    }
                }
            }
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

    fn on_code_edited(&mut self, edits: &[Edit], packages: Vec<String>) {
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

    fn on_tests_patched(&mut self, functions: &[FunctionPatch], imports: &[String]) {
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
    fn queue_code_fix(&mut self, failures: Vec<RoutedFailure>) {
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

    fn on_tests_ran(&mut self, run: &TestRun) {
        self.runs += 1;
        self.ran.insert(self.fingerprint());
        let passed: BTreeSet<String> = run.passed().map(|r| r.id.clone()).collect();
        let failures: Vec<FailedTest> = run
            .failures()
            .map(|r| FailedTest {
                test_id: r.id.clone(),
                outcome: r.outcome,
                output: r.output.clone(),
            })
            .collect();
        self.history.push(Iteration {
            number: self.runs,
            passed: passed.len(),
            failed: failures.len(),
            ..Iteration::default()
        });
        self.last_error = summarise(&failures, run);
        self.last_run = Some(run.clone());
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
        let guessed: BTreeSet<String> = failures
            .iter()
            .filter_map(|failure| name_missing_from_solution(&failure.output))
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
        self.queue.push_back(Action::Diagnose {
            failures,
            passing: self.anchors.iter().cloned().collect(),
        });
    }

    fn on_diagnosed(&mut self, verdicts: &[Diagnosis]) {
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
            let mut kind = verdict.kind;
            let adds: Vec<String> = verdict
                .packages
                .iter()
                .filter(|p| !self.packages.contains(*p))
                .cloned()
                .collect();
            if kind == FailureKind::Environment && adds.is_empty() {
                kind = FailureKind::Logic; // nothing to install: the import itself is wrong
            }
            // The contract test failed, or the harness could not read an output as its declared
            // type: whatever a test expects, the script broke the contract, and no test fix can
            // change that, so such a failure never goes to the test fixer.
            let script_at_fault = failure.id.starts_with(CONTRACT_TEST_FILE)
                || failure.output.contains(OUTPUT_TYPE_ERROR)
                || undefined_name_in_the_script(&failure.output);
            if script_at_fault && kind == FailureKind::TestError {
                kind = FailureKind::Logic;
            }
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

    /// Throws away the tests, then the code, when fixing in place got nowhere, twice each (the
    /// notes differ each time, so a model at a low temperature writes something new); then
    /// gives up. A new script is told how the dropped one failed.
    fn escalate(&mut self, reason: &str) -> Action {
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
        Action::WriteCode {
            notes: vec![format!(
                "the previous script was dropped ({round} of 2): {reason}{failure}"
            )],
        }
    }

    fn finish(&mut self, success: bool, reason: String) -> Action {
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

    /// A package the index does not have is replaced by the model; one found missing before
    /// (the model named it again) or one too many ends the run instead of looping on model calls.
    fn on_package_missing(&mut self, package: String, error: String) {
        if self.missing.contains(&package) || self.missing.len() >= MAX_MISSING_PACKAGES {
            let tried = self.missing.join(", ");
            self.abort(format!(
                "the package `{package}` could not be installed, after replacing missing packages ({tried}): {error}"
            ));
            return;
        }
        self.missing.push(package.clone());
        self.queue
            .push_back(Action::ReplacePackage { package, error });
    }

    fn add_packages(&mut self, packages: Vec<String>) {
        for package in packages {
            if self.packages.insert(package) {
                self.env_ready = false;
            }
        }
    }

    fn note(&mut self, change: String) {
        if let Some(iteration) = self.history.last_mut() {
            iteration.changes.push(change);
        }
    }

    fn last_logic_routes(&self) -> Vec<RoutedFailure> {
        let is_logic = |r: &&RoutedFailure| r.kind == FailureKind::Logic;
        self.history
            .iter()
            .rev()
            .find(|i| i.routes.iter().any(|r| is_logic(&r)))
            .map(|i| i.routes.iter().filter(is_logic).cloned().collect())
            .unwrap_or_default()
    }

    fn fingerprint(&self) -> u64 {
        let mut hasher = DefaultHasher::new();
        self.code.hash(&mut hasher);
        self.tests.hash(&mut hasher);
        self.packages.hash(&mut hasher);
        hasher.finish()
    }
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
