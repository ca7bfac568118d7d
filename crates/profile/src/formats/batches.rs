//! A stream of Arrow record batches (an IPC file's, or a data frame's handed over in memory
//! through the Arrow C stream interface), read batch by batch on one thread and profiled on the
//! workers. Memory: at most `2 × threads` record batches, as the producer cut them, in flight.

use arrow_array::RecordBatch;
use arrow_schema::{ArrowError, Schema};
use autocoder_schema::FileFormat;

use super::arrow_text::{leaves, render};
use super::parquet::to_columns;
use super::runner::run_units;
use super::text::TextBatch;
use super::typed::Accumulate;
use crate::{Profile, ProfileError, ProfileOptions};

/// Profiles `batches`, whose schema is `schema`, as `source_name` in `format` of
/// `total_bytes` bytes (0 when not a file).
/// The most rows one unit of work holds: a batch may have any number of rows (a null column
/// costs nothing in Arrow, so a 1 KB file can declare hundreds of millions), and the per-row
/// state of a unit grows with its rows, so batches are cut into slices (zero-copy) this long.
const MAX_UNIT_ROWS: usize = 65_536;

pub(crate) fn profile(
    source_name: String,
    schema: &Schema,
    batches: impl Iterator<Item = Result<RecordBatch, ArrowError>> + Send,
    format: FileFormat,
    total_bytes: u64,
    options: &ProfileOptions,
) -> Result<Profile, ProfileError> {
    let corrupt = |error: String| super::corrupt(&source_name, format, error);
    let plan = leaves(schema);
    let columns = to_columns(&plan);
    let acc = Accumulate::new(&columns, options);
    let mut total = acc.total();
    let mut batches = batches;
    let mut first_line = 1u64;
    // The batch being handed out in slices, and where the next slice starts.
    let mut current: Option<(RecordBatch, usize)> = None;
    run_units(
        &source_name,
        format,
        options.effective_threads(),
        || loop {
            if let Some((batch, offset)) = current.take() {
                let rows = (batch.num_rows() - offset).min(MAX_UNIT_ROWS);
                let slice = batch.slice(offset, rows);
                if offset + rows < batch.num_rows() {
                    current = Some((batch, offset + rows));
                }
                let line = first_line;
                first_line += rows as u64;
                return Ok(Some((slice, line)));
            }
            match batches.next() {
                None => return Ok(None),
                Some(Ok(batch)) if batch.num_rows() > 0 => current = Some((batch, 0)),
                Some(Ok(_)) => {}
                Some(Err(e)) => return Err(corrupt(e.to_string())),
            }
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
    Ok(acc.finish(total, source_name, total_bytes, format, None))
}
