//! Errors from talking to a model.

use std::path::PathBuf;

/// Why a model call (or setting up the client) failed.
#[derive(Debug, thiserror::Error)]
pub enum LlmError {
    /// The model name has no provider we know.
    #[error(
        "unknown model `{model}`: write it as provider/name with one of the providers {known} (for any OpenAI-compatible server use `openai/<name>` plus an API base)"
    )]
    UnknownModel {
        /// The name as given.
        model: String,
        /// The provider prefixes we know.
        known: String,
    },
    /// The configuration cannot work.
    #[error("invalid LLM configuration: {0}")]
    InvalidConfig(String),
    /// The API key's environment variable is not set.
    #[error(
        "no API key for {provider}: set the environment variable {env_var} (or choose another with --api-key-env)"
    )]
    MissingApiKey {
        /// The provider that needs it.
        provider: String,
        /// The variable that was read.
        env_var: String,
    },
    /// The provider rejected the credentials (HTTP 401/403); never retried.
    #[error(
        "step `{step}`: the provider rejected the API key (HTTP {status}) from {key_source}: {message}"
    )]
    Auth {
        /// The pipeline step.
        step: String,
        /// 401 or 403.
        status: u16,
        /// Where the key came from, e.g. "environment variable `OPENAI_API_KEY`".
        key_source: String,
        /// The provider's message (credentials removed).
        message: String,
    },
    /// The provider answered with an error status.
    #[error(
        "step `{step}`: the provider answered HTTP {status} after {attempts} attempt(s): {message}"
    )]
    Api {
        /// The pipeline step.
        step: String,
        /// The HTTP status.
        status: u16,
        /// How many attempts were made.
        attempts: u32,
        /// The provider's message (credentials removed).
        message: String,
    },
    /// The request could not be sent or the answer not received (connection, timeout).
    #[error("step `{step}`: request to {url} failed after {attempts} attempt(s): {message}")]
    Transport {
        /// The pipeline step.
        step: String,
        /// The endpoint.
        url: String,
        /// How many attempts were made.
        attempts: u32,
        /// What went wrong.
        message: String,
    },
    /// The provider's answer is not in the expected wire format.
    #[error(
        "step `{step}`: the provider's answer is not a valid {format} response: {message}; body starts with: {body_start}"
    )]
    InvalidResponse {
        /// The pipeline step.
        step: String,
        /// The wire format expected.
        format: &'static str,
        /// What is wrong.
        message: String,
        /// The first characters of the body.
        body_start: String,
    },
    /// The model's structured answer did not parse into the requested type, even after one
    /// repair round trip.
    #[error("step `{step}`: the model's answer is not valid structured output: {error}")]
    InvalidStructuredOutput {
        /// The pipeline step.
        step: String,
        /// The parse or type error.
        error: String,
        /// The model's last answer, as received.
        raw: String,
    },
    /// The caller's validation rejected the answer twice.
    #[error("step `{step}`: the model's answer was rejected twice: {reason}")]
    Rejected {
        /// The pipeline step.
        step: String,
        /// The caller's last reason.
        reason: String,
        /// The model's last answer.
        raw: String,
    },
    /// The structured-output mode does not fit the provider.
    #[error("structured output mode {mode} is not available for {provider}")]
    UnsupportedMode {
        /// The mode asked for.
        mode: &'static str,
        /// The provider.
        provider: String,
    },
    /// A replayed run asked for a call the recording does not have.
    #[error("replay from {path}: the run diverged at call #{call_index} (step `{step}`): {detail}")]
    ReplayMismatch {
        /// The recording.
        path: PathBuf,
        /// The step of the call that had no match.
        step: String,
        /// The 0-based index of the call in this run.
        call_index: u64,
        /// What the recording has instead.
        detail: String,
    },
    /// A log or recording file could not be read or written.
    #[error("{action} {path}: {source}")]
    Io {
        /// What was being done, e.g. "cannot append to the conversation log".
        action: &'static str,
        /// The file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// A recording line is not valid.
    #[error("recording {path}, line {line}: {message}")]
    BadRecording {
        /// The recording.
        path: PathBuf,
        /// 1-based line number.
        line: usize,
        /// What is wrong.
        message: String,
    },
    /// A prompt template could not be loaded or rendered (a bug in `templates/llm/`, or in a
    /// user's override of it).
    #[error(transparent)]
    Template(#[from] autocoder_prompts::PromptError),
    /// The call was cancelled through the client's cancellation token.
    #[error("step `{step}`: cancelled")]
    Cancelled {
        /// The pipeline step.
        step: String,
    },
    /// The HTTP client could not be built.
    #[error("cannot build the HTTP client: {0}")]
    HttpClient(#[source] reqwest::Error),
}

impl LlmError {
    /// Whether trying the same work again later may succeed: the provider was unreachable,
    /// overloaded or rate-limited beyond the retries, or the call was cut off by a timeout.
    /// Configuration, credential, replay and answer-format errors are not transient.
    pub fn is_transient(&self) -> bool {
        match self {
            Self::Transport { .. } => true,
            Self::Api { status, .. } => matches!(status, 408 | 409 | 429 | 500..=599),
            _ => false,
        }
    }
}
