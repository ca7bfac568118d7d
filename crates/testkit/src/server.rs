//! The HTTP server: accepts requests, records them, answers from the script.

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use serde::Serialize;
use serde_json::Value;
use tokio::net::TcpListener;
use tokio::task::{JoinHandle, JoinSet};

use crate::TestkitError;
use crate::script::{Entry, Script, ScriptUsage};
use crate::wire::{self, RequestKeys, WireFormat};

/// The header that carries the pipeline step of a request.
pub const STEP_HEADER: &str = "x-autocoder-step";

/// Headers whose values are replaced by `[redacted]` in [`RecordedRequest::headers`].
const SECRET_HEADERS: [&str; 3] = ["authorization", "x-api-key", "api-key"];

/// A request as the server received it.
#[derive(Debug, Clone, Serialize)]
pub struct RecordedRequest {
    /// The request path, e.g. `/v1/chat/completions`.
    pub path: String,
    /// The wire format the path belongs to (`None` for unknown paths).
    pub format: Option<WireFormat>,
    /// The `x-autocoder-step` header.
    pub step: Option<String>,
    /// All headers, lower-case names; credentials are replaced by `[redacted]`.
    pub headers: BTreeMap<String, String>,
    /// The body as JSON (a JSON string holding the raw text when it was not JSON).
    pub body: Value,
}

#[derive(Default)]
struct State {
    entries: Vec<Entry>,
    used: Vec<bool>,
    requests: Vec<RecordedRequest>,
}

/// A scripted stand-in for a model provider on `127.0.0.1` (random port), speaking OpenAI
/// `/v1/chat/completions` and Anthropic `/v1/messages`. Stops when dropped.
pub struct ScriptedServer {
    addr: SocketAddr,
    state: Arc<Mutex<State>>,
    task: JoinHandle<()>,
}

fn lock(state: &Mutex<State>) -> MutexGuard<'_, State> {
    state.lock().unwrap_or_else(PoisonError::into_inner)
}

impl ScriptedServer {
    /// Starts the server on a random port of 127.0.0.1.
    pub async fn start(script: Script) -> Result<Self, TestkitError> {
        Self::start_on("127.0.0.1:0", script).await
    }

    /// Starts the server on the given address (e.g. `127.0.0.1:8099`).
    pub async fn start_on(addr: &str, script: Script) -> Result<Self, TestkitError> {
        let listener = TcpListener::bind(addr)
            .await
            .map_err(|source| TestkitError::Bind {
                addr: addr.to_owned(),
                source,
            })?;
        let local = listener.local_addr().map_err(|source| TestkitError::Bind {
            addr: addr.to_owned(),
            source,
        })?;
        let state = Arc::new(Mutex::new(State {
            used: vec![false; script.entries.len()],
            entries: script.entries,
            requests: Vec::new(),
        }));
        let task = tokio::spawn(accept_loop(listener, Arc::clone(&state)));
        tracing::debug!(%local, "scripted LLM server listening");
        Ok(Self {
            addr: local,
            state,
            task,
        })
    }

    /// The server's root, e.g. `http://127.0.0.1:41234`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The API base to give a client for either wire format: `http://127.0.0.1:PORT/v1`.
    pub fn base_url(&self) -> String {
        format!("{}/v1", self.url())
    }

    /// The socket address it listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Every request received so far, in order.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        lock(&self.state).requests.clone()
    }

    /// Adds an entry at the end of the script.
    pub fn push(&self, entry: Entry) {
        let mut state = lock(&self.state);
        state.entries.push(entry);
        state.used.push(false);
    }

    /// The entries not consumed yet.
    pub fn remaining(&self) -> Vec<Entry> {
        let state = lock(&self.state);
        state
            .entries
            .iter()
            .zip(&state.used)
            .filter(|(_, used)| !**used)
            .map(|(entry, _)| entry.clone())
            .collect()
    }
}

impl Drop for ScriptedServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn accept_loop(listener: TcpListener, state: Arc<Mutex<State>>) {
    let mut connections = JoinSet::new();
    loop {
        while connections.try_join_next().is_some() {}
        let stream = match listener.accept().await {
            Ok((stream, _)) => stream,
            Err(error) => {
                tracing::warn!(%error, "scripted server: accept failed");
                continue;
            }
        };
        let state = Arc::clone(&state);
        connections.spawn(async move {
            let service = service_fn(move |request| handle(Arc::clone(&state), request));
            if let Err(error) = http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await
            {
                tracing::debug!(%error, "scripted server: connection ended");
            }
        });
    }
}

async fn handle(
    state: Arc<Mutex<State>>,
    request: Request<Incoming>,
) -> Result<Response<Full<Bytes>>, Infallible> {
    let path = request.uri().path().to_owned();
    let headers: BTreeMap<String, String> = request
        .headers()
        .iter()
        .map(|(name, value)| {
            let name = name.as_str().to_ascii_lowercase();
            let value = if SECRET_HEADERS.contains(&name.as_str()) {
                "[redacted]".to_owned()
            } else {
                String::from_utf8_lossy(value.as_bytes()).into_owned()
            };
            (name, value)
        })
        .collect();
    let step = headers.get(STEP_HEADER).cloned();
    let raw = match request.into_body().collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(error) => return Ok(respond(400, None, format!("cannot read body: {error}"))),
    };
    let body = serde_json::from_slice(&raw)
        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&raw).into_owned()));
    let format = WireFormat::from_path(&path);
    let keys = format.map(|format| RequestKeys::read(format, step.clone(), &body));

    let (serial, chosen) = {
        let mut state = lock(&state);
        state.requests.push(RecordedRequest {
            path: path.clone(),
            format,
            step,
            headers,
            body,
        });
        let serial = state.requests.len();
        let chosen = keys.as_ref().and_then(|keys| take_entry(&mut state, keys));
        let expected = describe_remaining(&state);
        (serial, chosen.ok_or(expected))
    };

    let (Some(format), Some(keys)) = (format, keys) else {
        return Ok(respond(
            404,
            None,
            format!(
                "scripted server: unknown path {path}; use /v1/chat/completions or /v1/messages"
            ),
        ));
    };
    let entry = match chosen {
        Ok(entry) => entry,
        Err(expected) => {
            let message = format!(
                "scripted server: no script entry matches request #{serial} ({}); remaining entries: {expected}",
                keys.describe()
            );
            tracing::warn!("{message}");
            let body = wire::error_body(format, 400, &message).to_string();
            return Ok(respond(400, None, body));
        }
    };
    if let Some(delay) = entry.delay_ms {
        tokio::time::sleep(Duration::from_millis(delay)).await;
    }
    let usage = entry.usage.unwrap_or(ScriptUsage {
        input_tokens: 10,
        output_tokens: 5,
    });
    let answer = wire::answer(format, &keys, &entry.reply, usage, serial);
    Ok(respond(answer.status, answer.retry_after, answer.body))
}

fn take_entry(state: &mut State, keys: &RequestKeys) -> Option<Entry> {
    let index = state
        .entries
        .iter()
        .zip(&state.used)
        .position(|(entry, used)| !used && matches(entry, keys))?;
    state.used[index] = true;
    Some(state.entries[index].clone())
}

fn matches(entry: &Entry, keys: &RequestKeys) -> bool {
    let step_ok = entry.step.is_none() || entry.step == keys.step;
    let schema_ok = entry.schema.is_none() || entry.schema == keys.schema;
    let tool_ok = entry
        .tool
        .as_ref()
        .is_none_or(|tool| keys.tools.iter().any(|offered| offered == tool));
    step_ok && schema_ok && tool_ok
}

fn describe_remaining(state: &State) -> String {
    let remaining: Vec<String> = state
        .entries
        .iter()
        .zip(&state.used)
        .filter(|(_, used)| !**used)
        .map(|(entry, _)| format!("[{}]", entry.describe()))
        .collect();
    if remaining.is_empty() {
        "none (the script is used up)".to_owned()
    } else {
        remaining.join(", ")
    }
}

fn respond(status: u16, retry_after: Option<u64>, body: String) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from(body)));
    *response.status_mut() =
        hyper::StatusCode::from_u16(status).unwrap_or(hyper::StatusCode::INTERNAL_SERVER_ERROR);
    let headers = response.headers_mut();
    headers.insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("application/json"),
    );
    if let Some(seconds) = retry_after {
        headers.insert(
            hyper::header::RETRY_AFTER,
            hyper::header::HeaderValue::from(seconds),
        );
    }
    response
}
