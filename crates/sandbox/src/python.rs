//! Finding and asking a Python interpreter about itself.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{LazyLock, Mutex};
use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};

use crate::error::SandboxError;
use crate::exec;

/// The environment variable naming the default interpreter (else `python3` on `PATH`).
pub const PYTHON_ENV_VAR: &str = "AUTOCODER_PYTHON";

const PROBE_PY: &str = include_str!("helpers/probe.py");

/// Which interpreter environments are built on. uv cannot download interpreters here, so it is
/// always an existing one.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum PythonSpec {
    /// `$AUTOCODER_PYTHON`, else `python3` found on `PATH`, resolved to its real path.
    #[default]
    Default,
    /// This interpreter (a path, or a command name looked up on `PATH`).
    Path(PathBuf),
}

impl PythonSpec {
    /// The command to start, before resolution.
    pub fn command(&self) -> PathBuf {
        match self {
            Self::Default => std::env::var_os(PYTHON_ENV_VAR)
                .map_or_else(|| PathBuf::from("python3"), PathBuf::from),
            Self::Path(p) => p.clone(),
        }
    }
}

/// A resolved interpreter, as it describes itself.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Interpreter {
    /// The real path of the executable (symlinks and pyenv shims resolved).
    pub executable: PathBuf,
    /// `major.minor.micro`.
    pub version: String,
    /// `sys.prefix` (the venv, for a venv's interpreter).
    pub prefix: PathBuf,
    /// `sys.base_prefix`: the installation whose files must be visible inside a sandbox.
    pub base_prefix: PathBuf,
}

impl Interpreter {
    /// Starts `python` and asks it for its real path, version and prefixes.
    pub async fn probe(python: &Path) -> Result<Self, SandboxError> {
        let (stdout, _) = run_helper(python, PROBE_PY, &[]).await?;
        serde_json::from_str(stdout.trim()).map_err(|source| SandboxError::Json {
            what: format!("the interpreter probe of {}", python.display()),
            source,
        })
    }

    /// [`Self::probe`], remembered per process while the interpreter file is unchanged (an
    /// environment-cache hit then starts no process at all).
    pub async fn probe_cached(python: &Path) -> Result<Self, SandboxError> {
        type Seen = HashMap<PathBuf, (SystemTime, Interpreter)>;
        static SEEN: LazyLock<Mutex<Seen>> = LazyLock::new(Mutex::default);
        let file = if python.components().count() > 1 {
            Some(python.to_path_buf())
        } else {
            crate::cache::which(&python.to_string_lossy())
        };
        let stamp = file
            .as_ref()
            .and_then(|f| std::fs::metadata(f).and_then(|m| m.modified()).ok());
        if let (Some(file), Some(stamp)) = (&file, stamp)
            && let Some((seen, interp)) = SEEN.lock().ok().and_then(|m| m.get(file).cloned())
            && seen == stamp
        {
            return Ok(interp);
        }
        let interp = Self::probe(python).await?;
        if let (Some(file), Some(stamp), Ok(mut seen)) = (file, stamp, SEEN.lock()) {
            seen.insert(file, (stamp, interp.clone()));
        }
        Ok(interp)
    }

    /// `major.minor` of [`Self::version`].
    pub fn minor_version(&self) -> &str {
        match self.version.rmatch_indices('.').next() {
            Some((i, _)) if self.version[..i].contains('.') => &self.version[..i],
            _ => &self.version,
        }
    }
}

/// Runs one of the crate's helper scripts with `python -I` (isolated from the caller's Python
/// environment variables and user site) and returns its stdout and stderr.
pub(crate) async fn run_helper(
    python: &Path,
    script: &str,
    args: &[&std::ffi::OsStr],
) -> Result<(String, String), SandboxError> {
    let mut cmd = exec::command(python);
    cmd.arg("-I").arg("-c").arg(script).args(args);
    let done = exec::run(cmd, 64 << 20, Some(Duration::from_secs(60)), false)
        .await
        .map_err(|e| SandboxError::PythonNotUsable {
            python: python.display().to_string(),
            reason: e.to_string(),
        })?;
    match done.status {
        Some(s) if s.success() => Ok((done.stdout, done.stderr)),
        _ => Err(SandboxError::PythonNotUsable {
            python: python.display().to_string(),
            reason: format!("it failed ({:?}): {}", done.status, done.stderr.trim()),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn minor_version_drops_the_micro() {
        let i = Interpreter {
            executable: PathBuf::from("/x"),
            version: "3.11.7".into(),
            prefix: PathBuf::from("/"),
            base_prefix: PathBuf::from("/"),
        };
        assert_eq!(i.minor_version(), "3.11");
    }
}
