//! The loop's protocol: what the [`Session`](crate::session::Session) asks the driver to do
//! ([`Action`]), what the driver reports back ([`Event`]), and the values both carry (test runs,
//! diagnoses, routed failures, code edits, test patches, the plan). The session and the driver
//! depend on these types, not on each other.

use serde::{Deserialize, Serialize};

/// The plan the model makes before writing code.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default, schemars::JsonSchema)]
pub struct Plan {
    /// What the script does, in a sentence or two.
    pub summary: String,
    /// The steps, in order.
    pub approach: Vec<String>,
    /// Situations in the data the script must handle.
    pub edge_cases: Vec<String>,
}

/// What is wrong, according to a diagnosis.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum FailureKind {
    /// The script is wrong: fix the code.
    Logic,
    /// Something is missing from the environment: add or replace packages.
    Environment,
    /// The test is wrong: fix the test.
    TestError,
}

impl FailureKind {
    /// The name used in prompts and reports.
    pub fn name(self) -> &'static str {
        match self {
            FailureKind::Logic => "logic",
            FailureKind::Environment => "environment",
            FailureKind::TestError => "test_error",
        }
    }
}

/// One requested change: replace the unique excerpt `find` with `replace`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default, schemars::JsonSchema)]
pub struct Edit {
    /// An exact excerpt of the current script, whole lines with their indentation.
    pub find: String,
    /// Its new text.
    pub replace: String,
}

/// A new version of one test function.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default, schemars::JsonSchema)]
pub struct FunctionPatch {
    /// `test_name`, or `ClassName.test_name` for a method; a `[param]` suffix is ignored.
    pub name: String,
    /// The whole function, decorators included, at any indentation.
    pub source: String,
}

/// Tokens one model call used.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// Prompt tokens.
    pub input_tokens: u64,
    /// Completion tokens.
    pub output_tokens: u64,
    /// Of the prompt tokens, those the provider's prompt cache served.
    #[serde(default)]
    pub cached_input_tokens: u64,
}

impl Usage {
    /// Both together.
    pub fn total(self) -> u64 {
        self.input_tokens + self.output_tokens
    }
}

impl std::ops::AddAssign for Usage {
    fn add_assign(&mut self, other: Usage) {
        self.input_tokens += other.input_tokens;
        self.output_tokens += other.output_tokens;
        self.cached_input_tokens += other.cached_input_tokens;
    }
}

/// How one test ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TestOutcome {
    /// Passed.
    Passed,
    /// An assertion or exception in the test body.
    Failed,
    /// A fixture (setup or teardown) failed.
    Error,
    /// Skipped: not a pass.
    Skipped,
    /// Expected failure: not a pass.
    XFailed,
    /// Unexpected pass of an xfail: not a pass either (the test contradicts itself).
    XPassed,
    /// The file could not be collected (syntax error, failing import).
    CollectionError,
}

/// What a failing test's report shows about the script, or about the files the test gave it
/// (see [`TestResult::new`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "fault", rename_all = "snake_case")]
pub enum Fault {
    /// The harness read an output that is not of its declared type: whatever a test expects,
    /// the script broke the contract.
    OutputType,
    /// The script crashed on a name it never defined (`NameError`, `UnboundLocalError` raised
    /// in `solution.py`): a defect of the script whatever input the test gave it.
    UndefinedName,
    /// The test used a name `solution` does not define: it tests a guess, not the contract.
    MissingFromSolution {
        /// The name.
        name: String,
    },
    /// Something the run needs is not installed here: a module that cannot be imported, a
    /// shared library or a program that cannot be found, a time zone the system lacks. Only
    /// then can an `environment` diagnosis be right: packages cannot change a wrong value.
    MissingDependency,
    /// The script failed on input files the test wrote that are off the task's data (a path
    /// that does not exist, a table without its sample's columns), as the harness checked them:
    /// the test, not the script, is to change.
    TestInput {
        /// What is wrong with the file, as the harness says it.
        note: String,
    },
}

/// One test's result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TestResult {
    /// pytest's node id (or the file, for a collection error).
    pub id: String,
    /// How it ended.
    pub outcome: TestOutcome,
    /// pytest's report for it (empty when it passed).
    pub output: String,
    /// What the report shows about the script.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub faults: Vec<Fault>,
    /// What the script's lines computed in the test's last run of it (`--trace-values`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<String>,
}

/// One run of the tests.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TestRun {
    /// Every result, collection errors included.
    pub results: Vec<TestResult>,
    /// The whole output, for the record and when nothing more specific is known.
    pub output: String,
}

impl TestRun {
    /// Passed tests.
    pub fn passed(&self) -> impl Iterator<Item = &TestResult> {
        self.results
            .iter()
            .filter(|r| r.outcome == TestOutcome::Passed)
    }

    /// Failures, errors, collection errors and xpasses: what needs a diagnosis.
    pub fn failures(&self) -> impl Iterator<Item = &TestResult> {
        self.results.iter().filter(|r| {
            matches!(
                r.outcome,
                TestOutcome::Failed
                    | TestOutcome::Error
                    | TestOutcome::CollectionError
                    | TestOutcome::XPassed
            )
        })
    }

    /// At least one test passed and nothing needs a diagnosis.
    pub fn succeeded(&self) -> bool {
        self.passed().next().is_some() && self.failures().next().is_none()
    }
}

/// A failing test handed to the diagnosis.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FailedTest {
    /// pytest's node id.
    pub test_id: String,
    /// Its outcome.
    pub outcome: TestOutcome,
    /// pytest's report for it.
    pub output: String,
    /// What the script's lines computed in it, when traced.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<String>,
    /// What the harness found wrong with the input files the test gave the script
    /// ([`Fault::TestInput`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub input_notes: Vec<String>,
}

/// The model's verdict on one failing test.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Diagnosis {
    /// The test it is about.
    pub test_id: String,
    /// What is wrong.
    pub kind: FailureKind,
    /// Why the model thinks so.
    pub evidence: String,
    /// What must change.
    pub fix: String,
    /// For environment failures: distributions to add.
    pub packages: Vec<String>,
}

/// A diagnosed failure on its way to a fixer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RoutedFailure {
    /// The failing test.
    pub test_id: String,
    /// Its report.
    pub output: String,
    /// The diagnosis' evidence (with a note when the failure was reclassified).
    pub evidence: String,
    /// The fix asked for.
    pub fix: String,
    /// The fixer it goes to.
    pub kind: FailureKind,
    /// The model's own label, when the reclassifier overrode it.
    pub reclassified_from: Option<FailureKind>,
    /// What the script's lines computed in the failing test, when traced.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<String>,
    /// The one function of the script the fix may change (a unit a run on the samples failed
    /// in, with `--units`); `None`: any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub function: Option<String>,
    /// What the harness found wrong with the test's input files ([`Fault::TestInput`]): when
    /// not empty, the test fixer is sent the failure for that reason, whatever the diagnosis said.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub input_notes: Vec<String>,
}

/// One of several scripts written for the same plan (`--candidates`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Candidate {
    /// `solution.py`.
    pub code: String,
    /// Distributions it needs (imports already mapped by the driver).
    pub packages: Vec<String>,
    /// Debian packages the model says it needs.
    #[serde(default)]
    pub system_packages: Vec<String>,
}

/// What a candidate computed when run on the samples.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CandidateOutput {
    /// It ran to the end and wrote every declared output with its type.
    pub ok: bool,
    /// Equal for candidates whose outputs are equal (numbers compared to 6 significant digits).
    pub digest: String,
    /// The outputs as a prompt shows them (or how the run failed), cut.
    pub summary: String,
    /// It could not be run on the samples at all (an input has no sample value): the tests
    /// are all there is to choose by.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub not_runnable: bool,
    /// Its outputs cut into cells ([`crate::agreement::cells`]), to tell how much candidates
    /// that computed different outputs still agree.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cells: Vec<u64>,
    /// The function of the script the run's exception was raised in, when the run failed under
    /// the where-runner and its traceback names one ([`crate::harness::raised_in`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failed_in: Option<String>,
}

/// Candidates that computed something else than the one the tests ran on, shown to the
/// diagnosis: the tests' expectations and the other scripts cannot both be right.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Disagreement {
    /// Candidates written.
    pub written: usize,
    /// Of them, the ones that computed what the tested script computed (itself included).
    pub agreeing: usize,
    /// What the tested script computed on the samples.
    pub tested: String,
    /// The other groups, largest first.
    pub others: Vec<OtherCandidates>,
}

/// Candidates that computed the same outputs, other than the tested script's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OtherCandidates {
    /// How many computed them.
    pub count: usize,
    /// What they computed on the samples.
    pub outputs: String,
    /// The code of one of them.
    pub code: String,
    /// How many of the tests it passed, of how many.
    pub passed: usize,
    /// Tests run on it.
    pub tests: usize,
}

/// What the driver must do next.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum Action {
    /// Ask for a plan; answer with [`Event::Planned`].
    Plan,
    /// Ask for the whole script (following the plan); answer with [`Event::CodeWritten`].
    /// `notes` says why a previous script was dropped, if one was.
    WriteCode {
        /// Why the code is written again.
        notes: Vec<String>,
    },
    /// Ask for `count` whole scripts, each sampled on its own; answer with
    /// [`Event::CandidatesWritten`].
    WriteCandidates {
        /// Why the code is written again.
        notes: Vec<String>,
        /// How many.
        count: u32,
    },
    /// Run each script on the samples; answer with [`Event::CandidatesRan`].
    RunCandidates {
        /// The scripts, in candidate order.
        scripts: Vec<String>,
    },
    /// Run the current script on the samples, before any test is written; answer with
    /// [`Event::SamplesTried`].
    TrySamples {
        /// The script.
        script: String,
    },
    /// Run the tests against each script; answer with [`Event::CandidatesTested`].
    TestCandidates {
        /// The scripts (one per group of candidates that agree), largest group first.
        scripts: Vec<String>,
    },
    /// Ask for the whole test file (without showing the code); answer with
    /// [`Event::TestsWritten`].
    WriteTests {
        /// Why the tests are written again.
        notes: Vec<String>,
    },
    /// Build (or reuse) the environment with these distributions; answer with
    /// [`Event::EnvironmentReady`], [`Event::PackageMissing`] or
    /// [`Event::SystemPackagesUnusable`].
    PrepareEnvironment {
        /// Distributions, sorted.
        packages: Vec<String>,
        /// Debian packages, sorted.
        #[serde(default)]
        system_packages: Vec<String>,
    },
    /// Ask which distribution replaces one that does not exist; answer with
    /// [`Event::PackageReplaced`].
    ReplacePackage {
        /// The name that failed.
        package: String,
        /// The installer's message.
        error: String,
    },
    /// Ask which Debian package replaces one that cannot be had; answer with
    /// [`Event::SystemPackageReplaced`].
    ReplaceSystemPackage {
        /// The package that cannot be had.
        package: String,
        /// Why, in words.
        why: String,
        /// apt's message, if any.
        message: String,
    },
    /// Run the tests; answer with [`Event::TestsRan`].
    RunTests,
    /// Ask for a diagnosis of these failures; answer with [`Event::Diagnosed`].
    Diagnose {
        /// The failures, in test order.
        failures: Vec<FailedTest>,
        /// Tests that pass and must keep passing.
        passing: Vec<String>,
        /// Other candidates that computed something else, when there were candidates.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        disagreement: Option<Disagreement>,
    },
    /// Ask for code edits; answer with [`Event::CodeEdited`].
    FixCode {
        /// What to fix.
        failures: Vec<RoutedFailure>,
        /// Tests that pass and must keep passing.
        passing: Vec<String>,
        /// Why earlier edits were not used.
        rejected: Vec<String>,
    },
    /// Ask for new versions of these test functions; answer with [`Event::TestsPatched`].
    FixTests {
        /// What to fix.
        failures: Vec<RoutedFailure>,
        /// Why an earlier answer was not used.
        rejected: Vec<String>,
    },
    /// Stop.
    Finish(Finish),
}

/// How a generation ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Finish {
    /// The tests passed (or tests were skipped on request and the environment was built).
    pub success: bool,
    /// Why it stopped.
    pub reason: String,
    /// The last real error (test output or failure), when it did not succeed.
    pub error: Option<String>,
}

/// What the driver observed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event {
    /// The plan.
    Planned {
        /// It.
        plan: Plan,
        /// Tokens.
        usage: Usage,
    },
    /// A whole script.
    CodeWritten {
        /// `solution.py`.
        code: String,
        /// Distributions the script needs (imports already mapped by the driver).
        packages: Vec<String>,
        /// Debian packages the model says the script needs.
        #[serde(default)]
        system_packages: Vec<String>,
        /// Tokens.
        usage: Usage,
    },
    /// Several whole scripts (at least one), in the order asked.
    CandidatesWritten {
        /// Them.
        candidates: Vec<Candidate>,
        /// Tokens.
        usage: Usage,
    },
    /// What each candidate computed on the samples, in candidate order.
    CandidatesRan {
        /// Them.
        outputs: Vec<CandidateOutput>,
    },
    /// What the script of [`Action::TrySamples`] did on the samples.
    SamplesTried {
        /// It.
        output: CandidateOutput,
    },
    /// The tests' run against each script of [`Action::TestCandidates`], in its order.
    CandidatesTested {
        /// Them.
        runs: Vec<TestRun>,
    },
    /// A whole test file.
    TestsWritten {
        /// `test_solution.py`.
        tests: String,
        /// Tokens.
        usage: Usage,
    },
    /// The environment exists.
    EnvironmentReady {
        /// Tokens (none: replacing a Debian package is a step of its own).
        usage: Usage,
    },
    /// The environment could not be built with these distributions (a version without a wheel
    /// that fails to build, conflicting pins): the installer's message.
    InstallFailed {
        /// The distribution the installer says failed (uv's "Failed to build `pandas==1.3.5`":
        /// `pandas`), when it says.
        package: Option<String>,
        /// What the installer said.
        error: String,
    },
    /// A distribution does not exist.
    PackageMissing {
        /// Its name.
        package: String,
        /// The installer's message.
        error: String,
    },
    /// The model's replacement for a missing distribution (`None`: drop it).
    PackageReplaced {
        /// The name that failed.
        package: String,
        /// What to install instead.
        replacement: Option<String>,
        /// Tokens.
        usage: Usage,
    },
    /// Debian packages the environment cannot get.
    SystemPackagesUnusable {
        /// Them.
        packages: Vec<String>,
        /// Why, in words.
        why: String,
        /// apt's message, if any.
        message: String,
        /// Whether another package could stand in (not when the backend installs none).
        replaceable: bool,
        /// The sandbox's error, for a run that has to end on it.
        error: String,
    },
    /// The model's Debian package in place of one that cannot be had (`None`: none needed).
    SystemPackageReplaced {
        /// The package that cannot be had.
        package: String,
        /// What to install instead.
        replacement: Option<String>,
        /// Why the package could not be had, in words.
        why: String,
        /// Tokens.
        usage: Usage,
    },
    /// The tests ran.
    TestsRan(TestRun),
    /// Diagnoses, one per failure (missing ones count as `logic`).
    Diagnosed {
        /// Them.
        diagnoses: Vec<Diagnosis>,
        /// Tokens.
        usage: Usage,
    },
    /// Code edits to apply.
    CodeEdited {
        /// The edits.
        edits: Vec<Edit>,
        /// Distributions the edited code newly needs.
        packages: Vec<String>,
        /// Tokens.
        usage: Usage,
    },
    /// New test functions.
    TestsPatched {
        /// The functions.
        functions: Vec<FunctionPatch>,
        /// Imports they need.
        imports: Vec<String>,
        /// Tokens.
        usage: Usage,
    },
}
