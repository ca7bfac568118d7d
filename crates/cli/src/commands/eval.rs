//! `autocoder eval SUITE_DIR`: generates every task of a suite with each seed, runs the scripts
//! on held-out data, and prints the score table (stdout) and writes `eval.json`. Progress goes
//! to stderr. Finished runs in `--out` are kept, so an interrupted eval resumes.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, bail};
use autocoder_agent::ToolProtocol;
use autocoder_eval::{
    AgentSettings, EvalEvent, EvalOptions, Split, Suite, render_table, run_suite,
};
use autocoder_llm::ModelCacheMode;
use autocoder_loop::Prompting;

use crate::cli::GlobalArgs;
use crate::commands::generate::{ModelArgs, SandboxArgs};
use crate::output::write_stdout;

/// `autocoder eval ...`
#[derive(Debug, clap::Args)]
pub(crate) struct EvalArgs {
    /// The suite: a directory with `suite.json` and `tasks/<name>/`.
    suite: PathBuf,
    #[command(flatten)]
    model: ModelArgs,
    /// Sampling seeds; each task runs once per seed (`--seeds 1,2,3`).
    #[arg(long, value_delimiter = ',', default_value = "1")]
    seeds: Vec<u64>,
    /// Only these tasks (`--tasks a,b`); default all.
    #[arg(long, value_delimiter = ',')]
    tasks: Vec<String>,
    /// Only the tasks of this half of the suite.
    #[arg(long, value_parser = ["dev", "test"])]
    split: Option<String>,
    /// Test runs per generation at most.
    #[arg(long, default_value_t = 10)]
    max_iterations: u32,
    /// Write no tests: each run ends once its first script is written and its environment is
    /// ready, and that script is scored. Measures the code step alone, at a few model calls a
    /// run (a cheap first look at a change to the code prompt before a full eval).
    #[arg(long, conflicts_with = "agent")]
    skip_tests: bool,
    /// Tokens per generation at most.
    #[arg(long, value_name = "TOKENS")]
    token_budget: Option<u64>,
    /// Wall-clock limit of one generation, in seconds; past it the task scores as not done.
    #[arg(long, value_name = "SECONDS", default_value_t = 1200)]
    task_timeout: u64,
    /// Where the records, run directories and `eval.json` go; finished runs there are kept.
    #[arg(long, value_name = "DIR", default_value = "runs/eval")]
    out: PathBuf,
    #[command(flatten)]
    prompting: EvalPromptingArgs,
    /// Sample rows of each dataset shown to the model.
    #[arg(long, default_value_t = 20)]
    sample_rows: usize,
    /// A directory of prompt templates overriding the built-in ones by name.
    #[arg(long, value_name = "DIR")]
    prompts_dir: Option<PathBuf>,
    #[command(flatten)]
    agent: EvalAgentArgs,
    /// The model-call cache: `off` (the default) asks the model for every run; `auto` answers a
    /// request made before (by any eval or generate) from the cache, so the two arms of a
    /// change's before-and-after share every answer up to the first prompt the change alters
    /// (an answer from the cache counts no call and no token).
    #[arg(long, default_value = "off", value_parser = ["auto", "refresh", "off"])]
    model_cache: String,
    /// Print `eval.json` on stdout instead of the table.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    sandbox: SandboxArgs,
}

/// What the loop's prompts show and ask for (as `generate`'s flags of the same names).
#[derive(Debug, clap::Args)]
pub(crate) struct EvalPromptingArgs {
    #[command(flatten)]
    flags: crate::commands::prompting::PromptingFlags,
    /// Scripts written per new version of the code (as `generate --candidates`).
    #[arg(long, value_name = "K", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=8))]
    candidates: u32,
    /// Code fixes for a script that fails on the samples before its tests are written (as
    /// `generate --sample-fixes`).
    #[arg(long, value_name = "N", default_value_t = 0, value_parser = clap::value_parser!(u32).range(0..=5), conflicts_with = "agent")]
    sample_fixes: u32,
}

impl EvalPromptingArgs {
    /// How the flags shape the prompts.
    fn prompting(&self) -> Prompting {
        self.flags.prompting()
    }
}

/// Agent mode's flags for `eval`.
#[derive(Debug, clap::Args)]
pub(crate) struct EvalAgentArgs {
    /// Generate with the tool-using agent (as `generate --agent`) instead of the pipeline; the
    /// task timeout is the agent's run timeout and `--max-iterations` is not used.
    #[arg(long)]
    agent: bool,
    /// Agent mode: model turns at most.
    #[arg(long, value_name = "N", default_value_t = 50, requires = "agent")]
    max_turns: u32,
    /// Agent mode: `native` tool calls or one `json` action per turn; default `json` for local
    /// servers, `native` otherwise.
    #[arg(long, value_parser = ["native", "json"], requires = "agent")]
    tool_protocol: Option<String>,
}

impl EvalAgentArgs {
    fn settings(&self) -> Option<AgentSettings> {
        self.agent.then(|| AgentSettings {
            max_turns: self.max_turns,
            protocol: self
                .tool_protocol
                .as_deref()
                .and_then(ToolProtocol::from_name),
        })
    }
}

pub(crate) async fn run(args: EvalArgs, global: &GlobalArgs) -> anyhow::Result<i32> {
    if args.model.seed.is_some() {
        bail!("--seed: an eval runs each task once per seed; use --seeds 1,2,3");
    }
    if args.seeds.is_empty() {
        bail!("--seeds: give at least one seed");
    }
    let suite = Suite::load(&args.suite).context("reading the suite")?;
    let mut tasks = args.tasks.clone();
    if let Some(split) = &args.split {
        let wanted = if split == "dev" {
            Split::Dev
        } else {
            Split::Test
        };
        let names: Vec<String> = suite
            .tasks
            .iter()
            .filter(|t| t.split == wanted && (tasks.is_empty() || tasks.contains(&t.name)))
            .map(|t| t.name.clone())
            .collect();
        if names.is_empty() {
            bail!("--split {split}: no task of the selection is in that half");
        }
        tasks = names;
    }
    let options = EvalOptions {
        llm: args.model.config()?,
        model: args.model.model.clone(),
        seeds: args.seeds.clone(),
        tasks,
        max_iterations: args.max_iterations,
        skip_tests: args.skip_tests,
        token_budget: args.token_budget,
        task_timeout: Duration::from_secs(args.task_timeout),
        out_dir: args.out.clone(),
        sandbox: args.sandbox.options()?,
        prompting: args.prompting.prompting(),
        candidates: args.prompting.candidates,
        sample_fixes: args.prompting.sample_fixes,
        sample_rows: args.sample_rows,
        prompts_dir: args.prompts_dir.clone(),
        agent: args.agent.settings(),
        model_cache: ModelCacheMode::from_name(&args.model_cache)
            .with_context(|| format!("--model-cache {}", args.model_cache))?,
        model_cache_dir: None,
    };
    let quiet = global.quiet;
    let on_event = move |event: &EvalEvent<'_>| {
        if !quiet {
            describe(event);
        }
    };
    let report = run_suite(&suite, &options, &on_event).await?;
    if args.json {
        write_stdout(&format!("{}\n", serde_json::to_string_pretty(&report)?))?;
    } else {
        write_stdout(&render_table(&report))?;
    }
    if !quiet {
        describe_done(&args.out.join("eval.json"));
    }
    Ok(0)
}

#[allow(
    clippy::print_stderr,
    reason = "a run's start and end are progress output, on stderr"
)]
fn describe(event: &EvalEvent<'_>) {
    match event {
        EvalEvent::Started {
            task,
            seed,
            index,
            total,
        } => eprintln!("[{index}/{total}] {task} seed {seed}: generating"),
        EvalEvent::Kept(record) => eprintln!(
            "{} seed {}: finished before, kept (held-out correct: {})",
            record.task,
            record.seed,
            record.heldout_correct()
        ),
        EvalEvent::Progress(p) => tracing::debug!(
            "iteration {} · {} · {}s · {} tokens",
            p.iteration,
            p.step,
            p.elapsed_seconds,
            p.tokens
        ),
        EvalEvent::Scoring => eprintln!("  running the script on the held-out cases"),
        EvalEvent::Finished(record) => {
            let (right, all) = record.heldout_counts();
            eprintln!(
                "  {} seed {}: tests {} after {} run(s), held-out {right}/{all} right, {} tokens, {:.0}s",
                record.task,
                record.seed,
                if record.generated { "pass" } else { "fail" },
                record.test_runs,
                record.tokens(),
                record.seconds
            );
        }
    }
}

#[allow(
    clippy::print_stderr,
    reason = "where the report went is progress output"
)]
fn describe_done(path: &std::path::Path) {
    eprintln!("report: {}", path.display());
}
