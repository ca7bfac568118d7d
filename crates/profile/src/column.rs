//! The accumulator of one column over a chunk: type evidence and the statistics of every type the
//! column might turn out to have, mergeable in file order; and the final [`ColumnProfile`].

use autocoder_schema::{DataType, Scalar};

use crate::classify::{Kind, classify};
use crate::patterns::PatternCounts;
use crate::sketch::counts::ValueCounts;
use crate::sketch::hll::HLL_RELATIVE_ERROR;
use crate::stats::{Moments, histogram, quantiles};
use crate::temporal::{
    ALL_DATE_FORMATS, DATE_FORMATS, IsoForm, date_under, format_date, format_datetime,
};
use crate::{
    ColumnProfile, Histogram, HistogramBin, LengthStats, Monotonic, NumericStats, ProfileOptions,
    Quantile,
};

/// How many shapes a profile lists per column.
const TOP_SHAPES: usize = 5;

/// Samples per column: numbers, times, then one per date format.
pub(crate) const SAMPLES: usize = 2 + DATE_FORMATS.len();

/// Settings every column accumulator needs.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ColumnSettings {
    pub(crate) distinct_exact_bound: usize,
    pub(crate) quantile_sample: usize,
}

/// Everything known about one column so far.
#[derive(Debug, Clone)]
pub(crate) struct ColumnAcc {
    settings: ColumnSettings,
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
    date_formats: u8,
    iso_dates: u64,
    by_format: [Option<Box<Moments>>; DATE_FORMATS.len()],
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
    pub(crate) fn new(settings: ColumnSettings, many_values: bool, gates: [u64; SAMPLES]) -> Self {
        Self {
            settings,
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
            date_formats: ALL_DATE_FORMATS,
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
            counts: if many_values {
                ValueCounts::sketched(settings.distinct_exact_bound)
            } else {
                ValueCounts::new(settings.distinct_exact_bound)
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

    /// Whether distinct values are still counted exactly.
    pub(crate) fn counts_exact(&self) -> bool {
        self.counts.is_exact()
    }

    #[inline]
    pub(crate) fn add_null(&mut self) {
        self.nulls += 1;
    }

    /// Adds a non-missing value; `hash` is its text's hash, `key` the row's random key.
    #[inline]
    pub(crate) fn add(&mut self, value: &str, hash: u64, key: u64, measure_patterns: bool) {
        self.count += 1;
        self.counts.add(hash, value, key);
        let chars = value
            .as_bytes()
            .iter()
            .filter(|&&b| b.cast_signed() >= -0x40)
            .count() as u64;
        self.len_min = self.len_min.min(chars);
        self.len_max = self.len_max.max(chars);
        self.len_sum += chars;
        let p = prefix(value);
        keep_extreme(&mut self.text_min, value, p, std::cmp::Ordering::Less);
        keep_extreme(&mut self.text_max, value, p, std::cmp::Ordering::Greater);
        if measure_patterns {
            self.patterns.add(value);
        }
        match classify(value) {
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
                self.date_formats &= formats;
                let mut first = true;
                for (i, slot) in self.by_format.iter_mut().enumerate() {
                    if formats & (1 << i) == 0 {
                        continue;
                    }
                    let d = if first {
                        Some(days)
                    } else {
                        date_under(value, i)
                    };
                    first = false;
                    if let Some(d) = d {
                        let (k, gate) = (self.settings.quantile_sample, self.gates[2 + i]);
                        slot.get_or_insert_with(|| Box::new(Moments::gated(k, gate)))
                            .add(d as f64, key);
                    }
                }
                if formats & 1 == 1 {
                    self.iso_dates += 1;
                    self.add_time(days as f64 * 86_400.0, key);
                }
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
            Kind::Text => {}
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

    /// The column's type, by the narrowest kind every value fits.
    fn dtype(&self) -> DataType {
        let n = self.count;
        if n == 0 {
            DataType::Empty
        } else if self.bools == n {
            DataType::Boolean
        } else if self.ints == n {
            DataType::Integer
        } else if self.ints + self.floats == n {
            DataType::Float
        } else if self.dates == n && self.date_formats != 0 {
            DataType::Date
        } else if self.iso_dates + self.datetimes == n && self.datetimes > 0 {
            DataType::Datetime
        } else {
            DataType::String
        }
    }

    #[allow(clippy::too_many_lines)] // one arm per type, each short
    pub(crate) fn finish(&self, name: String, options: &ProfileOptions) -> ColumnProfile {
        let dtype = self.dtype();
        let counts = self.counts.summary(options.top_k);
        let mut p = ColumnProfile {
            name,
            dtype,
            nullable: self.nulls > 0,
            count: self.count,
            nulls: self.nulls,
            distinct: counts.distinct,
            distinct_exact: counts.exact,
            distinct_relative_error: if counts.exact {
                0.0
            } else {
                HLL_RELATIVE_ERROR
            },
            unique: counts.exact
                && counts.all_unique
                && self.count > 0
                && self.text_is_value(dtype),
            min: None,
            max: None,
            numeric: None,
            quantiles: Vec::new(),
            quantiles_exact: false,
            histogram: None,
            top_values: counts.top,
            top_values_exact: counts.exact,
            lengths: None,
            monotonic: Monotonic::None,
            patterns: Vec::new(),
            shapes: Vec::new(),
            datetime_format: None,
            utc: false,
        };
        match dtype {
            DataType::Empty => {}
            DataType::Boolean => {
                p.min = Some(Scalar::Bool(self.trues == self.count));
                p.max = Some(Scalar::Bool(self.trues > 0));
            }
            DataType::Integer | DataType::Float => {
                let m = &self.numbers;
                if dtype == DataType::Integer {
                    p.min = Some(Scalar::Int(self.int_min));
                    p.max = Some(Scalar::Int(self.int_max));
                } else if m.n > 0 {
                    p.min = Some(Scalar::Float(m.min));
                    p.max = Some(Scalar::Float(m.max));
                }
                p.numeric = Some(NumericStats {
                    sum: m.sum(),
                    mean: m.mean(),
                    std: m.std(),
                    zeros: self.zeros,
                    negatives: self.negatives,
                    infinities: self.infinities,
                });
                self.distribution(&mut p, m, options, &|x| Scalar::Float(x));
            }
            DataType::Date => {
                let format = (0..DATE_FORMATS.len())
                    .find(|i| self.date_formats & (1 << i) != 0)
                    .unwrap_or(0);
                p.datetime_format = Some(DATE_FORMATS[format].to_owned());
                if let Some(m) = &self.by_format[format] {
                    let day = |x: f64| {
                        // Day numbers of real dates fit in i64.
                        #[allow(clippy::cast_possible_truncation)]
                        let d = x.floor() as i64;
                        Scalar::Str(format_date(d))
                    };
                    p.min = Some(day(m.min));
                    p.max = Some(day(m.max));
                    self.distribution(&mut p, m, options, &day);
                }
            }
            DataType::Datetime => {
                p.utc = self.offsets > 0;
                let uniform = self.iso_dates == 0 && !self.forms_mixed;
                p.datetime_format = Some(
                    self.first_form
                        .filter(|_| uniform)
                        .and_then(IsoForm::format)
                        .unwrap_or_else(|| "ISO8601".to_owned()),
                );
                if let Some(m) = &self.times {
                    let at = |x: f64| Scalar::Str(format_datetime(x));
                    p.min = Some(at(m.min));
                    p.max = Some(at(m.max));
                    self.distribution(&mut p, m, options, &at);
                }
            }
            DataType::String => {
                p.min = self.text_min.as_ref().map(|e| Scalar::Str(e.text.clone()));
                p.max = self.text_max.as_ref().map(|e| Scalar::Str(e.text.clone()));
                p.lengths = Some(LengthStats {
                    min: self.len_min,
                    mean: self.len_sum as f64 / self.count as f64,
                    max: self.len_max,
                });
                p.patterns = self.patterns.rates();
                p.shapes = self.patterns.top_shapes(TOP_SHAPES);
            }
        }
        p
    }

    /// Whether different texts always mean different values in a column of type `dtype`, so
    /// that unique texts prove unique values (`1.0` and `1.00`, `10:00Z` and `12:00+02:00`
    /// differ as text only).
    fn text_is_value(&self, dtype: DataType) -> bool {
        match dtype {
            DataType::String | DataType::Empty => true,
            DataType::Integer => self.odd_ints == 0,
            DataType::Date => self.date_formats & 1 == 1,
            DataType::Datetime => {
                self.offsets == 0
                    && self.iso_dates == 0
                    && !self.forms_mixed
                    && self.first_form.is_some_and(|f| !f.fraction)
            }
            DataType::Boolean | DataType::Float => self.count <= 1,
        }
    }

    /// Quantiles, histogram, sortedness and proven uniqueness from `m`.
    fn distribution(
        &self,
        p: &mut ColumnProfile,
        m: &Moments,
        options: &ProfileOptions,
        to_scalar: &dyn Fn(f64) -> Scalar,
    ) {
        let (sorted, exact) = m.sorted_sample();
        p.quantiles = quantiles(&sorted)
            .into_iter()
            .map(|(q, v)| Quantile {
                q,
                value: to_scalar(v),
            })
            .collect();
        p.quantiles_exact = exact;
        let bins = histogram(&sorted, m.min, m.max, options.histogram_bins, m.n);
        if !bins.is_empty() {
            p.histogram = Some(Histogram {
                bins: bins
                    .into_iter()
                    .map(|(lo, hi, count)| HistogramBin {
                        lo: to_scalar(lo),
                        hi: to_scalar(hi),
                        count,
                    })
                    .collect(),
                exact,
            });
        }
        p.monotonic = m.mono.verdict();
        if m.n == self.count
            && matches!(
                p.monotonic,
                Monotonic::StrictlyIncreasing | Monotonic::StrictlyDecreasing
            )
        {
            p.unique = true;
        }
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
    let mut p = 0u64;
    for (i, &c) in b.iter().enumerate() {
        p |= u64::from(c) << (56 - 8 * i);
    }
    p
}

#[inline]
fn keep_extreme(slot: &mut Option<Extreme>, value: &str, p: u64, want: std::cmp::Ordering) {
    match slot {
        Some(current) => {
            let order = p
                .cmp(&current.prefix)
                .then_with(|| value.cmp(current.text.as_str()));
            if order == want {
                current.prefix = p;
                current.text.clear();
                current.text.push_str(value);
            }
        }
        None => {
            *slot = Some(Extreme {
                prefix: p,
                text: value.to_owned(),
            });
        }
    }
}
