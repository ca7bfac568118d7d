//! The loop's diagnoses checked against the task's reference solution. Every failing test a
//! diagnosis judged is run again, from the same test file and harness, with the reference in
//! the script's place. A test the reference fails too expects what a right script does not do:
//! the test is at fault (`test_error`). A test the reference passes was failed by the script
//! (`logic`, or `environment` when the script's environment lacked something). This measures
//! the diagnosis step on its own, where the held-out score says nothing about it (a run whose
//! every script is wrong still has diagnoses that were right or wrong).

use std::collections::BTreeMap;
use std::path::Path;

use autocoder_loop::SandboxOptions;
use autocoder_loop::protocol::{FailureKind, RoutedFailure};
use autocoder_loop::session::{CONTRACT_TEST_FILE, SAMPLE_RUN_ID};
use autocoder_sandbox::{Env, Input, Outcome, PytestSpec, Sandbox, SourceFile, TestReport, Value};
use serde::{Deserialize, Serialize};

use crate::error::EvalError;
use crate::score::{numbered, reference_env};
use crate::suite::Task;

/// The file the reference is copied to beside the stand-in `solution.py`.
const REFERENCE_FILE: &str = "reference_solution.py";

/// Runs the reference as `solution.py` is run by the harness: the harness passes
/// `--outputs-dir DIR`, the references read `AUTOCODER_OUTPUTS_DIR`.
const STAND_IN: &str = r#"# The task's reference solution in the script's place (autocoder eval's check of a diagnosis).
import os
import runpy
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
arguments = []
rest = iter(sys.argv[1:])
for argument in rest:
    if argument == "--outputs-dir":
        os.environ["AUTOCODER_OUTPUTS_DIR"] = next(rest, "outputs")
    elif argument.startswith("--outputs-dir="):
        os.environ["AUTOCODER_OUTPUTS_DIR"] = argument.split("=", 1)[1]
    else:
        arguments.append(argument)
os.makedirs(os.environ.setdefault("AUTOCODER_OUTPUTS_DIR", "outputs"), exist_ok=True)
sys.argv = [os.path.join(HERE, "reference_solution.py")] + arguments
runpy.run_path(sys.argv[0], run_name="__main__")
"#;

/// One failing test as a diagnosis judged it, and what the reference says.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Verdict {
    /// The test run whose failure was diagnosed.
    pub iteration: u32,
    /// The test.
    pub test_id: String,
    /// What the diagnosis said: `logic`, `environment` or `test_error`.
    pub diagnosed: String,
    /// What the loop acted on after its own rules (the same unless it overrode the diagnosis).
    pub routed: String,
    /// Whether the test passed with the reference in the script's place (`None`: it did not
    /// run, e.g. the test file no longer collects with it).
    pub reference_passed: Option<bool>,
}

impl Verdict {
    /// The test is at fault: the reference fails it too.
    pub fn test_at_fault(&self) -> Option<bool> {
        self.reference_passed.map(|passed| !passed)
    }

    /// The diagnosis put the fault on the right side (the test's, or the script's and its
    /// environment's).
    pub fn diagnosis_right(&self) -> Option<bool> {
        Some(blames_the_test(&self.diagnosed) == self.test_at_fault()?)
    }

    /// The loop acted on the right side.
    pub fn route_right(&self) -> Option<bool> {
        Some(blames_the_test(&self.routed) == self.test_at_fault()?)
    }
}

fn blames_the_test(kind: &str) -> bool {
    kind == FailureKind::TestError.name()
}

/// Checks every diagnosis in `run_dir` (`iterations/<n>/routes.json` beside the test file that
/// run used), running each test file once with the reference in the script's place.
pub async fn check_verdicts(
    task: &Task,
    run_dir: &Path,
    sandbox: &SandboxOptions,
) -> Result<Vec<Verdict>, EvalError> {
    if !run_dir.join("conftest.py").is_file() {
        return Ok(Vec::new());
    }
    // Read and built at the first diagnosed test run, once for the whole run.
    let mut harness: Option<Harness> = None;
    let mut reports: BTreeMap<String, TestReport> = BTreeMap::new();
    let mut verdicts = Vec::new();
    for number in numbered(&run_dir.join("iterations"), "")? {
        let dir = run_dir.join(format!("iterations/{number}"));
        let routes = diagnosed(&dir.join("routes.json"))?;
        if routes.is_empty() {
            continue;
        }
        let tests_path = dir.join("test_solution.py");
        let tests = std::fs::read_to_string(&tests_path).map_err(EvalError::io(&tests_path))?;
        if !reports.contains_key(&tests) {
            let harness = match harness.take() {
                Some(ready) => harness.insert(ready),
                None => harness.insert(Harness::of(task, run_dir, sandbox).await?),
            };
            let work = run_dir.join(format!("iterations/{number}/reference-check"));
            let report = run_with_reference(task, &tests, harness, &work, sandbox).await?;
            reports.insert(tests.clone(), report);
        }
        let report = &reports[&tests];
        verdicts.extend(label(number, &routes, report));
    }
    Ok(verdicts)
}

/// The diagnosed failures of one test run (`routes.json`), the run on the samples left out
/// (it is no test). None when the file is missing.
fn diagnosed(path: &Path) -> Result<Vec<RoutedFailure>, EvalError> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(err) => return Err(EvalError::io(path)(err)),
    };
    let routes: Vec<RoutedFailure> =
        serde_json::from_str(&text).map_err(|source| EvalError::Json {
            path: path.to_path_buf(),
            source,
        })?;
    Ok(routes
        .into_iter()
        .filter(|r| r.test_id != SAMPLE_RUN_ID)
        .collect())
}

/// Each diagnosed failure of test run `number` with the reference's outcome of its test.
fn label(number: u32, routes: &[RoutedFailure], report: &TestReport) -> Vec<Verdict> {
    routes
        .iter()
        .map(|route| {
            let reference_passed = report
                .tests
                .iter()
                .find(|t| t.id == route.test_id)
                .and_then(|t| match t.outcome {
                    Outcome::Passed => Some(true),
                    Outcome::Failed | Outcome::Error => Some(false),
                    _ => None,
                });
            Verdict {
                iteration: number,
                test_id: route.test_id.clone(),
                diagnosed: route
                    .reclassified_from
                    .unwrap_or(route.kind)
                    .name()
                    .to_owned(),
                routed: route.kind.name().to_owned(),
                reference_passed,
            }
        })
        .collect()
}

/// What every reference run of one generation shares: the harness the loop put beside the
/// model's tests, the reference solution and its environment.
pub(crate) struct Harness {
    /// `conftest.py` (`run_solution`).
    pub(crate) conftest: String,
    /// `test_contract.py`, the harness's own tests (a declared column missing, a row key
    /// repeated), when the run had one: a diagnosis judges their failures too.
    pub(crate) tests: Option<String>,
    /// The task's reference solution.
    pub(crate) reference: String,
    /// The references' environment.
    pub(crate) env: Env,
}

impl Harness {
    async fn of(task: &Task, run_dir: &Path, sandbox: &SandboxOptions) -> Result<Self, EvalError> {
        let read = |path: &Path| std::fs::read_to_string(path).map_err(EvalError::io(path));
        Ok(Harness {
            conftest: read(&run_dir.join("conftest.py"))?,
            tests: std::fs::read_to_string(run_dir.join(CONTRACT_TEST_FILE)).ok(),
            reference: read(&task.reference())?,
            env: reference_env(sandbox).await?,
        })
    }
}

/// Runs `tests` under the run's harness with the reference as `solution.py`, in the
/// references' environment, the task's samples mounted as the loop mounts them.
pub(crate) async fn run_with_reference(
    task: &Task,
    tests: &str,
    harness: &Harness,
    work: &Path,
    sandbox: &SandboxOptions,
) -> Result<TestReport, EvalError> {
    let mut files = vec![
        SourceFile::new("solution.py", STAND_IN),
        SourceFile::new(REFERENCE_FILE, harness.reference.as_str()),
        SourceFile::new("test_solution.py", tests),
        SourceFile::new("conftest.py", harness.conftest.as_str()),
    ];
    if let Some(contract) = &harness.tests {
        files.push(SourceFile::new(CONTRACT_TEST_FILE, contract.as_str()));
    }
    let mut spec = PytestSpec::new(harness.env.clone(), files);
    spec.limits = sandbox.limits;
    spec.inputs = task
        .samples()
        .into_iter()
        .map(|sample| Input {
            name: sample.name,
            value: Value::File(sample.path),
        })
        .collect();
    std::fs::create_dir_all(work).map_err(EvalError::io(work))?;
    Ok(Sandbox::new(sandbox.backend)
        .run_pytest(&spec, work)
        .await?)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use autocoder_sandbox::TestCase;

    use super::*;

    fn route(test: &str, kind: FailureKind, from: Option<FailureKind>) -> RoutedFailure {
        RoutedFailure {
            test_id: format!("test_solution.py::{test}"),
            output: String::new(),
            evidence: String::new(),
            fix: String::new(),
            kind,
            reclassified_from: from,
            trace: None,
            function: None,
            input_notes: Vec::new(),
        }
    }

    fn case(test: &str, outcome: Outcome) -> TestCase {
        TestCase {
            id: format!("test_solution.py::{test}"),
            outcome,
            message: String::new(),
            duration: Duration::ZERO,
            traces: Vec::new(),
            input_notes: Vec::new(),
        }
    }

    #[test]
    fn a_test_the_reference_fails_too_is_the_tests_fault_and_one_it_passes_the_scripts() {
        use FailureKind::{Environment, Logic, TestError};
        let report = TestReport {
            tests: vec![
                case("test_total", Outcome::Failed),
                case("test_rows", Outcome::Passed),
                case("test_regions", Outcome::Passed),
                case("test_empty", Outcome::Error),
            ],
            collection_errors: Vec::new(),
            exit_code: Some(1),
            timed_out: false,
            memory_exceeded: false,
            stdout: String::new(),
            stderr: String::new(),
            duration: Duration::ZERO,
        };
        let routes = [
            // The reference fails it: the diagnosis that blamed the test is right.
            route("test_total", TestError, None),
            // The reference passes it: blaming the test was wrong, and the loop's override
            // (a test fix that did not help goes to the code fixer) acted on the right side.
            route("test_rows", Logic, Some(TestError)),
            // Passed by the reference: the environment is on the script's side.
            route("test_regions", Environment, None),
            // Errors with the reference too: logic was wrong.
            route("test_empty", Logic, None),
            // Not in the reference's report: nothing to say.
            route("test_gone", Logic, None),
        ];
        let verdicts = label(3, &routes, &report);
        let judged: Vec<(&str, &str, Option<bool>, Option<bool>)> = verdicts
            .iter()
            .map(|v| {
                (
                    v.diagnosed.as_str(),
                    v.routed.as_str(),
                    v.diagnosis_right(),
                    v.route_right(),
                )
            })
            .collect();
        assert_eq!(
            judged,
            [
                ("test_error", "test_error", Some(true), Some(true)),
                ("test_error", "logic", Some(false), Some(true)),
                ("environment", "environment", Some(true), Some(true)),
                ("logic", "logic", Some(false), Some(false)),
                ("logic", "logic", None, None),
            ]
        );
        assert!(verdicts.iter().all(|v| v.iteration == 3));
    }

    #[test]
    fn the_run_on_the_samples_is_not_a_test_to_check() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("routes.json");
        let routes = vec![
            route("test_total", FailureKind::Logic, None),
            RoutedFailure {
                test_id: SAMPLE_RUN_ID.to_owned(),
                ..route("x", FailureKind::Logic, None)
            },
        ];
        std::fs::write(&path, serde_json::to_vec(&routes).unwrap()).unwrap();
        let read = diagnosed(&path).unwrap();
        assert_eq!(read.len(), 1);
        assert_eq!(read[0].test_id, "test_solution.py::test_total");
        assert!(
            diagnosed(&dir.path().join("missing.json"))
                .unwrap()
                .is_empty()
        );
    }
}
