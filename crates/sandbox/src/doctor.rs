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

/// Checks the interpreter, uv, every backend (bubblewrap with a real namespaced start under the
/// seccomp filter), whether runs get a cgroup for whole-run limits, and what dead autocoder
/// processes left behind.
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
            (Ok(()), Backend::Bwrap) => format!(
                "works: new pid, net, ipc and uts namespaces; seccomp denies {} calls",
                crate::seccomp::denied_calls().len()
            ),
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
    found.push(cgroup_finding().await);
    let left = crate::cleanup::leftovers().await;
    found.push(Finding {
        name: "leftovers".into(),
        ok: left.is_empty(),
        detail: if left.is_empty() {
            "none".into()
        } else {
            let items: Vec<String> = left
                .iter()
                .map(|l| format!("{} {} (pid {})", l.kind, l.name, l.pid))
                .collect();
            format!(
                "left by dead autocoder processes: {}; `autocoder sandbox clean` removes them",
                items.join(", ")
            )
        },
    });
    found
}

/// Whether runs get a cgroup (made and removed here to be sure), and which.
async fn cgroup_finding() -> Finding {
    let (ok, detail) = match crate::cgroup::RunCgroup::create(&crate::Limits::default()) {
        Ok(cgroup) => {
            let version = match crate::cgroup::layout() {
                Ok(l) => {
                    let names: Vec<&str> = l.parents.iter().map(|(c, _)| *c).collect();
                    match l.version {
                        crate::cgroup::Version::V1 => format!("v1 ({})", names.join(", ")),
                        crate::cgroup::Version::V2 => "v2".to_owned(),
                    }
                }
                Err(_) => String::new(),
            };
            cgroup.remove().await;
            (
                true,
                format!("{version}: memory, processes and CPU are limited for each run as a whole"),
            )
        }
        Err(reason) => (
            false,
            format!(
                "{reason}; runs fall back to per-process rlimits: memory and processes are limited per process (not in total) and the CPU quota is not enforced"
            ),
        ),
    };
    Finding {
        name: "cgroup".into(),
        ok,
        detail,
    }
}

/// Starts `true` in the namespaces the bubblewrap backend uses.
async fn bwrap_smoke() -> Result<(), SandboxError> {
    use std::os::fd::AsRawFd;
    Sandbox::new(Backend::Bwrap).check()?;
    let reader =
        crate::host::pipe_holding(&crate::seccomp::bpf_program(false)?, "the seccomp filter")?;
    let fd = reader.as_raw_fd();
    let mut cmd = exec::sandboxed(
        "bwrap",
        crate::child::ChildSetup {
            join: Vec::new(),
            keep: vec![fd],
            rlimits: Vec::new(),
        },
    );
    cmd.args(["--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev"])
        .args(["--seccomp", &fd.to_string()])
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
    drop(reader);
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
