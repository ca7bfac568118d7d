//! What a generation is asked to do, and with what limits: the library's equivalent of
//! `autocoder generate`'s flags.

use std::path::PathBuf;

use autocoder_sandbox::Backend;

use crate::request::{Declaration, Sample};
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
    /// Environment variables passed in explicitly (nothing else from the host is).
    pub env_vars: Vec<(String, String)>,
    /// Where environments are cached (default: the XDG cache).
    pub cache_dir: Option<PathBuf>,
    /// Whether cached environments are reused.
    pub cache: CacheMode,
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
            cache_dir: None,
            cache: CacheMode::Auto,
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
    /// Declared outputs (`NAME:TYPE`).
    pub outputs: Vec<Declaration>,
    /// Replaces the default persona of the system prompt (the ground rules stay).
    pub system_prompt: Option<String>,
    /// Distributions always installed.
    pub base_packages: Vec<String>,
    /// Sample rows each data profile shows the model.
    pub sample_rows: usize,
    /// Iterations, token budget, skipping tests.
    pub limits: Limits,
    /// The run directory.
    pub out_dir: PathBuf,
    /// The sandbox.
    pub sandbox: SandboxOptions,
    /// A directory of prompt templates overriding the embedded ones by name.
    pub prompts_dir: Option<PathBuf>,
    /// Show the script to the test writer (by default the tests are written from the task, the
    /// data and the contract alone, which catches more bugs).
    pub tests_see_code: bool,
    /// Ask for the script and the tests as Markdown code blocks instead of JSON strings. Small
    /// local models write valid Python far more often that way (no escaping); the packages
    /// then come from the script's imports alone.
    pub code_in_fences: bool,
    /// The model name, as the user gave it (recorded in the result).
    pub model: String,
}
