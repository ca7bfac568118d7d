//! The sample rows a test writer is shown to copy into its own input files: the first rows, plus
//! rows that show what the first rows do not: each value of a column with only a few (a
//! `status` of `warning` as well as `ok`) and the first row violating each check. A test copies
//! the rows it sees, and from three `ok` rows within range it can never catch a script that
//! counts no warnings or no anomalies. With several samples, a later sample also shows the rows
//! that join the rows shown of an earlier one (a shared column such as `customer_id` with the
//! same value): three orders of customers the test never sees test no join.
//!
//! Rows are copied byte for byte from the file (found with the `csv` crate, so a quoted field
//! with a comma or a newline cannot split a record); a record that is long or spans lines is
//! left out, since the test writes the rows inside a Python string.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Data rows always shown, from the top of the file.
const FIRST_ROWS: u64 = 3;
/// Data rows shown at most.
const MAX_ROWS: usize = 8;
/// A column with at most this many distinct values (a status, a flag) has each one shown.
const FEW_VALUES: usize = 4;
/// Records scanned for values; a sample is small, but a big one must not be read whole.
const SCAN_RECORDS: u64 = 100_000;
/// Files up to this size are scanned; a bigger one shows its first rows only.
const SCAN_BYTES: u64 = 64 * 1024 * 1024;
/// A longer record is not shown.
const MAX_LINE: usize = 300;

/// Column name -> the values it has in the rows shown of the samples before.
pub(crate) type ShownValues = BTreeMap<String, BTreeSet<Vec<u8>>>;

/// The header and the chosen rows, in file order, or nothing when the file cannot be shown
/// record by record (the caller then falls back to the first lines). `shown` holds the values of
/// the rows shown of earlier samples: a row with one of them in the same column is wanted (it
/// joins), and the values of the rows chosen here are added for the samples after.
pub(crate) fn test_rows(path: &Path, violating: &[u64], shown: &mut ShownValues) -> Vec<String> {
    let too_big = std::fs::metadata(path).map_or(true, |m| m.len() > SCAN_BYTES);
    if too_big {
        return Vec::new();
    }
    let Ok(bytes) = std::fs::read(path) else {
        return Vec::new();
    };
    let bytes = bytes.strip_prefix(b"\xef\xbb\xbf").unwrap_or(&bytes);
    let Some(records) = scan(bytes, shown) else {
        return Vec::new();
    };
    let mut wanted: Vec<u64> = (1..=FIRST_ROWS).collect();
    wanted.extend(violating.iter().copied());
    wanted.extend(records.joining.iter().copied());
    wanted.extend(records.first_of_each_few_value());
    let mut chosen = BTreeSet::new();
    for row in wanted {
        if chosen.len() == MAX_ROWS {
            break;
        }
        if records.lines.contains_key(&row) {
            chosen.insert(row);
        }
    }
    if chosen.is_empty() {
        return Vec::new();
    }
    for row in &chosen {
        note_shown(&records.names, &records.lines[row], shown);
    }
    let mut rows = vec![records.header];
    rows.extend(chosen.iter().map(|row| records.lines[row].clone()));
    rows
}

/// Adds the fields of one shown line to `shown`, by column name.
fn note_shown(names: &[String], line: &str, shown: &mut ShownValues) {
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .from_reader(line.as_bytes());
    let mut record = csv::ByteRecord::new();
    if let Ok(true) = reader.read_byte_record(&mut record) {
        for (name, field) in names.iter().zip(record.iter()) {
            if !field.is_empty() {
                shown
                    .entry(name.clone())
                    .or_default()
                    .insert(field.to_vec());
            }
        }
    }
}

/// What one pass over the file found.
struct Records {
    header: String,
    /// The header's column names.
    names: Vec<String>,
    /// The first row holding each value an earlier sample showed in the same column.
    joining: BTreeSet<u64>,
    /// 1-based data row -> its text, for the rows that can be shown.
    lines: BTreeMap<u64, String>,
    /// Per column, the first row of each value; `None` once the column has too many values.
    first_rows: Vec<Option<BTreeMap<Vec<u8>, u64>>>,
}

impl Records {
    fn first_of_each_few_value(&self) -> Vec<u64> {
        let mut rows: Vec<u64> = self
            .first_rows
            .iter()
            .flatten()
            .filter(|values| values.len() > 1)
            .flat_map(|values| values.values().copied())
            .collect();
        rows.sort_unstable();
        rows
    }
}

fn scan(bytes: &[u8], shown: &ShownValues) -> Option<Records> {
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(bytes);
    let mut record = csv::ByteRecord::new();
    let mut records = Records {
        header: String::new(),
        names: Vec::new(),
        joining: BTreeSet::new(),
        lines: BTreeMap::new(),
        first_rows: Vec::new(),
    };
    // Per column: the values still to find, for the columns an earlier sample showed.
    let mut to_join: Vec<Option<BTreeSet<Vec<u8>>>> = Vec::new();
    let mut row = 0;
    while row <= SCAN_RECORDS {
        let start = reader.position().byte();
        match reader.read_byte_record(&mut record) {
            Ok(true) => {}
            Ok(false) => break,
            Err(_) => return None,
        }
        let end = reader.position().byte();
        let text = shown_text(bytes, start, end);
        if row == 0 {
            records.header = text?;
            records.first_rows = vec![Some(BTreeMap::new()); record.len()];
            records.names = record
                .iter()
                .map(|name| String::from_utf8_lossy(name).trim().to_owned())
                .collect();
            to_join = records
                .names
                .iter()
                .map(|n| shown.get(n).cloned())
                .collect();
        } else {
            note_values(&mut records.first_rows, &record, row);
            for (values, field) in to_join.iter_mut().zip(record.iter()) {
                if values.as_mut().is_some_and(|v| v.remove(field)) {
                    records.joining.insert(row);
                }
            }
            if let Some(text) = text {
                records.lines.insert(row, text);
            }
        }
        row += 1;
    }
    Some(records)
}

/// The record's bytes `[start, end)` without the line ending, if it is one short line of text.
fn shown_text(bytes: &[u8], start: u64, end: u64) -> Option<String> {
    let start = usize::try_from(start).ok()?;
    let end = usize::try_from(end).ok()?.min(bytes.len());
    let text = std::str::from_utf8(bytes.get(start..end)?).ok()?;
    let text = text.trim_matches(['\n', '\r']);
    let shown = !text.is_empty()
        && text.len() <= MAX_LINE
        && !text.contains(['\n', '\r'])
        && !text.contains("'''");
    shown.then(|| text.to_owned())
}

fn note_values(
    first_rows: &mut [Option<BTreeMap<Vec<u8>, u64>>],
    record: &csv::ByteRecord,
    row: u64,
) {
    for (column, field) in first_rows.iter_mut().zip(record.iter()) {
        let Some(values) = column else { continue };
        if !values.contains_key(field) {
            if values.len() == FEW_VALUES {
                *column = None;
                continue;
            }
            values.insert(field.to_vec(), row);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{ShownValues, test_rows};

    fn rows_of(text: &str, violating: &[u64]) -> Vec<String> {
        rows_after(text, violating, &mut ShownValues::new())
    }

    fn rows_after(text: &str, violating: &[u64], shown: &mut ShownValues) -> Vec<String> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.csv");
        std::fs::write(&path, text).unwrap();
        test_rows(&path, violating, shown)
    }

    #[test]
    fn a_later_sample_shows_the_rows_that_join_the_rows_shown_before() {
        let orders = "order_id,customer_id,total\nO1,C08,10\nO2,C10,20\nO3,C08,30\n\
                      O4,C01,40\nO5,C02,50\nO6,C03,60\n";
        let customers: String = std::iter::once("customer_id,name\n".to_owned())
            .chain((1..=12).map(|i| format!("C{i:02},Customer {i}\n")))
            .collect();
        let mut shown = ShownValues::new();
        assert_eq!(
            rows_after(orders, &[], &mut shown),
            [
                "order_id,customer_id,total",
                "O1,C08,10",
                "O2,C10,20",
                "O3,C08,30"
            ]
        );
        assert_eq!(
            rows_after(&customers, &[], &mut shown),
            [
                "customer_id,name",
                "C01,Customer 1",
                "C02,Customer 2",
                "C03,Customer 3",
                "C08,Customer 8",
                "C10,Customer 10"
            ]
        );
        // Without the orders, the customers show their first rows only.
        assert_eq!(rows_of(&customers, &[]).len(), 1 + 3);
    }

    #[test]
    fn the_first_rows_come_with_each_status_and_each_violation() {
        let rows = (1..=20).map(|i| {
            let status = if i == 9 { "warning" } else { "ok" };
            let temp = if i == 14 { 75 } else { 20 + i };
            format!("S{i:02},{temp},{status}\n")
        });
        let text: String = std::iter::once("id,temp,status\n".to_owned())
            .chain(rows)
            .collect();
        assert_eq!(
            rows_of(&text, &[14]),
            [
                "id,temp,status",
                "S01,21,ok",
                "S02,22,ok",
                "S03,23,ok",
                "S09,29,warning",
                "S14,75,ok"
            ]
        );
    }

    #[test]
    fn columns_with_many_values_add_nothing_and_rows_are_capped() {
        let text: String = std::iter::once("a,b\n".to_owned())
            .chain((1..=50).map(|i| format!("{i},{}\n", i % 7)))
            .collect();
        assert_eq!(rows_of(&text, &[]), ["a,b", "1,1", "2,2", "3,3"]);
        let many: Vec<u64> = (10..30).collect();
        assert_eq!(rows_of(&text, &many).len(), 1 + 8);
    }

    #[test]
    fn records_are_copied_whole_or_left_out() {
        let text = "\u{feff}name,note\r\nx,\"a, b\"\r\ny,\"two\nlines\"\r\nz,plain\r\n";
        assert_eq!(rows_of(text, &[2]), ["name,note", "x,\"a, b\"", "z,plain"]);
        assert!(rows_of("", &[]).is_empty());
        assert!(rows_of("only,a,header\n", &[]).is_empty());
    }
}
