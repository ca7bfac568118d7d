//! The harness's own tests (`test_contract.py`: the contract, the columns and the order the
//! task gives, the rules, the quoted copy, the looked-up values) run with the task's reference
//! in the script's place, on the samples: the harness reads rules from the task's words, and a
//! rule read wrongly would fail every right script of that task. A suite's tasks are checked
//! with this before any model is asked (`every_reference_passes_the_harness_s_own_tests`).

use std::path::Path;

use autocoder_loop::data::{self, DataOptions};
use autocoder_loop::harness;
use autocoder_loop::{GenerateOptions, LoopError, SandboxOptions};
use autocoder_prompts::Prompts;
use autocoder_sandbox::TestReport;

use crate::error::EvalError;
use crate::runner::task_request;
use crate::score::reference_env;
use crate::suite::Task;
use crate::verdicts::{Harness, run_with_reference};

/// The harness's own tests of `task` as a generation of it would write them (with the templates
/// of `prompts_dir` where it has them), run in `work` with the reference as `solution.py`.
/// `None` when the task has no contract test (an input with no sample and no sample value).
pub async fn check_harness(
    task: &Task,
    prompts_dir: Option<&Path>,
    sandbox: &SandboxOptions,
    work: &Path,
) -> Result<Option<TestReport>, EvalError> {
    let options = GenerateOptions {
        sandbox: sandbox.clone(),
        ..task_request(task)
    };
    let contract = options.check()?;
    let prompts = match prompts_dir {
        Some(dir) => Prompts::with_overrides(dir),
        None => Prompts::embedded(),
    }
    .map_err(LoopError::from)?;
    let data = data::build(
        &contract,
        &options.constraints,
        DataOptions {
            sample_rows: options.sample_rows,
            shown: None,
        },
        None,
    )
    .await?;
    let Some(tests) = harness::contract_test(&prompts, &contract, &data, &options.prompt)? else {
        return Ok(None);
    };
    let reference_path = task.reference();
    let harness = Harness {
        conftest: harness::conftest(&prompts, &contract, &options)?,
        tests: Some(tests),
        reference: std::fs::read_to_string(&reference_path)
            .map_err(EvalError::io(&reference_path))?,
        env: reference_env(sandbox).await?,
    };
    Ok(Some(
        run_with_reference(task, "", &harness, work, sandbox).await?,
    ))
}
