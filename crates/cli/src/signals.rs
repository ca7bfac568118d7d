//! SIGINT and SIGTERM cancel the running command instead of killing the process outright, so
//! that what the sandbox made is removed before autocoder exits: dropping the command's future
//! removes its temporary directories and kills its processes, then
//! [`autocoder_sandbox::shutdown`] stops and removes its Docker containers and cgroups.

use std::future::Future;

use tokio::signal::unix::{SignalKind, signal};

/// Runs `work` to its end, or until SIGINT or SIGTERM; then cancels it, cleans up and returns
/// the shell's exit code for the signal (130, 143).
pub(crate) async fn cancel_on_signal(
    work: impl Future<Output = anyhow::Result<i32>>,
) -> anyhow::Result<i32> {
    let mut interrupt = signal(SignalKind::interrupt())?;
    let mut terminate = signal(SignalKind::terminate())?;
    let mut work = Box::pin(work);
    let (name, code) = tokio::select! {
        done = &mut work => return done,
        _ = interrupt.recv() => ("SIGINT", 130),
        _ = terminate.recv() => ("SIGTERM", 143),
    };
    tracing::warn!("{name}: stopping the run and cleaning up");
    drop(work);
    autocoder_sandbox::shutdown().await;
    Ok(code)
}
