//! From a column's accumulator to its [`ColumnProfile`]: the type, then the statistics that
//! type calls for.

use autocoder_schema::{DataType, Scalar};

use super::{ColumnAcc, TOP_SHAPES};
use crate::stats::{Moments, histogram, quantiles};
use crate::temporal::{DATE_FORMATS, IsoForm, format_date, format_datetime};
use crate::{
    ColumnProfile, Histogram, HistogramBin, LengthStats, Monotonic, NumericStats, ProfileOptions,
    Quantile,
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
                self.distinct_error()
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
                if let Some(m) = self.times_with_dates() {
                    let at = |x: f64| Scalar::Str(format_datetime(x));
                    p.min = Some(at(m.min));
                    p.max = Some(at(m.max));
                    self.distribution(&mut p, &m, options, &at);
                    if self.iso_dates > 0 {
                        // Dates and datetimes were summarized apart: their order is unknown.
                        p.monotonic = Monotonic::None;
                        p.unique = false;
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
