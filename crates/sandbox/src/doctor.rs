//! Which backends work on this machine, and why not: for `autocoder sandbox doctor`.

use std::time::Duration;

use serde::Serialize;

use crate::cache::which;
use crate::error::SandboxError;
use crate::exec;
use crate::python::{Interpreter, PythonSpec};
use crate::sandbox::{Backend, Sandbox};

/// One line of the doctor's report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// What was checked (`bwrap`, `docker`, `none`, `python`, `uv`).
    pub name: String,
    /// Whether it works.
    pub ok: bool,
    /// What was found, or why it does not work and how to fix it.
    pub detail: String,
}

/// Checks the interpreter, uv and every backend (bubblewrap with a real namespaced start).
pub async fn doctor() -> Vec<Finding> {
    let mut found = Vec::new();
    let python = PythonSpec::Default.command();
    found.push(match Interpreter::probe(&python).await {
        Ok(i) => Finding {
            name: "python".into(),
            ok: true,
            detail: format!("{} ({})", i.executable.display(), i.version),
        },
        Err(e) => Finding {
            name: "python".into(),
            ok: false,
            detail: e.to_string(),
        },
    });
    let uv = std::env::var_os(crate::UV_ENV_VAR)
        .map(std::path::PathBuf::from)
        .or_else(|| which("uv"));
    found.push(match uv {
        Some(p) => Finding { name: "uv".into(), ok: true, detail: p.display().to_string() },
        None => Finding {
            name: "uv".into(),
            ok: false,
            detail: "not on PATH: it will be installed into the environment cache with pip on first use (or set AUTOCODER_UV)".into(),
        },
    });
    for backend in [Backend::Bwrap, Backend::Docker, Backend::None] {
        let result = match backend {
            Backend::Bwrap => bwrap_smoke().await,
            _ => Sandbox::new(backend).check_ready().await,
        };
        let detail = match (&result, backend) {
            (Ok(()), Backend::Bwrap) => "works: new pid, net, ipc and uts namespaces".to_owned(),
            (Ok(()), Backend::Docker) => {
                "engine answers; the base image is built on first use".to_owned()
            }
            (Ok(()), _) => {
                "available, but gives NO isolation (rlimits and a cleared environment only)"
                    .to_owned()
            }
            (Err(e), _) => e.to_string(),
        };
        found.push(Finding {
            name: backend.name().into(),
            ok: result.is_ok(),
            detail,
        });
    }
    found
}

/// Starts `true` in the namespaces the bubblewrap backend uses.
async fn bwrap_smoke() -> Result<(), SandboxError> {
    Sandbox::new(Backend::Bwrap).check()?;
    let mut cmd = exec::command("bwrap");
    cmd.args(["--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev"])
        .args([
            "--unshare-pid",
            "--unshare-net",
            "--unshare-ipc",
            "--unshare-uts",
            "--die-with-parent",
        ])
        .args(if crate::sandbox::is_root() {
            &[][..]
        } else {
            &["--unshare-user"][..]
        })
        .args(["--", "true"]);
    let done = exec::run(cmd, 1 << 16, Some(Duration::from_secs(10)), false).await?;
    if done.status.is_some_and(|s| s.success()) {
        Ok(())
    } else {
        Err(SandboxError::BackendUnavailable {
            backend: "bwrap",
            reason: format!(
                "bubblewrap cannot create namespaces here ({}); enable unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1) or use --sandbox docker / none",
                done.stderr.trim()
            ),
        })
    }
}
