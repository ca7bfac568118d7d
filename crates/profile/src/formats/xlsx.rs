//! Excel workbooks (`.xlsx`) with `calamine`: the first sheet, or the one named; the first row
//! is the header (named as `pandas.read_excel` names it). Cells become text the way pandas would
//! write them (whole numbers without `.0`, dates as `YYYY-MM-DD`, datetimes as
//! `YYYY-MM-DD HH:MM:SS`), and text cells that `read_excel` reads as missing (`NA`, `n/a`, ...)
//! are missing. Memory: the sheet's cells (an Excel sheet has at most 1,048,576 rows), plus
//! `2 × threads` batches of rows in flight.

use std::collections::HashMap;
use std::path::Path;

use autocoder_schema::FileFormat;
use calamine::{Data, Reader, Xlsx, open_workbook};
use chrono::{Datelike, Timelike};

use super::runner::run_units;
use super::text::{TextBatch, TextColumn};
use super::typed::{Accumulate, Columns};
use crate::api::path_name;
use crate::{Profile, ProfileError, ProfileOptions};

/// Rows per batch handed to a worker.
const BATCH_ROWS: usize = 4096;

/// Profiles sheet `sheet` (the first when `None`) of the workbook at `path`.
pub(crate) fn profile(
    path: &Path,
    sheet: Option<&str>,
    options: &ProfileOptions,
    progress: &dyn Fn(u64, u64),
) -> Result<Profile, ProfileError> {
    let name = path_name(path);
    let corrupt = |detail: String| super::corrupt(&name, FileFormat::Xlsx, detail);
    let total_bytes = std::fs::metadata(path)
        .map_err(|e| ProfileError::io(path, e))?
        .len();
    let mut book: Xlsx<_> =
        open_workbook(path).map_err(|e: calamine::XlsxError| corrupt(e.to_string()))?;
    let names = book.sheet_names();
    let chosen = match sheet {
        Some(s) if names.iter().any(|n| n == s) => s.to_owned(),
        Some(s) => {
            return Err(ProfileError::NoSheet {
                source_name: name,
                sheet: s.to_owned(),
                sheets: names
                    .iter()
                    .map(|n| format!("`{n}`"))
                    .collect::<Vec<_>>()
                    .join(", "),
            });
        }
        None => names
            .first()
            .cloned()
            .ok_or_else(|| corrupt("the workbook has no sheets".to_owned()))?,
    };
    let range = book
        .worksheet_range(&chosen)
        .map_err(|e| corrupt(format!("sheet `{chosen}`: {e}")))?;
    let first_line = range.start().map_or(1, |(row, _)| u64::from(row) + 1);
    let mut rows = range.rows();
    let header: Vec<String> = rows
        .next()
        .map(|r| r.iter().map(header_text).collect())
        .unwrap_or_default();
    let mut columns = Columns::default();
    for column in pandas_names(&header) {
        columns.push(column, false, None, None);
    }
    let width = columns.len();
    let acc = Accumulate::new(&columns, options);
    let mut total = acc.total();
    let mut line = first_line + 1;
    run_units(
        &name,
        options.effective_threads(),
        || {
            let mut batch = TextBatch {
                columns: (0..width)
                    .map(|_| TextColumn::with_capacity(BATCH_ROWS))
                    .collect(),
                first_line: line,
                lines: None,
                rows: 0,
            };
            let mut text = String::new();
            for row in rows.by_ref().take(BATCH_ROWS) {
                for (i, column) in batch.columns.iter_mut().enumerate() {
                    text.clear();
                    // `read_excel` reads pandas' missing-value strings (`NA`, ...) as missing too.
                    if cell(row.get(i).unwrap_or(&Data::Empty), &mut text)
                        && !(matches!(row.get(i), Some(Data::String(_)))
                            && options.nulls.is_null(text.as_bytes()))
                    {
                        column.push(&text);
                    } else {
                        column.push_null();
                    }
                }
                batch.rows += 1;
            }
            line += batch.rows as u64;
            Ok((batch.rows > 0).then_some(batch))
        },
        |i, batch: TextBatch| Ok(acc.unit_of(i, std::slice::from_ref(&batch))),
        |unit| {
            acc.merge(&mut total, unit);
            Ok(())
        },
    )?;
    progress(total_bytes, total_bytes);
    Ok(acc.finish(
        total,
        name,
        total_bytes,
        FileFormat::Xlsx,
        sheet.map(str::to_owned),
    ))
}

/// A header cell's text (`2024` for the number 2024.0, as pandas names the column).
fn header_text(data: &Data) -> String {
    let mut text = String::new();
    cell(data, &mut text);
    text
}

/// Names as pandas gives them: empty ones `Unnamed: i`, repeated ones `name.1`, `name.2`.
fn pandas_names(header: &[String]) -> Vec<String> {
    let mut seen: HashMap<String, usize> = HashMap::new();
    header
        .iter()
        .enumerate()
        .map(|(i, h)| {
            let base = if h.is_empty() {
                format!("Unnamed: {i}")
            } else {
                h.clone()
            };
            let n = seen.entry(base.clone()).or_insert(0);
            let name = if *n == 0 { base } else { format!("{base}.{n}") };
            *n += 1;
            name
        })
        .collect()
}

/// Writes the cell's text; false for an empty or error cell (missing).
fn cell(data: &Data, out: &mut String) -> bool {
    match data {
        Data::Empty | Data::Error(_) => false,
        Data::Int(i) => {
            out.push_str(itoa::Buffer::new().format(*i));
            true
        }
        Data::Float(f) => {
            if f.is_nan() {
                return false;
            }
            #[allow(clippy::cast_possible_truncation)] // whole and below 2^53
            if f.fract() == 0.0 && f.abs() < 9.007_199_254_740_992e15 {
                out.push_str(itoa::Buffer::new().format(*f as i64));
            } else {
                out.push_str(ryu::Buffer::new().format(*f));
            }
            true
        }
        Data::Bool(b) => {
            out.push_str(if *b { "True" } else { "False" });
            true
        }
        Data::String(s) | Data::DateTimeIso(s) | Data::DurationIso(s) => {
            out.push_str(s);
            true
        }
        Data::DateTime(d) => {
            use std::fmt::Write as _;
            let Some(t) = d.as_datetime() else {
                return false;
            };
            let _ = write!(out, "{:04}-{:02}-{:02}", t.year(), t.month(), t.day());
            if t.num_seconds_from_midnight() != 0 || t.nanosecond() != 0 {
                let _ = write!(out, " {:02}:{:02}:{:02}", t.hour(), t.minute(), t.second());
            }
            true
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_names_follow_pandas() {
        let header: Vec<String> = ["a", "", "a", "b", "a"].map(str::to_owned).to_vec();
        assert_eq!(
            pandas_names(&header),
            ["a", "Unnamed: 1", "a.1", "b", "a.2"]
        );
        let mut s = String::new();
        assert!(cell(&Data::Float(2024.0), &mut s));
        assert_eq!(s, "2024");
        s.clear();
        assert!(cell(&Data::Float(2.5), &mut s));
        assert_eq!(s, "2.5");
        assert!(!cell(&Data::Empty, &mut s));
    }
}
