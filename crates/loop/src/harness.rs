//! The pieces of the pipeline's test harness another driver (agent mode) reuses: the
//! `conftest.py` every test suite runs with, the contract test, the sample inputs pytest
//! mounts, the per-step token table and the task view prompts are rendered from.

use std::collections::BTreeMap;

use autocoder_llm::LlmClient;
use autocoder_prompts::Prompts;
use autocoder_sandbox::{Input as SandboxInput, SourceFile, Value as SandboxValue};
use serde_json::json;

use crate::LoopError;
use crate::data::DataContext;
use crate::options::GenerateOptions;
use crate::output_columns::{OutputColumns, declared_columns};
use crate::output_order::{OutputOrder, declared_order};
use crate::prompt::TaskView;
use crate::request::{Contract, IoType, OUTPUTS_DIR};
use crate::rundir::StepUsage;

/// The name of the harness's own test file.
pub use crate::session::CONTRACT_TEST_FILE;

/// `conftest.py`: the `run_solution` fixture tests call, as the pipeline writes it.
pub fn conftest(
    prompts: &Prompts,
    contract: &Contract,
    options: &GenerateOptions,
) -> Result<String, LoopError> {
    render_conftest(prompts, contract, options)
}

/// `conftest.py` for the script outside the sandbox: outputs under `outputs_dir`, inputs
/// defaulting to `defaults` (name -> path), each run cut at `timeout_seconds`.
pub fn conftest_at(
    prompts: &Prompts,
    contract: &Contract,
    timeout_seconds: u64,
    outputs_dir: &str,
    defaults: &BTreeMap<&str, &str>,
) -> Result<String, LoopError> {
    render_conftest_at(prompts, contract, timeout_seconds, outputs_dir, defaults)
}

/// `test_contract.py`: the script runs on the samples and writes its declared outputs, with the
/// columns and in the order `task` gives for its CSV outputs (`None` when an input has no sample to default to).
pub fn contract_test(
    prompts: &Prompts,
    contract: &Contract,
    data: &DataContext,
    task: &str,
) -> Result<Option<String>, LoopError> {
    let columns = declared_columns(task, &contract.outputs);
    let orders = declared_order(task, &contract.outputs);
    render_contract_test(prompts, contract, data, &columns, &orders)
}

/// The sample files pytest runs mount, by input name.
pub fn sample_inputs(contract: &Contract) -> Vec<SandboxInput> {
    contract
        .inputs
        .iter()
        .filter(|i| i.ty == IoType::File)
        .filter_map(|i| {
            Some(SandboxInput {
                name: i.name.clone(),
                value: SandboxValue::File(i.sample.clone()?),
            })
        })
        .collect()
}

/// The task as the pipeline's prompts show it.
pub fn task_view(options: &GenerateOptions, contract: &Contract, data: &DataContext) -> TaskView {
    crate::prompt::task_view(options, contract, data)
}

/// The client's calls, tokens and time per step, as `result.json` records them.
pub fn usage_by_step(client: &LlmClient) -> BTreeMap<String, StepUsage> {
    crate::record::usage_by_step(client)
}

/// The interpreter environments are built on for `--python` (a version found installed, or a
/// path; the default without one).
pub async fn python_spec(choice: Option<&str>) -> Result<autocoder_sandbox::PythonSpec, LoopError> {
    crate::options::python_spec(choice).await
}

pub(crate) fn render_conftest(
    prompts: &Prompts,
    contract: &Contract,
    options: &GenerateOptions,
) -> Result<String, LoopError> {
    render_sandbox_conftest(prompts, contract, options, Launch::Direct)
}

/// How the harness's `run_solution` starts `solution.py`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Launch {
    /// `python solution.py ARGS`, as a user runs it (the run directory's harness).
    Direct,
    /// Under the where-runner ([`WHERE_RUNNER_FILE`]): a caught exception's line shows.
    Where,
    /// Under the tracer ([`TRACER_FILE`]): the values its lines computed are recorded.
    Traced,
}

/// `conftest.py` as the sandbox mounts things: inputs default to their samples' mounts, runs
/// cut at the sandbox's wall-clock limit.
fn render_sandbox_conftest(
    prompts: &Prompts,
    contract: &Contract,
    options: &GenerateOptions,
    launch: Launch,
) -> Result<String, LoopError> {
    let defaults: BTreeMap<&str, &str> = contract
        .inputs
        .iter()
        .filter_map(|i| Some((i.name.as_str(), i.mount.as_deref()?)))
        .collect();
    let timeout = options.sandbox.limits.wall_timeout.as_secs().max(1);
    render_conftest_with(prompts, contract, timeout, OUTPUTS_DIR, &defaults, launch)
}

/// The harness the sandbox's test runs use: `conftest.py` running the script under a runner
/// beside it, and that runner: the tracer ([`TRACER_FILE`]) when the values are traced
/// (`--trace-values`), else the where-runner ([`WHERE_RUNNER_FILE`]), so that a script that
/// catches an exception and stops with a message (`error: 'product_id'`, as the skeleton's
/// `main` does) shows the line that raised it. The run directory keeps the plain harness, which
/// runs `python solution.py` as the user does.
pub fn test_harness(
    prompts: &Prompts,
    contract: &Contract,
    options: &GenerateOptions,
) -> Result<TestHarness, LoopError> {
    let (launch, runner) = if options.prompting.trace_values {
        (
            Launch::Traced,
            SourceFile::new(TRACER_FILE, tracer(prompts)?),
        )
    } else {
        (
            Launch::Where,
            SourceFile::new(WHERE_RUNNER_FILE, render_where_runner(prompts, true)?),
        )
    };
    Ok(TestHarness {
        conftest: render_sandbox_conftest(prompts, contract, options, launch)?,
        runner,
    })
}

/// `conftest.py` and the runner it runs the script under ([`test_harness`]).
#[derive(Debug, Clone)]
pub struct TestHarness {
    /// `conftest.py`, its `run_solution` starting the script under the runner.
    pub conftest: String,
    /// The runner, written beside `solution.py`.
    pub runner: SourceFile,
}

/// The name of the runner a try on the samples runs `solution.py` under
/// ([`where_runner`]).
pub const WHERE_RUNNER_FILE: &str = "_autocoder_where.py";

/// The runner (`_autocoder_where.py`) a try on the samples runs `solution.py` under: as
/// `python solution.py ARGS` would, printing the traceback of an exception the script caught
/// before it stops with a message, so a fix sees the line that raised it.
pub fn where_runner(prompts: &Prompts) -> Result<String, LoopError> {
    render_where_runner(prompts, false)
}

/// The where-runner; with `as_python`, an exception the script does not catch is printed as
/// Python prints it (the test runs' reports, which leave out library frames themselves),
/// without, with solution.py's lines only (the tries on the samples, whose output is cut
/// short).
fn render_where_runner(prompts: &Prompts, as_python: bool) -> Result<String, LoopError> {
    Ok(prompts.render(
        "harness/where.py.j2",
        json!({"file_name": WHERE_RUNNER_FILE, "as_python": as_python}),
    )?)
}

/// The heading the where-runner prints above solution.py's lines of a traceback.
const WHERE_HEADING: &str = "Traceback (solution.py's lines only):";

/// The function of `solution.py` an exception was raised in, as the where-runner's traceback
/// on `stderr` shows it: its innermost named function (a generator expression or a lambda is
/// part of the function around it); `None` at module level or without such a traceback.
pub fn raised_in(stderr: &str) -> Option<String> {
    let (_, traceback) = stderr.rsplit_once(WHERE_HEADING)?;
    traceback
        .lines()
        .take_while(|line| line.starts_with(' ') || line.is_empty())
        .filter(|line| line.trim_start().starts_with("File "))
        .filter_map(|frame| frame.rsplit_once(", in ").map(|(_, name)| name.trim()))
        .filter(|name| !name.is_empty() && name.chars().all(|c| c.is_alphanumeric() || c == '_'))
        .last()
        .map(str::to_owned)
}

/// The name of the tracer the harness runs `solution.py` under when it traces values.
pub const TRACER_FILE: &str = "_autocoder_trace.py";

/// Characters of one run's trace the harness keeps.
const TRACE_CHARS: usize = 6_000;

/// The tracer (`_autocoder_trace.py`): runs `solution.py` as `python solution.py ARGS` would and
/// writes, for each name one of its lines bound or changed, the value's type, shape and first
/// values.
pub fn tracer(prompts: &Prompts) -> Result<String, LoopError> {
    Ok(prompts.render(
        "harness/trace.py.j2",
        json!({
            "max_events": 20_000,
            "max_entries": 30,
            "times_per_line": 2,
            "max_entry_chars": 200,
        }),
    )?)
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
    render_conftest_with(
        prompts,
        contract,
        timeout,
        outputs_dir,
        defaults,
        Launch::Direct,
    )
}

fn render_conftest_with(
    prompts: &Prompts,
    contract: &Contract,
    timeout: u64,
    outputs_dir: &str,
    defaults: &BTreeMap<&str, &str>,
    launch: Launch,
) -> Result<String, LoopError> {
    let output_types: BTreeMap<&str, &str> = contract
        .outputs
        .iter()
        .map(|o| (o.name.as_str(), o.ty.name()))
        .collect();
    let input_names: Vec<&str> = contract.inputs.iter().map(|i| i.name.as_str()).collect();
    let default_values: BTreeMap<&str, &str> = contract
        .inputs
        .iter()
        .filter_map(|i| Some((i.name.as_str(), i.sample_value.as_deref()?)))
        .collect();
    Ok(prompts.render(
        "harness/conftest.py.j2",
        json!({
            "outputs_dir": outputs_dir,
            "timeout_seconds": timeout,
            "output_types": output_types,
            "default_arguments": defaults,
            "default_values": default_values,
            "input_names": input_names,
            "trace": launch == Launch::Traced,
            "runner": (launch == Launch::Where).then_some(WHERE_RUNNER_FILE),
            "trace_chars": TRACE_CHARS,
        }),
    )?)
}

/// The harness's own test (`test_contract.py`): the script runs on the samples with no
/// arguments and writes every declared output with its type. Only when every input has a
/// sample or a sample value to default to (a required scalar without one has no value to run
/// with). Each "one row per key"
/// rule adds a test that counts the key in the sample and in the CSV written from it; each of
/// `output_columns` (a CSV output whose columns the task lists), one that reads its header row;
/// each of `output_orders` (a CSV output whose order the task gives), one that reads its rows;
/// CSV samples add one that runs the script on copies with every non-empty field in double
/// quotes (the same data, with the delimiter the profiler found) and expects the same outputs;
/// two CSV samples or more, one per CSV output that checks each value it looked up by a key
/// came from that key's row.
pub(crate) fn render_contract_test(
    prompts: &Prompts,
    contract: &Contract,
    data: &DataContext,
    output_columns: &[OutputColumns],
    output_orders: &[OutputOrder],
) -> Result<Option<String>, LoopError> {
    if contract.inputs.iter().any(|i| i.on_samples().is_none()) {
        return Ok(None);
    }
    let csv_inputs: BTreeMap<&str, serde_json::Value> = contract
        .inputs
        .iter()
        .filter_map(|input| {
            let mount = input.mount.as_deref()?;
            let delimiter = delimiter_of(mount, data.profiles.get(&input.name))?;
            Some((
                input.name.as_str(),
                json!({"path": mount, "delimiter": delimiter.to_string()}),
            ))
        })
        .collect();
    // Values looked up in one sample by a key another repeats are checked when there are two
    // CSV samples to join and a CSV output to check.
    let csv_outputs: BTreeMap<&str, String> = if csv_inputs.len() > 1 {
        contract
            .outputs
            .iter()
            .filter(|output| output.ty == IoType::File)
            .filter_map(|output| {
                let delimiter = delimiter_of(&output.name, None)?;
                Some((output.name.as_str(), delimiter.to_string()))
            })
            .collect()
    } else {
        BTreeMap::new()
    };
    Ok(Some(prompts.render(
        "harness/test_contract.py.j2",
        json!({
            "outputs_dir": OUTPUTS_DIR,
            "row_keys": data.row_keys,
            "output_columns": output_columns,
            "output_orders": output_orders,
            "csv_inputs": csv_inputs,
            "csv_outputs": csv_outputs,
        }),
    )?))
}

/// The delimiter of a sample the harness reads as CSV (or TSV) by its name: the one its
/// profile found, else a tab for `.tsv` and a comma for `.csv`; `None` for any other file.
fn delimiter_of(mount: &str, profile: Option<&autocoder_profile::Profile>) -> Option<char> {
    let extension = std::path::Path::new(mount).extension()?;
    let by_name = if extension.eq_ignore_ascii_case("tsv") {
        '\t'
    } else if extension.eq_ignore_ascii_case("csv") {
        ','
    } else {
        return None;
    };
    Some(match profile {
        Some(profile) if profile.format.is_csv() => char::from(profile.dialect.delimiter),
        _ => by_name,
    })
}
