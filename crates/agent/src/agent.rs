//! One agent run from request to run directory: the same checks, data context, harness and
//! `result.json` as the pipeline, with the tool loop in place of the pipeline's steps.

use std::path::{Path, PathBuf};
use std::time::Instant;

use autocoder_llm::LlmClient;
use autocoder_loop::data::{self, DataOptions};
use autocoder_loop::env_cache::RunCache;
use autocoder_loop::journal::{self, JournalFile, Line, RequestRecord};
use autocoder_loop::prompt::render;
use autocoder_loop::request::Contract;
use autocoder_loop::rundir::{EnvironmentRecord, GenerationResult, RESULT_FORMAT_VERSION, RunDir};
use autocoder_loop::session::{Finish, Usage};
use autocoder_loop::{Progress, harness};
use autocoder_policy::Policy;
use autocoder_prompts::Prompts;
use autocoder_sandbox::{Backend, Sandbox};
use serde_json::json;

use crate::AgentError;
use crate::conversation::{Conversation, cut};
use crate::harness::{Harness, SOLUTION, TESTS};
use crate::options::AgentOptions;
use crate::record::Records;
use crate::tools::{self, ToolName};
use crate::turns::{End, Runner};
use crate::workspace::Workspace;

/// The workspace directory inside the run directory.
pub const WORK_DIR: &str = "work";
/// Where the samples are copied inside the workspace.
pub const SAMPLES_DIR: &str = "samples";

/// Generates a tested script with the tool loop. Like [`autocoder_loop::generate`], the client
/// should log its conversation to `out_dir/conversation.jsonl` (tool calls are appended there
/// too); a run that ends without passing tests is `Ok` with `success: false`. The run is
/// journaled (`journal.jsonl`, with the agent's settings in its header) for [`resume_agent`].
pub async fn generate_agent(
    options: &AgentOptions,
    client: &LlmClient,
    progress: &dyn Fn(&Progress),
) -> Result<GenerationResult, AgentError> {
    // Boxed: the run's state (conversation, harness, records) is a large future.
    Box::pin(run(options, client, progress, None)).await
}

/// [`generate_agent`] continuing the run its journal recorded (`autocoder resume`): the run
/// starts again with every journaled model answer and test run served from the journal, so
/// the conversation and the workspace come back as they were (file tools run again, which is
/// free; script runs and shell commands run again in the sandbox), and it goes on from the
/// first answer the journal does not have. `options` come from the journal's header.
pub async fn resume_agent(
    options: &AgentOptions,
    client: &LlmClient,
    journal: &JournalFile,
    progress: &dyn Fn(&Progress),
) -> Result<GenerationResult, AgentError> {
    Box::pin(run(options, client, progress, Some(journal))).await
}

async fn run(
    options: &AgentOptions,
    client: &LlmClient,
    progress: &dyn Fn(&Progress),
    resumed: Option<&JournalFile>,
) -> Result<GenerationResult, AgentError> {
    let started = Instant::now();
    let request = &options.generate;
    check(options)?;
    // The pipeline's checks, `--sample-arg` values included.
    let contract = request.check()?;
    let prompts = match &request.prompts_dir {
        Some(dir) => Prompts::with_overrides(dir)?,
        None => Prompts::embedded()?,
    };
    let policy = match &options.policy {
        Some(path) => Policy::load(path)?,
        None => Policy::builtin()?,
    };
    let sandbox = Sandbox::new(request.sandbox.backend);
    sandbox.check()?;
    let python = harness::python_spec(request.sandbox.python.as_deref()).await?;
    let run_dir = RunDir::create(&request.out_dir)?;
    let mut record = RequestRecord::new(request, client.config());
    record.agent = Some(options.record());
    let (journal, _store) = journal::open(&request.out_dir, &record, client, resumed)?;
    let run_cache = RunCache::new(request);

    let data = data::build(
        &contract,
        &request.constraints,
        DataOptions {
            sample_rows: request.sample_rows,
            shown: request.shown,
        },
        Some(client),
    )
    .await?;
    for (name, profile) in &data.profiles {
        let json = serde_json::to_vec_pretty(profile).unwrap_or_default();
        run_dir.write(&format!("profiles/{name}.json"), &json)?;
    }
    let (workspace_path, workspace, samples) =
        prepare_workspace(&run_dir, &contract, resumed.is_some())?;
    let conftest = harness::conftest(&prompts, &contract, request)?;
    let contract_test = harness::contract_test(&prompts, &contract, &data, &request.prompt)?;
    let task = {
        let (shown_contract, shown_data) = in_workspace(&contract, &data, &samples);
        harness::task_view(request, &shown_contract, &shown_data)
    };
    write_skeleton(&prompts, &task, &workspace, &workspace_path)?;
    let mut conversation = conversation(&prompts, &task, options, &samples)?;
    let mut runner = Runner {
        options,
        client,
        prompts: &prompts,
        policy,
        workspace,
        workspace_path,
        harness: Harness {
            sandbox,
            cache: run_cache.cache().clone(),
            limits: request.sandbox.limits,
            env_vars: request.sandbox.env_vars.clone(),
            secrets: request.sandbox.secrets.clone(),
            run_name: request.name.clone(),
            python,
            contract: contract.clone(),
            tested: harness::test_harness(&prompts, &contract, request)?,
            contract_test: contract_test.clone(),
            runs_dir: run_dir.root().join("iterations"),
            base_packages: request.base_packages.clone(),
            packages: std::collections::BTreeSet::new(),
            system_packages: std::collections::BTreeSet::new(),
            env: None,
            test_runs: 0,
            script_runs: 0,
            last_report: None,
            journal: journal.clone(),
        },
        records: Records::new(
            client.config().conversation_log.clone(),
            options.protocol.name(),
        ),
        specs: tools::specs(&prompts)?,
        plan: None,
        summary: None,
        turn: 0,
        started,
        repeats: crate::repeats::Repeats::default(),
    };
    let end = runner.run(&mut conversation, progress).await?;

    let result = build_result(options, client, &runner, end, &contract, &data, started);
    journal.record(&Line::Finish {
        finish: Finish {
            success: result.success,
            reason: result.reason.clone(),
            error: result.error.clone(),
        },
    })?;
    run_dir.write("conftest.py", conftest.as_bytes())?;
    if let Some(test) = &contract_test {
        run_dir.write(harness::CONTRACT_TEST_FILE, test.as_bytes())?;
    }
    run_dir.write_result(&result)?;
    Ok(result)
}

/// What can be refused before anything runs.
fn check(options: &AgentOptions) -> Result<(), AgentError> {
    if options.generate.prompt.trim().is_empty() {
        return Err(AgentError::InvalidRequest("the prompt is empty".to_owned()));
    }
    if options.max_turns == 0 {
        return Err(AgentError::InvalidRequest(
            "--max-turns must be at least 1".to_owned(),
        ));
    }
    Ok(())
}

/// The result document of a finished loop.
fn build_result(
    options: &AgentOptions,
    client: &LlmClient,
    runner: &Runner<'_>,
    end: End,
    contract: &Contract,
    data: &data::DataContext,
    started: Instant,
) -> GenerationResult {
    let request = &options.generate;
    let last_output = runner
        .harness
        .last_report
        .as_ref()
        .map(|r| format!("{}{}", r.stdout, r.stderr))
        .unwrap_or_default();
    let (success, reason, error) = verdict(end, options, &last_output);
    let solution = runner.workspace.read(SOLUTION).unwrap_or_default();
    let tests = runner.workspace.read(TESTS).unwrap_or_default();
    let mut summary = runner.records.summary.clone();
    summary.turns = runner.turn;
    let total = client.usage_total();
    let env = runner.harness.env.as_ref();
    GenerationResult {
        format_version: RESULT_FORMAT_VERSION,
        success,
        reason,
        error,
        model: request.model.clone(),
        plan: None,
        solution,
        tests,
        test_output: last_output,
        exit_code: runner
            .harness
            .last_report
            .as_ref()
            .and_then(|r| r.exit_code),
        attempts: runner.harness.test_runs,
        packages: runner.harness.packages.iter().cloned().collect(),
        system_packages: runner.harness.system_packages.iter().cloned().collect(),
        notes: runner
            .summary
            .iter()
            .filter(|s| !s.is_empty())
            .map(|s| format!("agent's summary: {s}"))
            .collect(),
        environment: EnvironmentRecord {
            backend: request.sandbox.backend.name().to_owned(),
            id: env.map(|e| e.id.to_string()),
            image: env
                .filter(|_| request.sandbox.backend == Backend::Docker)
                .map(autocoder_sandbox::docker_image_for),
            resolved: env.map(|e| e.resolved.clone()).unwrap_or_default(),
            python: request.sandbox.python.clone(),
            env: request.sandbox.env_vars.iter().cloned().collect(),
            secrets: request
                .sandbox
                .secrets
                .iter()
                .map(|s| s.name.clone())
                .collect(),
        },
        schemas: data.schemas.clone(),
        data_context: data.text(),
        inputs: contract.inputs.clone(),
        outputs: contract.outputs.clone(),
        samples: request
            .samples
            .iter()
            .map(|s| {
                (
                    s.name.clone(),
                    std::path::absolute(&s.path).unwrap_or_else(|_| s.path.clone()),
                )
            })
            .collect(),
        tokens: Usage {
            input_tokens: total.usage.input_tokens,
            output_tokens: total.usage.output_tokens,
            cached_input_tokens: total.usage.cached_input_tokens,
        },
        model_calls: u32::try_from(total.calls).unwrap_or(u32::MAX),
        steps: harness::usage_by_step(client),
        seconds: started.elapsed().as_secs_f64(),
        iterations: Vec::new(),
        name: request.name.clone(),
        sandbox_retries: Vec::new(),
        tool_calls: Some(summary),
        agent_plan: runner.plan.clone(),
    }
}

/// The run's workspace (emptied first when `resumed`), the samples copied in: its resolved path, the open directory, the
/// samples' file names.
fn prepare_workspace(
    run_dir: &RunDir,
    contract: &Contract,
    resumed: bool,
) -> Result<(PathBuf, Workspace, Vec<String>), AgentError> {
    let workspace_path = run_dir.root().join(WORK_DIR);
    // A resumed run starts from the samples only: it writes the files again from the journaled
    // answers, and a file the interrupted run left would change what the tools show.
    if resumed {
        match std::fs::remove_dir_all(&workspace_path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(AgentError::io("clearing", &workspace_path)(e));
            }
            _ => {}
        }
    }
    let samples = copy_samples(contract, &workspace_path)?;
    let workspace_path = std::fs::canonicalize(&workspace_path)
        .map_err(AgentError::io("resolving", &workspace_path))?;
    let workspace =
        Workspace::open(&workspace_path).map_err(AgentError::io("opening", &workspace_path))?;

    Ok((workspace_path, workspace, samples))
}

/// Writes the pipeline's script skeleton (argument parsing and output writing as the contract
/// says, `compute` left as `...`) to `solution.py` when the model's profile asks for one: the
/// agent starts from it as the code step does.
fn write_skeleton(
    prompts: &Prompts,
    task: &autocoder_loop::prompt::TaskView,
    workspace: &Workspace,
    workspace_path: &Path,
) -> Result<(), AgentError> {
    if !task.skeleton {
        return Ok(());
    }
    let block = render(prompts, "loop/_skeleton.j2", task, json!({}))?;
    let code: Vec<&str> = block
        .lines()
        .skip_while(|l| !l.starts_with("```"))
        .skip(1)
        .take_while(|l| !l.starts_with("```"))
        .collect();
    let mut code = code.join("\n");
    code.push('\n');
    workspace.write(SOLUTION, &code).map_err(|e| {
        AgentError::io("writing the skeleton into", workspace_path)(std::io::Error::other(
            e.message().to_owned(),
        ))
    })?;
    Ok(())
}

/// The system prompt (with the tool list for the JSON protocol) and the task.
fn conversation(
    prompts: &Prompts,
    task: &autocoder_loop::prompt::TaskView,
    options: &AgentOptions,
    samples: &[String],
) -> Result<Conversation, AgentError> {
    let tool_list: Vec<serde_json::Value> = ToolName::ALL
        .into_iter()
        .map(|t| {
            Ok(json!({
                "name": t.name(),
                "arguments": t.argument_names(),
                "description": tools::description(prompts, t)?,
            }))
        })
        .collect::<Result<_, AgentError>>()?;
    let protocol = options.protocol.name();
    let system = render(
        prompts,
        "agent/system.j2",
        task,
        json!({"protocol": protocol, "tools": tool_list}),
    )?;
    let task_text = render(
        prompts,
        "agent/task.j2",
        task,
        json!({"samples": samples, "notes": null}),
    )?;
    Ok(Conversation::new(system, task_text))
}

/// Whether the run succeeded, why it stopped, and the error a failure reports.
fn verdict(end: End, options: &AgentOptions, last_output: &str) -> (bool, String, Option<String>) {
    match end {
        End::Finished => (
            true,
            "the agent finished and the tests pass".to_owned(),
            None,
        ),
        End::MaxTurns => (
            false,
            format!(
                "reached --max-turns ({}) without finishing",
                options.max_turns
            ),
            Some(format!(
                "the agent used all {} turns without calling `finish` with passing tests; raise --max-turns or see conversation.jsonl{}",
                options.max_turns,
                last_tests_note(last_output)
            )),
        ),
        End::Budget => (
            false,
            "token budget exhausted".to_owned(),
            Some(format!(
                "the token budget ran out before the agent finished{}",
                last_tests_note(last_output)
            )),
        ),
        End::Timeout => (
            false,
            format!(
                "the run's wall-clock limit ({}s) passed",
                options.run_timeout.as_secs()
            ),
            Some(format!(
                "the agent did not finish in time{}",
                last_tests_note(last_output)
            )),
        ),
    }
}

fn last_tests_note(output: &str) -> String {
    if output.trim().is_empty() {
        "; no test run happened".to_owned()
    } else {
        format!("; the last test run ended:\n{}", cut(output.trim(), 1500))
    }
}

/// The contract and data context as the task text shows them to the agent: each sample at its
/// workspace path (`samples/orders.csv`), where the file tools and the scripts the agent runs
/// find it. The pipeline's text names the path the sandbox mounts it at (`/var/inputs/...`),
/// which the file tools refuse as outside the workspace; the local model kept asking for it.
/// The harness (conftest, contract test) keeps the mounts.
fn in_workspace(
    contract: &Contract,
    data: &autocoder_loop::data::DataContext,
    samples: &[String],
) -> (Contract, autocoder_loop::data::DataContext) {
    let mut contract = contract.clone();
    let mut data = data.clone();
    let with_samples = contract.inputs.iter_mut().filter(|i| i.sample.is_some());
    for (input, name) in with_samples.zip(samples) {
        let path = format!("{SAMPLES_DIR}/{name}");
        for dataset in data.datasets.iter_mut().filter(|d| d.name == input.name) {
            dataset.path.clone_from(&path);
        }
        input.mount = Some(path);
    }
    (contract, data)
}

/// Copies each sample into `workspace/samples/`; returns the file names.
fn copy_samples(contract: &Contract, workspace: &Path) -> Result<Vec<String>, AgentError> {
    let dir = workspace.join(SAMPLES_DIR);
    std::fs::create_dir_all(&dir).map_err(AgentError::io("creating", &dir))?;
    let mut names = Vec::new();
    for input in &contract.inputs {
        let Some(sample) = &input.sample else {
            continue;
        };
        let name = sample
            .file_name()
            .map_or_else(|| input.name.clone(), |n| n.to_string_lossy().into_owned());
        let target = dir.join(&name);
        std::fs::copy(sample, &target).map_err(AgentError::io("copying the sample to", &target))?;
        names.push(name);
    }
    Ok(names)
}
