//! The test step: run the tests in the sandbox (or take the run from the journal) and turn the
//! report into the session's [`TestRun`].

use autocoder_sandbox::{
    Input as SandboxInput, Outcome, PytestSpec, SandboxError, SourceFile, TestReport,
    Value as SandboxValue,
};

use super::Driver;
use crate::LoopError;
use crate::harness::TRACER_FILE;
use crate::outcome_cache::run_pytest_or_reuse;
use crate::protocol::{Event, TestOutcome, TestResult, TestRun};
use crate::reclassify::mask_addresses;
use crate::request::IoType;
use crate::retry::retrying;
use crate::session::{CONTRACT_TEST_FILE, Session};
use crate::steps::{FAILURE_OUTPUT_LIMIT, tail};

impl Driver<'_> {
    pub(super) async fn run_tests(&mut self, session: &Session) -> Result<Event, LoopError> {
        let Some(env) = self.env.clone() else {
            return Err(LoopError::InvalidRequest(
                "tests were to run before the environment was built".to_owned(),
            ));
        };
        let conftest = self
            .traced
            .as_ref()
            .map_or(&self.conftest, |traced| &traced.conftest);
        let mut files = vec![
            SourceFile::new("solution.py", session.code().unwrap_or_default()),
            SourceFile::new("test_solution.py", session.tests().unwrap_or_default()),
            SourceFile::new("conftest.py", conftest.clone()),
        ];
        if let Some(traced) = &self.traced {
            files.push(SourceFile::new(TRACER_FILE, traced.tracer.clone()));
        }
        if let Some(test) = &self.contract_test {
            files.push(SourceFile::new(CONTRACT_TEST_FILE, test.clone()));
        }
        let mut spec = PytestSpec::new(env, files);
        spec.limits = self.options.sandbox.limits;
        spec.network = self.options.sandbox.network;
        spec.run_name.clone_from(&self.options.name);
        spec.env_vars = self.options.sandbox.env_vars.iter().cloned().collect();
        spec.secrets.clone_from(&self.options.sandbox.secrets);
        spec.inputs = self
            .contract
            .inputs
            .iter()
            .filter(|i| i.ty == IoType::File)
            .filter_map(|i| {
                Some(SandboxInput {
                    name: i.name.clone(),
                    value: SandboxValue::File(i.sample.clone()?),
                })
            })
            .collect();
        let number = session.runs() + 1;
        let work = self
            .run_dir
            .root()
            .join(format!("iterations/{number}/sandbox"));
        std::fs::create_dir_all(&work).map_err(|source| SandboxError::Io {
            action: "creating",
            path: work.clone(),
            source,
        })?;
        let files = crate::journal::digest(&[
            session.code().unwrap_or_default(),
            session.tests().unwrap_or_default(),
        ]);
        let report = if let Some(report) = self.journal.test_run(number, &files) {
            report
        } else {
            let sandbox = self.sandbox;
            let options = self.options;
            let report = retrying(
                options.sandbox.retries,
                "run tests",
                &options.sandbox.secrets,
                &mut self.sandbox_retries,
                || run_pytest_or_reuse(sandbox, &spec, &work, &options.sandbox),
            )
            .await?;
            self.journal.record_tests(number, &files, &report)?;
            report
        };
        let output = format!("{}{}", report.stdout, report.stderr);
        self.run_dir.write(
            &format!("iterations/{number}/test_output.txt"),
            output.as_bytes(),
        )?;
        let run = to_test_run(&report);
        self.last_report = Some(report);
        Ok(Event::TestsRan(run))
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
