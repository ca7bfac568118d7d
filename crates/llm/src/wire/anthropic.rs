//! Anthropic Messages.

use serde_json::{Map, Value, json};

use super::{ResponseFormat, WireReply, WireRequest, u64_at};
use crate::{FinishReason, Message, Role, ToolCall, ToolChoice, Usage};

/// Anthropic's prompt-cache marker (`cache_control`): the prefix up to a marked block is cached
/// for a few minutes and read back at a tenth of the input price.
fn ephemeral() -> Value {
    json!({"type": "ephemeral"})
}

/// Anthropic requires `max_tokens`; this is used when the call sets none.
const DEFAULT_MAX_TOKENS: u32 = 4096;

pub(crate) fn body(request: &WireRequest<'_>) -> Value {
    let mut body = Map::new();
    body.insert("model".into(), json!(request.model));
    let params = request.params;
    body.insert(
        "max_tokens".into(),
        json!(params.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS)),
    );
    let system: Vec<&str> = request
        .messages
        .iter()
        .filter(|message| message.role == Role::System)
        .map(|message| message.content.as_str())
        .collect();
    if !system.is_empty() {
        // The system prompt is the part every call of a run shares: a cache breakpoint.
        body.insert(
            "system".into(),
            json!([{"type": "text", "text": system.join("\n\n"), "cache_control": ephemeral()}]),
        );
    }
    // Anthropic takes at most four marks in a request: the system prompt's, the conversation's
    // (when it has one) and, with what is left, the user messages' shared beginnings.
    let conversation = usize::from(turn_count(request.messages) >= CONVERSATION_TURNS);
    let user_marks = CACHE_MARKS.saturating_sub(usize::from(!system.is_empty()) + conversation);
    let mut turns = messages(request.messages, user_marks);
    mark_conversation_prefix(&mut turns);
    body.insert("messages".into(), Value::Array(turns));
    if let Some(temperature) = params.temperature {
        body.insert("temperature".into(), json!(temperature));
    }
    if let Some(top_p) = params.top_p {
        body.insert("top_p".into(), json!(top_p));
    }
    if !params.stop.is_empty() {
        body.insert("stop_sequences".into(), json!(params.stop));
    }
    if !request.tools.is_empty() {
        let tools: Vec<Value> = request
            .tools
            .iter()
            .map(|tool| {
                json!({"name": tool.name, "description": tool.description, "input_schema": tool.parameters})
            })
            .collect();
        body.insert("tools".into(), Value::Array(tools));
        let choice = match request.tool_choice {
            ToolChoice::Auto => json!({"type": "auto"}),
            ToolChoice::Required => json!({"type": "any"}),
            ToolChoice::Tool(name) => json!({"type": "tool", "name": name}),
        };
        body.insert("tool_choice".into(), choice);
    }
    // Anthropic has no JSON mode: `ResponseFormat` is carried by the prompt alone.
    let _: Option<&ResponseFormat> = request.response_format;
    Value::Object(body)
}

/// Anthropic wants alternating user/assistant turns with tool results inside user turns:
/// consecutive tool results (and user text) are merged into one user message.
/// User messages' shared beginnings are marked with at most `marks` marks in all, the last
/// messages' first (their beginnings are the longest).
fn messages(messages: &[Message], mut marks: usize) -> Vec<Value> {
    let breaks: Vec<Vec<usize>> = messages
        .iter()
        .map(|message| match message.role {
            Role::User => cache_breaks(message),
            _ => Vec::new(),
        })
        .collect();
    let mut allotted = vec![0; messages.len()];
    for (index, ends) in breaks.iter().enumerate().rev() {
        allotted[index] = ends.len().min(marks);
        marks -= allotted[index];
    }
    let mut out: Vec<(&'static str, Vec<Value>)> = Vec::new();
    for ((message, ends), &limit) in messages.iter().zip(&breaks).zip(&allotted) {
        let Some(role) = side(message.role) else {
            continue;
        };
        let blocks = match message.role {
            Role::Tool => vec![json!({
                "type": "tool_result",
                "tool_use_id": message.tool_call_id.as_deref().unwrap_or_default(),
                "content": message.content,
            })],
            Role::Assistant => {
                let mut blocks = Vec::new();
                if !message.content.is_empty() {
                    blocks.push(json!({"type": "text", "text": message.content}));
                }
                for call in &message.tool_calls {
                    blocks.push(json!({"type": "tool_use", "id": call.id, "name": call.name, "input": call.arguments}));
                }
                blocks
            }
            Role::User | Role::System => user_blocks(&message.content, ends, limit),
        };
        match out.last_mut() {
            Some((last_role, last_blocks)) if *last_role == role => last_blocks.extend(blocks),
            _ => out.push((role, blocks)),
        }
    }
    out.into_iter()
        .map(|(role, blocks)| json!({"role": role, "content": blocks}))
        .collect()
}

/// Anthropic's limit of `cache_control` marks in one request.
const CACHE_MARKS: usize = 4;

/// Turns (after merging, see [`messages`]) from which a conversation's newest turn is marked.
const CONVERSATION_TURNS: usize = 3;

/// The side of the conversation a message is on, on the wire: tool results are the user's;
/// system messages are not turns (they go in `system`).
fn side(role: Role) -> Option<&'static str> {
    match role {
        Role::System => None,
        Role::User | Role::Tool => Some("user"),
        Role::Assistant => Some("assistant"),
    }
}

/// How many turns `messages` become on the wire: consecutive messages of one [`side`] are one.
fn turn_count(messages: &[Message]) -> usize {
    let mut sides: Vec<&str> = messages.iter().filter_map(|m| side(m.role)).collect();
    sides.dedup();
    sides.len()
}

/// The valid ends of `message`'s shared beginnings, in order: inside the text (not at its
/// start or end) and on a character boundary.
fn cache_breaks(message: &Message) -> Vec<usize> {
    let text = message.content.as_str();
    let mut breaks: Vec<usize> = message
        .cache_breaks
        .iter()
        .copied()
        .filter(|&at| at > 0 && at < text.len() && text.is_char_boundary(at))
        .collect();
    breaks.sort_unstable();
    breaks.dedup();
    breaks
}

/// A user message's text blocks: split where a shared beginning ends (the last `limit` of its
/// [`cache_breaks`], the longest beginnings), each such beginning marked.
fn user_blocks(text: &str, breaks: &[usize], limit: usize) -> Vec<Value> {
    let breaks = &breaks[breaks.len().saturating_sub(limit)..];
    let mut blocks = Vec::with_capacity(breaks.len() + 1);
    let mut start = 0;
    for &end in breaks {
        blocks
            .push(json!({"type": "text", "text": &text[start..end], "cache_control": ephemeral()}));
        start = end;
    }
    blocks.push(json!({"type": "text", "text": &text[start..]}));
    blocks
}

/// In a conversation that grows call by call (a repair round, a tool loop), the next call
/// repeats everything sent so far: mark the last block of the newest turn so the next call
/// reads the whole prefix from the cache. A one-turn prompt is not marked (its text is not sent
/// again, and a cache write costs more than a plain input token).
fn mark_conversation_prefix(turns: &mut [Value]) {
    if turns.len() < CONVERSATION_TURNS {
        return;
    }
    if let Some(block) = turns
        .last_mut()
        .and_then(|turn| turn.get_mut("content"))
        .and_then(Value::as_array_mut)
        .and_then(|blocks| blocks.last_mut())
        .and_then(Value::as_object_mut)
    {
        block.insert("cache_control".into(), ephemeral());
    }
}

pub(crate) fn parse(body: &Value) -> Result<WireReply, String> {
    let content = body
        .get("content")
        .and_then(Value::as_array)
        .ok_or("no `content` array in the answer")?;
    let mut text = String::new();
    let mut tool_calls = Vec::new();
    for block in content {
        match block.get("type").and_then(Value::as_str) {
            Some("text") => text.push_str(block.get("text").and_then(Value::as_str).unwrap_or("")),
            Some("tool_use") => tool_calls.push(ToolCall {
                id: block
                    .get("id")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned(),
                name: block
                    .get("name")
                    .and_then(Value::as_str)
                    .ok_or("a tool_use block has no `name`")?
                    .to_owned(),
                arguments: block.get("input").cloned().unwrap_or(Value::Null),
            }),
            _ => {}
        }
    }
    let finish_reason = match body.get("stop_reason").and_then(Value::as_str) {
        Some("end_turn" | "stop_sequence") | None => FinishReason::Stop,
        Some("max_tokens") => FinishReason::Length,
        Some("tool_use") => FinishReason::ToolCalls,
        Some("refusal") => FinishReason::ContentFilter,
        Some(other) => FinishReason::Other(other.to_owned()),
    };
    Ok(WireReply {
        text,
        tool_calls,
        usage: Usage {
            input_tokens: u64_at(body, "/usage/input_tokens")
                + u64_at(body, "/usage/cache_creation_input_tokens")
                + u64_at(body, "/usage/cache_read_input_tokens"),
            output_tokens: u64_at(body, "/usage/output_tokens"),
            cached_input_tokens: u64_at(body, "/usage/cache_read_input_tokens"),
        },
        finish_reason,
    })
}

/// The error message in an Anthropic error body, if there is one.
pub(crate) fn error_message(body: &Value) -> Option<String> {
    body.pointer("/error/message")
        .and_then(Value::as_str)
        .map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cache_reads_count_as_input_and_as_cached() {
        let answer = json!({"content": [{"type": "text", "text": "hi"}], "stop_reason": "end_turn",
            "usage": {"input_tokens": 12, "cache_creation_input_tokens": 100,
                      "cache_read_input_tokens": 3000, "output_tokens": 5}});
        let usage = parse(&answer).unwrap().usage;
        assert_eq!(usage.input_tokens, 3112);
        assert_eq!(usage.cached_input_tokens, 3000);
    }

    #[test]
    fn a_growing_conversation_marks_its_newest_turn() {
        let mut turns = vec![
            json!({"role": "user", "content": [{"type": "text", "text": "a"}]}),
            json!({"role": "assistant", "content": [{"type": "text", "text": "b"}]}),
            json!({"role": "user", "content": [{"type": "text", "text": "c"}, {"type": "text", "text": "d"}]}),
        ];
        mark_conversation_prefix(&mut turns);
        assert_eq!(
            turns[2]["content"][1]["cache_control"],
            json!({"type": "ephemeral"})
        );
        assert!(turns[2]["content"][0].get("cache_control").is_none());
        assert!(turns[0]["content"][0].get("cache_control").is_none());
        let mut one = vec![json!({"role": "user", "content": [{"type": "text", "text": "a"}]})];
        mark_conversation_prefix(&mut one);
        assert!(one[0]["content"][0].get("cache_control").is_none());
    }

    #[test]
    fn shared_beginnings_of_a_user_message_are_marked_blocks_of_the_same_text() {
        let text = "Task: sum é\nThe tests: t\nThese failed: f\nDiagnose.";
        let task_end = text.find("The tests").unwrap();
        let report_end = text.find("Diagnose").unwrap();
        // 0, the text's length, a split inside `é` and an offset past the end are not
        // beginnings; with two marks to give, the first of three valid ones is dropped.
        let inside = text.find('é').unwrap() + 1;
        let message = Message::user(text).with_cache_breaks(vec![
            report_end,
            0,
            text.len(),
            inside,
            999,
            3,
            task_end,
            task_end,
        ]);
        assert_eq!(cache_breaks(&message), [3, task_end, report_end]);
        let blocks = user_blocks(text, &cache_breaks(&message), 2);
        let texts: Vec<&str> = blocks.iter().map(|b| b["text"].as_str().unwrap()).collect();
        assert_eq!(texts.concat(), text, "the text is sent whole, in order");
        assert_eq!(
            texts,
            [
                &text[..task_end],
                &text[task_end..report_end],
                &text[report_end..]
            ]
        );
        let marked: Vec<bool> = blocks
            .iter()
            .map(|b| b.get("cache_control").is_some())
            .collect();
        assert_eq!(marked, [true, true, false]);
        let plain = user_blocks(text, &cache_breaks(&Message::user(text)), 2);
        assert_eq!(plain, vec![json!({"type": "text", "text": text})]);
    }

    /// Every `cache_control` in a request body.
    fn marks(body: &Value) -> usize {
        match body {
            Value::Object(map) => {
                usize::from(map.contains_key("cache_control"))
                    + map.values().map(marks).sum::<usize>()
            }
            Value::Array(items) => items.iter().map(marks).sum(),
            _ => 0,
        }
    }

    fn body_of(messages: &[Message]) -> Value {
        let params = crate::CallParams::default();
        body(&WireRequest {
            model: "claude",
            messages,
            params: &params,
            tools: &[],
            tool_choice: &ToolChoice::Auto,
            response_format: None,
        })
    }

    #[test]
    fn a_request_never_carries_more_than_four_cache_marks() {
        let text = "Task\nJudging\nTests\nFailures\nScript\nDiagnose.";
        let ends: Vec<usize> = ["Judging", "Tests", "Failures", "Diagnose"]
            .iter()
            .map(|part| text.find(part).unwrap())
            .collect();
        let user = Message::user(text).with_cache_breaks(ends.clone());
        // One turn: the system prompt's mark and three of the user's four beginnings, the
        // longest three.
        let one = body_of(&[Message::system("rules"), user.clone()]);
        assert_eq!(marks(&one), 4);
        let blocks = one["messages"][0]["content"].as_array().unwrap();
        assert_eq!(blocks[0]["text"], &text[..ends[1]]);
        // Without a system prompt, all four.
        assert_eq!(marks(&body_of(std::slice::from_ref(&user))), 4);
        assert_eq!(
            body_of(std::slice::from_ref(&user))["messages"][0]["content"]
                .as_array()
                .unwrap()
                .len(),
            5
        );
        // A repair round (three turns): the conversation's mark, the system prompt's, and two
        // of the first message's beginnings.
        let round = body_of(&[
            Message::system("rules"),
            user,
            Message::assistant("{"),
            Message::user("That was not JSON."),
        ]);
        assert_eq!(marks(&round), 4);
        assert_eq!(round["messages"][0]["content"].as_array().unwrap().len(), 3);
        assert!(
            round["messages"][2]["content"][0]
                .get("cache_control")
                .is_some()
        );
    }
}
