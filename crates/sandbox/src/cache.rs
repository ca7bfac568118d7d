//! The environment cache: builds each environment once (uv, else venv + pip), atomically, with
//! concurrent builders of the same environment waiting on a file lock.

use std::path::{Path, PathBuf};
use std::sync::LazyLock;
use std::time::Duration;

use regex::Regex;

use crate::env::{Env, EnvSpec};
use crate::error::SandboxError;
use crate::exec;
use crate::python::Interpreter;

/// Overrides the cache directory (default `$XDG_CACHE_HOME/autocoder/envs`).
pub const CACHE_DIR_ENV_VAR: &str = "AUTOCODER_ENV_CACHE";
/// Names the uv binary to use (default: `uv` on `PATH`, beside the interpreter, or installed).
pub const UV_ENV_VAR: &str = "AUTOCODER_UV";

const META_FILE: &str = "autocoder-env.json";
const LOCK_FILE: &str = "requirements.lock";
const INSTALL_TIMEOUT: Duration = Duration::from_secs(900);

/// Builds and reuses environments under one directory.
#[derive(Debug, Clone)]
pub struct EnvCache {
    dir: PathBuf,
    uv: Option<PathBuf>,
    uv_cache: Option<PathBuf>,
    pip_only: bool,
}

impl EnvCache {
    /// A cache in `dir` (created when missing).
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Self {
            dir: dir.into(),
            uv: None,
            uv_cache: None,
            pip_only: false,
        }
    }

    /// `$AUTOCODER_ENV_CACHE`, else `$XDG_CACHE_HOME/autocoder/envs`, else
    /// `$HOME/.cache/autocoder/envs`. A variable set to nothing counts as unset, and a relative
    /// directory is taken from the current one: environments hold absolute interpreter paths,
    /// and an empty value once put them in whatever directory autocoder ran from.
    pub fn default_dir() -> PathBuf {
        let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
        let dir = var(CACHE_DIR_ENV_VAR).map_or_else(
            || {
                var("XDG_CACHE_HOME")
                    .map(PathBuf::from)
                    .or_else(|| var("HOME").map(|h| PathBuf::from(h).join(".cache")))
                    .unwrap_or_else(std::env::temp_dir)
                    .join("autocoder")
                    .join("envs")
            },
            PathBuf::from,
        );
        std::path::absolute(&dir).unwrap_or(dir)
    }

    /// Uses this uv binary.
    #[must_use]
    pub fn with_uv(mut self, uv: impl Into<PathBuf>) -> Self {
        self.uv = Some(uv.into());
        self
    }

    /// Gives uv this cache directory (`UV_CACHE_DIR`).
    #[must_use]
    pub fn with_uv_cache(mut self, dir: impl Into<PathBuf>) -> Self {
        self.uv_cache = Some(dir.into());
        self
    }

    /// Builds with venv + pip even when uv is available (slow; for machines where uv misbehaves).
    #[must_use]
    pub fn with_pip_only(mut self) -> Self {
        self.pip_only = true;
        self
    }

    /// The cache's directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Returns the environment for `spec`, building it first when it is not cached. Its
    /// [`Env::system_packages`] are the spec's: they are installed (Docker) or checked (host
    /// backends) by the [`crate::Sandbox`], not here.
    pub async fn ensure(&self, spec: &EnvSpec) -> Result<Env, SandboxError> {
        let mut env = self.ensure_venv(spec).await?;
        env.system_packages.clone_from(&spec.system_packages);
        Ok(env)
    }

    async fn ensure_venv(&self, spec: &EnvSpec) -> Result<Env, SandboxError> {
        let interpreter = Interpreter::probe_cached(&spec.python.command()).await?;
        let id = spec.id(&interpreter);
        let root = self.dir.join(&id.0);
        if let Some(env) = read_meta(&root)? {
            tracing::debug!(%id, "environment cache hit");
            return Ok(env);
        }
        std::fs::create_dir_all(&self.dir).map_err(SandboxError::io("creating", &self.dir))?;
        let lock_path = self.dir.join(format!("{id}.lock"));
        let lock = tokio::task::spawn_blocking(move || lock_exclusive(&lock_path))
            .await
            .map_err(|e| SandboxError::Task(e.to_string()))??;
        // Someone else may have built it while we waited.
        if let Some(env) = read_meta(&root)? {
            tracing::debug!(%id, "environment built by a concurrent builder");
            return Ok(env);
        }
        tracing::info!(%id, packages = %join(spec), "building a new environment");
        let staging = tempfile::Builder::new()
            .prefix(&format!(".build-{id}-"))
            .tempdir_in(&self.dir)
            .map_err(SandboxError::io(
                "creating a staging directory in",
                &self.dir,
            ))?;
        let venv = staging.path().join("venv");
        let requirements = staging.path().join("requirements.in");
        let listing: String = spec.packages.iter().fold(String::new(), |mut acc, r| {
            acc.push_str(&r.to_string());
            acc.push('\n');
            acc
        });
        std::fs::write(&requirements, listing)
            .map_err(SandboxError::io("writing", &requirements))?;
        let uv = if self.pip_only {
            None
        } else {
            self.find_uv(&interpreter).await
        };
        let resolved = match uv {
            Some(uv) => {
                self.build_with_uv(&uv, &interpreter, &venv, &requirements, spec)
                    .await?
            }
            None => build_with_pip(&interpreter, &venv, &requirements, spec).await?,
        };
        let venv_python = venv.join("bin").join("python");
        let base = Interpreter::probe(&venv_python).await?;
        let mut env = Env {
            id: id.clone(),
            root: root.clone(),
            python: root.join("bin").join("python"),
            base_prefix: base.base_prefix,
            python_version: base.version,
            system_packages: Vec::new(),
            resolved,
            freshly_built: false,
        };
        let lock_text = env.resolved.iter().fold(String::new(), |mut acc, (n, v)| {
            acc.push_str(n);
            acc.push_str("==");
            acc.push_str(v);
            acc.push('\n');
            acc
        });
        write(&venv.join(LOCK_FILE), &lock_text)?;
        let meta = serde_json::to_string_pretty(&env).map_err(|source| SandboxError::Json {
            what: "environment metadata".into(),
            source,
        })?;
        write(&venv.join(META_FILE), &meta)?;
        std::fs::rename(&venv, &root)
            .map_err(SandboxError::io("moving the new environment to", &root))?;
        drop(lock);
        env.freshly_built = true;
        Ok(env)
    }

    async fn find_uv(&self, interpreter: &Interpreter) -> Option<PathBuf> {
        if let Some(uv) = &self.uv {
            return Some(uv.clone());
        }
        if let Some(uv) = std::env::var_os(UV_ENV_VAR) {
            return Some(PathBuf::from(uv));
        }
        if let Some(uv) = which("uv") {
            return Some(uv);
        }
        let tools = self.dir.join(".tools");
        let tool_uv = tools.join("bin").join("uv");
        if tool_uv.is_file() {
            return Some(tool_uv);
        }
        tracing::warn!(dir = %tools.display(), "uv not found; installing it with pip into the cache");
        let mut venv = exec::command(&interpreter.executable);
        venv.arg("-m").arg("venv").arg(&tools);
        let mut pip = exec::command(tools.join("bin").join("python"));
        pip.args([
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            "uv",
        ]);
        for cmd in [venv, pip] {
            match exec::run(cmd, 1 << 20, Some(INSTALL_TIMEOUT), false).await {
                Ok(done) if done.status.is_some_and(|s| s.success()) => {}
                other => {
                    tracing::warn!(result = ?other.map(|d| d.stderr), "could not install uv; falling back to venv + pip (slow)");
                    return None;
                }
            }
        }
        Some(tool_uv)
    }

    async fn build_with_uv(
        &self,
        uv: &Path,
        interpreter: &Interpreter,
        venv: &Path,
        requirements: &Path,
        spec: &EnvSpec,
    ) -> Result<Vec<(String, String)>, SandboxError> {
        let python = venv.join("bin").join("python");
        let uv_cmd = |args: &[&std::ffi::OsStr]| {
            let mut cmd = exec::command(uv);
            cmd.args(args)
                .env("UV_NO_PROGRESS", "1")
                .env_remove("VIRTUAL_ENV");
            if let Some(cache) = &self.uv_cache {
                cmd.env("UV_CACHE_DIR", cache);
            }
            cmd
        };
        let create = uv_cmd(&[
            "venv".as_ref(),
            "--quiet".as_ref(),
            "--relocatable".as_ref(),
            "--python".as_ref(),
            interpreter.executable.as_os_str(),
            venv.as_os_str(),
        ]);
        checked(create, spec).await?;
        let install = uv_cmd(&[
            "pip".as_ref(),
            "install".as_ref(),
            "--python".as_ref(),
            python.as_os_str(),
            "-r".as_ref(),
            requirements.as_os_str(),
        ]);
        checked(install, spec).await?;
        let freeze = uv_cmd(&[
            "pip".as_ref(),
            "freeze".as_ref(),
            "--python".as_ref(),
            python.as_os_str(),
        ]);
        Ok(parse_freeze(&checked(freeze, spec).await?))
    }
}

async fn build_with_pip(
    interpreter: &Interpreter,
    venv: &Path,
    requirements: &Path,
    spec: &EnvSpec,
) -> Result<Vec<(String, String)>, SandboxError> {
    tracing::warn!("building with venv + pip: slow; install uv to build environments in seconds");
    let python = venv.join("bin").join("python");
    let mut create = exec::command(&interpreter.executable);
    create.arg("-m").arg("venv").arg(venv);
    checked(create, spec).await?;
    let mut install = exec::command(&python);
    install
        .args(["-m", "pip", "install", "--disable-pip-version-check", "-r"])
        .arg(requirements);
    checked(install, spec).await?;
    let mut freeze = exec::command(&python);
    freeze.args(["-m", "pip", "freeze", "--all"]);
    Ok(parse_freeze(&checked(freeze, spec).await?))
}

/// Runs an installer step; a failure becomes [`SandboxError::PackageNotFound`] when the message
/// names a missing package, else [`SandboxError::InstallFailed`].
async fn checked(cmd: tokio::process::Command, spec: &EnvSpec) -> Result<String, SandboxError> {
    let done = exec::run(cmd, 4 << 20, Some(INSTALL_TIMEOUT), false).await?;
    if done.status.is_some_and(|s| s.success()) {
        return Ok(done.stdout);
    }
    let message = if done.timed_out {
        "timed out".to_owned()
    } else {
        done.stderr
    };
    Err(match missing_package(&message) {
        Some(package) => SandboxError::PackageNotFound { package },
        None => SandboxError::InstallFailed {
            packages: join(spec),
            message,
        },
    })
}

/// The distribution a uv or pip message says failed to build (`pandas` for uv's "Failed to
/// build pandas==1.3.5"), when it says.
pub fn failed_package(message: &str) -> Option<String> {
    static PATTERNS: LazyLock<Vec<Regex>> = LazyLock::new(|| {
        compiled(&[
            r"Failed to (?:download and )?build `([A-Za-z0-9][A-Za-z0-9._-]*)",
            r"Failed building wheel for ([A-Za-z0-9][A-Za-z0-9._-]*)",
            r"Failed to build installable wheels for some pyproject\.toml based projects \(([A-Za-z0-9][A-Za-z0-9._-]*)",
        ])
    });
    first_capture(&PATTERNS, message)
}

/// Finds the package a uv or pip message says does not exist.
fn missing_package(message: &str) -> Option<String> {
    static PATTERNS: LazyLock<Vec<Regex>> = LazyLock::new(|| {
        compiled(&[
            r"Because ([A-Za-z0-9][A-Za-z0-9._\-\[\]]*) was not found in the package registry",
            r"No matching distribution found for ([A-Za-z0-9][A-Za-z0-9._\-\[\]]*)",
            r"Could not find a version that satisfies the requirement ([A-Za-z0-9][A-Za-z0-9._\-\[\]]*)",
        ])
    });
    first_capture(&PATTERNS, message)
}

fn compiled(patterns: &[&str]) -> Vec<Regex> {
    patterns.iter().filter_map(|p| Regex::new(p).ok()).collect()
}

/// The first group of the first pattern that matches `message`.
fn first_capture(patterns: &[Regex], message: &str) -> Option<String> {
    patterns
        .iter()
        .find_map(|re| re.captures(message).map(|c| c[1].to_owned()))
}

fn parse_freeze(text: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = text
        .lines()
        .filter_map(|l| l.split_once("=="))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    out.sort();
    out
}

fn read_meta(root: &Path) -> Result<Option<Env>, SandboxError> {
    let path = root.join(META_FILE);
    match std::fs::read_to_string(&path) {
        Ok(text) => serde_json::from_str(&text)
            .map(Some)
            .map_err(|source| SandboxError::Json {
                what: path.display().to_string(),
                source,
            }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(SandboxError::io("reading", path)(e)),
    }
}

pub(crate) fn lock_exclusive(path: &Path) -> Result<std::fs::File, SandboxError> {
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)
        .map_err(SandboxError::io("opening the lock file", path))?;
    fs4::fs_std::FileExt::lock_exclusive(&file).map_err(SandboxError::io("locking", path))?;
    Ok(file)
}

fn write(path: &Path, text: &str) -> Result<(), SandboxError> {
    std::fs::write(path, text).map_err(SandboxError::io("writing", path))
}

fn join(spec: &EnvSpec) -> String {
    spec.packages
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(" ")
}

/// Finds an executable on `PATH`.
pub(crate) fn which(name: &str) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| {
            std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_missing_package_in_installer_messages() {
        let uv = "  × No solution found when resolving dependencies:\n  ╰─▶ Because no-such-pkg-zz was not found in the package registry and you require no-such-pkg-zz, we can conclude that your requirements are unsatisfiable.";
        assert_eq!(missing_package(uv).as_deref(), Some("no-such-pkg-zz"));
        let pip = "ERROR: Could not find a version that satisfies the requirement nopkg (from versions: none)\nERROR: No matching distribution found for nopkg";
        assert_eq!(missing_package(pip).as_deref(), Some("nopkg"));
        assert_eq!(missing_package("network unreachable"), None);
    }

    #[test]
    fn finds_the_package_that_failed_to_build_in_installer_messages() {
        let uv = "Resolved 10 packages in 595ms\n   Building pandas==1.3.5\nerror: Failed to build `pandas==1.3.5`\n  cause: The build backend returned an error";
        assert_eq!(failed_package(uv).as_deref(), Some("pandas"));
        let uv = "error: Failed to download and build `numpy==1.21.0`";
        assert_eq!(failed_package(uv).as_deref(), Some("numpy"));
        let pip = "  ERROR: Failed building wheel for pyodbc\nFailed to build pyodbc";
        assert_eq!(failed_package(pip).as_deref(), Some("pyodbc"));
        assert_eq!(failed_package("network unreachable"), None);
    }

    #[test]
    fn parses_freeze_output() {
        let got = parse_freeze("Pytest==9.2.0\niniconfig==2.1.0\n-e file:///x\n");
        assert_eq!(
            got,
            vec![
                ("iniconfig".into(), "2.1.0".into()),
                ("pytest".into(), "9.2.0".into())
            ]
        );
    }
}
