//! Agent runs against the scripted LLM server (the only stand-in), with the real sandbox,
//! real pytest and the real command policy, in both tool protocols.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod scenarios;

use std::path::{Path, PathBuf};
use std::time::Duration;

use autocoder_agent::{AgentOptions, ToolProtocol, generate_agent};
use autocoder_llm::{LlmClient, LlmConfig, ModelSpec, RetryPolicy};
use autocoder_loop::request::{Declaration, Sample};
use autocoder_loop::rundir::GenerationResult;
use autocoder_loop::{GenerateOptions, SandboxOptions};
use autocoder_testkit::{Entry, Reply, Script, ScriptedServer};
use serde_json::{Value, json};

pub(crate) const SALES: &str = "region,qty,price\nnorth,3,2.5\nsouth,2,4.0\n";

/// How a scenario talks to the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Wire {
    /// OpenAI-compatible tool calls.
    OpenAiNative,
    /// Anthropic `tool_use` blocks.
    AnthropicNative,
    /// One JSON action per turn (OpenAI-compatible structured output).
    Json,
    /// One JSON action per turn through Anthropic's forced tool call.
    AnthropicJson,
}

impl Wire {
    fn model(self) -> &'static str {
        match self {
            Self::AnthropicNative | Self::AnthropicJson => "anthropic/scripted",
            _ => "openai/scripted",
        }
    }

    fn protocol(self) -> ToolProtocol {
        match self {
            Self::Json | Self::AnthropicJson => ToolProtocol::Json,
            _ => ToolProtocol::Native,
        }
    }
}

/// The scripted answer that writes `text` to the workspace's `path` (`write_file`).
pub(crate) fn write(wire: Wire, path: &str, text: impl Into<String>) -> Entry {
    act(
        wire,
        "write_file",
        json!({"path": path, "text": text.into()}),
    )
}

/// The scripted answer that calls `tool` with `arguments` in `wire`'s protocol (the first
/// turn's `thought` states the plan).
pub(crate) fn act(wire: Wire, tool: &str, arguments: Value) -> Entry {
    match wire {
        Wire::Json | Wire::AnthropicJson => Entry::step(
            "agent",
            Reply::Json(json!({
                "thought": format!("call {tool}"),
                "tool_call": {"name": tool, "parameters": arguments},
            })),
        ),
        _ => Entry::tool_call("agent", tool, arguments),
    }
}

pub(crate) struct Fixture {
    pub(crate) server: ScriptedServer,
    pub(crate) dir: tempfile::TempDir,
    pub(crate) wire: Wire,
}

pub(crate) async fn fixture(wire: Wire, entries: Vec<Entry>) -> Fixture {
    let server = ScriptedServer::start(Script::new(entries)).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("sales.csv"), SALES).unwrap();
    Fixture { server, dir, wire }
}

impl Fixture {
    pub(crate) fn run_dir(&self) -> PathBuf {
        self.dir.path().join("run")
    }

    pub(crate) fn client(&self) -> LlmClient {
        let mut config = LlmConfig::new(ModelSpec::parse(self.wire.model()).unwrap());
        config.api_base = Some(self.server.base_url());
        config.conversation_log = Some(self.run_dir().join("conversation.jsonl"));
        config.retry = RetryPolicy {
            max_retries: 1,
            initial_backoff: Duration::from_millis(5),
            max_backoff: Duration::from_millis(20),
            max_retry_after: Duration::from_secs(2),
        };
        LlmClient::new_with_env(config, |_| Some("sk-scripted".to_owned())).unwrap()
    }

    pub(crate) fn options(&self, max_turns: u32) -> AgentOptions {
        let generate = GenerateOptions {
            prompt: "Total revenue (qty * price) of the sales file, written as `total`.".into(),
            samples: vec![Sample {
                name: "sales".into(),
                path: self.dir.path().join("sales.csv"),
            }],
            outputs: vec!["total:float".parse::<Declaration>().unwrap()],
            sample_rows: 10,
            out_dir: self.run_dir(),
            sandbox: SandboxOptions {
                cache_dir: Some(Path::new(env!("CARGO_TARGET_TMPDIR")).join("autocoder-envs")),
                limits: autocoder_sandbox::Limits {
                    wall_timeout: Duration::from_secs(60),
                    ..autocoder_sandbox::Limits::default()
                },
                ..SandboxOptions::default()
            },
            model: self.wire.model().into(),
            ..GenerateOptions::default()
        };
        let model = ModelSpec::parse(self.wire.model()).unwrap();
        let mut options = AgentOptions::new(generate, &model, Some(&self.server.base_url()));
        options.protocol = self.wire.protocol();
        options.max_turns = max_turns;
        options
    }

    pub(crate) async fn run(&self, options: &AgentOptions) -> GenerationResult {
        generate_agent(options, &self.client(), &|_| {})
            .await
            .unwrap()
    }

    /// The text of request `index` (0-based) as sent, JSON-escaped.
    pub(crate) fn request(&self, index: usize) -> String {
        self.server.requests()[index].body.to_string()
    }

    /// The tool-call records appended to `conversation.jsonl`.
    pub(crate) fn tool_records(&self) -> Vec<Value> {
        std::fs::read_to_string(self.run_dir().join("conversation.jsonl"))
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .filter(|v| v["kind"] == "tool_call")
            .collect()
    }
}

/// `text` as it appears inside a JSON string.
pub(crate) fn escaped(text: &str) -> String {
    let quoted = serde_json::to_string(text).unwrap();
    quoted[1..quoted.len() - 1].to_owned()
}
