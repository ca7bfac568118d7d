//! What an agent run keeps: every tool call and its result, appended to the run's
//! `conversation.jsonl` beside the model exchanges, and the counts, denials and interceptions
//! `result.json` reports.

use std::io::Write as _;
use std::path::PathBuf;

use autocoder_loop::rundir::{DeniedCommand, InterceptedCommand, ToolCallsRecord};
use serde_json::{Value, json};

/// The log of tool calls and the tallies.
#[derive(Debug)]
pub(crate) struct Records {
    log: Option<PathBuf>,
    /// The tallies for `result.json`.
    pub(crate) summary: ToolCallsRecord,
}

impl Records {
    /// Records appended to `log` (the conversation log), or kept in memory only.
    pub(crate) fn new(log: Option<PathBuf>, protocol: &str) -> Self {
        Self {
            log,
            summary: ToolCallsRecord {
                protocol: protocol.to_owned(),
                ..ToolCallsRecord::default()
            },
        }
    }

    /// Counts a call of `tool`.
    pub(crate) fn count(&mut self, tool: &str) {
        *self.summary.counts.entry(tool.to_owned()).or_default() += 1;
    }

    /// A shell command the policy refused.
    pub(crate) fn denied(&mut self, command: &str, reason: &str) {
        self.summary.denials.push(DeniedCommand {
            tool: "shell".into(),
            command: command.to_owned(),
            reason: reason.to_owned(),
        });
    }

    /// A path a file tool refused.
    pub(crate) fn refused(&mut self, tool: &str, path: &str, reason: &str) {
        self.summary.refused_paths.push(DeniedCommand {
            tool: tool.to_owned(),
            command: path.to_owned(),
            reason: reason.to_owned(),
        });
    }

    /// A shell command that became another tool.
    pub(crate) fn intercepted(&mut self, command: &str, became: &str) {
        self.summary.interceptions.push(InterceptedCommand {
            command: command.to_owned(),
            became: became.to_owned(),
        });
    }

    /// Appends one tool call and its result to the log (a failure to write is logged, not fatal).
    pub(crate) fn log_call(
        &self,
        turn: u32,
        tool: &str,
        arguments: &Value,
        outcome: &str,
        result: &str,
    ) {
        let Some(path) = &self.log else {
            return;
        };
        let mut line = json!({
            "kind": "tool_call",
            "turn": turn,
            "tool": tool,
            "arguments": arguments,
            "outcome": outcome,
            "result": result,
        })
        .to_string();
        line.push('\n');
        let written = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .and_then(|mut f| f.write_all(line.as_bytes()));
        if let Err(e) = written {
            tracing::warn!(path = %path.display(), error = %e, "cannot append a tool call to the conversation log");
        }
    }
}
