//! Excel workbooks (`.xlsx`) with `calamine`: the first sheet, or the one named; the first row
//! is the header (named as `pandas.read_excel` names it). Cells become text the way pandas would
//! write them (whole numbers without `.0`, dates as `YYYY-MM-DD`, datetimes as
//! `YYYY-MM-DD HH:MM:SS`), and text cells that `read_excel` reads as missing (`NA`, `n/a`, ...)
//! are missing. The sheet is streamed twice, cell by cell: once for the bounds of its used
//! cells (the header is the first used row, the first column the leftmost used one, as
//! `calamine`'s ranges have them), once for the rows. Memory: the workbook's shared-strings table
//! (every distinct text of the workbook; Excel keeps them in one table), one row, and
//! `2 × threads` batches of [`BATCH_ROWS`] rows in flight, whatever the sheet's length.

use std::collections::HashMap;
use std::io::{Read, Seek};
use std::path::Path;

use autocoder_schema::FileFormat;
use calamine::{Cell, DataRef, Reader, Xlsx, XlsxCellReader, XlsxError, open_workbook};
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
    let bad = |e: XlsxError| corrupt(format!("sheet `{chosen}`: {e}"));
    let bounds =
        used_bounds(&mut book, &chosen).map_err(|e| corrupt(format!("sheet `{chosen}`: {e}")))?;
    let mut cells = book.worksheet_cells_reader(&chosen).map_err(bad)?;
    let mut rows = Rows::new(bounds);
    let mut row = Vec::new();
    let header: Vec<String> = if rows.next(&mut cells, &mut row).map_err(bad)? {
        row.iter().map(header_text).collect()
    } else {
        Vec::new()
    };
    let mut columns = Columns::default();
    for column in pandas_names(&header) {
        columns.push(column, false, None, None);
    }
    let width = columns.len();
    let acc = Accumulate::new(&columns, options);
    let mut total = acc.total();
    // The first data row's line number, as a spreadsheet numbers it.
    let mut line = bounds.map_or(2, |b| u64::from(b.first_row) + 2);
    run_units(
        &name,
        FileFormat::Xlsx,
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
            while batch.rows < BATCH_ROWS && rows.next(&mut cells, &mut row).map_err(bad)? {
                for (i, column) in batch.columns.iter_mut().enumerate() {
                    text.clear();
                    let value = row.get(i).unwrap_or(&DataRef::Empty);
                    // `read_excel` reads pandas' missing-value strings (`NA`, ...) as missing too.
                    if cell(value, &mut text)
                        && !(is_text(value) && options.nulls.is_null(text.as_bytes()))
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

/// Where a sheet's used (non-empty) cells lie, zero-based: the first row and the columns.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Bounds {
    first_row: u32,
    first_col: u32,
    last_col: u32,
}

/// Excel's last row and column (`XFD1048576`), zero-based: a cell past them is a corrupt sheet.
/// Without the check a malformed reference (`ZZZZZZ1`, or one whose column overflows calamine's
/// `u32`) made every row hundreds of millions of cells wide, or the row loop run for billions.
const LAST_ROW: u32 = 1_048_575;
const LAST_COL: u32 = 16_383;

/// The bounds of the sheet's used cells, by streaming it once; `None` for a sheet with none.
fn used_bounds<RS: Read + Seek>(
    book: &mut Xlsx<RS>,
    sheet: &str,
) -> Result<Option<Bounds>, String> {
    let mut cells = book
        .worksheet_cells_reader(sheet)
        .map_err(|e| e.to_string())?;
    let mut bounds: Option<Bounds> = None;
    while let Some(cell) = cells.next_cell().map_err(|e| e.to_string())? {
        if matches!(cell.get_value(), DataRef::Empty) {
            continue;
        }
        let (r, c) = cell.get_position();
        if r > LAST_ROW || c > LAST_COL {
            return Err(format!(
                "a cell at row {} and column {} lies past Excel's last cell (XFD1048576)",
                u64::from(r) + 1,
                u64::from(c) + 1
            ));
        }
        bounds = Some(match bounds {
            None => Bounds {
                first_row: r,
                first_col: c,
                last_col: c,
            },
            Some(b) => Bounds {
                first_row: b.first_row.min(r),
                first_col: b.first_col.min(c),
                last_col: b.last_col.max(c),
            },
        });
    }
    Ok(bounds)
}

/// The sheet's rows within its used bounds, one at a time from the cell stream: a row with no
/// used cell between used ones comes out empty, as in a `calamine` range.
struct Rows<'a> {
    bounds: Option<Bounds>,
    /// The row the next call yields.
    next_row: u32,
    /// A used cell read ahead that belongs to a later row.
    pending: Option<Cell<DataRef<'a>>>,
    done: bool,
}

impl<'a> Rows<'a> {
    fn new(bounds: Option<Bounds>) -> Self {
        Self {
            bounds,
            next_row: bounds.map_or(0, |b| b.first_row),
            pending: None,
            done: bounds.is_none(),
        }
    }

    /// The next used cell of the stream, if any.
    fn used_cell<RS: Read + Seek>(
        cells: &mut XlsxCellReader<'a, RS>,
    ) -> Result<Option<Cell<DataRef<'a>>>, XlsxError> {
        while let Some(cell) = cells.next_cell()? {
            if !matches!(cell.get_value(), DataRef::Empty) {
                return Ok(Some(cell));
            }
        }
        Ok(None)
    }

    /// Fills `row` with the next row's cells (one per column of the bounds); false at the end.
    fn next<RS: Read + Seek>(
        &mut self,
        cells: &mut XlsxCellReader<'a, RS>,
        row: &mut Vec<DataRef<'a>>,
    ) -> Result<bool, XlsxError> {
        let Some(bounds) = self.bounds else {
            return Ok(false);
        };
        if self.pending.is_none() && !self.done {
            self.pending = Self::used_cell(cells)?;
            self.done = self.pending.is_none();
        }
        let Some(first) = self.pending.take() else {
            return Ok(false);
        };
        row.clear();
        row.resize(
            (bounds.last_col - bounds.first_col) as usize + 1,
            DataRef::Empty,
        );
        let current = self.next_row;
        self.next_row += 1;
        if first.get_position().0 > current {
            self.pending = Some(first); // an empty row between used ones
            return Ok(true);
        }
        let mut cell = Some(first);
        while let Some(c) = cell.take() {
            let (r, col) = c.get_position();
            if r > current {
                self.pending = Some(c);
                break;
            }
            if r < current {
                return Err(XlsxError::Unexpected(
                    "the sheet's cells are not in row order, which this reader needs",
                ));
            }
            if let Some(slot) = row.get_mut((col - bounds.first_col) as usize) {
                *slot = c.get_value().clone();
            }
            cell = Self::used_cell(cells)?;
            self.done = cell.is_none();
        }
        Ok(true)
    }
}

/// A header cell's text (`2024` for the number 2024.0, as pandas names the column).
fn header_text(data: &DataRef<'_>) -> String {
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

/// Whether the cell holds text (which pandas' missing-value strings can make missing).
fn is_text(data: &DataRef<'_>) -> bool {
    matches!(data, DataRef::String(_) | DataRef::SharedString(_))
}

/// Writes the cell's text; false for an empty or error cell (missing).
fn cell(data: &DataRef<'_>, out: &mut String) -> bool {
    match data {
        DataRef::Empty | DataRef::Error(_) => false,
        DataRef::Int(i) => {
            out.push_str(itoa::Buffer::new().format(*i));
            true
        }
        DataRef::Float(f) => {
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
        DataRef::Bool(b) => {
            out.push_str(if *b { "True" } else { "False" });
            true
        }
        DataRef::SharedString(s) => {
            out.push_str(s);
            true
        }
        DataRef::String(s) | DataRef::DateTimeIso(s) | DataRef::DurationIso(s) => {
            out.push_str(s);
            true
        }
        DataRef::DateTime(d) => {
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
        assert!(cell(&DataRef::Float(2024.0), &mut s));
        assert_eq!(s, "2024");
        s.clear();
        assert!(cell(&DataRef::Float(2.5), &mut s));
        assert_eq!(s, "2.5");
        assert!(!cell(&DataRef::Empty, &mut s));
    }
}
