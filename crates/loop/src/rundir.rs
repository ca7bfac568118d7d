//! The run directory: everything a generation produced, laid out so a person can read it and
//! `autocoder run` can run it again.
//!
//! ```text
//! RUN_DIR/
//!   result.json            the GenerationResult below (success, code, tests, packages, tokens, history)
//!   solution.py            the script
//!   test_solution.py       its tests
//!   conftest.py            the harness the tests use (`run_solution`)
//!   test_contract.py       the harness's own tests: runs on the samples, writes typed outputs,
//!                          keeps each "one row per <column>" rule on a CSV output
//!   requirements.txt       what the script itself needs: its packages at their resolved versions
//!                          (name==version; only a comment when it needs the standard library alone)
//!   requirements-test.txt  `-r requirements.txt`, then the rest of the test environment (pytest
//!                          and every other resolved distribution)
//!   conversation.jsonl     every model request and response, in order
//!   journal.jsonl          the run as it went, for `autocoder resume` (crate::journal; lines
//!                          documented in docs/notes/journal.md), versioned like result.json
//!   profiles/<name>.json   the profile of each sample
//!   report.html            the samples' profiles as one page with charts and alerts
//!   schemas/<name>.py      the Pandera module of each sample, checks included
//!   iterations/<n>/        per test run: the script and tests it ran (solution.py,
//!                          test_solution.py), test_output.txt, routes.json (diagnoses),
//!                          changes.json; with --candidates, group-<k>/ per group's script
//!   candidates/<n>/<k>/    with --candidates, the k-th script written before test run n
//!                          (solution.py), where it ran on the samples
//!   samples/<k>/           with --sample-fixes, each try of the script on the samples before
//!                          the tests: solution.py, the runner it ran under, work/, outputs/
//! ```

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::protocol::Plan;
use crate::protocol::Usage;
use crate::request::{Input, Output};

/// Version of the `result.json` layout; bumped on incompatible changes.
pub const RESULT_FORMAT_VERSION: u32 = 1;

/// Where the script runs and with what.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct EnvironmentRecord {
    /// The sandbox backend (`bwrap`, `docker`, `none`).
    pub backend: String,
    /// The cached environment's id (hash of the package set and Python version).
    pub id: Option<String>,
    /// The Docker image, for the Docker backend.
    pub image: Option<String>,
    /// Resolved distributions, `(name, version)`.
    pub resolved: Vec<(String, String)>,
    /// The interpreter asked for with `--python` (a version or a path), which `run` uses again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub python: Option<String>,
    /// The environment variables given with `--env`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    /// The names of the secrets given with `--secret` (never their values).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub secrets: Vec<String>,
}

/// One test run and what followed it, as recorded in `result.json`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct IterationRecord {
    /// 1-based.
    pub number: u32,
    /// Passed tests.
    pub passed: usize,
    /// Tests needing a diagnosis.
    pub failed: usize,
    /// `test_id -> kind` of each routed failure (`logic`, `environment`, `test_error`).
    pub error_types: BTreeMap<String, String>,
    /// What changed afterwards.
    pub changes: Vec<String>,
    /// Tokens spent after this test run and before the next one (diagnosis and fixes); the
    /// calls before the first run are in [`GenerationResult::steps`].
    pub tokens: u64,
    /// Seconds spent in this iteration.
    pub seconds: f64,
}

/// A sandbox step tried again after the machinery failed (`--sandbox-retries`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SandboxRetry {
    /// The step (`run tests`, `environment`).
    pub step: String,
    /// 1 for the first retry of this step.
    pub retry: u32,
    /// Why the attempt before it failed.
    pub error: String,
}

/// What one pipeline step cost, over all its calls.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct StepUsage {
    /// Model calls answered.
    pub calls: u64,
    /// Prompt tokens.
    pub input_tokens: u64,
    /// Completion tokens.
    pub output_tokens: u64,
    /// Of the prompt tokens, those the provider's prompt cache served.
    #[serde(default)]
    pub cached_input_tokens: u64,
    /// Seconds spent waiting for the model.
    pub seconds: f64,
}

/// What `autocoder generate` returns and writes as `result.json`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GenerationResult {
    /// [`RESULT_FORMAT_VERSION`].
    pub format_version: u32,
    /// Whether the tests passed (or were skipped on request).
    pub success: bool,
    /// Why the loop stopped.
    pub reason: String,
    /// The last real error, when it failed.
    pub error: Option<String>,
    /// The model used, as given (`openai/gpt-4.1`).
    pub model: String,
    /// The run's name (`--name`), when it was given one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The plan.
    pub plan: Option<Plan>,
    /// `solution.py`.
    pub solution: String,
    /// `test_solution.py` (empty with `--skip-tests`).
    pub tests: String,
    /// The last pytest output.
    pub test_output: String,
    /// pytest's exit code in the last run (`None` when no run happened).
    pub exit_code: Option<i32>,
    /// Test runs.
    pub attempts: u32,
    /// Python distributions installed.
    pub packages: Vec<String>,
    /// Debian packages the model asked for (installed into the image by the Docker backend;
    /// checked on the host by the others, which cannot install them).
    pub system_packages: Vec<String>,
    /// What the run changed on its own that the user should know, such as system packages it
    /// dropped because the backend could not have them.
    #[serde(default)]
    pub notes: Vec<String>,
    /// The environment the script ran in.
    pub environment: EnvironmentRecord,
    /// Sample name -> Pandera module.
    pub schemas: BTreeMap<String, String>,
    /// The data context every prompt carried.
    pub data_context: String,
    /// Declared and sample inputs.
    pub inputs: Vec<Input>,
    /// Declared outputs.
    pub outputs: Vec<Output>,
    /// Sample name -> host path.
    pub samples: BTreeMap<String, PathBuf>,
    /// Tokens over all calls.
    pub tokens: Usage,
    /// Model calls made.
    pub model_calls: u32,
    /// Calls, tokens and time per step (`plan`, `code`, `tests`, `diagnose`, `fix_code`,
    /// `fix_tests`, `replace_package`, `replace_system_package`, `constraints`; `<step>/repair`
    /// and `<step>/retry` for
    /// the extra rounds of a structured answer).
    #[serde(default)]
    pub steps: BTreeMap<String, StepUsage>,
    /// Seconds, start to finish.
    pub seconds: f64,
    /// Per test run.
    pub iterations: Vec<IterationRecord>,
    /// Sandbox steps tried again after the machinery failed, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sandbox_retries: Vec<SandboxRetry>,
    /// Agent mode (`generate --agent`): the tools the agent called, the commands the policy
    /// denied (with the reasons it was told) and the ones it intercepted; `None` for the pipeline.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_calls: Option<ToolCallsRecord>,
    /// Agent mode: the plan the agent stated before its first tool call, if it stated one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_plan: Option<String>,
}

/// What an agent run did with its tools, as `result.json` records it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolCallsRecord {
    /// How the tools were offered: `native` (the API's tool calls) or `json` (an action object
    /// through structured output).
    pub protocol: String,
    /// Model turns taken.
    pub turns: u32,
    /// Calls per tool name (unknown names under their own name).
    pub counts: BTreeMap<String, u32>,
    /// Shell commands the policy refused, with the reason the agent was told.
    pub denials: Vec<DeniedCommand>,
    /// Shell commands that became another tool (`pytest` -> `run_tests`, `pip install` ->
    /// `set_packages`).
    pub interceptions: Vec<InterceptedCommand>,
    /// File operations refused because the path leaves the workspace.
    pub refused_paths: Vec<DeniedCommand>,
}

/// A refused command or path and why.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeniedCommand {
    /// The tool that was called.
    pub tool: String,
    /// The command or path as the agent gave it.
    pub command: String,
    /// The reason the agent was told.
    pub reason: String,
}

/// A command that stood for another tool.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct InterceptedCommand {
    /// The command as the agent gave it.
    pub command: String,
    /// The tool call it became (`run_tests -k x`, `set_packages pip requests`).
    pub became: String,
}

/// Errors writing or reading a run directory.
#[derive(Debug, thiserror::Error)]
pub enum RunDirError {
    /// A file could not be written or read.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// `result.json` does not parse.
    #[error("{path} is not a result of autocoder generate: {source}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: serde_json::Error,
    },
}

/// A run directory on disk.
#[derive(Debug, Clone)]
pub struct RunDir {
    root: PathBuf,
}

impl RunDir {
    /// Creates `root` (and its parents) if needed.
    pub fn create(root: &Path) -> Result<Self, RunDirError> {
        std::fs::create_dir_all(root).map_err(|source| RunDirError::Io {
            path: root.to_owned(),
            source,
        })?;
        Ok(RunDir {
            root: root.to_owned(),
        })
    }

    /// An existing run directory.
    pub fn open(root: &Path) -> Self {
        RunDir {
            root: root.to_owned(),
        }
    }

    /// The directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Writes `relative` (creating its directory), replacing it atomically.
    pub fn write(&self, relative: &str, contents: &[u8]) -> Result<PathBuf, RunDirError> {
        let path = self.root.join(relative);
        let io = |source| RunDirError::Io {
            path: path.clone(),
            source,
        };
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(io)?;
        }
        let temporary = path.with_extension("partial");
        std::fs::write(&temporary, contents).map_err(io)?;
        std::fs::rename(&temporary, &path).map_err(io)?;
        Ok(path)
    }

    /// Writes `result.json` and the files derived from it (`solution.py`, `test_solution.py`,
    /// `requirements.txt`, `requirements-test.txt`, `schemas/<name>.py`).
    pub fn write_result(&self, result: &GenerationResult) -> Result<(), RunDirError> {
        let json = serde_json::to_vec_pretty(result).map_err(|source| RunDirError::Parse {
            path: self.root.join("result.json"),
            source,
        })?;
        self.write("solution.py", result.solution.as_bytes())?;
        if !result.tests.is_empty() {
            self.write("test_solution.py", result.tests.as_bytes())?;
        }
        let (script, tests) = requirement_files(result);
        self.write("requirements.txt", script.as_bytes())?;
        self.write("requirements-test.txt", tests.as_bytes())?;
        for (name, schema) in &result.schemas {
            self.write(&format!("schemas/{name}.py"), schema.as_bytes())?;
        }
        self.write("result.json", &json)?;
        Ok(())
    }

    /// Reads `result.json`.
    pub fn read_result(&self) -> Result<GenerationResult, RunDirError> {
        let path = self.root.join("result.json");
        let bytes = std::fs::read(&path).map_err(|source| RunDirError::Io {
            path: path.clone(),
            source,
        })?;
        serde_json::from_slice(&bytes).map_err(|source| RunDirError::Parse { path, source })
    }
}

/// The script's own packages at the versions its tests passed with (`name==version`), in the
/// order the environment resolved them; empty for a standard-library script.
pub fn script_requirements(result: &GenerationResult) -> Vec<String> {
    let direct: std::collections::BTreeSet<String> = result
        .packages
        .iter()
        .map(|p| distribution_key(p))
        .collect();
    result
        .environment
        .resolved
        .iter()
        .filter(|(name, _)| direct.contains(&distribution_key(name)))
        .map(|(name, version)| format!("{name}=={version}"))
        .collect()
}

/// `requirements.txt` (the script's own packages, at their resolved versions) and
/// `requirements-test.txt` (that file, then every other distribution of the test environment).
pub fn requirement_files(result: &GenerationResult) -> (String, String) {
    let own = script_requirements(result);
    let mut script =
        String::from("# What solution.py needs, at the versions its tests passed with.\n");
    let mut tests = String::from(
        "# The test environment: solution.py's requirements, then pytest and the rest.\n-r requirements.txt\n",
    );
    for requirement in &own {
        let _ = writeln!(script, "{requirement}");
    }
    for (name, version) in &result.environment.resolved {
        if !own.contains(&format!("{name}=={version}")) {
            let _ = writeln!(tests, "{name}=={version}");
        }
    }
    if own.is_empty() {
        script = String::from("# solution.py needs only the Python standard library.\n");
    }
    (script, tests)
}

/// A requirement's distribution name as the sandbox normalises it (`PyYAML[extra]>=6` is
/// `pyyaml`); an unparsable one is kept lower-cased.
fn distribution_key(requirement: &str) -> String {
    autocoder_sandbox::Requirement::parse(requirement).map_or_else(
        |_| requirement.trim().to_ascii_lowercase(),
        |r| r.name.split('[').next().unwrap_or_default().to_owned(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_result_round_trips_through_its_run_directory() {
        let dir = tempfile::tempdir().unwrap();
        let run = RunDir::create(&dir.path().join("runs/1")).unwrap();
        let result = GenerationResult {
            format_version: RESULT_FORMAT_VERSION,
            success: true,
            packages: vec!["Pandas>=3".into()],
            solution: "print(1)\n".into(),
            tests: "def test_x():\n    pass\n".into(),
            environment: EnvironmentRecord {
                backend: "bwrap".into(),
                resolved: vec![
                    ("numpy".into(), "2.3.0".into()),
                    ("pandas".into(), "3.1.1".into()),
                    ("pytest".into(), "9.2.0".into()),
                ],
                ..EnvironmentRecord::default()
            },
            schemas: BTreeMap::from([("sales".to_owned(), "import pandera\n".to_owned())]),
            ..GenerationResult::default()
        };
        run.write_result(&result).unwrap();
        assert_eq!(RunDir::open(run.root()).read_result().unwrap(), result);
        let read = |name: &str| std::fs::read_to_string(run.root().join(name)).unwrap();
        assert_eq!(read("solution.py"), "print(1)\n");
        assert_eq!(
            read("requirements.txt"),
            "# What solution.py needs, at the versions its tests passed with.\npandas==3.1.1\n"
        );
        let tests = read("requirements-test.txt");
        assert!(
            tests.contains("-r requirements.txt\nnumpy==2.3.0\npytest==9.2.0\n"),
            "{tests}"
        );
        assert!(!tests.contains("pandas"), "{tests}");
        assert_eq!(read("schemas/sales.py"), "import pandera\n");
        assert!(!run.root().join("result.partial").exists());
    }

    #[test]
    fn a_standard_library_script_requires_nothing() {
        let result = GenerationResult {
            environment: EnvironmentRecord {
                resolved: vec![
                    ("pluggy".into(), "1.6.0".into()),
                    ("pytest".into(), "9.2.0".into()),
                ],
                ..EnvironmentRecord::default()
            },
            ..GenerationResult::default()
        };
        let (script, tests) = requirement_files(&result);
        assert_eq!(
            script,
            "# solution.py needs only the Python standard library.\n"
        );
        assert!(tests.ends_with("-r requirements.txt\npluggy==1.6.0\npytest==9.2.0\n"));
        assert_eq!(distribution_key("PyYAML[extra]>=6"), "pyyaml");
        assert_eq!(distribution_key("typing_extensions"), "typing-extensions");
    }

    #[test]
    fn a_directory_without_a_result_names_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let err = RunDir::open(dir.path())
            .read_result()
            .unwrap_err()
            .to_string();
        assert!(err.contains("result.json"), "{err}");
    }
}
