//! Parquet: row groups read in parallel, each by its own reader over the shared metadata,
//! streamed in record batches of [`BATCH_ROWS`] rows. Memory: each worker holds the pages of
//! the row group it decodes (at most one row group's compressed column chunks) and one batch;
//! at most `2 × threads` row groups are in flight.

use std::fs::File;
use std::path::Path;

use autocoder_schema::FileFormat;
use parquet::arrow::arrow_reader::{
    ArrowReaderMetadata, ArrowReaderOptions, ParquetRecordBatchReaderBuilder,
};

use super::arrow_text::{Leaf, leaves, render};
use super::parquet_layout;
use super::parquet_source::EndBound;
use super::runner::run_units;
use super::text::TextBatch;
use super::typed::{Accumulate, Columns};
use crate::api::path_name;
use crate::{Profile, ProfileError, ProfileOptions};

/// Rows per record batch.
pub(crate) const BATCH_ROWS: usize = 8192;

/// Profiles the Parquet file at `path`.
pub(crate) fn profile(
    path: &Path,
    options: &ProfileOptions,
    progress: &dyn Fn(u64, u64),
) -> Result<Profile, ProfileError> {
    let name = path_name(path);
    let file = File::open(path).map_err(|e| ProfileError::io(path, e))?;
    let total_bytes = file.metadata().map_or(0, |m| m.len());
    let corrupt = |error: String| super::corrupt(&name, FileFormat::Parquet, error);
    parquet_layout::check_footer(&file, total_bytes).map_err(corrupt)?;
    let metadata = ArrowReaderMetadata::load(&file, ArrowReaderOptions::new())
        .map_err(|e| corrupt(e.to_string()))?;
    let plan = leaves(metadata.schema());
    let columns = to_columns(&plan);
    let groups = metadata.metadata().row_groups();
    let mut first_rows = Vec::with_capacity(groups.len());
    let mut rows = 0u64;
    for g in groups {
        first_rows.push(rows + 1);
        rows += u64::try_from(g.num_rows()).unwrap_or(0);
    }
    let sizes: Vec<u64> = groups
        .iter()
        .map(|g| u64::try_from(g.compressed_size()).unwrap_or(0))
        .collect();
    let acc = Accumulate::new(&columns, options);
    let mut total = acc.total();
    let mut next_group = 0usize;
    let count = groups.len();
    let mut done_bytes = 0u64;
    run_units(
        &name,
        FileFormat::Parquet,
        options.effective_threads(),
        || {
            let g = next_group;
            next_group += 1;
            Ok((g < count).then_some(g))
        },
        |index, group| {
            // A handle of its own: cloned handles would share one file position.
            let reader = File::open(path).map_err(|e| ProfileError::io(path, e))?;
            parquet_layout::check_row_group(&reader, total_bytes, metadata.metadata(), group)
                .map_err(corrupt)?;
            let batches = ParquetRecordBatchReaderBuilder::new_with_metadata(
                EndBound(reader),
                metadata.clone(),
            )
            .with_row_groups(vec![group])
            .with_batch_size(BATCH_ROWS)
            .build()
            .map_err(|e| corrupt(format!("row group {group}: {e}")))?;
            let mut unit = acc.unit(index);
            let mut row = 1u64;
            for batch in batches {
                let batch = batch.map_err(|e| corrupt(format!("row group {group}: {e}")))?;
                let text = TextBatch {
                    columns: plan.iter().map(|leaf| render(&batch, leaf)).collect(),
                    first_line: first_rows[group] + row - 1,
                    lines: None,
                    rows: batch.num_rows(),
                };
                text.feed(&mut unit, row);
                row += batch.num_rows() as u64;
            }
            acc.done(&unit);
            Ok((unit, sizes[group]))
        },
        |(unit, bytes)| {
            acc.merge(&mut total, unit);
            done_bytes += bytes;
            progress(done_bytes.min(total_bytes), total_bytes);
            Ok(())
        },
    )?;
    Ok(acc.finish(total, name, total_bytes, FileFormat::Parquet, None))
}

pub(crate) fn to_columns(plan: &[Leaf]) -> Columns {
    let mut columns = Columns::default();
    for leaf in plan {
        columns.push(
            leaf.name.clone(),
            leaf.text,
            Some(leaf.source_type.clone()),
            leaf.note.clone(),
        );
    }
    columns
}
