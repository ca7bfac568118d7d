//! The accumulator of a whole chunk (every column, duplicate rows, samples, bad rows), merged in
//! file order into the accumulator of the file, and finished into a [`Profile`].

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use crate::column::{ColumnAcc, ColumnHints, ColumnSettings, SAMPLES};
use crate::records::{ChunkCounts, Record};
use crate::sketch::bottomk::BottomK;
use crate::sketch::flat::FlatSet;
use crate::sketch::hash::{hash_bytes, key3, mix64};
use crate::sketch::hll::{DEFAULT_BITS, Hll, WIDE_BITS};
use crate::{BadRows, FORMAT_VERSION, Profile, ProfileOptions, SampleRow};

/// Rows whose duplicates are counted exactly; past that, estimated.
const DUPLICATE_EXACT_ROWS: usize = 1 << 20;
/// Rows merged before [`TableAcc::foresee`] projects the distinct rows of the whole file.
const FORESEE_AFTER_ROWS: u64 = 10_000;
/// Exact distinct values kept per chunk over all columns: wide files get a lower per-column
/// bound than [`ProfileOptions::distinct_exact_bound`], so that memory stays bounded.
const EXACT_VALUES_PER_CHUNK: usize = 200_000;
/// Quantile sample values kept per chunk over all columns, likewise.
const SAMPLE_VALUES_PER_CHUNK: usize = 200_000;

/// The hash a missing cell of a typed file adds to its row's hash.
const NULL_HASH: u64 = 0x6e75_6c6c_6e75_6c6c;

/// Bad lines listed in a profile.
const BAD_LINES_LISTED: usize = 20;

/// A sampled row before its data row number is known.
#[derive(Debug, Clone)]
struct Sampled {
    row: u64,
    line: u64,
    /// The fields end to end, and where each ends.
    text: String,
    ends: Vec<usize>,
}

/// What chunks tell the chunks that start after them, per column: facts that hold for the
/// whole file once one chunk has seen them, used to skip work that cannot change the profile.
#[derive(Debug)]
pub(crate) struct Hints {
    /// Some value is text: the column is a string column.
    text: Vec<AtomicBool>,
    /// The column has more distinct values than the exact bound.
    many_values: Vec<AtomicBool>,
    /// The merged sample thresholds, [`SAMPLES`] per column.
    gates: Vec<AtomicU64>,
    /// The merged threshold of the sample rows.
    row_gate: AtomicU64,
}

impl Hints {
    pub(crate) fn new(columns: usize) -> Self {
        Self {
            text: (0..columns).map(|_| AtomicBool::new(false)).collect(),
            many_values: (0..columns).map(|_| AtomicBool::new(false)).collect(),
            gates: (0..columns * SAMPLES)
                .map(|_| AtomicU64::new(u64::MAX))
                .collect(),
            row_gate: AtomicU64::new(u64::MAX),
        }
    }

    fn column(&self, i: usize) -> ColumnHints {
        let mut gates = [u64::MAX; SAMPLES];
        for (j, gate) in gates.iter_mut().enumerate() {
            *gate = self.gates[i * SAMPLES + j].load(Ordering::Relaxed);
        }
        ColumnHints {
            text: self.text[i].load(Ordering::Relaxed),
            many_values: self.many_values[i].load(Ordering::Relaxed),
            gates,
        }
    }
}

/// Everything known about a chunk (or, after merging, the file so far).
#[derive(Debug)]
pub(crate) struct TableAcc {
    pub(crate) columns: Vec<ColumnAcc>,
    pub(crate) rows: u64,
    row_hashes: Vec<u64>,
    seen_rows: Option<FlatSet>,
    row_hll: Hll,
    duplicates: u64,
    samples: BottomK<Sampled>,
    bad: BadRows,
    pattern_rows: u64,
    chunk: u64,
    seed: u64,
    pattern_rows_per_chunk: u64,
}

impl TableAcc {
    /// `hints` are what other chunks found out so far (none for the file's accumulator).
    pub(crate) fn new(
        columns: usize,
        chunk: u64,
        options: &ProfileOptions,
        hints: Option<&Hints>,
    ) -> Self {
        let settings = ColumnSettings {
            distinct_exact_bound: options
                .distinct_exact_bound
                .min((EXACT_VALUES_PER_CHUNK / columns.max(1)).max(256)),
            quantile_sample: options
                .quantile_sample
                .min((SAMPLE_VALUES_PER_CHUNK / columns.max(1)).max(256)),
            hll_bits: if columns > 32 {
                WIDE_BITS
            } else {
                DEFAULT_BITS
            },
        };
        Self {
            columns: (0..columns)
                .map(|i| match hints {
                    Some(h) => ColumnAcc::new(settings, &h.column(i)),
                    None => ColumnAcc::new(settings, &ColumnHints::default()),
                })
                .collect(),
            rows: 0,
            row_hashes: Vec::new(),
            seen_rows: Some(FlatSet::default()),
            row_hll: Hll::default(),
            duplicates: 0,
            samples: BottomK::with_threshold(
                options.sample_rows,
                hints.map_or(u64::MAX, |h| h.row_gate.load(Ordering::Relaxed)),
            ),
            bad: BadRows::default(),
            pattern_rows: 0,
            chunk,
            seed: options.seed,
            pattern_rows_per_chunk: options.pattern_rows_per_chunk as u64,
        }
    }

    /// Adds one record of this chunk.
    #[inline]
    pub(crate) fn add_record(&mut self, record: &Record<'_>) {
        self.rows += 1;
        let key = key3(self.seed, self.chunk, record.row_in_chunk());
        let measure = record.row_in_chunk() <= self.pattern_rows_per_chunk;
        self.pattern_rows += u64::from(measure);
        let mut row_hash = record.len() as u64;
        let ascii = record.all_ascii();
        for (i, column) in self.columns.iter_mut().enumerate() {
            let Some(field) = record.field(i) else {
                column.add_null();
                continue;
            };
            let hash = hash_bytes(field.as_bytes(), 0);
            row_hash = mix64(row_hash.rotate_left(17) ^ hash);
            if record.is_null_text(field) {
                column.add_null();
            } else {
                column.add(field, hash, key, measure, ascii);
            }
        }
        self.row_hashes.push(row_hash);
        self.samples.offer(key, || {
            let (text, ends) = record.to_joined();
            Sampled {
                row: record.row_in_chunk(),
                line: record.line(),
                text,
                ends,
            }
        });
    }

    /// Adds one row of a typed file (Parquet, Arrow, JSON, Excel): its cells as text, `None`
    /// for a missing value; `row` is its position in the unit (from 1) and `line` what the
    /// profile reports as its line.
    pub(crate) fn add_cells(&mut self, row: u64, line: u64, cells: &[Option<&str>]) {
        self.rows += 1;
        let key = key3(self.seed, self.chunk, row);
        let measure = row <= self.pattern_rows_per_chunk;
        self.pattern_rows += u64::from(measure);
        let mut row_hash = cells.len() as u64;
        for (column, cell) in self.columns.iter_mut().zip(cells) {
            let Some(value) = cell else {
                row_hash = mix64(row_hash.rotate_left(17) ^ NULL_HASH);
                column.add_null();
                continue;
            };
            let hash = hash_bytes(value.as_bytes(), 0);
            row_hash = mix64(row_hash.rotate_left(17) ^ hash);
            column.add(value, hash, key, measure, false);
        }
        self.row_hashes.push(row_hash);
        self.samples.offer(key, || {
            let mut text = String::new();
            let mut ends = Vec::with_capacity(cells.len());
            for cell in cells {
                text.push_str(cell.unwrap_or_default());
                ends.push(text.len());
            }
            Sampled {
                row,
                line,
                text,
                ends,
            }
        });
    }

    /// Measures patterns on none of this chunk's rows (see [`ProfileOptions::pattern_chunks`]).
    pub(crate) fn skip_patterns(&mut self) {
        self.pattern_rows_per_chunk = 0;
    }

    /// Marks column `i` as text whatever its values look like.
    pub(crate) fn force_text(&mut self, i: usize) {
        if let Some(c) = self.columns.get_mut(i) {
            c.force_text();
        }
    }

    /// Classifies the record's values and keeps their types' statistics only (the
    /// inference stage of the benchmark's breakdown, [`crate::Stages::Infer`]).
    pub(crate) fn infer_record(&mut self, record: &Record<'_>) {
        self.rows += 1;
        let key = key3(self.seed, self.chunk, record.row_in_chunk());
        for (i, column) in self.columns.iter_mut().enumerate() {
            match record.field(i) {
                Some(field) if !record.is_null_text(field) => column.infer(field, key),
                _ => column.add_null(),
            }
        }
    }

    /// Tells later chunks which columns hold text and which outgrew the exact distinct bound.
    pub(crate) fn publish_kinds(&self, hints: &Hints) {
        for (i, c) in self.columns.iter().enumerate() {
            if c.has_text() {
                hints.text[i].store(true, Ordering::Relaxed);
            }
            if !c.counts_exact() {
                hints.many_values[i].store(true, Ordering::Relaxed);
            }
        }
    }

    /// [`TableAcc::publish_kinds`], plus the sample thresholds of the merged file so far: later
    /// chunks skip keys that cannot make the final samples.
    pub(crate) fn publish_merged(&self, hints: &Hints) {
        self.publish_kinds(hints);
        hints
            .row_gate
            .store(self.samples.threshold(), Ordering::Relaxed);
        for (i, c) in self.columns.iter().enumerate() {
            for (j, t) in c.thresholds().into_iter().enumerate() {
                hints.gates[i * SAMPLES + j].store(t, Ordering::Relaxed);
            }
        }
    }

    /// Records the line of a short or skipped record.
    pub(crate) fn bad_line(&mut self, line: u64) {
        if self.bad.first_bad_lines.len() < BAD_LINES_LISTED {
            self.bad.first_bad_lines.push(line);
        }
    }

    /// Takes the chunk's counts of short and skipped records.
    pub(crate) fn set_counts(&mut self, counts: ChunkCounts) {
        self.bad.short_rows = counts.short_rows;
        self.bad.long_rows = counts.long_rows;
        self.bad.unclosed_quotes = counts.unclosed_quotes;
    }

    /// Appends the next chunk's accumulator.
    pub(crate) fn merge(&mut self, mut next: TableAcc) {
        let offset = self.rows;
        self.rows += next.rows;
        for (a, b) in self.columns.iter_mut().zip(next.columns) {
            a.merge(b);
        }
        for h in next.row_hashes.drain(..) {
            self.row_hll.add(h);
            if let Some(seen) = &mut self.seen_rows {
                if !seen.insert(h) {
                    self.duplicates += 1;
                }
                if seen.len() > DUPLICATE_EXACT_ROWS {
                    self.seen_rows = None;
                }
            }
        }
        let mut samples = next.samples;
        samples_shift(&mut samples, offset);
        self.samples.merge(samples);
        self.bad.short_rows += next.bad.short_rows;
        self.bad.long_rows += next.bad.long_rows;
        self.bad.unclosed_quotes += next.bad.unclosed_quotes;
        for line in next.bad.first_bad_lines {
            if self.bad.first_bad_lines.len() < BAD_LINES_LISTED {
                self.bad.first_bad_lines.push(line);
            }
        }
        self.pattern_rows += next.pattern_rows;
    }

    /// Stops counting duplicate rows exactly when the distinct rows so far, projected over the
    /// whole input by its size (`bytes_done` of `total_bytes` read), come to more than four times
    /// the exact bound: the set would be dropped at the bound anyway, after costing tens of
    /// megabytes and a cache miss a row. The estimate then comes from the `HyperLogLog`, as for
    /// any file past the bound.
    pub(crate) fn foresee(&mut self, bytes_done: u64, total_bytes: u64) {
        let Some(seen) = &self.seen_rows else { return };
        if self.rows < FORESEE_AFTER_ROWS || bytes_done == 0 || total_bytes <= bytes_done {
            return;
        }
        let projected = seen.len() as f64 * (total_bytes as f64 / bytes_done as f64);
        if projected > 4.0 * DUPLICATE_EXACT_ROWS as f64 {
            self.seen_rows = None;
        }
    }

    pub(crate) fn finish(
        self,
        source: String,
        names: &[String],
        dialect: crate::Dialect,
        bytes: u64,
        options: &ProfileOptions,
    ) -> Profile {
        let (duplicate_rows, duplicate_rows_exact) = if self.seen_rows.is_some() {
            (self.duplicates, true)
        } else {
            (self.rows.saturating_sub(self.row_hll.estimate()), false)
        };
        let columns = self
            .columns
            .iter()
            .zip(names)
            .map(|(c, name)| c.finish(name.clone(), options))
            .collect();
        let mut samples: Vec<SampleRow> = self
            .samples
            .into_items()
            .into_iter()
            .map(|s| {
                let mut start = 0;
                let values = s
                    .ends
                    .iter()
                    .map(|&end| {
                        let field = s.text.get(start..end).unwrap_or_default().to_owned();
                        start = end;
                        field
                    })
                    .collect();
                SampleRow {
                    row: s.row,
                    line: s.line,
                    values,
                }
            })
            .collect();
        samples.sort_unstable_by_key(|s| s.row);
        Profile {
            format_version: FORMAT_VERSION,
            source,
            format: autocoder_schema::FileFormat::Csv,
            sheet: None,
            dialect,
            nulls: options.nulls.clone(),
            bytes,
            rows: self.rows,
            duplicate_rows,
            duplicate_rows_exact,
            bad_rows: self.bad,
            patterns_sampled_rows: self.pattern_rows,
            sample_seed: self.seed,
            columns,
            samples,
        }
    }
}

/// Turns chunk-relative row numbers into file row numbers.
fn samples_shift(samples: &mut BottomK<Sampled>, offset: u64) {
    samples.for_each_mut(|s| s.row += offset);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The file's accumulator after one chunk of `rows` one-column rows, `distinct` of them
    /// different.
    fn merged(rows: u64, distinct: u64) -> TableAcc {
        let options = ProfileOptions::default();
        let mut total = TableAcc::new(1, 0, &options, None);
        let mut chunk = TableAcc::new(1, 0, &options, None);
        for i in 0..rows {
            let value = (i % distinct).to_string();
            chunk.add_cells(i + 1, i + 2, &[Some(&value)]);
        }
        total.merge(chunk);
        total
    }

    #[test]
    fn duplicates_stay_exact_unless_the_file_will_outgrow_the_bound() {
        // 20,000 distinct rows in the first MiB: 2 M projected over 100 MiB, under 4 x 2^20.
        let mut small = merged(20_000, 20_000);
        small.foresee(1 << 20, 100 << 20);
        assert!(small.seen_rows.is_some());
        // Over 1 GiB, 20 M: the exact count would be dropped at 2^20 anyway.
        let mut large = merged(20_000, 20_000);
        large.foresee(1 << 20, 1 << 30);
        assert!(large.seen_rows.is_none());
        // Repeated rows do not count: 100 distinct rows project to about 100 K.
        let mut repeats = merged(20_000, 100);
        repeats.foresee(1 << 20, 1 << 30);
        assert!(repeats.seen_rows.is_some());
        assert_eq!(repeats.duplicates, 19_900);
        // Too few rows to project from, and an input of unknown size, keep it.
        let mut early = merged(5_000, 5_000);
        early.foresee(1 << 20, 1 << 30);
        assert!(early.seen_rows.is_some());
        let mut unknown = merged(20_000, 20_000);
        unknown.foresee(1 << 20, 0);
        assert!(unknown.seen_rows.is_some());
    }
}
