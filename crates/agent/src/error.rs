//! The one error type of the crate.

use std::path::PathBuf;

/// What can stop an agent run (a failing tool is a result the model sees, not an error).
#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    /// The request or the setup is unusable (message says what to fix).
    #[error("{0}")]
    InvalidRequest(String),
    /// The pipeline's pieces (contract, data context, harness, run directory) failed.
    #[error(transparent)]
    Loop(#[from] autocoder_loop::LoopError),
    /// The run directory could not be written.
    #[error(transparent)]
    RunDir(#[from] autocoder_loop::rundir::RunDirError),
    /// The model could not be used.
    #[error(transparent)]
    Llm(#[from] autocoder_llm::LlmError),
    /// A prompt template failed to render.
    #[error(transparent)]
    Prompt(#[from] autocoder_prompts::PromptError),
    /// The sandbox cannot run at all.
    #[error(transparent)]
    Sandbox(#[from] autocoder_sandbox::SandboxError),
    /// The command policy could not be loaded.
    #[error(transparent)]
    Policy(#[from] autocoder_policy::PolicyError),
    /// The journal could not be written or read.
    #[error(transparent)]
    Journal(#[from] autocoder_loop::journal::JournalError),
    /// A file of the run could not be written.
    #[error("{action} {path}: {source}")]
    Io {
        /// What was being done.
        action: &'static str,
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}

impl AgentError {
    pub(crate) fn io(
        action: &'static str,
        path: impl Into<PathBuf>,
    ) -> impl FnOnce(std::io::Error) -> Self {
        let path = path.into();
        move |source| Self::Io {
            action,
            path,
            source,
        }
    }
}
