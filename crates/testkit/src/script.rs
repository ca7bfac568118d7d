//! The script: what the server answers, in which order, for which requests.

use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::TestkitError;

/// A list of scripted answers. Each request consumes the first unused entry that matches it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Script {
    /// The answers, in the order they are consumed.
    pub entries: Vec<Entry>,
}

impl Script {
    /// A script with these entries.
    pub fn new(entries: impl IntoIterator<Item = Entry>) -> Self {
        Self {
            entries: entries.into_iter().collect(),
        }
    }

    /// Parses a script from JSON text.
    pub fn from_json(text: &str) -> Result<Self, TestkitError> {
        serde_json::from_str(text).map_err(|source| TestkitError::ParseScript {
            origin: "inline".to_owned(),
            source,
        })
    }

    /// Reads a script from a JSON file.
    pub fn from_path(path: &Path) -> Result<Self, TestkitError> {
        let text = std::fs::read_to_string(path).map_err(|source| TestkitError::ReadScript {
            path: path.to_owned(),
            source,
        })?;
        serde_json::from_str(&text).map_err(|source| TestkitError::ParseScript {
            origin: path.display().to_string(),
            source,
        })
    }
}

/// One scripted answer and the requests it may answer.
///
/// Every selector that is set must match; an entry without selectors answers any request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Entry {
    /// Matches the `x-autocoder-step` request header.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step: Option<String>,
    /// Matches the structured-output schema name (OpenAI `response_format.json_schema.name`) or
    /// the name of a forced tool (OpenAI `tool_choice.function.name`, Anthropic
    /// `tool_choice.name`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schema: Option<String>,
    /// Matches when the request offers a tool of this name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// What to answer.
    pub reply: Reply,
    /// Token counts to report (defaults: 10 input, 5 output).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<ScriptUsage>,
    /// Wait this long before answering (a slow model).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delay_ms: Option<u64>,
}

impl Entry {
    /// An entry answering `reply` to any request.
    pub fn any(reply: Reply) -> Self {
        Self {
            step: None,
            schema: None,
            tool: None,
            reply,
            usage: None,
            delay_ms: None,
        }
    }

    /// An entry answering `reply` to requests of this step.
    pub fn step(step: &str, reply: Reply) -> Self {
        Self {
            step: Some(step.to_owned()),
            ..Self::any(reply)
        }
    }

    /// An entry answering requests of `step` with one native tool call of `tool`.
    pub fn tool_call(step: &str, tool: &str, arguments: Value) -> Self {
        Self::step(
            step,
            Reply::ToolCalls(vec![ScriptToolCall {
                id: None,
                name: tool.to_owned(),
                arguments,
            }]),
        )
    }

    /// Sets the reported token counts.
    #[must_use]
    pub fn with_usage(mut self, input_tokens: u64, output_tokens: u64) -> Self {
        self.usage = Some(ScriptUsage {
            input_tokens,
            output_tokens,
        });
        self
    }

    /// Delays the answer.
    #[must_use]
    pub fn with_delay_ms(mut self, delay_ms: u64) -> Self {
        self.delay_ms = Some(delay_ms);
        self
    }

    /// A one-line description for "no entry matched" messages.
    pub(crate) fn describe(&self) -> String {
        let mut parts = Vec::new();
        if let Some(step) = &self.step {
            parts.push(format!("step={step}"));
        }
        if let Some(schema) = &self.schema {
            parts.push(format!("schema={schema}"));
        }
        if let Some(tool) = &self.tool {
            parts.push(format!("tool={tool}"));
        }
        if parts.is_empty() {
            parts.push("any request".to_owned());
        }
        parts.join(" ")
    }
}

/// Token counts the server reports for an answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScriptUsage {
    /// Prompt tokens.
    pub input_tokens: u64,
    /// Completion tokens.
    pub output_tokens: u64,
}

/// What the server answers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Reply {
    /// Plain assistant text (may be anything, e.g. fenced or malformed JSON).
    Text(String),
    /// A JSON value, sent as the structured output in the request's wire format: a forced tool
    /// call when the request forces one, otherwise the message text.
    Json(Value),
    /// JSON text cut after `keep_chars` characters, with finish reason "length".
    Truncated {
        /// The value whose serialization is cut.
        json: Value,
        /// How many characters to keep.
        keep_chars: usize,
    },
    /// Tool calls (OpenAI `tool_calls`, Anthropic `tool_use` blocks).
    ToolCalls(Vec<ScriptToolCall>),
    /// An HTTP error with an error body in the provider's format.
    HttpError {
        /// The status code (429, 500, 401, ...).
        status: u16,
        /// The `Retry-After` header in seconds, if any.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        retry_after: Option<u64>,
        /// The error message.
        #[serde(default)]
        message: String,
    },
    /// A 200 answer whose body is this text instead of JSON (a broken proxy).
    MalformedBody(String),
}

/// A scripted tool call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScriptToolCall {
    /// The call id (generated when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The tool's name.
    pub name: String,
    /// The arguments object.
    pub arguments: Value,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The example in the crate docs parses.
    #[test]
    fn documented_example_parses() {
        let docs = include_str!("lib.rs");
        let start = docs.find("//! ```json\n").unwrap() + "//! ```json\n".len();
        let end = start + docs[start..].find("//! ```\n").unwrap();
        let json: String = docs[start..end]
            .lines()
            .map(|line| line.trim_start_matches("//!").trim_start())
            .collect::<Vec<_>>()
            .join("\n");
        let script = Script::from_json(&json).unwrap();
        assert_eq!(script.entries.len(), 8);
        assert_eq!(
            script.entries[3].reply,
            Reply::HttpError {
                status: 429,
                retry_after: Some(1),
                message: "slow down".into()
            }
        );
    }

    #[test]
    fn unknown_fields_are_rejected_with_a_position() {
        let error = Script::from_json(r#"{"entries": [{"stp": "plan", "reply": {"text": "x"}}]}"#)
            .unwrap_err()
            .to_string();
        assert!(error.contains("unknown field `stp`"), "{error}");
    }
}
