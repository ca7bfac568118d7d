//! `autocoder generate`: a task, samples, a contract and rules in; a tested script and its run
//! directory out. A live line on stderr shows the iteration, step, time and tokens; the final
//! summary goes to stderr too, and `--json` prints the result document on stdout.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, bail};
use autocoder_llm::{CallParams, LlmClient, LlmConfig, ModelSpec};
use autocoder_loop::request::{Declaration, Sample};
use autocoder_loop::rundir::GenerationResult;
use autocoder_loop::session::Limits;
use autocoder_loop::{CacheMode, GenerateOptions, Progress, Prompting, SandboxOptions, generate};
use autocoder_sandbox::Backend;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::cli::GlobalArgs;
use crate::output::write_stdout;

/// Model selection and parameters, shared by `generate` and `schema --constraint`.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct ModelArgs {
    /// The model, as `provider/name` (`openai/gpt-4.1`, `anthropic/claude-sonnet-4-5`,
    /// `ollama/qwen2.5-coder`, `openai/<name>` with `--api-base` for any compatible server).
    #[arg(long, env = autocoder_llm::MODEL_ENV_VAR)]
    pub(crate) model: String,
    /// The API base URL (a local or proxy server).
    #[arg(long, env = autocoder_llm::API_BASE_ENV_VAR)]
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
    /// Any other provider parameter, `KEY=VALUE` with a JSON value (else a string), sent in
    /// every request body (`reasoning_effort=high`, `top_k=40`, `stop=["END"]`); a field the
    /// request sets itself keeps its own value; repeatable.
    #[arg(long = "param", value_name = "KEY=VALUE")]
    pub(crate) params: Vec<String>,
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
        config.extra_body = extra_params(&self.params)?;
        config.timeouts.total = Duration::from_secs(self.request_timeout);
        config.record.clone_from(&self.record);
        config.replay.clone_from(&self.replay);
        Ok(config)
    }
}

/// Body fields a `--param` may not set: the request's own structure, and streaming, which
/// the client does not read.
const RESERVED_PARAMS: [&str; 3] = ["model", "messages", "stream"];

/// `--param KEY=VALUE` items as body fields: the value as JSON when it parses, else a string.
fn extra_params(items: &[String]) -> anyhow::Result<serde_json::Map<String, serde_json::Value>> {
    let mut fields = serde_json::Map::new();
    for item in items {
        let Some((key, value)) = item.split_once('=') else {
            bail!("--param {item:?} is not KEY=VALUE (for example `reasoning_effort=high`)");
        };
        let key = key.trim();
        if key.is_empty() || RESERVED_PARAMS.contains(&key) {
            bail!(
                "--param {item:?}: `{key}` cannot be set this way (not empty, nor one of {})",
                RESERVED_PARAMS.join(", ")
            );
        }
        let value = serde_json::from_str(value)
            .unwrap_or_else(|_| serde_json::Value::String(value.to_owned()));
        fields.insert(key.to_owned(), value);
    }
    Ok(fields)
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
    /// The value a declared non-file input takes on the samples, `NAME=VALUE` (`gap=30`): the
    /// script is tried on the samples with it, and the tests' runs default to it; repeatable.
    #[arg(long = "sample-arg", value_name = "NAME=VALUE")]
    sample_args: Vec<String>,
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
    /// Write K scripts for each new version of the code (the first as usual, the others
    /// sampled hotter), run each on the samples, group those that compute the same outputs,
    /// run the tests against one script per group and keep the one passing the most (ties:
    /// the larger group, then the script whose outputs share the most rows and values with the
    /// other candidates'). A diagnosis after that sees what the other groups computed.
    #[arg(long, value_name = "K", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=8))]
    candidates: u32,
    /// Before any test is written, run the script on the samples; when it crashes there or
    /// writes an output not of its declared type, ask for up to N code fixes from what the run
    /// printed (0: no such run).
    #[arg(long, value_name = "N", default_value_t = 0, value_parser = clap::value_parser!(u32).range(0..=5), conflicts_with = "agent")]
    sample_fixes: u32,
    /// Stop when the calls have used this many tokens (input plus output).
    #[arg(long, value_name = "TOKENS")]
    token_budget: Option<u64>,
    /// The run directory (default: `runs/<NAME>` with `--name`, else `runs/run-<timestamp>`).
    #[arg(long, value_name = "RUN_DIR")]
    out: Option<PathBuf>,
    /// Names the run: the default run directory, `result.json`'s `name`, the live view and the
    /// Docker containers' `autocoder.run-name` label (letters, digits, `-`, `_`, `.`).
    #[arg(long)]
    name: Option<String>,
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
    #[command(flatten)]
    agent: crate::commands::agent_mode::AgentArgs,
}

/// How the prompts are written and what the model is asked to answer in.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct PromptArgs {
    /// Replace the system prompt's persona (the ground rules stay); `@FILE` reads a file.
    #[arg(long)]
    system_prompt: Option<String>,
    /// Sample rows of each dataset the prompts show, within `--context-tokens` (without either
    /// flag: at most 3 rows of the 20 the profile keeps, about 300 bytes a column).
    #[arg(long, value_name = "N")]
    sample_rows: Option<usize>,
    /// Tokens for the data context of all samples together, with `--sample-rows`: column
    /// detail, then rows, are cut to fit [default: 2000, for an 8k-context local model, leaving
    /// room for the task, the code and the answer].
    #[arg(long, value_name = "TOKENS")]
    context_tokens: Option<usize>,
    /// A directory of prompt templates overriding the built-in ones by name.
    #[arg(long, value_name = "DIR")]
    prompts_dir: Option<PathBuf>,
    #[command(flatten)]
    flags: crate::commands::prompting::PromptingFlags,
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
    /// CPU cores every run may use at once (`1.5`): Docker's `--cpus`; under bwrap and none the
    /// run's cgroup quota (`cpu.max` on cgroup v2, `cpu.cfs_quota_us` on v1; not enforced
    /// without a cgroup, see `autocoder sandbox doctor`).
    #[arg(long, value_name = "CORES", default_value = "1", value_parser = parse_cpus)]
    cpus: u32,
    /// Wall-clock limit of every run, in seconds.
    #[arg(long, default_value_t = 180)]
    timeout: u64,
    /// An environment variable for the script, `KEY=VALUE` (nothing else from the host is
    /// passed); repeatable.
    #[arg(long = "env", value_name = "KEY=VALUE")]
    env_vars: Vec<String>,
    /// Pass this process's environment variable NAME to the script as a secret: its value is
    /// never written (not to result.json, the conversation or any prompt) and is masked as
    /// `***` in captured output; only the name is recorded; repeatable.
    #[arg(long = "secret", value_name = "NAME")]
    secrets: Vec<String>,
    /// Let the script use the network (off by default).
    #[arg(long)]
    network: bool,
    /// Reuse cached environments (`auto`), rebuild them (`override`) or use a throwaway cache
    /// (`disable`).
    #[arg(long, default_value = "auto", value_parser = ["auto", "override", "disable"])]
    cache: String,
    /// Try a sandbox step again up to N times when the machinery failed (the backend could not
    /// start, the Docker engine went away); a failing script or test is never retried. Each
    /// retry is logged (and by generate recorded in result.json's `sandbox_retries`).
    #[arg(long, value_name = "N", default_value_t = 0)]
    sandbox_retries: u32,
    /// The sandbox's Python: a version (`3.12`) found among the installed interpreters (pyenv,
    /// uv's, `python3.12` on PATH; uv downloads nothing here, it can only use what it has), or
    /// an interpreter's path. Part of the environment id; `run` reuses the generation's.
    #[arg(long, value_name = "VERSION|PATH")]
    python: Option<String>,
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
        let mut secrets = Vec::new();
        for name in &self.secrets {
            let valid = name.chars().next().is_some_and(|c| !c.is_ascii_digit())
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
            if !valid {
                bail!(
                    "--secret {name:?}: give the name of an environment variable (letters, digits, `_`)"
                );
            }
            if env_vars.iter().any(|(key, _)| key == name) {
                bail!("--secret {name}: {name} is also given with --env; pass it one way");
            }
            let Some(value) = std::env::var_os(name) else {
                bail!(
                    "--secret {name}: the environment variable {name} is not set; export it first"
                );
            };
            let Some(value) = value.to_str().filter(|v| !v.is_empty()) else {
                bail!("--secret {name}: the value of {name} is empty or not UTF-8");
            };
            secrets.push(autocoder_sandbox::Secret::new(name, value));
        }
        let limits = autocoder_sandbox::Limits {
            memory_bytes: self.memory_mb << 20,
            cpu_seconds: self.cpu_seconds,
            cpu_millis: self.cpus,
            wall_timeout: Duration::from_secs(self.timeout),
            ..autocoder_sandbox::Limits::default()
        };
        Ok(SandboxOptions {
            backend,
            limits,
            network: self.network,
            env_vars,
            secrets,
            cache_dir: None,
            cache: CacheMode::from_name(&self.cache).unwrap_or_default(),
            retries: self.sandbox_retries,
            python: self.python.clone(),
            reuse: self.reuse,
        })
    }
}

/// `--cpus CORES` in thousandths of a core: more than 0.01 and at most 1024 cores.
fn parse_cpus(text: &str) -> Result<u32, String> {
    let cores: f64 = text
        .trim()
        .parse()
        .map_err(|_| format!("{text:?} is not a number of cores (for example 1.5)"))?;
    if !(0.01..=1024.0).contains(&cores) {
        return Err(format!("{text} cores: give between 0.01 and 1024"));
    }
    #[allow(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        reason = "checked to lie within 10..=1_024_000"
    )]
    Ok((cores * 1000.0).round() as u32)
}

/// `--sample-arg NAME=VALUE` flags by name; a name given twice is an error.
fn sample_args(items: &[String]) -> anyhow::Result<BTreeMap<String, String>> {
    let mut args = BTreeMap::new();
    for text in items {
        let Some((name, value)) = text.split_once('=') else {
            bail!("--sample-arg {text}: write NAME=VALUE (for example gap=30)");
        };
        if args
            .insert(name.trim().to_owned(), value.to_owned())
            .is_some()
        {
            bail!("--sample-arg {text}: `{}` is given twice", name.trim());
        }
    }
    Ok(args)
}

/// Sample rows a profile keeps when `--sample-rows` is not given.
const DEFAULT_PROFILE_ROWS: usize = 20;
/// Sample rows shown with `--context-tokens` alone.
const DEFAULT_SHOWN_ROWS: usize = 3;
/// `--context-tokens` when only `--sample-rows` is given: about a quarter of an 8k context.
const DEFAULT_CONTEXT_TOKENS: usize = 2_000;

impl PromptArgs {
    /// What prompts show of the samples: the compact default unless a flag says otherwise.
    fn shown(&self) -> Option<autocoder_loop::data::Shown> {
        if self.sample_rows.is_none() && self.context_tokens.is_none() {
            return None;
        }
        Some(autocoder_loop::data::Shown {
            rows: self.sample_rows.unwrap_or(DEFAULT_SHOWN_ROWS),
            context_tokens: self.context_tokens.unwrap_or(DEFAULT_CONTEXT_TOKENS),
        })
    }

    /// How the flags shape the prompts.
    fn prompting(&self) -> Prompting {
        self.flags.prompting()
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
    let sample_args = sample_args(&args.sample_args)?;
    if let Some(name) = &args.name {
        autocoder_loop::options::check_run_name(name)?;
    }
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| autocoder_loop::options::default_run_dir(args.name.as_deref()));
    let options = GenerateOptions {
        prompt: args.prompt.clone(),
        schema_text: args
            .schema
            .as_deref()
            .map(|s| text_or_file(s, "--schema"))
            .transpose()?,
        constraints: args.constraints.clone(),
        samples,
        sample_args,
        inputs: parse("input", &args.inputs)?,
        outputs: parse("output", &args.outputs)?,
        system_prompt: args
            .prompting
            .system_prompt
            .as_deref()
            .map(|s| text_or_file(s, "--system-prompt"))
            .transpose()?,
        base_packages: args.base_packages.clone(),
        sample_rows: args.prompting.sample_rows.unwrap_or(DEFAULT_PROFILE_ROWS),
        shown: args.prompting.shown(),
        limits: Limits {
            max_iterations: args.max_iterations,
            token_budget: args.token_budget,
            skip_tests: args.skip_tests,
            candidates: args.candidates,
            sample_fixes: args.sample_fixes,
        },
        out_dir: out.clone(),
        sandbox: args.sandbox.options()?,
        prompts_dir: args.prompting.prompts_dir.clone(),
        prompting: args.prompting.prompting(),
        model: args.model.model.clone(),
        name: args.name.clone(),
    };
    // The samples and declarations are checked before the API key is looked up.
    options.check()?;
    let client = args.model.client(
        Some(out.join("conversation.jsonl")),
        args.prompting.prompts_dir.clone(),
    )?;
    crate::commands::cache::install(&client, &args.model_cache)?;
    let live = live_view(global.quiet || args.json);
    let on_progress = |progress: &Progress| {
        let status = match &args.name {
            Some(name) => format!("{name} · {}", describe(progress)),
            None => describe(progress),
        };
        tracing::info!("{status}");
        if let Some(bar) = &live {
            bar.set_message(status);
        }
    };
    let result = if args.agent.agent {
        let base = args.model.api_base.as_deref();
        // Boxed: the agent's future is large (clippy::large_futures).
        Box::pin(crate::commands::agent_mode::generate(
            &args.agent,
            options,
            base,
            &client,
            &on_progress,
        ))
        .await
    } else {
        generate(&options, &client, &on_progress)
            .await
            .map_err(Into::into)
    };
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
    let name = result
        .name
        .as_deref()
        .map(|n| format!("{n}: "))
        .unwrap_or_default();
    eprintln!(
        "{name}{verdict}: {} after {} test run(s), {} model calls, {} + {} tokens, {:.1}s",
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

#[cfg(test)]
mod tests {
    use super::extra_params;
    use serde_json::json;

    #[test]
    fn cpus_are_thousandths_of_a_core() {
        assert_eq!(super::parse_cpus("1.5"), Ok(1500));
        assert_eq!(super::parse_cpus("0.25"), Ok(250));
        assert_eq!(super::parse_cpus("2"), Ok(2000));
        for bad in ["0", "-1", "many", "5000", "NaN"] {
            assert!(super::parse_cpus(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn params_are_json_values_else_strings() {
        let items = [
            "top_k=40",
            "reasoning_effort=high",
            r#"stop=["END"]"#,
            "note=a=b",
        ];
        let fields = extra_params(&items.map(String::from)).unwrap();
        assert_eq!(fields["top_k"], json!(40));
        assert_eq!(fields["reasoning_effort"], json!("high"));
        assert_eq!(fields["stop"], json!(["END"]));
        assert_eq!(fields["note"], json!("a=b"));
        for bad in ["top_k", "=1", "stream=true", "model=x"] {
            assert!(extra_params(&[bad.to_owned()]).is_err(), "{bad}");
        }
    }
}
