//! Errors from reading and profiling a file.

use std::path::PathBuf;

/// Why a file could not be profiled or scanned. Every variant names the source (a path, or `-`
/// for standard input) and, where it applies, the physical line (1-based) and the column.
#[derive(Debug, thiserror::Error)]
pub enum ProfileError {
    /// The file could not be opened or read.
    #[error("cannot read {source_name}: {error}; check that the file exists and is readable")]
    Io {
        /// The file.
        source_name: String,
        /// The operating system's error.
        #[source]
        error: std::io::Error,
    },
    /// The file has no bytes at all (or only a byte-order mark).
    #[error("{source_name} is empty: there is no header and no data to profile")]
    Empty {
        /// The file.
        source_name: String,
    },
    /// The file looks binary (it has NUL bytes), so it is not a CSV file.
    #[error(
        "{source_name} looks like a binary file (a NUL byte at line {line}), not CSV text; pass a CSV file, or `.gz` for gzip"
    )]
    Binary {
        /// The file.
        source_name: String,
        /// The physical line of the first NUL byte.
        line: u64,
    },
    /// A field is not valid UTF-8.
    #[error(
        "{source_name}, line {line}, column `{column}`: the text is not valid UTF-8; re-encode the file as UTF-8 (e.g. `iconv -f latin1 -t utf-8`)"
    )]
    InvalidUtf8 {
        /// The file.
        source_name: String,
        /// The physical line where the record starts.
        line: u64,
        /// The column's name (or `#n`, 1-based, past the header).
        column: String,
    },
    /// A record has more fields than the header (pandas refuses these too).
    #[error(
        "{source_name}, line {line}: expected {expected} fields (as in the header), found {found}; fix the row, or profile with bad rows skipped"
    )]
    TooManyFields {
        /// The file.
        source_name: String,
        /// The physical line where the record starts.
        line: u64,
        /// Fields in the header.
        expected: usize,
        /// Fields in this record.
        found: usize,
    },
    /// A single record is larger than the configured limit (often an unclosed quote).
    #[error(
        "{source_name}, line {line}: a record is longer than {limit} bytes; look for an unclosed quote near this line, or raise the record size limit"
    )]
    RecordTooLarge {
        /// The file.
        source_name: String,
        /// The physical line where the record starts.
        line: u64,
        /// The limit in bytes.
        limit: usize,
    },
    /// The options do not make sense (for example zero threads or an empty delimiter set).
    #[error("invalid profile options: {reason}")]
    InvalidOptions {
        /// What is wrong.
        reason: String,
    },
    /// A worker thread panicked; this is a bug in autocoder.
    #[error(
        "a profiling worker stopped unexpectedly while reading {source_name}; please report this bug"
    )]
    Worker {
        /// The file.
        source_name: String,
    },
}

impl ProfileError {
    pub(crate) fn io(path: impl Into<PathBuf>, error: std::io::Error) -> Self {
        ProfileError::Io {
            source_name: path.into().display().to_string(),
            error,
        }
    }
}
