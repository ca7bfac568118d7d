//! Everything a client needs to know before its first call.

use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::ModelSpec;

/// The environment variable naming the model (`provider/name`) when none is given.
pub const MODEL_ENV_VAR: &str = "AUTOCODER_MODEL";
/// The environment variable holding the API base URL when none is given.
pub const API_BASE_ENV_VAR: &str = "AUTOCODER_API_BASE";

/// Sampling parameters of a call. `None` leaves the provider's default.
///
/// Precedence, lowest first: [`LlmConfig::params`] (defaults), the values a call passes (a
/// step's own budget, e.g. more tokens for code than for a plan), then
/// [`LlmConfig::forced_params`] (what the user pinned, e.g. `--temperature 0`). Unset fields
/// never override, so a pinned temperature leaves each step's `max_tokens` alone. None of these
/// fields can switch off a call's structured-output settings.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CallParams {
    /// Sampling temperature.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    /// Most tokens to generate (Anthropic requires one: 4096 when unset).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
    /// Nucleus sampling.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub top_p: Option<f64>,
    /// Penalty on tokens by how often they already appear (OpenAI-compatible servers only;
    /// against the loops small local models fall into). Not sent to Anthropic, which has none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frequency_penalty: Option<f64>,
    /// Penalty on tokens that already appear at all (OpenAI-compatible servers only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub presence_penalty: Option<f64>,
    /// Seed for reproducible sampling (OpenAI-compatible servers only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    /// Stop sequences.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stop: Vec<String>,
}

impl CallParams {
    /// These parameters with every field set in `overrides` replaced.
    #[must_use]
    pub fn overridden_by(&self, overrides: &CallParams) -> CallParams {
        CallParams {
            temperature: overrides.temperature.or(self.temperature),
            max_tokens: overrides.max_tokens.or(self.max_tokens),
            top_p: overrides.top_p.or(self.top_p),
            frequency_penalty: overrides.frequency_penalty.or(self.frequency_penalty),
            presence_penalty: overrides.presence_penalty.or(self.presence_penalty),
            seed: overrides.seed.or(self.seed),
            stop: if overrides.stop.is_empty() {
                self.stop.clone()
            } else {
                overrides.stop.clone()
            },
        }
    }
}

/// Connect and total timeouts of one HTTP attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timeouts {
    /// Establishing the connection.
    pub connect: Duration,
    /// The whole attempt, from sending to the last byte of the answer.
    pub total: Duration,
}

impl Default for Timeouts {
    fn default() -> Self {
        Self {
            connect: Duration::from_secs(10),
            total: Duration::from_secs(600),
        }
    }
}

/// When and how long to wait before retrying 429, 5xx and connection errors.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Retries after the first attempt (0: never retry).
    pub max_retries: u32,
    /// The wait before the first retry; doubled each time, with jitter (50-100 %).
    pub initial_backoff: Duration,
    /// The longest computed wait.
    pub max_backoff: Duration,
    /// The longest `Retry-After` honoured; a longer one is cut to this.
    pub max_retry_after: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            max_retries: 4,
            initial_backoff: Duration::from_secs(1),
            max_backoff: Duration::from_secs(30),
            max_retry_after: Duration::from_secs(120),
        }
    }
}

/// How structured output is asked for.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StructuredMode {
    /// `json_schema` for OpenAI-compatible servers, a forced tool call for Anthropic.
    #[default]
    Auto,
    /// OpenAI `response_format: {type: json_schema, strict: true}`.
    JsonSchema,
    /// JSON mode (`response_format: {type: json_object}` where supported) plus the schema in
    /// the prompt, for servers without schema support.
    JsonMode,
    /// A forced tool call whose parameters are the schema.
    Tool,
}

impl StructuredMode {
    /// The mode's name as users write it.
    pub fn name(self) -> &'static str {
        match self {
            Self::Auto => "auto",
            Self::JsonSchema => "json_schema",
            Self::JsonMode => "json_mode",
            Self::Tool => "tool",
        }
    }
}

/// The client's configuration.
#[derive(Debug, Clone)]
pub struct LlmConfig {
    /// The model.
    pub model: ModelSpec,
    /// Overrides the provider's API base (e.g. `http://127.0.0.1:8089/v1`).
    pub api_base: Option<String>,
    /// Overrides the environment variable the API key is read from.
    pub api_key_env: Option<String>,
    /// Default sampling parameters of every call (a call's own values win).
    pub params: CallParams,
    /// Parameters the user pinned: they win over a call's own values.
    pub forced_params: CallParams,
    /// Any other provider parameter (`reasoning_effort`, `top_k`, ...), added to every request
    /// body under the fields the request sets itself: a key the body already has keeps the
    /// body's value (LiteLLM's `litellm_params`).
    pub extra_body: serde_json::Map<String, serde_json::Value>,
    /// HTTP timeouts.
    pub timeouts: Timeouts,
    /// Retries.
    pub retry: RetryPolicy,
    /// Appends every request and response (JSONL) to this file.
    pub conversation_log: Option<PathBuf>,
    /// Appends each call's fingerprint and answer (JSONL) to this file.
    pub record: Option<PathBuf>,
    /// Answers every call from this recording, with no network.
    pub replay: Option<PathBuf>,
    /// How structured output is asked for.
    pub structured_mode: StructuredMode,
    /// A directory of prompt templates overriding the built-in ones by name
    /// (`DIR/llm/json_repair.j2`, ...); see [`autocoder_prompts::Prompts::with_overrides`].
    pub prompts_dir: Option<PathBuf>,
}

impl LlmConfig {
    /// Defaults for this model.
    pub fn new(model: ModelSpec) -> Self {
        Self {
            model,
            api_base: None,
            api_key_env: None,
            params: CallParams::default(),
            forced_params: CallParams::default(),
            extra_body: serde_json::Map::new(),
            timeouts: Timeouts::default(),
            retry: RetryPolicy::default(),
            conversation_log: None,
            record: None,
            replay: None,
            structured_mode: StructuredMode::Auto,
            prompts_dir: None,
        }
    }

    /// The parameters a call with these values sends (see [`CallParams`] for the precedence).
    pub fn effective_params(&self, call: &CallParams) -> CallParams {
        self.params
            .overridden_by(call)
            .overridden_by(&self.forced_params)
    }
}
