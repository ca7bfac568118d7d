//! What every typed reader shares: the columns it found, the accumulators it fills per unit
//! (with the hints later units use to skip work), and the finished [`Profile`].

use autocoder_schema::FileFormat;

use super::text::TextBatch;
use crate::table::{Hints, TableAcc};
use crate::{Dialect, Profile, ProfileOptions};

/// A typed file's columns: names, which hold text whatever it looks like, the declared types
/// and what the profile cannot express.
#[derive(Debug, Clone, Default)]
pub(crate) struct Columns {
    pub(crate) names: Vec<String>,
    pub(crate) text: Vec<bool>,
    pub(crate) source_types: Vec<Option<String>>,
    pub(crate) notes: Vec<Option<String>>,
}

impl Columns {
    pub(crate) fn push(
        &mut self,
        name: String,
        text: bool,
        source_type: Option<String>,
        note: Option<String>,
    ) {
        self.names.push(name);
        self.text.push(text);
        self.source_types.push(source_type);
        self.notes.push(note);
    }

    pub(crate) fn len(&self) -> usize {
        self.names.len()
    }
}

/// The accumulators of one typed file: a fresh one per unit (shared by the workers), merged in
/// file order into the file's (`total`, kept by the caller).
pub(crate) struct Accumulate<'a> {
    pub(crate) columns: &'a Columns,
    pub(crate) options: &'a ProfileOptions,
    hints: Hints,
}

impl<'a> Accumulate<'a> {
    pub(crate) fn new(columns: &'a Columns, options: &'a ProfileOptions) -> Self {
        Self {
            columns,
            options,
            hints: Hints::new(columns.len()),
        }
    }

    /// The file's accumulator, to merge units into.
    pub(crate) fn total(&self) -> TableAcc {
        let mut total = TableAcc::new(self.columns.len(), 0, self.options, None);
        mark_text(&mut total, self.columns);
        total
    }

    /// The accumulator of unit `index`.
    pub(crate) fn unit(&self, index: u64) -> TableAcc {
        let mut acc = TableAcc::new(self.columns.len(), index, self.options, Some(&self.hints));
        mark_text(&mut acc, self.columns);
        acc
    }

    /// The accumulator of unit `index` filled with `batches`.
    pub(crate) fn unit_of(&self, index: u64, batches: &[TextBatch]) -> TableAcc {
        let mut acc = self.unit(index);
        let mut row = 1;
        for b in batches {
            b.feed(&mut acc, row);
            row += b.rows as u64;
        }
        self.done(&acc);
        acc
    }

    /// Tells later units what this one found (call when a unit is full).
    pub(crate) fn done(&self, acc: &TableAcc) {
        acc.publish_kinds(&self.hints);
    }

    /// Appends the next unit's accumulator to `total`.
    pub(crate) fn merge(&self, total: &mut TableAcc, acc: TableAcc) {
        total.merge(acc);
        total.publish_merged(&self.hints);
    }

    /// The profile of the file.
    pub(crate) fn finish(
        &self,
        total: TableAcc,
        source: String,
        bytes: u64,
        format: FileFormat,
        sheet: Option<String>,
    ) -> Profile {
        let dialect = Dialect {
            has_header: true,
            ..Dialect::default()
        };
        let mut profile = total.finish(source, &self.columns.names, dialect, bytes, self.options);
        profile.format = format;
        profile.sheet = sheet;
        for (i, c) in profile.columns.iter_mut().enumerate() {
            c.source_type.clone_from(&self.columns.source_types[i]);
            c.note.clone_from(&self.columns.notes[i]);
        }
        profile
    }
}

fn mark_text(acc: &mut TableAcc, columns: &Columns) {
    for (i, &text) in columns.text.iter().enumerate() {
        if text {
            acc.force_text(i);
        }
    }
}
