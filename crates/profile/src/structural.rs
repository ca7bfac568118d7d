//! Finds a chunk's structural bytes (the delimiter, the quote, `\n` and `\r`) 64 bytes at a
//! time: one bit mask per block, built with SSE2 on x86-64 (every x86-64 CPU has it), byte by
//! byte elsewhere. The record splitter asks for the next structural byte from a position and
//! mostly gets it from the mask it already holds.

/// The structural bytes of one chunk, read forward.
pub(crate) struct Structurals<'a> {
    bytes: &'a [u8],
    /// The bytes that make a block's mask.
    set: ByteSet,
    /// Start of the block whose mask is held (a multiple of 64), or `usize::MAX` for none.
    base: usize,
    /// Bit `i` is set when byte `base + i` is structural.
    mask: u64,
}

/// The four bytes looked for.
#[derive(Clone, Copy)]
struct ByteSet {
    delimiter: u8,
    quote: u8,
}

impl<'a> Structurals<'a> {
    pub(crate) fn new(bytes: &'a [u8], delimiter: u8, quote: u8) -> Self {
        Self {
            bytes,
            set: ByteSet { delimiter, quote },
            base: usize::MAX,
            mask: 0,
        }
    }

    /// The position of the first structural byte at or after `pos`, or `None` when there is
    /// none before the end of the bytes.
    #[inline]
    pub(crate) fn next_from(&mut self, pos: usize) -> Option<usize> {
        let mut base = pos & !63;
        if base != self.base {
            if base >= self.bytes.len() {
                return None;
            }
            self.load(base);
        }
        let mut mask = self.mask & (u64::MAX << (pos - base));
        while mask == 0 {
            base += 64;
            if base >= self.bytes.len() {
                return None;
            }
            self.load(base);
            mask = self.mask;
        }
        Some(base + mask.trailing_zeros() as usize)
    }

    /// Kept out of line (once per 64 bytes): inlined, it made the record loop too large for
    /// the compiler to inline the per-value work into it.
    #[inline(never)]
    fn load(&mut self, base: usize) {
        self.base = base;
        self.mask = match self
            .bytes
            .get(base..base + 64)
            .and_then(|b| b.first_chunk())
        {
            Some(block) => block_mask(block, self.set),
            None => scalar_mask(&self.bytes[base..], self.set),
        };
    }
}

/// The mask of a block, one byte at a time (the end of a chunk, and CPUs without SSE2).
fn scalar_mask(block: &[u8], set: ByteSet) -> u64 {
    let mut mask = 0u64;
    for (i, &b) in block.iter().take(64).enumerate() {
        let hit = b == set.delimiter || b == set.quote || b == b'\n' || b == b'\r';
        mask |= u64::from(hit) << i;
    }
    mask
}

#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
#[inline]
fn block_mask(block: &[u8; 64], set: ByteSet) -> u64 {
    // SAFETY: `sse2_mask` needs SSE2, which this build enables for every CPU it runs on (the
    // `cfg` above); it touches no memory but the block it is given.
    #[allow(unsafe_code)]
    unsafe {
        sse2_mask(block, set)
    }
}

#[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
#[inline]
fn block_mask(block: &[u8; 64], set: ByteSet) -> u64 {
    scalar_mask(block, set)
}

#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
#[target_feature(enable = "sse2")]
#[inline]
fn sse2_mask(block: &[u8; 64], set: ByteSet) -> u64 {
    use std::arch::x86_64::{
        __m128i, _mm_cmpeq_epi8, _mm_movemask_epi8, _mm_or_si128, _mm_set_epi64x, _mm_set1_epi8,
    };
    // The bytes as `i8` lanes: the comparisons are for equality, so the sign does not matter.
    #[allow(clippy::cast_possible_wrap)]
    let splat = |b: u8| _mm_set1_epi8(b as i8);
    let (delimiter, quote) = (splat(set.delimiter), splat(set.quote));
    let (newline, carriage) = (splat(b'\n'), splat(b'\r'));
    let word = |at: usize| {
        let mut w = [0u8; 8];
        w.copy_from_slice(&block[at..at + 8]);
        i64::from_le_bytes(w)
    };
    let mut mask = 0u64;
    for k in 0..4 {
        let v: __m128i = _mm_set_epi64x(word(16 * k + 8), word(16 * k));
        let hits = _mm_or_si128(
            _mm_or_si128(_mm_cmpeq_epi8(v, delimiter), _mm_cmpeq_epi8(v, quote)),
            _mm_or_si128(_mm_cmpeq_epi8(v, newline), _mm_cmpeq_epi8(v, carriage)),
        );
        // `movemask` sets the low 16 bits only.
        #[allow(clippy::cast_sign_loss)]
        let bits = _mm_movemask_epi8(hits) as u32;
        mask |= u64::from(bits) << (16 * k);
    }
    mask
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_block_mask_agrees_with_the_bytes() {
        let alphabet = b",;\"'\n\r ax\x00\xff\xe9";
        let mut x: u64 = 5;
        for _ in 0..2_000 {
            let mut block = [0u8; 64];
            for b in &mut block {
                x = x
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1_442_695_040_888_963_407);
                *b = alphabet[(x >> 33) as usize % alphabet.len()];
            }
            for (delimiter, quote) in [(b',', b'"'), (b';', b'\''), (b'\t', b'"')] {
                let set = ByteSet { delimiter, quote };
                assert_eq!(block_mask(&block, set), scalar_mask(&block, set));
            }
        }
    }

    #[test]
    fn next_from_finds_every_structural_byte_in_order() {
        let mut text = Vec::new();
        for i in 0..300 {
            text.extend_from_slice(format!("{i},\"a,b\"\r\n").as_bytes());
        }
        let expected: Vec<usize> = text
            .iter()
            .enumerate()
            .filter(|(_, b)| matches!(b, b',' | b'"' | b'\n' | b'\r'))
            .map(|(i, _)| i)
            .collect();
        let mut s = Structurals::new(&text, b',', b'"');
        let mut found = Vec::new();
        let mut pos = 0;
        while let Some(at) = s.next_from(pos) {
            found.push(at);
            pos = at + 1;
        }
        assert_eq!(found, expected);
        // Asking again from anywhere, also backwards, gives the next one.
        for (i, &at) in expected.iter().enumerate().rev().step_by(7) {
            let from = if i == 0 { 0 } else { expected[i - 1] + 1 };
            assert_eq!(s.next_from(from), Some(at));
        }
        assert_eq!(s.next_from(text.len()), None);
    }
}
