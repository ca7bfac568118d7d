//! A fast, well-mixed 64-bit hash of byte strings (not for untrusted keys in long-lived maps:
//! maps keyed by it are bounded), and the mixer behind the deterministic random keys.

/// `splitmix64`'s finalizer: a bijection that mixes every input bit into every output bit.
#[inline]
pub(crate) fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

const K: u64 = 0x9E37_79B9_7F4A_7C15;

/// Hashes `bytes` eight at a time, then mixes the length in and finalizes.
#[inline]
pub(crate) fn hash_bytes(bytes: &[u8], seed: u64) -> u64 {
    let mut h = seed ^ K;
    let mut chunks = bytes.chunks_exact(8);
    for c in &mut chunks {
        let mut w = [0u8; 8];
        w.copy_from_slice(c);
        h = (h.rotate_left(5) ^ u64::from_le_bytes(w)).wrapping_mul(K);
    }
    let rest = chunks.remainder();
    if !rest.is_empty() {
        let mut w = [0u8; 8];
        w[..rest.len()].copy_from_slice(rest);
        h = (h.rotate_left(5) ^ u64::from_le_bytes(w)).wrapping_mul(K);
    }
    mix64(h ^ bytes.len() as u64)
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
