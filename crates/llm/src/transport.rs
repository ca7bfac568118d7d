//! One call over HTTP: headers, timeouts, retries with backoff and `Retry-After`.

use std::fmt;
use std::time::{Duration, Instant};

use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use serde_json::Value;

use crate::wire::{anthropic, openai};
use crate::{LlmError, RetryPolicy, WireFormat};

/// The header that names the pipeline step of a request (the scripted server matches on it).
pub const STEP_HEADER: &str = "x-autocoder-step";

/// The Anthropic API version we speak.
const ANTHROPIC_VERSION: &str = "2023-06-01";

/// An API key. Its `Debug` never shows it.
#[derive(Clone)]
pub(crate) struct ApiKey(String);

impl ApiKey {
    pub(crate) fn new(key: &str) -> Option<Self> {
        let key = key.trim();
        (!key.is_empty()).then(|| Self(key.to_owned()))
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApiKey([redacted])")
    }
}

/// What happened in one HTTP attempt, for the conversation log.
pub(crate) struct Attempt {
    pub(crate) status: Option<u16>,
    pub(crate) body: String,
    pub(crate) error: Option<String>,
    pub(crate) elapsed: Duration,
    pub(crate) waited_before: Duration,
}

pub(crate) struct Transport {
    pub(crate) http: reqwest::Client,
    pub(crate) url: String,
    pub(crate) wire: WireFormat,
    pub(crate) key: Option<ApiKey>,
    /// "environment variable X", for authentication errors.
    pub(crate) key_source: String,
    pub(crate) retry: RetryPolicy,
}

impl Transport {
    /// Removes the key from a text that may echo it (error bodies, transport errors).
    pub(crate) fn redact(&self, text: &str) -> String {
        match &self.key {
            Some(ApiKey(key)) if text.contains(key.as_str()) => {
                text.replace(key.as_str(), "[redacted]")
            }
            _ => text.to_owned(),
        }
    }

    fn headers(&self, step: &str) -> Result<HeaderMap, LlmError> {
        let mut headers = HeaderMap::new();
        let safe_step: String = step
            .chars()
            .map(|c| {
                if c.is_ascii_graphic() || c == ' ' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        let value = |text: &str| {
            HeaderValue::from_str(text).map_err(|_| {
                LlmError::InvalidConfig(
                    "the API key contains characters not allowed in an HTTP header".to_owned(),
                )
            })
        };
        headers.insert(HeaderName::from_static(STEP_HEADER), value(&safe_step)?);
        match self.wire {
            WireFormat::OpenAi => {
                if let Some(ApiKey(key)) = &self.key {
                    let mut bearer = value(&format!("Bearer {key}"))?;
                    bearer.set_sensitive(true);
                    headers.insert(reqwest::header::AUTHORIZATION, bearer);
                }
            }
            WireFormat::Anthropic => {
                headers.insert(
                    HeaderName::from_static("anthropic-version"),
                    HeaderValue::from_static(ANTHROPIC_VERSION),
                );
                if let Some(ApiKey(key)) = &self.key {
                    let mut key = value(key)?;
                    key.set_sensitive(true);
                    headers.insert(HeaderName::from_static("x-api-key"), key);
                }
            }
        }
        Ok(headers)
    }

    fn error_message(&self, body: &str) -> String {
        let message = serde_json::from_str::<Value>(body)
            .ok()
            .and_then(|value| match self.wire {
                WireFormat::OpenAi => openai::error_message(&value),
                WireFormat::Anthropic => anthropic::error_message(&value),
            });
        let message = message.unwrap_or_else(|| body.chars().take(500).collect());
        self.redact(&message)
    }

    fn backoff(&self, retry: u32) -> Duration {
        let doubled = self
            .retry
            .initial_backoff
            .saturating_mul(2_u32.saturating_pow(retry.saturating_sub(1)));
        doubled
            .min(self.retry.max_backoff)
            .mul_f64(0.5 + fastrand::f64() / 2.0)
    }

    /// Sends `body` until it succeeds, fails for good, or the retries run out. Every attempt
    /// is pushed to `attempts`.
    #[allow(
        clippy::too_many_lines,
        reason = "one retry loop reads best in one piece"
    )]
    pub(crate) async fn post(
        &self,
        step: &str,
        body: &Value,
        attempts: &mut Vec<Attempt>,
    ) -> Result<Value, LlmError> {
        let headers = self.headers(step)?;
        let max_attempts = self.retry.max_retries.saturating_add(1);
        let mut wait = Duration::ZERO;
        let mut attempt = 0_u32;
        loop {
            attempt += 1;
            if !wait.is_zero() {
                tracing::info!(
                    step,
                    attempt,
                    wait_ms = wait.as_millis(),
                    "retrying LLM call"
                );
                tokio::time::sleep(wait).await;
            }
            let waited_before = wait;
            let retries_left = attempt < max_attempts;
            let started = Instant::now();
            let sent = self
                .http
                .post(&self.url)
                .headers(headers.clone())
                .json(body)
                .send()
                .await;
            let response = match sent {
                Ok(response) => response,
                Err(error) => {
                    let message = self.redact(&transport_message(&error));
                    attempts.push(Attempt {
                        status: None,
                        body: String::new(),
                        error: Some(message.clone()),
                        elapsed: started.elapsed(),
                        waited_before,
                    });
                    if retries_left {
                        wait = self.backoff(attempt);
                        continue;
                    }
                    return Err(LlmError::Transport {
                        step: step.to_owned(),
                        url: self.url.clone(),
                        attempts: attempt,
                        message,
                    });
                }
            };
            let status = response.status().as_u16();
            let retry_after =
                retry_after(response.headers()).map(|wait| wait.min(self.retry.max_retry_after));
            let text = match response.text().await {
                Ok(text) => self.redact(&text),
                Err(error) => {
                    let message = self.redact(&transport_message(&error));
                    attempts.push(Attempt {
                        status: Some(status),
                        body: String::new(),
                        error: Some(message.clone()),
                        elapsed: started.elapsed(),
                        waited_before,
                    });
                    if retries_left {
                        wait = self.backoff(attempt);
                        continue;
                    }
                    return Err(LlmError::Transport {
                        step: step.to_owned(),
                        url: self.url.clone(),
                        attempts: attempt,
                        message,
                    });
                }
            };
            attempts.push(Attempt {
                status: Some(status),
                body: text.clone(),
                error: None,
                elapsed: started.elapsed(),
                waited_before,
            });
            match status {
                200..=299 => match serde_json::from_str::<Value>(&text) {
                    Ok(value) => return Ok(value),
                    Err(error) if retries_left => {
                        tracing::warn!(step, %error, "the provider's answer is not JSON; retrying");
                        wait = self.backoff(attempt);
                    }
                    Err(error) => {
                        return Err(LlmError::InvalidResponse {
                            step: step.to_owned(),
                            format: self.wire.name(),
                            message: format!("not JSON ({error}) after {attempt} attempt(s)"),
                            body_start: text.chars().take(200).collect(),
                        });
                    }
                },
                401 | 403 => {
                    return Err(LlmError::Auth {
                        step: step.to_owned(),
                        status,
                        key_source: self.key_source.clone(),
                        message: self.error_message(&text),
                    });
                }
                408 | 409 | 429 | 500..=599 if retries_left => {
                    wait = retry_after.unwrap_or_else(|| self.backoff(attempt));
                    tracing::warn!(step, status, "the provider answered with a retryable error");
                }
                _ => {
                    return Err(LlmError::Api {
                        step: step.to_owned(),
                        status,
                        attempts: attempt,
                        message: self.error_message(&text),
                    });
                }
            }
        }
    }
}

/// The wait the provider asks for: `retry-after-ms` (OpenAI) or `Retry-After` in seconds.
/// (An HTTP-date `Retry-After` is ignored: the backoff applies.)
fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let number = |name: &str| {
        headers
            .get(name)
            .and_then(|value| value.to_str().ok())
            .and_then(|value| value.trim().parse::<f64>().ok())
            .filter(|number| number.is_finite() && *number >= 0.0)
    };
    number("retry-after-ms")
        .map(|ms| Duration::from_secs_f64(ms / 1000.0))
        .or_else(|| number("retry-after").map(Duration::from_secs_f64))
}

/// A transport error with its causes (reqwest's `Display` alone hides them).
fn transport_message(error: &reqwest::Error) -> String {
    let mut message = error.to_string();
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        message.push_str(": ");
        message.push_str(&cause.to_string());
        source = cause.source();
    }
    if error.is_timeout() {
        message.push_str(" (timed out; raise the timeout if the model is slow)");
    }
    message
}
