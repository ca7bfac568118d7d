//! One client for every model autocoder talks to: OpenAI Chat Completions and every
//! OpenAI-compatible server (Ollama, vLLM, llama.cpp, `OpenRouter`, Groq, Gemini), and Anthropic
//! Messages. It asks for typed structured output (JSON Schema from the Rust type; OpenAI strict
//! `json_schema`, an Anthropic forced tool call, or JSON mode with the schema in the prompt),
//! repairs bad JSON once, calls tools, retries 429/5xx/connection errors with backoff and
//! `Retry-After`, counts tokens and latency, logs every exchange (JSONL), and records or replays
//! runs without network. Every call names its pipeline step; the step goes into the
//! conversation log, the recording, the tracing span and the `x-autocoder-step` header.
//!
//! ```no_run
//! # async fn demo() -> Result<(), autocoder_llm::LlmError> {
//! use autocoder_llm::{LlmClient, LlmConfig, Message, ModelSpec};
//!
//! #[derive(serde::Deserialize, schemars::JsonSchema)]
//! struct Plan {
//!     steps: Vec<String>,
//! }
//!
//! let mut config = LlmConfig::new(ModelSpec::parse("openai/gpt-4.1")?);
//! config.conversation_log = Some("run/conversation.jsonl".into());
//! let client = LlmClient::new(config)?; // reads OPENAI_API_KEY
//! let plan = client
//!     .structured::<Plan>("plan", &[Message::user("Plan a script that sums a CSV column.")])
//!     .await?;
//! println!("{} steps, {:?}", plan.value.steps.len(), client.usage_total());
//! # Ok(()) }
//! ```

mod cache;
mod client;
mod config;
mod error;
mod message;
mod model;
mod record;
mod store;
mod structured;
mod structured_call;
mod templates;
mod transport;
mod wire;

pub use cache::{
    CacheStats, Eviction, MODEL_CACHE_DIR_ENV_VAR, ModelCache, ModelCacheMode, cache_size, evict,
    install_model_cache,
};
pub use client::LlmClient;
pub use config::{
    API_BASE_ENV_VAR, CallParams, LlmConfig, MODEL_ENV_VAR, RetryPolicy, StructuredMode, Timeouts,
};
pub use error::LlmError;
pub use message::{
    Completion, FinishReason, Message, Role, ToolCall, ToolChoice, ToolSpec, Usage, UsageTotal,
};
pub use model::{ModelSpec, Provider, WireFormat};
/// The schema derive callers need for [`LlmClient::structured`] (`#[derive(JsonSchema)]`).
pub use schemars;
pub use store::{Answered, CallKey, CallStore, StoredAnswer};
pub use structured::{extract_json, make_strict, parse_answer, strict_schema_for};
pub use structured_call::Structured;
pub use tokio_util::sync::CancellationToken;
pub use transport::STEP_HEADER;
