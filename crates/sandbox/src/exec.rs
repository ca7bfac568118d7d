//! Starting a process, capturing its output with a size cap, and killing it on a wall-clock timeout.

use std::process::{ExitStatus, Stdio};
use std::time::{Duration, Instant};

use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::process::Command;

use crate::child::ChildSetup;
use crate::error::SandboxError;

/// What a finished (or killed) process left behind.
#[derive(Debug, Clone)]
pub(crate) struct Finished {
    pub(crate) status: Option<ExitStatus>,
    pub(crate) stdout: String,
    pub(crate) stderr: String,
    pub(crate) timed_out: bool,
    pub(crate) duration: Duration,
}

/// Builds a command for `program`; no descriptor above 2 of ours reaches it. The only place in
/// the workspace that creates processes.
pub(crate) fn command(program: impl AsRef<std::ffi::OsStr>) -> Command {
    sandboxed(program, ChildSetup::default())
}

/// Builds a command for `program` whose child does `setup` before `exec` (joins the run's
/// cgroup, keeps the seccomp program's descriptor); no other descriptor above 2 reaches it.
#[allow(
    clippy::disallowed_methods,
    reason = "autocoder-sandbox is the crate that starts processes"
)]
pub(crate) fn sandboxed(program: impl AsRef<std::ffi::OsStr>, setup: ChildSetup) -> Command {
    let mut cmd = Command::new(program);
    cmd.kill_on_drop(true);
    crate::child::install(&mut cmd, setup);
    cmd
}

/// Runs `cmd` to completion, capturing stdout and stderr (each cut after `cap` bytes, with a
/// `[... truncated N bytes]` marker) and killing it after `timeout`. With `own_group`, the process
/// leads a new process group and the whole group is killed on timeout.
pub(crate) async fn run(
    mut cmd: Command,
    cap: usize,
    timeout: Option<Duration>,
    own_group: bool,
) -> Result<Finished, SandboxError> {
    let program = cmd.as_std().get_program().display().to_string();
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if own_group {
        cmd.process_group(0);
    }
    let start = Instant::now();
    let mut child = cmd.spawn().map_err(|source| SandboxError::Spawn {
        program: program.clone(),
        source,
    })?;
    let out = child
        .stdout
        .take()
        .map(|s| tokio::spawn(read_capped(s, cap)));
    let err = child
        .stderr
        .take()
        .map(|s| tokio::spawn(read_capped(s, cap)));
    let waited = match timeout {
        Some(limit) => tokio::time::timeout(limit, child.wait()).await.ok(),
        None => Some(child.wait().await),
    };
    let (status, timed_out) = if let Some(status) = waited {
        let status = status.map_err(|source| SandboxError::Spawn { program, source })?;
        (Some(status), false)
    } else {
        tracing::debug!(
            ?timeout,
            "wall-clock timeout reached, killing the process tree"
        );
        if own_group && let Some(pid) = child.id() {
            kill_group(pid).await;
        }
        // Killing bubblewrap kills its pid namespace, and with it every process inside.
        let _ = child.kill().await;
        (None, true)
    };
    let duration = start.elapsed();
    let stdout = join_capped(out).await?;
    let stderr = join_capped(err).await?;
    Ok(Finished {
        status,
        stdout,
        stderr,
        timed_out,
        duration,
    })
}

async fn join_capped(
    handle: Option<tokio::task::JoinHandle<String>>,
) -> Result<String, SandboxError> {
    match handle {
        // Orphaned grandchildren may keep the pipe open; don't wait for them forever.
        Some(h) => match tokio::time::timeout(Duration::from_secs(5), h).await {
            Ok(joined) => joined.map_err(|e| SandboxError::Task(e.to_string())),
            Err(_) => Ok(String::from(
                "[... output stream left open by a stray process]",
            )),
        },
        None => Ok(String::new()),
    }
}

/// Sends SIGKILL to the process group `pgid` (through `kill(1)`, so the crate needs no `unsafe`).
async fn kill_group(pgid: u32) {
    let result = command("kill")
        .arg("-KILL")
        .arg("--")
        .arg(format!("-{pgid}"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .await;
    if let Err(e) = result {
        tracing::warn!(pgid, error = %e, "could not kill the process group");
    }
}

/// Reads a stream to its end, keeping the first `cap` bytes and counting the rest.
async fn read_capped(mut stream: impl AsyncRead + Unpin, cap: usize) -> String {
    let mut kept = Vec::new();
    let mut dropped: u64 = 0;
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        match stream.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                let room = cap.saturating_sub(kept.len());
                let take = room.min(n);
                kept.extend_from_slice(&buf[..take]);
                dropped += (n - take) as u64;
            }
        }
    }
    let mut text = String::from_utf8_lossy(&kept).into_owned();
    if dropped > 0 {
        if !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str("[... truncated ");
        text.push_str(&dropped.to_string());
        text.push_str(" bytes]");
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn caps_output_with_a_marker() {
        let text = read_capped(&b"0123456789"[..], 4).await;
        assert_eq!(text, "0123\n[... truncated 6 bytes]");
        let text = read_capped(&b"01"[..], 4).await;
        assert_eq!(text, "01");
    }
}
