//! Bottom-k sampling: keep the `k` items with the smallest random keys. With keys derived from
//! the item's position and a seed, the sample is uniform, deterministic, and the same whether
//! the input is processed in one piece or in chunks merged later.

/// An item with its random key.
#[derive(Debug, Clone)]
struct Keyed<T> {
    key: u64,
    item: T,
}

/// The `k` items with the smallest keys seen so far. Items below the current threshold are
/// appended to a buffer; when it holds `2k`, the `k` smallest are kept (linear-time selection)
/// and the threshold drops to the largest kept key: amortized O(1) per offer.
#[derive(Debug, Clone)]
pub(crate) struct BottomK<T> {
    k: usize,
    kept: Vec<Keyed<T>>,
    threshold: u64,
    seen: u64,
}

impl<T> BottomK<T> {
    #[cfg(test)]
    pub(crate) fn new(k: usize) -> Self {
        Self::with_threshold(k, u64::MAX)
    }

    /// A sample that already knows keys from `threshold` up cannot make the final sample
    /// (another part of the input has `k` smaller ones).
    pub(crate) fn with_threshold(k: usize, threshold: u64) -> Self {
        Self {
            k,
            kept: Vec::new(),
            // An empty sample keeps no key.
            threshold: if k == 0 { 0 } else { threshold },
            seen: 0,
        }
    }

    /// Keys from here up are not kept.
    pub(crate) fn threshold(&self) -> u64 {
        self.threshold
    }

    /// Offers an item; `make` is called only when the item may be kept.
    #[inline]
    pub(crate) fn offer(&mut self, key: u64, make: impl FnOnce() -> T) {
        self.seen += 1;
        if key >= self.threshold {
            return;
        }
        self.kept.push(Keyed { key, item: make() });
        if self.kept.len() >= 2 * self.k {
            self.compact();
        }
    }

    /// Keeps the `k` smallest keys and lowers the threshold to the largest of them.
    fn compact(&mut self) {
        if self.kept.len() <= self.k {
            return;
        }
        self.kept.select_nth_unstable_by_key(self.k - 1, |x| x.key);
        self.kept.truncate(self.k);
        self.threshold = self.kept.iter().map(|x| x.key).max().unwrap_or(u64::MAX);
    }

    /// Keeps the `k` smallest keys of both.
    pub(crate) fn merge(&mut self, other: BottomK<T>) {
        self.seen += other.seen;
        self.threshold = self.threshold.min(other.threshold);
        let threshold = self.threshold;
        self.kept.retain(|x| x.key <= threshold);
        self.kept
            .extend(other.kept.into_iter().filter(|x| x.key <= threshold));
        if self.kept.len() >= 2 * self.k {
            self.compact();
        }
    }

    /// Changes every kept item (not its key).
    pub(crate) fn for_each_mut(&mut self, mut f: impl FnMut(&mut T)) {
        for x in &mut self.kept {
            f(&mut x.item);
        }
    }

    /// Whether every offered item was kept.
    pub(crate) fn is_complete(&self) -> bool {
        usize::try_from(self.seen).is_ok_and(|seen| seen <= self.k)
    }

    /// The kept items, in no particular order.
    pub(crate) fn into_items(mut self) -> Vec<T> {
        self.compact();
        self.kept.into_iter().map(|x| x.item).collect()
    }

    /// The kept items (call [`BottomK::settle`] first for exactly the `k` smallest).
    pub(crate) fn items(&self) -> impl Iterator<Item = &T> {
        self.kept.iter().map(|x| &x.item)
    }

    /// Drops items beyond the `k` smallest.
    pub(crate) fn settle(&mut self) {
        self.compact();
    }
}

/// numpy's default (linear) quantile of sorted values.
pub(crate) fn linear_quantile(sorted: &[f64], q: f64) -> Option<f64> {
    if sorted.is_empty() {
        return None;
    }
    let position = (sorted.len() - 1) as f64 * q;
    let below = position.floor();
    // `position` is within 0..len.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let index = below as usize;
    let low = sorted[index];
    let high = sorted[(index + 1).min(sorted.len() - 1)];
    Some(lerp(low, high, position - below))
}

/// numpy's `_lerp` between neighbours `low` and `high` at `frac` (exact at the ends).
#[allow(clippy::float_cmp)] // equal neighbours need no interpolation
pub(crate) fn lerp(low: f64, high: f64, frac: f64) -> f64 {
    if frac == 0.0 || low == high {
        return low;
    }
    let diff = high - low;
    if frac >= 0.5 {
        high - diff * (1.0 - frac)
    } else {
        low + diff * frac
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sketch::hash::key3;

    #[test]
    fn chunked_sampling_equals_one_piece() {
        let mut whole = BottomK::new(10);
        for i in 0..1000u64 {
            whole.offer(key3(1, 0, i), || i);
        }
        let mut merged = BottomK::new(10);
        for part in 0..10u64 {
            let mut b = BottomK::new(10);
            for i in part * 100..(part + 1) * 100 {
                b.offer(key3(1, 0, i), || i);
            }
            merged.merge(b);
        }
        let mut a = whole.into_items();
        let mut b = merged.into_items();
        a.sort_unstable();
        b.sort_unstable();
        assert_eq!(a, b);
    }

    #[test]
    fn quantiles_interpolate_like_numpy() {
        let v = [1.0, 2.0, 3.0, 4.0];
        assert_eq!(linear_quantile(&v, 0.5), Some(2.5));
        assert_eq!(linear_quantile(&v, 0.25), Some(1.75));
        assert_eq!(linear_quantile(&v, 1.0), Some(4.0));
        assert_eq!(linear_quantile(&[], 0.5), None);
    }
}
