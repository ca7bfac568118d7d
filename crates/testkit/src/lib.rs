//! A scripted stand-in for an LLM provider, for tests and demos: an HTTP server on 127.0.0.1
//! that speaks the OpenAI (`POST /v1/chat/completions`) and Anthropic (`POST /v1/messages`)
//! wire formats, answers from a script, injects faults on request and records every request so
//! tests can assert on what was sent. Everything around it stays real: the client under test
//! talks real HTTP to it.
//!
//! # Script format (JSON)
//!
//! ```json
//! {"entries": [
//!   {"step": "plan", "reply": {"json": {"steps": ["read", "sum"]}},
//!    "usage": {"input_tokens": 120, "output_tokens": 30}},
//!   {"schema": "Plan", "reply": {"text": "```json\n{\"steps\": []}\n```"}},
//!   {"tool": "run_python", "reply": {"tool_calls": [{"name": "run_python", "arguments": {"code": "print(1)"}}]}},
//!   {"step": "code", "reply": {"http_error": {"status": 429, "retry_after": 1, "message": "slow down"}}},
//!   {"step": "code", "reply": {"http_error": {"status": 500}}},
//!   {"step": "code", "reply": {"malformed_body": "<html>bad gateway</html>"}},
//!   {"step": "code", "reply": {"truncated": {"json": {"code": "print(1)"}, "keep_chars": 9}}},
//!   {"reply": {"text": "hello"}, "delay_ms": 200}
//! ]}
//! ```
//!
//! A request consumes the first unused entry whose selectors all match: `step` (the
//! `x-autocoder-step` header), `schema` (OpenAI `response_format.json_schema.name`, or the name
//! of a forced tool in either format) and `tool` (a tool the request offers); an entry without
//! selectors matches anything. Replies: `text` (assistant text, which may be malformed or
//! fenced JSON on purpose), `json` (a value sent as the structured answer: as a forced tool
//! call when the request forces one, else as the text), `truncated` (JSON cut after
//! `keep_chars` characters, finish reason `length` / `max_tokens`), `tool_calls`, `http_error`
//! (status, optional `Retry-After` seconds, message in the provider's error format) and
//! `malformed_body` (HTTP 200 with a non-JSON body). `usage` defaults to 10 input and 5 output
//! tokens; `delay_ms` makes a slow answer. A request no entry matches gets HTTP 400 with a
//! message naming the request's step and schema and the entries still waiting.
//!
//! ```no_run
//! # async fn demo() -> Result<(), autocoder_testkit::TestkitError> {
//! use autocoder_testkit::{Entry, Reply, Script, ScriptedServer};
//! let server = ScriptedServer::start(Script::new([Entry::step("plan", Reply::Text("hi".into()))])).await?;
//! let base = server.base_url(); // give this to the client as its API base
//! // ... run the code under test ...
//! assert_eq!(server.requests().len(), 1);
//! # Ok(()) }
//! ```

mod error;
mod script;
mod server;
mod wire;

pub use error::TestkitError;
pub use script::{Entry, Reply, Script, ScriptToolCall, ScriptUsage};
pub use server::{RecordedRequest, STEP_HEADER, ScriptedServer};
pub use wire::WireFormat;
