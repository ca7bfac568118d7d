//! Running a suite: each selected task with each seed (seed by seed), one at a time (a local model server has
//! one slot), through the loop's library API; each finished run is scored on its held-out cases
//! and written to `OUT/records/` at once, so an interrupted eval resumes where it stopped.
//!
//! ```text
//! OUT/
//!   eval.json                      the report so far (settings, runs, summaries)
//!   records/<task>.seed-<n>.json   one finished run each; present = not run again
//!   runs/<task>/seed-<n>/          the run directory `autocoder generate` would write
//! ```

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use autocoder_agent::{AgentError, AgentOptions, ToolProtocol, generate_agent};
use autocoder_llm::{LlmClient, LlmConfig, LlmError, ModelCache, ModelCacheMode, ModelSpec};
use autocoder_loop::rundir::GenerationResult;
use autocoder_loop::session::Limits;
use autocoder_loop::{GenerateOptions, LoopError, Progress, Prompting, SandboxOptions, generate};
use serde::Serialize;

use crate::error::EvalError;
use crate::report::{EvalReport, RunRecord};
use crate::score::{score_generated, score_tried};
use crate::suite::{Suite, Task};
use crate::verdicts::check_verdicts;

/// What to run and how.
#[derive(Debug, Clone)]
pub struct EvalOptions {
    /// The model's client settings; each run gets its own seed and conversation log.
    pub llm: LlmConfig,
    /// The model as the user named it (`openai/qwen2.5-coder-1.5b-instruct`).
    pub model: String,
    /// One run per task and seed.
    pub seeds: Vec<u64>,
    /// Task names to run (empty: all).
    pub tasks: Vec<String>,
    /// Test runs per generation at most.
    pub max_iterations: u32,
    /// Write and run no tests: score each run's first script (`--skip-tests`).
    pub skip_tests: bool,
    /// Tokens per generation at most.
    pub token_budget: Option<u64>,
    /// Wall-clock limit of one generation.
    pub task_timeout: Duration,
    /// Where records, run directories and `eval.json` go.
    pub out_dir: PathBuf,
    /// The sandbox for generations and scoring.
    pub sandbox: SandboxOptions,
    /// How the prompts are shaped (code in fences, the model profile, what the test writer
    /// sees, traced values, units, no plan), as for `generate`.
    pub prompting: Prompting,
    /// Scripts written per new version of the code (`--candidates`).
    pub candidates: u32,
    /// Code fixes for a script that fails on the samples before its tests (`--sample-fixes`).
    pub sample_fixes: u32,
    /// Sample rows shown per dataset.
    pub sample_rows: usize,
    /// Prompt templates overriding the built-in ones.
    pub prompts_dir: Option<PathBuf>,
    /// Generate with the tool-using agent instead of the pipeline (`--agent`).
    pub agent: Option<AgentSettings>,
    /// The model-call cache (`--model-cache`): off by default, so that each run asks the model.
    /// With `auto`, two evals that make a request word for word (a change's before and after
    /// arms, up to the first prompt the change alters) get the same answer, so their runs part
    /// only where the change does.
    pub model_cache: ModelCacheMode,
    /// Where the model-call cache is; `None`: its usual place ([`ModelCache::default_dir`]).
    pub model_cache_dir: Option<PathBuf>,
}

/// How the agent runs when an eval generates with it; everything else comes from the eval's
/// options (the task timeout is the agent's run timeout, the token budget its budget).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AgentSettings {
    /// Model turns at most.
    pub max_turns: u32,
    /// How tools reach the model; `None`: the default for the model and server.
    pub protocol: Option<ToolProtocol>,
}

/// The agent's settings as `eval.json` keeps them.
#[derive(Debug, Serialize)]
struct AgentSettingsRecord {
    max_turns: u32,
    protocol: &'static str,
}

/// The settings that must not change between an eval and its resumption.
#[derive(Debug, Serialize)]
struct Settings<'a> {
    model: &'a str,
    api_base: Option<&'a str>,
    params: &'a autocoder_llm::CallParams,
    max_iterations: u32,
    /// Absent when off, so evals written before it existed resume unchanged.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    skip_tests: bool,
    token_budget: Option<u64>,
    task_timeout_seconds: u64,
    /// `tests_see_code` and `code_in_fences` always; `trace_values`, `units`, `queries`,
    /// `no_plan` and `model_profile` only when set, so evals written before they existed resume unchanged.
    #[serde(flatten)]
    prompting: &'a Prompting,
    /// Absent at 1, so evals written before it existed resume unchanged.
    #[serde(skip_serializing_if = "is_one")]
    candidates: u32,
    /// Absent at 0, so evals written before it existed resume unchanged.
    #[serde(skip_serializing_if = "is_zero")]
    sample_fixes: u32,
    sample_rows: usize,
    prompts_dir: Option<&'a Path>,
    sandbox: &'static str,
    /// Absent for the pipeline, so evals written before agent mode resume unchanged.
    #[serde(skip_serializing_if = "Option::is_none")]
    agent: Option<AgentSettingsRecord>,
    /// Absent when off, so evals written before it existed resume unchanged.
    #[serde(skip_serializing_if = "is_off")]
    model_cache: &'static str,
}

fn is_off(mode: &&'static str) -> bool {
    *mode == ModelCacheMode::Off.name()
}

#[allow(clippy::trivially_copy_pass_by_ref)] // serde's skip_serializing_if passes a reference
fn is_one(value: &u32) -> bool {
    *value == 1
}

#[allow(clippy::trivially_copy_pass_by_ref)] // serde's skip_serializing_if passes a reference
fn is_zero(value: &u32) -> bool {
    *value == 0
}

impl EvalOptions {
    fn settings(&self) -> serde_json::Value {
        let mut params = self.llm.params.clone();
        params.seed = None; // the seeds are the runs, not a setting
        serde_json::to_value(Settings {
            model: &self.model,
            api_base: self.llm.api_base.as_deref(),
            params: &params,
            max_iterations: self.max_iterations,
            skip_tests: self.skip_tests,
            token_budget: self.token_budget,
            task_timeout_seconds: self.task_timeout.as_secs(),
            prompting: &self.prompting,
            candidates: self.candidates,
            sample_fixes: self.sample_fixes,
            sample_rows: self.sample_rows,
            prompts_dir: self.prompts_dir.as_deref(),
            sandbox: self.sandbox.backend.name(),
            model_cache: self.model_cache.name(),
            agent: self.agent.map(|a| AgentSettingsRecord {
                max_turns: a.max_turns,
                protocol: self.agent_protocol(a).name(),
            }),
        })
        .unwrap_or_default()
    }

    /// The protocol the agent uses: the one named, else the default for the model and server.
    fn agent_protocol(&self, agent: AgentSettings) -> ToolProtocol {
        agent
            .protocol
            .unwrap_or_else(|| match ModelSpec::parse(&self.model) {
                Ok(model) => ToolProtocol::default_for(&model, self.llm.api_base.as_deref()),
                Err(_) => ToolProtocol::Native,
            })
    }

    /// The agent's options for one task's request.
    fn agent_options(
        &self,
        agent: AgentSettings,
        request: GenerateOptions,
    ) -> Result<AgentOptions, LlmError> {
        let model = ModelSpec::parse(&self.model)?;
        let mut options = AgentOptions::new(request, &model, self.llm.api_base.as_deref());
        options.max_turns = agent.max_turns;
        options.protocol = self.agent_protocol(agent);
        options.run_timeout = self.task_timeout;
        Ok(options)
    }
}

/// Why a generation ended without a result.
#[derive(Debug, thiserror::Error)]
enum GenerationError {
    #[error(transparent)]
    Loop(#[from] LoopError),
    #[error(transparent)]
    Agent(#[from] AgentError),
}

impl GenerationError {
    /// Errors that say nothing about the model's work: no server, no key, a rejected key, an
    /// unknown model or a bad configuration.
    fn unusable_model(&self) -> bool {
        let (Self::Loop(LoopError::Model(llm))
        | Self::Agent(AgentError::Llm(llm) | AgentError::Loop(LoopError::Model(llm)))) = self
        else {
            return false;
        };
        matches!(
            llm,
            LlmError::Transport { .. }
                | LlmError::MissingApiKey { .. }
                | LlmError::Auth { .. }
                | LlmError::UnknownModel { .. }
                | LlmError::InvalidConfig(_)
        )
    }

    fn into_eval_error(self) -> EvalError {
        match self {
            Self::Loop(e) => EvalError::Loop(e),
            Self::Agent(e) => EvalError::Agent(Box::new(e)),
        }
    }
}

/// What the eval is doing, for a progress display.
#[derive(Debug)]
pub enum EvalEvent<'a> {
    /// A run starts (`index` counts from 1 over the runs still to do).
    Started {
        /// The task.
        task: &'a str,
        /// The seed.
        seed: u64,
        /// This run's place.
        index: usize,
        /// Runs to do.
        total: usize,
    },
    /// A run finished earlier is kept.
    Kept(&'a RunRecord),
    /// The loop reports progress.
    Progress(&'a Progress),
    /// The generation ended; its script is being run on the held-out cases.
    Scoring,
    /// A run finished and was scored.
    Finished(&'a RunRecord),
}

/// What `task` asks for, as a generation request with every setting at its default.
pub(crate) fn task_request(task: &Task) -> GenerateOptions {
    GenerateOptions {
        prompt: task.spec.prompt.clone(),
        schema_text: task.spec.schema.clone(),
        constraints: task.spec.constraints.clone(),
        samples: task.samples(),
        inputs: task.inputs.clone(),
        sample_args: task.spec.sample_args.clone(),
        outputs: task.outputs.clone(),
        ..GenerateOptions::default()
    }
}

/// The generation request of `task` as the eval's `options` make it, run in `run_dir`.
fn generate_options(task: &Task, options: &EvalOptions, run_dir: &Path) -> GenerateOptions {
    GenerateOptions {
        system_prompt: None,
        base_packages: Vec::new(),
        sample_rows: options.sample_rows,
        limits: Limits {
            max_iterations: options.max_iterations,
            token_budget: options.token_budget,
            skip_tests: options.skip_tests,
            candidates: options.candidates,
            sample_fixes: options.sample_fixes,
        },
        out_dir: run_dir.to_path_buf(),
        sandbox: options.sandbox.clone(),
        prompts_dir: options.prompts_dir.clone(),
        prompting: options.prompting.clone(),
        model: options.model.clone(),
        ..task_request(task)
    }
}

/// Runs every selected task with every seed not already finished in `options.out_dir`, and
/// returns the report of all finished runs (`eval.json`, also written after each run).
pub async fn run_suite(
    suite: &Suite,
    options: &EvalOptions,
    on_event: &(dyn Fn(&EvalEvent<'_>) + Sync),
) -> Result<EvalReport, EvalError> {
    let tasks = suite.select(&options.tasks)?;
    let settings = options.settings();
    let records_dir = options.out_dir.join("records");
    std::fs::create_dir_all(&records_dir).map_err(EvalError::io(&records_dir))?;
    let _lock = lock_out_dir(&options.out_dir)?;
    check_settings(&options.out_dir.join("eval.json"), &settings)?;
    let mut records = read_records(&records_dir)?;
    let mut todo = Vec::new();
    // Seed by seed, so an eval stopped early has whole rounds over the tasks.
    for &seed in &options.seeds {
        for task in &tasks {
            match records
                .iter()
                .find(|r| r.task == task.name && r.seed == seed)
            {
                Some(kept) => on_event(&EvalEvent::Kept(kept)),
                None => todo.push((*task, seed)),
            }
        }
    }
    write_report(
        &options.out_dir,
        &EvalReport::new(settings.clone(), records.clone()),
    )?;
    let total = todo.len();
    for (index, (task, seed)) in todo.into_iter().enumerate() {
        on_event(&EvalEvent::Started {
            task: &task.name,
            seed,
            index: index + 1,
            total,
        });
        let record = Box::pin(run_one(task, seed, options, on_event)).await?;
        write_json(&record_path(&records_dir, &task.name, seed), &record)?;
        on_event(&EvalEvent::Finished(&record));
        records.push(record);
        write_report(
            &options.out_dir,
            &EvalReport::new(settings.clone(), records.clone()),
        )?;
    }
    // The report covers every finished run in the directory; the selection decides what runs.
    Ok(EvalReport::new(settings, records))
}

async fn run_one(
    task: &Task,
    seed: u64,
    options: &EvalOptions,
    on_event: &(dyn Fn(&EvalEvent<'_>) + Sync),
) -> Result<RunRecord, EvalError> {
    let run_dir = options
        .out_dir
        .join("runs")
        .join(&task.name)
        .join(format!("seed-{seed}"));
    if run_dir.exists() {
        // An unfinished run from an interrupted eval: start it again from scratch.
        std::fs::remove_dir_all(&run_dir).map_err(EvalError::io(&run_dir))?;
    }
    let mut config = options.llm.clone();
    config.params.seed = Some(seed);
    config.conversation_log = Some(run_dir.join("conversation.jsonl"));
    config.prompts_dir.clone_from(&options.prompts_dir);
    let client = LlmClient::new(config)?;
    if options.model_cache != ModelCacheMode::Off {
        let dir = options
            .model_cache_dir
            .clone()
            .unwrap_or_else(ModelCache::default_dir);
        let cache = ModelCache::new(dir, options.model_cache, client.endpoint());
        client.add_store(std::sync::Arc::new(cache));
    }
    let generate_options = generate_options(task, options, &run_dir);
    let started = Instant::now();
    let progress = |p: &Progress| on_event(&EvalEvent::Progress(p));
    let generation = async {
        let result: Result<GenerationResult, GenerationError> = match options.agent {
            None => Ok(generate(&generate_options, &client, &progress).await?),
            Some(agent) => {
                let agent_options = options
                    .agent_options(agent, generate_options.clone())
                    .map_err(|e| GenerationError::Loop(LoopError::Model(e)))?;
                Ok(generate_agent(&agent_options, &client, &progress).await?)
            }
        };
        result
    };
    let outcome = tokio::time::timeout(options.task_timeout, generation).await;
    let seconds = started.elapsed().as_secs_f64();
    let mut record = RunRecord {
        task: task.name.clone(),
        split: task.split,
        seed,
        generated: false,
        reason: String::new(),
        timed_out: false,
        test_runs: 0,
        model_calls: 0,
        input_tokens: 0,
        output_tokens: 0,
        cached_tokens: None,
        seconds,
        cases: Vec::new(),
        tried: Vec::new(),
        verdicts: Vec::new(),
    };
    match outcome {
        Err(_) => {
            record.timed_out = true;
            record.reason = format!("no result within {} s", options.task_timeout.as_secs());
            spent_so_far(&mut record, &run_dir);
        }
        // The model could not be used at all: not the model's failure, so no record is kept
        // (running the eval again runs the task) and the eval stops with the reason.
        Ok(Err(err)) if err.unusable_model() => return Err(err.into_eval_error()),
        Ok(Err(err)) => {
            record.reason = format!("error: {err}");
            spent_so_far(&mut record, &run_dir);
        }
        Ok(Ok(result)) => {
            record.generated = result.success;
            record.reason.clone_from(&result.reason);
            record.test_runs = result.attempts;
            record.model_calls = result.model_calls;
            record.input_tokens = result.tokens.input_tokens;
            record.output_tokens = result.tokens.output_tokens;
            record.cached_tokens = Some(result.tokens.cached_input_tokens);
            if run_dir.join("solution.py").is_file() {
                on_event(&EvalEvent::Scoring);
                record.cases = score_generated(task, &run_dir, &options.sandbox).await?;
                record.tried = score_tried(task, &run_dir, &record.cases, &options.sandbox).await?;
                record.verdicts = check_verdicts(task, &run_dir, &options.sandbox).await?;
            }
        }
    }
    Ok(record)
}

/// What a run that ended without a result (an error, the task timeout) had spent: its journal
/// holds every model answer and test run so far. Nothing when there is no journal.
fn spent_so_far(record: &mut RunRecord, run_dir: &Path) {
    let Ok(journal) = autocoder_loop::journal::read(run_dir) else {
        return;
    };
    let usage = journal.usage();
    record.test_runs = u32::try_from(journal.test_runs()).unwrap_or(u32::MAX);
    record.model_calls = u32::try_from(journal.model_answers()).unwrap_or(u32::MAX);
    record.input_tokens = usage.input_tokens;
    record.output_tokens = usage.output_tokens;
    record.cached_tokens = Some(usage.cached_input_tokens);
}

fn record_path(dir: &Path, task: &str, seed: u64) -> PathBuf {
    dir.join(format!("{task}.seed-{seed}.json"))
}

fn read_records(dir: &Path) -> Result<Vec<RunRecord>, EvalError> {
    let mut records = Vec::new();
    let entries = std::fs::read_dir(dir).map_err(EvalError::io(dir))?;
    for entry in entries {
        let path = entry.map_err(EvalError::io(dir))?.path();
        if path.extension().is_some_and(|e| e == "json") {
            let text = std::fs::read_to_string(&path).map_err(EvalError::io(&path))?;
            let record = serde_json::from_str(&text).map_err(|source| EvalError::Json {
                path: path.clone(),
                source,
            })?;
            records.push(record);
        }
    }
    Ok(records)
}

/// How long a held lock is waited for before the directory is called busy: a lock just
/// released can still be held for a moment by a process another thread forked before it was
/// released (the descriptor is closed only when that process runs its program), as the second
/// eval of a resumed run found in CI. Another eval really writing holds it for minutes.
const LOCK_WAIT: Duration = Duration::from_secs(2);

/// Takes the output directory for this eval until the returned file is dropped: a second eval
/// into the same directory would mix its runs with this one's, or remove them.
fn lock_out_dir(out_dir: &Path) -> Result<std::fs::File, EvalError> {
    lock_out_dir_within(out_dir, LOCK_WAIT)
}

fn lock_out_dir_within(out_dir: &Path, wait: Duration) -> Result<std::fs::File, EvalError> {
    let lock = out_dir.join(".eval.lock");
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock)
        .map_err(EvalError::io(&lock))?;
    let until = Instant::now() + wait;
    loop {
        match rustix::fs::flock(&file, rustix::fs::FlockOperation::NonBlockingLockExclusive) {
            Ok(()) => return Ok(file),
            Err(rustix::io::Errno::WOULDBLOCK) if Instant::now() < until => {
                std::thread::sleep(Duration::from_millis(50));
            }
            Err(rustix::io::Errno::WOULDBLOCK) => {
                return Err(EvalError::Busy {
                    dir: out_dir.to_path_buf(),
                    lock,
                });
            }
            Err(errno) => {
                return Err(EvalError::Io {
                    path: lock,
                    source: errno.into(),
                });
            }
        }
    }
}

/// Refuses to resume into a directory whose `eval.json` used other settings.
fn check_settings(path: &Path, settings: &serde_json::Value) -> Result<(), EvalError> {
    let Ok(text) = std::fs::read_to_string(path) else {
        return Ok(());
    };
    let old: EvalReport = serde_json::from_str(&text).map_err(|source| EvalError::Json {
        path: path.to_path_buf(),
        source,
    })?;
    if &old.settings == settings {
        return Ok(());
    }
    let difference = match (old.settings.as_object(), settings.as_object()) {
        // A setting present on one side only (`agent`) differs too.
        (Some(a), Some(b)) => a
            .keys()
            .chain(b.keys())
            .find(|k| a.get(*k) != b.get(*k))
            .map(|k| {
                format!(
                    "{k}: was {}, now {}",
                    a.get(k).cloned().unwrap_or_default(),
                    b.get(k).cloned().unwrap_or_default()
                )
            }),
        _ => None,
    };
    Err(EvalError::SettingsChanged {
        path: path.to_path_buf(),
        difference: difference.unwrap_or_else(|| "settings".to_owned()),
    })
}

fn write_report(out_dir: &Path, report: &EvalReport) -> Result<(), EvalError> {
    write_json(&out_dir.join("eval.json"), report)
}

/// Writes `value` to `path` atomically (a temporary file renamed), so a killed eval never
/// leaves half a record.
fn write_json(path: &Path, value: &impl Serialize) -> Result<(), EvalError> {
    let text = serde_json::to_string_pretty(value).map_err(|source| EvalError::Json {
        path: path.to_path_buf(),
        source,
    })?;
    let tmp = path.with_extension("json.tmp");
    std::fs::write(&tmp, text + "\n").map_err(EvalError::io(&tmp))?;
    std::fs::rename(&tmp, path).map_err(EvalError::io(path))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A lock released while it is waited for is taken; one held throughout makes the
    /// directory busy.
    #[test]
    fn a_lock_released_within_the_wait_is_taken_and_one_held_is_busy() {
        let dir = tempfile::tempdir().unwrap();
        let held = lock_out_dir_within(dir.path(), Duration::ZERO).unwrap();
        let err = lock_out_dir_within(dir.path(), Duration::from_millis(100)).unwrap_err();
        assert!(matches!(err, EvalError::Busy { .. }), "{err}");
        let release = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(200));
            drop(held);
        });
        assert!(lock_out_dir_within(dir.path(), Duration::from_secs(5)).is_ok());
        release.join().unwrap();
    }

    /// `eval.json` keeps the prompt-shaping settings flat: `tests_see_code` and
    /// `code_in_fences` always, the others (and `sample_fixes`) only when set.
    #[test]
    fn prompting_settings_are_flat_and_the_later_ones_absent_when_off() {
        let mut options = EvalOptions {
            llm: LlmConfig::new(ModelSpec::parse("openai/m").unwrap()),
            model: "openai/m".into(),
            seeds: vec![1],
            tasks: Vec::new(),
            max_iterations: 10,
            skip_tests: false,
            token_budget: None,
            task_timeout: Duration::from_secs(60),
            out_dir: PathBuf::from("out"),
            sandbox: SandboxOptions::default(),
            prompting: Prompting::default(),
            candidates: 1,
            sample_fixes: 0,
            sample_rows: 20,
            prompts_dir: None,
            agent: None,
            model_cache: ModelCacheMode::Off,
            model_cache_dir: None,
        };
        let later = [
            "trace_values",
            "units",
            "queries",
            "no_plan",
            "model_profile",
            "sample_fixes",
        ];
        let settings = options.settings();
        assert_eq!(settings["tests_see_code"], false);
        assert_eq!(settings["code_in_fences"], false);
        assert!(
            later.iter().all(|k| settings.get(k).is_none()),
            "{settings}"
        );
        assert!(settings.get("prompting").is_none(), "{settings}");
        options.prompting.units = true;
        options.prompting.queries = Some(false);
        options.prompting.model_profile = Some(autocoder_loop::ProfileName::Small);
        options.sample_fixes = 2;
        let settings = options.settings();
        assert_eq!(settings["units"], true);
        assert_eq!(settings["queries"], false);
        assert_eq!(settings["sample_fixes"], 2);
        assert_eq!(settings["model_profile"], "small");
        assert!(settings.get("no_plan").is_none(), "{settings}");
        assert!(settings.get("model_cache").is_none(), "{settings}");
        options.model_cache = ModelCacheMode::Auto;
        assert_eq!(options.settings()["model_cache"], "auto");
    }
}
