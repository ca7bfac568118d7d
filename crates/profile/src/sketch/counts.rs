//! Value counts: exact while a column has at most `bound` distinct values; past that, a
//! `HyperLogLog` count of distinct values plus a Misra-Gries heavy-hitters summary of
//! [`HEAVY_CAPACITY`] entries for the most frequent values.

use super::flat::FlatMap;
use super::heavy::{HeavyEntry, HeavyTable};
use super::hll::Hll;
use crate::ValueCount;

/// Entries of the heavy-hitters summary. Its counts are lower bounds, short of the truth by at
/// most `values / (HEAVY_CAPACITY + 1)`.
pub(crate) const HEAVY_CAPACITY: usize = 128;

/// Past the bound, one row in this many feeds the heavy hitters (their counts are scaled
/// back): frequent values are still found, at an eighth of the cost.
pub(crate) const HEAVY_SAMPLING: u64 = 8;

#[derive(Debug, Clone)]
struct Entry {
    count: u64,
    text: Option<Box<str>>,
}

/// Bits of an exact entry that index its text; the rest count.
const INDEX_BITS: u32 = 24;
const INDEX_MASK: u64 = (1 << INDEX_BITS) - 1;

/// Exact counts: the map holds `count << INDEX_BITS | index of the text`, 16 bytes an entry, so
/// that counting touches one small table.
#[derive(Debug, Clone, Default)]
struct Exact {
    map: FlatMap,
    /// Every distinct text end to end, and where each ends.
    arena: String,
    ends: Vec<usize>,
}

impl Exact {
    fn len(&self) -> usize {
        self.ends.len()
    }

    fn text(&self, index: usize) -> &str {
        let start = if index == 0 { 0 } else { self.ends[index - 1] };
        self.arena.get(start..self.ends[index]).unwrap_or_default()
    }

    /// Adds `count` occurrences; false when the value is new and there are `bound` values.
    #[inline]
    fn add(&mut self, hash: u64, text: &str, count: u64, bound: usize) -> bool {
        if let Some(v) = self.map.get_mut(hash) {
            *v += count << INDEX_BITS;
            return true;
        }
        if self.ends.len() >= bound {
            return false;
        }
        self.map
            .insert_new(hash, (count << INDEX_BITS) | self.ends.len() as u64);
        self.arena.push_str(text);
        self.ends.push(self.arena.len());
        true
    }

    fn entries(&self) -> impl Iterator<Item = (u64, u64, &str)> + '_ {
        self.map.iter().map(|(h, v)| {
            // The index is below `ends.len()` by construction.
            #[allow(clippy::cast_possible_truncation)]
            let index = (v & INDEX_MASK) as usize;
            (h, v >> INDEX_BITS, self.text(index))
        })
    }
}

/// Counts of the values of one column.
#[derive(Debug, Clone)]
pub(crate) struct ValueCounts {
    bound: usize,
    /// Register bits of the `HyperLogLog` past the bound.
    hll_bits: u32,
    /// Exact counts, while there are at most `bound` distinct values.
    exact: Option<Exact>,
    /// Past the bound: distinct values.
    hll: Option<Box<Hll>>,
    /// Past the bound: the heavy hitters (text kept from their second occurrence).
    heavy: HeavyTable,
}

/// What the counts say at the end.
pub(crate) struct CountsSummary {
    pub(crate) distinct: u64,
    pub(crate) exact: bool,
    pub(crate) top: Vec<ValueCount>,
    pub(crate) all_unique: bool,
}

impl ValueCounts {
    pub(crate) fn new(bound: usize, hll_bits: u32) -> Self {
        Self {
            hll_bits,
            bound: bound.clamp(1, 1 << INDEX_BITS),
            exact: Some(Exact::default()),
            hll: None,
            heavy: HeavyTable::default(),
        }
    }

    /// Counts that start with the sketches, for a column already known to have more than
    /// `bound` distinct values.
    pub(crate) fn sketched(bound: usize, hll_bits: u32) -> Self {
        Self {
            hll_bits,
            bound: bound.clamp(1, 1 << INDEX_BITS),
            exact: None,
            hll: Some(Box::new(Hll::with_bits(hll_bits))),
            heavy: HeavyTable::default(),
        }
    }

    /// The relative standard error of the distinct count past the bound.
    pub(crate) fn relative_error(&self) -> f64 {
        super::hll::relative_error(self.hll.as_ref().map_or(self.hll_bits, |h| h.bits()))
    }

    /// Whether the counts are still exact.
    pub(crate) fn is_exact(&self) -> bool {
        self.exact.is_some()
    }

    /// Adds a value by its hash; `key` is the row's random key (past the bound, only rows with
    /// `key % HEAVY_SAMPLING == 0` feed the heavy hitters).
    #[inline]
    pub(crate) fn add(&mut self, hash: u64, text: &str, key: u64) {
        if let Some(exact) = &mut self.exact {
            if exact.add(hash, text, 1, self.bound) {
                return;
            }
            self.overflow();
        }
        if let Some(hll) = &mut self.hll {
            hll.add(hash);
        }
        if key.is_multiple_of(HEAVY_SAMPLING) {
            add_heavy(&mut self.heavy, hash, text);
        }
    }

    /// Switches from exact counts to the sketches.
    fn overflow(&mut self) {
        let Some(exact) = self.exact.take() else {
            return;
        };
        let mut hll = Box::new(Hll::with_bits(self.hll_bits));
        for (h, _) in exact.map.iter() {
            hll.add(h);
        }
        self.hll = Some(hll);
        // The most frequent values seed the heavy hitters; only their texts are copied.
        let mut top: Vec<(u64, u64, &str)> = exact.entries().collect();
        let by_count =
            |a: &(u64, u64, &str), b: &(u64, u64, &str)| b.1.cmp(&a.1).then(a.0.cmp(&b.0));
        if top.len() > HEAVY_CAPACITY {
            top.select_nth_unstable_by(HEAVY_CAPACITY - 1, by_count);
            top.truncate(HEAVY_CAPACITY);
        }
        for (hash, count, text) in top {
            let e = HeavyEntry {
                hash,
                count: count.div_ceil(HEAVY_SAMPLING),
                text: Some(text.into()),
            };
            merge_heavy_entry(&mut self.heavy, e);
        }
        prune_heavy(&mut self.heavy);
    }

    pub(crate) fn merge(&mut self, mut other: ValueCounts) {
        if let (Some(a), Some(b)) = (&mut self.exact, &other.exact) {
            let new = b.map.iter().filter(|&(h, _)| !a.map.contains(h)).count();
            if a.len() + new <= self.bound {
                for (h, count, text) in b.entries() {
                    a.add(h, text, count, usize::MAX);
                }
                return;
            }
        }
        self.overflow();
        other.overflow();
        if let (Some(a), Some(b)) = (&mut self.hll, &other.hll) {
            a.merge(b);
        }
        for e in other.heavy.into_entries() {
            merge_heavy_entry(&mut self.heavy, e);
        }
        prune_heavy(&mut self.heavy);
    }

    /// Every distinct text with its count, while the counts are exact.
    pub(crate) fn exact_entries(&self) -> Option<Vec<(&str, u64)>> {
        self.exact
            .as_ref()
            .map(|e| e.entries().map(|(_, count, text)| (text, count)).collect())
    }

    pub(crate) fn summary(&self, top_k: usize) -> CountsSummary {
        let (distinct, exact, entries, all_unique) = match (&self.exact, &self.hll) {
            (Some(exact), _) => (
                exact.len() as u64,
                true,
                exact
                    .entries()
                    .map(|(_, count, text)| Entry {
                        count,
                        text: Some(text.into()),
                    })
                    .collect::<Vec<_>>(),
                exact.entries().all(|(_, count, _)| count == 1),
            ),
            (None, Some(hll)) => (
                hll.estimate(),
                false,
                self.heavy
                    .iter()
                    .map(|e| Entry {
                        count: e.count * HEAVY_SAMPLING,
                        text: e.text.clone(),
                    })
                    .collect(),
                false,
            ),
            (None, None) => (0, false, Vec::new(), false),
        };
        let mut top: Vec<ValueCount> = entries
            .into_iter()
            .filter_map(|e| {
                e.text.as_ref().map(|t| ValueCount {
                    value: t.to_string(),
                    count: e.count,
                })
            })
            .collect();
        top.sort_unstable_by(|a, b| b.count.cmp(&a.count).then_with(|| a.value.cmp(&b.value)));
        top.truncate(top_k);
        CountsSummary {
            distinct,
            exact,
            top,
            all_unique,
        }
    }
}

#[inline]
fn add_heavy(heavy: &mut HeavyTable, hash: u64, text: &str) {
    if let Some(e) = heavy.get_mut(hash) {
        e.count += 1;
        if e.text.is_none() {
            e.text = Some(text.into());
        }
        return;
    }
    if heavy.len() < HEAVY_CAPACITY {
        heavy.insert_new(HeavyEntry {
            hash,
            count: 1,
            text: None,
        });
        return;
    }
    // Misra-Gries: the new value and one occurrence of every kept value cancel out.
    heavy.retain(|e| {
        e.count -= 1;
        e.count > 0
    });
}

fn merge_heavy_entry(heavy: &mut HeavyTable, e: HeavyEntry) {
    match heavy.get_mut(e.hash) {
        Some(x) => {
            x.count += e.count;
            if x.text.is_none() {
                x.text = e.text;
            }
        }
        None => heavy.insert_new(e),
    }
}

/// Keeps at most [`HEAVY_CAPACITY`] entries by subtracting the next largest count from all.
fn prune_heavy(heavy: &mut HeavyTable) {
    if heavy.len() <= HEAVY_CAPACITY {
        return;
    }
    let mut counts: Vec<u64> = heavy.iter().map(|e| e.count).collect();
    counts.sort_unstable_by(|a, b| b.cmp(a));
    let cut = counts[HEAVY_CAPACITY];
    heavy.retain(|e| {
        e.count = e.count.saturating_sub(cut);
        e.count > 0
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sketch::hash::hash_bytes;

    fn add(c: &mut ValueCounts, s: &str, row: u64) {
        let h = hash_bytes(s.as_bytes(), 0);
        c.add(h, s, crate::sketch::hash::key3(1, 2, row));
    }

    /// Counts of `values` with an exact bound of 1,000, and the `HyperLogLog` every value's hash
    /// would give.
    fn counted(values: impl Iterator<Item = String>, reference: &mut Hll) -> ValueCounts {
        let mut c = ValueCounts::new(1000, 14);
        for (row, v) in values.enumerate() {
            add(&mut c, &v, row as u64);
            reference.add(hash_bytes(v.as_bytes(), 0));
        }
        c
    }

    #[test]
    fn the_sketch_is_fed_only_past_the_bound_and_then_from_every_value() {
        // Below the bound nothing goes to the sketch: the count is the number of values.
        let mut reference = Hll::with_bits(14);
        let small = counted((0..1000).map(|i| format!("s{i}")), &mut reference);
        assert!(small.hll.is_none() && small.is_exact());
        assert_eq!(small.summary(1).distinct, 1000);
        // One chunk overflows, the next stays exact; merged in either order, the sketch holds
        // the values of both (the exact side's from its map), as if it had seen every value.
        for overflowing_first in [true, false] {
            let mut reference = Hll::with_bits(14);
            let many = counted((0..5000).map(|i| format!("v{i}")), &mut reference);
            assert!(!many.is_exact());
            // Half of these are new, half repeat the other chunk's.
            let few = counted((4600..5400).map(|i| format!("v{i}")), &mut reference);
            assert!(few.is_exact());
            let (mut a, b) = if overflowing_first {
                (many, few)
            } else {
                (few, many)
            };
            a.merge(b);
            let s = a.summary(1);
            assert!(!s.exact);
            assert_eq!(s.distinct, reference.estimate());
            let truth = 5000.0 + 400.0;
            assert!((s.distinct as f64 - truth).abs() / truth < 4.0 * a.relative_error());
        }
        // Two exact chunks whose union outgrows the bound switch to the sketch together.
        let mut reference = Hll::with_bits(14);
        let mut a = counted((0..700).map(|i| format!("a{i}")), &mut reference);
        a.merge(counted((0..700).map(|i| format!("b{i}")), &mut reference));
        assert!(!a.is_exact());
        assert_eq!(a.summary(1).distinct, reference.estimate());
        // Two exact chunks whose union fits stay exact.
        let mut reference = Hll::with_bits(14);
        let mut a = counted((0..600).map(|i| format!("c{i}")), &mut reference);
        a.merge(counted((300..900).map(|i| format!("c{i}")), &mut reference));
        assert!(a.is_exact());
        assert_eq!(a.summary(1).distinct, 900);
    }

    #[test]
    fn exact_below_the_bound_and_heavy_hitters_above() {
        let mut c = ValueCounts::new(100, 14);
        for (i, s) in ["a", "b", "a", "c", "a", "b"].iter().enumerate() {
            add(&mut c, s, i as u64);
        }
        let s = c.summary(2);
        assert!(s.exact && !s.all_unique);
        assert_eq!(s.distinct, 3);
        assert_eq!(s.top[0].value, "a");
        assert_eq!(s.top[0].count, 3);
        assert_eq!(s.top[1].value, "b");

        let mut parts = Vec::new();
        for p in 0..4 {
            let mut c = ValueCounts::new(100, 14);
            for i in 0..5000 {
                let v = if i % 3 == 0 {
                    "hot".to_string()
                } else {
                    format!("v{p}-{i}")
                };
                add(&mut c, &v, p * 10_000 + i);
            }
            parts.push(c);
        }
        let mut total = ValueCounts::new(100, 14);
        for p in parts {
            total.merge(p);
        }
        let s = total.summary(3);
        assert!(!s.exact);
        assert_eq!(s.top[0].value, "hot");
        assert!(
            s.top[0].count > 5000 && s.top[0].count < 8000,
            "{}",
            s.top[0].count
        );
        let expected = 4.0 * 3333.0 + 1.0;
        assert!((s.distinct as f64 - expected).abs() / expected < 0.05);
    }
}
