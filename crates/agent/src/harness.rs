//! What the agent's `run_tests`, `run_script` and `set_packages` do: the pipeline's harness
//! (its `conftest.py` and contract test, pytest in the sandbox with the samples mounted) and
//! its cached environments, driven by tool calls. Files are read from the workspace beneath
//! its root and handed to the sandbox as contents, never as host paths a link could redirect.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::sync::Arc;

use autocoder_loop::journal::{self, Journal, Line};
use autocoder_loop::request::Contract;
use autocoder_sandbox::{
    Env, EnvCache, EnvSpec, Input as SandboxInput, Limits, Outcome, PytestSpec, RunSpec, Sandbox,
    SandboxError, SourceFile, TestReport, Value,
};

use crate::AgentError;
use crate::workspace::Workspace;

/// The script's file in the workspace.
pub(crate) const SOLUTION: &str = "solution.py";
/// The tests' file in the workspace.
pub(crate) const TESTS: &str = "test_solution.py";

/// The harness around one agent run.
pub(crate) struct Harness {
    pub(crate) sandbox: Sandbox,
    pub(crate) cache: EnvCache,
    pub(crate) limits: Limits,
    pub(crate) env_vars: Vec<(String, String)>,
    pub(crate) secrets: Vec<autocoder_sandbox::Secret>,
    pub(crate) run_name: Option<String>,
    pub(crate) python: autocoder_sandbox::PythonSpec,
    pub(crate) contract: Contract,
    /// The harness test runs use (`conftest.py` and the runner it starts the script under);
    /// the run directory keeps the plain `conftest.py`.
    pub(crate) tested: autocoder_loop::harness::TestHarness,
    pub(crate) contract_test: Option<String>,
    /// Where test and script runs keep their files (`RUN_DIR/iterations`).
    pub(crate) runs_dir: PathBuf,
    pub(crate) base_packages: Vec<String>,
    pub(crate) packages: BTreeSet<String>,
    pub(crate) system_packages: BTreeSet<String>,
    pub(crate) env: Option<Env>,
    pub(crate) test_runs: u32,
    pub(crate) script_runs: u32,
    pub(crate) last_report: Option<TestReport>,
    /// The run's journal: environments and test runs are written to it, and a resumed run's
    /// test runs are served from it.
    pub(crate) journal: Arc<Journal>,
}

/// What a test run gave the model and the result.
pub(crate) struct TestRunText {
    /// The summary for the model.
    pub(crate) text: String,
    /// Whether every test passed (and some ran).
    pub(crate) passed: bool,
}

impl Harness {
    /// The environment for the current packages, built (or taken from the cache) once per
    /// package set; the error text is for the model.
    pub(crate) async fn env(&mut self) -> Result<Env, AgentError> {
        if let Some(env) = &self.env {
            return Ok(env.clone());
        }
        let mut all: Vec<String> = self.base_packages.clone();
        all.extend(self.packages.iter().cloned());
        let system: Vec<&String> = self.system_packages.iter().collect();
        let spec = EnvSpec::new(&all)?
            .with_system_packages(&system)?
            .with_python(self.python.clone());
        let env = self.cache.ensure(&spec).await?;
        self.sandbox.prepare(&env).await?;
        self.journal.record(&Line::Environment {
            id: env.id.to_string(),
            packages: all,
            system_packages: system.into_iter().cloned().collect(),
            resolved: env.resolved.clone(),
        })?;
        self.env = Some(env.clone());
        Ok(env)
    }

    /// `set_packages`: replaces the package lists and builds the environment; the text says
    /// what it holds, or why it could not be built (and the lists stay as they were).
    pub(crate) async fn set_packages(&mut self, packages: &[String], system: &[String]) -> String {
        let before = (
            self.packages.clone(),
            self.system_packages.clone(),
            self.env.take(),
        );
        self.packages = packages
            .iter()
            .map(|p| p.trim().to_owned())
            .filter(|p| !p.is_empty())
            .collect();
        self.system_packages = system
            .iter()
            .map(|p| p.trim().to_owned())
            .filter(|p| !p.is_empty())
            .collect();
        match self.env().await {
            Ok(env) => {
                let resolved: Vec<String> = env
                    .resolved
                    .iter()
                    .map(|(name, version)| format!("{name}=={version}"))
                    .collect();
                let mut text = format!("environment ready: {}", resolved.join(" "));
                if !self.system_packages.is_empty() {
                    let list: Vec<&str> = self.system_packages.iter().map(String::as_str).collect();
                    let _ = write!(text, "\nsystem packages: {}", list.join(" "));
                }
                text
            }
            Err(e) => {
                (self.packages, self.system_packages, self.env) = before;
                format!("the environment could not be built, packages unchanged: {e}")
            }
        }
    }

    /// `run_tests`: pytest on the workspace's script and tests with the harness's files.
    pub(crate) async fn run_tests(
        &mut self,
        workspace: &Workspace,
        args: &[String],
    ) -> Result<TestRunText, AgentError> {
        let solution = match workspace.read(SOLUTION) {
            Ok(text) => text,
            Err(e) => return Ok(not_ready(&format!("no script yet ({})", e.message()))),
        };
        let tests = match workspace.read(TESTS) {
            Ok(text) => text,
            Err(e) => return Ok(not_ready(&format!("no tests yet ({})", e.message()))),
        };
        let env = match self.env().await {
            Ok(env) => env,
            Err(e) => {
                return Ok(not_ready(&format!(
                    "the environment could not be built: {e}"
                )));
            }
        };
        // What decides the run's outcome: the files and pytest's extra arguments.
        let digest = journal::digest(&[&solution, &tests, &args.join("\n")]);
        let mut files = vec![
            SourceFile::new(SOLUTION, solution),
            SourceFile::new(TESTS, tests),
            SourceFile::new("conftest.py", self.tested.conftest.clone()),
            self.tested.runner.clone(),
        ];
        if let Some(test) = &self.contract_test {
            files.push(SourceFile::new(
                autocoder_loop::harness::CONTRACT_TEST_FILE,
                test.clone(),
            ));
        }
        let mut spec = PytestSpec::new(env, files);
        spec.limits = self.limits;
        spec.env_vars = self.env_vars.iter().cloned().collect();
        spec.secrets.clone_from(&self.secrets);
        spec.run_name.clone_from(&self.run_name);
        spec.inputs = autocoder_loop::harness::sample_inputs(&self.contract);
        spec.extra_args = args.to_vec();
        self.test_runs += 1;
        let dir = self.runs_dir.join(format!("{}/sandbox", self.test_runs));
        std::fs::create_dir_all(&dir).map_err(AgentError::io("creating", &dir))?;
        let report = if let Some(report) = self.journal.test_run(self.test_runs, &digest) {
            report
        } else {
            let report = match self.sandbox.run_pytest(&spec, &dir).await {
                Ok(report) => report,
                Err(SandboxError::PytestNoReport { exit_code, stderr }) => {
                    let code = exit_code.map_or_else(|| "none".to_owned(), |c| c.to_string());
                    // Exit code 4 is pytest's usage error: the extra arguments are at fault.
                    let hint = if exit_code == Some(4) && !args.is_empty() {
                        format!(
                            "pytest refused the arguments {args:?}: they go to pytest, not to the script (the tests call the script through `run_solution`); run_tests without arguments runs every test.\n"
                        )
                    } else {
                        String::new()
                    };
                    return Ok(not_ready(&format!(
                        "{hint}pytest did not run (exit code {code}):\n{stderr}"
                    )));
                }
                Err(e) => return Err(e.into()),
            };
            self.journal
                .record_tests(self.test_runs, &digest, &report)?;
            report
        };
        let text = describe_report(&report, args);
        let output = format!("{}{}", report.stdout, report.stderr);
        let log = self
            .runs_dir
            .join(format!("{}/test_output.txt", self.test_runs));
        std::fs::write(&log, output).map_err(AgentError::io("writing", &log))?;
        let passed = report.all_passed() && !report.tests.is_empty();
        self.last_report = Some(report);
        Ok(TestRunText { text, passed })
    }

    /// `run_script`: the script on the samples (its file inputs) with `args` added.
    pub(crate) async fn run_script(
        &mut self,
        workspace: &Workspace,
        args: &[String],
    ) -> Result<String, AgentError> {
        let solution = match workspace.read(SOLUTION) {
            Ok(text) => text,
            Err(e) => return Ok(format!("no script to run: {}", e.message())),
        };
        let env = match self.env().await {
            Ok(env) => env,
            Err(e) => return Ok(format!("the environment could not be built: {e}")),
        };
        self.script_runs += 1;
        let dir = self.runs_dir.join(format!("script-{}", self.script_runs));
        std::fs::create_dir_all(&dir).map_err(AgentError::io("creating", &dir))?;
        let script = dir.join(SOLUTION);
        std::fs::write(&script, &solution).map_err(AgentError::io("writing", &script))?;
        // Under the test runs' runner: what `python solution.py` prints, and the line of an
        // exception the script caught before it stopped with a message.
        let runner = dir.join(&self.tested.runner.name);
        std::fs::write(&runner, &self.tested.runner.contents)
            .map_err(AgentError::io("writing", &runner))?;
        let mut spec = RunSpec::new(env, &runner, &dir.join("run"))?;
        spec.support_files.push(script);
        spec.limits = self.limits;
        spec.env_vars = self.env_vars.iter().cloned().collect();
        spec.secrets.clone_from(&self.secrets);
        spec.run_name.clone_from(&self.run_name);
        spec.extra_args = args.to_vec();
        spec.outputs_arg = autocoder_loop::run::outputs_arg(&solution);
        // Each input at what it takes on the samples: its sample file or its `--sample-arg`
        // value (arguments the model passes come after them and win).
        for input in &self.contract.inputs {
            if let Some(value) = input.on_samples() {
                spec.inputs.push(SandboxInput {
                    name: input.name.clone(),
                    value,
                });
            }
        }
        for output in &self.contract.outputs {
            spec = spec.output(&output.name, output.ty);
        }
        let outcome = self.sandbox.run(&spec).await?;
        let mut text = format!("exit code: {:?}", outcome.exit_code);
        if outcome.timed_out {
            text.push_str(" (killed at the wall-clock timeout)");
        }
        if outcome.memory_exceeded {
            text.push_str(" (memory limit)");
        }
        let _ = write!(
            text,
            "\nstdout:\n{}\nstderr:\n{}",
            outcome.stdout, outcome.stderr
        );
        match &outcome.outputs {
            Ok(outputs) if !outputs.is_empty() => {
                text.push_str("\noutputs:");
                for (name, value) in outputs {
                    let shown = match value {
                        Value::File(path) => std::fs::read(path).map_or_else(
                            |_| "(a file)".to_owned(),
                            |b| String::from_utf8_lossy(&b[..b.len().min(2000)]).into_owned(),
                        ),
                        other => format!("{other:?}"),
                    };
                    let _ = write!(text, "\n{name}: {shown}");
                }
            }
            Ok(_) => {}
            Err(e) => {
                let _ = write!(text, "\noutputs: {e}");
            }
        }
        Ok(text)
    }
}

fn not_ready(why: &str) -> TestRunText {
    TestRunText {
        text: format!("tests not run: {why}"),
        passed: false,
    }
}

/// The model's view of a test run (with pytest's extra `args`): counts, then each failure's
/// report.
fn describe_report(report: &TestReport, args: &[String]) -> String {
    let mut text = format!(
        "{} passed, {} failed, {} errors",
        report.count(Outcome::Passed),
        report.count(Outcome::Failed),
        report.count(Outcome::Error)
    );
    if report.timed_out {
        text.push_str("; the session hit the wall-clock timeout");
    }
    if report.memory_exceeded {
        text.push_str("; the session hit the memory limit");
    }
    if report.tests.is_empty() && report.collection_errors.is_empty() {
        if args.is_empty() {
            text.push_str("; no test ran (write tests in test_solution.py)");
        } else {
            // The tests (the harness's contract test at least) exist: the arguments left
            // them out.
            let _ = write!(
                text,
                "; no test ran: the arguments {args:?} selected none (run_tests without arguments runs them all)"
            );
        }
    }
    for c in &report.collection_errors {
        let _ = write!(text, "\n\nCOULD NOT COLLECT {}:\n{}", c.path, c.message);
    }
    for t in &report.tests {
        if matches!(t.outcome, Outcome::Failed | Outcome::Error) {
            let _ = write!(text, "\n\nFAILED {}:\n{}", t.id, t.message);
        }
    }
    if report.tests.is_empty() && !report.all_passed() {
        let _ = write!(text, "\n\n{}{}", report.stdout, report.stderr);
    }
    // Object addresses change from run to run: masked, the same failure reads the same (the
    // model's prompt cache, recordings and resumed runs match).
    autocoder_loop::reclassify::mask_addresses(&text)
}
