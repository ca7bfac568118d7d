//! The table behind the heavy-hitters summary of [`super::counts::ValueCounts`]: hashes to
//! counts and texts, for a few hundred entries. Past the exact bound, one value in eight of
//! every column is looked up here, and for a column of unique values the summary fills and
//! empties every 129 lookups; hashbrown's insert, lookup and erase were about 5% of a sampling
//! profile of the 1 GB benchmark file. Entries are kept packed in a vector and found through a
//! small open-addressing index of their positions, so that emptying it is a `retain` and a 2 KiB
//! clear.

/// Slots of the index to start with: at most half are used (the summary holds at most 128
/// entries, 256 while two are merged).
const INITIAL_SLOTS: usize = 512;

/// One value of the summary.
#[derive(Debug, Clone)]
pub(crate) struct HeavyEntry {
    pub(crate) hash: u64,
    pub(crate) count: u64,
    /// The value's text, kept from its second occurrence.
    pub(crate) text: Option<Box<str>>,
}

/// Hashes to entries (see the module's documentation).
#[derive(Debug, Clone, Default)]
pub(crate) struct HeavyTable {
    entries: Vec<HeavyEntry>,
    /// For each slot, 1 + the position of its entry in `entries`, 0 when empty; linear
    /// probing from the hash's low bits. Empty until the first insertion.
    index: Vec<u32>,
}

impl HeavyTable {
    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }

    /// The slot of `hash`: where it is, or the empty slot where it would go.
    #[inline]
    fn slot(&self, hash: u64) -> (usize, Option<usize>) {
        let mask = self.index.len() - 1;
        // The table has a power-of-two length; the low bits of a mixed hash pick the slot.
        #[allow(clippy::cast_possible_truncation)]
        let mut i = (hash as usize) & mask;
        loop {
            let at = self.index[i] as usize;
            if at == 0 {
                return (i, None);
            }
            if self.entries[at - 1].hash == hash {
                return (i, Some(at - 1));
            }
            i = (i + 1) & mask;
        }
    }

    /// The entry of `hash`, if present.
    #[inline]
    pub(crate) fn get_mut(&mut self, hash: u64) -> Option<&mut HeavyEntry> {
        if self.index.is_empty() {
            return None;
        }
        let (_, at) = self.slot(hash);
        at.map(|at| &mut self.entries[at])
    }

    /// Adds `entry`, whose hash must be absent.
    pub(crate) fn insert_new(&mut self, entry: HeavyEntry) {
        if (self.entries.len() + 1) * 2 > self.index.len() {
            self.reindex((self.index.len() * 2).max(INITIAL_SLOTS));
        }
        let (slot, _) = self.slot(entry.hash);
        self.entries.push(entry);
        // At most half of the slots hold entries, so positions fit in u32.
        #[allow(clippy::cast_possible_truncation)]
        let position = self.entries.len() as u32;
        self.index[slot] = position;
    }

    /// Keeps the entries for which `keep` is true (it may change them).
    pub(crate) fn retain(&mut self, keep: impl FnMut(&mut HeavyEntry) -> bool) {
        self.entries.retain_mut(keep);
        self.reindex(self.index.len());
    }

    /// Rebuilds the index with `slots` slots.
    fn reindex(&mut self, slots: usize) {
        if slots == 0 {
            return;
        }
        self.index.clear();
        self.index.resize(slots, 0);
        let mask = slots - 1;
        for (n, e) in self.entries.iter().enumerate() {
            #[allow(clippy::cast_possible_truncation)]
            let mut i = (e.hash as usize) & mask;
            while self.index[i] != 0 {
                i = (i + 1) & mask;
            }
            // At most half of the slots hold entries, so positions fit in u32.
            #[allow(clippy::cast_possible_truncation)]
            let position = n as u32 + 1;
            self.index[i] = position;
        }
    }

    /// The entries, in no particular order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &HeavyEntry> + '_ {
        self.entries.iter()
    }

    /// Takes the entries out, in no particular order.
    pub(crate) fn into_entries(self) -> Vec<HeavyEntry> {
        self.entries
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    /// Random operations give the same map as `std`'s.
    #[test]
    fn agrees_with_a_hash_map() {
        let mut ours = HeavyTable::default();
        let mut reference: HashMap<u64, u64> = HashMap::new();
        let mut x: u64 = 1;
        for step in 0..200_000u64 {
            x = x
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            // Few distinct hashes, some sharing their low bits, so that slots collide.
            let hash = ((x >> 40) % 700) << (step % 3 * 9);
            if let Some(e) = ours.get_mut(hash) {
                e.count += 1;
            } else if ours.len() < 300 {
                ours.insert_new(HeavyEntry {
                    hash,
                    count: 1,
                    text: None,
                });
            } else {
                ours.retain(|e| {
                    e.count -= 1;
                    e.count > 0
                });
            }
            if let Some(c) = reference.get_mut(&hash) {
                *c += 1;
            } else if reference.len() < 300 {
                reference.insert(hash, 1);
            } else {
                reference.retain(|_, c| {
                    *c -= 1;
                    *c > 0
                });
            }
            assert_eq!(ours.len(), reference.len());
        }
        let mut a: Vec<(u64, u64)> = ours.iter().map(|e| (e.hash, e.count)).collect();
        let mut b: Vec<(u64, u64)> = reference.into_iter().collect();
        a.sort_unstable();
        b.sort_unstable();
        assert_eq!(a, b);
    }
}
