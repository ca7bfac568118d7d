//! A generation: checks the request, builds the data context, runs a [`Session`] through the
//! [`Driver`] until it finishes, journaling every step, and writes the run directory.

use std::path::Path;
use std::time::Instant;

use autocoder_llm::LlmClient;
use autocoder_prompts::Prompts;
use autocoder_sandbox::{Interpreter, Sandbox};
use serde_json::json;

use crate::LoopError;
use crate::data::{self, DataOptions};
use crate::driver::Driver;
use crate::env_cache::RunCache;
use crate::harness::{render_conftest, render_contract_test, test_harness};
use crate::journal::{self, Journal, JournalFile, Line, RequestRecord};
use crate::options::GenerateOptions;
use crate::prompt::{render, task_view};
use crate::protocol::{Action, Event};
use crate::record::{Record, write_profiles};
use crate::repairs::Repairs;
use crate::rundir::{GenerationResult, RunDir};
use crate::session::Session;
use crate::steps::Steps;

/// What the live view shows after each step.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Progress {
    /// Test runs so far.
    pub iteration: u32,
    /// The step about to run (`plan`, `code`, `environment`, `tests`, `run`, `diagnose`, ...).
    pub step: &'static str,
    /// Seconds since the start.
    pub elapsed_seconds: u64,
    /// Tokens so far.
    pub tokens: u64,
    /// Passed and failed tests in the last run.
    pub last_run: Option<(usize, usize)>,
    /// Distributions in the environment.
    pub packages: Vec<String>,
}

/// The packages always installed, and the reader of each sample's format (`pyarrow` for a
/// Parquet or Arrow sample, `openpyxl` for Excel): the script needs them to read its input.
fn base_packages(options: &GenerateOptions, data: &data::DataContext) -> Vec<String> {
    let mut packages = options.base_packages.clone();
    for profile in data.profiles.values() {
        for package in profile.format.python_packages() {
            if !packages.iter().any(|p| p == package) {
                packages.push((*package).to_owned());
            }
        }
    }
    packages
}

/// The session of a request: its limits and base packages, no plan step when the model
/// profile has none (`--no-plan`), and with units (`--units`) a failure on the samples fixed in
/// its unit alone.
fn new_session(options: &GenerateOptions, data: &data::DataContext) -> Session {
    let profile = options.profile();
    let mut session = Session::new(options.limits, &base_packages(options, data));
    if !profile.plan {
        session = session.without_plan();
    }
    if profile.units {
        session = session.fixing_units();
    }
    session
}

/// Generates a tested script. The client should log its conversation into the run directory
/// (`LlmConfig::conversation_log = out_dir/conversation.jsonl`). A generation that ends without
/// passing tests is `Ok` with `success: false`; errors are requests that cannot start, a model
/// that cannot be used, or a sandbox that cannot run.
pub async fn generate(
    options: &GenerateOptions,
    client: &LlmClient,
    progress: &dyn Fn(&Progress),
) -> Result<GenerationResult, LoopError> {
    run(options, client, progress, None).await
}

/// [`generate`] continuing the run its journal recorded (`autocoder resume`): it runs again
/// from the start with every journaled model answer and test run served from the journal, so
/// none is asked or run twice, and goes on from the first step the journal does not have.
/// `options` are the journal's ([`RequestRecord::options`]), with safe overrides at most.
pub async fn resume(
    options: &GenerateOptions,
    client: &LlmClient,
    journal: &JournalFile,
    progress: &dyn Fn(&Progress),
) -> Result<GenerationResult, LoopError> {
    run(options, client, progress, Some(journal)).await
}

/// What the live view shows before `action`.
fn progress_of(session: &Session, action: &Action, started: Instant) -> Progress {
    Progress {
        iteration: session.runs(),
        step: step_name(action),
        elapsed_seconds: started.elapsed().as_secs(),
        tokens: session.tokens(),
        last_run: session
            .last_run()
            .map(|r| (r.passed().count(), r.failures().count())),
        packages: session.packages(),
    }
}

/// The interpreter, as the journal remembers it (a resumed run starts no Python).
async fn probe_interpreter(journal: &Journal, python: &Path) -> Result<Interpreter, LoopError> {
    journal
        .memo("interpreter", &python.display().to_string(), async {
            Interpreter::probe(python).await.map_err(LoopError::from)
        })
        .await
}

/// Journals an event before the session applies it; a test run's line (the whole report) is
/// written by the run itself.
fn journal_event(journal: &Journal, step: &str, event: &Event) -> Result<(), LoopError> {
    // Test runs are journaled as they ran (candidates' by their files).
    if matches!(event, Event::TestsRan(_) | Event::CandidatesTested { .. }) {
        return Ok(());
    }
    journal.record(&Line::Event {
        step: step.to_owned(),
        event: Box::new(event.clone()),
    })?;
    Ok(())
}

/// The session applies `event`, journaled first; a diagnosis' routes are journaled after, and
/// what the run changed on its own (a dropped system package) is logged.
fn apply_journaled(
    journal: &Journal,
    session: &mut Session,
    step: &str,
    event: Event,
) -> Result<(), LoopError> {
    let notes_before = session.notes().len();
    let diagnosed = matches!(event, Event::Diagnosed { .. });
    journal_event(journal, step, &event)?;
    session.apply(event);
    if diagnosed {
        journal_routes(journal, session)?;
    }
    for note in &session.notes()[notes_before..] {
        tracing::warn!("{note}");
    }
    Ok(())
}

/// Journals where the last diagnosis sent each failure.
fn journal_routes(journal: &Journal, session: &Session) -> Result<(), LoopError> {
    if let Some(last) = session.history().last() {
        journal.record(&Line::Routes {
            iteration: last.number,
            routes: last.routes.clone(),
        })?;
    }
    Ok(())
}

async fn run(
    options: &GenerateOptions,
    client: &LlmClient,
    progress: &dyn Fn(&Progress),
    resumed: Option<&JournalFile>,
) -> Result<GenerationResult, LoopError> {
    let started = Instant::now();
    // Everything that can be checked without a model is checked first.
    let contract = options.check()?;
    let prompts = match &options.prompts_dir {
        Some(dir) => Prompts::with_overrides(dir)?,
        None => Prompts::embedded()?,
    };
    let sandbox = Sandbox::new(options.sandbox.backend);
    sandbox.check()?;
    let python_spec = crate::options::python_spec(options.sandbox.python.as_deref()).await?;
    let run_dir = RunDir::create(&options.out_dir)?;
    let (journal, _store) = journal::open(
        &options.out_dir,
        &RequestRecord::new(options, client.config()),
        client,
        resumed,
    )?;
    let interpreter = probe_interpreter(&journal, &python_spec.command()).await?;
    let run_cache = RunCache::new(options);
    let cache = run_cache.cache().clone();

    let data = data::build(
        &contract,
        &options.constraints,
        DataOptions {
            sample_rows: options.sample_rows,
            shown: options.shown,
        },
        Some(client),
    )
    .await?;
    write_profiles(&run_dir, &data.profiles)?;
    let task = task_view(options, &contract, &data);
    let steps = Steps {
        client,
        prompts: &prompts,
        task: &task,
        system: render(&prompts, "loop/system.j2", &task, json!({}))?,
        asked: std::sync::Mutex::default(),
    };

    let mut driver = Driver {
        options,
        steps: &steps,
        sandbox: &sandbox,
        cache: &cache,
        interpreter: &interpreter,
        run_dir: &run_dir,
        journal: &journal,
        contract: &contract,
        conftest: render_conftest(&prompts, &contract, options)?,
        where_runner: crate::harness::where_runner(&prompts)?,
        tested: test_harness(&prompts, &contract, options)?,
        contract_test: render_contract_test(
            &prompts,
            &contract,
            &data,
            &task.output_columns,
            &crate::output_order::declared_order(&options.prompt, &contract.outputs),
        )?,
        env: None,
        imports: Vec::new(),
        profile: options.profile(),
        repairs: Repairs {
            slips: options.profile().slip_repairs,
        },
        reports: Vec::new(),
        iteration_tokens: Vec::new(),
        iteration_started: started,
        iteration_seconds: Vec::new(),
        sandbox_retries: Vec::new(),
        python_spec,
    };
    let mut session = new_session(options, &data);
    let finish = loop {
        let action = session.next_action();
        progress(&progress_of(&session, &action, started));
        if let Action::Finish(finish) = action {
            break finish;
        }
        let tokens_before = session.tokens();
        let step = step_name(&action);
        let Some(event) = driver.perform_or_abort(action, &mut session).await? else {
            continue;
        };
        let is_run = matches!(event, Event::TestsRan(_) | Event::CandidatesTested { .. });
        apply_journaled(&journal, &mut session, step, event)?;
        driver.account(session.tokens() - tokens_before, is_run, session.runs());
    };
    journal.record(&Line::Finish {
        finish: finish.clone(),
    })?;

    let record = Record {
        options,
        session: &session,
        data: &data,
        contract: &contract,
        client,
        started,
    };
    record.write(&driver, finish, &run_dir)
}

fn step_name(action: &Action) -> &'static str {
    match action {
        Action::Plan => "plan",
        Action::WriteCode { .. } => "code",
        Action::WriteTests { .. } => "tests",
        Action::PrepareEnvironment { .. } => "environment",
        Action::ReplacePackage { .. } => "replace package",
        Action::ReplaceSystemPackage { .. } => "replace system package",
        Action::RunTests => "run tests",
        Action::WriteCandidates { .. } => "candidates",
        Action::RunCandidates { .. } => "run candidates",
        Action::TrySamples { .. } => "try samples",
        Action::TestCandidates { .. } => "test candidates",
        Action::Diagnose { .. } => "diagnose",
        Action::FixCode { .. } => "fix code",
        Action::FixTests { .. } => "fix tests",
        Action::Finish(_) => "done",
    }
}
