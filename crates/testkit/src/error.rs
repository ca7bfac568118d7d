//! Errors from loading a script or starting the scripted server.

use std::path::PathBuf;

/// Why the scripted server could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum TestkitError {
    /// The script file could not be read.
    #[error("cannot read the script file {path}: {source}")]
    ReadScript {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The script is not valid JSON of the documented shape.
    #[error(
        "the script {origin} is not valid (see the autocoder-testkit docs for the format): {source}"
    )]
    ParseScript {
        /// Where the script came from (a file path or "inline").
        origin: String,
        /// The JSON error, with line and column.
        #[source]
        source: serde_json::Error,
    },
    /// The listening socket could not be opened.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// The address tried.
        addr: String,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
}
