//! What a generation is asked to do, and with what limits: the library's equivalent of
//! `autocoder generate`'s flags.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use autocoder_sandbox::Backend;

use crate::LoopError;
use crate::model_profile::ModelProfile;
use crate::prompting::Prompting;
use crate::request::{Contract, Declaration, Sample};
use crate::session::Limits;

/// What happens to a cached environment.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum CacheMode {
    /// Reuse an environment built before for the same packages.
    #[default]
    Auto,
    /// Build again even when a cached environment exists, replacing it.
    Override,
    /// Build in a throwaway cache that is removed afterwards.
    Disable,
}

impl CacheMode {
    /// Parses `auto`, `override` or `disable`.
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "auto" => Some(Self::Auto),
            "override" => Some(Self::Override),
            "disable" => Some(Self::Disable),
            _ => None,
        }
    }
}

/// How the generated code is run.
#[derive(Debug, Clone)]
pub struct SandboxOptions {
    /// The isolation backend.
    pub backend: Backend,
    /// Resource limits of every run (tests and the script).
    pub limits: autocoder_sandbox::Limits,
    /// Network access (default: none).
    pub network: bool,
    /// Environment variables passed in explicitly (nothing else from the host is); recorded
    /// in the result.
    pub env_vars: Vec<(String, String)>,
    /// Environment variables whose values are passed in but never written anywhere: masked in
    /// everything the sandbox captures, recorded by name only.
    pub secrets: Vec<autocoder_sandbox::Secret>,
    /// Where environments are cached (default: the XDG cache).
    pub cache_dir: Option<PathBuf>,
    /// Whether cached environments are reused.
    pub cache: CacheMode,
    /// How often a sandbox step that failed for an infrastructure reason (the backend could
    /// not start, the engine went away) is tried again; failing scripts and tests never are.
    pub retries: u32,
    /// The interpreter environments are built on: a version (`3.12`, found installed, never
    /// downloaded) or an interpreter's path; `None` for the default (`AUTOCODER_PYTHON`, else
    /// `python3`). Part of the environment id, and recorded in the result.
    pub python: Option<String>,
    /// Serve a test run or a script run identical to an earlier one (same script, tests,
    /// environment and input bytes) from the outcome cache instead of running it again.
    pub reuse: bool,
}

impl Default for SandboxOptions {
    fn default() -> Self {
        SandboxOptions {
            backend: Backend::default(),
            limits: autocoder_sandbox::Limits::default(),
            network: false,
            env_vars: Vec::new(),
            secrets: Vec::new(),
            cache_dir: None,
            cache: CacheMode::Auto,
            retries: 0,
            python: None,
            reuse: false,
        }
    }
}

/// A generation request.
#[derive(Debug, Clone, Default)]
pub struct GenerateOptions {
    /// The task, in the user's words.
    pub prompt: String,
    /// Free-form schema text shown to the model verbatim.
    pub schema_text: Option<String>,
    /// Business rules in words.
    pub constraints: Vec<String>,
    /// Sample files (`NAME=PATH`); each becomes a file input with the sample as default.
    pub samples: Vec<Sample>,
    /// Declared inputs (`NAME:TYPE`).
    pub inputs: Vec<Declaration>,
    /// The values declared non-file inputs take on the samples (`NAME=VALUE`): the script runs
    /// on the samples with them, and the tests' runs default to them.
    pub sample_args: BTreeMap<String, String>,
    /// Declared outputs (`NAME:TYPE`).
    pub outputs: Vec<Declaration>,
    /// Replaces the default persona of the system prompt (the ground rules stay).
    pub system_prompt: Option<String>,
    /// Distributions always installed.
    pub base_packages: Vec<String>,
    /// Sample rows each data profile keeps.
    pub sample_rows: usize,
    /// What the prompts show of each sample: `None` for the compact default (at most 3 sample
    /// rows); `Some` for the rows and token budget the user gave.
    pub shown: Option<crate::data::Shown>,
    /// Iterations, token budget, skipping tests.
    pub limits: Limits,
    /// The run directory.
    pub out_dir: PathBuf,
    /// The sandbox.
    pub sandbox: SandboxOptions,
    /// A directory of prompt templates overriding the embedded ones by name.
    pub prompts_dir: Option<PathBuf>,
    /// How the prompts are shaped: what the test writer sees, code in fences, traced values,
    /// units, no plan, the model profile.
    pub prompting: Prompting,
    /// The model name, as the user gave it (recorded in the result).
    pub model: String,
    /// The run's name (`--name`): recorded in the result and put on the Docker containers.
    pub name: Option<String>,
}

impl GenerateOptions {
    /// Everything about the request that can be checked without a model: the prompt is not
    /// empty, the declarations are valid and every sample is a readable text file. Callers run
    /// it before looking up an API key, so a typo costs nothing; [`crate::generate`] runs it too.
    pub fn check(&self) -> Result<Contract, LoopError> {
        if self.prompt.trim().is_empty() {
            return Err(LoopError::InvalidRequest("the prompt is empty".to_owned()));
        }
        if let Some(name) = &self.name {
            check_run_name(name)?;
        }
        Contract::new(&self.inputs, &self.outputs, &self.samples)?
            .with_sample_args(&self.sample_args)
    }

    /// The model profile the generation uses: the one named, else the model's, with fences
    /// when `code_in_fences` asks for them, units when `units` does, the query skeleton as
    /// `queries` says and no plan when `no_plan` says so (all in [`Self::prompting`]).
    pub fn profile(&self) -> ModelProfile {
        let prompting = &self.prompting;
        let mut profile = ModelProfile::choose(
            prompting.model_profile,
            &self.model,
            prompting.code_in_fences,
        );
        profile.units |= prompting.units;
        if let Some(queries) = prompting.queries {
            profile.queries = queries;
        }
        profile.plan &= !prompting.no_plan;
        profile
    }
}

/// A run name is a plain file name (it is the default run directory): letters, digits, `-`,
/// `_` and `.`, not starting with `.` or `-`, at most 100 characters.
pub fn check_run_name(name: &str) -> Result<(), LoopError> {
    let valid = !name.is_empty()
        && name.len() <= 100
        && !name.starts_with(['.', '-'])
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if valid {
        Ok(())
    } else {
        Err(LoopError::InvalidRequest(format!(
            "run name `{name}` must be letters, digits, `-`, `_` and `.` (not first), at most 100 characters, like `sales-report`"
        )))
    }
}

/// The run directory when none is given: `runs/NAME` for a named run, else
/// `runs/run-<seconds since 1970>`, relative to the current directory.
pub fn default_run_dir(name: Option<&str>) -> PathBuf {
    if let Some(name) = name {
        return Path::new("runs").join(name);
    }
    let seconds = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    Path::new("runs").join(format!("run-{seconds}"))
}

/// The interpreter `choice` names: a version is looked for among the installed ones
/// ([`autocoder_sandbox::find_python_version`]), anything else is a path or command.
pub(crate) async fn python_spec(
    choice: Option<&str>,
) -> Result<autocoder_sandbox::PythonSpec, LoopError> {
    use autocoder_sandbox::PythonSpec;
    Ok(match choice {
        None => PythonSpec::Default,
        Some(v) if autocoder_sandbox::is_python_version(v) => {
            PythonSpec::Path(autocoder_sandbox::find_python_version(v).await?)
        }
        Some(path) => PythonSpec::Path(PathBuf::from(path)),
    })
}

#[cfg(test)]
mod tests {
    use super::{GenerateOptions, check_run_name};
    use crate::Prompting;

    #[test]
    fn queries_follow_the_flag_else_the_profile() {
        let options = |queries| GenerateOptions {
            model: "openai/qwen2.5-coder-1.5b-instruct".into(),
            prompting: Prompting {
                queries,
                ..Prompting::default()
            },
            ..GenerateOptions::default()
        };
        let by_profile = options(None).profile().queries;
        assert_eq!(by_profile, crate::ModelProfile::small().queries);
        assert!(options(Some(true)).profile().queries);
        assert!(!options(Some(false)).profile().queries);
    }

    #[test]
    fn run_names_are_plain_file_names() {
        assert!(check_run_name("sales-report_2.v1").is_ok());
        for bad in [
            "",
            "../x",
            "a/b",
            ".hidden",
            "-flag",
            "with space",
            &"x".repeat(101),
        ] {
            let err = check_run_name(bad).unwrap_err().to_string();
            assert!(err.contains("run name"), "{bad}: {err}");
        }
    }
}
