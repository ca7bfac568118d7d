//! How a step asks: a structured answer (checked or not), a Python file or blocks in a plain
//! answer, the same request never sent twice with reproducible sampling, and a wider temperature
//! for an answer asked again.

use autocoder_llm::{CallParams, LlmError, Message};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::{CANDIDATE_TEMPERATURE, Steps, WIDER_TEMPERATURE};
use crate::LoopError;
use crate::answers::{fenced_block, fenced_blocks};
use crate::prompt::render;
use crate::protocol::Usage;

pub(super) fn usage(value: autocoder_llm::Usage) -> Usage {
    Usage {
        input_tokens: value.input_tokens,
        output_tokens: value.output_tokens,
        cached_input_tokens: value.cached_input_tokens,
    }
}

impl Steps<'_> {
    /// The system prompt and `text` asked for with `extra`, the ends of the beginnings `text`
    /// shares with the run's other prompts marked for a prompt cache: the task (every step's)
    /// and, for the diagnosis and the fixes, the test run's report (`loop/_report.j2`).
    pub(super) fn messages(&self, text: String, extra: &Value) -> Result<[Message; 2], LoopError> {
        let mut shared = vec!["loop/task.j2"];
        if extra.get("run").is_some() {
            shared.push("loop/_report.j2");
        }
        let mut breaks = Vec::new();
        for template in shared {
            let prefix = render(self.prompts, template, self.task, extra.clone())?;
            if text.starts_with(&prefix) {
                breaks.push(prefix.len());
            }
        }
        Ok([
            Message::system(self.system.clone()),
            Message::user(text).with_cache_breaks(breaks),
        ])
    }

    pub(super) async fn ask<T: DeserializeOwned + JsonSchema>(
        &self,
        step: &str,
        template: &str,
        extra: Value,
    ) -> Result<(T, Usage), LoopError> {
        let text = render(self.prompts, template, self.task, extra.clone())?;
        let messages = self.messages(text, &extra)?;
        let answer = self.client.structured::<T>(step, &messages).await?;
        Ok((answer.value, usage(answer.usage)))
    }

    /// [`Steps::ask`] with a check of the answer's content; a rejected answer is asked again once,
    /// quoting the reason.
    pub(super) async fn ask_checked<T: DeserializeOwned + JsonSchema>(
        &self,
        step: &str,
        template: &str,
        extra: Value,
        check: impl Fn(&T) -> Result<(), String> + Send + Sync,
    ) -> Result<(T, Usage), LoopError> {
        let text = render(self.prompts, template, self.task, extra.clone())?;
        let messages = self.messages(text, &extra)?;
        let answer = self
            .client
            .structured_validated::<T>(step, &messages, check)
            .await?;
        Ok((answer.value, usage(answer.usage)))
    }

    /// A file asked for as a Markdown code block in a plain chat answer (no JSON to escape it
    /// in). An answer without a complete block (cut at the token limit) or one `check` rejects
    /// is unusable, like a JSON answer that does not parse.
    pub(super) async fn ask_fenced(
        &self,
        step: &str,
        template: &str,
        extra: Value,
        params: &CallParams,
        check: impl Fn(&str) -> Result<(), String>,
    ) -> Result<(String, Usage), LoopError> {
        let text = render(self.prompts, template, self.task, extra.clone())?;
        let messages = self.messages(text, &extra)?;
        let answer = self.client.chat(step, &messages, params).await?;
        let checked = fenced_block(&answer.text)
            .ok_or_else(|| "no complete ```python code block (cut off, or none written)".to_owned())
            .and_then(|code| check(&code).map(|()| code));
        match checked {
            Ok(code) => Ok((code, usage(answer.usage))),
            Err(error) => Err(LoopError::Model(LlmError::InvalidStructuredOutput {
                step: step.to_owned(),
                error,
                raw: answer.text,
            })),
        }
    }

    /// Every Python block of a free-text answer, in order; an answer without one is invalid.
    /// Code blocks asked for in a plain chat answer; `None` when the same request was sent
    /// before (see [`Steps::repeats`]).
    pub(super) async fn ask_fenced_blocks(
        &self,
        step: &str,
        template: &str,
        extra: Value,
        params: &CallParams,
    ) -> Result<Option<(Vec<String>, Usage)>, LoopError> {
        let text = render(self.prompts, template, self.task, extra.clone())?;
        if self.repeats(step, &text, params) {
            return Ok(None);
        }
        let messages = self.messages(text, &extra)?;
        let answer = self.client.chat(step, &messages, params).await?;
        let blocks = fenced_blocks(&answer.text);
        if blocks.is_empty() {
            return Err(LoopError::Model(LlmError::InvalidStructuredOutput {
                step: step.to_owned(),
                error: "no complete ```python code block (cut off, or none written)".to_owned(),
                raw: answer.text,
            }));
        }
        Ok(Some((blocks, usage(answer.usage))))
    }

    /// Whether this fix request was sent before in this run with reproducible sampling (a seed,
    /// or temperature 0). Its answer would be the one already tried, so it is not sent again
    /// and the step answers nothing new: the loop retries differently or escalates. (The loop
    /// came back to the same failure with the same notes, and the 1.5B model's code fixer
    /// was asked the same two prompts twice over, getting the same two answers.)
    pub(super) fn repeats(&self, step: &str, text: &str, params: &CallParams) -> bool {
        use std::hash::{Hash as _, Hasher as _};
        let effective = self.client.config().effective_params(params);
        let reproducible = effective.seed.is_some() || effective.temperature == Some(0.0);
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        (
            step,
            &self.system,
            text,
            serde_json::to_string(&effective).ok(),
        )
            .hash(&mut hasher);
        let first = self
            .asked
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert(hasher.finish());
        let repeated = reproducible && !first;
        if repeated {
            tracing::warn!(
                step,
                "the same request as before, with reproducible sampling: not sent again"
            );
        }
        repeated
    }

    /// The call parameters of candidate script `index` (`--candidates`): the first is asked as a
    /// single script is; each other at [`CANDIDATE_TEMPERATURE`] at least, with its own seed
    /// when the sampling is seeded (the same seed would give the same script).
    pub(crate) fn candidate_params(&self, index: u32) -> CallParams {
        if index == 0 {
            return CallParams::default();
        }
        let effective = self
            .client
            .config()
            .effective_params(&CallParams::default());
        CallParams {
            temperature: Some(
                effective
                    .temperature
                    .unwrap_or(0.0)
                    .max(CANDIDATE_TEMPERATURE),
            ),
            seed: effective
                .seed
                .map(|seed| seed.wrapping_add(u64::from(index))),
            ..CallParams::default()
        }
    }

    /// The call parameters with the temperature raised to [`WIDER_TEMPERATURE`] (kept when the
    /// user's is higher already).
    pub(super) fn widened_params(&self) -> CallParams {
        let current = self
            .client
            .config()
            .effective_params(&CallParams::default())
            .temperature
            .unwrap_or(0.0);
        CallParams {
            temperature: Some(current.max(WIDER_TEMPERATURE)),
            ..CallParams::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use autocoder_llm::{CallParams, LlmClient, LlmConfig, ModelSpec};
    use autocoder_prompts::Prompts;

    use super::Steps;
    use crate::prompt::TaskView;

    fn client(params: CallParams) -> LlmClient {
        let mut config = LlmConfig::new(ModelSpec::parse("openai/any").unwrap());
        config.params = params;
        LlmClient::new_with_env(config, |_| Some("sk-test".to_owned())).unwrap()
    }

    fn repeats_of(client: &LlmClient, asks: &[(&str, &str, CallParams)]) -> Vec<bool> {
        let prompts = Prompts::embedded().unwrap();
        let task = TaskView {
            task: "t".into(),
            system_override: None,
            schema_text: None,
            schema_keys: Vec::new(),
            inputs: Vec::new(),
            outputs: Vec::new(),
            datasets: Vec::new(),
            rules: Vec::new(),
            row_keys: Vec::new(),
            code_in_fences: true,
            skeleton: true,
            units: false,
            queries: false,
            output_columns: Vec::new(),
        };
        let steps = Steps {
            client,
            prompts: &prompts,
            task: &task,
            system: "system".into(),
            asked: std::sync::Mutex::default(),
        };
        asks.iter()
            .map(|(step, text, params)| steps.repeats(step, text, params))
            .collect()
    }

    #[test]
    fn a_request_sent_again_with_reproducible_sampling_is_a_repeat() {
        let seeded = client(CallParams {
            seed: Some(7),
            temperature: Some(0.2),
            ..CallParams::default()
        });
        let hotter = CallParams {
            temperature: Some(0.8),
            ..CallParams::default()
        };
        assert_eq!(
            repeats_of(
                &seeded,
                &[
                    ("fix_code", "a", CallParams::default()),
                    ("fix_code", "b", CallParams::default()),
                    ("fix_code", "a", hotter.clone()),
                    ("fix_tests", "a", CallParams::default()),
                    ("fix_code", "a", CallParams::default()),
                    ("fix_code", "a", hotter),
                ]
            ),
            [false, false, false, false, true, true]
        );
        // Without a seed, at a temperature above 0, the same request can get a new answer.
        let sampled = client(CallParams {
            temperature: Some(0.2),
            ..CallParams::default()
        });
        let same = ("fix_code", "a", CallParams::default());
        assert_eq!(repeats_of(&sampled, &[same.clone(), same]), [false, false]);
        let greedy = client(CallParams {
            temperature: Some(0.0),
            ..CallParams::default()
        });
        let same = ("fix_tests", "a", CallParams::default());
        assert_eq!(repeats_of(&greedy, &[same.clone(), same]), [false, true]);
    }
}
