//! Typed structured output: ask for a Rust type, get it back parsed and validated.

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::client::CallShape;
use crate::structured::{parse_answer, strict_schema_for};
use crate::templates::{JSON_REPAIR, SCHEMA_INSTRUCTION, STRUCTURED_TOOL, VALIDATION_RETRY};
use crate::wire::ResponseFormat;
use crate::{
    CallParams, Completion, FinishReason, LlmClient, LlmError, Message, Role, StructuredMode,
    ToolChoice, ToolSpec, Usage, WireFormat,
};

/// A parsed structured answer.
#[derive(Debug, Clone)]
pub struct Structured<T> {
    /// The value.
    pub value: T,
    /// The JSON text it was parsed from.
    pub raw: String,
    /// The last call's completion.
    pub completion: Completion,
    /// How many calls it took (1, or more after a repair or a rejection).
    pub calls: u32,
    /// Tokens over all those calls.
    pub usage: Usage,
}

impl LlmClient {
    /// Asks for a value of `T`. The JSON Schema comes from the type (made strict by
    /// [`crate::strict_schema_for`]; its name is the type's name); see [`crate::StructuredMode`]
    /// for how it is sent. Code fences and prose around the JSON are stripped. An answer that
    /// does not parse or fit the type gets one repair round trip quoting the error (step
    /// `<step>/repair`, same schema), then [`LlmError::InvalidStructuredOutput`].
    pub async fn structured<T>(
        &self,
        step: &str,
        messages: &[Message],
    ) -> Result<Structured<T>, LlmError>
    where
        T: DeserializeOwned + JsonSchema,
    {
        self.structured_inner(step, messages, &CallParams::default(), &|_: &T| Ok(()))
            .await
    }

    /// [`LlmClient::structured`] with parameter overrides (they cannot change the
    /// structured-output settings).
    pub async fn structured_with<T>(
        &self,
        step: &str,
        messages: &[Message],
        overrides: &CallParams,
    ) -> Result<Structured<T>, LlmError>
    where
        T: DeserializeOwned + JsonSchema,
    {
        self.structured_inner(step, messages, overrides, &|_: &T| Ok(()))
            .await
    }

    /// [`LlmClient::structured`] plus a semantic check: when `validate` rejects the value, the
    /// model gets one more call quoting the reason (step `<step>/retry`); a second rejection is
    /// [`LlmError::Rejected`]. The parse repair and the rejection retry are counted apart, so a
    /// call makes at most three requests.
    pub async fn structured_validated<T>(
        &self,
        step: &str,
        messages: &[Message],
        validate: impl Fn(&T) -> Result<(), String> + Send + Sync,
    ) -> Result<Structured<T>, LlmError>
    where
        T: DeserializeOwned + JsonSchema,
    {
        self.structured_inner(step, messages, &CallParams::default(), &validate)
            .await
    }

    /// [`LlmClient::structured_validated`] with parameter overrides.
    pub async fn structured_validated_with<T>(
        &self,
        step: &str,
        messages: &[Message],
        overrides: &CallParams,
        validate: impl Fn(&T) -> Result<(), String> + Send + Sync,
    ) -> Result<Structured<T>, LlmError>
    where
        T: DeserializeOwned + JsonSchema,
    {
        self.structured_inner(step, messages, overrides, &validate)
            .await
    }

    #[allow(
        clippy::too_many_lines,
        reason = "the repair and rejection rounds read best as one loop"
    )]
    async fn structured_inner<T>(
        &self,
        step: &str,
        messages: &[Message],
        overrides: &CallParams,
        validate: &(dyn Fn(&T) -> Result<(), String> + Send + Sync),
    ) -> Result<Structured<T>, LlmError>
    where
        T: DeserializeOwned + JsonSchema,
    {
        let (name, schema) = strict_schema_for::<T>();
        let mode = self.inner.mode;
        let mut conversation = messages.to_vec();
        let mut tools = Vec::new();
        let mut tool_choice = ToolChoice::Auto;
        let mut response_format = None;
        match mode {
            StructuredMode::Tool => {
                let description = self
                    .inner
                    .prompts
                    .render(STRUCTURED_TOOL, serde_json::json!({ "name": name }))?;
                tool_choice = ToolChoice::Tool(name.clone());
                tools.push(ToolSpec {
                    name,
                    description,
                    parameters: schema,
                });
            }
            StructuredMode::JsonMode => {
                let pretty = serde_json::to_string_pretty(&schema).unwrap_or_default();
                let instruction = self
                    .inner
                    .prompts
                    .render(SCHEMA_INSTRUCTION, serde_json::json!({ "schema": pretty }))?;
                add_instruction(&mut conversation, &instruction);
                if self.inner.transport.wire == WireFormat::OpenAi {
                    response_format = Some(ResponseFormat::JsonObject);
                }
            }
            StructuredMode::JsonSchema | StructuredMode::Auto => {
                response_format = Some(ResponseFormat::JsonSchema { name, schema });
            }
        }
        let shape = CallShape {
            params: self.inner.config.effective_params(overrides),
            tools: &tools,
            tool_choice: &tool_choice,
            response_format: response_format.as_ref(),
        };

        let mut call_step = step.to_owned();
        let mut repaired = false;
        let mut rejected = false;
        let mut calls = 0;
        let mut usage = Usage::default();
        loop {
            let completion = self.call(&call_step, &conversation, &shape).await?;
            calls += 1;
            usage = usage.plus(completion.usage);
            let raw = raw_answer(&completion, mode);
            let truncated = completion.finish_reason == FinishReason::Length;
            let error = match parse_answer::<T>(&raw) {
                Ok(value) => match validate(&value) {
                    Ok(()) => {
                        return Ok(Structured {
                            value,
                            raw,
                            completion,
                            calls,
                            usage,
                        });
                    }
                    Err(reason) if !rejected => {
                        rejected = true;
                        tracing::info!(step, %reason, "structured answer rejected; asking again");
                        let retry = self
                            .inner
                            .prompts
                            .render(VALIDATION_RETRY, serde_json::json!({ "reason": reason }))?;
                        conversation.push(Message::assistant(raw));
                        conversation.push(Message::user(retry));
                        call_step = format!("{step}/retry");
                        continue;
                    }
                    Err(reason) => {
                        return Err(LlmError::Rejected {
                            step: step.to_owned(),
                            reason,
                            raw,
                        });
                    }
                },
                Err(error) if truncated => {
                    format!(
                        "the answer was cut off at the token limit (finish reason: length): {error}"
                    )
                }
                Err(error) => error,
            };
            if repaired {
                return Err(LlmError::InvalidStructuredOutput {
                    step: step.to_owned(),
                    error,
                    raw,
                });
            }
            repaired = true;
            tracing::info!(step, %error, "structured answer did not parse; asking for a repair");
            let repair = self.inner.prompts.render(
                JSON_REPAIR,
                serde_json::json!({ "error": error, "truncated": truncated }),
            )?;
            conversation.push(Message::assistant(raw));
            conversation.push(Message::user(repair));
            call_step = format!("{step}/repair");
        }
    }
}

/// The text holding the structured answer: the forced tool call's arguments in tool mode
/// (falling back to the text when the model wrote the call as text), else the text.
fn raw_answer(completion: &Completion, mode: StructuredMode) -> String {
    if mode == StructuredMode::Tool
        && let Some(call) = completion.tool_calls.first()
    {
        return match &call.arguments {
            Value::String(raw) => raw.clone(),
            other => other.to_string(),
        };
    }
    completion.text.clone()
}

/// Appends the instruction to the first system message, or adds one.
fn add_instruction(conversation: &mut Vec<Message>, instruction: &str) {
    match conversation.first_mut() {
        Some(first) if first.role == Role::System => {
            first.content.push_str("\n\n");
            first.content.push_str(instruction);
        }
        _ => conversation.insert(0, Message::system(instruction)),
    }
}
