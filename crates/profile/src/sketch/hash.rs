//! A fast, well-mixed 64-bit hash of byte strings (not for untrusted keys in long-lived maps:
//! maps keyed by it are bounded), and the mixer behind the deterministic random keys.

use std::hash::Hasher;

/// `splitmix64`'s finalizer: a bijection that mixes every input bit into every output bit.
#[inline]
pub(crate) fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

const K: u64 = 0x9E37_79B9_7F4A_7C15;

#[inline]
fn read_u64(bytes: &[u8], at: usize) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&bytes[at..at + 8]);
    u64::from_le_bytes(w)
}

#[inline]
fn read_u32(bytes: &[u8], at: usize) -> u64 {
    let mut w = [0u8; 4];
    w.copy_from_slice(&bytes[at..at + 4]);
    u64::from(u32::from_le_bytes(w))
}

/// A text of up to 8 bytes as a number that, with the text's length, tells it from every other
/// text of that length: the first and last four bytes (overlapping) from 4 bytes up, the first,
/// middle and last byte below.
#[inline]
pub(crate) fn short_word(bytes: &[u8]) -> u64 {
    let len = bytes.len();
    if len >= 4 {
        read_u32(bytes, 0) | (read_u32(bytes, len - 4) << 32)
    } else if len > 0 {
        (u64::from(bytes[0]) << 16) | (u64::from(bytes[len / 2]) << 8) | u64::from(bytes[len - 1])
    } else {
        0
    }
}

/// Hashes `bytes`: short texts (up to 8 bytes) in one step without collisions between texts of
/// one length, longer ones eight bytes at a time with an overlapping last word; the result is
/// finalized with [`mix64`].
#[inline]
pub(crate) fn hash_bytes(bytes: &[u8], seed: u64) -> u64 {
    let len = bytes.len();
    let h = seed ^ K ^ (len as u64).wrapping_mul(0xC2B2_AE3D_27D4_EB4F);
    if len <= 8 {
        return mix64(h ^ short_word(bytes));
    }
    let mut h = h;
    let mut i = 0;
    while i + 8 < len {
        h = (h ^ read_u64(bytes, i)).wrapping_mul(K).rotate_left(29);
        i += 8;
    }
    mix64((h ^ read_u64(bytes, len - 8)).wrapping_mul(K))
}

/// A [`Hasher`] over [`hash_bytes`] for maps keyed by texts (the standard one is several times
/// slower, and seeded differently in every process).
#[derive(Default, Clone, Copy)]
pub(crate) struct TextHasher(u64);

impl Hasher for TextHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        self.0 = hash_bytes(bytes, self.0);
    }

    fn write_u8(&mut self, i: u8) {
        self.0 = mix64(self.0 ^ u64::from(i));
    }
}

/// A random-looking key for an item identified by up to three numbers, the same for the same
/// inputs.
#[inline]
pub(crate) fn key3(seed: u64, a: u64, b: u64) -> u64 {
    mix64(mix64(seed ^ mix64(a.wrapping_add(K))) ^ b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn different_texts_hash_apart() {
        let mut seen = std::collections::HashSet::new();
        for i in 0..10_000u32 {
            assert!(seen.insert(hash_bytes(i.to_string().as_bytes(), 0)));
        }
        assert_ne!(hash_bytes(b"", 0), hash_bytes(b"\0", 0));
        assert_ne!(hash_bytes(b"ab", 0), hash_bytes(b"ab", 1));
    }
}
