//! `autocoder generate`: a task, samples, a contract and rules in; a tested script and its run
//! directory out. A live line on stderr shows the iteration, step, time and tokens; the final
//! summary goes to stderr too, and `--json` prints the result document on stdout.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, bail};
use autocoder_llm::{CallParams, LlmClient, LlmConfig, ModelSpec};
use autocoder_loop::request::{Declaration, Sample};
use autocoder_loop::rundir::GenerationResult;
use autocoder_loop::session::Limits;
use autocoder_loop::{CacheMode, GenerateOptions, Progress, SandboxOptions, generate};
use autocoder_sandbox::Backend;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::cli::GlobalArgs;
use crate::output::write_stdout;

/// Model selection and parameters, shared by `generate` and `schema --constraint`.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct ModelArgs {
    /// The model, as `provider/name` (`openai/gpt-4.1`, `anthropic/claude-sonnet-4-5`,
    /// `ollama/qwen2.5-coder`, `openai/<name>` with `--api-base` for any compatible server).
    #[arg(long, env = "AUTOCODER_MODEL")]
    pub(crate) model: String,
    /// The API base URL (a local or proxy server).
    #[arg(long, env = "AUTOCODER_API_BASE")]
    pub(crate) api_base: Option<String>,
    /// The environment variable holding the API key (default: `OPENAI_API_KEY` or
    /// `ANTHROPIC_API_KEY` by provider).
    #[arg(long, value_name = "VAR")]
    pub(crate) api_key_env: Option<String>,
    /// Sampling temperature for every call.
    #[arg(long)]
    pub(crate) temperature: Option<f64>,
    /// Largest answer per call, in tokens.
    #[arg(long)]
    pub(crate) max_tokens: Option<u32>,
    /// Nucleus sampling.
    #[arg(long)]
    pub(crate) top_p: Option<f64>,
    /// Penalty on tokens by how often they already appear (OpenAI-compatible servers).
    #[arg(long)]
    pub(crate) frequency_penalty: Option<f64>,
    /// Penalty on tokens that already appear at all (OpenAI-compatible servers).
    #[arg(long)]
    pub(crate) presence_penalty: Option<f64>,
    /// Sampling seed, where the provider supports one.
    #[arg(long)]
    pub(crate) seed: Option<u64>,
    /// Longest wait for one model answer, in seconds (raise it for slow local models).
    #[arg(long, value_name = "SECONDS", default_value_t = 600)]
    pub(crate) request_timeout: u64,
    /// Record every model call (request fingerprint and answer) to this JSONL file.
    #[arg(long, value_name = "FILE", conflicts_with = "replay")]
    pub(crate) record: Option<PathBuf>,
    /// Answer every model call from a recording, with no network.
    #[arg(long, value_name = "FILE")]
    pub(crate) replay: Option<PathBuf>,
}

impl ModelArgs {
    /// A client for these arguments, logging its conversation to `log` when given and taking
    /// prompt templates from `prompts_dir` where it has them.
    pub(crate) fn client(
        &self,
        log: Option<PathBuf>,
        prompts_dir: Option<PathBuf>,
    ) -> anyhow::Result<LlmClient> {
        let mut config = self.config()?;
        config.conversation_log = log;
        config.prompts_dir = prompts_dir;
        Ok(LlmClient::new(config)?)
    }

    /// The client settings these arguments make (no conversation log, built-in prompts).
    pub(crate) fn config(&self) -> anyhow::Result<LlmConfig> {
        let model = ModelSpec::parse(&self.model).context("--model")?;
        let mut config = LlmConfig::new(model);
        config.api_base.clone_from(&self.api_base);
        config.api_key_env.clone_from(&self.api_key_env);
        config.params = CallParams {
            temperature: self.temperature,
            max_tokens: self.max_tokens,
            top_p: self.top_p,
            frequency_penalty: self.frequency_penalty,
            presence_penalty: self.presence_penalty,
            seed: self.seed,
            ..CallParams::default()
        };
        config.timeouts.total = Duration::from_secs(self.request_timeout);
        config.record.clone_from(&self.record);
        config.replay.clone_from(&self.replay);
        Ok(config)
    }
}

/// `autocoder generate ...`
#[derive(Debug, clap::Args)]
pub(crate) struct GenerateArgs {
    /// The task, in plain words.
    #[arg(long)]
    prompt: String,
    /// Schema text shown to the model verbatim; `@FILE` reads it from a file.
    #[arg(long)]
    schema: Option<String>,
    /// A business rule in words ("quantity must be positive"); repeatable.
    #[arg(long = "constraint", value_name = "TEXT")]
    constraints: Vec<String>,
    /// A sample file, `NAME=PATH`; it becomes the file input `--NAME` with the sample as
    /// default; repeatable.
    #[arg(long = "sample", value_name = "NAME=PATH")]
    samples: Vec<String>,
    /// An input of the script, `NAME:TYPE` (str, int, float, bool, datetime, timedelta, file,
    /// dir); repeatable.
    #[arg(long = "input", value_name = "NAME:TYPE")]
    inputs: Vec<String>,
    /// An output the script writes to `/var/outputs/NAME`, `NAME:TYPE`; repeatable.
    #[arg(long = "output", value_name = "NAME:TYPE")]
    outputs: Vec<String>,
    #[command(flatten)]
    model: ModelArgs,
    /// The model-call cache (`$XDG_CACHE_HOME/autocoder/models`): `auto` answers a request made
    /// before from it, `refresh` asks again and keeps the new answer, `off` leaves it alone.
    #[arg(long, default_value = "auto", value_parser = ["auto", "refresh", "off"])]
    model_cache: String,
    /// Test runs at most.
    #[arg(long, default_value_t = 10)]
    max_iterations: u32,
    /// Stop after the code and its environment exist, without tests.
    #[arg(long)]
    skip_tests: bool,
    /// Stop when the calls have used this many tokens (input plus output).
    #[arg(long, value_name = "TOKENS")]
    token_budget: Option<u64>,
    /// The run directory (default: `runs/<timestamp>`).
    #[arg(long, value_name = "RUN_DIR")]
    out: Option<PathBuf>,
    /// Print the result document on stdout and nothing else.
    #[arg(long)]
    json: bool,
    /// A distribution always installed; repeatable.
    #[arg(long = "base-package", value_name = "P")]
    base_packages: Vec<String>,
    #[command(flatten)]
    prompting: PromptArgs,
    #[command(flatten)]
    sandbox: SandboxArgs,
}

/// How the prompts are written and what the model is asked to answer in.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct PromptArgs {
    /// Replace the system prompt's persona (the ground rules stay); `@FILE` reads a file.
    #[arg(long)]
    system_prompt: Option<String>,
    /// Sample rows of each dataset shown to the model.
    #[arg(long, default_value_t = 20)]
    sample_rows: usize,
    /// A directory of prompt templates overriding the built-in ones by name.
    #[arg(long, value_name = "DIR")]
    prompts_dir: Option<PathBuf>,
    /// Show the script to the test writer (by default it writes the tests from the task, the
    /// data and the contract alone).
    #[arg(long)]
    tests_see_code: bool,
    /// Ask for the script and the tests as Markdown code blocks instead of JSON strings (small
    /// local models write valid Python far more often that way; packages then come from the
    /// script's imports).
    #[arg(long)]
    code_in_fences: bool,
}

/// Sandbox settings, shared by `generate` and `run`.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct SandboxArgs {
    /// The isolation: bwrap (default), docker, or none (no isolation; warns).
    #[arg(long, default_value = "bwrap", value_parser = ["bwrap", "docker", "none"])]
    sandbox: String,
    /// Memory limit of every run, in MiB.
    #[arg(long, default_value_t = 4096)]
    memory_mb: u64,
    /// CPU-time limit of every run, in seconds.
    #[arg(long, default_value_t = 120)]
    cpu_seconds: u64,
    /// Wall-clock limit of every run, in seconds.
    #[arg(long, default_value_t = 180)]
    timeout: u64,
    /// An environment variable for the script, `KEY=VALUE` (nothing else from the host is
    /// passed); repeatable.
    #[arg(long = "env", value_name = "KEY=VALUE")]
    env_vars: Vec<String>,
    /// Let the script use the network (off by default).
    #[arg(long)]
    network: bool,
    /// Reuse cached environments (`auto`), rebuild them (`override`) or use a throwaway cache
    /// (`disable`).
    #[arg(long, default_value = "auto", value_parser = ["auto", "override", "disable"])]
    cache: String,
    /// Serve a sandbox run identical to an earlier one (same script, tests, environment and
    /// input bytes) from the outcome cache instead of running it again; says so when it does.
    #[arg(long)]
    reuse: bool,
}

impl SandboxArgs {
    pub(crate) fn options(&self) -> anyhow::Result<SandboxOptions> {
        let backend = Backend::from_name(&self.sandbox).context("--sandbox")?;
        if backend == Backend::None {
            tracing::warn!("--sandbox none: generated code runs WITHOUT isolation on this machine");
        }
        let mut env_vars = Vec::new();
        for pair in &self.env_vars {
            let Some((key, value)) = pair.split_once('=') else {
                bail!("--env {pair:?} is not KEY=VALUE");
            };
            env_vars.push((key.to_owned(), value.to_owned()));
        }
        let limits = autocoder_sandbox::Limits {
            memory_bytes: self.memory_mb << 20,
            cpu_seconds: self.cpu_seconds,
            wall_timeout: Duration::from_secs(self.timeout),
            ..autocoder_sandbox::Limits::default()
        };
        Ok(SandboxOptions {
            backend,
            limits,
            network: self.network,
            env_vars,
            cache_dir: None,
            cache: CacheMode::from_name(&self.cache).unwrap_or_default(),
            reuse: self.reuse,
        })
    }
}

/// `TEXT` as is, or the contents of `FILE` for `@FILE`.
fn text_or_file(value: &str, flag: &str) -> anyhow::Result<String> {
    match value.strip_prefix('@') {
        Some(path) => {
            std::fs::read_to_string(path).with_context(|| format!("{flag}: cannot read {path}"))
        }
        None => Ok(value.to_owned()),
    }
}

fn default_run_dir() -> PathBuf {
    let seconds = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    Path::new("runs").join(format!("run-{seconds}"))
}

pub(crate) async fn run(args: GenerateArgs, global: &GlobalArgs) -> anyhow::Result<i32> {
    let parse = |flag: &str, items: &[String]| -> anyhow::Result<Vec<Declaration>> {
        items
            .iter()
            .map(|text| text.parse().with_context(|| format!("--{flag} {text}")))
            .collect()
    };
    let samples: Vec<Sample> = args
        .samples
        .iter()
        .map(|text| text.parse().with_context(|| format!("--sample {text}")))
        .collect::<anyhow::Result<_>>()?;
    let out = args.out.clone().unwrap_or_else(default_run_dir);
    let options = GenerateOptions {
        prompt: args.prompt.clone(),
        schema_text: args
            .schema
            .as_deref()
            .map(|s| text_or_file(s, "--schema"))
            .transpose()?,
        constraints: args.constraints.clone(),
        samples,
        inputs: parse("input", &args.inputs)?,
        outputs: parse("output", &args.outputs)?,
        system_prompt: args
            .prompting
            .system_prompt
            .as_deref()
            .map(|s| text_or_file(s, "--system-prompt"))
            .transpose()?,
        base_packages: args.base_packages.clone(),
        sample_rows: args.prompting.sample_rows,
        limits: Limits {
            max_iterations: args.max_iterations,
            token_budget: args.token_budget,
            skip_tests: args.skip_tests,
        },
        out_dir: out.clone(),
        sandbox: args.sandbox.options()?,
        prompts_dir: args.prompting.prompts_dir.clone(),
        tests_see_code: args.prompting.tests_see_code,
        code_in_fences: args.prompting.code_in_fences,
        model: args.model.model.clone(),
    };
    let client = args.model.client(
        Some(out.join("conversation.jsonl")),
        args.prompting.prompts_dir.clone(),
    )?;
    crate::commands::cache::install(&client, &args.model_cache)?;
    let live = live_view(global.quiet || args.json);
    let on_progress = |progress: &Progress| {
        let status = describe(progress);
        tracing::info!("{status}");
        if let Some(bar) = &live {
            bar.set_message(status);
        }
    };
    let result = generate(&options, &client, &on_progress).await;
    if let Some(bar) = &live {
        bar.finish_and_clear();
    }
    let result = result?;
    if args.json {
        write_stdout(&format!("{}\n", serde_json::to_string_pretty(&result)?))?;
    } else if !global.quiet {
        summary(&result, &out);
    }
    Ok(i32::from(!result.success))
}

pub(crate) fn live_view(hidden: bool) -> Option<ProgressBar> {
    if hidden || !std::io::IsTerminal::is_terminal(&std::io::stderr()) {
        return None;
    }
    let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
    bar.set_style(
        ProgressStyle::with_template("{spinner} {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_spinner()),
    );
    bar.enable_steady_tick(Duration::from_millis(120));
    Some(bar)
}

pub(crate) fn describe(p: &Progress) -> String {
    let last = p
        .last_run
        .map(|(passed, failed)| format!(" · last run {passed} passed, {failed} failing"))
        .unwrap_or_default();
    format!(
        "iteration {} · {} · {}s · {} tokens{last} · packages: {}",
        p.iteration,
        p.step,
        p.elapsed_seconds,
        p.tokens,
        p.packages.join(" ")
    )
}

#[allow(
    clippy::print_stderr,
    reason = "the final summary is progress output, on stderr"
)]
pub(crate) fn summary(result: &GenerationResult, out: &Path) {
    let verdict = if result.success {
        "tests pass"
    } else {
        "FAILED"
    };
    eprintln!(
        "{verdict}: {} after {} test run(s), {} model calls, {} + {} tokens, {:.1}s",
        result.reason,
        result.attempts,
        result.model_calls,
        result.tokens.input_tokens,
        result.tokens.output_tokens,
        result.seconds
    );
    eprintln!("packages: {}", result.packages.join(", "));
    if !result.system_packages.is_empty() {
        eprintln!("system packages: {}", result.system_packages.join(", "));
    }
    for note in &result.notes {
        eprintln!("note: {note}");
    }
    eprintln!("run directory: {}", out.display());
    if let Some(error) = &result.error {
        eprintln!("last error:\n{error}");
    }
    if result.success {
        eprintln!("run it: autocoder run {}", out.display());
    }
}
