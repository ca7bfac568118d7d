//! Sandbox outcomes kept by content (`--reuse`): a test run or a script run whose inputs are
//! byte for byte the same as an earlier one's (script, tests, harness, environment id, input
//! files, arguments, limits) is served from the cache instead of run again.
//!
//! `DIR/<2 hex>/<64 hex>/outcome.json`, plus `files/` with the file and directory outputs of a
//! script run. Entries are written atomically (a directory renamed into place).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use autocoder_sandbox::{PytestSpec, RunOutcome, Sandbox, SandboxError, TestReport, Value};
use serde::{Deserialize, Serialize};
use sha2::{Digest as _, Sha256};

use crate::options::SandboxOptions;

/// Overrides the outcome cache's directory.
pub const OUTCOME_CACHE_DIR_ENV_VAR: &str = "AUTOCODER_OUTCOME_CACHE_DIR";

/// The outcome cache.
#[derive(Debug, Clone)]
pub struct OutcomeCache {
    dir: PathBuf,
}

/// A key being built from a run's content.
#[derive(Default)]
pub struct OutcomeKey {
    hasher: Sha256,
}

impl OutcomeKey {
    /// A key for runs of `kind` (`tests`, `run`).
    pub fn new(kind: &str) -> Self {
        let mut key = Self::default();
        key.text(kind);
        key
    }

    /// Adds a piece of text (length-prefixed, so pieces cannot run together).
    pub fn text(&mut self, text: &str) -> &mut Self {
        self.bytes(text.as_bytes())
    }

    /// Adds bytes.
    pub fn bytes(&mut self, bytes: &[u8]) -> &mut Self {
        self.hasher.update((bytes.len() as u64).to_le_bytes());
        self.hasher.update(bytes);
        self
    }

    /// Adds a file's bytes, or a directory's names and files' bytes in order.
    pub fn path(&mut self, path: &Path) -> std::io::Result<&mut Self> {
        if path.is_dir() {
            let mut entries: Vec<_> = std::fs::read_dir(path)?
                .collect::<Result<Vec<_>, _>>()?
                .into_iter()
                .map(|e| e.path())
                .collect();
            entries.sort();
            self.text("dir");
            for entry in entries {
                let name = entry.file_name().map(|n| n.to_string_lossy().into_owned());
                self.text(&name.unwrap_or_default());
                self.path(&entry)?;
            }
        } else {
            let bytes = std::fs::read(path)?;
            self.text("file").bytes(&bytes);
        }
        Ok(self)
    }

    /// Adds the variables a run sees: `--env` values and secrets (their values go into the hash
    /// only, never into the cache's files), so a run under other values is not served this one.
    pub fn variables(
        &mut self,
        env: &BTreeMap<String, String>,
        secrets: &[autocoder_sandbox::Secret],
    ) -> &mut Self {
        self.text(&format!("{env:?}"));
        for secret in secrets {
            self.text(&secret.name).text(secret.value());
        }
        self
    }

    fn hex(&self) -> String {
        let mut hex = String::with_capacity(64);
        for byte in self.hasher.clone().finalize() {
            let _ = write!(hex, "{byte:02x}");
        }
        hex
    }
}

/// A script run's outcome as kept.
#[derive(Debug, Serialize, Deserialize)]
struct KeptRun {
    exit_code: Option<i32>,
    signal: Option<i32>,
    stdout: String,
    stderr: String,
    timed_out: bool,
    memory_exceeded: bool,
    cpu_exceeded: bool,
    duration: Duration,
    outputs: BTreeMap<String, Value>,
    docker_image: Option<String>,
}

impl OutcomeCache {
    /// `$AUTOCODER_OUTCOME_CACHE_DIR`, else `$XDG_CACHE_HOME/autocoder/outcomes`, else
    /// `~/.cache/autocoder/outcomes`.
    pub fn default_dir() -> PathBuf {
        if let Some(dir) = std::env::var_os(OUTCOME_CACHE_DIR_ENV_VAR) {
            return PathBuf::from(dir);
        }
        std::env::var_os("XDG_CACHE_HOME")
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
            .unwrap_or_else(std::env::temp_dir)
            .join("autocoder")
            .join("outcomes")
    }

    /// The cache in `dir`.
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Self { dir: dir.into() }
    }

    fn entry(&self, key: &OutcomeKey) -> PathBuf {
        let hex = key.hex();
        self.dir.join(&hex[..2]).join(hex)
    }

    /// The kept report of an identical test run.
    pub fn tests(&self, key: &OutcomeKey) -> Option<TestReport> {
        let bytes = std::fs::read(self.entry(key).join("outcome.json")).ok()?;
        serde_json::from_slice(&bytes).ok()
    }

    /// Keeps a test run's report (a cache that cannot be written is only a warning).
    pub fn keep_tests(&self, key: &OutcomeKey, report: &TestReport) {
        let written = serde_json::to_vec(report)
            .map_err(std::io::Error::other)
            .and_then(|json| self.put(key, &json, &BTreeMap::new()));
        if let Err(error) = written {
            tracing::warn!(%error, "cannot write to the outcome cache");
        }
    }

    /// The kept outcome of an identical script run, its file outputs copied to `destination`.
    pub fn run(&self, key: &OutcomeKey, destination: &Path) -> Option<RunOutcome> {
        let entry = self.entry(key);
        let bytes = std::fs::read(entry.join("outcome.json")).ok()?;
        let kept: KeptRun = serde_json::from_slice(&bytes).ok()?;
        let mut outputs = kept.outputs;
        for (name, value) in &mut outputs {
            let (Value::File(path) | Value::Dir(path)) = value else {
                continue;
            };
            let target = destination.join(name);
            copy_any(&entry.join("files").join(name), &target).ok()?;
            *path = target;
        }
        Some(RunOutcome {
            exit_code: kept.exit_code,
            signal: kept.signal,
            stdout: kept.stdout,
            stderr: kept.stderr,
            timed_out: kept.timed_out,
            memory_exceeded: kept.memory_exceeded,
            cpu_exceeded: kept.cpu_exceeded,
            duration: kept.duration,
            outputs: Ok(outputs),
            docker_image: kept.docker_image,
        })
    }

    /// Keeps a successful script run (outputs read back) with copies of its file outputs.
    pub fn keep_run(&self, key: &OutcomeKey, outcome: &RunOutcome) {
        let Ok(outputs) = &outcome.outputs else {
            return;
        };
        if !outcome.success() {
            return;
        }
        let files: BTreeMap<String, PathBuf> = outputs
            .iter()
            .filter_map(|(name, value)| match value {
                Value::File(path) | Value::Dir(path) => Some((name.clone(), path.clone())),
                _ => None,
            })
            .collect();
        let kept = KeptRun {
            exit_code: outcome.exit_code,
            signal: outcome.signal,
            stdout: outcome.stdout.clone(),
            stderr: outcome.stderr.clone(),
            timed_out: outcome.timed_out,
            memory_exceeded: outcome.memory_exceeded,
            cpu_exceeded: outcome.cpu_exceeded,
            duration: outcome.duration,
            outputs: outputs.clone(),
            docker_image: outcome.docker_image.clone(),
        };
        let written = serde_json::to_vec(&kept)
            .map_err(std::io::Error::other)
            .and_then(|json| self.put(key, &json, &files));
        if let Err(error) = written {
            tracing::warn!(%error, "cannot write to the outcome cache");
        }
    }

    fn put(
        &self,
        key: &OutcomeKey,
        json: &[u8],
        files: &BTreeMap<String, PathBuf>,
    ) -> std::io::Result<()> {
        let entry = self.entry(key);
        let parent = entry.parent().unwrap_or(&self.dir);
        std::fs::create_dir_all(parent)?;
        let staging = tempfile::tempdir_in(parent)?;
        std::fs::write(staging.path().join("outcome.json"), json)?;
        for (name, path) in files {
            copy_any(path, &staging.path().join("files").join(name))?;
        }
        if entry.exists() {
            std::fs::remove_dir_all(&entry)?;
        }
        std::fs::rename(staging.keep(), &entry)
    }
}

/// The test run, or with `--reuse` the kept report of an identical one (same files,
/// environment, input bytes, backend, limits and network).
pub(crate) async fn run_pytest_or_reuse(
    sandbox: &Sandbox,
    spec: &PytestSpec,
    work: &Path,
    options: &SandboxOptions,
) -> Result<TestReport, SandboxError> {
    if !options.reuse {
        return sandbox.run_pytest(spec, work).await;
    }
    let mut key = OutcomeKey::new("tests");
    key.text(&spec.env.id.0)
        .text(options.backend.name())
        .text(&format!("{:?}", spec.limits))
        .text(&spec.network.to_string())
        .variables(&spec.env_vars, &spec.secrets);
    for file in &spec.files {
        key.text(&file.name).text(&file.contents);
    }
    for input in &spec.inputs {
        key.text(&input.name);
        if let Value::File(path) | Value::Dir(path) = &input.value {
            key.path(path).map_err(|source| SandboxError::Io {
                action: "reading",
                path: path.clone(),
                source,
            })?;
        }
    }
    let cache = OutcomeCache::new(OutcomeCache::default_dir());
    if let Some(report) = cache.tests(&key) {
        tracing::warn!(
            "--reuse: an identical test run's outcome was served from the cache (not run again)"
        );
        return Ok(report);
    }
    let report = sandbox.run_pytest(spec, work).await?;
    cache.keep_tests(&key, &report);
    Ok(report)
}

fn copy_any(from: &Path, to: &Path) -> std::io::Result<()> {
    if let Some(parent) = to.parent() {
        std::fs::create_dir_all(parent)?;
    }
    if from.is_dir() {
        std::fs::create_dir_all(to)?;
        for entry in std::fs::read_dir(from)? {
            let entry = entry?;
            copy_any(&entry.path(), &to.join(entry.file_name()))?;
        }
        Ok(())
    } else {
        std::fs::copy(from, to).map(|_| ())
    }
}

#[cfg(test)]
mod variable_tests {
    use super::*;

    fn key(env: &[(&str, &str)], secrets: &[(&str, &str)]) -> String {
        let env: BTreeMap<String, String> = env
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        let secrets: Vec<_> = secrets
            .iter()
            .map(|(k, v)| autocoder_sandbox::Secret::new(*k, *v))
            .collect();
        OutcomeKey::new("tests").variables(&env, &secrets).hex()
    }

    #[test]
    fn another_env_value_or_secret_value_is_another_key() {
        let base = key(&[("MODE", "a")], &[("TOKEN", "one")]);
        assert_eq!(base, key(&[("MODE", "a")], &[("TOKEN", "one")]));
        assert_ne!(base, key(&[("MODE", "b")], &[("TOKEN", "one")]));
        assert_ne!(base, key(&[("MODE", "a")], &[("TOKEN", "two")]));
        assert!(!base.contains("one"));
    }
}
