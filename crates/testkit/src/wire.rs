//! What a request asks for, and answers in the OpenAI and Anthropic wire formats.

use serde_json::{Value, json};

use crate::script::{Reply, ScriptToolCall, ScriptUsage};

/// The two wire formats the server speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum WireFormat {
    /// `POST .../chat/completions`.
    OpenAi,
    /// `POST .../messages`.
    Anthropic,
}

impl WireFormat {
    /// The format served at this path, if any.
    pub(crate) fn from_path(path: &str) -> Option<Self> {
        if path.ends_with("/chat/completions") {
            Some(Self::OpenAi)
        } else if path.ends_with("/messages") {
            Some(Self::Anthropic)
        } else {
            None
        }
    }
}

/// The parts of a request that entries match on.
#[derive(Debug, Default)]
pub(crate) struct RequestKeys {
    pub(crate) step: Option<String>,
    /// Structured-output schema name or forced tool name.
    pub(crate) schema: Option<String>,
    /// The forced tool, when the request forces one.
    pub(crate) forced_tool: Option<String>,
    /// Names of the tools offered.
    pub(crate) tools: Vec<String>,
    pub(crate) model: String,
}

impl RequestKeys {
    pub(crate) fn read(format: WireFormat, step: Option<String>, body: &Value) -> Self {
        let str_at = |pointer: &str| {
            body.pointer(pointer)
                .and_then(Value::as_str)
                .map(str::to_owned)
        };
        let (forced_tool, tool_name_pointer) = match format {
            WireFormat::OpenAi => (str_at("/tool_choice/function/name"), "/function/name"),
            WireFormat::Anthropic => (
                (body.pointer("/tool_choice/type").and_then(Value::as_str) == Some("tool"))
                    .then(|| str_at("/tool_choice/name"))
                    .flatten(),
                "/name",
            ),
        };
        let schema = str_at("/response_format/json_schema/name").or_else(|| forced_tool.clone());
        let tools = body
            .get("tools")
            .and_then(Value::as_array)
            .map(|tools| {
                tools
                    .iter()
                    .filter_map(|tool| tool.pointer(tool_name_pointer).and_then(Value::as_str))
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default();
        Self {
            step,
            schema,
            forced_tool,
            tools,
            model: str_at("/model").unwrap_or_default(),
        }
    }

    pub(crate) fn describe(&self) -> String {
        format!(
            "step={} schema={} tools=[{}]",
            self.step
                .as_deref()
                .unwrap_or("(no x-autocoder-step header)"),
            self.schema.as_deref().unwrap_or("(none)"),
            self.tools.join(", ")
        )
    }
}

/// An HTTP answer.
pub(crate) struct Answer {
    pub(crate) status: u16,
    pub(crate) retry_after: Option<u64>,
    pub(crate) body: String,
}

/// The assistant turn to send, independent of the wire format.
enum Turn {
    Text { text: String, truncated: bool },
    Tools(Vec<ScriptToolCall>),
}

pub(crate) fn answer(
    format: WireFormat,
    keys: &RequestKeys,
    reply: &Reply,
    usage: ScriptUsage,
    serial: usize,
) -> Answer {
    let turn = match reply {
        Reply::Text(text) => Turn::Text {
            text: text.clone(),
            truncated: false,
        },
        Reply::Json(value) => match &keys.forced_tool {
            Some(name) => Turn::Tools(vec![ScriptToolCall {
                id: None,
                name: name.clone(),
                arguments: value.clone(),
            }]),
            None => Turn::Text {
                text: value.to_string(),
                truncated: false,
            },
        },
        Reply::Truncated { json, keep_chars } => Turn::Text {
            text: json.to_string().chars().take(*keep_chars).collect(),
            truncated: true,
        },
        Reply::ToolCalls(calls) => Turn::Tools(calls.clone()),
        Reply::HttpError {
            status,
            retry_after,
            message,
        } => {
            return Answer {
                status: *status,
                retry_after: *retry_after,
                body: error_body(format, *status, message).to_string(),
            };
        }
        Reply::MalformedBody(body) => {
            return Answer {
                status: 200,
                retry_after: None,
                body: body.clone(),
            };
        }
    };
    let body = match format {
        WireFormat::OpenAi => openai_body(&keys.model, turn, usage, serial),
        WireFormat::Anthropic => anthropic_body(&keys.model, turn, usage, serial),
    };
    Answer {
        status: 200,
        retry_after: None,
        body: body.to_string(),
    }
}

pub(crate) fn error_body(format: WireFormat, status: u16, message: &str) -> Value {
    let kind = match status {
        401 => "authentication_error",
        403 => "permission_error",
        429 => "rate_limit_error",
        400..=499 => "invalid_request_error",
        _ => "api_error",
    };
    match format {
        WireFormat::OpenAi => json!({"error": {"message": message, "type": kind, "code": status}}),
        WireFormat::Anthropic => {
            json!({"type": "error", "error": {"type": kind, "message": message}})
        }
    }
}

fn call_id(call: &ScriptToolCall, serial: usize, index: usize) -> String {
    call.id
        .clone()
        .unwrap_or_else(|| format!("call_{serial}_{index}"))
}

fn openai_body(model: &str, turn: Turn, usage: ScriptUsage, serial: usize) -> Value {
    let (message, finish_reason) = match turn {
        Turn::Text { text, truncated } => (
            json!({"role": "assistant", "content": text}),
            if truncated { "length" } else { "stop" },
        ),
        Turn::Tools(calls) => {
            let calls: Vec<Value> = calls
                .iter()
                .enumerate()
                .map(|(index, call)| {
                    json!({
                        "id": call_id(call, serial, index),
                        "type": "function",
                        "function": {"name": call.name, "arguments": call.arguments.to_string()},
                    })
                })
                .collect();
            (
                json!({"role": "assistant", "content": null, "tool_calls": calls}),
                "tool_calls",
            )
        }
    };
    json!({
        "id": format!("chatcmpl-scripted-{serial}"),
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}],
        "usage": {
            "prompt_tokens": usage.input_tokens,
            "completion_tokens": usage.output_tokens,
            "total_tokens": usage.input_tokens + usage.output_tokens,
        },
    })
}

fn anthropic_body(model: &str, turn: Turn, usage: ScriptUsage, serial: usize) -> Value {
    let (content, stop_reason) = match turn {
        Turn::Text { text, truncated } => (
            vec![json!({"type": "text", "text": text})],
            if truncated { "max_tokens" } else { "end_turn" },
        ),
        Turn::Tools(calls) => (
            calls
                .iter()
                .enumerate()
                .map(|(index, call)| {
                    json!({
                        "type": "tool_use",
                        "id": call_id(call, serial, index),
                        "name": call.name,
                        "input": call.arguments,
                    })
                })
                .collect(),
            "tool_use",
        ),
    };
    json!({
        "id": format!("msg_scripted_{serial}"),
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": stop_reason,
        "usage": {"input_tokens": usage.input_tokens, "output_tokens": usage.output_tokens},
    })
}
