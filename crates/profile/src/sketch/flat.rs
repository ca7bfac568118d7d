//! A small open-addressing hash table from 64-bit hashes to 64-bit values: one probe usually
//! touches one cache line (hashbrown touches two), which matters when every value of a column is
//! counted.

/// The key that marks an empty slot; the hash `0` is stored as `1` (a 2^-63 chance to merge two
/// values).
const EMPTY: u64 = 0;

/// Hashes to values, with linear probing and at most half the slots in use.
#[derive(Debug, Clone)]
pub(crate) struct FlatMap {
    slots: Vec<(u64, u64)>,
    len: usize,
}

impl Default for FlatMap {
    fn default() -> Self {
        Self {
            slots: vec![(EMPTY, 0); 16],
            len: 0,
        }
    }
}

#[inline]
fn key_of(hash: u64) -> u64 {
    if hash == EMPTY { 1 } else { hash }
}

impl FlatMap {
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    #[inline]
    fn find(&self, key: u64) -> (usize, bool) {
        let mask = self.slots.len() - 1;
        // The table has a power-of-two length; the low bits of a mixed hash pick the slot.
        #[allow(clippy::cast_possible_truncation)]
        let mut i = (key as usize) & mask;
        loop {
            let k = self.slots[i].0;
            if k == key {
                return (i, true);
            }
            if k == EMPTY {
                return (i, false);
            }
            i = (i + 1) & mask;
        }
    }

    /// The value of `hash`, if present.
    #[inline]
    pub(crate) fn get_mut(&mut self, hash: u64) -> Option<&mut u64> {
        let (i, found) = self.find(key_of(hash));
        if found {
            Some(&mut self.slots[i].1)
        } else {
            None
        }
    }

    pub(crate) fn contains(&self, hash: u64) -> bool {
        self.find(key_of(hash)).1
    }

    /// Inserts `hash` (which must be absent) with `value`.
    #[inline]
    pub(crate) fn insert_new(&mut self, hash: u64, value: u64) {
        if (self.len + 1) * 2 > self.slots.len() {
            self.grow();
        }
        let key = key_of(hash);
        let (i, _) = self.find(key);
        self.slots[i] = (key, value);
        self.len += 1;
    }

    fn grow(&mut self) {
        let bigger = vec![(EMPTY, 0); self.slots.len() * 2];
        let old = std::mem::replace(&mut self.slots, bigger);
        for (k, v) in old {
            if k != EMPTY {
                let (i, _) = self.find(k);
                self.slots[i] = (k, v);
            }
        }
    }

    /// The entries (hash, value) in no particular order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.slots.iter().copied().filter(|&(k, _)| k != EMPTY)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn behaves_like_a_map() {
        let key = |h: u64| crate::sketch::hash::mix64(h + 1);
        let mut m = FlatMap::default();
        for h in 0..1000u64 {
            assert!(m.get_mut(key(h)).is_none());
            m.insert_new(key(h), h);
        }
        m.insert_new(0, 7);
        assert_eq!(m.len(), 1001);
        for h in 0..1000u64 {
            *m.get_mut(key(h)).unwrap() += 1;
            assert!(m.contains(key(h)));
        }
        assert_eq!(m.get_mut(0).copied(), Some(7));
        assert_eq!(m.iter().count(), 1001);
        for h in 0..1000u64 {
            assert_eq!(m.get_mut(key(h)).copied(), Some(h + 1));
        }
    }
}
