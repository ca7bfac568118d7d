//! Messages, tool calls and completions, independent of the wire format.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Who speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// Instructions.
    System,
    /// The user.
    User,
    /// The model.
    Assistant,
    /// A tool's result.
    Tool,
}

/// One message of a conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    /// Who speaks.
    pub role: Role,
    /// The text (for a tool message: the tool's result).
    pub content: String,
    /// Tool calls made by the assistant in this message.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    /// For a tool message: the call it answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    /// Byte offsets in `content` where a beginning shared with other calls ends (the task every
    /// step repeats, say). Anthropic's wire marks each such beginning for its prompt cache;
    /// the others send the text as it is (their caches find common beginnings by themselves).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cache_breaks: Vec<usize>,
}

impl Message {
    fn new(role: Role, content: impl Into<String>) -> Self {
        Self {
            role,
            content: content.into(),
            tool_calls: Vec::new(),
            tool_call_id: None,
            cache_breaks: Vec::new(),
        }
    }

    /// This message with `breaks` as its [`Message::cache_breaks`].
    #[must_use]
    pub fn with_cache_breaks(mut self, breaks: Vec<usize>) -> Self {
        self.cache_breaks = breaks;
        self
    }

    /// A system message.
    pub fn system(content: impl Into<String>) -> Self {
        Self::new(Role::System, content)
    }

    /// A user message.
    pub fn user(content: impl Into<String>) -> Self {
        Self::new(Role::User, content)
    }

    /// An assistant message with text only.
    pub fn assistant(content: impl Into<String>) -> Self {
        Self::new(Role::Assistant, content)
    }

    /// An assistant message with tool calls (and maybe text).
    pub fn assistant_tool_calls(content: impl Into<String>, tool_calls: Vec<ToolCall>) -> Self {
        Self {
            tool_calls,
            ..Self::new(Role::Assistant, content)
        }
    }

    /// A tool's result, answering the call with this id.
    pub fn tool_result(tool_call_id: impl Into<String>, content: impl Into<String>) -> Self {
        Self {
            tool_call_id: Some(tool_call_id.into()),
            ..Self::new(Role::Tool, content)
        }
    }
}

/// A call of a tool by the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The provider's id for the call (answer it with [`Message::tool_result`]).
    pub id: String,
    /// The tool's name.
    pub name: String,
    /// The arguments; a JSON string holding the raw text when the model wrote invalid JSON.
    pub arguments: Value,
}

/// A tool the model may call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    /// The tool's name (`^[a-zA-Z0-9_-]+$`).
    pub name: String,
    /// What it does, for the model.
    pub description: String,
    /// JSON Schema of its arguments (an object schema).
    pub parameters: Value,
}

/// Whether and which tool the model must call.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum ToolChoice {
    /// The model decides.
    #[default]
    Auto,
    /// The model must call some tool.
    Required,
    /// The model must call this tool.
    Tool(String),
}

/// Why the model stopped.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FinishReason {
    /// A natural end or a stop sequence.
    Stop,
    /// The token limit cut the answer.
    Length,
    /// The model called tools.
    ToolCalls,
    /// A content filter stopped it.
    ContentFilter,
    /// Anything else, as the provider named it.
    Other(String),
}

/// Token counts of one call, or summed over several.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// Prompt tokens (Anthropic: including cache reads and writes).
    pub input_tokens: u64,
    /// Generated tokens.
    pub output_tokens: u64,
    /// Of `input_tokens`, those the provider's prompt cache served (OpenAI and llama.cpp
    /// `prompt_tokens_details.cached_tokens`, older llama.cpp `timings.cache_n`, Anthropic
    /// `cache_read_input_tokens`); 0 when the provider does not say.
    #[serde(default)]
    pub cached_input_tokens: u64,
}

impl Usage {
    /// The sum of two counts.
    #[must_use]
    pub fn plus(self, other: Usage) -> Usage {
        Usage {
            input_tokens: self.input_tokens + other.input_tokens,
            output_tokens: self.output_tokens + other.output_tokens,
            cached_input_tokens: self.cached_input_tokens + other.cached_input_tokens,
        }
    }
}

/// The totals over every call a client made.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct UsageTotal {
    /// Calls answered (repairs count; retries of one call don't).
    pub calls: u64,
    /// HTTP retries made.
    pub retries: u64,
    /// Tokens.
    pub usage: Usage,
    /// Wall time spent in calls.
    pub latency: Duration,
}

/// A model's answer to one call.
#[derive(Debug, Clone, PartialEq)]
pub struct Completion {
    /// The pipeline step it answers.
    pub step: String,
    /// The text (empty when the model only called tools).
    pub text: String,
    /// Tool calls.
    pub tool_calls: Vec<ToolCall>,
    /// Tokens.
    pub usage: Usage,
    /// Wall time of the call, retries included (zero when replayed).
    pub latency: Duration,
    /// Why the model stopped.
    pub finish_reason: FinishReason,
}
