//! `autocoder.generate(prompt=..., samples=..., inputs=..., outputs=..., constraints=...,
//! model=..., **options)`: the request built from Python arguments (data frames written as the
//! run's Parquet samples), the model client, and [`autocoder_loop::generate`] run with the GIL
//! released and Ctrl-C as a clean cancel.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use autocoder_llm::{CallParams, LlmClient, LlmConfig, ModelCacheMode, ModelSpec};
use autocoder_loop::request::{Declaration, Sample};
use autocoder_loop::session::Limits;
use autocoder_loop::{CacheMode, GenerateOptions, Progress, Prompting, SandboxOptions};
use autocoder_sandbox::Backend;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::block::{Cancel, block_on};
use crate::error::Error;
use crate::frames::Data;
use crate::result::GenerateResult;

/// Sample rows a profile keeps (the command line's default without `--sample-rows`).
const PROFILE_ROWS: usize = 20;

/// The run's name is a plain file name, `candidates` a number of scripts from 1 to 8 and
/// `sample_fixes` a number of fixes up to 5.
fn check_run(name: Option<&str>, candidates: u32, sample_fixes: u32) -> Result<(), Error> {
    if let Some(name) = name {
        autocoder_loop::options::check_run_name(name)?;
    }
    if !(1..=8).contains(&candidates) {
        return Err(Error::Invalid(format!(
            "candidates={candidates}: give a number of scripts from 1 to 8"
        )));
    }
    if sample_fixes > 5 {
        return Err(Error::Invalid(format!(
            "sample_fixes={sample_fixes}: give a number of fixes from 0 to 5"
        )));
    }
    Ok(())
}

/// The isolation backend `sandbox=` names.
fn sandbox_backend(sandbox: &str) -> Result<Backend, Error> {
    Backend::from_name(sandbox).ok_or_else(|| {
        Error::Invalid(format!(
            "sandbox={sandbox:?}: give \"bwrap\", \"docker\" or \"none\""
        ))
    })
}

/// `sample_args` as the command line writes them: each value by `str()` (`30`, `True`,
/// `2024-05-01 13:45:00`, `0:01:30`), which the declared type then parses.
fn argument_texts(given: Option<&Bound<'_, PyDict>>) -> PyResult<BTreeMap<String, String>> {
    items(given)?
        .into_iter()
        .map(|(name, value)| Ok((name, value.str()?.to_string())))
        .collect()
}

/// The model given, else `AUTOCODER_MODEL`'s.
fn model_name(model: Option<String>) -> PyResult<String> {
    Ok(model
        .or_else(|| std::env::var(autocoder_llm::MODEL_ENV_VAR).ok())
        .ok_or_else(|| {
            Error::Invalid(
                "give model=\"provider/name\" (or set AUTOCODER_MODEL), for example \
                 model=\"openai/gpt-4.1\""
                    .to_owned(),
            )
        })?)
}

/// Generates a tested script; see the package documentation for every option.
#[pyfunction]
#[pyo3(signature = (
    prompt, *, samples = None, sample_args = None, inputs = None, outputs = None, constraints = None,
    model = None, api_base = None, api_key_env = None, temperature = None, max_tokens = None,
    seed = None, request_timeout = 600, model_cache = "auto", run_dir = None, name = None,
    max_iterations = 10, token_budget = None, skip_tests = false, candidates = 1, sample_fixes = 0, sandbox = "bwrap",
    memory_mb = 4096, cpu_seconds = 120, timeout = 180, network = false, env = None,
    python = None, reuse = false, code_in_fences = false, tests_see_code = false,
    trace_values = false, units = false, queries = None, no_plan = false, base_packages = None, system_prompt = None, schema = None, progress = None, cancel = None,
))]
#[allow(
    clippy::too_many_arguments,
    clippy::fn_params_excessive_bools,
    reason = "one keyword argument per `autocoder generate` flag, as Python users write them"
)]
pub(crate) fn generate(
    py: Python<'_>,
    prompt: String,
    samples: Option<&Bound<'_, PyDict>>,
    sample_args: Option<&Bound<'_, PyDict>>,
    inputs: Option<&Bound<'_, PyDict>>,
    outputs: Option<&Bound<'_, PyDict>>,
    constraints: Option<Vec<String>>,
    model: Option<String>,
    api_base: Option<String>,
    api_key_env: Option<String>,
    temperature: Option<f64>,
    max_tokens: Option<u32>,
    seed: Option<u64>,
    request_timeout: u64,
    model_cache: &str,
    run_dir: Option<PathBuf>,
    name: Option<String>,
    max_iterations: u32,
    token_budget: Option<u64>,
    skip_tests: bool,
    candidates: u32,
    sample_fixes: u32,
    sandbox: &str,
    memory_mb: u64,
    cpu_seconds: u64,
    timeout: u64,
    network: bool,
    env: Option<BTreeMap<String, String>>,
    python: Option<String>,
    reuse: bool,
    code_in_fences: bool,
    tests_see_code: bool,
    trace_values: bool,
    units: bool,
    queries: Option<bool>,
    no_plan: bool,
    base_packages: Option<Vec<String>>,
    system_prompt: Option<String>,
    schema: Option<String>,
    progress: Option<&Bound<'_, PyAny>>,
    cancel: Option<&Bound<'_, Cancel>>,
) -> PyResult<GenerateResult> {
    let model = model_name(model)?;
    check_run(name.as_deref(), candidates, sample_fixes)?;
    let out = run_dir.unwrap_or_else(|| autocoder_loop::options::default_run_dir(name.as_deref()));
    let out = std::path::absolute(&out).unwrap_or(out);
    let backend = sandbox_backend(sandbox)?;
    let cache_mode = ModelCacheMode::from_name(model_cache).ok_or_else(|| {
        Error::Invalid(format!(
            "model_cache={model_cache:?}: give \"auto\", \"refresh\" or \"off\""
        ))
    })?;
    let given = items(samples)?
        .into_iter()
        .map(|(sample, value)| Ok((Data::extract(&sample, &value)?, sample)))
        .collect::<PyResult<Vec<_>>>()?;
    // Frames become `RUN_DIR/samples/NAME.parquet`, written without the GIL.
    let written_samples = py.detach(|| {
        given
            .into_iter()
            .map(|(data, name)| {
                let parquet = out.join("samples").join(format!("{name}.parquet"));
                let path = data.into_file(&name, &parquet)?;
                Ok(Sample { name, path })
            })
            .collect::<Result<Vec<_>, Error>>()
    })?;
    let options = GenerateOptions {
        prompt,
        schema_text: schema,
        constraints: constraints.unwrap_or_default(),
        samples: written_samples,
        sample_args: argument_texts(sample_args)?,
        inputs: declarations(inputs)?,
        outputs: declarations(outputs)?,
        system_prompt,
        base_packages: base_packages.unwrap_or_default(),
        sample_rows: PROFILE_ROWS,
        shown: None,
        limits: Limits {
            max_iterations,
            token_budget,
            skip_tests,
            candidates,
            sample_fixes,
        },
        out_dir: out.clone(),
        sandbox: SandboxOptions {
            backend,
            limits: autocoder_sandbox::Limits {
                memory_bytes: memory_mb << 20,
                cpu_seconds,
                wall_timeout: Duration::from_secs(timeout),
                ..autocoder_sandbox::Limits::default()
            },
            network,
            env_vars: env.unwrap_or_default().into_iter().collect(),
            cache: CacheMode::Auto,
            python,
            reuse,
            ..SandboxOptions::default()
        },
        prompts_dir: None,
        prompting: Prompting {
            tests_see_code,
            trace_values,
            units,
            queries,
            no_plan,
            code_in_fences,
            model_profile: None,
        },
        model: model.clone(),
        name,
    };
    // The samples and declarations are checked before the API key is looked up.
    options.check().map_err(Error::from)?;
    let mut config = LlmConfig::new(ModelSpec::parse(&model).map_err(Error::from)?);
    config.api_base = api_base.or_else(|| std::env::var(autocoder_llm::API_BASE_ENV_VAR).ok());
    config.api_key_env = api_key_env;
    config.params = CallParams {
        temperature,
        max_tokens,
        seed,
        ..CallParams::default()
    };
    config.timeouts.total = Duration::from_secs(request_timeout);
    config.conversation_log = Some(out.join("conversation.jsonl"));
    let client = LlmClient::new(config).map_err(Error::from)?;
    autocoder_llm::install_model_cache(&client, cache_mode);
    let progress = progress.map(|callback| callback.clone().unbind());
    let result = block_on(py, cancel.map(Bound::get), || async {
        autocoder_loop::generate(&options, &client, &|step| report(progress.as_ref(), step))
            .await
            .map_err(Error::from)
    })?;
    Ok(GenerateResult::new(result, out))
}

/// Calls `progress` (if any) with the step's dict; an exception in it is reported as
/// unraisable (on stderr) and does not stop the run.
fn report(progress: Option<&Py<PyAny>>, step: &Progress) {
    let Some(progress) = progress else { return };
    Python::attach(|py| {
        let status = PyDict::new(py);
        let called = (|| {
            status.set_item("iteration", step.iteration)?;
            status.set_item("step", step.step)?;
            status.set_item("elapsed_seconds", step.elapsed_seconds)?;
            status.set_item("tokens", step.tokens)?;
            status.set_item("last_run", step.last_run)?;
            status.set_item("packages", &step.packages)?;
            progress.call1(py, (&status,))
        })();
        if let Err(error) = called {
            error.write_unraisable(py, Some(progress.bind(py)));
        }
    });
}

/// `{"name": "float"}` (or a Python type: `float`, `pathlib.Path` for a file) as declarations.
fn declarations(given: Option<&Bound<'_, PyDict>>) -> PyResult<Vec<Declaration>> {
    let mut declared = Vec::new();
    for (name, ty) in items(given)? {
        let type_name = match ty.extract::<String>() {
            Ok(text) => text,
            Err(_) => match ty.getattr("__name__")?.extract::<String>()?.as_str() {
                "Path" | "PurePath" => "file".to_owned(),
                other => other.to_owned(),
            },
        };
        let declaration: Declaration =
            format!("{name}:{type_name}").parse().map_err(Error::from)?;
        declared.push(declaration);
    }
    Ok(declared)
}

/// A dict's items in their order, with `str` keys.
fn items<'py>(dict: Option<&Bound<'py, PyDict>>) -> PyResult<Vec<(String, Bound<'py, PyAny>)>> {
    dict.map_or_else(
        || Ok(Vec::new()),
        |dict| {
            dict.iter()
                .map(|(key, value)| Ok((key.extract::<String>()?, value)))
                .collect()
        },
    )
}
