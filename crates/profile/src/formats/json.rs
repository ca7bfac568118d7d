//! JSON Lines (one object per line) and JSON arrays of objects, streamed record by record with
//! `serde_json` in two passes: the first finds the columns (nested objects flattened to
//! `parent.child`, as `pandas.json_normalize` names them; arrays are profiled by their length),
//! the second profiles the rows in batches of [`BATCH_ROWS`] on the workers. Memory: one record
//! at a time while parsing, at most `2 × threads + 2` batches in flight.

use std::collections::HashMap;
use std::fmt;
use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::sync::mpsc;

use autocoder_schema::FileFormat;
use serde::de::{DeserializeSeed, Deserializer, SeqAccess, Visitor};

use super::json_value::{Record, Value};

use super::runner::run_units;
use super::text::{TextBatch, TextColumn};
use super::typed::{Accumulate, Columns};
use crate::api::path_name;
use crate::{Profile, ProfileError, ProfileOptions};

/// Rows per batch handed to a worker.
const BATCH_ROWS: usize = 4096;

/// Profiles the JSON Lines (`format` [`FileFormat::Jsonl`]) or JSON array file at `path`.
pub(crate) fn profile(
    path: &Path,
    format: FileFormat,
    options: &ProfileOptions,
    progress: &dyn Fn(u64, u64),
) -> Result<Profile, ProfileError> {
    let name = path_name(path);
    let total_bytes = std::fs::metadata(path)
        .map_err(|e| ProfileError::io(path, e))?
        .len();
    // Pass 1: the columns.
    let mut found = Found::default();
    each_record(path, format, &mut |record, _| {
        found.add(record, "");
        Ok(())
    })?;
    let mut columns = Columns::default();
    for (i, key) in found.order.iter().enumerate() {
        let list = found.lists[i];
        columns.push(
            key.clone(),
            false,
            None,
            list.then(|| "a JSON array, profiled by its length".to_owned()),
        );
    }
    let index: HashMap<&str, usize> = found
        .order
        .iter()
        .enumerate()
        .map(|(i, k)| (k.as_str(), i))
        .collect();
    // Pass 2: the rows.
    let acc = Accumulate::new(&columns, options);
    let mut total = acc.total();
    let width = columns.len();
    std::thread::scope(|scope| -> Result<(), ProfileError> {
        let (tx, rx) = mpsc::sync_channel::<Result<TextBatch, ProfileError>>(2);
        let index = &index;
        scope.spawn(move || {
            let mut batch = new_batch(width, 1);
            let mut cells: Vec<Option<String>> = vec![None; width];
            let result = each_record(path, format, &mut |record, line| {
                cells.fill(None);
                fill(record, "", index, &mut cells);
                for (column, cell) in batch.columns.iter_mut().zip(&mut cells) {
                    match cell.take() {
                        Some(v) => column.push(&v),
                        None => column.push_null(),
                    }
                }
                if let Some(lines) = &mut batch.lines {
                    lines.push(line);
                }
                batch.rows += 1;
                if batch.rows == BATCH_ROWS {
                    let full = std::mem::replace(&mut batch, new_batch(width, 0));
                    if tx.send(Ok(full)).is_err() {
                        return Err(ProfileError::Worker {
                            source_name: String::new(),
                        });
                    }
                }
                Ok(())
            });
            match result {
                Ok(()) if batch.rows > 0 => {
                    let _ = tx.send(Ok(batch));
                }
                // `Worker`: the profiling side stopped listening (it failed, and says why).
                Ok(()) | Err(ProfileError::Worker { .. }) => {}
                Err(e) => {
                    let _ = tx.send(Err(e));
                }
            }
        });
        run_units(
            &name,
            format,
            options.effective_threads(),
            move || rx.recv().ok().transpose(),
            |i, batch: TextBatch| Ok(acc.unit_of(i, std::slice::from_ref(&batch))),
            |unit| {
                acc.merge(&mut total, unit);
                Ok(())
            },
        )
    })?;
    progress(total_bytes, total_bytes);
    Ok(acc.finish(total, name, total_bytes, format, None))
}

fn new_batch(width: usize, _first: u64) -> TextBatch {
    TextBatch {
        columns: (0..width)
            .map(|_| TextColumn::with_capacity(BATCH_ROWS))
            .collect(),
        first_line: 0,
        lines: Some(Vec::with_capacity(BATCH_ROWS)),
        rows: 0,
    }
}

/// The flattened keys in the order first seen, and which hold arrays.
#[derive(Default)]
struct Found {
    order: Vec<String>,
    lists: Vec<bool>,
    seen: HashMap<String, usize>,
}

impl Found {
    fn add(&mut self, record: &Record, prefix: &str) {
        for (key, value) in record {
            let name = format!("{prefix}{key}");
            if let Value::Object(inner) = value
                && !inner.is_empty()
            {
                self.add(inner, &format!("{name}."));
                continue;
            }
            let i = if let Some(&i) = self.seen.get(&name) {
                i
            } else {
                self.order.push(name.clone());
                self.lists.push(false);
                self.seen.insert(name, self.order.len() - 1);
                self.order.len() - 1
            };
            if matches!(value, Value::Array(_)) {
                self.lists[i] = true;
            }
        }
    }
}

/// Puts the record's values into their columns' cells.
fn fill(record: &Record, prefix: &str, index: &HashMap<&str, usize>, cells: &mut [Option<String>]) {
    for (key, value) in record {
        let name = format!("{prefix}{key}");
        if let Value::Object(inner) = value
            && !inner.is_empty()
        {
            fill(inner, &format!("{name}."), index, cells);
            continue;
        }
        if let Some(&i) = index.get(name.as_str()) {
            cells[i] = cell(value);
        }
    }
}

/// A value as pandas writes it to CSV; arrays by their length.
fn cell(value: &Value) -> Option<String> {
    match value {
        Value::Null => None,
        Value::Bool(b) => Some(if *b { "True" } else { "False" }.to_owned()),
        Value::Int(i) => Some(itoa::Buffer::new().format(*i).to_owned()),
        Value::UInt(u) => Some(itoa::Buffer::new().format(*u).to_owned()),
        Value::Float(f) => Some(ryu::Buffer::new().format(*f).to_owned()),
        Value::String(s) => Some(s.clone()),
        Value::Array(n) => Some(n.to_string()),
        Value::Object(_) => Some("{}".to_owned()),
    }
}

type Each<'a> = dyn FnMut(&Record, u64) -> Result<(), ProfileError> + 'a;

/// Calls `each` with every record of the file and its line (JSON Lines) or position (arrays).
fn each_record(path: &Path, format: FileFormat, each: &mut Each<'_>) -> Result<(), ProfileError> {
    let name = path_name(path);
    let file = File::open(path).map_err(|e| ProfileError::io(path, e))?;
    let reader = BufReader::with_capacity(1 << 20, file);
    if format == FileFormat::Json {
        let mut de = serde_json::Deserializer::from_reader(reader);
        let mut visitor = Records {
            each,
            name: &name,
            error: None,
        };
        let parsed = (&mut de).deserialize_seq(&mut visitor);
        if let Some(e) = visitor.error.take() {
            return Err(e);
        }
        parsed
            .and_then(|()| de.end())
            .map_err(|e| bad_json(&name, &e))?;
        return Ok(());
    }
    let mut reader = reader;
    let mut line = String::new();
    let mut number = 0u64;
    loop {
        line.clear();
        number += 1;
        let n = reader
            .read_line(&mut line)
            .map_err(|e| json_error(&name, number, format!("cannot read the line: {e}")))?;
        if n == 0 {
            return Ok(());
        }
        let text = line.trim_start_matches('\u{feff}').trim();
        if text.is_empty() {
            continue;
        }
        match serde_json::from_str::<Value>(text) {
            Ok(Value::Object(record)) => each(&record, number)?,
            Ok(other) => {
                return Err(json_error(
                    &name,
                    number,
                    format!("expected a JSON object, found {}", kind(&other)),
                ));
            }
            Err(e) => {
                let mut detail = e.to_string();
                // serde_json counts lines within the line; say the column only.
                if let Some((d, _)) = detail.rsplit_once(" at line ") {
                    detail = format!("{d} at column {}", e.column());
                }
                return Err(json_error(&name, number, detail));
            }
        }
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Int(_) | Value::UInt(_) | Value::Float(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn json_error(name: &str, line: u64, detail: String) -> ProfileError {
    at_error(name, format!("line {line}"), detail)
}

fn at_error(name: &str, location: String, detail: String) -> ProfileError {
    ProfileError::Json {
        source_name: name.to_owned(),
        location,
        detail,
    }
}

fn bad_json(name: &str, e: &serde_json::Error) -> ProfileError {
    let detail = e.to_string();
    // serde_json appends " at line L column C"; the error names the line itself.
    let detail = detail
        .rsplit_once(" at line ")
        .map_or(detail.as_str(), |(d, _)| d)
        .to_owned();
    json_error(name, e.line() as u64, detail)
}

/// Walks the top-level array, one record at a time.
struct Records<'a, 'b> {
    each: &'a mut Each<'b>,
    name: &'a str,
    error: Option<ProfileError>,
}

impl<'de> Visitor<'de> for &mut Records<'_, '_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an array of JSON objects")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let mut position = 0u64;
        while let Some(value) = seq.next_element::<Value>()? {
            position += 1;
            let Value::Object(record) = value else {
                self.error = Some(at_error(
                    self.name,
                    format!("element {position} of the array"),
                    format!("expected a JSON object, found {}", kind(&value)),
                ));
                return Err(serde::de::Error::custom("not an object"));
            };
            if let Err(e) = (self.each)(&record, position) {
                self.error = Some(e);
                return Err(serde::de::Error::custom("stopped"));
            }
        }
        Ok(())
    }
}

impl<'de> DeserializeSeed<'de> for &mut Records<'_, '_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}
