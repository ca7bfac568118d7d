//! Long calls run on a Tokio runtime with the GIL released. Every 100 ms the calling thread
//! takes the GIL back for a moment to let Python handle its signals: Ctrl-C (a
//! `KeyboardInterrupt`) or a set [`Cancel`] cancels the call the way the command line cancels
//! on SIGINT (`crates/cli/src/signals.rs`): the work is dropped, which kills its processes and
//! removes its temporary directories, then [`autocoder_sandbox::shutdown`] stops and removes
//! its containers and cgroups.

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use pyo3::prelude::*;

use crate::error::Error;

/// How often the calling thread looks for Ctrl-C or a cancel.
const POLL: Duration = Duration::from_millis(100);
/// How long the runtime's leftover tasks get to finish when the call ends.
const SHUTDOWN: Duration = Duration::from_secs(10);

/// A flag that stops a running call (`generate_async` sets it when its task is cancelled).
#[pyclass(module = "autocoder._native", frozen)]
#[derive(Default)]
pub(crate) struct Cancel {
    flag: Arc<AtomicBool>,
}

#[pymethods]
impl Cancel {
    #[new]
    fn new() -> Self {
        Self::default()
    }

    /// Stops the call this flag was given to, at its next check (within 100 ms).
    fn set(&self) {
        self.flag.store(true, Ordering::SeqCst);
    }

    /// Whether [`Cancel::set`] was called.
    fn is_set(&self) -> bool {
        self.flag.load(Ordering::SeqCst)
    }
}

/// Runs the future `work` makes to its end with the GIL released, or until Ctrl-C or
/// `cancel`; then cancels it, cleans up, and returns [`Error::Cancelled`]. The future is made
/// and polled on the calling thread.
pub(crate) fn block_on<T, W, F>(
    py: Python<'_>,
    cancel: Option<&Cancel>,
    work: W,
) -> Result<T, Error>
where
    T: Send,
    W: FnOnce() -> F + Send,
    F: Future<Output = Result<T, Error>>,
{
    let flag = cancel.map(|c| Arc::clone(&c.flag));
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|source| Error::Io {
            action: "start the async runtime in",
            path: std::env::temp_dir(),
            source,
        })?;
    py.detach(|| {
        let result = runtime.block_on(async {
            let mut work = Box::pin(work());
            let mut tick = tokio::time::interval(POLL);
            let interrupt = loop {
                tokio::select! {
                    done = &mut work => return done,
                    _ = tick.tick() => {
                        if flag.as_ref().is_some_and(|f| f.load(Ordering::SeqCst)) {
                            break None;
                        }
                        #[allow(
                            clippy::redundant_closure_for_method_calls,
                            reason = "the method path is not general over the GIL lifetime"
                        )]
                        let signals = Python::attach(|py| py.check_signals());
                        if let Err(interrupt) = signals {
                            break Some(interrupt);
                        }
                    }
                }
            };
            tracing::warn!("cancelled: stopping the run and cleaning up");
            drop(work);
            autocoder_sandbox::shutdown().await;
            Err(Error::Cancelled(interrupt))
        });
        runtime.shutdown_timeout(SHUTDOWN);
        result
    })
}
