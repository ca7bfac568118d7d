//! Evaluation over a whole file: the schema's checks as constraints, and one parallel pass with
//! the profiler's record scan.

use std::path::Path;

use autocoder_profile::{Dialect, NullSpec as ProfileNulls, ScanOptions, scan};
use autocoder_schema::{Check, ColumnSchema, TableSchema};

use crate::{CheckResult, Constraint, ConstraintError, Evaluator};

/// Every check a schema states, as constraints: each column's checks, `not_null` for
/// non-nullable columns, `unique` for unique ones, and each set of columns unique together.
pub fn schema_constraints(table: &TableSchema) -> Vec<Constraint> {
    let mut out = Vec::new();
    for column in &table.columns {
        let ColumnSchema {
            name,
            nullable,
            unique,
            checks,
            ..
        } = column;
        let mut push = |check: Check| {
            out.push(Constraint::Column {
                column: name.clone(),
                check,
            });
        };
        if !nullable {
            push(Check::NotNull);
        }
        if *unique {
            push(Check::Unique);
        }
        for check in checks {
            push(check.clone());
        }
    }
    for columns in &table.unique_together {
        out.push(Constraint::UniqueTogether {
            columns: columns.clone(),
        });
    }
    out
}

/// How [`evaluate_path_with`] reads the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EvalOptions {
    /// Worker threads; `0` uses every core.
    pub threads: usize,
    /// Bytes per chunk (each chunk is evaluated by one thread).
    pub chunk_bytes: usize,
}

impl Default for EvalOptions {
    fn default() -> Self {
        let scan = ScanOptions::default();
        Self {
            threads: scan.threads,
            chunk_bytes: scan.chunk_bytes,
        }
    }
}

/// Reads the CSV file at `path` the way `table.read` says and evaluates `constraints` over every
/// record: one parallel pass with the profiler's reader ([`autocoder_profile::scan`]), one
/// [`Evaluator`] per chunk, merged in file order.
pub fn evaluate_path(
    path: &Path,
    table: &TableSchema,
    constraints: &[Constraint],
) -> Result<Vec<CheckResult>, ConstraintError> {
    evaluate_path_with(path, table, constraints, EvalOptions::default())
}

/// [`evaluate_path`] with explicit threads and chunk size.
pub fn evaluate_path_with(
    path: &Path,
    table: &TableSchema,
    constraints: &[Constraint],
    eval: EvalOptions,
) -> Result<Vec<CheckResult>, ConstraintError> {
    let header = read_header(path, table)?;
    let evaluator = Evaluator::new(table, constraints, &header)?;
    let dialect = Dialect {
        delimiter: u8::try_from(table.read.delimiter).unwrap_or(b','),
        quote: b'"',
        has_header: table.read.has_header,
        bom: table.read.bom,
        encoding: table
            .read
            .encoding
            .as_deref()
            .and_then(autocoder_profile::Encoding::for_label)
            .unwrap_or_default(),
        skip_rows: table.read.skip_rows,
        comment: table.read.comment.and_then(|c| u8::try_from(c).ok()),
    };
    let options = ScanOptions {
        dialect: Some(dialect),
        nulls: ProfileNulls::new(table.read.keep_default_na, table.read.na_values.clone()),
        threads: eval.threads,
        chunk_bytes: eval.chunk_bytes,
        ..ScanOptions::default()
    };
    let scanned = scan(
        path,
        &options,
        |_| evaluator.fresh(),
        |chunk: &mut Evaluator, record| {
            chunk.push_with(record.row_in_chunk(), |i| record.field(i).unwrap_or(""));
        },
    )?;
    let mut total = evaluator;
    for mut chunk in scanned.chunks {
        chunk.value.shift_rows(chunk.first_row - 1);
        total.merge(chunk.value);
    }
    tracing::debug!(
        rows = scanned.rows,
        checks = constraints.len(),
        "evaluated constraints"
    );
    Ok(total.finish())
}

/// The header as the file has it, or the schema's column names for files without one.
fn read_header(path: &Path, table: &TableSchema) -> Result<Vec<String>, ConstraintError> {
    if !table.read.has_header {
        return Ok(table.columns.iter().map(|c| c.name.clone()).collect());
    }
    if path.as_os_str() == "-" {
        return Err(ConstraintError::Stdin);
    }
    let file = std::fs::File::open(path).map_err(|source| ConstraintError::Io {
        path: path.to_owned(),
        source,
    })?;
    let gzip = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("gz"));
    let input: Box<dyn std::io::Read> = if gzip {
        Box::new(flate2::read::MultiGzDecoder::new(file))
    } else {
        Box::new(file)
    };
    let mut reader = csv::ReaderBuilder::new()
        .delimiter(u8::try_from(table.read.delimiter).unwrap_or(b','))
        .has_headers(true)
        .flexible(true)
        .from_reader(input);
    let header = reader.headers().map_err(|source| ConstraintError::Csv {
        path: path.to_owned(),
        row: 0,
        source,
    })?;
    Ok(header
        .iter()
        .map(|h| h.trim_start_matches('\u{feff}').to_owned())
        .collect())
}
