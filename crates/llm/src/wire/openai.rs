//! OpenAI Chat Completions (and every compatible server).

use serde_json::{Map, Value, json};

use super::{ResponseFormat, WireReply, WireRequest, u64_at};
use crate::{FinishReason, Message, Role, ToolCall, ToolChoice, Usage};

/// The request body. OpenAI's own API wants `max_completion_tokens` (its reasoning models
/// reject `max_tokens`); compatible servers (llama.cpp, vLLM, Ollama, ...) read `max_tokens`.
pub(crate) fn body(request: &WireRequest<'_>, openai_proper: bool) -> Value {
    let mut body = Map::new();
    body.insert("model".into(), json!(request.model));
    body.insert(
        "messages".into(),
        Value::Array(request.messages.iter().map(message).collect()),
    );
    let params = request.params;
    if let Some(temperature) = params.temperature {
        body.insert("temperature".into(), json!(temperature));
    }
    if let Some(max_tokens) = params.max_tokens {
        let key = if openai_proper {
            "max_completion_tokens"
        } else {
            "max_tokens"
        };
        body.insert(key.into(), json!(max_tokens));
    }
    if let Some(top_p) = params.top_p {
        body.insert("top_p".into(), json!(top_p));
    }
    for (key, value) in [
        ("frequency_penalty", params.frequency_penalty),
        ("presence_penalty", params.presence_penalty),
    ] {
        if let Some(value) = value {
            body.insert(key.into(), json!(value));
        }
    }
    if let Some(seed) = params.seed {
        body.insert("seed".into(), json!(seed));
    }
    if !params.stop.is_empty() {
        body.insert("stop".into(), json!(params.stop));
    }
    if !request.tools.is_empty() {
        let tools: Vec<Value> = request
            .tools
            .iter()
            .map(|tool| {
                json!({"type": "function", "function": {
                    "name": tool.name,
                    "description": tool.description,
                    "parameters": tool.parameters,
                }})
            })
            .collect();
        body.insert("tools".into(), Value::Array(tools));
        let choice = match request.tool_choice {
            ToolChoice::Auto => json!("auto"),
            ToolChoice::Required => json!("required"),
            ToolChoice::Tool(name) => json!({"type": "function", "function": {"name": name}}),
        };
        body.insert("tool_choice".into(), choice);
    }
    match request.response_format {
        Some(ResponseFormat::JsonSchema { name, schema }) => {
            body.insert(
                "response_format".into(),
                json!({"type": "json_schema", "json_schema": {"name": name, "strict": true, "schema": schema}}),
            );
        }
        Some(ResponseFormat::JsonObject) => {
            body.insert("response_format".into(), json!({"type": "json_object"}));
        }
        None => {}
    }
    Value::Object(body)
}

fn message(message: &Message) -> Value {
    match message.role {
        Role::System => json!({"role": "system", "content": message.content}),
        Role::User => json!({"role": "user", "content": message.content}),
        Role::Tool => json!({
            "role": "tool",
            "tool_call_id": message.tool_call_id.as_deref().unwrap_or_default(),
            "content": message.content,
        }),
        Role::Assistant if message.tool_calls.is_empty() => {
            json!({"role": "assistant", "content": message.content})
        }
        Role::Assistant => {
            let calls: Vec<Value> = message
                .tool_calls
                .iter()
                .map(|call| {
                    let arguments = match &call.arguments {
                        Value::String(raw) => raw.clone(),
                        other => other.to_string(),
                    };
                    json!({"id": call.id, "type": "function",
                           "function": {"name": call.name, "arguments": arguments}})
                })
                .collect();
            let content = if message.content.is_empty() {
                Value::Null
            } else {
                json!(message.content)
            };
            json!({"role": "assistant", "content": content, "tool_calls": calls})
        }
    }
}

pub(crate) fn parse(body: &Value) -> Result<WireReply, String> {
    let choice = body
        .pointer("/choices/0")
        .ok_or("no `choices[0]` in the answer")?;
    let message = choice
        .get("message")
        .ok_or("no `choices[0].message` in the answer")?;
    let text = match message.get("content") {
        Some(Value::String(text)) => text.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|part| part.get("text").and_then(Value::as_str))
            .collect(),
        _ => String::new(),
    };
    let mut tool_calls = Vec::new();
    for call in message
        .get("tool_calls")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let name = call
            .pointer("/function/name")
            .and_then(Value::as_str)
            .ok_or("a tool call has no `function.name`")?;
        let raw = call
            .pointer("/function/arguments")
            .and_then(Value::as_str)
            .unwrap_or("{}");
        tool_calls.push(ToolCall {
            id: call
                .get("id")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned(),
            name: name.to_owned(),
            arguments: serde_json::from_str(raw).unwrap_or_else(|_| Value::String(raw.to_owned())),
        });
    }
    let finish_reason = match choice.get("finish_reason").and_then(Value::as_str) {
        Some("stop") | None => FinishReason::Stop,
        Some("length") => FinishReason::Length,
        Some("tool_calls" | "function_call") => FinishReason::ToolCalls,
        Some("content_filter") => FinishReason::ContentFilter,
        Some(other) => FinishReason::Other(other.to_owned()),
    };
    Ok(WireReply {
        text,
        tool_calls,
        usage: Usage {
            input_tokens: u64_at(body, "/usage/prompt_tokens"),
            output_tokens: u64_at(body, "/usage/completion_tokens"),
            cached_input_tokens: cached_tokens(body),
        },
        finish_reason,
    })
}

/// Prompt tokens served from the server's cache: OpenAI's (and current llama.cpp's)
/// `prompt_tokens_details.cached_tokens`, else llama.cpp's own `timings.cache_n`.
fn cached_tokens(body: &Value) -> u64 {
    body.pointer("/usage/prompt_tokens_details/cached_tokens")
        .or_else(|| body.pointer("/timings/cache_n"))
        .and_then(Value::as_u64)
        .unwrap_or(0)
}

/// The error message in an OpenAI error body, if there is one.
pub(crate) fn error_message(body: &Value) -> Option<String> {
    body.pointer("/error/message")
        .and_then(Value::as_str)
        .map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::CallParams;

    #[test]
    fn openai_proper_gets_max_completion_tokens() {
        let params = CallParams {
            max_tokens: Some(10),
            ..CallParams::default()
        };
        let request = WireRequest {
            model: "o3",
            messages: &[],
            params: &params,
            tools: &[],
            tool_choice: &ToolChoice::Auto,
            response_format: None,
        };
        assert_eq!(body(&request, true)["max_completion_tokens"], 10);
        assert!(body(&request, true).get("max_tokens").is_none());
        assert_eq!(body(&request, false)["max_tokens"], 10);
    }

    fn answer(usage: &Value, extra: Option<(&str, Value)>) -> Value {
        let mut body = json!({"choices": [{"message": {"content": "hi"}, "finish_reason": "stop"}],
                              "usage": usage.clone()});
        if let Some((key, value)) = extra {
            body[key] = value;
        }
        body
    }

    #[test]
    fn cached_prompt_tokens_come_from_either_field() {
        let openai = answer(
            &json!({"prompt_tokens": 1585, "completion_tokens": 221,
                   "prompt_tokens_details": {"cached_tokens": 1476}}),
            None,
        );
        let usage = parse(&openai).unwrap().usage;
        assert_eq!(
            (usage.input_tokens, usage.cached_input_tokens),
            (1585, 1476)
        );
        // An older llama.cpp server says it only in its own timings.
        let llama = answer(
            &json!({"prompt_tokens": 900, "completion_tokens": 10}),
            Some(("timings", json!({"cache_n": 850, "prompt_n": 50}))),
        );
        assert_eq!(parse(&llama).unwrap().usage.cached_input_tokens, 850);
        let plain = answer(&json!({"prompt_tokens": 9, "completion_tokens": 1}), None);
        assert_eq!(parse(&plain).unwrap().usage.cached_input_tokens, 0);
    }
}
