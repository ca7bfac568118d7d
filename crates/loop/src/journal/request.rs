//! The journal's header: every option that shapes a generation, with secrets redacted, and the
//! way back to [`GenerateOptions`] and [`LlmConfig`] for `autocoder resume`.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use autocoder_llm::{CallParams, LlmConfig, ModelSpec, StructuredMode};
use autocoder_sandbox::Backend;
use serde::{Deserialize, Serialize};

use crate::LoopError;
use crate::Prompting;
use crate::options::{CacheMode, GenerateOptions, SandboxOptions};
use crate::request::{Declaration, Sample};
use crate::session::Limits;

/// What a redacted value reads as.
pub const REDACTED: &str = "<redacted>";

/// What was asked: the generation's options and the model's settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RequestRecord {
    /// The directory the generation started in (relative paths below are relative to it).
    pub cwd: PathBuf,
    /// The task.
    pub prompt: String,
    /// Free-form schema text.
    pub schema_text: Option<String>,
    /// Business rules.
    pub constraints: Vec<String>,
    /// Sample files.
    pub samples: Vec<Sample>,
    /// Declared inputs.
    pub inputs: Vec<Declaration>,
    /// The values non-file inputs take on the samples.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub sample_args: BTreeMap<String, String>,
    /// Declared outputs.
    pub outputs: Vec<Declaration>,
    /// The system prompt's persona.
    pub system_prompt: Option<String>,
    /// Distributions always installed.
    pub base_packages: Vec<String>,
    /// Sample rows per profile.
    pub sample_rows: usize,
    /// Iterations, token budget, skipping tests.
    pub limits: Limits,
    /// The run directory as given.
    pub out_dir: PathBuf,
    /// The sandbox.
    pub sandbox: SandboxRecord,
    /// Prompt template overrides.
    pub prompts_dir: Option<PathBuf>,
    /// How the prompts were shaped (`tests_see_code`, `code_in_fences`, and when set
    /// `trace_values`, `units`, `no_plan`, `model_profile`), flat among the other keys.
    #[serde(flatten)]
    pub prompting: Prompting,
    /// The model and its settings.
    pub model: ModelRecord,
    /// The run's name (`--name`).
    #[serde(default)]
    pub name: Option<String>,
    /// What prompts show of the samples (`--sample-rows`, `--context-tokens`): rows and tokens.
    #[serde(default)]
    pub shown: Option<(usize, usize)>,
    /// Agent mode's settings, for a run of `generate --agent`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<AgentRecord>,
}

/// The settings of an agent-mode run (`generate --agent`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgentRecord {
    /// Model turns at most.
    pub max_turns: u32,
    /// `native` or `json`.
    pub protocol: String,
    /// The model's context window, tokens.
    pub context_tokens: usize,
    /// Characters of a tool's result shown to the model.
    pub tool_output_chars: usize,
    /// Wall-clock limit of the whole run, seconds.
    pub run_timeout_seconds: u64,
    /// Wall-clock limit of one tool call, seconds.
    pub tool_timeout_seconds: u64,
    /// The command policy file replacing the shipped one.
    pub policy: Option<PathBuf>,
}

/// The sandbox options (`--env` values redacted).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SandboxRecord {
    /// `bwrap`, `docker` or `none`.
    pub backend: String,
    /// Address-space limit, bytes.
    pub memory_bytes: u64,
    /// CPU seconds.
    pub cpu_seconds: u64,
    /// Processes.
    pub processes: u64,
    /// Largest file written, bytes.
    pub file_size_bytes: u64,
    /// Open files.
    pub open_files: u64,
    /// Wall-clock limit, seconds.
    pub wall_timeout_seconds: f64,
    /// Output kept per stream, bytes.
    pub output_cap_bytes: usize,
    /// CPU quota, thousandths of a core.
    pub cpu_millis: u32,
    /// Scratch file system size, bytes.
    pub scratch_bytes: u64,
    /// Largest scalar output, bytes.
    pub scalar_output_bytes: u64,
    /// File outputs together, bytes.
    pub output_files_bytes: u64,
    /// Network access.
    pub network: bool,
    /// `--env` variables: names, with every value [`REDACTED`].
    pub env_vars: Vec<(String, String)>,
    /// The environment cache directory.
    pub cache_dir: Option<PathBuf>,
    /// `auto`, `override` or `disable`.
    pub cache: String,
    /// Whether identical sandbox runs are served from the outcome cache.
    #[serde(default)]
    pub reuse: bool,
    /// `--secret` names (values are read from the environment again on resume, never kept).
    #[serde(default)]
    pub secrets: Vec<String>,
    /// Retries of a sandbox step that failed for an infrastructure reason.
    #[serde(default)]
    pub retries: u32,
    /// `--python`.
    #[serde(default)]
    pub python: Option<String>,
}

/// The model's settings (the API key is never here: only the variable that holds it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelRecord {
    /// `provider/name`.
    pub model: String,
    /// The API base, user and password in it redacted.
    pub api_base: Option<String>,
    /// The variable holding the key.
    pub api_key_env: Option<String>,
    /// Sampling parameters of every call.
    pub params: CallParams,
    /// Parameters forced over every call's.
    pub forced_params: CallParams,
    /// Seconds to wait for one answer.
    pub request_timeout_seconds: f64,
    /// Seconds to wait for a connection.
    pub connect_timeout_seconds: f64,
    /// Structured-output mode.
    pub structured_mode: StructuredMode,
    /// The recording written, if any.
    pub record: Option<PathBuf>,
    /// The recording replayed, if any.
    pub replay: Option<PathBuf>,
    /// `--param` fields added to every request body.
    #[serde(default)]
    pub extra_body: serde_json::Map<String, serde_json::Value>,
}

fn cache_name(mode: CacheMode) -> &'static str {
    match mode {
        CacheMode::Auto => "auto",
        CacheMode::Override => "override",
        CacheMode::Disable => "disable",
    }
}

/// `url` with any `user:password@` replaced by [`REDACTED`].
fn redact_url(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    let host_end = rest.find('/').unwrap_or(rest.len());
    match rest[..host_end].rfind('@') {
        Some(at) => format!("{scheme}://{REDACTED}@{}", &rest[at + 1..]),
        None => url.to_owned(),
    }
}

impl RequestRecord {
    /// The record of a request (secrets redacted).
    pub fn new(options: &GenerateOptions, llm: &LlmConfig) -> Self {
        let limits = options.sandbox.limits;
        RequestRecord {
            cwd: std::env::current_dir().unwrap_or_default(),
            prompt: options.prompt.clone(),
            schema_text: options.schema_text.clone(),
            constraints: options.constraints.clone(),
            samples: options.samples.clone(),
            inputs: options.inputs.clone(),
            sample_args: options.sample_args.clone(),
            outputs: options.outputs.clone(),
            system_prompt: options.system_prompt.clone(),
            base_packages: options.base_packages.clone(),
            sample_rows: options.sample_rows,
            limits: options.limits,
            out_dir: options.out_dir.clone(),
            sandbox: SandboxRecord {
                backend: options.sandbox.backend.name().to_owned(),
                memory_bytes: limits.memory_bytes,
                cpu_seconds: limits.cpu_seconds,
                processes: limits.processes,
                file_size_bytes: limits.file_size_bytes,
                open_files: limits.open_files,
                wall_timeout_seconds: limits.wall_timeout.as_secs_f64(),
                output_cap_bytes: limits.output_cap_bytes,
                cpu_millis: limits.cpu_millis,
                scratch_bytes: limits.scratch_bytes,
                scalar_output_bytes: limits.scalar_output_bytes,
                output_files_bytes: limits.output_files_bytes,
                network: options.sandbox.network,
                env_vars: options
                    .sandbox
                    .env_vars
                    .iter()
                    .map(|(key, _)| (key.clone(), REDACTED.to_owned()))
                    .collect(),
                cache_dir: options.sandbox.cache_dir.clone(),
                cache: cache_name(options.sandbox.cache).to_owned(),
                reuse: options.sandbox.reuse,
                secrets: options
                    .sandbox
                    .secrets
                    .iter()
                    .map(|s| s.name.clone())
                    .collect(),
                retries: options.sandbox.retries,
                python: options.sandbox.python.clone(),
            },
            prompts_dir: options.prompts_dir.clone(),
            prompting: options.prompting.clone(),
            model: ModelRecord {
                model: llm.model.to_string(),
                api_base: llm.api_base.as_deref().map(redact_url),
                api_key_env: llm.api_key_env.clone(),
                params: llm.params.clone(),
                forced_params: llm.forced_params.clone(),
                request_timeout_seconds: llm.timeouts.total.as_secs_f64(),
                connect_timeout_seconds: llm.timeouts.connect.as_secs_f64(),
                structured_mode: llm.structured_mode,
                record: llm.record.clone(),
                replay: llm.replay.clone(),
                extra_body: llm.extra_body.clone(),
            },
            name: options.name.clone(),
            shown: options.shown.map(|s| (s.rows, s.context_tokens)),
            agent: None,
        }
    }

    /// The options again. `env_values` gives the values of the redacted `--env` variables and
    /// `secret` those of the `--secret` names; one missing is an error naming it.
    pub fn options(
        &self,
        env_values: &[(String, String)],
        secret: &dyn Fn(&str) -> Option<String>,
    ) -> Result<GenerateOptions, LoopError> {
        let s = &self.sandbox;
        let backend = Backend::from_name(&s.backend).ok_or_else(|| {
            LoopError::InvalidRequest(format!("the journal's sandbox `{}` is unknown", s.backend))
        })?;
        let mut env_vars = Vec::new();
        for (key, value) in &s.env_vars {
            let given = env_values.iter().find(|(k, _)| k == key).map(|(_, v)| v);
            match given {
                Some(v) => env_vars.push((key.clone(), v.clone())),
                None if value != REDACTED => env_vars.push((key.clone(), value.clone())),
                None => {
                    return Err(LoopError::InvalidRequest(format!(
                        "the run had `--env {key}=...`, whose value the journal does not keep: give it again (`--env {key}=VALUE`)"
                    )));
                }
            }
        }
        let mut secrets = Vec::new();
        for name in &s.secrets {
            let value = secret(name).ok_or_else(|| {
                LoopError::InvalidRequest(format!(
                    "the run had `--secret {name}`, whose value the journal does not keep: set the environment variable {name} again"
                ))
            })?;
            secrets.push(autocoder_sandbox::Secret::new(name.clone(), value));
        }
        let limits = autocoder_sandbox::Limits {
            memory_bytes: s.memory_bytes,
            cpu_seconds: s.cpu_seconds,
            processes: s.processes,
            file_size_bytes: s.file_size_bytes,
            open_files: s.open_files,
            wall_timeout: Duration::from_secs_f64(s.wall_timeout_seconds.max(0.0)),
            output_cap_bytes: s.output_cap_bytes,
            cpu_millis: s.cpu_millis,
            scratch_bytes: s.scratch_bytes,
            scalar_output_bytes: s.scalar_output_bytes,
            output_files_bytes: s.output_files_bytes,
        };
        Ok(GenerateOptions {
            prompt: self.prompt.clone(),
            schema_text: self.schema_text.clone(),
            constraints: self.constraints.clone(),
            samples: self.samples.clone(),
            inputs: self.inputs.clone(),
            sample_args: self.sample_args.clone(),
            outputs: self.outputs.clone(),
            system_prompt: self.system_prompt.clone(),
            base_packages: self.base_packages.clone(),
            sample_rows: self.sample_rows,
            limits: self.limits,
            out_dir: self.out_dir.clone(),
            sandbox: SandboxOptions {
                backend,
                limits,
                network: s.network,
                env_vars,
                cache_dir: s.cache_dir.clone(),
                cache: CacheMode::from_name(&s.cache).unwrap_or_default(),
                reuse: s.reuse,
                secrets,
                retries: s.retries,
                python: s.python.clone(),
            },
            prompts_dir: self.prompts_dir.clone(),
            prompting: self.prompting.clone(),
            model: self.model.model.clone(),
            name: self.name.clone(),
            shown: self.shown.map(|(rows, context_tokens)| crate::data::Shown {
                rows,
                context_tokens,
            }),
        })
    }

    /// The model settings again (no conversation log; the caller sets it). An API base whose
    /// password was redacted cannot be used: give `--api-base` again.
    pub fn llm_config(&self) -> Result<LlmConfig, LoopError> {
        let m = &self.model;
        let spec = ModelSpec::parse(&m.model)?;
        let mut config = LlmConfig::new(spec);
        config.api_base.clone_from(&m.api_base);
        config.api_key_env.clone_from(&m.api_key_env);
        config.params = m.params.clone();
        config.forced_params = m.forced_params.clone();
        config.timeouts.total = Duration::from_secs_f64(m.request_timeout_seconds.max(0.0));
        config.timeouts.connect = Duration::from_secs_f64(m.connect_timeout_seconds.max(0.0));
        config.structured_mode = m.structured_mode;
        config.record.clone_from(&m.record);
        config.replay.clone_from(&m.replay);
        config.prompts_dir.clone_from(&self.prompts_dir);
        config.extra_body.clone_from(&m.extra_body);
        Ok(config)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_in_an_api_base_are_redacted() {
        assert_eq!(
            redact_url("https://me:secret@proxy.example/v1"),
            format!("https://{REDACTED}@proxy.example/v1")
        );
        assert_eq!(redact_url("http://127.0.0.1:8/v1"), "http://127.0.0.1:8/v1");
        assert_eq!(redact_url("http://h/v1?a=b@c"), "http://h/v1?a=b@c");
    }

    #[test]
    fn env_values_are_redacted_and_must_be_given_again() {
        let mut options = GenerateOptions {
            prompt: "p".into(),
            ..GenerateOptions::default()
        };
        options.sandbox.env_vars = vec![("TOKEN".into(), "hunter2".into())];
        let llm = LlmConfig::new(ModelSpec::parse("openai/m").unwrap());
        let record = RequestRecord::new(&options, &llm);
        let json = serde_json::to_string(&record).unwrap();
        assert!(!json.contains("hunter2"), "{json}");
        assert!(json.contains("TOKEN"), "{json}");
        let err = record.options(&[], &|_| None).unwrap_err().to_string();
        assert!(err.contains("--env TOKEN=VALUE"), "{err}");
        let back = record
            .options(&[("TOKEN".into(), "hunter2".into())], &|_| None)
            .unwrap();
        assert_eq!(back.sandbox.env_vars, options.sandbox.env_vars);
        assert_eq!(back.prompt, "p");
    }

    #[test]
    fn sample_args_are_journaled_for_a_resume() {
        let options = GenerateOptions {
            prompt: "p".into(),
            sample_args: [("gap".to_owned(), "30".to_owned())].into(),
            ..GenerateOptions::default()
        };
        let llm = LlmConfig::new(ModelSpec::parse("openai/m").unwrap());
        let json = serde_json::to_string(&RequestRecord::new(&options, &llm)).unwrap();
        let record: RequestRecord = serde_json::from_str(&json).unwrap();
        let back = record.options(&[], &|_| None).unwrap();
        assert_eq!(back.sample_args, options.sample_args);
    }

    /// A request as journaled before the prompt-shaping flags were one [`Prompting`]: flat
    /// keys, `model_profile` written as null, the flags added later absent.
    const EARLIER_REQUEST: &str = r#"{
        "cwd": "/work", "prompt": "p", "schema_text": null, "constraints": [],
        "samples": [], "inputs": [], "outputs": [], "system_prompt": null,
        "base_packages": [], "sample_rows": 20,
        "limits": {"max_iterations": 10, "token_budget": null, "skip_tests": false},
        "out_dir": "runs/x",
        "sandbox": {
            "backend": "bwrap", "memory_bytes": 4294967296, "cpu_seconds": 120,
            "processes": 256, "file_size_bytes": 1073741824, "open_files": 256,
            "wall_timeout_seconds": 180.0, "output_cap_bytes": 1048576, "cpu_millis": 1000,
            "scratch_bytes": 1073741824, "scalar_output_bytes": 1048576,
            "output_files_bytes": 1073741824, "network": false, "env_vars": [],
            "cache_dir": null, "cache": "auto"
        },
        "prompts_dir": null, "tests_see_code": true, "code_in_fences": false,
        "model_profile": null,
        "model": {
            "model": "openai/m", "api_base": null, "api_key_env": null, "params": {},
            "forced_params": {}, "request_timeout_seconds": 600.0,
            "connect_timeout_seconds": 10.0, "structured_mode": "auto", "record": null,
            "replay": null
        }
    }"#;

    #[test]
    fn a_request_journaled_with_flat_prompting_keys_still_reads() {
        let expected = Prompting {
            tests_see_code: true,
            ..Prompting::default()
        };
        let record: RequestRecord = serde_json::from_str(EARLIER_REQUEST).unwrap();
        assert_eq!(record.prompting, expected);
        assert_eq!(record.options(&[], &|_| None).unwrap().prompting, expected);
        // As the journal reads it: inside the header line.
        let header = serde_json::json!({
            "kind": "header",
            "format": crate::journal::JOURNAL_FORMAT,
            "version": 1,
            "request": serde_json::from_str::<serde_json::Value>(EARLIER_REQUEST).unwrap(),
        });
        let crate::journal::Line::Header { request, .. } = serde_json::from_value(header).unwrap()
        else {
            panic!("not a header");
        };
        assert_eq!(request.prompting, expected);
    }

    #[test]
    fn prompting_round_trips_through_the_same_flat_keys() {
        let earlier: serde_json::Value = serde_json::from_str(EARLIER_REQUEST).unwrap();
        let mut record: RequestRecord = serde_json::from_value(earlier.clone()).unwrap();
        record.prompting.units = true;
        let written = serde_json::to_value(&record).unwrap();
        assert_eq!(written["units"], true);
        assert_eq!(written["tests_see_code"], true);
        assert_eq!(written["code_in_fences"], false);
        let keys = |value: &serde_json::Value| -> std::collections::BTreeSet<String> {
            value.as_object().unwrap().keys().cloned().collect()
        };
        // The same keys as before plus `units`; a `model_profile` of none is left out, and the
        // fields the earlier request lacked are written with their defaults.
        let mut expected = keys(&earlier);
        expected.remove("model_profile");
        expected.extend(["units", "name", "shown"].map(String::from));
        assert_eq!(keys(&written), expected);
        let back: RequestRecord = serde_json::from_value(written).unwrap();
        assert_eq!(back, record);
        assert!(back.prompting.units && back.options(&[], &|_| None).unwrap().prompting.units);
    }
}
