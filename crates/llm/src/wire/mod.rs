//! Translation between our types and the providers' JSON.

pub(crate) mod anthropic;
pub(crate) mod openai;

use serde_json::Value;

use crate::{CallParams, FinishReason, Message, ToolCall, ToolChoice, ToolSpec, Usage};

/// How a call asks for structured output at the wire level.
#[derive(Debug, Clone)]
pub(crate) enum ResponseFormat {
    /// `response_format: json_schema` (OpenAI wire only).
    JsonSchema { name: String, schema: Value },
    /// `response_format: json_object` (OpenAI wire only; Anthropic ignores it).
    JsonObject,
}

/// One call, in wire-independent terms.
pub(crate) struct WireRequest<'a> {
    pub(crate) model: &'a str,
    pub(crate) messages: &'a [Message],
    pub(crate) params: &'a CallParams,
    pub(crate) tools: &'a [ToolSpec],
    pub(crate) tool_choice: &'a ToolChoice,
    pub(crate) response_format: Option<&'a ResponseFormat>,
}

/// The parts of a provider's answer we use.
#[derive(Debug)]
pub(crate) struct WireReply {
    pub(crate) text: String,
    pub(crate) tool_calls: Vec<ToolCall>,
    pub(crate) usage: Usage,
    pub(crate) finish_reason: FinishReason,
}

fn u64_at(value: &Value, pointer: &str) -> u64 {
    value.pointer(pointer).and_then(Value::as_u64).unwrap_or(0)
}
