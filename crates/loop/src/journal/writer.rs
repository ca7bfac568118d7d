//! Writing the journal, and serving a resumed run what its journal already holds.
//!
//! A resumed generation runs again from the start. Model answers and test runs the journal
//! has are served from it (nothing is asked or run twice); what the driver derives from them
//! (environments, events, routes) is written only past the lines of its kind the journal
//! already has, so the journal of a resumed run reads as an uninterrupted run's.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use autocoder_llm::{Answered, CallKey, CallStore, LlmError, StoredAnswer};
use autocoder_sandbox::TestReport;

use super::{
    JOURNAL_FILE, JOURNAL_FORMAT, JOURNAL_FORMAT_VERSION, JournalError, JournalFile, Line,
    RequestRecord,
};

/// Test hook: the process aborts itself right after writing this many journal lines (a crash at
/// a chosen point, for the fault-injection tests of `autocoder resume`).
pub const KILL_AFTER_LINES_VAR: &str = "AUTOCODER_TEST_KILL_AFTER_JOURNAL_LINES";

/// An open journal.
pub struct Journal {
    path: PathBuf,
    file: Mutex<File>,
    state: Mutex<State>,
    kill_after: Option<u64>,
}

#[derive(Default)]
struct State {
    /// Derived lines the journal had when resumed, by kind.
    existing: HashMap<&'static str, usize>,
    /// Derived lines produced by this run, by kind.
    produced: HashMap<&'static str, usize>,
    /// Journaled model answers not served yet, by fingerprint and occurrence.
    answers: HashMap<(String, u32), StoredAnswer>,
    /// Journaled test runs by number: the files' digest and the report.
    tests: HashMap<u32, (String, TestReport)>,
    /// Journaled computations by what and key.
    memos: HashMap<(String, String), serde_json::Value>,
    /// Lines written by this process.
    written: u64,
}

impl std::fmt::Debug for Journal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Journal")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

fn kill_after() -> Option<u64> {
    std::env::var(KILL_AFTER_LINES_VAR)
        .ok()
        .and_then(|v| v.trim().parse().ok())
}

impl Journal {
    /// Starts `RUN_DIR/journal.jsonl` afresh with its header.
    pub fn create(run_dir: &Path, request: &RequestRecord) -> Result<Self, JournalError> {
        let path = run_dir.join(JOURNAL_FILE);
        let io = |source| JournalError::Io {
            path: path.clone(),
            source,
        };
        std::fs::create_dir_all(run_dir).map_err(io)?;
        let file = OpenOptions::new()
            .create(true)
            .write(true)
            .truncate(true)
            .open(&path)
            .map_err(io)?;
        let journal = Journal {
            path: path.clone(),
            file: Mutex::new(file),
            state: Mutex::default(),
            kill_after: kill_after(),
        };
        journal.write(&Line::Header {
            format: JOURNAL_FORMAT.to_owned(),
            version: JOURNAL_FORMAT_VERSION,
            request: Box::new(request.clone()),
        })?;
        Ok(journal)
    }

    /// Continues a journal read back with [`super::read`]: a cut last line is cut off the file,
    /// and the journaled answers and test runs are served to the run again.
    pub fn resume(journal: &JournalFile) -> Result<Self, JournalError> {
        let path = journal.path.clone();
        let io = |source| JournalError::Io {
            path: path.clone(),
            source,
        };
        let file = OpenOptions::new().write(true).open(&path).map_err(io)?;
        if journal.dropped_partial_line {
            tracing::warn!(path = %path.display(), "the journal's last line was cut off by the crash; dropped");
            file.set_len(journal.valid_len).map_err(io)?;
            file.sync_data().map_err(io)?;
        }
        let file = OpenOptions::new().append(true).open(&path).map_err(io)?;
        let mut state = State::default();
        for line in &journal.lines {
            match line {
                Line::Model {
                    fingerprint,
                    occurrence,
                    latency_ms,
                    free,
                    response,
                    ..
                } => {
                    state.answers.insert(
                        (fingerprint.clone(), *occurrence),
                        StoredAnswer {
                            response: response.clone(),
                            latency: Duration::from_millis(*latency_ms),
                            counts: !free,
                        },
                    );
                }
                Line::Tests {
                    number,
                    files,
                    report,
                    ..
                } => {
                    state
                        .tests
                        .insert(*number, (files.clone(), report.as_ref().clone()));
                }
                Line::Memo { what, key, value } => {
                    state
                        .memos
                        .insert((what.clone(), key.clone()), value.clone());
                }
                Line::Header { .. } => {}
                derived => *state.existing.entry(derived.kind()).or_default() += 1,
            }
        }
        Ok(Journal {
            path,
            file: Mutex::new(file),
            state: Mutex::new(state),
            kill_after: kill_after(),
        })
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Appends one line and flushes it to the disk.
    fn write(&self, line: &Line) -> Result<(), JournalError> {
        let io = |source| JournalError::Io {
            path: self.path.clone(),
            source,
        };
        let mut text = serde_json::to_string(line).map_err(|e| io(std::io::Error::other(e)))?;
        text.push('\n');
        {
            let mut file = self.file.lock().unwrap_or_else(PoisonError::into_inner);
            file.write_all(text.as_bytes()).map_err(io)?;
            file.sync_data().map_err(io)?;
        }
        let written = {
            let mut state = self.state();
            state.written += 1;
            state.written
        };
        if self.kill_after == Some(written) {
            tracing::error!("{KILL_AFTER_LINES_VAR}={written}: aborting");
            std::process::abort();
        }
        Ok(())
    }

    /// Records a line derived from what the journal serves (environment, event, routes,
    /// finish): written unless a resumed journal has it already.
    pub fn record(&self, line: &Line) -> Result<(), JournalError> {
        let kind = line.kind();
        let skip = {
            let mut state = self.state();
            let produced = state.produced.entry(kind).or_default();
            *produced += 1;
            let produced = *produced;
            produced <= state.existing.get(kind).copied().unwrap_or(0)
        };
        if skip { Ok(()) } else { self.write(line) }
    }

    /// The journaled report of test run `number`, when the same script and tests ran. A run
    /// with other files means the resumed run took another path: from then on nothing is
    /// served and every line is written.
    pub fn test_run(&self, number: u32, files: &str) -> Option<TestReport> {
        let mut state = self.state();
        let (digest, report) = state.tests.remove(&number)?;
        if digest == files {
            return Some(report);
        }
        tracing::warn!(
            number,
            "the resumed run differs from its journal at this test run; going on without it"
        );
        state.tests.clear();
        state.existing.clear();
        None
    }

    /// Records a test run (before the session sees it).
    pub fn record_tests(
        &self,
        number: u32,
        files: &str,
        report: &TestReport,
    ) -> Result<(), JournalError> {
        use autocoder_sandbox::Outcome;
        let failed = report.count(Outcome::Failed)
            + report.count(Outcome::Error)
            + report.count(Outcome::XPassed)
            + report.collection_errors.len();
        self.write(&Line::Tests {
            number,
            files: files.to_owned(),
            passed: report.count(Outcome::Passed),
            failed,
            report: Box::new(report.clone()),
        })
    }

    /// `compute()`, or its journaled result for the same `what` and `key` (a digest of its
    /// inputs). A new result is journaled before it is returned.
    pub async fn memo<T, E, F>(&self, what: &str, key: &str, compute: F) -> Result<T, E>
    where
        T: serde::Serialize + serde::de::DeserializeOwned,
        E: From<JournalError>,
        F: std::future::Future<Output = Result<T, E>>,
    {
        let kept = self
            .state()
            .memos
            .get(&(what.to_owned(), key.to_owned()))
            .cloned();
        if let Some(value) = kept.and_then(|v| serde_json::from_value(v).ok()) {
            return Ok(value);
        }
        let value = compute.await?;
        let json = serde_json::to_value(&value).map_err(|e| JournalError::Io {
            path: self.path.clone(),
            source: std::io::Error::other(e),
        })?;
        self.state()
            .memos
            .insert((what.to_owned(), key.to_owned()), json.clone());
        self.write(&Line::Memo {
            what: what.to_owned(),
            key: key.to_owned(),
            value: json,
        })?;
        Ok(value)
    }

    /// Journaled answers not served (a resumed run that took another path leaves some).
    pub fn unserved_answers(&self) -> usize {
        self.state().answers.len()
    }
}

impl CallStore for Journal {
    fn lookup(&self, key: &CallKey<'_>) -> Option<StoredAnswer> {
        self.state()
            .answers
            .remove(&(key.fingerprint.to_owned(), key.occurrence))
    }

    fn store(&self, key: &CallKey<'_>, answer: &Answered<'_>) -> Result<(), LlmError> {
        self.write(&Line::Model {
            index: key.index,
            step: key.step.to_owned(),
            fingerprint: key.fingerprint.to_owned(),
            occurrence: key.occurrence,
            text: answer.text.to_owned(),
            usage: answer.usage,
            latency_ms: u64::try_from(answer.latency.as_millis()).unwrap_or(u64::MAX),
            free: !answer.counts,
            response: answer.response.clone(),
        })
        .map_err(|err| match err {
            JournalError::Io { path, source } => LlmError::Io {
                action: "cannot append to the journal",
                path,
                source,
            },
            other => LlmError::Io {
                action: "cannot append to the journal",
                path: self.path.clone(),
                source: std::io::Error::other(other.to_string()),
            },
        })
    }
}
