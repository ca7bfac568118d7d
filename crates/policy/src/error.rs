//! Errors from loading a policy file. Deciding never fails: a command that cannot be read is
//! denied, with the reason.

use std::path::PathBuf;

/// Why a policy could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum PolicyError {
    /// The file could not be read.
    #[error("cannot read the policy file {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The file is not valid TOML, or does not follow the policy format, or one of its rules is
    /// inconsistent (or refutes one of its own examples).
    #[error("{file}:{line}:{column}: {message}")]
    Invalid {
        /// The file's name (`<builtin>` for the policy shipped in the crate).
        file: String,
        /// 1-based line of the offending key, table or value.
        line: usize,
        /// 1-based column.
        column: usize,
        /// What is wrong and what to write instead.
        message: String,
    },
}
