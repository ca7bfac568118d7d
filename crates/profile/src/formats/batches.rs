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
    run_units(
        &source_name,
        format,
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
    Ok(acc.finish(total, source_name, total_bytes, format, None))
}
