//! Bottom-k sampling: keep the `k` items with the smallest random keys. With keys derived from
//! the item's position and a seed, the sample is uniform, deterministic, and the same whether
//! the input is processed in one piece or in chunks merged later.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

#[derive(Debug, Clone)]
struct Keyed<T> {
    key: u64,
    item: T,
}

impl<T> PartialEq for Keyed<T> {
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key
    }
}
impl<T> Eq for Keyed<T> {}
impl<T> PartialOrd for Keyed<T> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl<T> Ord for Keyed<T> {
    fn cmp(&self, other: &Self) -> Ordering {
        self.key.cmp(&other.key)
    }
}

/// The `k` items with the smallest keys seen so far.
#[derive(Debug, Clone)]
pub(crate) struct BottomK<T> {
    k: usize,
    heap: BinaryHeap<Keyed<T>>,
    seen: u64,
}

impl<T> BottomK<T> {
    pub(crate) fn new(k: usize) -> Self {
        Self {
            k,
            heap: BinaryHeap::new(),
            seen: 0,
        }
    }

    /// Whether an item with this key would be kept (call before building an expensive item).
    #[inline]
    pub(crate) fn wants(&self, key: u64) -> bool {
        self.heap.len() < self.k || self.heap.peek().is_some_and(|top| key < top.key)
    }

    /// Offers an item; `seen` counts every offer.
    #[inline]
    pub(crate) fn offer(&mut self, key: u64, make: impl FnOnce() -> T) {
        self.seen += 1;
        if !self.wants(key) {
            return;
        }
        if self.heap.len() >= self.k {
            self.heap.pop();
        }
        if self.k > 0 {
            self.heap.push(Keyed { key, item: make() });
        }
    }

    /// Keeps the `k` smallest keys of both.
    pub(crate) fn merge(&mut self, other: BottomK<T>) {
        self.seen += other.seen;
        for kept in other.heap {
            if self.heap.len() < self.k {
                self.heap.push(kept);
            } else if self.heap.peek().is_some_and(|top| kept.key < top.key) {
                self.heap.pop();
                self.heap.push(kept);
            }
        }
    }

    /// Changes every kept item (not its key).
    pub(crate) fn for_each_mut(&mut self, mut f: impl FnMut(&mut T)) {
        let mut kept = std::mem::take(&mut self.heap).into_vec();
        for k in &mut kept {
            f(&mut k.item);
        }
        self.heap = BinaryHeap::from(kept);
    }

    /// Whether every offered item was kept.
    pub(crate) fn is_complete(&self) -> bool {
        usize::try_from(self.seen).is_ok_and(|seen| seen <= self.k)
    }

    /// The kept items, in no particular order.
    pub(crate) fn into_items(self) -> Vec<T> {
        self.heap.into_iter().map(|k| k.item).collect()
    }

    /// The kept items.
    pub(crate) fn items(&self) -> impl Iterator<Item = &T> {
        self.heap.iter().map(|k| &k.item)
    }
}

/// numpy's default (linear) quantile of sorted values.
#[allow(clippy::float_cmp)] // equal neighbours need no interpolation
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
    let frac = position - below;
    if frac == 0.0 || low == high {
        return Some(low);
    }
    // numpy's `_lerp`: exact at the ends.
    let diff = high - low;
    let value = if frac >= 0.5 {
        high - diff * (1.0 - frac)
    } else {
        low + diff * frac
    };
    Some(value)
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
