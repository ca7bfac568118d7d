//! The accumulator of one column over a chunk: type evidence and the statistics of every type the
//! column might turn out to have, mergeable in file order. `summary` turns it into the final
//! [`crate::ColumnProfile`].

mod exact;
mod summary;

use crate::classify::{Kind, classify};
use crate::patterns::PatternCounts;
use crate::sketch::counts::ValueCounts;
use crate::stats::Moments;
use crate::temporal::{ALL_FORMATS, FORMATS, IsoForm, value_under};

/// How many shapes a profile lists per column.
const TOP_SHAPES: usize = 5;

/// Samples per column: numbers, times, then one per date or datetime format.
pub(crate) const SAMPLES: usize = 2 + FORMATS;

/// Settings every column accumulator needs.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ColumnSettings {
    pub(crate) distinct_exact_bound: usize,
    pub(crate) quantile_sample: usize,
    pub(crate) hll_bits: u32,
}

/// What earlier chunks found out about a column (see [`crate::table::Hints`]).
#[derive(Debug, Clone, Copy)]
pub(crate) struct ColumnHints {
    /// Some value is text.
    pub(crate) text: bool,
    /// More distinct values than the exact bound.
    pub(crate) many_values: bool,
    /// Sample thresholds (see [`Moments::gated`]).
    pub(crate) gates: [u64; SAMPLES],
}

impl Default for ColumnHints {
    fn default() -> Self {
        Self {
            text: false,
            many_values: false,
            gates: [u64::MAX; SAMPLES],
        }
    }
}

/// Everything known about one column so far.
#[derive(Debug, Clone)]
pub(crate) struct ColumnAcc {
    settings: ColumnSettings,
    /// Some value of this chunk is text, so the column is a string column: its values need no
    /// more classifying, and the statistics of other types go unused.
    has_text: bool,
    /// Whether to skip classifying values (`has_text` here or in an earlier chunk).
    text_known: bool,
    count: u64,
    nulls: u64,
    bools: u64,
    trues: u64,
    ints: u64,
    /// Integers not written the one way (`+3`, ` 3`, `-0`): equal values may differ as text.
    odd_ints: u64,
    floats: u64,
    infinities: u64,
    zeros: u64,
    negatives: u64,
    int_min: i64,
    int_max: i64,
    numbers: Moments,
    dates: u64,
    /// Values with a time of day in a named format ([`crate::classify::Kind::Stamp`]).
    stamps: u64,
    /// The date and datetime formats every value so far fits.
    date_formats: u32,
    iso_dates: u64,
    /// Days (dates) or seconds (datetimes) under each format every value so far fits.
    by_format: [Option<Box<Moments>>; FORMATS],
    datetimes: u64,
    first_form: Option<IsoForm>,
    forms_mixed: bool,
    offsets: u64,
    times: Option<Box<Moments>>,
    len_min: u64,
    len_max: u64,
    len_sum: u64,
    text_min: Option<Extreme>,
    text_max: Option<Extreme>,
    counts: ValueCounts,
    patterns: PatternCounts,
    /// Sample thresholds known from earlier chunks (see [`Moments::gated`]).
    gates: [u64; SAMPLES],
}

impl ColumnAcc {
    pub(crate) fn new(settings: ColumnSettings, hints: &ColumnHints) -> Self {
        let gates = hints.gates;
        Self {
            settings,
            has_text: false,
            text_known: hints.text,
            count: 0,
            nulls: 0,
            bools: 0,
            trues: 0,
            ints: 0,
            odd_ints: 0,
            floats: 0,
            infinities: 0,
            zeros: 0,
            negatives: 0,
            int_min: i64::MAX,
            int_max: i64::MIN,
            numbers: Moments::gated(settings.quantile_sample, gates[0]),
            dates: 0,
            stamps: 0,
            date_formats: ALL_FORMATS,
            iso_dates: 0,
            by_format: Default::default(),
            datetimes: 0,
            first_form: None,
            forms_mixed: false,
            offsets: 0,
            times: None,
            len_min: u64::MAX,
            len_max: 0,
            len_sum: 0,
            text_min: None,
            text_max: None,
            counts: if hints.many_values {
                ValueCounts::sketched(settings.distinct_exact_bound, settings.hll_bits)
            } else {
                ValueCounts::new(settings.distinct_exact_bound, settings.hll_bits)
            },
            patterns: PatternCounts::default(),
            gates,
        }
    }

    /// The sample thresholds, to gate later chunks.
    pub(crate) fn thresholds(&self) -> [u64; SAMPLES] {
        let mut t = [u64::MAX; SAMPLES];
        t[0] = self.numbers.threshold();
        if let Some(m) = &self.times {
            t[1] = m.threshold();
        }
        for (i, m) in self.by_format.iter().enumerate() {
            if let Some(m) = m {
                t[2 + i] = m.threshold();
            }
        }
        t
    }

    /// Whether some value is text.
    pub(crate) fn has_text(&self) -> bool {
        self.has_text
    }

    /// The relative standard error of an estimated distinct count.
    pub(crate) fn distinct_error(&self) -> f64 {
        self.counts.relative_error()
    }

    /// Whether distinct values are still counted exactly.
    pub(crate) fn counts_exact(&self) -> bool {
        self.counts.is_exact()
    }

    /// Marks the column as text whatever its values look like (a string column of a typed
    /// file: `"123"` there is text, as pandas reads it).
    pub(crate) fn force_text(&mut self) {
        self.has_text = true;
        self.text_known = true;
    }

    #[inline]
    pub(crate) fn add_null(&mut self) {
        self.nulls += 1;
    }

    /// Adds a non-missing value; `hash` is its text's hash, `key` the row's random key; `ascii`
    /// says that the value is known to be ASCII (its chunk is), so its length counts its
    /// characters without looking at them.
    #[inline]
    pub(crate) fn add(
        &mut self,
        value: &str,
        hash: u64,
        key: u64,
        measure_patterns: bool,
        ascii: bool,
    ) {
        self.count += 1;
        self.counts.add(hash, value, key);
        let p = prefix(value);
        keep_extreme(&mut self.text_min, value, p, std::cmp::Ordering::Less);
        keep_extreme(&mut self.text_max, value, p, std::cmp::Ordering::Greater);
        if measure_patterns {
            self.patterns.add(value);
        }
        // Values of the other kinds are ASCII: only text needs its characters counted.
        let typed = !self.text_known && self.add_kind(value, key);
        let chars = if ascii || typed || value.is_ascii() {
            value.len()
        } else {
            value.chars().count()
        } as u64;
        self.len_min = self.len_min.min(chars);
        self.len_max = self.len_max.max(chars);
        self.len_sum += chars;
    }

    /// Counts a non-missing value and adds it to its type's statistics, nothing else (see
    /// [`crate::Stages::Infer`]).
    pub(crate) fn infer(&mut self, value: &str, key: u64) {
        self.count += 1;
        if !self.text_known {
            self.add_kind(value, key);
        }
    }

    /// Classifies a value and adds it to the statistics of its kind; false for text.
    #[inline]
    fn add_kind(&mut self, value: &str, key: u64) -> bool {
        match classify(value, self.date_formats) {
            Kind::Bool(b) => {
                self.bools += 1;
                self.trues += u64::from(b);
            }
            Kind::Int(i) => {
                self.ints += 1;
                let b = value.as_bytes();
                if b[0] == b'+' || b[0] == b' ' || b[b.len() - 1] == b' ' || value == "-0" {
                    self.odd_ints += 1;
                }
                self.int_min = self.int_min.min(i);
                self.int_max = self.int_max.max(i);
                self.add_number(i as f64, key);
            }
            Kind::Float(f) => {
                self.floats += 1;
                if f.is_finite() {
                    self.add_number(f, key);
                } else {
                    self.infinities += 1;
                }
            }
            Kind::Date { formats, days } => {
                self.dates += 1;
                self.add_formatted(value, formats, days as f64, key);
                if formats & 1 == 1 {
                    // Joined with the datetimes at the end if the column mixes both.
                    self.iso_dates += 1;
                }
            }
            Kind::Stamp { formats, seconds } => {
                self.stamps += 1;
                self.add_formatted(value, formats, seconds, key);
            }
            Kind::Datetime { seconds, form } => {
                self.datetimes += 1;
                self.offsets += u64::from(form.offset);
                match self.first_form {
                    None => self.first_form = Some(form),
                    Some(f) if f != form => self.forms_mixed = true,
                    Some(_) => {}
                }
                self.add_time(seconds, key);
            }
            Kind::Text => {
                self.has_text = true;
                self.text_known = true;
                return false;
            }
        }
        true
    }

    /// Narrows the formats to `formats` and adds the value under each format left (`first` is
    /// its value under the first of `formats`).
    #[inline]
    fn add_formatted(&mut self, value: &str, formats: u32, first: f64, key: u64) {
        self.date_formats &= formats;
        let first_format = formats.trailing_zeros() as usize;
        let mut left = self.date_formats;
        while left != 0 {
            let i = left.trailing_zeros() as usize;
            left &= left - 1;
            let v = if i == first_format {
                Some(first)
            } else {
                value_under(value, i)
            };
            if let (Some(v), Some(slot)) = (v, self.by_format.get_mut(i)) {
                let (k, gate) = (self.settings.quantile_sample, self.gates[2 + i]);
                slot.get_or_insert_with(|| Box::new(Moments::gated(k, gate)))
                    .add(v, key);
            }
        }
    }

    #[inline]
    fn add_number(&mut self, x: f64, key: u64) {
        if x == 0.0 {
            self.zeros += 1;
        } else if x < 0.0 {
            self.negatives += 1;
        }
        self.numbers.add(x, key);
    }

    #[inline]
    fn add_time(&mut self, seconds: f64, key: u64) {
        let (k, gate) = (self.settings.quantile_sample, self.gates[1]);
        self.times
            .get_or_insert_with(|| Box::new(Moments::gated(k, gate)))
            .add(seconds, key);
    }

    /// Appends `next`, the same column of the following chunk.
    pub(crate) fn merge(&mut self, next: ColumnAcc) {
        self.has_text |= next.has_text;
        self.text_known |= next.has_text;
        self.count += next.count;
        self.nulls += next.nulls;
        self.bools += next.bools;
        self.trues += next.trues;
        self.ints += next.ints;
        self.odd_ints += next.odd_ints;
        self.floats += next.floats;
        self.infinities += next.infinities;
        self.zeros += next.zeros;
        self.negatives += next.negatives;
        self.int_min = self.int_min.min(next.int_min);
        self.int_max = self.int_max.max(next.int_max);
        self.numbers.merge(next.numbers);
        self.dates += next.dates;
        self.stamps += next.stamps;
        self.date_formats &= next.date_formats;
        self.iso_dates += next.iso_dates;
        for (a, b) in self.by_format.iter_mut().zip(next.by_format) {
            merge_boxed(a, b);
        }
        self.datetimes += next.datetimes;
        match (self.first_form, next.first_form) {
            (None, f) => self.first_form = f,
            (Some(a), Some(b)) if a != b => self.forms_mixed = true,
            _ => {}
        }
        self.forms_mixed |= next.forms_mixed;
        self.offsets += next.offsets;
        merge_boxed(&mut self.times, next.times);
        self.len_min = self.len_min.min(next.len_min);
        self.len_max = self.len_max.max(next.len_max);
        self.len_sum += next.len_sum;
        if let Some(v) = next.text_min {
            keep_extreme(
                &mut self.text_min,
                &v.text,
                v.prefix,
                std::cmp::Ordering::Less,
            );
        }
        if let Some(v) = next.text_max {
            keep_extreme(
                &mut self.text_max,
                &v.text,
                v.prefix,
                std::cmp::Ordering::Greater,
            );
        }
        self.counts.merge(next.counts);
        self.patterns.merge(next.patterns);
    }
}

fn merge_boxed(a: &mut Option<Box<Moments>>, b: Option<Box<Moments>>) {
    match (a.as_mut(), b) {
        (Some(x), Some(y)) => x.merge(*y),
        (None, Some(y)) => *a = Some(y),
        (_, None) => {}
    }
}

/// The smallest or largest text so far, with its first eight bytes as a big-endian number so
/// that most comparisons need no string comparison.
#[derive(Debug, Clone)]
struct Extreme {
    prefix: u64,
    text: String,
}

#[inline]
fn prefix(value: &str) -> u64 {
    let b = value.as_bytes();
    if let Some(head) = b.first_chunk::<8>() {
        return u64::from_be_bytes(*head);
    }
    let n = b.len();
    if n >= 4 {
        // The first four bytes, and the last four (overlapping them) shifted into place.
        let word =
            |at: usize| u64::from(u32::from_be_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]]));
        return (word(0) << 32) | (word(n - 4) << (64 - 8 * n));
    }
    let mut p = 0u64;
    for (i, &c) in b.iter().enumerate() {
        p |= u64::from(c) << (56 - 8 * i);
    }
    p
}

/// Makes `value` (with prefix `p`) the extreme when it orders `want` against the current one.
/// Most values differ from the extreme in their first eight bytes and are no new extreme: that
/// path is one comparison, the rest is out of line.
#[inline]
fn keep_extreme(slot: &mut Option<Extreme>, value: &str, p: u64, want: std::cmp::Ordering) {
    match slot {
        Some(current) if p != current.prefix => {
            if p.cmp(&current.prefix) == want {
                current.set(value, p);
            }
        }
        Some(current) => {
            if current.tie(value) == want {
                current.set(value, p);
            }
        }
        None => *slot = Some(Extreme::new(value, p)),
    }
}

impl Extreme {
    #[inline(never)]
    fn new(value: &str, prefix: u64) -> Self {
        Self {
            prefix,
            text: value.to_owned(),
        }
    }

    #[inline(never)]
    fn set(&mut self, value: &str, prefix: u64) {
        self.prefix = prefix;
        self.text.clear();
        self.text.push_str(value);
    }

    /// How `value`, whose prefix is this one's, orders against this text.
    #[inline(never)]
    fn tie(&self, value: &str) -> std::cmp::Ordering {
        if value.len() <= 8 && self.text.len() <= 8 {
            // Equal prefixes of texts this short: one is the start of the other.
            value.len().cmp(&self.text.len())
        } else {
            value.cmp(self.text.as_str())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixes_are_the_first_eight_bytes_big_endian() {
        let text = "abcdefghij";
        for n in 0..=text.len() {
            let mut head = [0u8; 8];
            for (slot, &b) in head.iter_mut().zip(&text.as_bytes()[..n]) {
                *slot = b;
            }
            assert_eq!(prefix(&text[..n]), u64::from_be_bytes(head), "{n}");
        }
    }

    #[test]
    fn extremes_agree_with_comparing_texts() {
        let pieces = ["", "a", "b", "\0", "é", "ab", "abcdefgh", "z"];
        let mut x: u64 = 11;
        let mut texts = Vec::new();
        for case in 0..20_000 {
            let mut text = String::new();
            for _ in 0..(case % 6) {
                x = x
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1_442_695_040_888_963_407);
                text.push_str(pieces[(x >> 33) as usize % pieces.len()]);
            }
            texts.push(text);
        }
        for window in texts.chunks(50) {
            let (mut min, mut max) = (None, None);
            for t in window {
                keep_extreme(&mut min, t, prefix(t), std::cmp::Ordering::Less);
                keep_extreme(&mut max, t, prefix(t), std::cmp::Ordering::Greater);
            }
            let text = |e: Option<Extreme>| e.map(|e| e.text);
            assert_eq!(text(min), window.iter().min().cloned());
            assert_eq!(text(max), window.iter().max().cloned());
        }
    }
}
