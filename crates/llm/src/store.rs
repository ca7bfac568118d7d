//! Answers from somewhere other than the network: a [`CallStore`] is asked before a call goes
//! out, and told every answer before the caller sees it. A generation's journal (resume without
//! paying for a call twice) and the model-call cache are stores.

use std::time::Duration;

use serde_json::Value;

use crate::{LlmError, Usage};

/// A request as a store sees it.
#[derive(Debug, Clone, Copy)]
pub struct CallKey<'a> {
    /// 0-based index of the call in this client.
    pub index: u64,
    /// The pipeline step.
    pub step: &'a str,
    /// SHA-256 of the request's canonical JSON (model, messages, sampling parameters, tools,
    /// response schema), as in recordings.
    pub fingerprint: &'a str,
    /// How many requests with the same fingerprint this client made before this one (0 for
    /// the first): several candidates asked for the same prompt are told apart by it.
    pub occurrence: u32,
    /// The request body.
    pub request: &'a Value,
}

/// An answer a store had.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredAnswer {
    /// The provider's answer body, as it came.
    pub response: Value,
    /// How long the original call took.
    pub latency: Duration,
    /// Whether the answer counts as a model call in the client's totals: a journal's answer
    /// stands for the call the interrupted run made (`true`); a cache's is free (`false`).
    pub counts: bool,
}

/// An answer just received, before the caller sees it.
#[derive(Debug, Clone, Copy)]
pub struct Answered<'a> {
    /// The provider's answer body.
    pub response: &'a Value,
    /// The answer's text.
    pub text: &'a str,
    /// Its tokens.
    pub usage: Usage,
    /// How long the call took.
    pub latency: Duration,
    /// Whether it counts as a model call (`false`: a cache answered it for free).
    pub counts: bool,
}

/// Somewhere answers are kept.
pub trait CallStore: Send + Sync {
    /// The kept answer for this request, if any.
    fn lookup(&self, key: &CallKey<'_>) -> Option<StoredAnswer>;
    /// Keeps an answer (one this store did not give). An error fails the call: a journal that
    /// cannot be written must not let the run go on unrecorded.
    fn store(&self, key: &CallKey<'_>, answer: &Answered<'_>) -> Result<(), LlmError>;
}
