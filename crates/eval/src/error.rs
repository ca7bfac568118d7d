//! Errors of an eval run. A task whose script is wrong is a score, not an error; these are the
//! things that stop the suite itself from being read or run.

use std::path::PathBuf;

use autocoder_loop::LoopError;
use autocoder_sandbox::SandboxError;

/// What stopped an eval.
#[derive(Debug, thiserror::Error)]
pub enum EvalError {
    /// The suite's manifest or a task file is missing or malformed.
    #[error("{path}: {message}")]
    Suite {
        /// The file at fault.
        path: PathBuf,
        /// What is wrong and what to do.
        message: String,
    },
    /// A file of the eval's own output directory could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// `eval.json` in the output directory could not be parsed or written.
    #[error("{path}: {source}")]
    Json {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        source: serde_json::Error,
    },
    /// The output directory holds runs made with other settings: resuming would mix them.
    #[error(
        "{path} was written with other settings ({difference}); pass another --out, or remove it to start over"
    )]
    SettingsChanged {
        /// The `eval.json` at fault.
        path: PathBuf,
        /// The first setting that differs.
        difference: String,
    },
    /// Another eval is writing into the same output directory.
    #[error(
        "another `autocoder eval` is writing into {dir} (it holds {lock}); wait for it to end, or pass another --out"
    )]
    Busy {
        /// The output directory.
        dir: PathBuf,
        /// The lock file the other eval holds.
        lock: PathBuf,
    },
    /// The model client could not be built.
    #[error(transparent)]
    Model(#[from] autocoder_llm::LlmError),
    /// The sandbox could not run a reference solution or a generated script.
    #[error(transparent)]
    Sandbox(#[from] SandboxError),
    /// The loop refused a request before any model call (a task that is not a valid request).
    #[error(transparent)]
    Loop(#[from] LoopError),
    /// The agent could not start (the model cannot be used, a bad request).
    #[error(transparent)]
    Agent(Box<autocoder_agent::AgentError>),
}

impl EvalError {
    pub(crate) fn io(path: impl Into<PathBuf>) -> impl FnOnce(std::io::Error) -> Self {
        let path = path.into();
        move |source| Self::Io { path, source }
    }

    pub(crate) fn suite(path: impl Into<PathBuf>, message: impl Into<String>) -> Self {
        Self::Suite {
            path: path.into(),
            message: message.into(),
        }
    }
}
