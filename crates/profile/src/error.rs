//! Errors from reading and profiling a file.

use std::path::PathBuf;

/// Why a file could not be profiled or scanned. Every variant names the source (a path, or `-`
/// for standard input) and, where it applies, the physical line (1-based) and the column. The
/// advice names the `autocoder` command-line flags that help (`--skip-bad-rows`,
/// `--skip-rows`, `--encoding`, `--max-record-mb`); library users set the matching
/// [`crate::ProfileOptions`] fields.
#[derive(Debug, thiserror::Error)]
pub enum ProfileError {
    /// The file could not be opened.
    #[error("cannot open {source_name}: {error}; check that the file exists and is readable")]
    Io {
        /// The file.
        source_name: String,
        /// The operating system's error.
        #[source]
        error: std::io::Error,
    },
    /// Reading stopped partway: a truncated or corrupt compressed stream, or a failing device.
    #[error(
        "{source_name}: reading stopped at line {line}, after {bytes} bytes of text: {error}; the file is truncated or corrupt{hint}"
    )]
    Read {
        /// The file.
        source_name: String,
        /// The physical line being read.
        line: u64,
        /// Bytes of text read before the failure (after decompression).
        bytes: u64,
        /// Extra advice (for gzip: how to check the archive).
        hint: &'static str,
        /// The underlying error.
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
        "{source_name} looks like a binary file (a NUL byte at line {line}), not CSV text; pass a CSV file, `.gz` for gzip, or its text encoding with `--encoding`"
    )]
    Binary {
        /// The file.
        source_name: String,
        /// The physical line of the first NUL byte.
        line: u64,
    },
    /// A field is not valid UTF-8.
    #[error(
        "{source_name}, line {line}, column `{column}`: the text is not valid UTF-8; give its encoding (`--encoding latin-1`, `--encoding cp1252`, ...) or re-encode the file as UTF-8"
    )]
    InvalidUtf8 {
        /// The file.
        source_name: String,
        /// The physical line where the record starts.
        line: u64,
        /// The column's name (or `#n`, 1-based, past the header).
        column: String,
    },
    /// The bytes are not valid in the encoding the file was said to have.
    #[error(
        "{source_name}, line {line}: the bytes are not valid {encoding}; give the file's real encoding with `--encoding`"
    )]
    InvalidEncoding {
        /// The file.
        source_name: String,
        /// The physical line of the first invalid byte.
        line: u64,
        /// The encoding's name.
        encoding: String,
    },
    /// A record has more fields than the header (pandas refuses these too).
    #[error(
        "{source_name}, line {line}: expected {expected} fields (as in the {reference}), found {found}; fix the row, skip rows like it with `--skip-bad-rows`, or skip lines at the start of the file with `--skip-rows N`"
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
        /// `header`, or `first row` for files without a header.
        reference: &'static str,
    },
    /// A quote opens a field that never closes: the rest of the file would be one field.
    #[error(
        "{source_name}, line {line}: a quote opens a field that is never closed, so the rest of the file would be one value; close or remove the quote, or skip the row with `--skip-bad-rows`"
    )]
    UnclosedQuote {
        /// The file.
        source_name: String,
        /// The physical line of the opening quote.
        line: u64,
    },
    /// A single record is larger than the configured limit.
    #[error(
        "{source_name}, line {line}: a record is longer than {limit} bytes; raise the limit with `--max-record-mb`"
    )]
    RecordTooLarge {
        /// The file.
        source_name: String,
        /// The physical line where the record starts.
        line: u64,
        /// The limit in bytes.
        limit: usize,
    },
    /// A Parquet, Arrow or Excel file could not be read: truncated, corrupt, or in another
    /// format than its first bytes or extension say.
    #[error(
        "{source_name} is not a readable {format} file: {detail}; it is truncated or corrupt: write it again, or name its real format with `--input-format`"
    )]
    Corrupt {
        /// The file.
        source_name: String,
        /// The format it was read as.
        format: autocoder_schema::FileFormat,
        /// What the reader found.
        detail: String,
    },
    /// A JSON Lines or JSON file is not valid JSON, or holds something else than objects.
    #[error(
        "{source_name}, {location}: {detail}; JSON input must be one object per line (JSON Lines) or an array of objects: fix the file (is it truncated?), or name its real format with `--input-format`"
    )]
    Json {
        /// The file.
        source_name: String,
        /// Where: `line N`, or `element N of the array`.
        location: String,
        /// What is wrong.
        detail: String,
    },
    /// The Excel workbook has no sheet of the name asked for.
    #[error(
        "{source_name} has no sheet named `{sheet}`; its sheets are {sheets}: pass one of them with `--sheet`"
    )]
    NoSheet {
        /// The file.
        source_name: String,
        /// The name asked for.
        sheet: String,
        /// The workbook's sheets, quoted and joined.
        sheets: String,
    },
    /// A format that needs random access was given on standard input.
    #[error(
        "{format} input cannot be read from standard input; save it to a file and pass its path"
    )]
    NotOnStdin {
        /// The format.
        format: autocoder_schema::FileFormat,
    },
    /// The options do not make sense (for example zero threads or an empty delimiter set).
    #[error("invalid profile options: {reason}")]
    InvalidOptions {
        /// What is wrong.
        reason: String,
    },
    /// Not even one worker thread could be started (a process or memory limit).
    #[error(
        "cannot start a thread to read {source_name}: {error}; lower `--threads` or raise the process limit (`ulimit -u`)"
    )]
    Spawn {
        /// The file.
        source_name: String,
        /// The operating system's error.
        #[source]
        error: std::io::Error,
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
