//! Cleaning up on every exit. Each run registers what outlives a plain `Drop` (Docker containers,
//! whose removal needs the engine; cgroups, which stay busy until the kernel has reaped their
//! processes) and unregisters it once removed. A caller that cancels runs, on SIGINT or SIGTERM,
//! calls [`shutdown`] before exiting; temporary directories go with their `TempDir` guards.
//!
//! What a killed process (SIGKILL, a crash) leaves is found by [`leftovers`] (`sandbox doctor`)
//! and removed by [`clean`] (`sandbox clean`): temporary directories named
//! `autocoder-*-<pid>-*`, cgroups `autocoder-<pid>-<n>` and containers labelled with the pid, all
//! of a process that no longer runs.

use std::path::{Path, PathBuf};
use std::sync::{LazyLock, Mutex};
use std::time::Duration;

use serde::Serialize;

use crate::error::SandboxError;

#[derive(Debug, Default)]
struct Live {
    cgroups: Vec<PathBuf>,
    containers: Vec<String>,
}

static LIVE: LazyLock<Mutex<Live>> = LazyLock::new(Mutex::default);

fn with_live(f: impl FnOnce(&mut Live)) {
    if let Ok(mut live) = LIVE.lock() {
        f(&mut live);
    }
}

pub(crate) fn track_cgroup(dir: &Path) {
    with_live(|l| l.cgroups.push(dir.to_path_buf()));
}

pub(crate) fn untrack_cgroup(dir: &Path) {
    with_live(|l| l.cgroups.retain(|d| d != dir));
}

pub(crate) fn track_container(name: &str) {
    with_live(|l| l.containers.push(name.to_owned()));
}

pub(crate) fn untrack_container(name: &str) {
    with_live(|l| l.containers.retain(|c| c != name));
}

/// Stops and removes this process's containers and removes its cgroups: call it after
/// cancelling runs (on SIGINT/SIGTERM), before exiting. Bounded to about ten seconds.
pub async fn shutdown() {
    let (cgroups, containers) = match LIVE.lock() {
        Ok(mut live) => (
            std::mem::take(&mut live.cgroups),
            std::mem::take(&mut live.containers),
        ),
        Err(_) => return,
    };
    let work = async {
        if !containers.is_empty()
            && let Ok(docker) = crate::docker::connect().await
        {
            for name in &containers {
                crate::docker::remove(&docker, name).await;
            }
            // A create the engine was still serving when the run was cancelled: look again
            // once it has had time to finish.
            crate::docker::remove_own(&docker).await;
            tokio::time::sleep(Duration::from_millis(300)).await;
            crate::docker::remove_own(&docker).await;
        }
        crate::cgroup::remove_dirs(cgroups).await;
    };
    if tokio::time::timeout(Duration::from_secs(10), work)
        .await
        .is_err()
    {
        tracing::warn!("cleanup did not finish; `autocoder sandbox clean` removes what is left");
    }
}

/// Something a dead autocoder process left behind.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Leftover {
    /// `directory`, `cgroup` or `container`.
    pub kind: &'static str,
    /// Its path, or the container's id.
    pub name: String,
    /// The process that made it.
    pub pid: u32,
}

/// The prefix of every temporary directory autocoder makes (`autocoder-<what>-<pid>-`).
pub(crate) const TEMP_PREFIX: &str = "autocoder-";

/// A temporary directory for `what` (`run`, `stage` ...), named so that [`leftovers`] finds it
/// if this process dies before removing it.
pub fn temp_dir(what: &str) -> Result<tempfile::TempDir, SandboxError> {
    tempfile::Builder::new()
        .prefix(&format!("{TEMP_PREFIX}{what}-{}-", std::process::id()))
        .tempdir()
        .map_err(SandboxError::io(
            "creating a temporary directory in",
            std::env::temp_dir(),
        ))
}

fn alive(pid: u32) -> bool {
    Path::new("/proc").join(pid.to_string()).exists()
}

/// The pid in a name `autocoder-<what>-<pid>-...`.
fn pid_in_temp_name(name: &str) -> Option<u32> {
    let rest = name.strip_prefix(TEMP_PREFIX)?;
    let mut parts = rest.split('-');
    let _what = parts.next()?;
    parts.next()?.parse().ok()
}

/// What dead autocoder processes left: temporary directories, cgroups and Docker containers.
pub async fn leftovers() -> Vec<Leftover> {
    let mut found = Vec::new();
    let tmp = std::env::temp_dir();
    for entry in std::fs::read_dir(&tmp).into_iter().flatten().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if let Some(pid) = pid_in_temp_name(&name)
            && !alive(pid)
            && entry.file_type().is_ok_and(|t| t.is_dir())
        {
            found.push(Leftover {
                kind: "directory",
                name: entry.path().display().to_string(),
                pid,
            });
        }
    }
    for (dir, pid) in crate::cgroup::existing() {
        if !alive(pid) {
            found.push(Leftover {
                kind: "cgroup",
                name: dir.display().to_string(),
                pid,
            });
        }
    }
    if let Ok(docker) = crate::docker::connect().await {
        for (id, pid) in crate::docker::labelled_containers(&docker).await {
            if !pid.is_some_and(alive) {
                found.push(Leftover {
                    kind: "container",
                    name: id,
                    pid: pid.unwrap_or(0),
                });
            }
        }
    }
    found
}

/// Removes `items` (from [`leftovers`]); returns each with the error that kept it, if any.
pub async fn clean(items: &[Leftover]) -> Vec<(Leftover, Option<String>)> {
    let docker = if items.iter().any(|i| i.kind == "container") {
        crate::docker::connect().await.ok()
    } else {
        None
    };
    let mut done = Vec::new();
    for item in items {
        let error = match item.kind {
            "directory" => std::fs::remove_dir_all(&item.name)
                .err()
                .map(|e| e.to_string()),
            "cgroup" => {
                crate::cgroup::remove_dirs(vec![PathBuf::from(&item.name)]).await;
                Path::new(&item.name)
                    .exists()
                    .then(|| "still busy".to_owned())
            }
            _ => match &docker {
                Some(d) => {
                    crate::docker::remove(d, &item.name).await;
                    None
                }
                None => Some("the Docker engine does not answer".to_owned()),
            },
        };
        done.push((item.clone(), error));
    }
    done
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn temporary_directories_carry_the_pid() {
        let dir = temp_dir("run").unwrap();
        let name = dir
            .path()
            .file_name()
            .unwrap()
            .to_string_lossy()
            .into_owned();
        assert_eq!(pid_in_temp_name(&name), Some(std::process::id()));
        assert_eq!(pid_in_temp_name("autocoder-run-x-1"), None);
        assert_eq!(pid_in_temp_name("other-run-1-x"), None);
    }
}
