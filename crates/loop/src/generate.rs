//! The driver: runs a [`Session`] against the real model and the real sandbox, and writes the
//! run directory. Everything it decides comes from the session; everything it says comes from
//! the templates.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::Instant;

use autocoder_llm::{LlmClient, LlmError};
use autocoder_prompts::Prompts;
use autocoder_sandbox::{
    Backend, Env, EnvCache, EnvSpec, ImportAnalysis, Input as SandboxInput, Interpreter, Outcome,
    PytestSpec, Sandbox, SandboxError, SourceFile, TestReport, Value as SandboxValue,
    imports_to_packages,
};
use serde_json::json;

use crate::LoopError;
use crate::answers::strip_code_fence;
use crate::data::{self, DataOptions};
use crate::edit::apply_edits;
use crate::env_cache::RunCache;
use crate::installable::keep_installable;
use crate::journal::{self, Journal, JournalFile, Line, RequestRecord};
use crate::options::{CacheMode, GenerateOptions};
use crate::outcome_cache::run_pytest_or_reuse;
use crate::prompt::{TaskView, render};
use crate::protocol::{Action, Edit, Event, RoutedFailure, TestOutcome, TestResult, TestRun};
use crate::reclassify::mask_addresses;
use crate::repairs::Repairs;
use crate::request::{Contract, IoType, OUTPUTS_DIR};
use crate::retry::retrying;
use crate::rundir::{
    EnvironmentRecord, GenerationResult, IterationRecord, RESULT_FORMAT_VERSION, RunDir, StepUsage,
};
use crate::session::{CONTRACT_TEST_FILE, Session};
use crate::splice::{function_name, function_source};
use crate::steps::{FAILURE_OUTPUT_LIMIT, Steps, tail};
use crate::vet::code::FixAnswer;
use crate::vet::test_file::TestFileContext;
use crate::vet::{self, SentBack, Verdict};

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
    if matches!(event, Event::TestsRan(_)) {
        return Ok(());
    }
    journal.record(&Line::Event {
        step: step.to_owned(),
        event: Box::new(event.clone()),
    })?;
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
        contract_test: render_contract_test(&prompts, &contract, &data.row_keys)?,
        env: None,
        imports: Vec::new(),
        profile: options.profile(),
        repairs: Repairs {
            slips: options.profile().slip_repairs,
        },
        last_report: None,
        iteration_tokens: Vec::new(),
        iteration_started: started,
        iteration_seconds: Vec::new(),
        sandbox_retries: Vec::new(),
        python_spec,
    };
    let mut session = Session::new(options.limits, &base_packages(options, &data));
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
        let notes_before = session.notes().len();
        let is_run = matches!(event, Event::TestsRan(_));
        let diagnosed = matches!(event, Event::Diagnosed { .. });
        journal_event(&journal, step, &event)?;
        session.apply(event);
        if diagnosed {
            journal_routes(&journal, &session)?;
        }
        for note in &session.notes()[notes_before..] {
            tracing::warn!("{note}");
        }
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

/// `profiles/<name>.json` for each sample, and `report.html` with all of them on one page.
fn write_profiles(
    run_dir: &RunDir,
    profiles: &std::collections::BTreeMap<String, autocoder_profile::Profile>,
) -> Result<(), LoopError> {
    for (name, profile) in profiles {
        let json = serde_json::to_vec_pretty(profile).unwrap_or_default();
        run_dir.write(&format!("profiles/{name}.json"), &json)?;
    }
    if !profiles.is_empty() {
        let datasets: Vec<(&str, &autocoder_profile::Profile)> = profiles
            .iter()
            .map(|(name, profile)| (name.as_str(), profile))
            .collect();
        let names: Vec<&str> = datasets.iter().map(|(name, _)| *name).collect();
        let title = format!("Samples: {}", names.join(", "));
        let page = autocoder_report::html_many(&title, &datasets);
        run_dir.write("report.html", page.as_bytes())?;
    }
    Ok(())
}

/// What the result document is made from.
struct Record<'a> {
    options: &'a GenerateOptions,
    session: &'a Session,
    data: &'a data::DataContext,
    contract: &'a Contract,
    client: &'a LlmClient,
    started: Instant,
}

impl Record<'_> {
    fn write(
        &self,
        driver: &Driver<'_>,
        finish: crate::protocol::Finish,
        run_dir: &RunDir,
    ) -> Result<GenerationResult, LoopError> {
        let Record {
            options,
            session,
            data,
            contract,
            client,
            started,
        } = self;
        let history = session.history();
        let iterations: Vec<IterationRecord> = history
            .iter()
            .enumerate()
            .map(|(i, iteration)| IterationRecord {
                number: iteration.number,
                passed: iteration.passed,
                failed: iteration.failed,
                error_types: iteration
                    .routes
                    .iter()
                    .map(|r| (r.test_id.clone(), r.kind.name().to_owned()))
                    .collect(),
                changes: iteration.changes.clone(),
                tokens: driver.iteration_tokens.get(i).copied().unwrap_or(0),
                seconds: driver.iteration_seconds.get(i).copied().unwrap_or(0.0),
            })
            .collect();
        for (iteration, record) in history.iter().zip(&iterations) {
            let dir = format!("iterations/{}", iteration.number);
            let routes = serde_json::to_vec_pretty(&iteration.routes).unwrap_or_default();
            run_dir.write(&format!("{dir}/routes.json"), &routes)?;
            let changes = serde_json::to_vec_pretty(&record.changes).unwrap_or_default();
            run_dir.write(&format!("{dir}/changes.json"), &changes)?;
        }
        let total = client.usage_total();
        let report = driver.last_report.as_ref();
        let result = GenerationResult {
            format_version: RESULT_FORMAT_VERSION,
            success: finish.success,
            reason: finish.reason,
            error: finish.error,
            model: options.model.clone(),
            name: options.name.clone(),
            plan: session.plan().cloned(),
            solution: session.code().unwrap_or_default().to_owned(),
            tests: session.tests().unwrap_or_default().to_owned(),
            test_output: report
                .map(|r| format!("{}{}", r.stdout, r.stderr))
                .unwrap_or_default(),
            exit_code: report.and_then(|r| r.exit_code),
            attempts: session.runs(),
            packages: session.packages(),
            system_packages: session.system_packages(),
            notes: session.notes().to_vec(),
            environment: environment_record(options, driver),
            schemas: data.schemas.clone(),
            data_context: data.text(),
            inputs: contract.inputs.clone(),
            outputs: contract.outputs.clone(),
            samples: options
                .samples
                .iter()
                .map(|s| (s.name.clone(), absolute(&s.path)))
                .collect(),
            tokens: crate::protocol::Usage {
                input_tokens: total.usage.input_tokens,
                output_tokens: total.usage.output_tokens,
                cached_input_tokens: total.usage.cached_input_tokens,
            },
            model_calls: u32::try_from(total.calls).unwrap_or(u32::MAX),
            steps: usage_by_step(client),
            seconds: started.elapsed().as_secs_f64(),
            iterations,
            sandbox_retries: driver.sandbox_retries.clone(),
            tool_calls: None,
            agent_plan: None,
        };
        run_dir.write("conftest.py", driver.conftest.as_bytes())?;
        if let Some(test) = &driver.contract_test {
            run_dir.write(CONTRACT_TEST_FILE, test.as_bytes())?;
        }
        run_dir.write_result(&result)?;
        Ok(result)
    }
}

/// The environment part of `result.json`: backend, id, image, resolved versions, interpreter,
/// recorded variables and the names (never the values) of secrets.
fn environment_record(options: &GenerateOptions, driver: &Driver<'_>) -> EnvironmentRecord {
    EnvironmentRecord {
        backend: options.sandbox.backend.name().to_owned(),
        id: driver.env.as_ref().map(|e| e.id.to_string()),
        image: driver
            .env
            .as_ref()
            .filter(|_| options.sandbox.backend == Backend::Docker)
            .map(autocoder_sandbox::docker_image_for),
        resolved: driver
            .env
            .as_ref()
            .map(|e| e.resolved.clone())
            .unwrap_or_default(),
        python: options.sandbox.python.clone(),
        env: options.sandbox.env_vars.iter().cloned().collect(),
        secrets: options
            .sandbox
            .secrets
            .iter()
            .map(|s| s.name.clone())
            .collect(),
    }
}

/// The client's exact per-step totals, as `result.json` records them.
pub(crate) fn usage_by_step(client: &LlmClient) -> BTreeMap<String, StepUsage> {
    client
        .usage_by_step()
        .into_iter()
        .map(|(step, total)| {
            let usage = StepUsage {
                calls: total.calls,
                input_tokens: total.usage.input_tokens,
                output_tokens: total.usage.output_tokens,
                cached_input_tokens: total.usage.cached_input_tokens,
                seconds: total.latency.as_secs_f64(),
            };
            (step, usage)
        })
        .collect()
}

fn absolute(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_owned())
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
        Action::Diagnose { .. } => "diagnose",
        Action::FixCode { .. } => "fix code",
        Action::FixTests { .. } => "fix tests",
        Action::Finish(_) => "done",
    }
}

pub(crate) fn render_conftest(
    prompts: &Prompts,
    contract: &Contract,
    options: &GenerateOptions,
) -> Result<String, LoopError> {
    let defaults: BTreeMap<&str, &str> = contract
        .inputs
        .iter()
        .filter_map(|i| Some((i.name.as_str(), i.mount.as_deref()?)))
        .collect();
    let timeout = options.sandbox.limits.wall_timeout.as_secs().max(1);
    render_conftest_at(prompts, contract, timeout, OUTPUTS_DIR, &defaults)
}

/// `conftest.py` for a script whose outputs go to `outputs_dir` and whose inputs default to
/// `defaults` (name -> path), runs cut at `timeout` seconds.
pub(crate) fn render_conftest_at(
    prompts: &Prompts,
    contract: &Contract,
    timeout: u64,
    outputs_dir: &str,
    defaults: &BTreeMap<&str, &str>,
) -> Result<String, LoopError> {
    let output_types: BTreeMap<&str, &str> = contract
        .outputs
        .iter()
        .map(|o| (o.name.as_str(), o.ty.name()))
        .collect();
    let input_names: Vec<&str> = contract.inputs.iter().map(|i| i.name.as_str()).collect();
    Ok(prompts.render(
        "harness/conftest.py.j2",
        json!({
            "outputs_dir": outputs_dir,
            "timeout_seconds": timeout,
            "output_types": output_types,
            "default_arguments": defaults,
            "input_names": input_names,
        }),
    )?)
}

/// The harness's own test (`test_contract.py`): the script runs on the samples with no
/// arguments and writes every declared output with its type. Only when every input has a
/// sample to default to (a required scalar has no value to run with). Each "one row per key"
/// rule adds a test that counts the key in the sample and in the CSV written from it.
pub(crate) fn render_contract_test(
    prompts: &Prompts,
    contract: &Contract,
    row_keys: &[crate::RowKey],
) -> Result<Option<String>, LoopError> {
    if contract.inputs.iter().any(|i| i.mount.is_none()) {
        return Ok(None);
    }
    Ok(Some(prompts.render(
        "harness/test_contract.py.j2",
        json!({"outputs_dir": OUTPUTS_DIR, "row_keys": row_keys}),
    )?))
}

/// Scripts up to this many lines are fixed by asking for the whole script rather than edits.
const WHOLE_SCRIPT_LINES: usize = 80;
/// Characters of the script shown when asking for a Debian package in place of a missing one.
const REPLACEMENT_CODE_CHARS: usize = 1_500;

/// What a test computes its expected values from, as the test shape (`templates/loop/tests.j2`)
/// names them: the rows of each sample with rows (`orders_rows`), then the lines of each file
/// input without (`log_lines`).
fn expected_value_sources(task: &TaskView) -> Vec<String> {
    let tabular: Vec<&str> = task
        .datasets
        .iter()
        .filter(|d| !d.first_lines.is_empty())
        .map(|d| d.name.as_str())
        .collect();
    let line_files = task
        .inputs
        .iter()
        .filter(|i| i.ty == IoType::File && !tabular.contains(&i.name.as_str()))
        .map(|i| format!("{}_lines", i.name));
    tabular
        .iter()
        .map(|name| format!("{name}_rows"))
        .chain(line_files)
        .collect()
}

/// An answer to a writing step that stayed unusable after the client's repair (cut off at the
/// token limit, not JSON) is asked for once more with the reason ([`vet::unusable`]); `None`
/// means "ask again".
fn again_if_unusable<T>(
    answer: Result<T, LoopError>,
    prompts: &Prompts,
    sent_back: &mut SentBack,
    notes: &mut Vec<String>,
) -> Result<Option<T>, LoopError> {
    let err = match answer {
        Ok(answer) => return Ok(Some(answer)),
        Err(err) => err,
    };
    let LoopError::Model(LlmError::InvalidStructuredOutput { error, .. }) = &err else {
        return Err(err);
    };
    match vet::unusable(error, sent_back) {
        Verdict::AskAgain(note) => {
            tracing::info!(%error, "the answer was unusable; asking once more");
            notes.push(note.render(prompts)?);
            Ok(None)
        }
        Verdict::Accept(()) => Err(err),
    }
}

struct Driver<'a> {
    options: &'a GenerateOptions,
    steps: &'a Steps<'a>,
    sandbox: &'a Sandbox,
    cache: &'a EnvCache,
    interpreter: &'a Interpreter,
    run_dir: &'a RunDir,
    journal: &'a Journal,
    contract: &'a Contract,
    conftest: String,
    contract_test: Option<String>,
    env: Option<Env>,
    imports: Vec<String>,
    /// What the model gets that is specific to its kind.
    profile: crate::ModelProfile,
    /// The repairs its code gets.
    repairs: Repairs,
    last_report: Option<TestReport>,
    iteration_tokens: Vec<u64>,
    iteration_started: Instant,
    iteration_seconds: Vec<f64>,
    /// Sandbox steps tried again (`--sandbox-retries`).
    sandbox_retries: Vec<crate::rundir::SandboxRetry>,
    /// The interpreter environments are built on.
    python_spec: autocoder_sandbox::PythonSpec,
}

impl Driver<'_> {
    /// The imports of `code` and the distributions they need (journaled: a resumed run does
    /// not start Python again for a version of the script it analysed before).
    async fn imports(&self, code: &str, local: &[&str]) -> Result<ImportAnalysis, LoopError> {
        let python = &self.interpreter.executable;
        let mut parts = vec![python.to_str().unwrap_or_default(), code];
        parts.extend_from_slice(local);
        let key = crate::journal::digest(&parts);
        self.journal
            .memo("imports", &key, async {
                Ok::<_, LoopError>(imports_to_packages(python, code, local).await?)
            })
            .await
    }

    /// Tokens and time are booked to the iteration of the test run that precedes them.
    fn account(&mut self, tokens: u64, is_run: bool, runs: u32) {
        if is_run {
            self.iteration_tokens.push(0);
            self.iteration_seconds.push(0.0);
            self.iteration_started = Instant::now();
        }
        let index = usize::try_from(runs).unwrap_or(0).saturating_sub(1);
        if let Some(slot) = self.iteration_tokens.get_mut(index) {
            *slot += tokens;
        }
        if let Some(slot) = self.iteration_seconds.get_mut(index) {
            *slot = self.iteration_started.elapsed().as_secs_f64();
        }
    }

    /// [`Driver::perform`]; answers that stayed unusable end the session as a failure instead of
    /// an error, so the run directory still records what happened.
    async fn perform_or_abort(
        &mut self,
        action: Action,
        session: &mut Session,
    ) -> Result<Option<Event>, LoopError> {
        match self.perform(action, session).await {
            Ok(event) => Ok(Some(event)),
            Err(LoopError::Model(
                err @ (LlmError::InvalidStructuredOutput { .. } | LlmError::Rejected { .. }),
            )) => {
                session.abort(format!("the model's answer stayed unusable: {err}"));
                Ok(None)
            }
            Err(err) => Err(err),
        }
    }

    async fn perform(&mut self, action: Action, session: &Session) -> Result<Event, LoopError> {
        let steps = self.steps;
        match action {
            Action::Plan => steps.plan().await,
            Action::WriteCode { notes } => self.write_code(session, notes).await,
            Action::WriteTests { notes } => self.write_tests(session, notes).await,
            Action::PrepareEnvironment {
                packages,
                system_packages,
            } => self.prepare(&packages, &system_packages).await,
            Action::ReplacePackage { package, error } => {
                steps.replace_package(&package, &error, &self.imports).await
            }
            Action::ReplaceSystemPackage {
                package,
                why,
                message,
            } => {
                let code = session.code().unwrap_or_default();
                let head: String = code.chars().take(REPLACEMENT_CODE_CHARS).collect();
                let (replacement, usage) = steps
                    .replace_system_package(&package, &why, &message, &head)
                    .await?;
                Ok(Event::SystemPackageReplaced {
                    package,
                    replacement,
                    why,
                    usage,
                })
            }
            Action::RunTests => self.run_tests(session).await,
            Action::Diagnose { failures, passing } => {
                let failures: Vec<_> = failures
                    .iter()
                    .map(|f| {
                        json!({
                            "test_id": f.test_id,
                            "outcome": outcome_name(f.outcome),
                            "output": tail(&f.output, FAILURE_OUTPUT_LIMIT),
                        })
                    })
                    .collect();
                let history: Vec<_> = session
                    .history()
                    .iter()
                    .rev()
                    .skip(1)
                    .flat_map(|i| i.routes.iter())
                    .map(|r| {
                        json!({"test_id": r.test_id, "kind": r.kind.name(), "fixed_by": fixed_by(r.kind)})
                    })
                    .collect();
                let mut event = steps
                    .diagnose(json!({
                        "code": session.code().unwrap_or_default(),
                        "tests": session.tests().unwrap_or_default(),
                        "packages": session.packages(),
                        "failures": failures,
                        "passing": passing,
                        "history": history,
                    }))
                    .await?;
                if let Event::Diagnosed { diagnoses, .. } = &mut event {
                    keep_installable(&self.interpreter.executable, diagnoses).await?;
                }
                Ok(event)
            }
            Action::FixCode {
                failures,
                passing,
                rejected,
            } => self.fix_code(session, &failures, passing, rejected).await,
            Action::FixTests { failures, rejected } => {
                let tests = session.tests().unwrap_or_default();
                let failures: Vec<_> = failures
                    .iter()
                    .map(|f| {
                        let mut value = routed_json(f);
                        let source = function_source(tests, &function_name(&f.test_id))
                            .unwrap_or_else(|| tests.to_owned());
                        value["source"] = json!(source);
                        value
                    })
                    .collect();
                steps
                    .fix_tests(json!({"failures": failures, "rejected": rejected}))
                    .await
            }
            Action::Finish(_) => Err(LoopError::InvalidRequest(
                "the loop asked to perform Finish".to_owned(),
            )),
        }
    }

    /// The script, asked for once more (quoting the error) when it does not compile: a script
    /// that cannot even be parsed is not worth a test run and a diagnosis.
    async fn write_code(
        &mut self,
        session: &Session,
        mut notes: Vec<String>,
    ) -> Result<Event, LoopError> {
        let plan = session.plan().cloned().unwrap_or_default();
        let prompts = self.steps.prompts;
        let mut sent_back = SentBack::default();
        let mut spent = crate::protocol::Usage::default();
        loop {
            let answer = self.steps.code(&plan, &notes).await;
            let Some((answer, usage)) =
                again_if_unusable(answer, prompts, &mut sent_back, &mut notes)?
            else {
                continue;
            };
            spent += usage;
            let mut answer = answer;
            answer.code = self.repairs.script(answer.code);
            let analysis = self.imports(&answer.code, &["solution"]).await?;
            self.imports = analysis.distributions.iter().cloned().collect();
            if let Verdict::AskAgain(note) =
                vet::code::script(analysis.syntax_error.as_deref(), &mut sent_back)
            {
                tracing::info!(error = ?analysis.syntax_error, "the script does not compile; asking again");
                notes.push(note.render(prompts)?);
                continue;
            }
            let packages = if analysis.syntax_error.is_some() {
                // The parse could not settle the imports: the model's list is all there is.
                answer.packages.clone()
            } else {
                analysis.distributions.into_iter().collect()
            };
            return Ok(Event::CodeWritten {
                code: answer.code,
                packages,
                system_packages: answer.system_packages,
                usage: spent,
            });
        }
    }

    /// The test file, asked for once more when [`vet::test_file`] sends it back (it does not
    /// compile, blind tests import from `solution`, expected values are typed by hand).
    async fn write_tests(
        &mut self,
        session: &Session,
        mut notes: Vec<String>,
    ) -> Result<Event, LoopError> {
        let code = session.code().filter(|_| self.options.tests_see_code);
        let sources = expected_value_sources(self.steps.task);
        let prompts = self.steps.prompts;
        let mut sent_back = SentBack::default();
        let mut spent = crate::protocol::Usage::default();
        loop {
            let answer = self.steps.tests(&notes, code).await;
            let Some(event) = again_if_unusable(answer, prompts, &mut sent_back, &mut notes)?
            else {
                continue;
            };
            let Event::TestsWritten { tests, usage } = event else {
                return Ok(event);
            };
            let tests = self.repairs.tests(tests);
            spent += usage;
            let analysis = self.imports(&tests, &["solution", "conftest"]).await?;
            let context = TestFileContext {
                syntax_error: analysis.syntax_error.as_deref(),
                blind: code.is_none(),
                sources: &sources,
                hand_written_checks: self.profile.hand_written_checks,
            };
            match vet::test_file::test_file(&tests, context, &mut sent_back) {
                Verdict::AskAgain(note) => {
                    tracing::info!(
                        template = note.template,
                        "the tests were sent back; asking again"
                    );
                    notes.push(note.render(prompts)?);
                }
                Verdict::Accept(()) => {
                    return Ok(Event::TestsWritten {
                        tests,
                        usage: spent,
                    });
                }
            }
        }
    }

    /// A code fix: the whole script when it is short, exact edits otherwise. A fix that leaves
    /// the script unparseable goes back once with the error before a test run is spent on it;
    /// imports the fix adds are read from the fixed script, like the first version's.
    async fn fix_code(
        &mut self,
        session: &Session,
        failures: &[RoutedFailure],
        passing: Vec<String>,
        mut rejected: Vec<String>,
    ) -> Result<Event, LoopError> {
        let current = session.code().unwrap_or_default().to_owned();
        let fences = self.steps.task.code_in_fences;
        let whole_script = fences || current.lines().count() <= WHOLE_SCRIPT_LINES;
        let failures: Vec<_> = failures.iter().map(routed_json).collect();
        let prompts = self.steps.prompts;
        let mut sent_back = SentBack::default();
        let mut spent = crate::protocol::Usage::default();
        loop {
            let context = json!({
                "code": current,
                "failures": failures,
                "passing": passing,
                "rejected": rejected,
                "whole_script": whole_script,
            });
            let (answer, usage) = self.steps.fix_code(context, !rejected.is_empty()).await?;
            spent += usage;
            let mut packages = answer.packages;
            let whole = answer.code.as_deref().map(strip_code_fence);
            let form = match &whole {
                _ if fences => FixAnswer::Blocks(&answer.blocks),
                Some(code) if !code.trim().is_empty() => FixAnswer::WholeScript(code),
                _ => FixAnswer::Edits(&answer.edits),
            };
            let edits = match vet::code::fix_edits(&current, form, &mut sent_back) {
                Verdict::Accept(edits) => edits,
                Verdict::AskAgain(note) => {
                    rejected.push(note.render(prompts)?);
                    continue;
                }
            };
            let edits: Vec<Edit> = edits
                .into_iter()
                .map(|e| Edit {
                    replace: self.repairs.fragment(e.replace),
                    ..e
                })
                .collect();
            let mut fixed = apply_edits(&current, &edits);
            fixed.code = self.repairs.script(fixed.code);
            if fixed.changed(&current) {
                let analysis = self.imports(&fixed.code, &["solution"]).await?;
                let syntax_error = analysis.syntax_error.as_deref();
                if let Verdict::AskAgain(note) =
                    vet::code::fixed_script(syntax_error, &mut sent_back)
                {
                    tracing::info!(error = ?syntax_error, "the fixed script does not compile; asking again");
                    rejected.push(note.render(prompts)?);
                    continue;
                }
                if syntax_error.is_none() {
                    let before: BTreeSet<_> = self.imports.iter().cloned().collect();
                    packages.extend(
                        analysis
                            .distributions
                            .iter()
                            .filter(|d| !before.contains(*d))
                            .cloned(),
                    );
                    self.imports = analysis.distributions.into_iter().collect();
                }
            }
            return Ok(Event::CodeEdited {
                edits,
                packages,
                usage: spent,
            });
        }
    }

    /// The environment with `packages` and the Debian packages `system`; a Debian package that
    /// cannot be had is reported for the session to replace or drop.
    async fn prepare(
        &mut self,
        packages: &[String],
        system: &[String],
    ) -> Result<Event, LoopError> {
        let err = match self.prepare_once(packages, system).await {
            Err(LoopError::Sandbox(err)) => err,
            other => return other,
        };
        let (unusable, why, message, replaceable) = match &err {
            SandboxError::BadSystemPackage { package } => (
                vec![package.clone()],
                "it is not a valid Debian package name".to_owned(),
                String::new(),
                true,
            ),
            SandboxError::SystemPackageNotFound { package, message } => (
                vec![package.clone()],
                "apt does not know it in the sandbox image".to_owned(),
                message.clone(),
                true,
            ),
            SandboxError::SystemPackagesUnavailable { packages, backend } => (
                packages.clone(),
                format!(
                    "this machine lacks it and the {backend} sandbox cannot install system packages (`--sandbox docker` can)"
                ),
                String::new(),
                false,
            ),
            _ => return Err(err.into()),
        };
        Ok(Event::SystemPackagesUnusable {
            packages: unusable,
            why,
            message,
            replaceable,
            error: err.to_string(),
        })
    }

    async fn prepare_once(
        &mut self,
        packages: &[String],
        system: &[String],
    ) -> Result<Event, LoopError> {
        let spec = EnvSpec::new(packages)?
            .with_system_packages(system)?
            .with_python(self.python_spec.clone());
        if self.options.sandbox.cache == CacheMode::Override {
            let id = spec.id(self.interpreter);
            let dir = self.cache.dir().join(&id.0);
            if dir.exists() {
                std::fs::remove_dir_all(&dir).map_err(|source| SandboxError::Io {
                    action: "removing the cached environment",
                    path: dir.clone(),
                    source,
                })?;
            }
        }
        match self.cache.ensure(&spec).await {
            Ok(env) => {
                // Docker: the image with the system packages; host backends: check them.
                let sandbox = self.sandbox;
                retrying(
                    self.options.sandbox.retries,
                    "environment",
                    &self.options.sandbox.secrets,
                    &mut self.sandbox_retries,
                    || sandbox.prepare(&env),
                )
                .await?;
                self.journal.record(&Line::Environment {
                    id: env.id.to_string(),
                    packages: packages.to_vec(),
                    system_packages: system.to_vec(),
                    resolved: env.resolved.clone(),
                })?;
                self.env = Some(env);
                Ok(Event::EnvironmentReady {
                    usage: crate::protocol::Usage::default(),
                })
            }
            Err(SandboxError::PackageNotFound { package }) => Ok(Event::PackageMissing {
                error: format!("no distribution named `{package}` on the package index"),
                package,
            }),
            Err(other) => Err(other.into()),
        }
    }

    async fn run_tests(&mut self, session: &Session) -> Result<Event, LoopError> {
        let Some(env) = self.env.clone() else {
            return Err(LoopError::InvalidRequest(
                "tests were to run before the environment was built".to_owned(),
            ));
        };
        let mut files = vec![
            SourceFile::new("solution.py", session.code().unwrap_or_default()),
            SourceFile::new("test_solution.py", session.tests().unwrap_or_default()),
            SourceFile::new("conftest.py", self.conftest.clone()),
        ];
        if let Some(test) = &self.contract_test {
            files.push(SourceFile::new(CONTRACT_TEST_FILE, test.clone()));
        }
        let mut spec = PytestSpec::new(env, files);
        spec.limits = self.options.sandbox.limits;
        spec.network = self.options.sandbox.network;
        spec.run_name.clone_from(&self.options.name);
        spec.env_vars = self.options.sandbox.env_vars.iter().cloned().collect();
        spec.secrets.clone_from(&self.options.sandbox.secrets);
        spec.inputs = self
            .contract
            .inputs
            .iter()
            .filter(|i| i.ty == IoType::File)
            .filter_map(|i| {
                Some(SandboxInput {
                    name: i.name.clone(),
                    value: SandboxValue::File(i.sample.clone()?),
                })
            })
            .collect();
        let number = session.runs() + 1;
        let work = self
            .run_dir
            .root()
            .join(format!("iterations/{number}/sandbox"));
        std::fs::create_dir_all(&work).map_err(|source| SandboxError::Io {
            action: "creating",
            path: work.clone(),
            source,
        })?;
        let files = crate::journal::digest(&[
            session.code().unwrap_or_default(),
            session.tests().unwrap_or_default(),
        ]);
        let report = if let Some(report) = self.journal.test_run(number, &files) {
            report
        } else {
            let sandbox = self.sandbox;
            let options = self.options;
            let report = retrying(
                options.sandbox.retries,
                "run tests",
                &options.sandbox.secrets,
                &mut self.sandbox_retries,
                || run_pytest_or_reuse(sandbox, &spec, &work, &options.sandbox),
            )
            .await?;
            self.journal.record_tests(number, &files, &report)?;
            report
        };
        let output = format!("{}{}", report.stdout, report.stderr);
        self.run_dir.write(
            &format!("iterations/{number}/test_output.txt"),
            output.as_bytes(),
        )?;
        let run = to_test_run(&report);
        self.last_report = Some(report);
        Ok(Event::TestsRan(run))
    }
}

fn fixed_by(kind: crate::protocol::FailureKind) -> &'static str {
    match kind {
        crate::protocol::FailureKind::Logic => "a code edit",
        crate::protocol::FailureKind::Environment => "adding packages",
        crate::protocol::FailureKind::TestError => "rewriting the test",
    }
}

fn routed_json(failure: &crate::protocol::RoutedFailure) -> serde_json::Value {
    json!({
        "test_id": failure.test_id,
        "output": tail(&failure.output, FAILURE_OUTPUT_LIMIT),
        "evidence": failure.evidence,
        "fix": failure.fix,
        "reclassified": failure.reclassified_from.is_some_and(|from| from != failure.kind),
    })
}

fn outcome_name(outcome: TestOutcome) -> &'static str {
    match outcome {
        TestOutcome::Passed => "passed",
        TestOutcome::Failed => "failed",
        TestOutcome::Error => "error in a fixture",
        TestOutcome::Skipped => "skipped",
        TestOutcome::XFailed => "xfailed",
        TestOutcome::XPassed => "unexpectedly passed",
        TestOutcome::CollectionError => "could not be collected",
    }
}

/// The sandbox's report as the session sees it. A session killed by a limit with no result is
/// one failure that says so.
fn to_test_run(report: &TestReport) -> TestRun {
    let mut results: Vec<TestResult> = report
        .collection_errors
        .iter()
        .map(|c| {
            TestResult::new(
                c.path.clone(),
                TestOutcome::CollectionError,
                mask_addresses(&c.message),
            )
        })
        .collect();
    results.extend(report.tests.iter().map(|t| {
        let outcome = match t.outcome {
            Outcome::Passed => TestOutcome::Passed,
            Outcome::Failed => TestOutcome::Failed,
            Outcome::Error => TestOutcome::Error,
            Outcome::Skipped => TestOutcome::Skipped,
            Outcome::XFailed => TestOutcome::XFailed,
            Outcome::XPassed => TestOutcome::XPassed,
        };
        TestResult::new(t.id.clone(), outcome, mask_addresses(&t.message))
    }));
    let output = format!("{}{}", report.stdout, report.stderr);
    if report.timed_out || report.memory_exceeded {
        let why = if report.timed_out {
            "the test session hit the wall-clock timeout"
        } else {
            "the test session hit the memory limit"
        };
        results.push(TestResult::new(
            "pytest session".to_owned(),
            TestOutcome::Error,
            format!("{why}\n{}", tail(&output, FAILURE_OUTPUT_LIMIT)),
        ));
    } else if results.is_empty() && report.exit_code.is_some_and(|c| c != 0 && c != 5) {
        results.push(TestResult::new(
            "pytest session".to_owned(),
            TestOutcome::Error,
            tail(&output, FAILURE_OUTPUT_LIMIT),
        ));
    }
    TestRun { results, output }
}

/// What every prompt may show of the task.
pub(crate) fn task_view(
    options: &GenerateOptions,
    contract: &Contract,
    data: &data::DataContext,
) -> TaskView {
    let profile = options.profile();
    TaskView {
        task: options.prompt.clone(),
        system_override: options.system_prompt.clone(),
        schema_text: options.schema_text.clone(),
        schema_keys: options
            .schema_text
            .as_deref()
            .map(crate::schema_keys::top_level_keys)
            .unwrap_or_default(),
        inputs: contract.inputs.clone(),
        outputs: contract.outputs.clone(),
        datasets: data.datasets.clone(),
        rules: data.rules.clone(),
        row_keys: data.row_keys.clone(),
        code_in_fences: profile.code_in_fences,
        skeleton: profile.skeleton,
    }
}
