//! The client: one logical call = replay or HTTP, then log, record and count it.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError, RwLock};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use autocoder_prompts::Prompts;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use crate::record::{JsonlWriter, RecordedCall, Replay, fingerprint};
use crate::store::{Answered, CallKey, CallStore, StoredAnswer};
use crate::transport::{ApiKey, Attempt, Transport};
use crate::wire::{ResponseFormat, WireReply, WireRequest, anthropic, openai};
use crate::{
    CallParams, Completion, LlmConfig, LlmError, Message, Provider, StructuredMode, ToolChoice,
    ToolSpec, UsageTotal, WireFormat,
};

/// A client for one model. Cheap to clone; clones share totals, logs and the cancellation
/// token. Dropping a call's future cancels it; [`LlmClient::cancellation_token`] cancels every
/// call in flight and all later ones.
#[derive(Clone)]
pub struct LlmClient {
    pub(crate) inner: Arc<Inner>,
}

pub(crate) struct Inner {
    pub(crate) config: LlmConfig,
    /// The templates of the texts this crate adds (repair, retry, schema instruction).
    pub(crate) prompts: Prompts,
    pub(crate) transport: Transport,
    pub(crate) mode: StructuredMode,
    /// OpenAI's own API (not a compatible server): it wants `max_completion_tokens`.
    openai_proper: bool,
    calls: AtomicU64,
    totals: Mutex<Totals>,
    log: Option<JsonlWriter>,
    recorder: Option<JsonlWriter>,
    replay: Option<Mutex<Replay>>,
    cancel: CancellationToken,
    /// Asked before the network, told every answer (see [`CallStore`]).
    stores: RwLock<Vec<Arc<dyn CallStore>>>,
    /// Requests so far per fingerprint (a store's [`CallKey::occurrence`]).
    occurrences: Mutex<HashMap<String, u32>>,
}

/// A call's request apart from its messages.
pub(crate) struct CallShape<'a> {
    pub(crate) params: CallParams,
    pub(crate) tools: &'a [ToolSpec],
    pub(crate) tool_choice: &'a ToolChoice,
    pub(crate) response_format: Option<&'a ResponseFormat>,
}

impl LlmClient {
    /// A client reading its API key from the process environment.
    pub fn new(config: LlmConfig) -> Result<Self, LlmError> {
        Self::new_with_env(config, |name| std::env::var(name).ok())
    }

    /// A client reading its API key through `env` (for embedding and tests).
    ///
    /// The key is required for hosted providers at their default API base; with an `api_base`
    /// override (a local or proxy server) it is sent when set. Replays need no key.
    pub fn new_with_env(
        config: LlmConfig,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<Self, LlmError> {
        let provider = config.model.provider();
        let wire = provider.wire();
        let key_env = config
            .api_key_env
            .clone()
            .or_else(|| provider.default_key_env().map(str::to_owned));
        let key = key_env
            .as_deref()
            .and_then(&env)
            .and_then(|key| ApiKey::new(&key));
        let key_needed = config.replay.is_none()
            && (config.api_key_env.is_some()
                || (config.api_base.is_none() && provider.default_key_env().is_some()));
        if key.is_none()
            && key_needed
            && let Some(env_var) = &key_env
        {
            return Err(LlmError::MissingApiKey {
                provider: provider.prefix().to_owned(),
                env_var: env_var.clone(),
            });
        }
        let mode = resolve_mode(config.structured_mode, provider)?;
        let base = config
            .api_base
            .as_deref()
            .unwrap_or(provider.default_api_base())
            .trim_end_matches('/');
        let url = match wire {
            WireFormat::OpenAi => format!("{base}/chat/completions"),
            WireFormat::Anthropic => format!("{base}/messages"),
        };
        let http = reqwest::Client::builder()
            .connect_timeout(config.timeouts.connect)
            .timeout(config.timeouts.total)
            .build()
            .map_err(LlmError::HttpClient)?;
        let log = config
            .conversation_log
            .as_deref()
            .map(|path| JsonlWriter::open(path, false, "cannot append to the conversation log"))
            .transpose()?;
        let recorder = config
            .record
            .as_deref()
            .map(|path| JsonlWriter::open(path, true, "cannot write the recording"))
            .transpose()?;
        let replay = config
            .replay
            .as_deref()
            .map(Replay::load)
            .transpose()?
            .map(Mutex::new);
        let transport = Transport {
            http,
            url,
            wire,
            key,
            key_source: key_env.map_or_else(
                || "no key (none configured)".to_owned(),
                |name| format!("environment variable {name}"),
            ),
            retry: config.retry,
        };
        let prompts = match &config.prompts_dir {
            Some(dir) => Prompts::with_overrides(dir)?,
            None => Prompts::embedded()?,
        };
        let openai_proper = provider == Provider::OpenAi && config.api_base.is_none();
        Ok(Self {
            inner: Arc::new(Inner {
                prompts,
                openai_proper,
                config,
                transport,
                mode,
                calls: AtomicU64::new(0),
                totals: Mutex::new(Totals::default()),
                log,
                recorder,
                replay,
                cancel: CancellationToken::new(),
                stores: RwLock::default(),
                occurrences: Mutex::default(),
            }),
        })
    }

    /// The prompt templates (built in, with the configured overrides); other crates render
    /// their prompts for this client through them too.
    pub fn prompts(&self) -> &Prompts {
        &self.inner.prompts
    }

    /// The configuration.
    pub fn config(&self) -> &LlmConfig {
        &self.inner.config
    }

    /// The structured-output mode in use (never `Auto`).
    pub fn structured_mode(&self) -> StructuredMode {
        self.inner.mode
    }

    /// The endpoint requests go to.
    pub fn endpoint(&self) -> &str {
        &self.inner.transport.url
    }

    /// Tokens, calls, retries and latency over every call so far.
    pub fn usage_total(&self) -> UsageTotal {
        self.inner
            .totals
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .all
    }

    /// [`LlmClient::usage_total`] per step (repairs and retries of a structured call count
    /// under `<step>/repair` and `<step>/retry`).
    pub fn usage_by_step(&self) -> BTreeMap<String, UsageTotal> {
        self.inner
            .totals
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .by_step
            .clone()
    }

    /// Adds a store, asked after the ones added before it. Clones of this client share it.
    pub fn add_store(&self, store: Arc<dyn CallStore>) {
        self.inner
            .stores
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .push(store);
    }

    /// Adds a store asked before every other.
    pub fn add_store_first(&self, store: Arc<dyn CallStore>) {
        self.inner
            .stores
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(0, store);
    }

    /// Removes a store added with [`LlmClient::add_store`].
    pub fn remove_store(&self, store: &Arc<dyn CallStore>) {
        self.inner
            .stores
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .retain(|kept| !Arc::ptr_eq(kept, store));
    }

    /// Cancelling this token makes every call in flight, and every later one, fail with
    /// [`LlmError::Cancelled`].
    pub fn cancellation_token(&self) -> CancellationToken {
        self.inner.cancel.clone()
    }

    /// A chat call: the model answers the messages with text.
    pub async fn chat(
        &self,
        step: &str,
        messages: &[Message],
        overrides: &CallParams,
    ) -> Result<Completion, LlmError> {
        self.chat_with_tools(step, messages, &[], ToolChoice::Auto, overrides)
            .await
    }

    /// A chat call offering tools; the answer's `tool_calls` holds the calls the model made.
    /// Answer them with [`Message::assistant_tool_calls`] and [`Message::tool_result`].
    pub async fn chat_with_tools(
        &self,
        step: &str,
        messages: &[Message],
        tools: &[ToolSpec],
        tool_choice: ToolChoice,
        overrides: &CallParams,
    ) -> Result<Completion, LlmError> {
        let shape = CallShape {
            params: self.inner.config.effective_params(overrides),
            tools,
            tool_choice: &tool_choice,
            response_format: None,
        };
        self.call(step, messages, &shape).await
    }

    /// One logical call (retries inside), cancellable.
    pub(crate) async fn call(
        &self,
        step: &str,
        messages: &[Message],
        shape: &CallShape<'_>,
    ) -> Result<Completion, LlmError> {
        let index = self.inner.calls.fetch_add(1, Ordering::Relaxed);
        let request = WireRequest {
            model: self.inner.config.model.name(),
            messages,
            params: &shape.params,
            tools: shape.tools,
            tool_choice: shape.tool_choice,
            response_format: shape.response_format,
        };
        let mut body = match self.inner.transport.wire {
            WireFormat::OpenAi => openai::body(&request, self.inner.openai_proper),
            WireFormat::Anthropic => anthropic::body(&request),
        };
        if let Value::Object(fields) = &mut body {
            for (key, value) in &self.inner.config.extra_body {
                fields.entry(key.clone()).or_insert_with(|| value.clone());
            }
        }
        let span = tracing::info_span!("llm_call", step, index, model = %self.inner.config.model);
        let work = self.call_inner(index, step, body).instrument(span);
        tokio::select! {
            biased;
            () = self.inner.cancel.cancelled() => Err(LlmError::Cancelled { step: step.to_owned() }),
            result = work => result,
        }
    }

    async fn call_inner(
        &self,
        index: u64,
        step: &str,
        body: Value,
    ) -> Result<Completion, LlmError> {
        let inner = &*self.inner;
        let started = Instant::now();
        let (stores, print, occurrence) = self.stores_and_fingerprint(&body);
        let key = print.as_deref().map(|fingerprint| CallKey {
            index,
            step,
            fingerprint,
            occurrence,
            request: &body,
        });
        let kept = key.as_ref().and_then(|key| {
            stores
                .iter()
                .enumerate()
                .find_map(|(i, store)| store.lookup(key).map(|answer| (i, answer)))
        });
        let answered_by = kept.as_ref().map(|(i, _)| *i);
        let mut counts = true;
        let (response, retries, latency) = if let Some((_, answer)) = kept {
            let StoredAnswer {
                response,
                latency,
                counts: counted,
            } = answer;
            counts = counted;
            self.log_replay(index, step, &body, Some(&response))?;
            (response, 0, latency)
        } else if let Some(replay) = &inner.replay {
            let answer = replay
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .answer(index, step, &body);
            self.log_replay(index, step, &body, answer.as_ref().ok())?;
            (answer?, 0, Duration::ZERO)
        } else {
            let mut attempts = Vec::new();
            let result = inner.transport.post(step, &body, &mut attempts).await;
            self.log_attempts(index, step, &body, &attempts)?;
            let retries = attempts.len().saturating_sub(1) as u64;
            (result?, retries, started.elapsed())
        };
        let parsed: Result<WireReply, String> = match inner.transport.wire {
            WireFormat::OpenAi => openai::parse(&response),
            WireFormat::Anthropic => anthropic::parse(&response),
        };
        let reply = parsed.map_err(|message| LlmError::InvalidResponse {
            step: step.to_owned(),
            format: inner.transport.wire.name(),
            message,
            body_start: response.to_string().chars().take(200).collect(),
        })?;
        if let Some(key) = &key {
            let answered = Answered {
                response: &response,
                text: &reply.text,
                usage: reply.usage,
                latency,
                counts,
            };
            tell_stores(&stores, answered_by, key, &answered)?;
        }
        if let Some(recorder) = &inner.recorder {
            let call = RecordedCall {
                index,
                step: step.to_owned(),
                fingerprint: print.unwrap_or_else(|| fingerprint(&body)),
                request: body,
                response,
            };
            recorder.append(&serde_json::to_value(&call).unwrap_or(Value::Null))?;
        }
        if counts {
            inner
                .totals
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .add(step, retries, reply.usage, latency);
        }
        tracing::info!(
            input_tokens = reply.usage.input_tokens,
            output_tokens = reply.usage.output_tokens,
            latency_ms = latency.as_millis(),
            retries,
            "LLM call answered"
        );
        Ok(Completion {
            step: step.to_owned(),
            text: reply.text,
            tool_calls: reply.tool_calls,
            usage: reply.usage,
            latency,
            finish_reason: reply.finish_reason,
        })
    }

    /// The stores; the request's fingerprint when a store or the recorder needs it; and, for
    /// the stores, how many requests with that fingerprint came before.
    fn stores_and_fingerprint(
        &self,
        body: &Value,
    ) -> (Vec<Arc<dyn CallStore>>, Option<String>, u32) {
        let inner = &*self.inner;
        let stores = inner
            .stores
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        let print = (!stores.is_empty() || inner.recorder.is_some()).then(|| fingerprint(body));
        let occurrence = match &print {
            Some(print) if !stores.is_empty() => {
                let mut seen = inner
                    .occurrences
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner);
                let count = seen.entry(print.clone()).or_default();
                *count += 1;
                *count - 1
            }
            _ => 0,
        };
        (stores, print, occurrence)
    }

    fn log_attempts(
        &self,
        index: u64,
        step: &str,
        body: &Value,
        attempts: &[Attempt],
    ) -> Result<(), LlmError> {
        let Some(log) = &self.inner.log else {
            return Ok(());
        };
        for (number, attempt) in attempts.iter().enumerate() {
            let response = serde_json::from_str::<Value>(&attempt.body)
                .unwrap_or_else(|_| Value::String(attempt.body.clone()));
            log.append(&json!({
                "time_unix_ms": unix_ms(),
                "call": index,
                "step": step,
                "attempt": number + 1,
                "model": self.inner.config.model.to_string(),
                "url": self.inner.transport.url,
                "waited_before_ms": attempt.waited_before.as_millis(),
                "latency_ms": attempt.elapsed.as_millis(),
                "request": body,
                "status": attempt.status,
                "response": response,
                "error": attempt.error,
            }))?;
        }
        Ok(())
    }

    fn log_replay(
        &self,
        index: u64,
        step: &str,
        body: &Value,
        response: Option<&Value>,
    ) -> Result<(), LlmError> {
        let Some(log) = &self.inner.log else {
            return Ok(());
        };
        log.append(&json!({
            "time_unix_ms": unix_ms(),
            "call": index,
            "step": step,
            "replayed": true,
            "model": self.inner.config.model.to_string(),
            "request": body,
            "response": response,
            "error": response.is_none().then_some("no recorded answer"),
        }))
    }
}

/// Running totals, overall and per step.
#[derive(Default)]
struct Totals {
    all: UsageTotal,
    by_step: BTreeMap<String, UsageTotal>,
}

impl Totals {
    fn add(&mut self, step: &str, retries: u64, usage: crate::Usage, latency: Duration) {
        let by_step = self.by_step.entry(step.to_owned()).or_default();
        for total in [&mut self.all, by_step] {
            total.calls += 1;
            total.retries += retries;
            total.usage = total.usage.plus(usage);
            total.latency += latency;
        }
    }
}

/// Gives an answer to every store but the one it came from.
fn tell_stores(
    stores: &[Arc<dyn CallStore>],
    answered_by: Option<usize>,
    key: &CallKey<'_>,
    answered: &Answered<'_>,
) -> Result<(), LlmError> {
    for (i, store) in stores.iter().enumerate() {
        if answered_by != Some(i) {
            store.store(key, answered)?;
        }
    }
    Ok(())
}

fn resolve_mode(mode: StructuredMode, provider: Provider) -> Result<StructuredMode, LlmError> {
    match (mode, provider.wire()) {
        (StructuredMode::Auto, WireFormat::OpenAi) => Ok(StructuredMode::JsonSchema),
        (StructuredMode::Auto, WireFormat::Anthropic) => Ok(StructuredMode::Tool),
        (StructuredMode::JsonSchema, WireFormat::Anthropic) => Err(LlmError::UnsupportedMode {
            mode: mode.name(),
            provider: provider.prefix().to_owned(),
        }),
        (mode, _) => Ok(mode),
    }
}

fn unix_ms() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_millis())
}
