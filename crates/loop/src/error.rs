//! Errors of the generation loop.

use autocoder_llm::LlmError;
use autocoder_prompts::PromptError;
use autocoder_sandbox::SandboxError;

use crate::journal::JournalError;
use crate::rundir::RunDirError;

/// What stopped a generation (a failed generation that ran to its end is not an error: it is a
/// result with `success: false`).
#[derive(Debug, thiserror::Error)]
pub enum LoopError {
    /// The request is invalid; nothing was sent to a model.
    #[error("invalid request: {0}")]
    InvalidRequest(String),
    /// A sample could not be read, profiled or checked.
    #[error("sample data: {0}")]
    Data(String),
    /// The model could not be used (no key, key rejected, unreachable, replay diverged ...).
    #[error(transparent)]
    Model(#[from] LlmError),
    /// A prompt template failed to render.
    #[error(transparent)]
    Prompt(#[from] PromptError),
    /// The sandbox could not build an environment or run code.
    #[error(transparent)]
    Sandbox(#[from] SandboxError),
    /// The run directory could not be written or read.
    #[error(transparent)]
    RunDir(#[from] RunDirError),
    /// The journal could not be written or resumed.
    #[error(transparent)]
    Journal(#[from] JournalError),
}
