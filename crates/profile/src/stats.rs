//! Mergeable numeric and temporal accumulators: moments (Welford, merged with Chan's formula),
//! compensated sums, extremes, sortedness, and a bottom-k sample for quantiles and histograms.

use crate::sketch::bottomk::{BottomK, lerp, linear_quantile};

/// The quantiles every profile reports.
pub(crate) const QUANTILES: [f64; 7] = [0.01, 0.05, 0.25, 0.5, 0.75, 0.95, 0.99];

/// Sortedness flags of [`Mono`].
const INC: u8 = 1;
const DEC: u8 = 2;
const STRICT_INC: u8 = 4;
const STRICT_DEC: u8 = 8;
/// The orderings two neighbours `a`, `b` keep, by `(a < b) + 2 (a > b)`: values are never
/// NaN, so two comparisons decide all four (and never both hold).
const KEEP: [u8; 4] = [INC | DEC, INC | STRICT_INC, DEC | STRICT_DEC, 0];

/// Whether values seen in order are sorted.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Mono {
    first: f64,
    last: f64,
    n: u64,
    /// The orderings that still hold: [`INC`], [`DEC`], [`STRICT_INC`], [`STRICT_DEC`].
    flags: u8,
}

impl Default for Mono {
    fn default() -> Self {
        Self {
            first: 0.0,
            last: 0.0,
            n: 0,
            flags: INC | DEC | STRICT_INC | STRICT_DEC,
        }
    }
}

impl Mono {
    #[inline]
    pub(crate) fn add(&mut self, x: f64) {
        if self.n == 0 {
            self.first = x;
        } else {
            self.step(self.last, x);
        }
        self.last = x;
        self.n += 1;
    }

    #[inline]
    fn step(&mut self, a: f64, b: f64) {
        self.flags &= KEEP[usize::from(a < b) | (usize::from(a > b) << 1)];
    }

    /// Appends `next`, which came after `self` in the file.
    pub(crate) fn merge(&mut self, next: &Mono) {
        if next.n == 0 {
            return;
        }
        if self.n == 0 {
            *self = *next;
            return;
        }
        self.step(self.last, next.first);
        self.flags &= next.flags;
        self.last = next.last;
        self.n += next.n;
    }

    pub(crate) fn verdict(&self) -> crate::Monotonic {
        use crate::Monotonic;
        if self.n < 2 {
            Monotonic::None
        } else if self.flags & STRICT_INC != 0 {
            Monotonic::StrictlyIncreasing
        } else if self.flags & STRICT_DEC != 0 {
            Monotonic::StrictlyDecreasing
        } else if self.flags & INC != 0 {
            Monotonic::Increasing
        } else if self.flags & DEC != 0 {
            Monotonic::Decreasing
        } else {
            Monotonic::None
        }
    }
}

/// Count, moments, sum, extremes, sortedness and a sample of finite values.
#[derive(Debug, Clone)]
pub(crate) struct Moments {
    pub(crate) n: u64,
    /// `n` as an `f64` (exact below 2^53), kept apart: converting a `u64` takes several
    /// instructions on x86-64.
    count: f64,
    mean: f64,
    m2: f64,
    sum: f64,
    compensation: f64,
    pub(crate) min: f64,
    pub(crate) max: f64,
    pub(crate) mono: Mono,
    pub(crate) sample: BottomK<f64>,
}

impl Moments {
    #[cfg(test)]
    pub(crate) fn new(sample: usize) -> Self {
        Self::gated(sample, u64::MAX)
    }

    /// Moments whose sample ignores keys from `threshold` up (see [`BottomK::with_threshold`]).
    pub(crate) fn gated(sample: usize, threshold: u64) -> Self {
        Self {
            n: 0,
            count: 0.0,
            mean: 0.0,
            m2: 0.0,
            sum: 0.0,
            compensation: 0.0,
            min: f64::INFINITY,
            max: f64::NEG_INFINITY,
            mono: Mono::default(),
            sample: BottomK::with_threshold(sample, threshold),
        }
    }

    /// Adds a finite value; `key` is the row's random key for the sample.
    #[inline]
    pub(crate) fn add(&mut self, x: f64, key: u64) {
        self.n += 1;
        self.count += 1.0;
        let delta = x - self.mean;
        self.mean += delta / self.count;
        self.m2 += delta * (x - self.mean);
        // Neumaier's compensated sum.
        let t = self.sum + x;
        if self.sum.abs() >= x.abs() {
            self.compensation += (self.sum - t) + x;
        } else {
            self.compensation += (x - t) + self.sum;
        }
        self.sum = t;
        self.min = self.min.min(x);
        self.max = self.max.max(x);
        self.mono.add(x);
        self.sample.offer(key, || x);
    }

    /// Appends `next`, which came after `self` in the file.
    pub(crate) fn merge(&mut self, next: Moments) {
        if next.n > 0 {
            let n = self.n + next.n;
            let delta = next.mean - self.mean;
            let (na, nb) = (self.n as f64, next.n as f64);
            self.mean += delta * nb / n as f64;
            self.m2 += next.m2 + delta * delta * na * nb / n as f64;
            self.n = n;
            self.count = n as f64;
            let t = self.sum + next.sum;
            if self.sum.abs() >= next.sum.abs() {
                self.compensation += (self.sum - t) + next.sum;
            } else {
                self.compensation += (next.sum - t) + self.sum;
            }
            self.sum = t;
            self.compensation += next.compensation;
            self.min = self.min.min(next.min);
            self.max = self.max.max(next.max);
        }
        self.mono.merge(&next.mono);
        self.sample.merge(next.sample);
    }

    /// The same values multiplied by `factor` (days to seconds).
    pub(crate) fn scaled(&self, factor: f64) -> Moments {
        let mut m = self.clone();
        m.mean *= factor;
        m.m2 *= factor * factor;
        m.sum *= factor;
        m.compensation *= factor;
        m.min *= factor;
        m.max *= factor;
        m.mono.first *= factor;
        m.mono.last *= factor;
        m.sample.for_each_mut(|x| *x *= factor);
        m
    }

    /// Adds values that interleave with these in the file (sortedness is then meaningless).
    pub(crate) fn merge_unordered(&mut self, other: Moments) {
        self.merge(other);
    }

    pub(crate) fn sum(&self) -> f64 {
        self.sum + self.compensation
    }

    pub(crate) fn mean(&self) -> f64 {
        // The compensated sum gives a mean as exact as pandas' pairwise sum.
        if self.n == 0 {
            f64::NAN
        } else {
            self.sum() / self.n as f64
        }
    }

    /// Keys from here up cannot enter the sample.
    pub(crate) fn threshold(&self) -> u64 {
        self.sample.threshold()
    }

    /// Sample standard deviation (ddof = 1).
    pub(crate) fn std(&self) -> Option<f64> {
        (self.n > 1).then(|| (self.m2 / (self.n - 1) as f64).max(0.0).sqrt())
    }

    /// The sorted sample, and whether it holds every value.
    pub(crate) fn sorted_sample(&self) -> (Vec<f64>, bool) {
        let mut sample = self.sample.clone();
        sample.settle();
        let mut v: Vec<f64> = sample.items().copied().collect();
        v.sort_unstable_by(f64::total_cmp);
        (v, self.sample.is_complete())
    }
}

/// The quantiles of a sorted sample.
pub(crate) fn quantiles(sorted: &[f64]) -> Vec<(f64, f64)> {
    QUANTILES
        .iter()
        .filter_map(|&q| linear_quantile(sorted, q).map(|v| (q, v)))
        .collect()
}

/// The quantiles of distinct values sorted by value with their counts, as numpy gives them
/// for the values repeated that many times.
pub(crate) fn quantiles_of_counts(sorted: &[(f64, u64)]) -> Vec<(f64, f64)> {
    let n: u64 = sorted.iter().map(|&(_, c)| c).sum();
    if n == 0 {
        return Vec::new();
    }
    let mut ends = Vec::with_capacity(sorted.len());
    let mut total = 0u64;
    for &(_, c) in sorted {
        total += c;
        ends.push(total);
    }
    // The value at 0-based position `i` of the repeated values.
    let at = |i: u64| sorted[ends.partition_point(|&end| end <= i).min(sorted.len() - 1)].0;
    QUANTILES
        .iter()
        .map(|&q| {
            let position = (n - 1) as f64 * q;
            let below = position.floor();
            // `position` is within 0..n.
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
            let index = below as u64;
            let (low, high) = (at(index), at((index + 1).min(n - 1)));
            (q, lerp(low, high, position - below))
        })
        .collect()
}

/// Equal-width bins over `[min, max]`: (lo, hi, count), counts scaled from the sample to `n`.
pub(crate) fn histogram(
    sorted: &[f64],
    min: f64,
    max: f64,
    bins: usize,
    n: u64,
) -> Vec<(f64, f64, u64)> {
    let scale = n as f64 / sorted.len().max(1) as f64;
    histogram_of_counts(sorted.iter().map(|&x| (x, 1)), min, max, bins, scale, n)
}

/// Equal-width bins over `[min, max]` of values with counts, each count multiplied by `scale`;
/// the counts add up to `n`.
pub(crate) fn histogram_of_counts(
    values: impl ExactSizeIterator<Item = (f64, u64)>,
    min: f64,
    max: f64,
    bins: usize,
    scale: f64,
    n: u64,
) -> Vec<(f64, f64, u64)> {
    if values.len() == 0 || bins == 0 || !min.is_finite() || !max.is_finite() {
        return Vec::new();
    }
    let bins = if max > min { bins } else { 1 };
    let width = (max - min) / bins as f64;
    let mut counts = vec![0u64; bins];
    for (x, weight) in values {
        let i = if width > 0.0 {
            // Within 0..bins after the clamp.
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
            let i = ((x - min) / width).floor().max(0.0) as usize;
            i.min(bins - 1)
        } else {
            0
        };
        counts[i] += weight;
    }
    let mut out = Vec::with_capacity(bins);
    let mut given = 0u64;
    for (i, &c) in counts.iter().enumerate() {
        let edge = |i: usize| {
            if i == bins {
                max
            } else {
                round_significant(min + (max - min) * i as f64 / bins as f64)
            }
        };
        let (lo, hi) = (edge(i), edge(i + 1));
        // Scaled counts are non-negative and at most `n`.
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let mut count = (c as f64 * scale).round() as u64;
        if i + 1 == bins {
            count = n.saturating_sub(given);
        }
        given += count;
        out.push((lo, hi, count));
    }
    out
}

/// `x` with 12 significant digits, so that edges read `1.95`, not `1.9500000000000002`.
fn round_significant(x: f64) -> f64 {
    format!("{x:.11e}").parse().unwrap_or(x)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merged_moments_equal_one_pass() {
        let xs: Vec<f64> = (0..1000).map(|i| f64::from(i).sin() * 1e6 + 3.0).collect();
        let mut whole = Moments::new(100);
        for (i, &x) in xs.iter().enumerate() {
            whole.add(x, i as u64);
        }
        let mut merged = Moments::new(100);
        for part in xs.chunks(77) {
            let mut m = Moments::new(100);
            for &x in part {
                m.add(x, 0);
            }
            merged.merge(m);
        }
        let rel = |a: f64, b: f64| ((a - b) / b).abs();
        assert!(rel(whole.mean(), merged.mean()) < 1e-12);
        assert!(rel(whole.std().unwrap(), merged.std().unwrap()) < 1e-12);
        assert_eq!(whole.mono.verdict(), crate::Monotonic::None);
    }

    #[test]
    fn sortedness_survives_merging() {
        let mut a = Mono::default();
        for x in [1.0, 2.0, 2.0] {
            a.add(x);
        }
        let mut b = Mono::default();
        for x in [3.0, 4.0] {
            b.add(x);
        }
        a.merge(&b);
        assert_eq!(a.verdict(), crate::Monotonic::Increasing);
        let mut c = Mono::default();
        c.add(0.0);
        a.merge(&c);
        assert_eq!(a.verdict(), crate::Monotonic::None);
    }

    #[test]
    fn histogram_counts_add_up() {
        let v: Vec<f64> = (0..100).map(f64::from).collect();
        let h = histogram(&v, 0.0, 99.0, 10, 100);
        assert_eq!(h.len(), 10);
        assert_eq!(h.iter().map(|b| b.2).sum::<u64>(), 100);
        assert_eq!(h[0].2, 10);
        assert_eq!(histogram(&[5.0], 5.0, 5.0, 10, 1), vec![(5.0, 5.0, 1)]);
    }
}
