//! The driver: performs the session's actions with the real model and the real sandbox, and
//! reports back what happened. Everything it decides comes from the session and the checks of
//! [`crate::vet`]; everything it says comes from the templates.

mod candidates;
pub(crate) mod environment;
mod own_frames;
mod pytest_entries;
mod run_report;
mod samples;
mod shown_once;
mod test_run;
mod write;

use std::time::Instant;

use autocoder_llm::LlmError;
use autocoder_sandbox::{
    Env, EnvCache, ImportAnalysis, Interpreter, Sandbox, TestReport, imports_to_packages,
};
use serde_json::json;

use crate::LoopError;
use crate::installable::keep_installable;
use crate::journal::Journal;
use crate::options::GenerateOptions;
use crate::protocol::{Action, Disagreement, Event, FailedTest, FailureKind, RoutedFailure};
use crate::pysrc::splice::{function_name, function_source};
use crate::repairs::Repairs;
use crate::request::Contract;
use crate::rundir::RunDir;
use crate::session::Session;
use crate::steps::Steps;
use run_report::run_report;

/// Characters of the script shown when asking for a Debian package in place of a missing one.
const REPLACEMENT_CODE_CHARS: usize = 1_500;

pub(crate) struct Driver<'a> {
    pub(crate) options: &'a GenerateOptions,
    pub(crate) steps: &'a Steps<'a>,
    pub(crate) sandbox: &'a Sandbox,
    pub(crate) cache: &'a EnvCache,
    pub(crate) interpreter: &'a Interpreter,
    pub(crate) run_dir: &'a RunDir,
    pub(crate) journal: &'a Journal,
    pub(crate) contract: &'a Contract,
    pub(crate) conftest: String,
    /// The runner a script is tried on the samples under (`--sample-fixes`).
    pub(crate) where_runner: String,
    /// The harness test runs use (the run directory keeps `conftest`).
    pub(crate) tested: crate::harness::TestHarness,
    pub(crate) contract_test: Option<String>,
    pub(crate) env: Option<Env>,
    pub(crate) imports: Vec<String>,
    /// What the model gets that is specific to its kind.
    pub(crate) profile: crate::ModelProfile,
    /// The repairs its code gets.
    pub(crate) repairs: Repairs,
    /// Each test report with the script it tested (test runs and `--candidates`' group runs),
    /// in the order they ran.
    pub(crate) reports: Vec<(String, TestReport)>,
    pub(crate) iteration_tokens: Vec<u64>,
    pub(crate) iteration_started: Instant,
    pub(crate) iteration_seconds: Vec<f64>,
    /// Sandbox steps tried again (`--sandbox-retries`).
    pub(crate) sandbox_retries: Vec<crate::rundir::SandboxRetry>,
    /// The interpreter environments are built on.
    pub(crate) python_spec: autocoder_sandbox::PythonSpec,
}

impl Driver<'_> {
    /// The environment built for the script; `what` says what was to happen before it was.
    fn built_env(&self, what: &str) -> Result<Env, LoopError> {
        self.env.clone().ok_or_else(|| {
            LoopError::InvalidRequest(format!("{what} before the environment was built"))
        })
    }

    /// The imports of `code` and the distributions they need (journaled: a resumed run does
    /// not start Python again for a version of the script it analysed before).
    async fn imports(&self, code: &str, local: &[&str]) -> Result<ImportAnalysis, LoopError> {
        let python = &self.interpreter.executable;
        let mut parts = vec![python.to_str().unwrap_or_default(), code];
        parts.extend_from_slice(local);
        let key = crate::journal::digest(&parts);
        self.journal
            .memo("imports", &key, async {
                Ok::<_, LoopError>(imports_to_packages(python, code, local).await?)
            })
            .await
    }

    /// Tokens and time are booked to the iteration of the test run that precedes them.
    pub(crate) fn account(&mut self, tokens: u64, is_run: bool, runs: u32) {
        if is_run {
            self.iteration_tokens.push(0);
            self.iteration_seconds.push(0.0);
            self.iteration_started = Instant::now();
        }
        let index = usize::try_from(runs).unwrap_or(0).saturating_sub(1);
        if let Some(slot) = self.iteration_tokens.get_mut(index) {
            *slot += tokens;
        }
        if let Some(slot) = self.iteration_seconds.get_mut(index) {
            *slot = self.iteration_started.elapsed().as_secs_f64();
        }
    }

    /// [`Driver::perform`]; answers that stayed unusable end the session as a failure instead of
    /// an error, so the run directory still records what happened.
    pub(crate) async fn perform_or_abort(
        &mut self,
        action: Action,
        session: &mut Session,
    ) -> Result<Option<Event>, LoopError> {
        match self.perform(action, session).await {
            Ok(event) => Ok(Some(event)),
            Err(LoopError::Model(
                err @ (LlmError::InvalidStructuredOutput { .. } | LlmError::Rejected { .. }),
            )) => {
                session.abort(format!("the model's answer stayed unusable: {err}"));
                Ok(None)
            }
            Err(err) => Err(err),
        }
    }

    async fn perform(&mut self, action: Action, session: &Session) -> Result<Event, LoopError> {
        let steps = self.steps;
        match action {
            Action::Plan => steps.plan().await,
            Action::WriteCode { notes } => self.write_code(session, notes).await,
            Action::WriteTests { notes } => self.write_tests(session, notes).await,
            Action::WriteCandidates { notes, count } => {
                self.write_candidates(session, notes, count).await
            }
            Action::RunCandidates { scripts } => self.run_candidates(session, &scripts).await,
            Action::TrySamples { script } => self.try_samples(session, &script).await,
            Action::TestCandidates { scripts } => self.test_candidates(session, &scripts).await,
            Action::PrepareEnvironment {
                packages,
                system_packages,
            } => self.prepare(&packages, &system_packages).await,
            Action::ReplacePackage { package, error } => {
                steps.replace_package(&package, &error, &self.imports).await
            }
            Action::ReplaceSystemPackage {
                package,
                why,
                message,
            } => {
                let code = session.code().unwrap_or_default();
                let head: String = code.chars().take(REPLACEMENT_CODE_CHARS).collect();
                let (replacement, usage) = steps
                    .replace_system_package(&package, &why, &message, &head)
                    .await?;
                Ok(Event::SystemPackageReplaced {
                    package,
                    replacement,
                    why,
                    usage,
                })
            }
            Action::RunTests => self.run_tests(session).await,
            Action::Diagnose {
                failures,
                passing,
                disagreement,
            } => {
                self.diagnose(session, &failures, passing, disagreement)
                    .await
            }
            Action::FixCode {
                failures,
                passing,
                rejected,
            } => self.fix_code(session, &failures, passing, rejected).await,
            Action::FixTests { failures, rejected } => {
                let tests = session.tests().unwrap_or_default();
                let failures: Vec<_> = failures
                    .iter()
                    .map(|f| {
                        let mut value = routed_json(f);
                        let source = function_source(tests, &function_name(&f.test_id))
                            .unwrap_or_else(|| tests.to_owned());
                        value["source"] = json!(source);
                        value
                    })
                    .collect();
                let run = run_report(
                    session,
                    session.diagnosed(),
                    &session.anchors(),
                    self.profile.plain_tracebacks,
                );
                steps
                    .fix_tests(json!({"run": run, "failures": failures, "rejected": rejected}))
                    .await
            }
            Action::Finish(_) => Err(LoopError::InvalidRequest(
                "the loop asked to perform Finish".to_owned(),
            )),
        }
    }
}

impl Driver<'_> {
    /// A diagnosis of `failures`, with the traces, the earlier rounds and the other
    /// candidates' outputs the prompt shows; packages it asks for that cannot be installed
    /// are left out.
    async fn diagnose(
        &self,
        session: &Session,
        failures: &[FailedTest],
        passing: Vec<String>,
        disagreement: Option<Disagreement>,
    ) -> Result<Event, LoopError> {
        let history = earlier_rounds(
            session
                .history()
                .iter()
                .rev()
                .skip(1)
                .flat_map(|i| i.routes.iter()),
            failures,
        );
        let mut event = self
            .steps
            .diagnose(json!({
                "run": run_report(session, failures, &passing, self.profile.plain_tracebacks),
                "history": history,
                "disagreement": disagreement,
            }))
            .await?;
        if let Event::Diagnosed { diagnoses, .. } = &mut event {
            keep_installable(&self.interpreter.executable, diagnoses).await?;
        }
        Ok(event)
    }
}

/// The earlier rounds' lines of a diagnosis of `failures`, newest first: one per test that
/// still fails and verdict, with how many rounds gave it (a test fixed the same way twice is one
/// line that says so, not the same line twice). A test that passes now has none: the lines say
/// it still fails.
fn earlier_rounds<'r>(
    routes: impl Iterator<Item = &'r RoutedFailure>,
    failures: &[FailedTest],
) -> Vec<serde_json::Value> {
    let mut seen: Vec<(&str, FailureKind, usize)> = Vec::new();
    let routes = routes.filter(|r| failures.iter().any(|f| f.test_id == r.test_id));
    for route in routes {
        match seen
            .iter_mut()
            .find(|(id, kind, _)| *id == route.test_id && *kind == route.kind)
        {
            Some((_, _, times)) => *times += 1,
            None => seen.push((&route.test_id, route.kind, 1)),
        }
    }
    seen.into_iter()
        .map(|(test_id, kind, times)| {
            json!({"test_id": test_id, "kind": kind.name(), "fixed_by": fixed_by(kind), "times": times})
        })
        .collect()
}

fn fixed_by(kind: FailureKind) -> &'static str {
    match kind {
        FailureKind::Logic => "a code edit",
        FailureKind::Environment => "adding packages",
        FailureKind::TestError => "rewriting the test",
    }
}

fn routed_json(failure: &RoutedFailure) -> serde_json::Value {
    let input_notes: &[String] = if failure.kind == FailureKind::TestError {
        &failure.input_notes
    } else {
        &[]
    };
    json!({
        "test_id": failure.test_id,
        "evidence": failure.evidence,
        "fix": failure.fix,
        // Sent to the other fixer than the diagnosis named (a test fix that did not help goes
        // to the code fixer, and the other way round).
        // The harness found the test's input files off the task's data: why the test fixer
        // has it (not a reclassification after a fix).
        "input_notes": input_notes,
        "reclassified": input_notes.is_empty()
            && matches!(
                (failure.reclassified_from, failure.kind),
                (Some(FailureKind::TestError), FailureKind::Logic)
                    | (Some(FailureKind::Logic), FailureKind::TestError)
            ),
        // Put down to the environment with nothing to install: the code fixer's.
        "not_environment": failure.reclassified_from == Some(FailureKind::Environment)
            && failure.kind == FailureKind::Logic,
        "sample_run": failure.test_id == crate::session::SAMPLE_RUN_ID,
        "function": failure.function,
    })
}

#[cfg(test)]
mod tests {
    use super::{earlier_rounds, routed_json};
    use crate::protocol::{FailedTest, FailureKind, RoutedFailure, TestOutcome};

    fn route(test_id: &str, kind: FailureKind) -> RoutedFailure {
        RoutedFailure {
            test_id: test_id.into(),
            output: "E   assert 7 == 6".into(),
            evidence: "pandas is too new".into(),
            fix: "pin pandas==1.4.3".into(),
            kind,
            reclassified_from: None,
            trace: None,
            function: None,
            input_notes: Vec::new(),
        }
    }

    #[test]
    fn the_earlier_rounds_name_each_failing_test_and_verdict_once() {
        use FailureKind::{Logic, TestError};
        let routes = [
            route("t::a", Logic),
            route("t::b", TestError),
            route("t::passes_now", Logic),
            route("t::a", Logic),
            route("t::a", TestError),
        ];
        let failing = |test_id: &str| FailedTest {
            test_id: test_id.into(),
            outcome: TestOutcome::Failed,
            output: String::new(),
            trace: None,
            input_notes: Vec::new(),
        };
        let lines: Vec<_> = earlier_rounds(routes.iter(), &[failing("t::b"), failing("t::a")])
            .into_iter()
            .map(|v| (v["test_id"].clone(), v["kind"].clone(), v["times"].clone()))
            .collect();
        assert_eq!(
            lines,
            [
                ("t::a".into(), "logic".into(), 2.into()),
                ("t::b".into(), "test_error".into(), 1.into()),
                ("t::a".into(), "test_error".into(), 1.into()),
            ]
        );
    }

    fn routed(from: Option<FailureKind>, kind: FailureKind) -> serde_json::Value {
        routed_json(&RoutedFailure {
            test_id: "test_solution.py::test_total".into(),
            output: "E   assert 7 == 6".into(),
            evidence: "pandas is too new".into(),
            fix: "pin pandas==1.4.3".into(),
            kind,
            reclassified_from: from,
            trace: None,
            function: None,
            input_notes: Vec::new(),
        })
    }

    #[test]
    fn a_fixer_is_told_which_diagnosis_was_overridden() {
        use FailureKind::{Environment, Logic, TestError};
        let flags =
            |v: serde_json::Value| (v["reclassified"].clone(), v["not_environment"].clone());
        assert_eq!(flags(routed(None, Logic)), (false.into(), false.into()));
        assert_eq!(
            flags(routed(Some(TestError), Logic)),
            (true.into(), false.into())
        );
        assert_eq!(
            flags(routed(Some(Logic), TestError)),
            (true.into(), false.into())
        );
        // An environment verdict with nothing to install is not "first put down to the test".
        assert_eq!(
            flags(routed(Some(Environment), Logic)),
            (false.into(), true.into())
        );
    }
}
