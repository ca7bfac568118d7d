//! A small open-addressing hash table from 64-bit hashes to 64-bit values, and a set of 64-bit
//! hashes: one probe usually touches one cache line (hashbrown touches two), which matters when
//! every value of a column is counted, or every row is checked for duplicates.

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

/// A set of 64-bit hashes with linear probing, at most three quarters full (8 bytes a slot,
/// against hashbrown's 9 at seven eighths, and one probe instead of a group search).
#[derive(Debug, Clone, Default)]
pub(crate) struct FlatSet {
    slots: Vec<u64>,
    len: usize,
    /// Whether the hash `0`, which marks empty slots, is in the set.
    zero: bool,
}

impl FlatSet {
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Adds `hash`; false when it was there already.
    #[inline]
    pub(crate) fn insert(&mut self, hash: u64) -> bool {
        if hash == EMPTY {
            let new = !self.zero;
            self.zero = true;
            self.len += usize::from(new);
            return new;
        }
        if (self.len + 1) * 4 > self.slots.len() * 3 {
            self.grow();
        }
        let mask = self.slots.len() - 1;
        // The table has a power-of-two length; the low bits of a mixed hash pick the slot.
        #[allow(clippy::cast_possible_truncation)]
        let mut i = (hash as usize) & mask;
        loop {
            let k = self.slots[i];
            if k == hash {
                return false;
            }
            if k == EMPTY {
                self.slots[i] = hash;
                self.len += 1;
                return true;
            }
            i = (i + 1) & mask;
        }
    }

    fn grow(&mut self) {
        let size = (self.slots.len() * 2).max(16);
        let old = std::mem::replace(&mut self.slots, vec![EMPTY; size]);
        let mask = size - 1;
        for k in old.into_iter().filter(|&k| k != EMPTY) {
            #[allow(clippy::cast_possible_truncation)]
            let mut i = (k as usize) & mask;
            while self.slots[i] != EMPTY {
                i = (i + 1) & mask;
            }
            self.slots[i] = k;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_set_agrees_with_a_hash_set() {
        let mut reference = std::collections::HashSet::new();
        let mut set = FlatSet::default();
        let mut x: u64 = 5;
        for i in 0..200_000u64 {
            x = x
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            // Repeats, small values (0 among them) and colliding low bits.
            let h = match i % 4 {
                0 => x >> 48,
                1 => (x >> 40) << 20,
                2 if i % 1000 == 2 => 0,
                _ => crate::sketch::hash::mix64(x % 150_000),
            };
            assert_eq!(set.insert(h), reference.insert(h), "{i}: {h}");
            assert_eq!(set.len(), reference.len());
        }
        assert!(reference.contains(&0));
    }

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
