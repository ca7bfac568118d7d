//! Running pytest on a solution and its tests in a sandbox, with per-test outcomes read from a
//! small plugin's JSON lines.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::env::Env;
use crate::error::SandboxError;
use crate::io::{self, Input, Value};
use crate::sandbox::{Backend, Invocation, Sandbox};
use crate::spec::{Limits, RunSpec};

const PLUGIN_PY: &str = include_str!("helpers/autocoder_pytest_plugin.py");
const PLUGIN_DIR: &str = "/var/autocoder";
const REPORT_FILE: &str = ".pytest-report.jsonl";
/// The most of the report read back (a test suite's report is a few hundred kilobytes).
const REPORT_CAP: u64 = 64 << 20;

/// A file to place in the work directory before pytest starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceFile {
    /// Its name relative to the work directory (`solution.py`, `test_solution.py`, `conftest.py`).
    pub name: String,
    /// Its contents.
    pub contents: String,
}

impl SourceFile {
    /// A file named `name` holding `contents`.
    pub fn new(name: impl Into<String>, contents: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            contents: contents.into(),
        }
    }
}

/// One pytest run.
#[derive(Debug, Clone)]
pub struct PytestSpec {
    /// The environment (must contain pytest).
    pub env: Env,
    /// Solution, tests and conftest, written into the work directory.
    pub files: Vec<SourceFile>,
    /// Inputs mounted read-only under `/var/inputs/` (only files and directories are used).
    pub inputs: Vec<Input>,
    /// Extra pytest arguments (e.g. `-k name`).
    pub extra_args: Vec<String>,
    /// Resource limits for the whole session.
    pub limits: Limits,
    /// Network access (default: no).
    pub network: bool,
    /// The run's name, as [`crate::RunSpec::run_name`].
    pub run_name: Option<String>,
    /// Environment variables for the session, as [`crate::RunSpec::env_vars`].
    pub env_vars: BTreeMap<String, String>,
    /// Secrets for the session, as [`crate::RunSpec::secrets`]: masked in its output and in
    /// the test reports.
    pub secrets: Vec<crate::Secret>,
}

impl PytestSpec {
    /// A pytest run of `files` in `env` with default limits.
    pub fn new(env: Env, files: Vec<SourceFile>) -> Self {
        Self {
            env,
            files,
            inputs: Vec::new(),
            extra_args: Vec::new(),
            limits: Limits::default(),
            network: false,
            run_name: None,
            env_vars: BTreeMap::new(),
            secrets: Vec::new(),
        }
    }
}

/// How one test ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    /// It passed.
    Passed,
    /// Its body failed (an assertion or an exception in the test).
    Failed,
    /// Its setup or teardown (a fixture) failed.
    Error,
    /// It was skipped.
    Skipped,
    /// It failed as expected (`xfail`).
    XFailed,
    /// It passed although expected to fail (non-strict `xfail`).
    XPassed,
}

/// One test's result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TestCase {
    /// pytest's node id, e.g. `test_solution.py::test_totals`.
    pub id: String,
    /// How it ended.
    pub outcome: Outcome,
    /// pytest's long report of the failure, error or skip reason (empty when it passed).
    pub message: String,
    /// Setup, call and teardown time together.
    pub duration: Duration,
    /// What the harness's tracer recorded of the script's runs during the test, one entry per
    /// run, in order (empty unless the test harness traces).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub traces: Vec<String>,
    /// What the harness found wrong with the input files the test gave the script, when the
    /// script failed on them (a path that does not exist, a table without the sample's
    /// columns): one sentence each.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub input_notes: Vec<String>,
}

/// A file pytest could not collect (syntax error, failing import ...).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CollectionError {
    /// The file or node that failed.
    pub path: String,
    /// pytest's report.
    pub message: String,
}

/// The result of a pytest run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TestReport {
    /// Every test that ran, in order.
    pub tests: Vec<TestCase>,
    /// Files that could not be collected.
    pub collection_errors: Vec<CollectionError>,
    /// pytest's exit code (`None` when killed).
    pub exit_code: Option<i32>,
    /// Killed at the wall-clock timeout.
    pub timed_out: bool,
    /// Stopped by the memory limit.
    pub memory_exceeded: bool,
    /// pytest's stdout (capped).
    pub stdout: String,
    /// pytest's stderr (capped).
    pub stderr: String,
    /// Wall-clock time.
    pub duration: Duration,
}

impl TestReport {
    /// Number of tests with this outcome.
    pub fn count(&self, outcome: Outcome) -> usize {
        self.tests.iter().filter(|t| t.outcome == outcome).count()
    }

    /// Whether everything collected and no test failed or errored.
    pub fn all_passed(&self) -> bool {
        self.collection_errors.is_empty()
            && !self.timed_out
            && self
                .tests
                .iter()
                .all(|t| !matches!(t.outcome, Outcome::Failed | Outcome::Error))
    }
}

impl Sandbox {
    /// Runs pytest on `spec.files` in a fresh directory under `run_dir`.
    pub async fn run_pytest(
        &self,
        spec: &PytestSpec,
        run_dir: &Path,
    ) -> Result<TestReport, SandboxError> {
        let mut run = RunSpec::new(spec.env.clone(), PathBuf::new(), run_dir)?;
        run.limits = spec.limits;
        run.network = spec.network;
        run.run_name.clone_from(&spec.run_name);
        run.env_vars.clone_from(&spec.env_vars);
        run.secrets.clone_from(&spec.secrets);
        let plugin_dir = write_files(&run.work_dir, run_dir, &spec.files)?;

        let in_sandbox = self.backend() != Backend::None;
        let (plugin_in, work_in, report_in) = if in_sandbox {
            (
                PathBuf::from(PLUGIN_DIR),
                PathBuf::from(crate::sandbox::WORK_DIR),
                Path::new(io::OUTPUTS_DIR).join(REPORT_FILE),
            )
        } else {
            (
                plugin_dir.clone(),
                run.work_dir.clone(),
                run.outputs_dir.join(REPORT_FILE),
            )
        };
        let mut mounts = vec![crate::bwrap::Mount {
            host: plugin_dir.clone(),
            dest: plugin_in.clone(),
            writable: false,
        }];
        for input in &spec.inputs {
            io::check_name(&input.name)?;
            if let Value::File(p) | Value::Dir(p) = &input.value {
                let dest = io::mount_point(&input.name, p, matches!(input.value, Value::File(_)));
                mounts.push(crate::bwrap::Mount {
                    host: p.clone(),
                    dest: dest.into(),
                    writable: false,
                });
            }
        }
        let mut argv: Vec<std::ffi::OsString> = vec![spec.env.python.clone().into_os_string()];
        for a in [
            "-m",
            "pytest",
            "-p",
            "autocoder_pytest_plugin",
            "-p",
            "no:cacheprovider",
            "-q",
            // Whole values in a failed assertion (`assert {'levels': {...}} == {...}` cut to
            // `{'levels': {'...666}` hid from the diagnosis what the script wrote), `-q` kept.
            "-o",
            "verbosity_assertions=2",
            "--color=no",
            "-rN",
            "--continue-on-collection-errors",
        ] {
            argv.push(a.into());
        }
        argv.push(format!("--rootdir={}", work_in.display()).into());
        argv.extend(spec.extra_args.iter().map(Into::into));
        let env = vec![
            (
                "PYTHONPATH".to_owned(),
                format!("{}:{}", plugin_in.display(), work_in.display()),
            ),
            (
                "AUTOCODER_PYTEST_REPORT".to_owned(),
                report_in.display().to_string(),
            ),
        ];
        let inv = Invocation::new(argv, mounts, env);
        let outcome = self.execute(&run, inv).await?;
        let report_host = run.outputs_dir.join(REPORT_FILE);
        // Written inside the sandbox, so read like an output: a regular file, capped.
        let report = crate::outputs::read_regular(&report_host, REPORT_CAP)
            .ok()
            .and_then(|bytes| String::from_utf8(bytes).ok());
        let lines = match report {
            Some(text) => text,
            None if outcome.timed_out || outcome.memory_exceeded => String::new(),
            None => {
                return Err(SandboxError::PytestNoReport {
                    exit_code: outcome.exit_code,
                    stderr: outcome.stderr,
                });
            }
        };
        let (tests, collection_errors) = masked_report(&lines, &report_host, &spec.secrets)?;
        Ok(TestReport {
            tests,
            collection_errors,
            exit_code: outcome.exit_code,
            timed_out: outcome.timed_out,
            memory_exceeded: outcome.memory_exceeded,
            stdout: outcome.stdout,
            stderr: outcome.stderr,
            duration: outcome.duration,
        })
    }
}

/// The parsed report with the secrets' values masked in every message; the report file stays
/// in the run directory, so it is rewritten masked too.
fn masked_report(
    lines: &str,
    path: &Path,
    secrets: &[crate::Secret],
) -> Result<(Vec<TestCase>, Vec<CollectionError>), SandboxError> {
    if !secrets.is_empty() {
        let masked = crate::secrets::mask(lines, secrets);
        if masked != lines {
            std::fs::write(path, &masked).map_err(SandboxError::io("masking secrets in", path))?;
        }
    }
    let (mut tests, mut collection_errors) = parse_report(lines)?;
    for message in tests
        .iter_mut()
        .map(|t| &mut t.message)
        .chain(collection_errors.iter_mut().map(|c| &mut c.message))
    {
        crate::secrets::mask_in_place(message, secrets);
    }
    Ok((tests, collection_errors))
}

/// Writes the test files into `work_dir` and the plugin into `run_dir/plugin`; returns the latter.
fn write_files(
    work_dir: &Path,
    run_dir: &Path,
    files: &[SourceFile],
) -> Result<PathBuf, SandboxError> {
    for f in files {
        let rel = Path::new(&f.name);
        if rel.is_absolute()
            || rel
                .components()
                .any(|c| matches!(c, std::path::Component::ParentDir))
        {
            return Err(SandboxError::BadInput {
                name: f.name.clone(),
                reason: "test files must have relative names inside the work directory".into(),
            });
        }
        let path = work_dir.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(SandboxError::io("creating", parent))?;
        }
        std::fs::write(&path, &f.contents).map_err(SandboxError::io("writing", &path))?;
    }
    let plugin_dir = run_dir.join("plugin");
    std::fs::create_dir_all(&plugin_dir).map_err(SandboxError::io("creating", &plugin_dir))?;
    let plugin = plugin_dir.join("autocoder_pytest_plugin.py");
    std::fs::write(&plugin, PLUGIN_PY).map_err(SandboxError::io("writing", &plugin))?;
    Ok(plugin_dir)
}

#[derive(Debug, Deserialize)]
struct Line {
    kind: String,
    nodeid: Option<String>,
    when: Option<String>,
    outcome: Option<String>,
    #[serde(default)]
    wasxfail: bool,
    #[serde(default)]
    duration: f64,
    #[serde(default)]
    longrepr: String,
    #[serde(default)]
    traces: Vec<String>,
    #[serde(default)]
    input_notes: Vec<String>,
}

/// Folds the plugin's per-phase lines into one outcome per test.
fn parse_report(text: &str) -> Result<(Vec<TestCase>, Vec<CollectionError>), SandboxError> {
    let mut order: Vec<String> = Vec::new();
    let mut phases: BTreeMap<String, Vec<Line>> = BTreeMap::new();
    let mut collection_errors = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line: Line = serde_json::from_str(raw).map_err(|source| SandboxError::Json {
            what: format!("pytest report line {}", i + 1),
            source,
        })?;
        match line.kind.as_str() {
            "collect" => collection_errors.push(CollectionError {
                path: line.nodeid.clone().unwrap_or_default(),
                message: line.longrepr.clone(),
            }),
            "test" => {
                let id = line.nodeid.clone().unwrap_or_default();
                if !phases.contains_key(&id) {
                    order.push(id.clone());
                }
                phases.entry(id).or_default().push(line);
            }
            _ => {}
        }
    }
    let tests = order
        .into_iter()
        .map(|id| {
            let ph = phases.remove(&id).unwrap_or_default();
            let (outcome, message) = fold(&ph);
            let duration = Duration::from_secs_f64(ph.iter().map(|l| l.duration.max(0.0)).sum());
            // Each phase's report carries the test's properties so far: the last has them all.
            let last = |field: fn(&Line) -> &Vec<String>| {
                ph.iter()
                    .rev()
                    .map(field)
                    .find(|values| !values.is_empty())
                    .cloned()
                    .unwrap_or_default()
            };
            TestCase {
                id,
                outcome,
                message,
                duration,
                traces: last(|l| &l.traces),
                input_notes: last(|l| &l.input_notes),
            }
        })
        .collect();
    Ok((tests, collection_errors))
}

fn fold(phases: &[Line]) -> (Outcome, String) {
    let is = |l: &Line, when: &str, outcome: &str| {
        l.when.as_deref() == Some(when) && l.outcome.as_deref() == Some(outcome)
    };
    if let Some(l) = phases.iter().find(|l| is(l, "call", "failed")) {
        return (Outcome::Failed, l.longrepr.clone());
    }
    if let Some(l) = phases
        .iter()
        .find(|l| l.outcome.as_deref() == Some("failed"))
    {
        return (Outcome::Error, l.longrepr.clone());
    }
    if let Some(l) = phases
        .iter()
        .find(|l| l.outcome.as_deref() == Some("skipped"))
    {
        let outcome = if l.wasxfail {
            Outcome::XFailed
        } else {
            Outcome::Skipped
        };
        return (outcome, l.longrepr.clone());
    }
    if phases.iter().any(|l| is(l, "call", "passed") && l.wasxfail) {
        return (Outcome::XPassed, String::new());
    }
    (Outcome::Passed, String::new())
}
