//! Arrow IPC: Feather v2 / `.arrow` files and IPC streams (`.arrows`), read batch by batch on
//! one thread (decoding is mostly copying) and profiled on the workers. Memory: at most
//! `2 × threads` record batches, as the writer cut them, in flight.

use std::fs::File;
use std::io::BufReader;
use std::path::Path;

use arrow_array::RecordBatch;
use arrow_ipc::reader::{FileReader, StreamReader};
use autocoder_schema::FileFormat;

use super::arrow_text::{leaves, render};
use super::parquet::to_columns;
use super::runner::run_units;
use super::text::TextBatch;
use super::typed::Accumulate;
use crate::api::path_name;
use crate::{Profile, ProfileError, ProfileOptions};

type Batches = Box<dyn Iterator<Item = Result<RecordBatch, arrow_schema::ArrowError>> + Send>;

/// Profiles the Arrow IPC file or stream at `path`.
pub(crate) fn profile(
    path: &Path,
    options: &ProfileOptions,
    progress: &dyn Fn(u64, u64),
) -> Result<Profile, ProfileError> {
    let name = path_name(path);
    let corrupt = |error: String| super::corrupt(&name, FileFormat::Arrow, error);
    let open = || File::open(path).map_err(|e| ProfileError::io(path, e));
    let file = open()?;
    let total_bytes = file.metadata().map_or(0, |m| m.len());
    let (schema, batches): (_, Batches) = match FileReader::try_new(file, None) {
        Ok(reader) => (reader.schema(), Box::new(reader)),
        Err(file_error) => match StreamReader::try_new(BufReader::new(open()?), None) {
            Ok(reader) => (reader.schema(), Box::new(reader)),
            Err(_) => return Err(corrupt(file_error.to_string())),
        },
    };
    let plan = leaves(&schema);
    let columns = to_columns(&plan);
    let acc = Accumulate::new(&columns, options);
    let mut total = acc.total();
    let mut batches = batches;
    let mut first_line = 1u64;
    run_units(
        &name,
        options.effective_threads(),
        || match batches.next() {
            None => Ok(None),
            Some(Ok(batch)) => {
                let line = first_line;
                first_line += batch.num_rows() as u64;
                Ok(Some((batch, line)))
            }
            Some(Err(e)) => Err(corrupt(e.to_string())),
        },
        |index, (batch, line): (RecordBatch, u64)| {
            let text = TextBatch {
                columns: plan.iter().map(|leaf| render(&batch, leaf)).collect(),
                first_line: line,
                lines: None,
                rows: batch.num_rows(),
            };
            Ok(acc.unit_of(index, std::slice::from_ref(&text)))
        },
        |unit| {
            acc.merge(&mut total, unit);
            Ok(())
        },
    )?;
    progress(total_bytes, total_bytes);
    Ok(acc.finish(total, name, total_bytes, FileFormat::Arrow, None))
}
