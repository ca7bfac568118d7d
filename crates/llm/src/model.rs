//! Model names in the `provider/name` convention users know from LiteLLM.

use std::fmt;

use crate::LlmError;

/// Which HTTP API a provider speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WireFormat {
    /// OpenAI Chat Completions (`POST {base}/chat/completions`).
    OpenAi,
    /// Anthropic Messages (`POST {base}/messages`).
    Anthropic,
}

impl WireFormat {
    /// A short name for messages.
    pub fn name(self) -> &'static str {
        match self {
            Self::OpenAi => "OpenAI chat completions",
            Self::Anthropic => "Anthropic messages",
        }
    }
}

/// A model provider.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Provider {
    /// OpenAI, or any OpenAI-compatible server given an API base (vLLM, llama.cpp, ...).
    OpenAi,
    /// Anthropic.
    Anthropic,
    /// Ollama's OpenAI-compatible endpoint (no key).
    Ollama,
    /// `OpenRouter` (OpenAI-compatible).
    OpenRouter,
    /// Groq (OpenAI-compatible).
    Groq,
    /// Gemini's OpenAI-compatible endpoint.
    Gemini,
}

const PREFIXES: [(&str, Provider); 7] = [
    ("openai", Provider::OpenAi),
    ("anthropic", Provider::Anthropic),
    ("ollama", Provider::Ollama),
    ("ollama_chat", Provider::Ollama),
    ("openrouter", Provider::OpenRouter),
    ("groq", Provider::Groq),
    ("gemini", Provider::Gemini),
];

impl Provider {
    /// The prefix users write, e.g. `openai`.
    pub fn prefix(self) -> &'static str {
        match self {
            Self::OpenAi => "openai",
            Self::Anthropic => "anthropic",
            Self::Ollama => "ollama",
            Self::OpenRouter => "openrouter",
            Self::Groq => "groq",
            Self::Gemini => "gemini",
        }
    }

    /// The HTTP API it speaks.
    pub fn wire(self) -> WireFormat {
        match self {
            Self::Anthropic => WireFormat::Anthropic,
            _ => WireFormat::OpenAi,
        }
    }

    /// The API base used when none is given (requests go to `{base}/chat/completions` or
    /// `{base}/messages`).
    pub fn default_api_base(self) -> &'static str {
        match self {
            Self::OpenAi => "https://api.openai.com/v1",
            Self::Anthropic => "https://api.anthropic.com/v1",
            Self::Ollama => "http://127.0.0.1:11434/v1",
            Self::OpenRouter => "https://openrouter.ai/api/v1",
            Self::Groq => "https://api.groq.com/openai/v1",
            Self::Gemini => "https://generativelanguage.googleapis.com/v1beta/openai",
        }
    }

    /// The environment variable the key is read from by default (`None`: no key needed).
    pub fn default_key_env(self) -> Option<&'static str> {
        match self {
            Self::OpenAi => Some("OPENAI_API_KEY"),
            Self::Anthropic => Some("ANTHROPIC_API_KEY"),
            Self::Ollama => None,
            Self::OpenRouter => Some("OPENROUTER_API_KEY"),
            Self::Groq => Some("GROQ_API_KEY"),
            Self::Gemini => Some("GEMINI_API_KEY"),
        }
    }
}

/// A provider and a model name, parsed from `provider/name` (`openai/gpt-4.1`,
/// `anthropic/claude-sonnet-4-5`, `ollama/qwen2.5-coder`) or a bare `gpt-*`, `o1*`/`o3*`/`o4*`
/// or `claude-*` name.
///
/// ```
/// use autocoder_llm::{ModelSpec, Provider};
/// let spec = ModelSpec::parse("claude-sonnet-4-5").unwrap();
/// assert_eq!(spec.provider(), Provider::Anthropic);
/// assert_eq!(spec.to_string(), "anthropic/claude-sonnet-4-5");
/// assert_eq!(ModelSpec::parse("openrouter/qwen/qwen-2.5-coder").unwrap().name(), "qwen/qwen-2.5-coder");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelSpec {
    provider: Provider,
    name: String,
}

impl ModelSpec {
    /// A spec from its parts.
    pub fn new(provider: Provider, name: impl Into<String>) -> Self {
        Self {
            provider,
            name: name.into(),
        }
    }

    /// Parses a model name; see the type's documentation for the accepted forms.
    pub fn parse(text: &str) -> Result<Self, LlmError> {
        let text = text.trim();
        let unknown = || LlmError::UnknownModel {
            model: text.to_owned(),
            known: PREFIXES
                .iter()
                .map(|(prefix, _)| format!("`{prefix}/`"))
                .collect::<Vec<_>>()
                .join(", "),
        };
        if let Some((prefix, name)) = text.split_once('/') {
            let provider = PREFIXES
                .iter()
                .find(|(known, _)| known.eq_ignore_ascii_case(prefix))
                .map(|(_, provider)| *provider)
                .ok_or_else(unknown)?;
            if name.is_empty() {
                return Err(unknown());
            }
            return Ok(Self::new(provider, name));
        }
        let bare_openai = ["gpt-", "chatgpt-", "o1", "o3", "o4"];
        if bare_openai.iter().any(|prefix| text.starts_with(prefix)) {
            Ok(Self::new(Provider::OpenAi, text))
        } else if text.starts_with("claude-") {
            Ok(Self::new(Provider::Anthropic, text))
        } else {
            Err(unknown())
        }
    }

    /// The provider.
    pub fn provider(&self) -> Provider {
        self.provider
    }

    /// The model name sent to the provider.
    pub fn name(&self) -> &str {
        &self.name
    }
}

impl fmt::Display for ModelSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.provider.prefix(), self.name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_litellm_names() {
        let cases = [
            ("openai/gpt-4.1", Provider::OpenAi, "gpt-4.1"),
            (
                "anthropic/claude-sonnet-4-5",
                Provider::Anthropic,
                "claude-sonnet-4-5",
            ),
            ("ollama/qwen2.5-coder", Provider::Ollama, "qwen2.5-coder"),
            ("gpt-4o", Provider::OpenAi, "gpt-4o"),
            ("o3-mini", Provider::OpenAi, "o3-mini"),
            (
                "claude-3-5-haiku-latest",
                Provider::Anthropic,
                "claude-3-5-haiku-latest",
            ),
            ("groq/llama-3.3-70b", Provider::Groq, "llama-3.3-70b"),
        ];
        for (text, provider, name) in cases {
            let spec = ModelSpec::parse(text).unwrap();
            assert_eq!((spec.provider(), spec.name()), (provider, name), "{text}");
        }
    }

    #[test]
    fn unknown_names_say_how_to_write_them() {
        let error = ModelSpec::parse("mistral-large").unwrap_err().to_string();
        assert!(error.contains("`openai/<name>`"), "{error}");
        assert!(ModelSpec::parse("nosuch/model").is_err());
        assert!(ModelSpec::parse("openai/").is_err());
    }
}
