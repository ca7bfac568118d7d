//! Conversation logs, recordings and replay.

use std::fmt::Write as _;
use std::fs::{File, OpenOptions};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::LlmError;

/// Appends one JSON document per line to a file.
pub(crate) struct JsonlWriter {
    path: PathBuf,
    file: Mutex<File>,
    action: &'static str,
}

impl JsonlWriter {
    /// Opens `path` for appending (`truncate`: start it empty), creating its folder.
    pub(crate) fn open(
        path: &Path,
        truncate: bool,
        action: &'static str,
    ) -> Result<Self, LlmError> {
        if let Some(parent) = path
            .parent()
            .filter(|parent| !parent.as_os_str().is_empty())
        {
            std::fs::create_dir_all(parent).map_err(|source| LlmError::Io {
                action,
                path: path.to_owned(),
                source,
            })?;
        }
        let file = OpenOptions::new()
            .create(true)
            .append(!truncate)
            .write(true)
            .truncate(truncate)
            .open(path)
            .map_err(|source| LlmError::Io {
                action,
                path: path.to_owned(),
                source,
            })?;
        Ok(Self {
            path: path.to_owned(),
            file: Mutex::new(file),
            action,
        })
    }

    pub(crate) fn append(&self, value: &Value) -> Result<(), LlmError> {
        let mut line = value.to_string();
        line.push('\n');
        let mut file = self.file.lock().unwrap_or_else(PoisonError::into_inner);
        file.write_all(line.as_bytes())
            .and_then(|()| file.flush())
            .map_err(|source| LlmError::Io {
                action: self.action,
                path: self.path.clone(),
                source,
            })
    }
}

/// The request's fingerprint: SHA-256 of its canonical JSON (keys sorted, no whitespace).
/// The body holds only semantic fields (model, messages, parameters, tools, format); the
/// endpoint, headers and credentials are not part of it.
pub(crate) fn fingerprint(body: &Value) -> String {
    let mut canonical = String::new();
    write_canonical(body, &mut canonical);
    let digest = Sha256::digest(canonical.as_bytes());
    let mut hex = String::with_capacity(64);
    for byte in digest {
        let _ = write!(hex, "{byte:02x}");
    }
    hex
}

fn write_canonical(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for (i, key) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(key.clone()).to_string());
                out.push(':');
                write_canonical(&map[key], out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_canonical(item, out);
            }
            out.push(']');
        }
        other => out.push_str(&other.to_string()),
    }
}

/// One line of a recording.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct RecordedCall {
    /// 0-based index of the call in the recorded run.
    pub(crate) index: u64,
    /// The pipeline step.
    pub(crate) step: String,
    /// See [`fingerprint`].
    pub(crate) fingerprint: String,
    /// The request body (for telling where a replay diverged).
    pub(crate) request: Value,
    /// The provider's answer body.
    pub(crate) response: Value,
}

/// A recording being replayed.
pub(crate) struct Replay {
    path: PathBuf,
    calls: Vec<RecordedCall>,
    used: Vec<bool>,
}

impl Replay {
    pub(crate) fn load(path: &Path) -> Result<Self, LlmError> {
        let text = std::fs::read_to_string(path).map_err(|source| LlmError::Io {
            action: "cannot read the recording",
            path: path.to_owned(),
            source,
        })?;
        let mut calls = Vec::new();
        for (number, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let call = serde_json::from_str(line).map_err(|error| LlmError::BadRecording {
                path: path.to_owned(),
                line: number + 1,
                message: error.to_string(),
            })?;
            calls.push(call);
        }
        Ok(Self {
            path: path.to_owned(),
            used: vec![false; calls.len()],
            calls,
        })
    }

    /// The recorded answer for this call: the call at the same index when its fingerprint
    /// matches, else the first unused call with the same fingerprint.
    pub(crate) fn answer(
        &mut self,
        call_index: u64,
        step: &str,
        request: &Value,
    ) -> Result<Value, LlmError> {
        let wanted = fingerprint(request);
        let at_index = usize::try_from(call_index).ok().filter(|&i| {
            i < self.calls.len() && !self.used[i] && self.calls[i].fingerprint == wanted
        });
        let found = at_index.or_else(|| {
            (0..self.calls.len()).find(|&i| !self.used[i] && self.calls[i].fingerprint == wanted)
        });
        if let Some(i) = found {
            self.used[i] = true;
            return Ok(self.calls[i].response.clone());
        }
        Err(LlmError::ReplayMismatch {
            path: self.path.clone(),
            step: step.to_owned(),
            call_index,
            detail: self.explain_mismatch(call_index, step, request),
        })
    }

    fn explain_mismatch(&self, call_index: u64, step: &str, request: &Value) -> String {
        let same_step = self
            .calls
            .iter()
            .zip(&self.used)
            .find(|(call, used)| !**used && call.step == step);
        if let Some((call, _)) = same_step {
            let difference = first_difference(&call.request, request, "")
                .unwrap_or_else(|| "(no visible difference)".to_owned());
            return format!(
                "the request differs from recorded call #{} of the same step at {difference}",
                call.index
            );
        }
        match usize::try_from(call_index)
            .ok()
            .and_then(|i| self.calls.get(i))
        {
            Some(call) => format!(
                "the recording has no unused call of this step; its call #{} was step `{}`",
                call.index, call.step
            ),
            None => format!(
                "the recording ends after {} call(s); record the run again",
                self.calls.len()
            ),
        }
    }
}

/// The JSON pointer of the first place where two values differ, with both sides.
fn first_difference(recorded: &Value, current: &Value, path: &str) -> Option<String> {
    match (recorded, current) {
        (Value::Object(a), Value::Object(b)) => {
            let mut keys: Vec<&String> = a.keys().chain(b.keys()).collect();
            keys.sort();
            keys.dedup();
            keys.into_iter().find_map(|key| {
                let child = format!("{path}/{key}");
                match (a.get(key), b.get(key)) {
                    (Some(x), Some(y)) => first_difference(x, y, &child),
                    (x, y) => Some(describe(&child, x, y)),
                }
            })
        }
        (Value::Array(a), Value::Array(b)) => (0..a.len().max(b.len())).find_map(|i| {
            let child = format!("{path}/{i}");
            match (a.get(i), b.get(i)) {
                (Some(x), Some(y)) => first_difference(x, y, &child),
                (x, y) => Some(describe(&child, x, y)),
            }
        }),
        (a, b) if a == b => None,
        (a, b) => Some(describe(path, Some(a), Some(b))),
    }
}

fn describe(path: &str, recorded: Option<&Value>, current: Option<&Value>) -> String {
    let show = |value: Option<&Value>| {
        value.map_or_else(
            || "(absent)".to_owned(),
            |value| {
                let text = value.to_string();
                match text.char_indices().nth(80) {
                    Some((cut, _)) => format!("{}...", &text[..cut]),
                    None => text,
                }
            },
        )
    };
    let path = if path.is_empty() { "/" } else { path };
    format!(
        "{path} (recorded {}, now {})",
        show(recorded),
        show(current)
    )
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn fingerprint_ignores_key_order() {
        assert_eq!(
            fingerprint(&json!({"a": 1, "b": [1, {"c": 2, "d": 3}]})),
            fingerprint(&json!({"b": [1, {"d": 3, "c": 2}], "a": 1}))
        );
        assert_ne!(fingerprint(&json!({"a": 1})), fingerprint(&json!({"a": 2})));
    }

    #[test]
    fn first_difference_names_the_path() {
        let recorded = json!({"messages": [{"content": "hi"}], "model": "m"});
        let current = json!({"messages": [{"content": "ho"}], "model": "m"});
        let diff = first_difference(&recorded, &current, "").unwrap();
        assert_eq!(diff, r#"/messages/0/content (recorded "hi", now "ho")"#);
    }
}
