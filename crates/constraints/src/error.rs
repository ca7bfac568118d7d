//! Errors from resolving rules against a table and from evaluating checks over a file.

use std::path::PathBuf;

/// Why a rule could not be tied to a column, or why a file could not be evaluated.
#[derive(Debug, thiserror::Error)]
pub enum ConstraintError {
    /// The rule names a column the table does not have.
    #[error("no column matches `{name}`; the columns are: {}", available.join(", "))]
    UnknownColumn {
        /// The name as written in the rule.
        name: String,
        /// Every column of the table, to pick from.
        available: Vec<String>,
    },
    /// The rule's column name fits several columns equally well.
    #[error("`{name}` could mean any of the columns {}; write the exact column name", candidates.join(", "))]
    AmbiguousColumn {
        /// The name as written in the rule.
        name: String,
        /// The columns it could mean.
        candidates: Vec<String>,
    },
    /// The data file could not be opened or read.
    #[error("cannot read `{}`: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// The data file is not valid CSV where it matters.
    #[error("`{}` is not readable as CSV near data row {row}: {source}", path.display())]
    Csv {
        /// The file.
        path: PathBuf,
        /// The 1-based data row (header excluded) reached when reading failed.
        row: u64,
        /// The parser's message.
        #[source]
        source: csv::Error,
    },
    /// Standard input can be read only once: the profile used it up.
    #[error(
        "rules are evaluated over a file read a second time; standard input (`-`) cannot be: save it to a file first"
    )]
    Stdin,
    /// The file could not be scanned (the profiler's reader: dialect, UTF-8, ragged rows...).
    #[error(transparent)]
    Scan(#[from] autocoder_profile::ProfileError),
    /// A column the checks need is missing from the file's header.
    #[error("the file's header has no column `{column}` (it has: {}); the schema does not describe this file", header.join(", "))]
    MissingColumn {
        /// The column the checks need.
        column: String,
        /// The header as read.
        header: Vec<String>,
    },
}
