//! The generation journal, `RUN_DIR/journal.jsonl`: one JSON document per line, appended and
//! fsynced as the run goes, each written before the driver acts on what it records. The first
//! line is a [`Line::Header`] with the format version and the request; then, in order, every
//! model answer, environment, test run, event applied to the session, routing and the finish.
//! `autocoder resume` reads it back ([`read`]) and re-runs the generation with every journaled
//! model answer and test run served from it ([`Journal`]), so nothing paid for is paid again.

mod attach;
mod request;
#[cfg(test)]
mod tests;
mod writer;

use std::path::{Path, PathBuf};

use autocoder_llm::Usage as LlmUsage;
use autocoder_sandbox::TestReport;
use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use attach::{StoreGuard, open};
pub use request::{AgentRecord, ModelRecord, REDACTED, RequestRecord, SandboxRecord};
pub use writer::{Journal, KILL_AFTER_LINES_VAR};

use crate::protocol::{Event, Finish, RoutedFailure};

/// The journal's file name in the run directory.
pub const JOURNAL_FILE: &str = "journal.jsonl";

/// What the header's `format` says.
pub const JOURNAL_FORMAT: &str = "autocoder-journal";

/// Version of the journal's layout; a journal of another version is not resumed.
pub const JOURNAL_FORMAT_VERSION: u32 = 1;

/// One line of the journal.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Line {
    /// The first line: what was asked.
    Header {
        /// [`JOURNAL_FORMAT`].
        format: String,
        /// [`JOURNAL_FORMAT_VERSION`].
        version: u32,
        /// Every option that shapes the run, secrets redacted.
        request: Box<RequestRecord>,
    },
    /// A model answer, exactly as the provider sent it.
    Model {
        /// The client's call index.
        index: u64,
        /// The pipeline step (`plan`, `code`, `fix_code/repair` ...).
        step: String,
        /// The request's fingerprint (as in recordings).
        fingerprint: String,
        /// Earlier requests with the same fingerprint in this run.
        occurrence: u32,
        /// The answer's text.
        text: String,
        /// Its tokens.
        usage: LlmUsage,
        /// How long it took.
        latency_ms: u64,
        /// Answered by the model cache: not a model call.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        free: bool,
        /// The provider's answer body.
        response: Value,
    },
    /// An environment the tests then ran in.
    Environment {
        /// The cached environment's id.
        id: String,
        /// Python distributions asked for.
        packages: Vec<String>,
        /// Debian packages asked for.
        system_packages: Vec<String>,
        /// Resolved distributions, `(name, version)`.
        resolved: Vec<(String, String)>,
    },
    /// A test run and what the session saw of it.
    Tests {
        /// 1-based run number.
        number: u32,
        /// SHA-256 of the script and the tests that ran.
        files: String,
        /// Passed tests.
        passed: usize,
        /// Failed tests.
        failed: usize,
        /// The sandbox's whole report (per-test outcomes and messages, pytest's output).
        report: Box<TestReport>,
    },
    /// An event the driver is about to apply to the session (an edit, a diagnosis ...).
    Event {
        /// The step that produced it.
        step: String,
        /// The event.
        event: Box<Event>,
    },
    /// Where the failures of a test run were sent.
    Routes {
        /// The test run.
        iteration: u32,
        /// The routed failures.
        routes: Vec<RoutedFailure>,
    },
    /// The result of a local computation the run depends on (the interpreter's description, an
    /// import analysis), so a resumed run need not start Python to redo it.
    Memo {
        /// What was computed (`interpreter`, `imports`).
        what: String,
        /// SHA-256 of its inputs.
        key: String,
        /// The result.
        value: Value,
    },
    /// The end of the loop.
    Finish {
        /// How it ended.
        finish: Finish,
    },
}

impl Line {
    /// The `kind` tag.
    pub fn kind(&self) -> &'static str {
        match self {
            Line::Header { .. } => "header",
            Line::Model { .. } => "model",
            Line::Environment { .. } => "environment",
            Line::Tests { .. } => "tests",
            Line::Event { .. } => "event",
            Line::Routes { .. } => "routes",
            Line::Memo { .. } => "memo",
            Line::Finish { .. } => "finish",
        }
    }
}

/// Why a journal cannot be written or resumed.
#[derive(Debug, thiserror::Error)]
pub enum JournalError {
    /// The file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The journal.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// There is no journal.
    #[error(
        "{path} does not exist: only a run directory of `autocoder generate` (one that wrote a journal) can be resumed"
    )]
    Missing {
        /// The journal looked for.
        path: PathBuf,
    },
    /// A line does not parse.
    #[error(
        "{path}:{line}: not a journal line ({message}); the journal is damaged, start over with `--force`"
    )]
    Parse {
        /// The journal.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// What is wrong.
        message: String,
    },
    /// The journal is of another format version.
    #[error(
        "{path}: journal format version {found}, this autocoder reads version {JOURNAL_FORMAT_VERSION}; resume it with the autocoder that wrote it, or start over with `--force`"
    )]
    Version {
        /// The journal.
        path: PathBuf,
        /// The version it has.
        found: String,
    },
}

/// A journal read back.
#[derive(Debug, Clone)]
pub struct JournalFile {
    /// The file.
    pub path: PathBuf,
    /// What was asked.
    pub request: RequestRecord,
    /// Every line after the header, in order.
    pub lines: Vec<Line>,
    /// Bytes of whole lines: a cut last line (a crash mid-write) lies beyond and is dropped.
    pub valid_len: u64,
    /// Whether the last line was cut off and dropped.
    pub dropped_partial_line: bool,
}

impl JournalFile {
    /// How the run ended, when it did.
    pub fn finish(&self) -> Option<&Finish> {
        self.lines.iter().rev().find_map(|line| match line {
            Line::Finish { finish } => Some(finish),
            _ => None,
        })
    }

    /// Model answers journaled.
    pub fn model_answers(&self) -> usize {
        self.lines
            .iter()
            .filter(|l| matches!(l, Line::Model { .. }))
            .count()
    }

    /// The tokens of the model answers journaled.
    pub fn usage(&self) -> LlmUsage {
        self.lines
            .iter()
            .filter_map(|line| match line {
                Line::Model { usage, .. } => Some(*usage),
                _ => None,
            })
            .fold(LlmUsage::default(), LlmUsage::plus)
    }

    /// Test runs journaled.
    pub fn test_runs(&self) -> usize {
        self.lines
            .iter()
            .filter(|l| matches!(l, Line::Tests { .. }))
            .count()
    }
}

/// Reads `RUN_DIR/journal.jsonl`. A last line without its newline was cut by a crash and is
/// dropped; any other line that does not parse, or a header of another version, is an error.
pub fn read(run_dir: &Path) -> Result<JournalFile, JournalError> {
    let path = run_dir.join(JOURNAL_FILE);
    let bytes = match std::fs::read(&path) {
        Ok(bytes) => bytes,
        Err(source) if source.kind() == std::io::ErrorKind::NotFound => {
            return Err(JournalError::Missing { path });
        }
        Err(source) => return Err(JournalError::Io { path, source }),
    };
    let valid_len = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    let dropped_partial_line = valid_len < bytes.len();
    let whole = &bytes[..valid_len];
    let parse_error = |line: usize, message: String| JournalError::Parse {
        path: path.clone(),
        line,
        message,
    };
    let mut texts = whole.split(|&b| b == b'\n').enumerate();
    let Some((_, first)) = texts.next().filter(|(_, t)| !t.is_empty()) else {
        return Err(parse_error(1, "the header line is missing".to_owned()));
    };
    let header: Value = serde_json::from_slice(first).map_err(|e| parse_error(1, e.to_string()))?;
    if header.get("format").and_then(Value::as_str) != Some(JOURNAL_FORMAT) {
        return Err(parse_error(
            1,
            format!("the header does not say \"format\": \"{JOURNAL_FORMAT}\""),
        ));
    }
    match header.get("version") {
        Some(v) if v.as_u64() == Some(u64::from(JOURNAL_FORMAT_VERSION)) => {}
        other => {
            return Err(JournalError::Version {
                path,
                found: other.map_or_else(|| "(none)".to_owned(), Value::to_string),
            });
        }
    }
    let request = match serde_json::from_value::<Line>(header) {
        Ok(Line::Header { request, .. }) => *request,
        Ok(_) => {
            return Err(parse_error(
                1,
                "the first line is not the header".to_owned(),
            ));
        }
        Err(e) => return Err(parse_error(1, e.to_string())),
    };
    let mut lines = Vec::new();
    for (i, text) in texts {
        if text.is_empty() {
            continue;
        }
        let line: Line =
            serde_json::from_slice(text).map_err(|e| parse_error(i + 1, e.to_string()))?;
        lines.push(line);
    }
    Ok(JournalFile {
        path,
        request,
        lines,
        valid_len: valid_len as u64,
        dropped_partial_line,
    })
}

/// SHA-256 of `parts`, each length-prefixed, as hex (a test run's files, a memo's inputs).
pub fn digest(parts: &[&str]) -> String {
    use sha2::{Digest as _, Sha256};
    use std::fmt::Write as _;
    let mut hasher = Sha256::new();
    for part in parts {
        hasher.update((part.len() as u64).to_le_bytes());
        hasher.update(part.as_bytes());
    }
    let mut hex = String::with_capacity(64);
    for byte in hasher.finalize() {
        let _ = write!(hex, "{byte:02x}");
    }
    hex
}
