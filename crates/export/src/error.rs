//! Errors of an export.

use std::path::PathBuf;

use autocoder_loop::LoopError;
use autocoder_loop::rundir::RunDirError;
use autocoder_prompts::PromptError;
use autocoder_sandbox::SandboxError;

/// Why an export could not be made.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    /// The run directory has no readable `result.json`.
    #[error(transparent)]
    RunDir(#[from] RunDirError),
    /// The generation did not pass its tests.
    #[error("the generation in {run_dir} failed ({reason}); pass --force to export it anyway")]
    Failed {
        /// The run directory.
        run_dir: PathBuf,
        /// Why the loop stopped.
        reason: String,
    },
    /// The script writes to the sandbox's `/var/outputs` and takes no `--outputs-dir`.
    #[error(
        "{script} writes its outputs to the hard-wired /var/outputs (it was generated before scripts took --outputs-dir), so it cannot run outside a container; generate it again, or export it with --image, whose image has /var/outputs"
    )]
    HardWiredOutputs {
        /// The script.
        script: PathBuf,
    },
    /// The destination exists and holds files.
    #[error("{path} exists and is not empty; name a new directory")]
    NotEmpty {
        /// The destination.
        path: PathBuf,
    },
    /// Two outputs map to the same Python name.
    #[error(
        "the outputs {first} and {second} both become the Python name {ident}; rename one of them"
    )]
    NameClash {
        /// One output.
        first: String,
        /// The other.
        second: String,
        /// The name both map to.
        ident: String,
    },
    /// A file could not be read or written.
    #[error("{action} {path}: {source}")]
    Io {
        /// What was being done (`writing`, `copying the sample`).
        action: &'static str,
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A template failed to render.
    #[error(transparent)]
    Template(#[from] PromptError),
    /// The run's environment could not be had.
    #[error(transparent)]
    Loop(#[from] LoopError),
    /// The image could not be built.
    #[error(transparent)]
    Sandbox(#[from] SandboxError),
}

impl ExportError {
    /// A closure turning an I/O error on `path` into [`ExportError::Io`].
    pub(crate) fn io(
        action: &'static str,
        path: &std::path::Path,
    ) -> impl FnOnce(std::io::Error) -> Self {
        let path = path.to_owned();
        move |source| Self::Io {
            action,
            path,
            source,
        }
    }
}
