//! `autocoder generate --agent`: the agent's flags and the call into `autocoder-agent` with the
//! pipeline's request, run directory and result document.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context as _;
use autocoder_agent::{AgentOptions, ToolProtocol, generate_agent, output_chars_for};
use autocoder_llm::{LlmClient, ModelSpec};
use autocoder_loop::rundir::GenerationResult;
use autocoder_loop::{GenerateOptions, Progress};

/// Agent mode's flags (used with `--agent` only).
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct AgentArgs {
    /// Generate with a tool-using agent instead of the structured pipeline: the model reads,
    /// writes and tests files in a sandboxed workspace (`RUN_DIR/work`), every shell command
    /// parsed and decided by the command policy.
    #[arg(long)]
    pub(crate) agent: bool,
    /// Agent mode: model turns at most.
    #[arg(long, value_name = "N", default_value_t = 50, requires = "agent")]
    max_turns: u32,
    /// Agent mode: how tools reach the model, `native` (the API's tool calls) or `json` (one
    /// JSON action per turn through structured output); default `json` for local servers
    /// (Ollama, an API base on localhost), `native` otherwise.
    #[arg(long, value_parser = ["native", "json"], requires = "agent")]
    tool_protocol: Option<String>,
    /// Agent mode: the model's context window in tokens (default 8192 for local servers,
    /// 128000 otherwise); older turns are dropped to stay inside it.
    #[arg(long, value_name = "TOKENS", requires = "agent")]
    context_window: Option<usize>,
    /// Agent mode: wall-clock limit of the whole run, in seconds.
    #[arg(
        long,
        value_name = "SECONDS",
        default_value_t = 3600,
        requires = "agent"
    )]
    agent_timeout: u64,
    /// Agent mode: wall-clock limit of one tool call, in seconds (building an environment gets
    /// at least 900; every sandbox run also has `--timeout`).
    #[arg(
        long,
        value_name = "SECONDS",
        default_value_t = 300,
        requires = "agent"
    )]
    tool_timeout: u64,
    /// Agent mode: a command policy file replacing the shipped one (`autocoder policy show`).
    #[arg(long, value_name = "FILE", requires = "agent")]
    policy: Option<PathBuf>,
}

/// Runs the agent on the pipeline's request.
pub(crate) async fn generate(
    args: &AgentArgs,
    request: GenerateOptions,
    api_base: Option<&str>,
    client: &LlmClient,
    progress: &dyn Fn(&Progress),
) -> anyhow::Result<GenerationResult> {
    let model = ModelSpec::parse(&request.model).context("--model")?;
    let mut options = AgentOptions::new(request, &model, api_base);
    options.max_turns = args.max_turns;
    if let Some(name) = &args.tool_protocol {
        options.protocol = ToolProtocol::from_name(name).context("--tool-protocol")?;
    }
    if let Some(tokens) = args.context_window {
        options.context_tokens = tokens;
        options.tool_output_chars = output_chars_for(tokens);
    }
    options.run_timeout = Duration::from_secs(args.agent_timeout);
    options.tool_timeout = Duration::from_secs(args.tool_timeout);
    options.policy.clone_from(&args.policy);
    Ok(generate_agent(&options, client, progress).await?)
}
