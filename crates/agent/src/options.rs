//! What an agent run is asked to do and within which limits: the pipeline's request plus the
//! agent's own settings (`generate --agent`'s flags).

use std::path::PathBuf;
use std::time::Duration;

use autocoder_llm::{ModelSpec, Provider};
use autocoder_loop::GenerateOptions;
use autocoder_loop::journal::AgentRecord;

use crate::AgentError;

/// How the tools reach the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolProtocol {
    /// The API's own tool calls (OpenAI-compatible `tools`, Anthropic `tool_use`).
    Native,
    /// One JSON action object per turn (`{"thought": ..., "tool_call": {"name": ..., "parameters":
    /// {...}}}`) through structured
    /// output, for servers and models whose tool calls do not work.
    Json,
}

impl ToolProtocol {
    /// The name users type (`--tool-protocol native|json`).
    pub fn name(self) -> &'static str {
        match self {
            Self::Native => "native",
            Self::Json => "json",
        }
    }

    /// Parses a name typed by a user.
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "native" => Some(Self::Native),
            "json" => Some(Self::Json),
            _ => None,
        }
    }

    /// The default for a model: JSON for local servers (Ollama, an OpenAI-compatible server on
    /// this machine such as llama.cpp, whose models answer tool requests with Markdown), native
    /// tool calls for the hosted APIs.
    pub fn default_for(model: &ModelSpec, api_base: Option<&str>) -> Self {
        if is_local(model, api_base) {
            Self::Json
        } else {
            Self::Native
        }
    }
}

/// Whether the model is served on this machine (Ollama, or an API base on localhost).
pub fn is_local(model: &ModelSpec, api_base: Option<&str>) -> bool {
    model.provider() == Provider::Ollama
        || api_base.is_some_and(|base| {
            let host = base
                .split("://")
                .nth(1)
                .unwrap_or(base)
                .split(['/', ':'])
                .next()
                .unwrap_or_default();
            matches!(host, "localhost" | "127.0.0.1" | "[" | "0.0.0.0") || base.contains("://[::1]")
        })
}

/// The context window assumed for a model: 8k tokens for local models (the local llama.cpp
/// model's), 128k for hosted ones.
pub fn default_context_tokens(local: bool) -> usize {
    if local { 8_192 } else { 128_000 }
}

/// An agent run.
#[derive(Debug, Clone)]
pub struct AgentOptions {
    /// The request, as for the pipeline (task, samples, contract, rules, limits, run directory,
    /// sandbox); `limits.token_budget` bounds the run's tokens, `limits.max_iterations` is unused.
    pub generate: GenerateOptions,
    /// Model turns at most.
    pub max_turns: u32,
    /// How tools are offered.
    pub protocol: ToolProtocol,
    /// The model's context window in tokens; older turns are dropped to stay inside it.
    pub context_tokens: usize,
    /// Characters of one tool result the model sees; longer ones keep their head and tail.
    pub tool_output_chars: usize,
    /// Wall-clock limit of the whole run.
    pub run_timeout: Duration,
    /// Wall-clock limit of one tool call (sandbox runs also have the sandbox's own timeout;
    /// building an environment gets at least ten minutes).
    pub tool_timeout: Duration,
    /// A command policy file replacing the built-in one.
    pub policy: Option<PathBuf>,
}

impl AgentOptions {
    /// Defaults for `model` at `api_base`: 50 turns, the protocol and context window its
    /// locality suggests, tool outputs cut to [`output_chars_for`] the window.
    pub fn new(generate: GenerateOptions, model: &ModelSpec, api_base: Option<&str>) -> Self {
        let local = is_local(model, api_base);
        let context_tokens = default_context_tokens(local);
        Self {
            generate,
            max_turns: 50,
            protocol: ToolProtocol::default_for(model, api_base),
            context_tokens,
            tool_output_chars: output_chars_for(context_tokens),
            run_timeout: Duration::from_secs(3_600),
            tool_timeout: Duration::from_secs(300),
            policy: None,
        }
    }

    /// The agent's settings as the journal keeps them.
    pub fn record(&self) -> AgentRecord {
        AgentRecord {
            max_turns: self.max_turns,
            protocol: self.protocol.name().to_owned(),
            context_tokens: self.context_tokens,
            tool_output_chars: self.tool_output_chars,
            run_timeout_seconds: self.run_timeout.as_secs(),
            tool_timeout_seconds: self.tool_timeout.as_secs(),
            policy: self.policy.clone(),
        }
    }

    /// The options of a journaled run: `generate` (the journal's request) with `record`'s settings.
    pub fn from_record(
        generate: GenerateOptions,
        record: &AgentRecord,
    ) -> Result<Self, AgentError> {
        let protocol = ToolProtocol::from_name(&record.protocol).ok_or_else(|| {
            AgentError::InvalidRequest(format!(
                "the journal names the tool protocol `{}`, which this autocoder does not have",
                record.protocol
            ))
        })?;
        Ok(Self {
            generate,
            max_turns: record.max_turns,
            protocol,
            context_tokens: record.context_tokens,
            tool_output_chars: record.tool_output_chars,
            run_timeout: Duration::from_secs(record.run_timeout_seconds),
            tool_timeout: Duration::from_secs(record.tool_timeout_seconds),
            policy: record.policy.clone(),
        })
    }
}

/// Characters of a tool result for a context window: an eighth of it at three characters a
/// token (3072 for 8k), between 1000 and 6000.
pub fn output_chars_for(context_tokens: usize) -> usize {
    (context_tokens * 3 / 8).clamp(1_000, 6_000)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_models_default_to_json_and_a_small_window() {
        let openai = ModelSpec::parse("openai/qwen").unwrap();
        assert_eq!(
            ToolProtocol::default_for(&openai, Some("http://127.0.0.1:8080/v1")),
            ToolProtocol::Json
        );
        assert_eq!(
            ToolProtocol::default_for(&openai, Some("http://localhost:8080/v1")),
            ToolProtocol::Json
        );
        assert_eq!(
            ToolProtocol::default_for(&openai, None),
            ToolProtocol::Native
        );
        let ollama = ModelSpec::parse("ollama/qwen2.5-coder").unwrap();
        assert_eq!(ToolProtocol::default_for(&ollama, None), ToolProtocol::Json);
        let claude = ModelSpec::parse("anthropic/claude-sonnet-4-5").unwrap();
        let options = AgentOptions::new(GenerateOptions::default(), &claude, None);
        assert_eq!(options.protocol, ToolProtocol::Native);
        assert_eq!(options.context_tokens, 128_000);
        let local = AgentOptions::new(
            GenerateOptions::default(),
            &openai,
            Some("http://127.0.0.1:8080/v1"),
        );
        assert_eq!(local.context_tokens, 8_192);
        assert_eq!(local.tool_output_chars, 3_072);
    }
}
