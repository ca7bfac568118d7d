//! `autocoder resume RUN_DIR`: continues an interrupted generation from its journal
//! (`RUN_DIR/journal.jsonl`). Every option comes from the journal; given again, only the safe
//! ones override it: timeouts, the live view, `--max-iterations` upwards, the API base, and the
//! `--env` values the journal redacted. A run of `generate --agent` resumes as an agent run; a
//! run that was recording its model calls (`--record`) ends with the whole recording.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, bail};
use autocoder_agent::{AgentOptions, generate_agent, resume_agent};
use autocoder_llm::LlmClient;
use autocoder_loop::journal::{self, JournalFile};
use autocoder_loop::{Progress, generate, resume};

use crate::cli::GlobalArgs;
use crate::commands::generate::{describe, live_view, summary};
use crate::output::write_stdout;

/// `autocoder resume ...`
#[derive(Debug, clap::Args)]
pub(crate) struct ResumeArgs {
    /// The run directory of the interrupted `autocoder generate`.
    run_dir: PathBuf,
    /// Start the run over from its request, discarding the journal (also for a finished run).
    #[arg(long)]
    force: bool,
    /// Test runs at most; only more than the journal's.
    #[arg(long)]
    max_iterations: Option<u32>,
    /// Longest wait for one model answer, in seconds.
    #[arg(long, value_name = "SECONDS")]
    request_timeout: Option<u64>,
    /// Wall-clock limit of every sandbox run, in seconds.
    #[arg(long, value_name = "SECONDS")]
    timeout: Option<u64>,
    /// The API base URL, when the server moved (the journal redacts a password in it).
    #[arg(long)]
    api_base: Option<String>,
    /// The value of an `--env` variable of the run (the journal keeps only its name), `KEY=VALUE`;
    /// repeatable.
    #[arg(long = "env", value_name = "KEY=VALUE")]
    env_vars: Vec<String>,
    /// The model-call cache for the calls the journal does not have: auto, refresh or off.
    #[arg(long, default_value = "auto", value_parser = ["auto", "refresh", "off"])]
    model_cache: String,
    /// Print the result document on stdout and nothing else.
    #[arg(long)]
    json: bool,
}

pub(crate) async fn run(args: ResumeArgs, global: &GlobalArgs) -> anyhow::Result<i32> {
    let run_dir = std::path::absolute(&args.run_dir)
        .with_context(|| format!("{}", args.run_dir.display()))?;
    let file = journal::read(&run_dir)?;
    // A run killed after its finish line but before `result.json` replays to its end.
    if let Some(finish) = file.finish()
        && run_dir.join("result.json").exists()
        && !args.force
    {
        bail!(
            "{} already finished ({}: {}); its result is in result.json. `autocoder resume --force {}` starts it over",
            run_dir.display(),
            if finish.success {
                "tests pass"
            } else {
                "failed"
            },
            finish.reason,
            args.run_dir.display()
        );
    }
    let request = &file.request;
    // Relative sample paths read the same files as the interrupted run did.
    if request.cwd.is_dir() {
        std::env::set_current_dir(&request.cwd)
            .with_context(|| format!("cannot enter {}", request.cwd.display()))?;
    }
    let mut env_values = Vec::new();
    for pair in &args.env_vars {
        let Some((key, value)) = pair.split_once('=') else {
            bail!("--env {pair:?} is not KEY=VALUE");
        };
        env_values.push((key.to_owned(), value.to_owned()));
    }
    let mut options = request.options(&env_values, &|name| std::env::var(name).ok())?;
    options.out_dir.clone_from(&run_dir);
    if let Some(max) = args.max_iterations {
        if max < options.limits.max_iterations {
            bail!(
                "--max-iterations {max} is below the run's {}: a resumed run may only get more",
                options.limits.max_iterations
            );
        }
        options.limits.max_iterations = max;
    }
    if let Some(seconds) = args.timeout {
        options.sandbox.limits.wall_timeout = Duration::from_secs(seconds);
    }
    let mut config = request.llm_config()?;
    if let Some(seconds) = args.request_timeout {
        config.timeouts.total = Duration::from_secs(seconds);
    }
    if let Some(base) = &args.api_base {
        config.api_base = Some(base.clone());
    }
    // A recording (`--record`) is written again from the start: the journaled answers are
    // recorded as they are served, then the new ones, so it ends as an uninterrupted run's.
    config.conversation_log = Some(run_dir.join("conversation.jsonl"));
    let client = LlmClient::new(config)?;
    crate::commands::cache::install(&client, &args.model_cache)?;
    if !(global.quiet || args.json) {
        announce(&file, args.force);
    }
    let live = live_view(global.quiet || args.json);
    let on_progress = |progress: &Progress| {
        let status = describe(progress);
        tracing::info!("{status}");
        if let Some(bar) = &live {
            bar.set_message(status);
        }
    };
    let result = match &request.agent {
        Some(agent) => {
            let options = AgentOptions::from_record(options, agent)?;
            if args.force {
                generate_agent(&options, &client, &on_progress).await
            } else {
                resume_agent(&options, &client, &file, &on_progress).await
            }
            .map_err(anyhow::Error::from)
        }
        None if args.force => generate(&options, &client, &on_progress)
            .await
            .map_err(anyhow::Error::from),
        None => resume(&options, &client, &file, &on_progress)
            .await
            .map_err(anyhow::Error::from),
    };
    if let Some(bar) = &live {
        bar.finish_and_clear();
    }
    let result = result?;
    if args.json {
        write_stdout(&format!("{}\n", serde_json::to_string_pretty(&result)?))?;
    } else if !global.quiet {
        summary(&result, &run_dir);
    }
    Ok(i32::from(!result.success))
}

#[allow(
    clippy::print_stderr,
    reason = "what the resume will skip is progress output, on stderr"
)]
fn announce(file: &JournalFile, force: bool) {
    if force {
        eprintln!("starting {} over (--force)", file.path.display());
        return;
    }
    eprintln!(
        "resuming from {}: {} model answer(s) and {} test run(s) journaled are not asked for or run again",
        file.path.display(),
        file.model_answers(),
        file.test_runs()
    );
}
