//! Rows of a typed file as text cells, column by column: what every reader hands the table
//! accumulator, so that statistics, patterns and samples are the CSV profiler's own.

use crate::table::TableAcc;

/// One column of a batch: its cells end to end, where each ends, and which are missing.
#[derive(Debug, Default, Clone)]
pub(crate) struct TextColumn {
    text: String,
    ends: Vec<usize>,
    valid: Vec<bool>,
}

impl TextColumn {
    pub(crate) fn with_capacity(rows: usize) -> Self {
        Self {
            text: String::with_capacity(rows * 8),
            ends: Vec::with_capacity(rows),
            valid: Vec::with_capacity(rows),
        }
    }

    /// Appends a missing cell.
    #[inline]
    pub(crate) fn push_null(&mut self) {
        self.ends.push(self.text.len());
        self.valid.push(false);
    }

    /// Appends a cell.
    #[inline]
    pub(crate) fn push(&mut self, value: &str) {
        self.text.push_str(value);
        self.ends.push(self.text.len());
        self.valid.push(true);
    }

    /// Appends a cell written by `write` into the column's text.
    #[inline]
    pub(crate) fn push_with(&mut self, write: impl FnOnce(&mut String)) {
        write(&mut self.text);
        self.ends.push(self.text.len());
        self.valid.push(true);
    }

    /// Turns the last cell into a missing one (a value that could not be written).
    pub(crate) fn undo_to_null(&mut self) {
        self.ends.pop();
        self.valid.pop();
        let start = self.ends.last().copied().unwrap_or(0);
        self.text.truncate(start);
        self.push_null();
    }

    /// Cell `row`, `None` when missing.
    #[inline]
    pub(crate) fn get(&self, row: usize) -> Option<&str> {
        if !*self.valid.get(row)? {
            return None;
        }
        let start = if row == 0 { 0 } else { self.ends[row - 1] };
        self.text.get(start..self.ends[row])
    }

    /// Cells in the column.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.ends.len()
    }
}

/// Rows of a file as text columns, with the line each row reports.
#[derive(Debug, Default, Clone)]
pub(crate) struct TextBatch {
    pub(crate) columns: Vec<TextColumn>,
    /// The line of the batch's first row; rows follow on consecutive lines unless `lines` is
    /// given.
    pub(crate) first_line: u64,
    /// Each row's line, when rows do not sit on consecutive lines.
    pub(crate) lines: Option<Vec<u64>>,
    pub(crate) rows: usize,
}

impl TextBatch {
    /// Adds every row to `acc`; `first_row` is the 1-based position of the batch's first row
    /// in the accumulator's unit.
    pub(crate) fn feed(&self, acc: &mut TableAcc, first_row: u64) {
        let mut cells: Vec<Option<&str>> = Vec::with_capacity(self.columns.len());
        for r in 0..self.rows {
            cells.clear();
            cells.extend(self.columns.iter().map(|c| c.get(r)));
            let line = match &self.lines {
                Some(lines) => lines.get(r).copied().unwrap_or_default(),
                None => self.first_line + r as u64,
            };
            acc.add_cells(first_row + r as u64, line, &cells);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_come_back_as_pushed() {
        let mut c = TextColumn::with_capacity(3);
        c.push("ab");
        c.push_null();
        c.push_with(|s| s.push_str("cde"));
        c.push("");
        assert_eq!(c.len(), 4);
        assert_eq!(c.get(0), Some("ab"));
        assert_eq!(c.get(1), None);
        assert_eq!(c.get(2), Some("cde"));
        assert_eq!(c.get(3), Some(""));
        assert_eq!(c.get(4), None);
    }
}
