//! Running a generated script on real data: `autocoder run RUN_DIR --NAME VALUE ...`. The
//! environment is the one the tests passed in (rebuilt from the cache by its package set; with
//! Docker the same image, system packages included), the
//! samples are the defaults, and overrides are parsed by their declared type.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use autocoder_sandbox::{
    EnvCache, EnvSpec, RunOutcome, RunSpec, Sandbox, SandboxError, Value, parse_output,
};

use crate::LoopError;
use crate::options::{CacheMode, SandboxOptions};
use crate::outcome_cache::{OutcomeCache, OutcomeKey};
use crate::request::IoType;
use crate::rundir::{GenerationResult, RunDir};

/// How to run a result.
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    /// `NAME -> VALUE` as typed by the user; values are parsed by the declared input type.
    pub overrides: BTreeMap<String, String>,
    /// Run even though the generation failed.
    pub force: bool,
    /// The sandbox.
    pub sandbox: SandboxOptions,
    /// Where file and directory outputs are copied to (default: `RUN_DIR/outputs`).
    pub out_dir: Option<PathBuf>,
}

/// The argument that tells a generated script where to write its outputs.
pub const OUTPUTS_DIR_FLAG: &str = "--outputs-dir";

/// Whether `script` takes [`OUTPUTS_DIR_FLAG`]; scripts generated before it existed write to the
/// hard-wired `/var/outputs`, which only the sandbox and the exported image have.
pub fn takes_outputs_dir(script: &str) -> bool {
    script.contains(OUTPUTS_DIR_FLAG)
}

/// What [`RunSpec::outputs_arg`] should be for `script`: the flag when it takes one.
pub fn outputs_arg(script: &str) -> Option<String> {
    takes_outputs_dir(script).then(|| OUTPUTS_DIR_FLAG.to_owned())
}

/// Parses a user's value for an input of type `ty`.
fn parse_input(name: &str, ty: IoType, text: &str) -> Result<Value, LoopError> {
    match ty {
        IoType::File | IoType::Dir => {
            let path = std::path::absolute(text).unwrap_or_else(|_| PathBuf::from(text));
            let exists = if ty == IoType::File {
                path.is_file()
            } else {
                path.is_dir()
            };
            if !exists {
                return Err(LoopError::InvalidRequest(format!(
                    "--{name}: {} is not an existing {}",
                    path.display(),
                    ty.name()
                )));
            }
            Ok(if ty == IoType::File {
                Value::File(path)
            } else {
                Value::Dir(path)
            })
        }
        _ => parse_output(name, ty, text).map_err(|err| {
            LoopError::InvalidRequest(format!(
                "--{name} {text:?} is not a valid {}: {err}",
                ty.name()
            ))
        }),
    }
}

/// Runs the solution in `run_dir` with the samples as defaults and `options.overrides` on top.
pub async fn run(
    run_dir: &Path,
    options: &RunOptions,
) -> Result<(GenerationResult, RunOutcome), LoopError> {
    let dir = RunDir::open(run_dir);
    let result = dir.read_result()?;
    if !result.success && !options.force {
        return Err(LoopError::InvalidRequest(format!(
            "the generation in {} failed ({}); pass --force to run it anyway",
            run_dir.display(),
            result.reason
        )));
    }
    for name in options.overrides.keys() {
        if !result.inputs.iter().any(|i| &i.name == name) {
            let known: Vec<&str> = result.inputs.iter().map(|i| i.name.as_str()).collect();
            return Err(LoopError::InvalidRequest(format!(
                "the script has no input `{name}`; its inputs are: {}",
                known.join(", ")
            )));
        }
    }
    let sandbox = Sandbox::new(options.sandbox.backend);
    sandbox.check()?;
    let throwaway = tempfile::tempdir().map_err(|source| SandboxError::Io {
        action: "creating a temporary environment cache in",
        path: std::env::temp_dir(),
        source,
    })?;
    let env = result_env(&result, &options.sandbox, throwaway.path()).await?;
    let script = run_dir.join("solution.py");
    let work = autocoder_sandbox::temp_dir("run")?;
    let mut spec = RunSpec::new(env, &script, work.path())?;
    spec.limits = options.sandbox.limits;
    spec.outputs_arg = outputs_arg(&result.solution);
    spec.network = options.sandbox.network;
    spec.run_name.clone_from(&result.name);
    spec.env_vars = options.sandbox.env_vars.iter().cloned().collect();
    spec.secrets.clone_from(&options.sandbox.secrets);
    for input in &result.inputs {
        let value = match (options.overrides.get(&input.name), &input.sample) {
            (Some(text), _) => parse_input(&input.name, input.ty, text)?,
            (None, Some(sample)) => Value::File(sample.clone()),
            (None, None) => {
                return Err(LoopError::InvalidRequest(format!(
                    "input `{}` ({}) has no default; pass --{} VALUE",
                    input.name,
                    input.ty.name(),
                    input.name
                )));
            }
        };
        spec = spec.input(&input.name, value);
    }
    for output in &result.outputs {
        spec = spec.output(&output.name, output.ty);
    }
    let destination = options
        .out_dir
        .clone()
        .unwrap_or_else(|| run_dir.join("outputs"));
    let key = if options.sandbox.reuse {
        let key = run_key(&spec, &options.sandbox)?;
        if let Some(outcome) =
            OutcomeCache::new(OutcomeCache::default_dir()).run(&key, &destination)
        {
            tracing::warn!(
                "--reuse: an identical run's outcome was served from the cache (not run again)"
            );
            return Ok((result, outcome));
        }
        Some(key)
    } else {
        None
    };
    let mut retries = Vec::new();
    let mut outcome = crate::retry::retrying(
        options.sandbox.retries,
        "run",
        &options.sandbox.secrets,
        &mut retries,
        || sandbox.run(&spec),
    )
    .await?;
    if let Ok(outputs) = &mut outcome.outputs {
        copy_out(outputs, &destination)?;
    }
    if let Some(key) = key {
        OutcomeCache::new(OutcomeCache::default_dir()).keep_run(&key, &outcome);
    }
    Ok((result, outcome))
}

/// The environment `result`'s tests passed in (its packages, system packages and interpreter;
/// `options.python` overrides the interpreter), found or built as `options.cache` says; a
/// disabled cache builds it in `throwaway`.
pub async fn result_env(
    result: &GenerationResult,
    options: &SandboxOptions,
    throwaway: &Path,
) -> Result<autocoder_sandbox::Env, LoopError> {
    let python = options
        .python
        .as_deref()
        .or(result.environment.python.as_deref());
    let spec = EnvSpec::new(&result.packages)?
        .with_system_packages(&result.system_packages)?
        .with_python(crate::options::python_spec(python).await?);
    Ok(ensure_env(options, &spec, throwaway).await?)
}

/// The environment as `--cache` says: reused from the cache (`auto`), rebuilt in it
/// (`override`), or built in `throwaway` (`disable`).
async fn ensure_env(
    options: &SandboxOptions,
    spec: &EnvSpec,
    throwaway: &Path,
) -> Result<autocoder_sandbox::Env, SandboxError> {
    let dir = match options.cache {
        CacheMode::Disable => throwaway.to_owned(),
        _ => options
            .cache_dir
            .clone()
            .unwrap_or_else(EnvCache::default_dir),
    };
    let cache = EnvCache::new(dir);
    if options.cache == CacheMode::Override {
        // The environment's id comes with it: built (or found) once, removed, built again.
        let found = cache.ensure(spec).await?;
        let built = cache.dir().join(&found.id.0);
        std::fs::remove_dir_all(&built).map_err(|source| SandboxError::Io {
            action: "removing the cached environment",
            path: built.clone(),
            source,
        })?;
    }
    cache.ensure(spec).await
}

/// What makes a script run what it is: the script, the environment, every input's value (file
/// and directory inputs by their bytes), the outputs asked for, limits, network and variables.
fn run_key(spec: &RunSpec, options: &SandboxOptions) -> Result<OutcomeKey, LoopError> {
    let mut key = OutcomeKey::new("run");
    let script = std::fs::read(&spec.script).map_err(|source| SandboxError::Io {
        action: "reading",
        path: spec.script.clone(),
        source,
    })?;
    key.bytes(&script)
        .text(&spec.env.id.0)
        .text(options.backend.name())
        .text(&format!("{:?}", spec.limits))
        .text(&spec.network.to_string())
        .variables(&spec.env_vars, &spec.secrets)
        .text(&format!("{:?} {:?}", spec.outputs, spec.extra_args));
    for input in &spec.inputs {
        key.text(&input.name);
        match &input.value {
            Value::File(path) | Value::Dir(path) => {
                key.path(path).map_err(|source| SandboxError::Io {
                    action: "reading",
                    path: path.clone(),
                    source,
                })?;
            }
            other => {
                key.text(&format!("{other:?}"));
            }
        }
    }
    Ok(key)
}

/// Copies file and directory outputs out of the temporary sandbox directory.
fn copy_out(outputs: &mut BTreeMap<String, Value>, destination: &Path) -> Result<(), LoopError> {
    let io = |path: &Path, err: std::io::Error| {
        LoopError::Data(format!(
            "cannot copy an output to {}: {err}",
            path.display()
        ))
    };
    for (name, value) in outputs.iter_mut() {
        let (Value::File(path) | Value::Dir(path)) = value else {
            continue;
        };
        std::fs::create_dir_all(destination).map_err(|e| io(destination, e))?;
        let target = destination.join(name);
        if path.is_dir() {
            copy_dir(path, &target).map_err(|e| io(&target, e))?;
        } else {
            std::fs::copy(&*path, &target).map_err(|e| io(&target, e))?;
        }
        *path = target;
    }
    Ok(())
}

fn copy_dir(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            copy_dir(&entry.path(), &target)?;
        } else {
            std::fs::copy(entry.path(), target)?;
        }
    }
    Ok(())
}
