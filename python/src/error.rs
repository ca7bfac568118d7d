//! The one error type of the native module, and how each becomes a Python exception:
//! `autocoder.AutocoderError` with the message the command line prints (the error, then each
//! cause), or `KeyboardInterrupt` for a cancelled call.

use std::path::PathBuf;

use pyo3::PyErr;
use pyo3::exceptions::PyKeyboardInterrupt;

pyo3::create_exception!(
    autocoder,
    AutocoderError,
    pyo3::exceptions::PyException,
    "An autocoder call failed: the message is the command line's (what failed, where, what to do)."
);

/// What can go wrong in a call from Python.
#[derive(Debug, thiserror::Error)]
pub(crate) enum Error {
    /// Profiling a file or a data frame.
    #[error(transparent)]
    Profile(#[from] autocoder_profile::ProfileError),
    /// Generating or running a script.
    #[error(transparent)]
    Loop(#[from] autocoder_loop::LoopError),
    /// Setting up the model client.
    #[error(transparent)]
    Model(#[from] autocoder_llm::LlmError),
    /// Exporting a run.
    #[error(transparent)]
    Export(#[from] autocoder_export::ExportError),
    /// The sandbox, outside a generation.
    #[error(transparent)]
    Sandbox(#[from] autocoder_sandbox::SandboxError),
    /// An argument that cannot work.
    #[error("{0}")]
    Invalid(String),
    /// A data frame could not be handed over through the Arrow C stream interface.
    #[error("`{name}`: cannot read the data frame as Arrow: {detail}")]
    Frame {
        /// The sample or input name.
        name: String,
        /// The reason.
        detail: String,
    },
    /// A data frame could not be written as Parquet.
    #[error("`{name}`: cannot write the data frame to {}: {source}", path.display())]
    Parquet {
        /// The sample or input name.
        name: String,
        /// The file being written.
        path: PathBuf,
        /// The cause.
        #[source]
        source: parquet::errors::ParquetError,
    },
    /// A file or directory could not be made.
    #[error("cannot {action} {}: {source}", path.display())]
    Io {
        /// What was being done.
        action: &'static str,
        /// Where.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// The generated script failed on the data it was given.
    #[error("the script {why}\n{stderr}")]
    Script {
        /// Exit code, time or memory limit.
        why: String,
        /// What it wrote on standard error.
        stderr: String,
    },
    /// Ctrl-C, or the task running an async call was cancelled; nothing was left running.
    #[error("cancelled: the run was stopped and its sandbox cleaned up")]
    Cancelled(Option<PyErr>),
}

impl From<Error> for PyErr {
    fn from(error: Error) -> Self {
        match error {
            // The interpreter's own KeyboardInterrupt, raised again after the clean-up.
            Error::Cancelled(Some(interrupt)) => interrupt,
            Error::Cancelled(None) => PyKeyboardInterrupt::new_err(error.to_string()),
            other => AutocoderError::new_err(message(&other)),
        }
    }
}

/// The error and each cause below it, as the command line prints them.
fn message(error: &(dyn std::error::Error + 'static)) -> String {
    let mut text = error.to_string();
    let mut cause = error.source();
    while let Some(inner) = cause {
        let line = inner.to_string();
        if !text.contains(&line) {
            text.push_str("\n  caused by: ");
            text.push_str(&line);
        }
        cause = inner.source();
    }
    text
}
