//! From a column's accumulator to its [`ColumnProfile`]: the type, then the statistics that
//! type calls for.

use autocoder_schema::{DataType, Scalar};

use super::exact::{Group, Reading, groups};
use super::{ColumnAcc, TOP_SHAPES};
use crate::stats::{Moments, histogram, histogram_of_counts, quantiles, quantiles_of_counts};
use crate::temporal::{
    DATE_FORMATS, IsoForm, STAMP_FORMATS, first_format, format_date, format_datetime, format_text,
};
use crate::{
    ColumnProfile, Histogram, HistogramBin, LengthStats, Monotonic, NumericStats, ProfileOptions,
    Quantile, ValueCount,
};

impl ColumnAcc {
    /// The column's type, by the narrowest kind every value fits.
    fn dtype(&self) -> DataType {
        let n = self.count;
        if n == 0 {
            DataType::Empty
        } else if self.has_text {
            DataType::String
        } else if self.bools == n {
            DataType::Boolean
        } else if self.ints == n {
            DataType::Integer
        } else if self.ints + self.floats == n {
            DataType::Float
        } else if self.dates == n && self.date_formats & DATE_FORMATS != 0 {
            DataType::Date
        } else if (self.stamps == n && self.date_formats & STAMP_FORMATS != 0)
            || (self.iso_dates + self.datetimes == n && self.datetimes > 0)
        {
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
            // An estimate can overshoot; there are never more distinct values than values.
            distinct: counts.distinct.min(self.count),
            distinct_exact: counts.exact,
            distinct_relative_error: if counts.exact {
                0.0
            } else {
                self.distinct_error()
            },
            // Texts are values in text columns; typed columns are regrouped by value below.
            unique: counts.exact
                && counts.all_unique
                && self.count > 0
                && matches!(dtype, DataType::String | DataType::Empty),
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
            source_type: None,
            note: None,
        };
        let reading = self.reading(dtype);
        let entries = self.counts.exact_entries();
        let grouped = reading
            .zip(entries.as_deref())
            .and_then(|(reading, entries)| groups(entries, reading));
        if let Some(g) = &grouped {
            p.distinct = g.len() as u64;
            p.unique = self.count > 0 && g.iter().all(|g| g.count == 1);
            let mut top: Vec<&Group<'_>> = g.iter().collect();
            top.sort_unstable_by(|a, b| b.count.cmp(&a.count).then_with(|| a.text.cmp(b.text)));
            p.top_values = top
                .into_iter()
                .take(options.top_k)
                .map(|g| ValueCount {
                    value: g.text.to_owned(),
                    count: g.count,
                })
                .collect();
        }
        // Finite values with their counts, sorted, for exact quantiles and histograms.
        let exact: Option<Vec<(f64, u64)>> = grouped.as_ref().map(|g| {
            g.iter()
                .filter(|g| g.value.is_finite())
                .map(|g| (g.value, g.count))
                .collect()
        });
        let exact = exact.as_deref();
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
                self.distribution(&mut p, m, exact, options, &|x| Scalar::Float(x));
            }
            DataType::Date => {
                let format = first_format(self.date_formats & DATE_FORMATS).unwrap_or(0);
                p.datetime_format = Some(format_text(format).to_owned());
                if let Some(m) = &self.by_format[format] {
                    let day = |x: f64| {
                        // Day numbers of real dates fit in i64.
                        #[allow(clippy::cast_possible_truncation)]
                        let d = x.floor() as i64;
                        Scalar::Str(format_date(d))
                    };
                    p.min = Some(day(m.min));
                    p.max = Some(day(m.max));
                    self.distribution(&mut p, m, exact, options, &day);
                }
            }
            DataType::Datetime if self.stamps == self.count => {
                let format = first_format(self.date_formats & STAMP_FORMATS).unwrap_or(0);
                p.datetime_format = Some(format_text(format).to_owned());
                if let Some(m) = &self.by_format[format] {
                    let at = |x: f64| Scalar::Str(format_datetime(x));
                    p.min = Some(at(m.min));
                    p.max = Some(at(m.max));
                    self.distribution(&mut p, m, exact, options, &at);
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
                if let Some(m) = self.times_with_dates() {
                    let at = |x: f64| Scalar::Str(format_datetime(x));
                    p.min = Some(at(m.min));
                    p.max = Some(at(m.max));
                    self.distribution(&mut p, &m, exact, options, &at);
                    if self.iso_dates > 0 {
                        // Dates and datetimes were summarized apart: their order is unknown.
                        p.monotonic = Monotonic::None;
                        p.unique &= grouped.is_some();
                    }
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

    /// The datetimes, with the ISO dates of a column that mixes both (as midnight).
    fn times_with_dates(&self) -> Option<Moments> {
        let dates = self.by_format[0].as_deref().filter(|_| self.iso_dates > 0);
        match (self.times.as_deref(), dates) {
            (Some(t), Some(d)) => {
                let mut all = t.clone();
                all.merge_unordered(d.scaled(86_400.0));
                Some(all)
            }
            (Some(t), None) => Some(t.clone()),
            (None, Some(d)) => Some(d.scaled(86_400.0)),
            (None, None) => None,
        }
    }

    /// How the texts of a column of type `dtype` read as values.
    fn reading(&self, dtype: DataType) -> Option<Reading> {
        match dtype {
            DataType::Boolean => Some(Reading::Bool),
            DataType::Integer => Some(Reading::Int),
            DataType::Float => Some(Reading::Float),
            DataType::Date => first_format(self.date_formats & DATE_FORMATS).map(Reading::Format),
            DataType::Datetime if self.stamps == self.count => {
                first_format(self.date_formats & STAMP_FORMATS).map(Reading::Format)
            }
            DataType::Datetime => Some(Reading::Iso),
            DataType::String | DataType::Empty => None,
        }
    }

    /// Quantiles, histogram, sortedness and proven uniqueness: from the exact values with
    /// their counts when there are (`exact`, sorted), from `m`'s sample otherwise.
    fn distribution(
        &self,
        p: &mut ColumnProfile,
        m: &Moments,
        counted: Option<&[(f64, u64)]>,
        options: &ProfileOptions,
        to_scalar: &dyn Fn(f64) -> Scalar,
    ) {
        let (qs, bins, exact) = if let Some(values) = counted {
            let bins = histogram_of_counts(
                values.iter().copied(),
                m.min,
                m.max,
                options.histogram_bins,
                1.0,
                m.n,
            );
            (quantiles_of_counts(values), bins, true)
        } else {
            let (sorted, exact) = m.sorted_sample();
            let bins = histogram(&sorted, m.min, m.max, options.histogram_bins, m.n);
            (quantiles(&sorted), bins, exact)
        };
        p.quantiles = qs
            .into_iter()
            .map(|(q, v)| Quantile {
                q,
                value: to_scalar(v),
            })
            .collect();
        p.quantiles_exact = exact;
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
