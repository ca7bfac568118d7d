//! The test step: run the tests in the sandbox (or take the run from the journal) and turn the
//! report into the session's [`TestRun`].

use autocoder_sandbox::{Outcome, PytestSpec, SandboxError, SourceFile, TestReport};

use super::Driver;
use crate::LoopError;
use crate::harness::sample_inputs;
use crate::outcome_cache::run_pytest_or_reuse;
use crate::protocol::{Event, TestOutcome, TestResult, TestRun};
use crate::reclassify::mask_addresses;
use crate::retry::retrying;
use crate::session::{CONFTEST_FILE, CONTRACT_TEST_FILE, Session};
use crate::steps::{FAILURE_OUTPUT_LIMIT, tail};

impl Driver<'_> {
    pub(super) async fn run_tests(&mut self, session: &Session) -> Result<Event, LoopError> {
        let code = session.code().unwrap_or_default();
        let tests = session.tests().unwrap_or_default();
        let number = session.runs() + 1;
        let spec = self.pytest_spec(code, tests)?;
        let work = self.work_dir(&format!("iterations/{number}/sandbox"))?;
        let files = crate::journal::digest(&[code, tests]);
        let report = if let Some(report) = self.journal.test_run(number, &files) {
            report
        } else {
            let (report, retries) = Box::pin(self.run_pytest(&spec, &work)).await?;
            self.sandbox_retries.extend(retries);
            self.journal.record_tests(number, &files, &report)?;
            report
        };
        let output = format!("{}{}", report.stdout, report.stderr);
        self.run_dir.write(
            &format!("iterations/{number}/test_output.txt"),
            output.as_bytes(),
        )?;
        self.run_dir
            .write(&format!("iterations/{number}/solution.py"), code.as_bytes())?;
        self.run_dir.write(
            &format!("iterations/{number}/test_solution.py"),
            tests.as_bytes(),
        )?;
        let run = to_test_run(&report);
        self.reports.push((code.to_owned(), report));
        Ok(Event::TestsRan(run))
    }

    /// The tests run against each of `scripts` (`--candidates`), each run journaled by its
    /// files; the reports are kept for the result of whichever the session keeps.
    pub(super) async fn test_candidates(
        &mut self,
        session: &Session,
        scripts: &[String],
    ) -> Result<Event, LoopError> {
        let tests = session.tests().unwrap_or_default();
        let number = session.runs() + 1;
        let mut runs = Vec::new();
        for (index, code) in scripts.iter().enumerate() {
            let dir = format!("iterations/{number}/group-{}", index + 1);
            let spec = self.pytest_spec(code, tests)?;
            let work = self.work_dir(&format!("{dir}/sandbox"))?;
            let files = crate::journal::digest(&[code, tests]);
            let mut kept_retries = Vec::new();
            let report = self
                .journal
                .memo("candidate_tests", &files, async {
                    let (report, tried) = Box::pin(self.run_pytest(&spec, &work)).await?;
                    kept_retries = tried;
                    Ok::<_, LoopError>(report)
                })
                .await?;
            self.sandbox_retries.extend(kept_retries);
            let output = format!("{}{}", report.stdout, report.stderr);
            self.run_dir
                .write(&format!("{dir}/solution.py"), code.as_bytes())?;
            self.run_dir
                .write(&format!("{dir}/test_output.txt"), output.as_bytes())?;
            runs.push(to_test_run(&report));
            self.reports.push((code.clone(), report));
        }
        Ok(Event::CandidatesTested { runs })
    }

    /// The last test report of `code` (the script a test run or a candidate group's run
    /// tested); `None` for a script no test ran.
    pub(crate) fn report_of(&self, code: &str) -> Option<&TestReport> {
        self.reports
            .iter()
            .rev()
            .find(|(tested, _)| tested == code)
            .map(|(_, report)| report)
    }

    /// A directory of the run directory for a sandbox's work files, created.
    pub(super) fn work_dir(&self, relative: &str) -> Result<std::path::PathBuf, LoopError> {
        let work = self.run_dir.root().join(relative);
        std::fs::create_dir_all(&work).map_err(|source| SandboxError::Io {
            action: "creating",
            path: work.clone(),
            source,
        })?;
        Ok(work)
    }

    /// The test session of `code` and `tests` with the harness, on the samples.
    fn pytest_spec(&self, code: &str, tests: &str) -> Result<PytestSpec, LoopError> {
        let env = self.built_env("tests were to run")?;
        let mut files = vec![
            SourceFile::new("solution.py", code),
            SourceFile::new("test_solution.py", tests),
            SourceFile::new(CONFTEST_FILE, self.tested.conftest.clone()),
            self.tested.runner.clone(),
        ];
        if let Some(test) = &self.contract_test {
            files.push(SourceFile::new(CONTRACT_TEST_FILE, test.clone()));
        }
        let mut spec = PytestSpec::new(env, files);
        spec.limits = self.options.sandbox.limits;
        spec.network = self.options.sandbox.network;
        spec.run_name.clone_from(&self.options.name);
        spec.env_vars = self.options.sandbox.env_vars.iter().cloned().collect();
        spec.secrets.clone_from(&self.options.sandbox.secrets);
        spec.inputs = sample_inputs(self.contract);
        Ok(spec)
    }

    /// Runs a test session (tried again on infrastructure failures, served from the outcome
    /// cache with `--reuse`).
    async fn run_pytest(
        &self,
        spec: &PytestSpec,
        work: &std::path::Path,
    ) -> Result<(TestReport, Vec<crate::rundir::SandboxRetry>), LoopError> {
        let options = self.options;
        let mut retries = Vec::new();
        let report = retrying(
            options.sandbox.retries,
            "run tests",
            &options.sandbox.secrets,
            &mut retries,
            || run_pytest_or_reuse(self.sandbox, spec, work, &options.sandbox),
        )
        .await?;
        Ok((report, retries))
    }
}

/// The trace of the test's last run of the script (the one its assertions are most likely
/// about), saying so when there were others.
fn last_trace(traces: &[String]) -> Option<String> {
    let last = traces.last()?;
    Some(match traces.len() {
        1 => last.clone(),
        n => format!("(the last of the {n} runs of solution.py in this test)\n{last}"),
    })
}

/// The sandbox's report as the session sees it. A session killed by a limit with no result is
/// one failure that says so.
fn to_test_run(report: &TestReport) -> TestRun {
    let mut results: Vec<TestResult> = report
        .collection_errors
        .iter()
        .map(|c| {
            TestResult::new(
                c.path.clone(),
                TestOutcome::CollectionError,
                mask_addresses(&c.message),
            )
        })
        .collect();
    results.extend(report.tests.iter().map(|t| {
        let outcome = match t.outcome {
            Outcome::Passed => TestOutcome::Passed,
            Outcome::Failed => TestOutcome::Failed,
            Outcome::Error => TestOutcome::Error,
            Outcome::Skipped => TestOutcome::Skipped,
            Outcome::XFailed => TestOutcome::XFailed,
            Outcome::XPassed => TestOutcome::XPassed,
        };
        TestResult::new(t.id.clone(), outcome, mask_addresses(&t.message))
            .with_trace(last_trace(&t.traces))
            .with_input_notes(&t.input_notes)
    }));
    let output = format!("{}{}", report.stdout, report.stderr);
    if report.timed_out || report.memory_exceeded {
        let why = if report.timed_out {
            "the test session hit the wall-clock timeout"
        } else {
            "the test session hit the memory limit"
        };
        results.push(TestResult::new(
            "pytest session".to_owned(),
            TestOutcome::Error,
            format!("{why}\n{}", tail(&output, FAILURE_OUTPUT_LIMIT)),
        ));
    } else if results.is_empty() && report.exit_code.is_some_and(|c| c != 0 && c != 5) {
        results.push(TestResult::new(
            "pytest session".to_owned(),
            TestOutcome::Error,
            tail(&output, FAILURE_OUTPUT_LIMIT),
        ));
    }
    TestRun { results, output }
}
