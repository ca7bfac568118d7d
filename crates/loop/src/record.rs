//! The run directory's record of a generation: `result.json`, the iterations' routes and
//! changes, the harness files and the samples' profiles.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use autocoder_llm::LlmClient;
use autocoder_sandbox::Backend;

use crate::LoopError;
use crate::data;
use crate::driver::Driver;
use crate::options::GenerateOptions;
use crate::protocol::{Finish, Usage};
use crate::request::Contract;
use crate::rundir::{
    EnvironmentRecord, GenerationResult, IterationRecord, RESULT_FORMAT_VERSION, RunDir, StepUsage,
};
use crate::session::{CONFTEST_FILE, CONTRACT_TEST_FILE, Session};

/// `profiles/<name>.json` for each sample, and `report.html` with all of them on one page.
pub(crate) fn write_profiles(
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
pub(crate) struct Record<'a> {
    pub(crate) options: &'a GenerateOptions,
    pub(crate) session: &'a Session,
    pub(crate) data: &'a data::DataContext,
    pub(crate) contract: &'a Contract,
    pub(crate) client: &'a LlmClient,
    pub(crate) started: Instant,
}

impl Record<'_> {
    pub(crate) fn write(
        &self,
        driver: &Driver<'_>,
        finish: Finish,
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
        let report = driver.report_of(session.code().unwrap_or_default());
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
            tokens: Usage {
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
        run_dir.write(CONFTEST_FILE, driver.conftest.as_bytes())?;
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
