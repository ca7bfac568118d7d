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

/// Whether `text` is a Python version (`3.12`, `3.12.1`) rather than a path or command.
pub fn is_python_version(text: &str) -> bool {
    let parts: Vec<&str> = text.split('.').collect();
    (2..=3).contains(&parts.len())
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()))
}

/// Finds an installed interpreter of `version` (`3.12` for any 3.12, `3.12.1` for exactly that)
/// without any network: pyenv's versions, the interpreters uv installed (its managed Pythons)
/// and `python3.12` on `PATH`, newest first; each candidate is asked its version.
pub async fn find_python_version(version: &str) -> Result<PathBuf, SandboxError> {
    let minor: String = version.split('.').take(2).collect::<Vec<_>>().join(".");
    let matches = |found: &str| found == version || found.starts_with(&format!("{version}."));
    let mut looked = Vec::new();
    let mut candidates: Vec<(Vec<u32>, PathBuf)> = Vec::new();
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let pyenv = std::env::var_os("PYENV_ROOT")
        .map(PathBuf::from)
        .or_else(|| home.as_ref().map(|h| h.join(".pyenv")))
        .map(|root| root.join("versions"));
    let uv = std::env::var_os("UV_PYTHON_INSTALL_DIR")
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("XDG_DATA_HOME")
                .map(PathBuf::from)
                .or_else(|| home.as_ref().map(|h| h.join(".local/share")))
                .map(|d| d.join("uv/python"))
        });
    for (dir, prefix) in [(pyenv, ""), (uv, "cpython-")] {
        let Some(dir) = dir else { continue };
        looked.push(dir.display().to_string());
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let Some(found) = name.strip_prefix(prefix) else {
                continue;
            };
            let found = found.split('-').next().unwrap_or_default();
            if matches(found) {
                let key = found.split('.').filter_map(|p| p.parse().ok()).collect();
                candidates.push((key, entry.path().join("bin").join(format!("python{minor}"))));
            }
        }
    }
    candidates.sort_by(|a, b| b.0.cmp(&a.0));
    let mut paths: Vec<PathBuf> = candidates.into_iter().map(|(_, p)| p).collect();
    looked.push("PATH".to_owned());
    if let Some(on_path) = crate::cache::which(&format!("python{minor}")) {
        paths.push(on_path);
    }
    for path in paths.into_iter().filter(|p| p.is_file()) {
        match Interpreter::probe(&path).await {
            Ok(found) if matches(&found.version) => return Ok(found.executable),
            Ok(_) => {}
            Err(err) => tracing::debug!(path = %path.display(), %err, "not a usable interpreter"),
        }
    }
    Err(SandboxError::PythonVersionNotFound {
        version: version.to_owned(),
        looked: looked.join(", "),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_are_told_from_paths() {
        assert!(is_python_version("3.12"));
        assert!(is_python_version("3.12.1"));
        for other in [
            "3",
            "python3.12",
            "/usr/bin/python3",
            "3.x",
            "3..1",
            "3.12.1.4",
        ] {
            assert!(!is_python_version(other), "{other}");
        }
    }

    #[tokio::test]
    async fn a_missing_version_says_how_to_get_one() {
        let err = find_python_version("2.1").await.unwrap_err().to_string();
        assert!(
            err.contains("Python 2.1 is not installed") && err.contains("uv python install 2.1"),
            "{err}"
        );
    }

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
